//! The classifier on real and written replies: the 39 labelled replies to
//! kernel-test-robot reports (`fixtures/replies/dev`, labels from
//! `labels.jsonl`; `alt_labels` are defensible second readings), the three seed
//! replies, and a table of replies written for this test. Each must be read
//! right, and none may be read as a decision the replier did not make.

use std::path::PathBuf;

use perfbot::flows::ingest::parse::body_text as body_of;
use perfbot::reply::understand::rules::Rules;
use perfbot::reply::{understand, Intent};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replies")
}

/// (name, wanted, also right, got, evidence)
type Row = (String, String, Vec<String>, Intent, String);

fn check(rows: &[Row]) {
    let mut wrong = Vec::new();
    let mut wrong_closures = Vec::new();
    for (name, want, alt, got, evidence) in rows {
        let right = got.as_str() == want || alt.iter().any(|a| a == got.as_str());
        if !right {
            let line = format!("{name}: want {want} {alt:?}, got {got} ({evidence})");
            if got.is_decisive() {
                wrong_closures.push(line);
            } else {
                wrong.push(line);
            }
        }
    }
    assert!(
        wrong_closures.is_empty(),
        "decisions the repliers did not make:\n{}",
        wrong_closures.join("\n")
    );
    assert!(wrong.is_empty(), "misread:\n{}", wrong.join("\n"));
}

#[test]
fn labelled_dev_replies() {
    let labels = std::fs::read_to_string(fixtures().join("dev/labels.jsonl")).unwrap();
    let mut rows = Vec::new();
    for line in labels.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = v["id"].as_str().unwrap();
        let path = ["eml", "txt"]
            .iter()
            .map(|e| fixtures().join(format!("dev/{id}.{e}")))
            .find(|p| p.exists())
            .unwrap();
        let raw = std::fs::read(&path).unwrap();
        let u = understand(&body_of(&raw), Rules::builtin());
        let alt = v["alt_labels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        rows.push((
            id.to_string(),
            v["label"].as_str().unwrap().to_string(),
            alt,
            u.intent,
            u.evidence,
        ));
    }
    assert_eq!(rows.len(), 39);
    check(&rows);
}

/// `text` as Gmail sends it from its HTML editor alone: a `<div>` a line,
/// `<div><br></div>` an empty one, quoted lines in nested blockquotes, and
/// typed spaces as `&nbsp;`.
fn as_gmail_html(text: &str) -> String {
    let mut out = String::from("<div dir=\"ltr\">");
    let mut open = 0usize;
    for line in text.lines() {
        let mut depth = 0usize;
        let mut rest = line;
        while let Some(r) = rest.strip_prefix('>') {
            depth += 1;
            rest = r.strip_prefix(' ').unwrap_or(r);
        }
        out.push_str(&"</blockquote>".repeat(open.saturating_sub(depth)));
        out.push_str(&"<blockquote class=\"gmail_quote\">".repeat(depth.saturating_sub(open)));
        open = depth;
        let escaped = rest
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('\t', &"&nbsp;".repeat(8))
            .replace("  ", " &nbsp;");
        if escaped.trim().is_empty() {
            out.push_str("<div><br></div>");
        } else {
            out.push_str(&format!("<div>{escaped}</div>"));
        }
    }
    out + &"</blockquote>".repeat(open) + "</div>"
}

/// The same replies sent as HTML alone are read as they are in plain text:
/// the same intent from the same evidence. (Before HTML was laid out by
/// `flows::ingest::html`, 63% of the labelled replies were read alike.)
#[test]
fn dev_replies_sent_as_html_read_alike() {
    let mut unlike = Vec::new();
    let mut n = 0;
    for entry in std::fs::read_dir(fixtures().join("dev")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e == "jsonl") {
            continue;
        }
        let text = body_of(&std::fs::read(&path).unwrap());
        let html = format!(
            "Message-ID: <h@x>\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{}",
            as_gmail_html(&text)
        );
        let plain = understand(&text, Rules::builtin());
        let read = understand(&body_of(html.as_bytes()), Rules::builtin());
        if (plain.intent, &plain.evidence) != (read.intent, &read.evidence) {
            unlike.push(format!(
                "{}: {} ({}) / as HTML {} ({})",
                path.display(),
                plain.intent.as_str(),
                plain.evidence,
                read.intent.as_str(),
                read.evidence
            ));
        }
        n += 1;
    }
    assert!(n >= 39, "{n}");
    assert!(
        unlike.is_empty(),
        "read otherwise as HTML:\n{}",
        unlike.join("\n")
    );
}

#[test]
fn seed_replies() {
    let cases = [
        (
            "seed000-dave-chinner.txt",
            Intent::NotARegression,
            "This is not a regression.",
        ),
        (
            "seed001-jaegeuk-kim.txt",
            Intent::WillRevert,
            "I'll revert this patch.",
        ),
        (
            "seed003-kent-overstreet.txt",
            Intent::Question,
            "where do I find the test?",
        ),
    ];
    for (file, want, evidence) in cases {
        let raw = std::fs::read(fixtures().join(file)).unwrap();
        let u = understand(&body_of(&raw), Rules::builtin());
        assert_eq!(u.intent, want, "{file}: {u:?}");
        assert!(u.evidence.contains(evidence), "{file}: {}", u.evidence);
        assert!(u.confidence >= 0.7, "{file}: {u:?}");
        // The robot's quoted report never counts as evidence.
        assert!(!u.evidence.contains("FYI, we noticed"), "{file}");
    }
}

#[test]
fn written_table() {
    #[derive(serde::Deserialize)]
    struct Entry {
        text: String,
        intent: String,
        #[serde(default)]
        alt: Vec<String>,
        /// Whether the reply says the regression is real (which reopens a
        /// closed case through a human), where the row says.
        confirms: Option<bool>,
    }
    #[derive(serde::Deserialize)]
    struct Table {
        reply: Vec<Entry>,
    }
    let t: Table =
        toml::from_str(&std::fs::read_to_string(fixtures().join("table.toml")).unwrap()).unwrap();
    assert!(t.reply.len() >= 60);
    let rows: Vec<Row> = t
        .reply
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let u = understand(&e.text, Rules::builtin());
            let name = format!("#{i} {:?}", e.text.chars().take(50).collect::<String>());
            if let Some(c) = e.confirms {
                assert_eq!(u.confirms, c, "{name}: {u:?}");
            }
            (name, e.intent.clone(), e.alt.clone(), u.intent, u.evidence)
        })
        .collect();
    check(&rows);
}

#[test]
fn decisions_carry_their_evidence_and_confidence() {
    let u = understand(
        "On Tue, Jun 05, 2018, kernel test robot wrote:\n> FYI, we noticed a regression\n\nThis is not a regression. The 4ms bin shrank.\n\nCheers,\nDave.\n",
        Rules::builtin(),
    );
    assert_eq!(u.intent, Intent::NotARegression);
    assert_eq!(u.evidence, "This is not a regression.");
    assert!(u.confidence > 0.8);
    // Hedged and conditional decisions are not decisions.
    for text in [
        "I'm not sure we should revert this.",
        "We could revert if nobody fixes it.",
        "Maybe we should revert?",
        "If this is not a regression, fine.",
    ] {
        let u = understand(text, Rules::builtin());
        assert!(
            !u.intent.is_decisive() || u.confidence < 0.6,
            "{text}: {u:?}"
        );
    }
}

/// The labelling guide written out as examples (`bot/rules/guide.toml`):
/// the phrase rules never read a decision into an example of a reply that
/// decides nothing (decision words in a question, a condition, someone
/// else's claim, a debug patch; investigations, questions, thanks), and
/// read most of the guide's decisions as the decisions they are.
#[test]
fn the_guides_examples() {
    let (mut decisions, mut read_right, mut wrong) = (0, 0, Vec::new());
    let min_confidence = perfbot::app::eval::default_policy().min_confidence;
    for e in perfbot::app::eval::guide_examples() {
        let u = understand(&e.text, Rules::builtin());
        let decided = u.intent.is_decisive() && u.confidence >= min_confidence;
        if e.label.is_decisive() {
            decisions += 1;
            read_right += usize::from(decided && u.intent == e.label);
        } else if decided {
            wrong.push(format!("{:?} ({}): {u:?}", e.text, e.label.as_str()));
        }
    }
    assert!(
        wrong.is_empty(),
        "decisions read into:\n{}",
        wrong.join("\n")
    );
    // 38 of 125 before the rules said the guide's grounds (BENCHMARKS.md, a
    // nineteenth session), 96 after; 118 with the second batch (a
    // twentieth session). In sample: the rules were written from these.
    assert_eq!(decisions, 125);
    assert!(read_right >= 112, "{read_right} of {decisions}");
}
