//! Quote marks: which line of a mail quotes another, and what it quotes.
//! Every reader of mail text asks the same question (the reply's own words,
//! the model's features, the robot's template in a mail from its address),
//! so one answer serves them all.

/// A quoted line: `>`, `|>`, or Supercite's initials before the mark
/// (`DC> `, ` kr>> `, as Emacs writes them).
pub fn is_quote(line: &str) -> bool {
    marks_start(line.trim_start()).is_some()
}

/// What a quoted line quotes, without its marks; `None` if it is no quote.
pub fn quoted_text(line: &str) -> Option<&str> {
    let t = line.trim_start();
    Some(t[marks_start(t)?..].trim_start_matches(['>', ' ']))
}

/// Where the quote marks (`>`) of a line without leading blanks start:
/// first, after a `|`, or after Supercite's tag.
fn marks_start(t: &str) -> Option<usize> {
    if t.starts_with('>') {
        Some(0)
    } else if t.starts_with("|>") {
        Some(1)
    } else {
        supercite_tag(t)
    }
}

/// Where Supercite's mark starts: after a short tag of letters (a name or
/// initials), a `>`, then a space, another `>` or the line's end ("DC> ",
/// "kr>>", "Dave>").
fn supercite_tag(t: &str) -> Option<usize> {
    let mark = t.bytes().take(14).position(|b| b == b'>')?;
    let (tag, rest) = t.split_at(mark);
    let tagged = tag.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && rest[1..]
            .chars()
            .next()
            .is_none_or(|c| c == ' ' || c == '>');
    tagged.then_some(mark)
}

#[cfg(test)]
mod tests {
    use super::quoted_text;

    #[test]
    fn table() {
        let cases: &[(&str, Option<&str>)] = &[
            ("> FYI, we noticed", Some("FYI, we noticed")),
            (">> > deep", Some("deep")),
            ("   > indented", Some("indented")),
            (">", Some("")),
            ("|> old style", Some("old style")),
            // Supercite's tags, as Emacs writes them.
            ("kr> FYI, we noticed", Some("FYI, we noticed")),
            (" DC>> nested", Some("nested")),
            ("Dave>", Some("")),
            ("rong.a.chen> x", Some("x")),
            // Not quotes: arrows, redirections, comparisons, long words.
            ("a > b", None),
            ("x->y", None),
            ("2>&1", None),
            ("=> result", None),
            ("|| x", None),
            ("averylongtagname> x", None),
            ("kr>x", None),
            ("", None),
        ];
        for (line, want) in cases {
            assert_eq!(quoted_text(line), *want, "{line:?}");
            assert_eq!(super::is_quote(line), want.is_some(), "{line:?}");
        }
    }
}
