//! Rendered reports against the seeds they reproduce, and whole e-mails against
//! golden files (set PERFBOT_BLESS=1 to rewrite the golden files after a
//! deliberate change, then review the diff).

use std::path::{Path, PathBuf};

use chrono::Utc;
use perfbot::config::Config;
use perfbot::flows::report::prepare;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn config() -> Config {
    Config::load(Some(&root().join("examples/robot-identity.toml"))).unwrap()
}

fn config_2018() -> Config {
    let text = std::fs::read_to_string(root().join("examples/robot-identity.toml")).unwrap();
    let text = text.replace("[report]\n", "[report]\nheadline_first = true\n");
    Config::parse(
        &text,
        "robot-identity.toml (2018 layout)",
        root().join("examples"),
    )
    .unwrap()
}

fn body(example: &str, template: &str, force: bool) -> String {
    let config = if example.starts_with("seed000") {
        config_2018()
    } else {
        config()
    };
    let p = prepare(
        &config,
        &root().join("examples").join(example),
        Some(template),
        force,
        Utc::now(),
    )
    .unwrap();
    p.rendered.body
}

/// Collapse whitespace, write `±` as the seeds' mangled `?`, and glue `? 3%`
/// into `?3%`, so that a seed's whitespace-damaged text compares with ours.
fn normalise(s: &str) -> String {
    let s = s.replace('±', "?");
    let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
    joined.replace("? ", "?")
}

/// The text between the `\ | \` header line and `end` (exclusive).
fn section<'a>(text: &'a str, from: usize, end: &str) -> (&'a str, usize) {
    let start = text[from..]
        .find("\\ | \\")
        .map(|i| from + i + 5)
        .expect("table header");
    let stop = text[start..]
        .find(end)
        .map(|i| start + i)
        .expect("end marker");
    (&text[start..stop], stop)
}

fn seed(name: &str) -> String {
    std::fs::read_to_string(root().join("tests/fixtures/seeds").join(name)).unwrap()
}

/// Rows of each table in a rendered body, as (normalised) text.
fn rendered_tables(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(i) = body[pos..].find("|                \\  \n") {
        let start = pos + i + "|                \\  \n".len();
        let end = body[start..]
            .find("\n\n")
            .map(|j| start + j)
            .unwrap_or(body.len());
        out.push(normalise(&body[start..end]));
        pos = end;
    }
    out
}

#[test]
fn seed000_rows_equal_the_robots() {
    let seed = seed("000_5eebb2f9237f2d20.txt");
    let (want, _) = section(&seed, 0, "Disclaimer:");
    let got = rendered_tables(&body(
        "seed000-xfs-fio-randwrite-2018.json",
        "classic",
        true,
    ));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0], normalise(want));
}

#[test]
fn seed004_rows_equal_the_robots() {
    let seed = seed("004_5398eed42bf9afe4.txt");
    let (want, _) = section(&seed, 0, "\naim7.jobs-per-min\n");
    let got = rendered_tables(&body(
        "seed004-f2fs-aim7-improvement.json",
        "classic",
        false,
    ));
    assert_eq!(got[0], normalise(want));
}

#[test]
fn seed002_rows_of_both_tests_equal_the_robots() {
    let seed = seed("002_e850e63ef7a6c637.txt");
    let (first, stop) = section(&seed, 0, " ****");
    let (second, _) = section(&seed, stop, " Disclaimer:");
    let got = rendered_tables(&body("seed002-xfs-fio-falloc-2022.json", "classic", false));
    assert_eq!(got, vec![normalise(first), normalise(second)]);
}

#[test]
fn seed002_in_addition_table_matches() {
    let seed = normalise(&seed("002_e850e63ef7a6c637.txt"));
    let body = body("seed002-xfs-fio-falloc-2022.json", "classic", false);
    let start = body.find("+------").unwrap();
    let end = body[start..].find("\n\n").unwrap() + start;
    assert!(
        seed.contains(&normalise(&body[start..end])),
        "{}",
        &body[start..end]
    );
}

#[test]
fn seed000_is_not_reported_without_force() {
    let e = prepare(
        &config(),
        &root().join("examples/seed000-xfs-fio-randwrite-2018.json"),
        Some("classic"),
        false,
        Utc::now(),
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("no reportable regression"), "{msg}");
    assert!(
        msg.contains("fio.latency_2ms% +7.1: a latency-histogram bin"),
        "{msg}"
    );
}

fn golden(name: &str, got: &[u8]) {
    let path = root().join("tests/golden").join(name);
    if std::env::var_os("PERFBOT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read(&path)
        .unwrap_or_else(|_| panic!("{} missing: run with PERFBOT_BLESS=1", path.display()));
    if want != got {
        let diff_at = want
            .iter()
            .zip(got)
            .position(|(a, b)| a != b)
            .unwrap_or(want.len().min(got.len()));
        panic!(
            "{name} differs at byte {diff_at}:\n--- want ---\n{}\n--- got ---\n{}",
            String::from_utf8_lossy(
                &want[diff_at.saturating_sub(200)..(diff_at + 200).min(want.len())]
            ),
            String::from_utf8_lossy(
                &got[diff_at.saturating_sub(200)..(diff_at + 200).min(got.len())]
            )
        );
    }
}

#[test]
fn whole_emails_match_golden_files() {
    let mut cases = Vec::new();
    for (example, force) in [
        ("seed000-xfs-fio-randwrite-2018", true),
        ("seed002-xfs-fio-falloc-2022", false),
        ("seed004-f2fs-aim7-improvement", false),
    ] {
        for template in ["classic", "modern"] {
            cases.push((example, force, template));
        }
    }
    // The robot's layout of 2014, from an input of today.
    cases.push(("seed002-xfs-fio-falloc-2022", false, "lkp-2014"));
    for (example, force, template) in cases {
        let p = prepare(
            &config(),
            &root().join(format!("examples/{example}.json")),
            Some(template),
            force,
            Utc::now(),
        )
        .unwrap();
        golden(&format!("{example}.{template}.eml"), &p.raw);
    }
}

#[test]
fn iso_8859_1_body_carries_plus_minus_as_one_byte() {
    let p = prepare(
        &config(),
        Path::new(&root().join("examples/seed004-f2fs-aim7-improvement.json")),
        Some("classic"),
        false,
        Utc::now(),
    )
    .unwrap();
    let raw = &p.raw;
    assert!(raw.windows(3).any(|w| w == b" \xb1 "), "no 0xB1 byte");
    assert!(
        !raw.windows(2).any(|w| w == "±".as_bytes()),
        "UTF-8 ± in an iso-8859-1 body"
    );
    let head =
        String::from_utf8_lossy(&raw[..raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap()])
            .to_string();
    for h in [
        "Content-Type: text/plain; charset=\"iso-8859-1\"",
        "Content-Transfer-Encoding: 8bit",
        "MIME-Version: 1.0",
        "Message-ID: <perfbot.",
        "Subject: [f2fs] 84b89e5d94: aim7.jobs-per-min 91.4% improvement",
    ] {
        assert!(head.contains(h), "missing {h:?} in\n{head}");
    }
}

/// Seed 004's input with another commit subject, written in `dir`.
fn seed004_with_subject(dir: &Path, subject: &str) -> std::path::PathBuf {
    let mut v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("examples/seed004-f2fs-aim7-improvement.json"))
            .unwrap(),
    )
    .unwrap();
    v["commit"]["subject"] = serde_json::json!(subject);
    let p = dir.join("input.json");
    std::fs::write(&p, v.to_string()).unwrap();
    p
}

/// A report whose words ISO-8859-1 cannot hold (a Polish author, a
/// Cyrillic subject) is written in UTF-8 instead: no name becomes `?`.
/// One that fits stays in ISO-8859-1, as the robot's.
#[test]
fn a_report_latin1_cannot_hold_is_sent_in_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let p = seed004_with_subject(dir.path(), "f2fs: Michał Mirosław's fix для всех");
    let out = prepare(&config(), &p, Some("modern"), false, Utc::now()).unwrap();
    let mail = mail_parser::MessageParser::default()
        .parse(&out.raw)
        .unwrap();
    let body = mail.body_text(0).unwrap();
    assert!(body.contains("Michał Mirosław's fix для всех"), "{body}");
    assert!(body.contains('±'), "{body}");
    use mail_parser::MimeHeaders;
    let ct = mail.content_type().expect("a Content-Type");
    assert_eq!(
        (ct.ctype(), ct.subtype(), ct.attribute("charset")),
        ("text", Some("plain"), Some("utf-8"))
    );
}

/// Values are text, never templates: a commit subject with `{{…}}` and HTML
/// stays literal in the subject and the body.
#[test]
fn template_syntax_in_data_stays_literal() {
    let dir = tempfile::tempdir().unwrap();
    let p = seed004_with_subject(
        dir.path(),
        "f2fs: {{robot_email}} {{#each test}}x{{/each}} <b>&amp;</b>",
    );
    let out = prepare(&config(), &p, Some("modern"), false, Utc::now()).unwrap();
    assert!(
        out.rendered
            .body
            .contains("(\"f2fs: {{robot_email}} {{#each test}}x{{/each}} <b>&amp;</b>\")"),
        "{}",
        out.rendered.body
    );
    assert!(!out.rendered.body.contains("f2fs: perfbot@localhost"));
}
