//! What a sender's client or an archive did to the words, undone before
//! anyone reads them: no-break spaces for spaces, characters no reader
//! sees (a byte-order mark, zero-width spaces, soft hyphens), the
//! placeholders a client leaves for a signature's inline image, the
//! full-width marks of an East Asian input method left on, `>From `
//! lines an mbox writer escaped and no reader unescaped, and the overflow of
//! quoted lines that a client wrapped without quoting it again ("broken"
//! quotes). Each would otherwise split the replier's words where they see
//! none, put the robot's report among the replier's words, or the replier's
//! words among the quotes.

use crate::model::quote_marks::{is_quote, quoted_text};
use crate::reply::understand::classify::is_prose_word;

/// One mending: the text mended, or `None` where it has nothing to mend.
type Step = fn(&str) -> Option<String>;

/// The text mended, or `None` when nothing in it needed mending (the
/// common case costs a few scans and no copy).
pub(crate) fn mend(text: &str) -> Option<String> {
    let odd_characters = found(&ODD_CHARACTERS, text);
    let marked = odd_characters || found(&PLACEHOLDERS, text);
    let wide = full_width_in(text);
    let steps: [(bool, Step); 5] = [
        (odd_characters, spaces_and_unseen_characters),
        (wide, full_width_forms),
        (marked, image_placeholders),
        (true, from_escapes),
        (true, broken_quotes),
    ];
    let mut mended: Option<String> = None;
    for (_, step) in steps.into_iter().filter(|(run, _)| *run) {
        if let Some(m) = step(mended.as_deref().unwrap_or(text)) {
            mended = Some(m);
        }
    }
    mended
}

/// Searchers for what a client may have left in the text, built once: a
/// no-break space or an unseen character, and an image's placeholder. Most
/// replies have none. A SIMD scan each: a char-by-char search took 0.3 ms
/// of a 370 KB reply quoting a report, a scan for their lead bytes as long
/// (the `±` of its table), one Aho-Corasick scan for all of them 0.9 ms.
type Searchers = std::sync::LazyLock<Vec<memchr::memmem::Finder<'static>>>;

static ODD_CHARACTERS: Searchers = std::sync::LazyLock::new(|| {
    let chars = NO_BREAK_SPACES.iter().chain(&UNSEEN).map(|c| c.to_string());
    chars.map(|c| searcher(&c)).collect()
});

static PLACEHOLDERS: Searchers =
    std::sync::LazyLock::new(|| ["[image: ", "[cid:"].map(searcher).into());

fn searcher(needle: &str) -> memchr::memmem::Finder<'static> {
    memchr::memmem::Finder::new(needle.as_bytes()).into_owned()
}

/// `text` has what one of `searchers` looks for.
fn found(searchers: &Searchers, text: &str) -> bool {
    searchers.iter().any(|f| f.find(text.as_bytes()).is_some())
}

/// No-break spaces: U+00A0, the figure space and the narrow one. A
/// no-break space is a space to every reader of the words: Apple Mail and
/// Gmail write one for the second of two typed spaces, and a client may put
/// them anywhere; "could\u{a0}you" is "could you".
const NO_BREAK_SPACES: [char; 3] = ['\u{a0}', '\u{2007}', '\u{202f}'];

/// Characters with no width that no reader of the words sees: the soft
/// hyphen, the zero-width space, the word joiner and the byte-order mark
/// (a Windows client may open a UTF-8 text with it). Web pages, chat tools
/// and HTML mail put them inside and between words, where they would cut
/// "test\u{200b}" from "test". The zero-width joiner and non-joiner stay:
/// they shape emoji and some scripts.
const UNSEEN: [char; 4] = ['\u{ad}', '\u{200b}', '\u{2060}', '\u{feff}'];

/// No-break spaces made spaces, and unseen characters taken out (`mend`
/// asks only of a text that has one).
fn spaces_and_unseen_characters(text: &str) -> Option<String> {
    let mended = text
        .chars()
        .filter(|c| !UNSEEN.contains(c))
        .map(|c| if NO_BREAK_SPACES.contains(&c) { ' ' } else { c })
        .collect();
    Some(mended)
}

/// `text` has a full-width form (U+FF01–U+FF5E, in UTF-8 `EF BC`/`EF BD`
/// and a third byte) or an ideographic space, comma or full stop
/// (U+3000–U+3002, `E3 80 80`–`82`). One scan for the two lead bytes: five
/// memmem searchers doubled the mending of a 370 KB reply.
fn full_width_in(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr2_iter(0xef, 0xe3, b).any(|i| {
        matches!(
            (b[i], b.get(i + 1), b.get(i + 2)),
            (0xef, Some(0xbc | 0xbd), _) | (0xe3, Some(0x80), Some(0x80..=0x82))
        )
    })
}

/// A full-width form's ASCII mark or letter (`？` U+FF1F is `?`), the
/// ideographic comma and full stop as `,` and `.`, the ideographic space as
/// a space; `None` for any other character.
fn narrow(c: char) -> Option<char> {
    match c {
        '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0),
        '\u{3000}' => Some(' '),
        '\u{3001}' => Some(','),
        '\u{3002}' => Some('.'),
        _ => None,
    }
}

/// The marks a Chinese, Japanese or Korean input method types for `?`,
/// `,`, `:` or `(` while its user writes English ("Could you test it？
/// Thanks，"), as ASCII: a reader sees the same marks, and a question ends
/// at its `？` as at `?`. A full-width mark is as wide as the space its
/// writer left out after it: a mark that ends or splits a sentence, or a
/// closing bracket, against the next Latin word gets that space back
/// ("it？Thanks" is "it? Thanks"); CJK text, which spaces no words, runs
/// on.
fn full_width_forms(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let Some(n) = narrow(c) else {
            out.push(c);
            continue;
        };
        changed = true;
        out.push(n);
        let splits = matches!(
            c,
            '\u{ff01}'
                | '\u{ff09}'
                | '\u{ff0c}'
                | '\u{ff1a}'
                | '\u{ff1b}'
                | '\u{ff1f}'
                | '\u{3001}'
                | '\u{3002}'
        );
        let against_a_word = chars
            .peek()
            .is_some_and(|d| narrow(*d).unwrap_or(*d).is_ascii_alphanumeric());
        if splits && against_a_word {
            out.push(' ');
        }
    }
    changed.then_some(out)
}

/// A line that is only the placeholder a client writes in the text part for
/// an inline image of the HTML one, a signature's logo mostly: Gmail's
/// `[image: logo.png]`, Outlook's `[cid:image001.png@01DA…]`. It is no one's
/// words, and would stand last in a reply that ends with a question.
fn image_placeholders(text: &str) -> Option<String> {
    // One or more `[image: …]` or `[cid:…]`, with blanks between them.
    let placeholder = |l: &str| {
        let mut rest = l.trim();
        let mut any = false;
        while let Some(inner) = rest.strip_prefix('[') {
            let Some((p, after)) = inner.split_once(']') else {
                return false;
            };
            if p.contains('[') || !(p.starts_with("image: ") || p.starts_with("cid:")) {
                return false;
            }
            rest = after.trim_start();
            any = true;
        }
        any && rest.is_empty()
    };
    let mut dropped = false;
    let kept: String = text
        .split_inclusive('\n')
        .filter(|l| {
            let drop = placeholder(l);
            dropped |= drop;
            !drop
        })
        .collect();
    dropped.then_some(kept)
}

/// The `>From ` lines an mbox writer escaped and no reader undid, put back
/// as written: a mail saved from an mboxo archive, or read by a tool that
/// knew no mboxrd, says ">From my understanding, …", and that line, read as
/// a quote, would be no one's words. A `>From ` line is a quote after all
/// when it sits among quotes written without a space after the mark
/// (">From: X" over ">Date: …", a patch quoted as `>`-lines): a line beside
/// it is such a quote, or, with no own line beside it, the mail quotes so
/// elsewhere.
fn from_escapes(text: &str) -> Option<String> {
    let escaped = |l: &str| l.starts_with(">From ");
    if !escaped(text) && memchr::memmem::find(text.as_bytes(), b"\n>From ").is_none() {
        return None;
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // A quote mark right before a word: quoting without a space.
    let tight = |l: &str| {
        l.strip_prefix('>')
            .is_some_and(|r| r.starts_with(|c: char| !c.is_whitespace() && c != '>'))
    };
    let quotes_tight = lines.iter().any(|l| tight(l) && !escaped(l));
    let beside = |i: usize, what: &dyn Fn(&str) -> bool| {
        let near = |j: Option<usize>| {
            j.and_then(|j| lines.get(j))
                .is_some_and(|l| !l.trim().is_empty() && what(l))
        };
        near(i.checked_sub(1)) || near(Some(i + 1))
    };
    let mut out = String::with_capacity(text.len());
    let mut undone = false;
    for (i, l) in lines.iter().enumerate() {
        let undo =
            escaped(l) && !beside(i, &tight) && (beside(i, &|l| !is_quote(l)) || !quotes_tight);
        out.push_str(if undo { &l[1..] } else { l });
        undone |= undo;
    }
    undone.then_some(out)
}

/// A client that wraps quoted lines wraps them at this many columns or
/// fewer; a mail with a longer quoted line that could have been wrapped
/// was not wrapped so.
const WRAPPED_AT_MOST: usize = 80;

/// A mail whose quoted lines are all shorter than this was not seen
/// wrapped: short quotes say nothing of a width.
const FILLED_AT_LEAST: usize = 60;

/// The most lines a quoted line's overflow takes (a 300-column line of
/// the robot's at 72 columns).
const OVERFLOW_LINES: usize = 4;

/// Quoted lines a client wrapped without quoting the overflow again,
/// joined back:
///
/// ```text
/// > kernel test robot noticed a -12.3% regression of
/// will-it-scale.per_process_ops on:
/// ```
///
/// is one quoted line. A wrapping client leaves a sign no writer does: the
/// first word of the unquoted line would not fit on the quoted line above
/// it within the width the mail's quotes are wrapped at. The run of such
/// lines must end where the quote goes on, or not open as a sentence does
/// (a capital letter), and the quoted line must not end one (".", "?",
/// "!"); a reply typed right under a quote keeps its words.
fn broken_quotes(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    // Which lines quote, asked once: every line of every mail passes here.
    let quoted: Vec<bool> = lines.iter().map(|l| is_quote(l)).collect();
    // Most mails leave a blank line under each quote: nothing to look at.
    let under_a_quote =
        (1..lines.len()).any(|i| quoted[i - 1] && !quoted[i] && !lines[i].trim().is_empty());
    if !under_a_quote {
        return None;
    }
    let width = wrap_width(&lines, &quoted)?;
    let mut out = String::with_capacity(text.len());
    let mut mended = false;
    let mut i = 0;
    while i < lines.len() {
        let run = match quoted[i] {
            true => overflow(&lines, &quoted, i, width),
            false => 0,
        };
        if run == 0 {
            out.push_str(lines[i]);
        } else {
            out.push_str(lines[i].trim_end());
            for l in &lines[i + 1..=i + run] {
                out.push(' ');
                out.push_str(l.trim());
            }
            mended = true;
            i += run;
        }
        out.push('\n');
        i += 1;
    }
    if !text.ends_with('\n') {
        out.pop();
    }
    mended.then_some(out)
}

/// The width a mail's quotes were wrapped at: the longest quoted line that
/// a wrap could have cut (it has a space in what it quotes), if that is
/// within `WRAPPED_AT_MOST` and some quoted line fills it.
fn wrap_width(lines: &[&str], quoted: &[bool]) -> Option<usize> {
    let widest = lines
        .iter()
        .zip(quoted)
        .filter(|(l, &q)| q && quoted_text(l).is_some_and(|t| t.trim().contains(' ')))
        .map(|(l, _)| l.trim_end().chars().count())
        .max()?;
    (FILLED_AT_LEAST..=WRAPPED_AT_MOST)
        .contains(&widest)
        .then_some(widest)
}

/// How many unquoted lines after quoted line `i` are its overflow.
fn overflow(lines: &[&str], quoted: &[bool], i: usize, width: usize) -> usize {
    let mut n = 0;
    while n < OVERFLOW_LINES {
        let Some(next) = lines.get(i + 1 + n) else {
            break;
        };
        if quoted[i + 1 + n] || !cut_before(lines[i + n], next, width) {
            break;
        }
        n += 1;
    }
    let goes_on = quoted.get(i + 1 + n) == Some(&true);
    let opens = lines
        .get(i + 1)
        .is_some_and(|l| l.trim_start().starts_with(char::is_uppercase));
    match n > 0 && (goes_on || !opens) {
        true => n,
        false => 0,
    }
}

/// Did a wrap at `width` cut line `before` ahead of `next`: `before` ends
/// no sentence, and `next`'s first word would not fit on it, or both are
/// data without a word of prose (a row of figures and the name that ends
/// it, a plot's line and its frame: the run of spaces the wrap dropped
/// filled the line).
fn cut_before(before: &str, next: &str, width: usize) -> bool {
    let before = before.trim_end();
    let Some(word) = next.split_whitespace().next() else {
        return false;
    };
    let no_fit = before.chars().count() + 1 + word.chars().count() > width;
    let data = !prose_in(quoted_text(before).unwrap_or(before)) && !prose_in(next);
    !before.ends_with(['.', '?', '!']) && word != "--" && (no_fit || data)
}

/// Does `t` hold a word of prose ("Done", "ok"; not "O", "±", "1.5e+08" or
/// "fio.time.elapsed_time.max")?
fn prose_in(t: &str) -> bool {
    t.split_whitespace()
        .any(|w| is_prose_word(w) && w.chars().filter(|c| c.is_alphabetic()).count() >= 2)
}

#[cfg(test)]
mod tests {
    use super::mend;

    /// `(text, mended)`; `None` where nothing is mended.
    fn check(table: &[(&str, Option<&str>)]) {
        for (text, want) in table {
            assert_eq!(mend(text).as_deref(), *want, "{text:?}");
        }
    }

    #[test]
    fn no_break_spaces() {
        check(&[
            (
                "Could\u{a0}you test it?\u{a0} Thanks.\n",
                Some("Could you test it?  Thanks.\n"),
            ),
            ("46.56\u{202f}%\u{2007}x", Some("46.56 % x")),
            ("plain words\n", None),
        ]);
    }

    #[test]
    fn unseen_characters() {
        check(&[
            ("\u{feff}Sure.\n", Some("Sure.\n")),
            (
                "is this test\u{200b} broken?\u{200b}\n",
                Some("is this test broken?\n"),
            ),
            ("per\u{ad}formance", Some("performance")),
            ("a\u{2060}b", Some("ab")),
            // Joiners shape emoji and scripts: kept.
            ("\u{1f468}\u{200d}\u{1f4bb} done", None),
        ]);
    }

    /// An input method's full-width marks are ASCII ones, with the space a
    /// full-width mark stood for where it ends or splits a sentence against
    /// the next word; other characters, CJK ones among them, stay.
    #[test]
    fn full_width_marks() {
        check(&[
            (
                "Could you test it\u{ff1f} Thanks\u{ff0c}\n",
                Some("Could you test it? Thanks,\n"),
            ),
            (
                "Hi Oliver\u{ff0c}could you test it\u{ff1f}Thanks\u{ff01}\n",
                Some("Hi Oliver, could you test it? Thanks!\n"),
            ),
            (
                "the patch\u{ff08}v2\u{ff09}\u{ff1a}not a regression\u{3002}\n",
                Some("the patch(v2): not a regression.\n"),
            ),
            (
                "the test\u{ff08}will-it-scale\u{ff09}shows it",
                Some("the test(will-it-scale) shows it"),
            ),
            ("\u{ff21}\u{ff22}\u{3000}\u{ff11}\u{ff12}", Some("AB 12")),
            ("a\u{3001}b\u{3002}", Some("a, b.")),
            // Chinese text keeps its own characters; the marks between
            // them need no space.
            (
                "\u{8c22}\u{8c22}\u{ff01}\u{4f60}",
                Some("\u{8c22}\u{8c22}!\u{4f60}"),
            ),
            // Half-width katakana (U+FF61 on) and others are not marks.
            ("\u{ff76}\u{ff9e} and \u{ffe5}", None),
            ("plain words?\n", None),
        ]);
    }

    /// Lines that are only an inline image's placeholder go; a placeholder
    /// among words, or a bracket that is not one, stays.
    #[test]
    fn image_placeholders() {
        check(&[
            (
                "Should we stop testing it?\n\n[image: image.png]\n",
                Some("Should we stop testing it?\n\n"),
            ),
            (
                "Thanks.\n[cid:image001.png@01DA1234.56789AB0]\n-- \nJo\n",
                Some("Thanks.\n-- \nJo\n"),
            ),
            ("x\n  [image: a.png][cid:b]  \n", Some("x\n")),
            ("see [image: graph.png] above\n", None),
            ("[image: a.png] and [b]\n", None),
            ("[cid: x\n", None),
        ]);
    }

    /// `>From ` lines an mbox writer escaped are the writer's own words
    /// again; among quotes written without a space, they stay quotes.
    #[test]
    fn from_escapes_left_by_an_archive() {
        check(&[
            // A paragraph of the replier's opening with the escaped word.
            (
                "> quoted\n\n>From my understanding, it is\nnot a regression.\n",
                Some("> quoted\n\nFrom my understanding, it is\nnot a regression.\n"),
            ),
            // Alone in its paragraph, in a mail that quotes with "> ".
            (
                "> quoted\n> more\n\n>From the profile it is the lock.\n\n> next\n",
                Some("> quoted\n> more\n\nFrom the profile it is the lock.\n\n> next\n"),
            ),
            // In a mail with no other quote at all.
            (
                ">From the data: no regression.\n",
                Some("From the data: no regression.\n"),
            ),
            // A patch quoted with ">" and no space: quotes, all of them.
            (
                "Try this:\n\n>From 8301 Mon Sep 17 00:00:00 2001\n>From: A <a@b.c>\n>Subject: [PATCH] x\n",
                None,
            ),
            // Alone, in a mail quoting without a space elsewhere.
            (">what you said\n\n>From Monday on\n\nI agree.\n", None),
            // Deeper marks are quotes of a quote.
            ("> >From here\n>>From there\n", None),
        ]);
    }

    #[test]
    fn broken_quotes() {
        // A quoted line that sets the width the client wrapped at: 72.
        let fill = "> The words of the report, quoted and wrapped by a client at 72 columns,";
        let mended = |t: &str| Some(format!("{fill}\n{t}"));
        let cases: &[(&str, Option<String>)] = &[
            // The overflow of a quoted line, the quote going on under it.
            (
                "> kernel test robot noticed a -12.3% regression of\nwill-it-scale.per_process_ops on:\n>\n> commit: 0123abcd\n\nI'll revert it.\n",
                mended("> kernel test robot noticed a -12.3% regression of will-it-scale.per_process_ops on:\n>\n> commit: 0123abcd\n\nI'll revert it.\n"),
            ),
            // Two lines of a table row's overflow, then the replier's words.
            (
                "> 464232            -5.6%     438315        aim7.jobs-per-min plus a\nremark the robot made about this row that goes on and on past any width\nat all\n\nI'll revert it.\n",
                mended("> 464232            -5.6%     438315        aim7.jobs-per-min plus a remark the robot made about this row that goes on and on past any width at all\n\nI'll revert it.\n"),
            ),
            // A capital under the quote, and the quote goes on: a cut.
            (
                "> with the following parameters: nr_task=100% mode=process test=page_fault2\nCPU=x\n> x\n",
                mended("> with the following parameters: nr_task=100% mode=process test=page_fault2 CPU=x\n> x\n"),
            ),
            // A row's name, the wrap cut in the run of spaces before it.
            (
                ">      67547            -1.0%      66872\ntime.voluntary_context_switches\n>       2253            -0.1%       2251\n",
                mended(">      67547            -1.0%      66872 time.voluntary_context_switches\n>       2253            -0.1%       2251\n"),
            ),
            // A plot's line, and its frame.
            (
                ">    |                    O                                    \n|\n> x\n",
                mended(">    |                    O |\n> x\n"),
            ),
            // A word of prose under a row of figures is the replier's.
            (
                ">      67547            -1.0%      66872\nDone\n> x\n",
                None,
            ),
            // A sentence typed right under a quote: the replier's.
            ("> kernel test robot noticed a -12.3% regression of will-it-scale.per\nI'll revert it.\n", None),
            // A quote that ends its sentence: what follows is the reply.
            ("> The kernel config and the materials to reproduce are at this place.\nyes, will do\n> x\n", None),
            // The signature under a quote.
            ("> kernel test robot noticed a -12.3% regression of will-it-scale.per\n-- \nA Maintainer\n", None),
            // A word that fits on the quote above it was not wrapped there.
            ("> kernel test robot noticed a -12.3% regression of\nok\n> more\n", None),
        ];
        for (text, want) in cases {
            let text = format!("{fill}\n{text}");
            assert_eq!(mend(&text), *want, "{text:?}");
        }
        // Quotes longer than any wrap: the client did not wrap.
        check(&[(
            "> 464232            -5.6%     438315        aim7.jobs-per-min  and a lot more words\nok then\n> x\n",
            None,
        )]);
    }
}
