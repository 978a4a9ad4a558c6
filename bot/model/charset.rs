//! The charsets perfbot writes mail in.

use serde::Deserialize;

/// The charset of a mail perfbot writes: ISO-8859-1 as the 0-day robot (its
/// table needs only `±`), or UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum Charset {
    #[default]
    #[serde(rename = "iso-8859-1", alias = "ISO-8859-1", alias = "latin1")]
    Latin1,
    #[serde(rename = "utf-8", alias = "UTF-8", alias = "utf8")]
    Utf8,
}

impl Charset {
    /// The name in a `Content-Type` header.
    pub fn as_str(self) -> &'static str {
        match self {
            Charset::Latin1 => "iso-8859-1",
            Charset::Utf8 => "utf-8",
        }
    }

    /// The charset `text` is written in: this one, unless it cannot hold
    /// every character (a commit by "Michał Mirosław" in ISO-8859-1), then
    /// UTF-8: a report never loses a name or a subject to `?`.
    pub fn for_text(self, text: &str) -> Charset {
        match self {
            Charset::Latin1 if text.chars().any(|c| u32::from(c) > 0xff) => Charset::Utf8,
            c => c,
        }
    }

    /// `text` in this charset; in ISO-8859-1 a character past U+00FF becomes `?`.
    pub fn encode(self, text: &str) -> Vec<u8> {
        match self {
            Charset::Utf8 => text.as_bytes().to_vec(),
            Charset::Latin1 => text
                .chars()
                .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_replaces_what_it_cannot_hold() {
        assert_eq!(Charset::Latin1.encode("±5% ✓"), b"\xb15% ?");
        assert_eq!(Charset::Utf8.encode("±"), "±".as_bytes());
    }

    #[test]
    fn a_text_it_cannot_hold_is_written_in_utf8() {
        for (charset, text, want) in [
            (Charset::Latin1, "±5% Kleine-König", Charset::Latin1),
            (Charset::Latin1, "Michał Mirosław", Charset::Utf8),
            (Charset::Latin1, "", Charset::Latin1),
            (Charset::Utf8, "±", Charset::Utf8),
        ] {
            let chosen = charset.for_text(text);
            assert_eq!(chosen, want, "{text}");
            let bytes = chosen.encode(text);
            let back: String = match chosen {
                Charset::Utf8 => String::from_utf8(bytes).unwrap(),
                Charset::Latin1 => bytes.iter().map(|&b| char::from(b)).collect(),
            };
            assert_eq!(back, text);
        }
    }

    #[test]
    fn names() {
        #[derive(Deserialize)]
        struct T {
            c: Charset,
        }
        let t: T = toml::from_str("c = \"UTF-8\"").unwrap();
        assert_eq!(t.c, Charset::Utf8);
        let t: T = toml::from_str("c = \"iso-8859-1\"").unwrap();
        assert_eq!(t.c.as_str(), "iso-8859-1");
        assert!(toml::from_str::<T>("c = \"koi8-r\"").is_err());
    }
}
