//! What the learned model sees of a reply: the words and word pairs of the
//! replier's own prose, what the phrase rules found, and the facts a reader
//! uses besides the words — a patch in the reply, questions, hedges, the
//! sender's role, whether the report was a regression or an improvement, and
//! what the quoted text the reply answers proposed. Pure and bounded: the
//! same input gives the same features, in sorted order.

use std::collections::BTreeMap;

use super::classify::{sentences, Understanding};
use super::intent::Intent;

/// Who sent a reply, as far as the reading goes (from the policy's roles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    Author,
    Maintainer,
    /// The people who run the robot (or perfbot).
    Operator,
    Other,
}

impl Speaker {
    pub fn as_str(self) -> &'static str {
        match self {
            Speaker::Author => "author",
            Speaker::Maintainer => "maintainer",
            Speaker::Operator => "operator",
            Speaker::Other => "other",
        }
    }
}

/// What a reader knows besides the reply's words.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    pub speaker: Speaker,
    /// The report says the commit made things better.
    pub improvement: bool,
}

impl Default for Context {
    fn default() -> Self {
        Context {
            speaker: Speaker::Other,
            improvement: false,
        }
    }
}

/// Features of a reply, by name (sorted, so that a model's weights and a
/// reading are reproducible).
pub type Features = BTreeMap<String, f64>;

/// Words kept of the prose (lower case, numbers folded).
fn tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .map(|t| t.trim_matches(['\'', '-']).to_lowercase())
        .filter(|t| !t.is_empty())
        .map(|t| {
            if t.chars().all(|c| c.is_ascii_digit()) {
                "<num>".to_string()
            } else if t.len() >= 7 && t.chars().all(|c| c.is_ascii_hexdigit()) {
                "<sha>".to_string()
            } else {
                t
            }
        })
        .collect()
}

/// Lines of a diff (a patch in the reply itself).
fn has_diff(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_end();
        l.starts_with("diff --git ")
            || l.starts_with("--- a/")
            || l.starts_with("+++ b/")
            || (l.starts_with("@@ -") && l.contains(" @@"))
    })
}

/// How many of the first words to look at: a verdict comes early; pages of
/// analysis after it add noise, not signal.
const MAX_TOKENS: usize = 400;

/// The features of a reply: `words` are the replier's own words, `body` the
/// whole text (quotes included), `rules` what the phrase rules read, and
/// `quoted` what the quoted text right above the reply proposed, if anything.
pub fn features(
    words: &str,
    body: &str,
    rules: &Understanding,
    hits: &BTreeMap<String, f64>,
    quoted: Option<Intent>,
    ctx: Context,
) -> Features {
    let mut f = Features::new();
    let mut set = |k: String, v: f64| {
        f.insert(k, v);
    };
    let sents = sentences(words);
    let mut all: Vec<String> = Vec::new();
    for s in &sents {
        all.extend(tokens(s));
        all.push("</s>".into());
        if all.len() > MAX_TOKENS {
            break;
        }
    }
    for w in &all {
        if w != "</s>" {
            set(format!("w:{w}"), 1.0);
        }
    }
    for pair in all.windows(2) {
        if pair[0] != "</s>" && pair[1] != "</s>" {
            set(format!("b:{}_{}", pair[0], pair[1]), 1.0);
        }
    }
    // The first sentence often carries the verdict ("This is expected.").
    if let Some(first) = sents.first() {
        for w in tokens(first) {
            set(format!("first:{w}"), 1.0);
        }
    }
    // What the phrase rules found, with their strength.
    set(
        format!("rule:{}", rules.intent.as_str()),
        rules.confidence.max(0.1),
    );
    for s in &rules.secondary {
        set(
            format!("rule2:{}", s.intent.as_str()),
            s.confidence.max(0.1),
        );
    }
    if rules.basis.is_rule() && rules.intent.is_decisive() {
        set("rule:decisive".into(), rules.confidence);
    }
    // Every rule that fired, however weakly: the model learns which of them
    // real maintainers mean.
    for (id, w) in hits {
        set(format!("hit:{id}"), w.max(0.1));
    }
    let questions = sents.iter().filter(|s| s.trim_end().ends_with('?')).count();
    if questions > 0 {
        set("questions".into(), (questions as f64).min(3.0) / 3.0);
    }
    if sents.last().is_some_and(|s| s.trim_end().ends_with('?')) {
        set("ends:question".into(), 1.0);
    }
    let own_unquoted: String = body
        .lines()
        .filter(|l| !l.trim_start().starts_with('>'))
        .collect::<Vec<_>>()
        .join("\n");
    if has_diff(&own_unquoted) {
        set("patch:diff".into(), 1.0);
    }
    for (k, needle) in [
        ("trailer:fixes", "\nFixes: "),
        ("trailer:signed-off", "\nSigned-off-by: "),
        ("trailer:reported-by", "\nReported-by: "),
        ("patch:subject", "Subject: [PATCH"),
    ] {
        if own_unquoted.contains(needle) {
            set(k.into(), 1.0);
        }
    }
    let n = all.len();
    let bucket = match n {
        0..=15 => "len:tiny",
        16..=60 => "len:short",
        61..=200 => "len:medium",
        _ => "len:long",
    };
    set(bucket.into(), 1.0);
    set(format!("speaker:{}", ctx.speaker.as_str()), 1.0);
    if ctx.improvement {
        set("report:improvement".into(), 1.0);
    }
    if let Some(q) = quoted {
        set(format!("quoted:{}", q.as_str()), 1.0);
    }
    set("bias".into(), 1.0);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(intent: Intent) -> Understanding {
        Understanding {
            intent,
            confidence: 0.3,
            ..Understanding::nothing()
        }
    }

    #[test]
    fn words_pairs_and_facts() {
        let f = features(
            "This is expected. Diff below?",
            "> quoted diff --git a/x b/x\nThis is expected.\n\ndiff --git a/y b/y\n",
            &plain(Intent::Other),
            &BTreeMap::new(),
            Some(Intent::WillRevert),
            Context {
                speaker: Speaker::Author,
                improvement: true,
            },
        );
        for k in [
            "w:expected",
            "b:is_expected",
            "first:this",
            "patch:diff",
            "speaker:author",
            "report:improvement",
            "quoted:will-revert",
            "ends:question",
            "bias",
        ] {
            assert!(f.contains_key(k), "{k} missing: {f:?}");
        }
        // No pair across a sentence end.
        assert!(!f.contains_key("b:expected_diff"));
        // The same input, the same features.
        let g = features(
            "This is expected. Diff below?",
            "> quoted diff --git a/x b/x\nThis is expected.\n\ndiff --git a/y b/y\n",
            &plain(Intent::Other),
            &BTreeMap::new(),
            Some(Intent::WillRevert),
            Context {
                speaker: Speaker::Author,
                improvement: true,
            },
        );
        assert_eq!(f, g);
    }
}
