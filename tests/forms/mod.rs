//! The same words as other mail clients send them, for the tests that read
//! replies and replay threads in each form (`understanding.rs`,
//! `robot_reports.rs`).
#![allow(dead_code)]

/// The text as a client that wraps every line at `width` columns sends
/// it, wrapping quoted lines without quoting their overflow again (the
/// "broken" quotes of Outlook and some webmail):
/// `> kernel test robot noticed a -12.3% regression of` over
/// `will-it-scale.per_process_ops on:`. A quoted line is cut at the last
/// space that fits, its overflow wrapped again at the same width.
pub fn wrapped_by_a_client(text: &str, width: usize) -> String {
    let mut out = Vec::new();
    for line in text.lines() {
        let marks = line.len() - line.trim_start_matches(['>', ' ']).len();
        let (prefix, words) = line.split_at(marks);
        if !line.starts_with('>') || line.chars().count() <= width || !words.trim().contains(' ') {
            out.push(line.to_string());
            continue;
        }
        let mut cur = prefix.to_string();
        for word in words.split(' ') {
            let empty = cur.trim_start_matches(['>', ' ']).is_empty();
            let next = match empty {
                true => format!("{cur}{word}"),
                false => format!("{cur} {word}"),
            };
            if empty || word.is_empty() || next.chars().count() <= width {
                cur = next;
            } else {
                out.push(cur.trim_end().to_string());
                cur = word.to_string();
            }
        }
        out.push(cur.trim_end().to_string());
    }
    let mut s = out.join("\n");
    if text.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// The text with a no-break space for the second of two spaces and after
/// each sentence's and clause's mark, as Apple Mail and Gmail write what
/// their user typed.
pub fn no_break_spaces(text: &str) -> String {
    own_lines(text, |l| {
        l.replace("  ", " \u{a0}")
            .replace(". ", ".\u{a0}")
            .replace(", ", ",\u{a0}")
            .replace("? ", "?\u{a0}")
    })
}

/// The text with each line that quotes nothing made over by `f`, joined
/// again (without a last newline).
fn own_lines(text: &str, f: impl Fn(&str) -> String) -> String {
    text.lines()
        .map(|l| match l.starts_with('>') {
            true => l.to_string(),
            false => f(l),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text as invisible characters reach it from a Windows client, a web
/// page or a chat tool: a byte-order mark first, a zero-width space after
/// each of the writer's lines and their first word, a soft hyphen inside
/// their first long word; and a signature's logo left as Gmail's
/// placeholder line under it all.
pub fn unseen_characters_and_a_logo(text: &str) -> String {
    let own = own_lines(text, |l| {
        if l.trim().is_empty() {
            return l.to_string();
        }
        let l = l.replacen(' ', "\u{200b} ", 1);
        let hyphened = l.split(' ').find(|w| w.chars().count() >= 8).map(|w| {
            let at = w.char_indices().nth(4).map_or(0, |(i, _)| i);
            (w.to_string(), format!("{}\u{ad}{}", &w[..at], &w[at..]))
        });
        let l = match hyphened {
            Some((w, h)) => l.replacen(&w, &h, 1),
            None => l,
        };
        format!("{l}\u{200b}")
    });
    format!("\u{feff}{}\n\n[image: logo.png]\n", own.trim_end())
}

/// The text as a phone, Apple Mail or Outlook typesets what their user
/// typed: an apostrophe or quotation mark with a word beside it curly
/// (opening before a word, closing after one or after a sentence's mark),
/// one between spaces or brackets as typed (`("-E lazy…” helps)`); an
/// ellipsis for three dots, a dash for two hyphens; in the writer's own
/// lines.
pub fn typeset(text: &str) -> String {
    own_lines(text, |l| {
        let chars: Vec<char> = l.chars().collect();
        let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric());
        let closes =
            |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || ".,!?".contains(*c));
        let mut out = String::with_capacity(l.len());
        for (i, &c) in chars.iter().enumerate() {
            let (prev, next) = (
                i.checked_sub(1).and_then(|p| chars.get(p)),
                chars.get(i + 1),
            );
            out.push(match c {
                '\'' if closes(prev) => '\u{2019}',
                '\'' if word(next) => '\u{2018}',
                '"' if word(next) => '\u{201c}',
                '"' if closes(prev) => '\u{201d}',
                c => c,
            });
        }
        out.replace("...", "\u{2026}").replace(" -- ", " \u{2014} ")
    })
}

/// The text as a Chinese input method left on types it: full-width marks
/// (`，？！：；（）`, `。` for a sentence's full stop) where a space or the
/// line's end follows the mark, and no space after them, the mark being as
/// wide as one (`Hi Oliver，could you test it？Thanks`); in the writer's own
/// lines.
pub fn full_width_marks(text: &str) -> String {
    own_lines(text, |l| {
        let chars: Vec<char> = l.chars().collect();
        let mut out = String::with_capacity(l.len() * 2);
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1);
            let ends = next.is_none_or(|n| *n == ' ');
            let prev_letter = i > 0 && chars[i - 1].is_ascii_lowercase();
            let wide = match c {
                ',' | '?' | '!' | ':' | ';' | '(' | ')' if ends => {
                    char::from_u32(c as u32 + 0xfee0)
                }
                '.' if ends && prev_letter => Some('\u{3002}'),
                _ => None,
            };
            match wide {
                Some(w) => {
                    out.push(w);
                    // The space after it, before a word, left out.
                    if next == Some(&' ') && chars.get(i + 2).is_some_and(|c| c.is_alphanumeric()) {
                        i += 1;
                    }
                }
                None => out.push(c),
            }
            i += 1;
        }
        out
    })
}

/// The text as a quick typist writes it, contractions without their
/// apostrophe ("dont", "Im", "were" for "we're"), in the writer's own lines.
pub fn apostrophes_left_out(text: &str) -> String {
    own_lines(text, |l| {
        let chars: Vec<char> = l.chars().collect();
        let mut out = String::with_capacity(l.len());
        for (i, &c) in chars.iter().enumerate() {
            let after: String = chars[i + 1..]
                .iter()
                .take_while(|c| c.is_alphabetic())
                .collect();
            let contraction = c == '\''
                && i > 0
                && chars[i - 1].is_alphabetic()
                && ["t", "ll", "m", "re", "ve", "d", "s"].contains(&after.as_str());
            if !contraction {
                out.push(c);
            }
        }
        out
    })
}

/// The text with its negations emphasised as plain text does (`*not*`,
/// `_nothing_`, with `mark`), in the writer's own lines.
pub fn emphasised(text: &str, mark: char) -> String {
    const WORDS: [&str; 14] = [
        "not",
        "no",
        "never",
        "nothing",
        "don't",
        "doesn't",
        "isn't",
        "won't",
        "can't",
        "didn't",
        "wouldn't",
        "shouldn't",
        "aren't",
        "wasn't",
    ];
    own_lines(text, |l| {
        l.split(' ')
            .map(|w| {
                let core = w.trim_end_matches([',', '.', '?', '!', ';', ':']);
                if WORDS.contains(&core.to_lowercase().as_str()) {
                    format!("{mark}{core}{mark}{}", &w[core.len()..])
                } else {
                    w.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// The text with "thanks" and "please" as a quick typist shortens them
/// ("Thx", "pls"), in the writer's own lines.
pub fn shortened(text: &str) -> String {
    own_lines(text, |l| {
        l.split(' ')
            .map(|w| match w.get(..6) {
                Some("Thanks") => format!("Thx{}", &w[6..]),
                Some("thanks") => format!("thx{}", &w[6..]),
                Some("Please") => format!("Pls{}", &w[6..]),
                Some("please") => format!("pls{}", &w[6..]),
                _ => w.to_string(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// Words as chat shortens them, both ways: `(word, shorthand)`.
pub const CHAT: [(&str, &str); 10] = [
    ("with", "w/"),
    ("With", "W/"),
    ("without", "w/o"),
    ("Without", "W/o"),
    ("because", "b/c"),
    ("Because", "B/c"),
    ("you", "u"),
    ("You", "U"),
    ("are", "r"),
    ("Are", "R"),
];

/// The text with "with", "without", "because", "you" and "are" as chat
/// shortens them ("w/", "w/o", "b/c", "u", "r"), in the writer's own lines.
pub fn chatted(text: &str) -> String {
    own_lines(text, |l| {
        l.split(' ')
            .map(|w| {
                let core = w.trim_end_matches([',', '.', '?', '!', ';', ':', ')']);
                match CHAT.iter().find(|(word, _)| *word == core) {
                    Some((_, short)) => format!("{short}{}", &w[core.len()..]),
                    None => w.to_string(),
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// The text as chat types it: its questions without their `?` ("can you
/// rerun this test"), in the writer's own lines. A `?` inside a word or
/// before a mark stays (`(?)`, `"?"`).
pub fn unmarked_questions(text: &str) -> String {
    own_lines(text, |l| {
        let chars: Vec<char> = l.chars().collect();
        chars
            .iter()
            .enumerate()
            .filter(|&(i, &c)| c != '?' || chars.get(i + 1).is_some_and(|n| !n.is_whitespace()))
            .map(|(_, &c)| c)
            .collect()
    })
}
