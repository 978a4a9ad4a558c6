//! What the learned model sees of a reply: the words and word pairs of the
//! replier's own prose, what the phrase rules found, and the facts a reader
//! uses besides the words — a patch in the reply, questions, hedges, the
//! sender's role, whether the report was a regression or an improvement, and
//! what the quoted text the reply answers proposed. Pure and bounded: the
//! same input gives the same features, in sorted order.

use std::collections::BTreeMap;

use super::classify::{
    chat_shorthand, normalise, read_sentences, shorthand, RuleHits, Understanding,
    TYPOGRAPHIC_APOSTROPHES,
};
use super::intent::Intent;
use super::quote::is_quote;
use super::speech;

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
    /// The reply's Subject names a patch (`[PATCH …]`): a fix or revert posted.
    pub patch_subject: bool,
    /// A patch is attached to the reply (a file, not its text).
    pub patch_attached: bool,
}

impl Default for Context {
    fn default() -> Self {
        Context {
            speaker: Speaker::Other,
            improvement: false,
            patch_subject: false,
            patch_attached: false,
        }
    }
}

/// Features of a reply, by name (sorted, so that a model's weights and a
/// reading are reproducible).
pub type Features = BTreeMap<String, f64>;

/// Words kept of the prose (lower case, numbers folded).
fn tokens(s: &str) -> Vec<String> {
    // A typographic apostrophe ("don’t") is the plain one: one word, and
    // a negator.
    let s = if s.contains(TYPOGRAPHIC_APOSTROPHES) {
        std::borrow::Cow::Owned(s.replace(TYPOGRAPHIC_APOSTROPHES, "'"))
    } else {
        std::borrow::Cow::Borrowed(s)
    };
    let mut words = Vec::new();
    for w in s.split_whitespace() {
        match chat_shorthand(w) {
            // Chat's "w/o" is one word, which the split below would cut.
            Some((_, spelled)) => words.push(spelled.to_string()),
            None => words.extend(
                w.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
                    .map(|t| t.trim_matches(['\'', '-']))
                    .filter(|t| !t.is_empty())
                    // A contraction typed without its apostrophe ("dont")
                    // is the one with it: the same word, and a negator.
                    .map(|t| match shorthand(t) {
                        Some((_, c)) => c.to_string(),
                        None => t.to_lowercase(),
                    }),
            ),
        }
    }
    words
        .into_iter()
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

/// A body without its quoted (`>`) lines.
fn unquoted(body: &str) -> String {
    body.lines()
        .filter(|l| !is_quote(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Lines of a diff (a patch in the reply itself).
pub fn has_diff(text: &str) -> bool {
    text.lines().any(is_diff_line)
}

/// A diff in the sender's own (unquoted) lines of `body`.
pub fn has_own_diff(body: &str) -> bool {
    body.lines().filter(|l| !is_quote(l)).any(is_diff_line)
}

fn is_diff_line(l: &str) -> bool {
    let l = l.trim_end();
    l.starts_with("diff --git ")
        || l.starts_with("--- a/")
        || l.starts_with("+++ b/")
        || (l.starts_with("@@ -") && l.contains(" @@"))
}

/// A commit named the kernel way, id and subject: `1234abcd5678 ("mm: …")`,
/// the quotation mark typed plain or typeset (`(“mm: …”)`).
fn commit_with_subject(text: &str) -> bool {
    let opened = |i: usize| text[i + 2..].starts_with(['"', '\u{201C}']);
    text.match_indices(" (").any(|(i, _)| {
        if !opened(i) {
            return false;
        }
        let id = text[..i].rsplit(|c: char| !c.is_ascii_hexdigit()).next();
        id.is_some_and(|id| (8..=40).contains(&id.len()))
    })
}

/// Distinct words a reply has before its words weigh less (see
/// `word_weight`).
const WORDS_AT_FULL_WEIGHT: f64 = 100.0;

/// How much each word of a reply weighs: 1 up to `WORDS_AT_FULL_WEIGHT`
/// distinct words, then falling as one over the square root of their
/// number. The usual length normalisation of a bag of words: a long
/// analysis has many words that each say a little, and unscaled they add
/// up to a surer reading than any of them carries (chosen by the same folds
/// as every threshold: BENCHMARKS.md, "A twenty-fourth session").
fn word_weight(words: &[String]) -> f64 {
    let distinct = words
        .iter()
        .filter(|w| *w != "</s>")
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        .max(1);
    (WORDS_AT_FULL_WEIGHT / distinct as f64).sqrt().min(1.0)
}

/// Sentences whose speech acts are read: a verdict comes early.
const MAX_ACT_SENTENCES: usize = 25;

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
    hits: &RuleHits,
    quoted: Option<Intent>,
    ctx: Context,
) -> Features {
    let mut f = Features::new();
    // What the rules read, and no more: the words past it are unread by
    // both (`Understanding::partial`), and a reply's length past it costs
    // nothing here.
    let sents = read_sentences(words);
    let tokens = word_features(&sents, &mut f);
    rule_features(rules, hits, &mut f);
    form_features(&sents, body, ctx, &mut f);
    let bucket = match tokens {
        0..=15 => "len:tiny",
        16..=60 => "len:short",
        61..=200 => "len:medium",
        _ => "len:long",
    };
    f.insert(bucket.into(), 1.0);
    f.insert(format!("speaker:{}", ctx.speaker.as_str()), 1.0);
    if ctx.improvement {
        f.insert("report:improvement".into(), 1.0);
    }
    if let Some(q) = quoted {
        f.insert(format!("quoted:{}", q.as_str()), 1.0);
    }
    f.insert("bias".into(), 1.0);
    f
}

/// The words of the first `MAX_TOKENS` or so, plain and under a negation,
/// and the speech acts of the first sentences. Returns how many tokens
/// (sentence ends included) were read.
fn word_features(sents: &[String], f: &mut Features) -> usize {
    let mut all: Vec<String> = Vec::new();
    for s in sents {
        all.extend(tokens(s));
        all.push("</s>".into());
        if all.len() > MAX_TOKENS {
            break;
        }
    }
    let wv = word_weight(&all);
    // A word under a negation ("I don't see how this could regress") is
    // another feature than the word said plainly: the standard scope, to
    // the end of its sentence.
    let mut negated = false;
    for w in &all {
        if w == "</s>" {
            negated = false;
            continue;
        }
        f.insert(format!("w:{w}"), wv);
        if negated {
            f.insert(format!("n:{w}"), wv);
        }
        negated |= speech::is_negator(w);
    }
    // Who commits to what, sentence by sentence (`speech`): the features
    // that carry over between phrasings.
    let mut acts = Vec::new();
    for s in sents.iter().take(MAX_ACT_SENTENCES) {
        speech::acts(&normalise(s), &mut acts);
    }
    for a in acts {
        f.insert(a, 1.0);
    }
    all.len()
}

/// What the phrase rules read, with their strength, and every rule that
/// fired, however weakly: the model learns which of them real maintainers
/// mean.
fn rule_features(rules: &Understanding, hits: &RuleHits, f: &mut Features) {
    f.insert(
        format!("rule:{}", rules.intent.as_str()),
        rules.confidence.max(0.1),
    );
    for s in &rules.secondary {
        f.insert(
            format!("rule2:{}", s.intent.as_str()),
            s.confidence.max(0.1),
        );
    }
    if rules.basis.is_rule() && rules.intent.is_decisive() {
        f.insert("rule:decisive".into(), rules.confidence);
    }
    for (id, w) in hits {
        f.insert(format!("hit:{id}"), w.max(0.1));
    }
}

/// The reply's form: its questions, a patch or diff of its own, kernel
/// trailers, a commit named with its subject, a `[PATCH` Subject, an
/// attachment.
fn form_features(sents: &[String], body: &str, ctx: Context, f: &mut Features) {
    let questions = sents.iter().filter(|s| speech::is_question(s)).count();
    if questions > 0 {
        f.insert("questions".into(), (questions as f64).min(3.0) / 3.0);
    }
    if sents.last().is_some_and(|s| speech::is_question(s)) {
        f.insert("ends:question".into(), 1.0);
    }
    let own_unquoted = unquoted(body);
    if has_diff(&own_unquoted) {
        f.insert("patch:diff".into(), 1.0);
    }
    for (k, needle) in [
        ("trailer:fixes", "\nFixes: "),
        ("trailer:signed-off", "\nSigned-off-by: "),
        ("trailer:reported-by", "\nReported-by: "),
        ("patch:subject", "Subject: [PATCH"),
        ("trailer:tested-by", "\nTested-by: "),
        ("trailer:closes", "\nCloses: "),
        ("trailer:link", "\nLink: "),
    ] {
        if own_unquoted.contains(needle) {
            f.insert(k.into(), 1.0);
        }
    }
    if commit_with_subject(&own_unquoted) {
        f.insert("commit:with-subject".into(), 1.0);
    }
    if ctx.patch_subject {
        f.insert("subject:patch".into(), 1.0);
    }
    if ctx.patch_attached {
        f.insert("patch:attached".into(), 1.0);
    }
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
    fn long_replies_weigh_each_word_less() {
        let words = |n: usize, repeat: usize| -> Vec<String> {
            (0..n)
                .flat_map(|i| std::iter::repeat_n(format!("w{i}"), repeat))
                .chain(std::iter::once("</s>".to_string()))
                .collect()
        };
        for (distinct, repeat, expect) in [
            (0, 1, 1.0),
            (10, 1, 1.0),
            (100, 1, 1.0),
            // Repeats are one word; the sentence marks are none.
            (100, 3, 1.0),
            (400, 1, 0.5),
            (400, 2, 0.5),
            (1600, 1, 0.25),
        ] {
            let got = word_weight(&words(distinct, repeat));
            assert!((got - expect).abs() < 1e-12, "{distinct}×{repeat}: {got}");
        }
    }

    /// Which texts name a commit by id and subject.
    #[test]
    fn commits_with_subjects() {
        for (text, expect) in [
            (
                "Done, it's commit e386dfc56f83 (\"fget: clarify\") now.",
                true,
            ),
            (
                "Done, it's commit e386dfc56f83 (\u{201C}fget: clarify\u{201D}) now.",
                true,
            ),
            ("Fixes: 1234abcd (\"mm: x\")", true),
            ("the patch (e8f682574e4 \"mm: decrease\") helps", false),
            ("a short id 1234 (\"mm: x\")", false),
            ("a word (\"mm: x\")", false),
            ("commit e386dfc56f83 (the one I sent)", false),
            ("ends with e386dfc56f83 (", false),
        ] {
            assert_eq!(commit_with_subject(text), expect, "{text:?}");
        }
    }

    #[test]
    fn words_pairs_and_facts() {
        let read = || {
            features(
                "This is expected. Diff below?",
                "> quoted diff --git a/x b/x\nThis is expected.\n\ndiff --git a/y b/y\n",
                &plain(Intent::Other),
                &BTreeMap::new(),
                Some(Intent::WillRevert),
                Context {
                    speaker: Speaker::Author,
                    improvement: true,
                    patch_subject: true,
                    patch_attached: false,
                },
            )
        };
        let f = read();
        for k in [
            "w:expected",
            "sa:3:expected",
            "subject:patch",
            "patch:diff",
            "speaker:author",
            "report:improvement",
            "quoted:will-revert",
            "ends:question",
            "bias",
        ] {
            assert!(f.contains_key(k), "{k} missing: {f:?}");
        }
        let of_words = |w: &str| {
            features(
                w,
                "",
                &plain(Intent::Other),
                &BTreeMap::new(),
                None,
                Context::default(),
            )
        };
        // A word under a negation, to its sentence's end, is a feature of
        // its own; the next sentence is plain again.
        let f = of_words("It isn't a regression. Maybe later?");
        for (k, expect) in [("n:regression", true), ("n:it", false), ("n:maybe", false)] {
            assert_eq!(f.contains_key(k), expect, "{k}: {f:?}");
        }
        assert!(f.contains_key("w:maybe"));
        // A typographic apostrophe negates as the plain one does, and so
        // does a contraction typed without one.
        for w in ["It isn\u{2019}t a regression.", "It isnt a regression."] {
            let f = of_words(w);
            assert!(f.contains_key("n:regression"), "{w}: {f:?}");
            assert!(f.contains_key("w:isn't"), "{w}: {f:?}");
        }
        let f = of_words("Ill revert it; ill be back.");
        assert!(f.contains_key("w:i'll") && f.contains_key("w:ill"), "{f:?}");
        // Chat's shorthands are their words; in code they are none.
        let f = of_words("Faster w/o it, b/c u asked. printk(\"%u\") r/w");
        for (k, expect) in [
            ("w:without", true),
            ("w:because", true),
            ("w:you", true),
            ("w:o", false),
            ("w:u", true),
            ("w:r", true),
        ] {
            assert_eq!(f.contains_key(k), expect, "{k}: {f:?}");
        }
        let f = read();
        // Word pairs and first-sentence words overfit (BENCHMARKS.md): none.
        assert!(!f
            .keys()
            .any(|k| k.starts_with("b:") || k.starts_with("first:")));
        // The same input, the same features.
        assert_eq!(f, read());
    }
}
