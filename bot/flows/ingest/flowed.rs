//! RFC 3676 format=flowed: a line ending in a space continues on the next line
//! of the same quote depth. mail-parser decodes the body but leaves it flowed.

/// Split a line into its quote depth and content (space-stuffing removed).
fn depth(line: &str) -> (usize, &str) {
    let n = line.bytes().take_while(|b| *b == b'>').count();
    let rest = &line[n..];
    (n, rest.strip_prefix(' ').unwrap_or(rest))
}

/// Join flowed lines back into paragraphs. With `delsp`, the trailing space of
/// a flowed line is a soft break and is removed. The text ends with a line
/// break exactly when it came with one.
pub fn unflow(text: &str, delsp: bool) -> String {
    let (body, final_newline) = match text.strip_suffix('\n') {
        Some(body) => (body, true),
        None => (text, false),
    };
    let mut out = String::with_capacity(text.len());
    let mut open: Option<usize> = None; // depth of the paragraph being joined
    for line in body.split('\n') {
        let (d, content) = depth(line);
        // The signature separator is never flowed.
        let flowed = content.ends_with(' ') && content != "-- ";
        if open.is_some_and(|o| o != d) {
            out.push('\n');
            open = None;
        }
        if open.is_none() {
            for _ in 0..d {
                out.push('>');
            }
            if d > 0 {
                out.push(' ');
            }
        }
        let piece = if flowed && delsp {
            &content[..content.len() - 1]
        } else {
            content
        };
        out.push_str(piece);
        if flowed {
            open = Some(d);
        } else {
            out.push('\n');
            open = None;
        }
    }
    // Every fixed line ended with a break; a flowed last one is still open.
    match (final_newline, open.is_some()) {
        (true, true) => out.push('\n'),
        (false, false) => {
            out.pop();
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::unflow;

    #[test]
    fn table() {
        let cases = [
            ("a \nb\n", false, "a b\n"),
            ("a \nb\n", true, "ab\n"),
            ("> x \n> y\nz\n", false, "> x y\nz\n"),
            ("a \n> b\n", false, "a \n> b\n"),
            ("-- \nDave\n", false, "-- \nDave\n"),
            ("plain\nlines\n", false, "plain\nlines\n"),
            // Space-stuffed lines (a table row, `From `, a `>` that is no quote).
            ("  stuffed row\n", false, " stuffed row\n"),
            (" From here\n", false, "From here\n"),
            (" >not quoted\n", false, ">not quoted\n"),
            ("one \ntwo \nthree\n", false, "one two three\n"),
            // A break at the end only where the text had one.
            ("", false, ""),
            ("\n", false, "\n"),
            ("a", false, "a"),
            ("a\n\n", false, "a\n\n"),
            ("a \nb", true, "ab"),
            ("a \n", false, "a \n"),
        ];
        for (input, delsp, want) in cases {
            assert_eq!(unflow(input, delsp), want, "{input:?}");
        }
    }

    /// What is not a space, a line break or a quote mark.
    fn ink(s: &str) -> String {
        s.chars()
            .filter(|c| !matches!(c, ' ' | '\n' | '>'))
            .collect()
    }

    proptest::proptest! {
        /// Joining lines loses no word: every other character comes back,
        /// in order.
        #[test]
        fn no_word_is_lost(text in "([a-z>-]{0,6}[ \n]{0,2}){0,20}", delsp: bool) {
            proptest::prop_assert_eq!(ink(&unflow(&text, delsp)), ink(&text));
        }

        /// Text with no flowed line, no space-stuffing and no quotes (what
        /// most mail is) comes back as it was.
        #[test]
        fn fixed_text_is_kept(lines in proptest::collection::vec("([a-z.,]+( [a-z.,]+)*)?", 0..12), delsp: bool) {
            let text = lines.join("\n");
            proptest::prop_assert_eq!(unflow(&text, delsp), text);
        }
    }
}
