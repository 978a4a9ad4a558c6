//! Fuzz-style property tests of everything that reads mail: arbitrary bytes and
//! mail-shaped junk never panic the parser, the flowed decoder, the quote
//! stripper or the thread matcher. (cargo-fuzz needs a nightly toolchain, which
//! CI machines do not have; proptest runs on stable, in every test run.)

use perfbot::flows::ingest::flowed::unflow;
use perfbot::flows::ingest::parse::{parse, parse_head, Limits};
use perfbot::flows::ingest::thread::subject_key;
use perfbot::reply::understand;
use perfbot::reply::understand::quote::{own_words, ELIDED};
use perfbot::reply::understand::rules::Rules;
use proptest::prelude::*;

/// Pieces that make parsers take unusual paths.
fn mailish() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"Message-ID: <".to_vec()),
        Just(b">\r\n".to_vec()),
        Just(b"In-Reply-To: (c) <a@b> junk\r\n".to_vec()),
        Just(b"References: <x@y>\r\n\t<".to_vec()),
        Just(b"Content-Type: multipart/mixed; boundary=".to_vec()),
        Just(b"Content-Transfer-Encoding: base64\r\n".to_vec()),
        Just(b"Content-Transfer-Encoding: quoted-printable\r\n".to_vec()),
        Just(b"Content-Type: text/plain; format=flowed; delsp=yes\r\n".to_vec()),
        Just(b"Subject: =?utf-8?b?w6k=?= =?iso-8859-1?q?=E9?=\r\n".to_vec()),
        Just(b"\r\n\r\n".to_vec()),
        Just(b"--".to_vec()),
        Just(b"> ".to_vec()),
        Just(b"=\r\n".to_vec()),
        Just(b"\0".to_vec()),
        Just(b"\xff\xfe".to_vec()),
        Just(b"<html><p>".to_vec()),
        prop::collection::vec(any::<u8>(), 0..40),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

/// HTML-shaped junk: tags opened and closed out of order, tables, quotes,
/// comments, entities, styles.
fn htmlish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<div>".to_string()),
        Just("</div>".to_string()),
        Just("<blockquote>".to_string()),
        Just("</blockquote>".to_string()),
        Just("<table><tr><td>".to_string()),
        Just("</td><td colspan=\"9999\">".to_string()),
        Just("</tr></table>".to_string()),
        Just("<ul><li>".to_string()),
        Just("<pre>".to_string()),
        Just("<br>".to_string()),
        Just("<p>".to_string()),
        Just("<!--".to_string()),
        Just("-->".to_string()),
        Just("<style>p{}".to_string()),
        Just("&amp;&#x1F600;&#99999999;&bogus".to_string()),
        Just("<a href=\"x\">".to_string()),
        Just("This is not a regression.".to_string()),
        Just("\t \n".to_string()),
        "(?s).{0,20}",
    ];
    prop::collection::vec(piece, 0..80).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// An HTML-only body is laid out as text (`flows::ingest::html`): never
    /// a panic, and never more text than the limit.
    #[test]
    fn html_bodies_never_panic(html in htmlish()) {
        let raw = format!(
            "Message-ID: <h@x>\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}"
        );
        let limits = Limits { max_text: 300, ..Limits::default() };
        let m = parse(raw.as_bytes(), &limits).unwrap();
        prop_assert!(m.text.len() <= 300);
    }

    #[test]
    fn parser_never_panics_on_bytes(raw in prop::collection::vec(any::<u8>(), 0..2000)) {
        let _ = parse(&raw, &Limits::default());
    }

    #[test]
    fn parser_never_panics_on_mailish_junk(raw in mailish()) {
        let limits = Limits { max_bytes: 1500, max_parts: 5, max_references: 3, max_text: 100 };
        if let Ok(m) = parse(&raw, &limits) {
            prop_assert!(m.head.references.len() <= 3);
            prop_assert!(m.text.len() <= 100);
        }
        let _ = parse_head(&raw, &Limits::default());
    }

    #[test]
    fn text_helpers_never_panic(s in "(?s).{0,400}", delsp in any::<bool>()) {
        let _ = unflow(&s, delsp);
        let w = own_words(&s);
        // The replier's words never include a quoted line.
        prop_assert!(w.lines().all(|l| !l.trim_start().starts_with('>')));
        let _ = subject_key(&s);
        let u = understand(&s, Rules::builtin());
        prop_assert!((0.0..=1.0).contains(&u.confidence));
    }

    /// Quotes cutting the replier's lines anywhere: what stays is the
    /// replier's own lines in their order, and a mark where a quote cut a
    /// sentence; never a quoted line, never a line made up.
    #[test]
    fn own_words_keep_only_own_lines(lines in prop::collection::vec(prop_oneof![
        Just("> quoted line"),
        Just(">> deeper"),
        Just(""),
        Just("Now the same kernel with"),
        Just("reverted."),
        Just("It is slower."),
        Just("and then"),
        Just("On Mon, Jan 1, 2024 at 10:00, X wrote:"),
        Just("Thanks,"),
    ], 0..30)) {
        let body = lines.join("\n");
        let w = own_words(&body);
        let mut own = lines.iter().filter(|l| !l.starts_with('>'));
        for l in w.lines().filter(|l| !l.is_empty() && *l != ELIDED) {
            prop_assert!(own.any(|o| o.trim() == l.trim()), "{l:?} from {body:?}");
        }
    }

    #[test]
    fn classifier_never_panics_on_mailish_text(raw in mailish()) {
        let text = String::from_utf8_lossy(&raw);
        let _ = understand(&text, Rules::builtin());
    }
}

/// Pathological inputs finish (linear-time regexes, bounded work per
/// sentence); no timing is asserted, only that they end with a sane answer.
#[test]
fn pathological_replies_finish() {
    let cases = [
        "a ".repeat(1_000_000),
        "revert ".repeat(200_000),
        ">".repeat(500_000) + " not a regression",
        "this is not a regression. ".repeat(40_000),
        "(((((((((((".repeat(50_000),
        "\n".repeat(300_000) + "I'll revert it.",
    ];
    for c in &cases {
        let u = understand(c, Rules::builtin());
        assert!((0.0..=1.0).contains(&u.confidence));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Another address by name (`trust.same_name_addresses`): any known
    /// mailbox and any sender's name never panic; the very same address is
    /// never "another" one; a sender whose name has a word more than the
    /// known name, or whose mailbox name differs, is never that person.
    #[test]
    fn same_name_elsewhere_holds_for_any_names(
        known_name in "[\\PC]{0,30}",
        known_box in "[a-z0-9.]{1,12}",
        other_box in "[a-z0-9.]{1,12}",
        name in "[\\PC]{0,30}",
        junk in "(?s).{0,60}",
    ) {
        use perfbot::model::Address;
        use perfbot::reply::policy::trust::same_name_elsewhere;
        let _ = same_name_elsewhere(&junk, &name, &Address::parse("a@b.example").unwrap());
        let known = format!("{known_name} <{known_box}@one.example>");
        if let Some(same) = Address::parse(&format!("{known_box}@one.example")) {
            prop_assert!(!same_name_elsewhere(&known, &known_name, &same));
        }
        if let Some(elsewhere) = Address::parse(&format!("{known_box}@two.example")) {
            // One word more than the known name: someone else.
            let longer = format!("{known_name} Mallory");
            prop_assert!(!same_name_elsewhere(&known, &longer, &elsewhere), "{known} / {longer}");
            let _ = same_name_elsewhere(&known, &name, &elsewhere);
        }
        if other_box != known_box {
            if let Some(other) = Address::parse(&format!("{other_box}@two.example")) {
                prop_assert!(!same_name_elsewhere(&known, &known_name, &other));
            }
        }
    }
}
