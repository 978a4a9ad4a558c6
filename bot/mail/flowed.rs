//! Reading `format=flowed` text (RFC 3676): a mail resent by hand from a
//! client that flows its lines. A line ending in a space is soft-broken and
//! joined with the next; a leading space was added ("stuffed") to lines that
//! begin with a space, `>` or `From `, and is taken off.

/// `text` (line ends `\n`) as its sender wrote it; `delsp`: the space before
/// a soft break was added by the client and goes too.
pub fn unflow(text: &str, delsp: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        let line = line.strip_prefix(' ').unwrap_or(line);
        // The signature separator is a hard break however it ends.
        let soft = line.ends_with(' ') && line != "-- " && lines.peek().is_some();
        if soft {
            out.push_str(if delsp { &line[..line.len() - 1] } else { line });
        } else {
            out.push_str(line);
            if lines.peek().is_some() {
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::unflow;

    #[test]
    fn unflows_as_rfc_3676_says() {
        for (text, delsp, want) in [
            ("plain\nlines\n", false, "plain\nlines\n"),
            ("a soft \nbreak\n", false, "a soft break\n"),
            ("a soft \nbreak\n", true, "a softbreak\n"),
            ("  stuffed row\n", false, " stuffed row\n"),
            (" >not quoted\n", false, ">not quoted\n"),
            (" From here\n", false, "From here\n"),
            ("-- \nrobot\n", false, "-- \nrobot\n"),
            ("one \ntwo \nthree\n", false, "one two three\n"),
            ("ends soft ", false, "ends soft "),
            ("", false, ""),
        ] {
            assert_eq!(unflow(text, delsp), want, "{text:?}");
        }
    }
}
