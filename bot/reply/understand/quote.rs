//! The replier's own words: a reply without what it quotes, its attribution
//! lines, the quoted original of a top-posted reply, its signature, the
//! list's footer and what the sender's mail server adds (a legal notice, a
//! banner). The robot's report quoted in a reply is full of the word
//! "regression"; none of it may reach the classifier.

use std::sync::LazyLock;

use regex::Regex;

pub use crate::model::quote_marks::{is_quote, quoted_text};

/// "On Tue, Jun 05, 2018 at 03:16:57PM +0800, kernel test robot wrote:",
/// "Dave Chinner <david@fromorbit.com> writes:", "Am 05.06.2018 schrieb X:",
/// "Le 05/06/2018, X a écrit :", "X 于2024年1月1日周一 10:00写道：",
/// "[Jaegeuk Kim]" style name tags are handled apart. Matched on lines
/// that end an attribution (possibly wrapped).
static ATTRIBUTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)
        (?:\b(?:wrote|writes|said|schrieb|a\s+écrit|escribió|scrisse|napisał)\s*:\s*$)
        | (?:(?:写道|寫道|書きました|작성)\s*[:：]\s*$)
        | (?:^\s*(?:on|am|le|el|il)\s.*(?:\d{1,2}:\d{2}|\d{4}).*(?:wrote|schrieb|écrit|escribió)?\s*:?\s*$)
        ",
    )
    .unwrap()
});

/// The start of a quoted original in Outlook and friends (everything after it
/// is the original).
static ORIGINAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\s*(?:-{2,}\s*(?:original message|forwarded message|ursprüngliche nachricht|message d'origine|原始邮件|邮件原件|原始郵件|元のメッセージ)\s*-{2,}|_{10,}\s*$|begin forwarded message:)",
    )
    .unwrap()
});

/// An Outlook header block of the quoted original: From:, Sent:, To:,
/// Subject:, as the German, Chinese and Japanese clients write them too.
static HEADER_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*\*?(?:from|sent|to|cc|subject|date|von|gesendet|an|betreff|发件人|发送时间|收件人|抄送|主题|日期|寄件者|傳送時間|收件者|副本|主旨|差出人|送信日時|宛先|件名)\s*(?::\*?\s|：)")
        .unwrap()
});

/// List footers (majordomo, mailman, Google groups, vger).
static FOOTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\s*(?:to unsubscribe|unsubscribe:|--\s*to unsubscribe|you received this message because|more majordomo info|please read the faq|_______________________________________________\s*$|mailing list\s*$)",
    )
    .unwrap()
});

/// A mail client's line under what its user typed: "Sent from my iPhone",
/// "Get Outlook for Android", "Sent with Proton Mail". What follows it is
/// the quoted original or nothing.
static CLIENT_TRAILER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(?:sent from (?:my )?|get outlook for |sent (?:with|via|using) )\S+(?:\s+\S+){0,3}\s*$")
        .unwrap()
});

/// What marks boilerplate a mail server or gateway adds to a person's
/// words: a legal notice ("have received this e-mail in error", "如果您错收了
/// 本邮件"), a warning banner ("This email originated from outside of the
/// organization") or the company's register entry ("Registered Address: …",
/// "HRB 36809"). Matched on a paragraph's words joined, as a notice wraps
/// anywhere; its "please notify the sender and delete it" is nobody's
/// answer to a report. Word boundaries are ASCII ones: a Unicode `\b`
/// leaves the fast engine on a line with a character past ASCII, and every
/// paragraph of every reply is searched.
static NOTICE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)
        (?-u:\b)received\s+this\s+(?:e-?mail|message|communication|transmission)\s+(?:\S+\s+){0,2}in\s+error
        | (?-u:\b)originated\s+from\s+outside\s+(?:of\s+)?(?:the\s+|your\s+)?(?:organi[sz]ation|company)
        | (?-u:\b)do\s+not\s+click\s+(?:on\s+)?links
        | 错收 | 误收 | 誤收 | 指定收件人
        | (?-u:\b)registered\s+(?:office|address|in\s+england)
        | (?-u:\b)commercial\s+register | (?-u:\b)company\s+registration\s+n(?:o|umber)
        | (?-u:\b)handelsregister | (?-u:\b)sitz\s+der\s+gesellschaft | (?-u:\b)HRB\s+\d
        ",
    )
    .unwrap()
});

/// A legal notice's addressee ("If you are not the intended recipient…",
/// "intended only for the person or entity…"): a notice only beside legal
/// words (`LEGAL`), as "the signal's intended recipient" is a developer's.
static ADDRESSEE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)intended\s+(?:recipient|(?:only|solely)\s+for\s+the\s+(?:use|person|addressee|named))")
        .unwrap()
});

/// The words of a legal notice around its addressee.
static LEGAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)(?:confidential|privileged|prohibited|unauthori[sz]ed|disclos|notify\s+the\s+sender)")
        .unwrap()
});

/// A notice's heading line ("IMPORTANT NOTICE: …", "CONFIDENTIALITY
/// NOTICE", "DISCLAIMER:", "CAUTION: …"): where a notice glued to the
/// replier's last lines starts.
static NOTICE_HEADING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*\[?[A-Z][A-Z &/-]{4,}\]?(?::|\s*$)").unwrap());

/// Closing words that start a sign-off ("Cheers,\nDave.").
static CLOSING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\s*(?:cheers|thanks|thank you|thx|regards|best regards|kind regards|best|br|rgds|greetings|ciao|-\s*\w+|thanks and regards|many thanks)[,.!]?\s*$",
    )
    .unwrap()
});

/// A line that marks where the replier cut the quote: "[...]", "<snip>",
/// "[ … ]", "--snip--". Beside a quote it is part of it: the replier's
/// sentence the quote cut goes on after it ("Now the same kernel with /
/// > 4f432e8bb1 (…) / [...] / reverted.").
fn is_elision(t: &str) -> bool {
    const CUT: &[&str] = &[
        "",
        "snip",
        "snipped",
        "snip snip",
        "cut",
        "trimmed",
        "skip",
        "skipped",
    ];
    let t = t.trim();
    if t.len() > 40 {
        return false;
    }
    let inner = t
        .strip_prefix(['[', '<', '('])
        .and_then(|r| r.strip_suffix([']', '>', ')']))
        .unwrap_or(t);
    let inner = inner.trim_matches(|c: char| c == '.' || c == '…' || c == '-' || c.is_whitespace());
    // Dashes alone are a signature's separator ("--"), dots alone a cut.
    let marked = !inner.is_empty() || t.contains(['.', '…']);
    marked && CUT.contains(&inner.to_lowercase().as_str())
}

/// Is the nearest non-blank line above or below line `i` a quote?
fn beside_quote(lines: &[&str], i: usize) -> bool {
    let quote = |l: Option<&&str>| l.is_some_and(|l| is_quote(l));
    quote(lines[..i].iter().rev().find(|l| !l.trim().is_empty()))
        || quote(lines[i + 1..].iter().find(|l| !l.trim().is_empty()))
}

/// "[Jaegeuk Kim]"-style tag that some mailers put before an inline reply
/// chunk, or a bare name line ("Dave Chinner:") ending an attribution.
fn is_name_tag(line: &str) -> bool {
    let t = line.trim();
    t.len() < 60
        && t.starts_with('[')
        && t.ends_with(']')
        && !t.contains("PATCH")
        && t.chars().filter(|c| c.is_whitespace()).count() <= 4
        && t.chars().nth(1).is_some_and(|c| c.is_uppercase())
}

/// The replier's own text, paragraphs kept, everything quoted or automatic gone.
pub fn own_words(body: &str) -> String {
    // `lines` drops the `\r` of CRLF line ends itself.
    let lines: Vec<&str> = body.lines().collect();
    let mut keep: Vec<&str> = Vec::with_capacity(lines.len());
    let mut quoted_since = false;
    // Inside an inline PGP signed message's armour headers ("Hash: …"),
    // which end at the first empty line: not the replier's words.
    let mut armour = false;
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_end();
        if t == "-----BEGIN PGP SIGNED MESSAGE-----" {
            armour = true;
            continue;
        }
        if armour {
            armour = !t.is_empty();
            continue;
        }
        // Quoted lines first: the bulk of a long reply, and cheap to skip.
        if is_quote(t) || is_name_tag(t) || (is_elision(t) && beside_quote(&lines, i)) {
            quoted_since = true;
            continue;
        }
        if ends_own_words(&lines, i) {
            break;
        }
        if is_attribution(&lines, i) {
            drop_attribution_start(&mut keep);
            continue;
        }
        if !t.trim().is_empty() {
            if quoted_since && continues_across_quote(&keep, t) {
                while keep.last().is_some_and(|p| p.trim().is_empty()) {
                    keep.pop();
                }
                keep.push(ELIDED);
            }
            quoted_since = false;
        }
        keep.push(t);
    }
    strip_notices(&mut keep);
    strip_salutation(&mut keep);
    strip_signoff(&mut keep);
    paragraphs(&keep)
}

/// Remove the paragraphs a mail server or gateway added: a legal notice, a
/// warning banner, the company's register entry. A notice glued to the
/// replier's lines without a blank starts at its heading ("Thanks,\nJohn\n
/// IMPORTANT NOTICE: …"); one with no heading takes its paragraph.
fn strip_notices(keep: &mut Vec<&str>) {
    let mut start = 0;
    while start < keep.len() {
        let end = keep[start..]
            .iter()
            .position(|l| l.trim().is_empty())
            .map_or(keep.len(), |k| start + k);
        match notice_start(&keep[start..end]) {
            Some(from) => {
                keep.drain(start + from..end);
                start += from + 1;
            }
            None => start = end + 1,
        }
    }
}

/// The last line of the notice that starts at line `i` and takes its whole
/// paragraph (up to a blank line or a quote), if one does.
pub(super) fn notice_end(lines: &[&str], i: usize) -> Option<usize> {
    let len = lines[i..]
        .iter()
        .position(|l| l.trim().is_empty() || is_quote(l))
        .unwrap_or(lines.len() - i);
    (notice_start(&lines[i..i + len]) == Some(0)).then(|| i + len - 1)
}

/// Where in a paragraph a notice starts, if it holds one: at the last
/// heading line at or above the line that marks it, else at its first line.
fn notice_start(para: &[&str]) -> Option<usize> {
    if para.is_empty() {
        return None;
    }
    let joined = para.join("\n");
    let addressee = ADDRESSEE.find(&joined).filter(|_| LEGAL.is_match(&joined));
    let at = NOTICE
        .find(&joined)
        .into_iter()
        .chain(addressee)
        .map(|m| m.start())
        .min()?;
    let line = joined[..at].matches('\n').count();
    Some(
        (0..=line)
            .rev()
            .find(|&k| NOTICE_HEADING.is_match(para[k]))
            .unwrap_or(0),
    )
}

/// A wrapped attribution ("On Sat, Mar 28, 2020 at 9:24 PM kernel / test
/// robot <…> / wrote:"): its first lines, just kept, go too. They are the
/// lines right above, with no blank between, back to the one opening "On ",
/// or the one line right above when it names a mail address ("X <x@y> /
/// writes:").
fn drop_attribution_start(keep: &mut Vec<&str>) {
    let run = keep
        .iter()
        .rev()
        .take(ATTRIBUTION_LINES - 1)
        .take_while(|p| !p.trim().is_empty())
        .count();
    if let Some(k) = (1..=run).find(|&k| opens_with_on(keep[keep.len() - k])) {
        keep.truncate(keep.len() - k);
    } else if run >= 1 && has_address(keep[keep.len() - 1]) {
        // "\"Rafael J. Wysocki\" <rafael@kernel.org> / writes:"
        keep.pop();
    }
}

/// The most lines a wrapped attribution takes.
const ATTRIBUTION_LINES: usize = 3;

/// Does the line open as an attribution does ("On Tue, Jun 05, …")?
fn opens_with_on(line: &str) -> bool {
    line.trim_start()
        .get(..3)
        .is_some_and(|w| w.eq_ignore_ascii_case("on "))
}

/// The last line of the attribution that starts at line `i`, wrapped
/// ("On Thu, Aug 18, 2022 at 10:28:30AM +0100, John / Garry wrote:") or not,
/// if one does: its first line opens with "On ", or names a mail address
/// right above the line that ends it, as `drop_attribution_start` takes it.
pub(super) fn attribution_end(lines: &[&str], i: usize) -> Option<usize> {
    if is_attribution(lines, i) {
        return Some(i);
    }
    let opens = opens_with_on(lines[i]);
    (1..ATTRIBUTION_LINES)
        .map(|k| i + k)
        .take_while(|&end| end < lines.len() && !lines[end].trim().is_empty())
        .find(|&end| {
            is_attribution(lines, end) && (opens || (end == i + 1 && has_address(lines[i])))
        })
}

/// Whether line `i` ends the replier's words: the signature ("-- ", and
/// the common mangled "--"), an inline PGP signature, a quoted original, a
/// list footer, a mail client's trailer, or an Outlook header block (From:
/// … then Sent:/To:/Subject:) that starts the original of a top-posted reply.
fn ends_own_words(lines: &[&str], i: usize) -> bool {
    let (l, t) = (lines[i], lines[i].trim_end());
    t == "--"
        || l == "-- "
        // Inline OpenPGP (RFC 4880 §7): the signature block, and the
        // signature separator as a signed text escapes it.
        || t.starts_with("-----BEGIN PGP SIGNATURE-----")
        || l == "- -- "
        || ORIGINAL.is_match(t)
        || FOOTER.is_match(t)
        || (t.len() <= 60 && CLIENT_TRAILER.is_match(t))
        || (HEADER_LINE.is_match(t)
            && lines[i + 1..]
                .iter()
                .take(4)
                .filter(|n| HEADER_LINE.is_match(n))
                .count()
                >= 2)
}

/// Whether line `i` is an attribution: a line (or the end of a wrapped
/// one) introducing a quote; one that ends in "wrote:" is never the
/// replier's words, quote or not.
fn is_attribution(lines: &[&str], i: usize) -> bool {
    let t = lines[i].trim_end();
    (ATTRIBUTION.is_match(t) || names_an_address(t)) && (ends_in_says(t) || next_is_quote(lines, i))
}

/// The verb that ends an attribution in the languages mail clients write
/// ("wrote:", "schrieb:", "a écrit :", "写道：", "작성:"). A line ending so
/// is nobody's own words, even when no quote follows it.
static SAYS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:\b(?:wrote|writes|schrieb|a\s+écrit|escribió)|写道|寫道|書きました|작성)\s*[:：]\s*$")
        .unwrap()
});

/// Whether a line ends as an attribution does, in any language.
fn ends_in_says(line: &str) -> bool {
    SAYS.is_match(line)
}

/// The kept lines with runs of blank lines collapsed to one, trimmed.
fn paragraphs(keep: &[&str]) -> String {
    let mut out = String::new();
    let mut blank = true;
    for l in keep {
        if l.trim().is_empty() {
            if !blank {
                out.push('\n');
            }
            blank = true;
        } else {
            out.push_str(l);
            out.push('\n');
            blank = false;
        }
    }
    out.trim().to_string()
}

/// Where a quote cut one of the replier's sentences in two.
pub const ELIDED: &str = "[…]";

/// Does own line `next`, after a quote, go on with the sentence the last own
/// line left open ("Now the same kernel with / > 4f432e8bb1 (…) / reverted.")?
/// Then both halves are one sentence: "reverted." alone would read as a
/// revert done.
fn continues_across_quote(keep: &[&str], next: &str) -> bool {
    let Some(before) = keep.iter().rev().find(|l| !l.trim().is_empty()) else {
        return false;
    };
    let before = before.trim_end();
    // Chat's "w/" ("the same kernel w/") is the word "with".
    let open = before.ends_with(|c: char| c.is_alphanumeric())
        || before
            .rsplit(char::is_whitespace)
            .next()
            .is_some_and(|w| w == "w/" || w == "W/");
    open && next.trim_start().starts_with(|c: char| c.is_lowercase())
}

/// An attribution in any language: a line that names a mail address and
/// ends in a colon ("2020년 2월 28일 (금) 오후 4:42, X <x@y>님이 작성:"), when a
/// quote follows it.
fn names_an_address(t: &str) -> bool {
    t.ends_with(':') && has_address(t)
}

/// Does a word of `t` look like a mail address?
fn has_address(t: &str) -> bool {
    t.split_whitespace().any(|w| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        w.split_once('@')
            .is_some_and(|(a, d)| !a.is_empty() && d.contains('.'))
    })
}

/// Is the next non-blank line a quote (so line `i` introduces it)?
fn next_is_quote(lines: &[&str], i: usize) -> bool {
    lines[i + 1..]
        .iter()
        .find(|l| !l.trim().is_empty())
        .is_none_or(|l| is_quote(l))
}

/// Opening words of a salutation ("Hi Oliver,", "Hello all,", "Dear Rong,").
static SALUTATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(?:hi|hello|hey|hallo|dear|greetings|howdy|good (?:morning|afternoon|evening)|morning)\b")
        .unwrap()
});

/// Remove a leading salutation: its own line, addressing people ("Hi
/// Oliver,", "Hi Darrick, Hi Dave, and all,", "Hello, all."), never a
/// sentence with more in it ("Hi, I'll revert it.", "Hi Oliver, could you
/// rerun it?"). Who is greeted is no part of what the reply says, and a
/// name the model learnt would be the thread's, not the reply's.
fn strip_salutation(keep: &mut Vec<&str>) {
    // One line a greeting: "Hi Oliver,\nHi Dave," greets two.
    while let Some(first) = keep.iter().position(|l| !l.trim().is_empty()) {
        // Only when something stays: "Hi!" alone is the whole reply.
        if !greets(keep[first]) || !keep[first + 1..].iter().any(|l| !l.trim().is_empty()) {
            return;
        }
        keep.drain(..=first);
    }
}

/// Whether a line only greets ("Hi Oliver,", "Hello all:", "Hi Dave").
pub(super) fn greets(line: &str) -> bool {
    let t = line.trim();
    // Length first: a hostile reply's first line can be megabytes.
    t.len() <= 60 && SALUTATION.is_match(t) && {
        let words = t.split_whitespace().count();
        (t.ends_with([',', ':']) && words <= 8) || words <= 3
    }
}

/// Remove a trailing sign-off: a closing word followed by at most two short
/// name lines, at the very end. Closings can come twice ("Thanks.\n\nThanks,\nJohn").
fn strip_signoff(keep: &mut Vec<&str>) {
    let mut closed = false;
    while strip_closing(keep) {
        closed = true;
    }
    if !closed {
        strip_bare_name(keep);
    }
}

/// Remove the last closing word and the short lines after it; true if one went.
fn strip_closing(keep: &mut Vec<&str>) -> bool {
    while keep.last().is_some_and(|l| l.trim().is_empty()) {
        keep.pop();
    }
    let n = keep.len();
    for back in 1..=3.min(n) {
        let idx = n - back;
        if CLOSING.is_match(keep[idx]) && keep[idx + 1..].iter().all(|l| l.trim().len() <= 30) {
            // Only when something stays: "Thanks!" alone is the whole reply.
            if !words_stay(&keep[..idx]) {
                return false;
            }
            keep.truncate(idx);
            return true;
        }
    }
    false
}

/// A bare name as the last line after a blank ("\nDave.") is a sign-off too.
fn strip_bare_name(keep: &mut Vec<&str>) {
    let n = keep.len();
    if n >= 2 && keep[n - 2].trim().is_empty() && words_stay(&keep[..n - 1]) {
        let last = keep[n - 1].trim();
        if last.len() <= 25
            && last.split_whitespace().count() <= 3
            && last.split_whitespace().all(|w| {
                w.chars()
                    .next()
                    .is_some_and(|c| c.is_uppercase() || c == '-')
            })
            && !last.ends_with(['?', '!'])
        {
            keep.truncate(n - 1);
        }
    }
}

fn words_stay(lines: &[&str]) -> bool {
    lines.iter().any(|l| !l.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::own_words;

    #[test]
    fn table() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "inline reply with attribution and signature",
                "On Tue, Jun 05, 2018 at 03:16:57PM +0800, kernel test robot wrote:\n> FYI, we noticed a -19.6% regression\n> of fio.write_iops\n\nThis is not a regression.\n\nCheers,\n\nDave.\n-- \nDave Chinner\ndavid@fromorbit.com\n",
                "This is not a regression.",
            ),
            (
                "wrapped attribution",
                "On Tue, Jun 05, 2018 at 03:16:57PM +0800, kernel test\nrobot wrote:\n> regression\nOk.",
                "Ok.",
            ),
            (
                "attribution wrapped over three lines",
                "Thanks.\n\nOn Sat, Mar 28, 2020 at 9:24 PM kernel\ntest robot <rong.a.chen@intel.com>\nwrote:\n> regression\nThis patch is abandoned.",
                "Thanks.\n\nThis patch is abandoned.",
            ),
            (
                "a name and address above a wrapped \"writes:\"",
                "\"Rafael J. Wysocki\" <rafael@kernel.org>\nwrites:\n> regression\n\nThanks.\n\nShould we stop testing it?",
                "Thanks.\n\nShould we stop testing it?",
            ),
            (
                "own words right above an attribution stay",
                "I looked at it\nand it is noise.\nOn Mon, Bob wrote:\n> regression\nOk.",
                "I looked at it\nand it is noise.\nOk.",
            ),
            (
                "a cut in the quote is part of it",
                "Now the same kernel with\n\n> 4f432e8bb1 (\"x86/mce\")\n[...]\n\nreverted.\n",
                "Now the same kernel with\n[…]\nreverted.",
            ),
            (
                "a sentence cut after chat's \"w/\"",
                "Now the same kernel w/\n\n> 4f432e8bb1 (\"x86/mce\")\n\nreverted.\n",
                "Now the same kernel w/\n[…]\nreverted.",
            ),
            (
                "cuts marked otherwise",
                "On Mon, Bob wrote:\n<snip>\n> regression\n[ … ]\n> more\n--snip--\n\nSure.",
                "Sure.",
            ),
            (
                "a signature's dashes under a quote end the words",
                "> regression\nI'll look.\n> more\n--\nJohn Doe\nAcme Corp",
                "I'll look.",
            ),
            (
                "dots that are no cut stay",
                "I ran it again\n...\nand it is noise.",
                "I ran it again\n...\nand it is noise.",
            ),
            (
                "a salutation on its own line",
                "Hi Oliver,\n\nOn Mon, Bob wrote:\n> regression\n\nThis is noise.",
                "This is noise.",
            ),
            (
                "a salutation to many",
                "Hi Darrick, Hi Dave, and all,\nI'll revert it.",
                "I'll revert it.",
            ),
            ("a short salutation", "Hello, all.\n\nI'll revert it.", "I'll revert it."),
            (
                "two salutations",
                "Hi Oliver,\n\nHi,\n\nI'll revert it.",
                "I'll revert it.",
            ),
            (
                "a salutation with more in it stays",
                "Hi Oliver, could you rerun it?\n\nThanks.",
                "Hi Oliver, could you rerun it?",
            ),
            (
                "a sentence after a greeting word stays",
                "Hi, I'll revert this patch.\n\nThanks.",
                "Hi, I'll revert this patch.",
            ),
            ("a salutation alone stays", "Hi Dave!\n", "Hi Dave!"),
            (
                "quotes without a space and nested",
                ">>regression\n>regression\nI'll revert this patch.\n",
                "I'll revert this patch.",
            ),
            (
                "interleaved",
                "> first quoted\nAnswer one.\n> second quoted\nanswer two\n",
                "Answer one.\nanswer two",
            ),
            (
                "interleaved, a line left open and one in lower case: one sentence, the cut marked",
                "> first quoted\nanswer one\n> second quoted\nanswer two\n",
                "answer one\n[…]\nanswer two",
            ),
            (
                "a sentence a quote cuts in two stays one",
                "Now the same kernel with\n\n>   4f432e8bb1 (\"x86/mce: …\")\n\nreverted.\n\nIt is slower.\n",
                "Now the same kernel with\n[…]\nreverted.\n\nIt is slower.",
            ),
            (
                "a sentence ended before the quote: a new one after",
                "I ran it.\n\n> quoted\n\nreverted, it is faster.\n",
                "I ran it.\n\nreverted, it is faster.",
            ),
            (
                "a capital after the quote starts a new sentence",
                "I looked again\n\n> quoted\n\nReverted it.\n",
                "I looked again\n\nReverted it.",
            ),
            (
                "top-posted outlook",
                "Will look into it.\n\n-----Original Message-----\nFrom: kernel test robot\nSent: Monday\nSubject: regression\n\nregression regression\n",
                "Will look into it.",
            ),
            (
                "top-posted header block",
                "Thanks, applied.\n\nFrom: kernel test robot <lkp@intel.com>\nSent: Monday, June 4, 2018\nTo: Dave\nSubject: [xfs] regression\n\nthe report\n",
                "Thanks, applied.",
            ),
            (
                "list footer",
                "Fixed in v2.\n_______________________________________________\nLinux-nvme mailing list\n",
                "Fixed in v2.",
            ),
            (
                "name tags",
                "[Jaegeuk Kim]\n> quoted\nI'll revert it.\n",
                "I'll revert it.",
            ),
            (
                "attribution in another language",
                "2020년 2월 28일 (금) 오후 4:42, kernel test robot <rong.a.chen@intel.com>님이 작성:\n>\n> FYI, we noticed\n\nPlease forget this report.\n",
                "Please forget this report.",
            ),
            (
                "an address and a colon, no quote below: the replier's words",
                "Please ask me at foo@example.org:\nI'll explain.\n",
                "Please ask me at foo@example.org:\nI'll explain.",
            ),
            ("thanks alone stays", "Thanks!\n", "Thanks!"),
            (
                "a Chinese Gmail attribution",
                "看过了。\n\nkernel test robot <lkp@intel.com> 于2024年1月1日周一 10:00写道：\n> a regression\n",
                "看过了。",
            ),
            (
                "a Chinese Outlook header block, no separator line",
                "I will revert it.\n\n发件人: kernel test robot <lkp@intel.com>\n发送时间: 2024年1月1日 10:00\n收件人: A\n主题：[mm] regression\n\nthe report\n",
                "I will revert it.",
            ),
            (
                "a mail client's trailer ends the words",
                "I'll revert it.\n\nSent from my iPhone\n\n> the report\n",
                "I'll revert it.",
            ),
            (
                "a sentence that opens alike stays",
                "Sent from my box to the robot, the results look the same as yours.\n",
                "Sent from my box to the robot, the results look the same as yours.",
            ),
            (
                "Supercite's initials mark a quote",
                "kr> FYI, we noticed a regression.\nkr>> Not a regression.\n DC> fix it\n\nI'll look.\n",
                "I'll look.",
            ),
            (
                "a tag too long, or a mark inside words, is no quote",
                "verylongtagname> a\nI see a->b> here.\n",
                "verylongtagname> a\nI see a->b> here.",
            ),
            (
                "two closings in a row both go",
                "I'll take it.\n\nThanks.\n\nThanks,\nJohn\n",
                "I'll take it.",
            ),
            (
                "two closings and nothing else: the last one's words stay",
                "Thanks.\n\nThanks,\nJohn\n",
                "Thanks.",
            ),
            (
                "a name after a closing is the closing's, one more short line stays",
                "It is noise.\n\nYes.\n\nCheers,\nDave\n",
                "It is noise.\n\nYes.",
            ),
            (
                "a one-word answer below a quote is the reply, not a name",
                "On Mon, Bob wrote:\n> Is this just noise?\n\nYes.\n",
                "Yes.",
            ),
            (
                "a name below the reply is a sign-off",
                "On Mon, Bob wrote:\n> Is this just noise?\n\nYes, it is.\n\nDave.\n",
                "Yes, it is.",
            ),
            (
                "attribution without a quote",
                "On Wed, Jun 26, 2024 at 02:11:11PM +0800, Oliver Sang wrote:\n\nThanks for testing!\n",
                "Thanks for testing!",
            ),
            (
                "question stays",
                "Where do I find the test?\n",
                "Where do I find the test?",
            ),
            (
                "signature with --",
                "Looks like noise.\n--\nsent from my phone\n",
                "Looks like noise.",
            ),
            (
                "inline PGP: armour, then the signature block",
                "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nOn Mon, Jan 1, 2024, X wrote:\n> regression\n\nI will revert it.\n-----BEGIN PGP SIGNATURE-----\n\niQIzBAEBCAAdFiEE\n=abcd\n-----END PGP SIGNATURE-----\n",
                "I will revert it.",
            ),
            (
                "inline PGP: the signature separator escaped",
                "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\nNot a regression.\n\n- -- \nA Maintainer\n-----BEGIN PGP SIGNATURE-----\nxyz\n",
                "Not a regression.",
            ),
            (
                "a legal notice under the words, after a blank",
                "> regression\n\nI'll revert it.\n\nCONFIDENTIALITY NOTICE: This e-mail is for the sole use of the\nintended recipient(s). If you are not the intended recipient, please\ncontact the sender and destroy all copies.\n",
                "I'll revert it.",
            ),
            (
                "a notice glued to the sign-off starts at its heading",
                "It is noise.\n\nThanks,\nJohn\nIMPORTANT NOTICE: The contents of this email are confidential. If you are not the intended recipient, please notify the sender immediately.\n",
                "It is noise.",
            ),
            (
                "a notice glued to the last sentence keeps the sentence",
                "I'll revert it.\nIMPORTANT NOTICE: This email is confidential. If you are not the intended recipient, please delete it.\n",
                "I'll revert it.",
            ),
            (
                "a notice with no heading takes its paragraph, wrapped anywhere",
                "Not a regression.\n\nThis e-mail and its attachments contain confidential information, which\nis intended only for the person or entity whose address is listed above. If you\nhave received this e-mail in error, please notify the sender and delete it!\n",
                "Not a regression.",
            ),
            (
                "a gateway's banner above the words",
                "CAUTION: This email originated from outside of the organization. Do not click links or open attachments unless you recognize the sender.\n\nI'll look into it.\n",
                "I'll look into it.",
            ),
            (
                "a company's register entry under the words",
                "Will fix.\n\nIntel Deutschland GmbH\nRegistered Address: Am Campeon 10, 85579 Neubiberg, Germany\nManaging Directors: A, B\n",
                "Will fix.",
            ),
            (
                "a notice in Chinese",
                "I'll revert it.\n\n本邮件及其附件含有保密信息。如果您错收了本邮件，请您立即通知发件人并删除本邮件！\n",
                "I'll revert it.",
            ),
            (
                "words about a recipient that are no notice stay",
                "The wakeup goes to the wrong task, not to the intended recipient.\n\nI'll fix it.\n",
                "The wakeup goes to the wrong task, not to the intended recipient.\n\nI'll fix it.",
            ),
        ];
        for (name, input, want) in cases {
            assert_eq!(own_words(input), *want, "{name}");
        }
    }
}
