//! What a reply says: the replier's own words (`quote`), the phrase rules
//! (`rules`, `classify`), the learned model (`features`, `model`), explicit
//! `#perfbot` commands and kernel trailers (`command`), in the classifier's
//! vocabulary (`intent`). Pure: no I/O.
//!
//! `read` combines them. The rules find the sentences that carry a decision;
//! the model, trained on real replies, weighs everything a reader weighs and
//! gives the probability that becomes the reading's confidence. A closing
//! decision (not a regression, won't fix, duplicate) is only ever read in a
//! sentence that is the replier's own claim (`speech`); decision signals
//! that do not settle into a decision come out as a decision of low
//! confidence, which the policy sends to a human — never as
//! "investigating", where it would be lost.

pub(crate) mod classify;
pub(crate) mod command;
pub mod features;
pub(crate) mod intent;
pub mod model;
pub mod quote;
pub mod rules;
pub mod speech;

pub use classify::MAX_WORDS;
pub use classify::{
    understand, understand_noting, understand_words, Basis, Fact, Secondary, Understanding,
};
pub use features::{Context, Speaker};
pub use intent::Intent;
pub use model::Model;

use classify::{closes, normalise, quoted_decision, round};
use rules::Rules;

/// The confidence under which a reading never decides anything (it stays
/// below the policy's `trust.min_confidence` default of 0.6).
pub const UNSETTLED: f64 = 0.5;

/// Where the learned model's probabilities turn into a reading. Chosen by
/// thread-grouped cross-validation over the public labels (BENCHMARKS.md,
/// "Reading real replies"); `eval-replies --decide/--signal/--veto/--close`
/// tries others.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// A fix posted or a revert the model alone reads this surely is decided.
    pub decide: f64,
    /// How much probability of a decision, summed over the decisive intents,
    /// makes a reply worth a human's look when no single decision wins.
    pub signal: f64,
    /// Under this much probability of any decision, the model contradicts a
    /// decision the rules read (a human decides).
    pub veto: f64,
    /// A closure the model reads this surely, in a sentence that is the
    /// replier's own claim, is decided without a phrase rule (above 1: never).
    pub close: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            decide: 0.6,
            signal: 0.4,
            veto: 0.1,
            close: 0.6,
        }
    }
}

/// The sentence of `words` the model finds most `intent`-like.
fn model_evidence(words: &str, model: &Model, intent: Intent, ctx: Context) -> Option<String> {
    let none = Understanding::nothing();
    classify::read_sentences(words)
        .into_iter()
        .take(60)
        .map(|s| {
            let f = features::features(&s, &s, &none, &Default::default(), None, ctx);
            let p = Model::probability(&model.predict(&f), intent);
            (p, s)
        })
        .max_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal))
        .map(|(_, s)| s)
}

/// The likeliest intent that decides nothing, with its probability.
fn best_other(p: &[f64; Intent::ALL.len()]) -> (Intent, f64) {
    Intent::ALL
        .iter()
        .copied()
        .filter(|i| !i.is_decisive())
        .map(|i| (i, Model::probability(p, i)))
        .max_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal))
        .expect("intents that decide nothing")
}

/// Read a reply: `body` its whole text (quotes included), `words` the
/// replier's own words, `ctx` who sent it about which kind of report.
///
/// The rules read first. Where they find a decision, the model may only
/// disagree (its probability of any decision below `Thresholds::veto`):
/// then a human decides. Where they find none, the model may find one: a
/// fix posted or a revert it reads with `Thresholds::decide` probability is
/// a decision, and so is a closure it reads with `Thresholds::close` in a
/// sentence that is the replier's own claim; a decision it finds likelier
/// than not, or decision signals of `Thresholds::signal` in all, go to a
/// human. Otherwise the model's reading of what kind of reply it is (a
/// question, an investigation, thanks) stands, with the rules' words when
/// they agree.
pub fn read(
    body: &str,
    words: &str,
    ctx: Context,
    rules: &Rules,
    model: Option<&Model>,
) -> Understanding {
    read_with(body, words, ctx, rules, model, Thresholds::default())
}

/// `read` with other thresholds (for measuring them).
pub fn read_with(
    body: &str,
    words: &str,
    ctx: Context,
    rules: &Rules,
    model: Option<&Model>,
    t: Thresholds,
) -> Understanding {
    let mut u = read_inner(body, words, ctx, rules, model, t);
    if u.command().is_some() {
        return u;
    }
    let sents = classify::read_sentences(words);
    u.asks_robot = sents.iter().any(|s| speech::asks_robot(&normalise(s)));
    u.partial = words.len() > classify::MAX_WORDS && classify::prose_unread(words);
    // "ok", "+1", "asdf": too few words to be anyone investigating.
    let prose_words = sents
        .iter()
        .flat_map(|s| s.split_whitespace())
        .filter(|w| w.chars().any(char::is_alphabetic))
        .count();
    // A reading no rule backs, of a reply this short, is a guess: "ok" is
    // neither an investigation nor a decision to put before a human.
    let guessed = !u.basis.is_rule() && !matches!(u.basis, Basis::QuestionMark);
    if guessed
        && prose_words < MIN_INVESTIGATING_WORDS
        && (u.intent == Intent::Investigating || u.unsettled)
    {
        u.unsettled = false;
        u.intent = if classify::agrees(words) {
            Intent::ThanksOnly
        } else {
            Intent::Other
        };
        u.basis = Basis::Fallback;
    }
    u
}

/// A patch in a reply, in its text or attached, is a fix offered (the
/// labelling guide's reading, and a maintainer's): awaiting a fix closes
/// nothing, so it may follow anyone's patch. Not when the replier says it
/// is not a fix (the rules' vetoes) or decided something else, and not from
/// the robot's people, whose patches are the ones they tested or debug.
/// A patch with `Fixes:` trailers is read more surely by the rules
/// (`classify::inline_fix`).
fn offered_patch(mut u: Understanding, body: &str, ctx: Context) -> Understanding {
    if ctx.speaker == Speaker::Operator || !u.open_to_a_patch() || u.command().is_some() {
        return u;
    }
    let evidence = if ctx.patch_attached {
        "a patch attached to the reply"
    } else if features::has_own_diff(body) {
        "a patch in the reply"
    } else {
        return u;
    };
    if u.intent == Intent::FixPosted {
        u.confidence = round(u.confidence.max(OFFERED_PATCH));
    } else {
        u.read_as_patch(evidence.into(), OFFERED_PATCH);
    }
    u
}

/// How surely a patch offered in a reply is a fix: enough to await it.
const OFFERED_PATCH: f64 = 0.7;

/// Fewer words than this are an acknowledgement, never an investigation.
const MIN_INVESTIGATING_WORDS: usize = 4;

fn read_inner(
    body: &str,
    words: &str,
    ctx: Context,
    rules: &Rules,
    model: Option<&Model>,
    t: Thresholds,
) -> Understanding {
    let (by_rules, hits) = understand_noting(body, words, rules);
    let by_rules = offered_patch(by_rules, body, ctx);
    // A reply with no words of its own (all quote, or empty) gives the
    // model nothing to read: its probabilities would be the prior, shown
    // as readings ("also not-a-regression") nobody wrote.
    let Some(model) = model.filter(|_| words.chars().any(char::is_alphabetic)) else {
        return by_rules;
    };
    // An explicit command says it all; so does a fact.
    if by_rules.command().is_some() {
        return by_rules;
    }
    let quoted = quoted_decision(body, rules);
    let f = features::features(words, body, &by_rules, &hits, quoted, ctx);
    let w = Weighing {
        p: model.predict(&f),
        model,
        words,
        ctx,
        vetoed: by_rules.vetoed.clone(),
    };
    if by_rules.intent.is_decisive() {
        return rules_decision(by_rules, &w, t);
    }
    if let Some(u) = model_decision(&w, &by_rules, t) {
        return u;
    }
    reply_kind(by_rules, &w)
}

/// The model's probabilities for one reply, and what it needs to point at
/// the sentence behind a reading.
struct Weighing<'a> {
    p: [f64; Intent::ALL.len()],
    model: &'a Model,
    words: &'a str,
    ctx: Context,
    /// Decisions the replier ruled out ("not a fix").
    vetoed: Vec<Intent>,
}

impl Weighing<'_> {
    fn prob(&self, i: Intent) -> f64 {
        Model::probability(&self.p, i)
    }

    /// The decisive intents the replier did not rule out.
    fn decisions(&self) -> impl Iterator<Item = Intent> + '_ {
        Intent::ALL
            .iter()
            .copied()
            .filter(|i| i.is_decisive() && !self.vetoed.contains(i))
    }

    /// How likely the reply decides anything: a decision the replier ruled
    /// out is no signal of one.
    fn signal(&self) -> f64 {
        self.decisions().map(|i| self.prob(i)).sum()
    }

    /// The other intents the model gives at least 0.1, likeliest first.
    fn secondary(&self, top: Intent) -> Vec<Secondary> {
        let mut s: Vec<Secondary> = Intent::ALL
            .iter()
            .copied()
            .filter(|&i| i != top && self.prob(i) >= 0.1)
            .map(|i| Secondary {
                intent: i,
                confidence: round(self.prob(i)),
            })
            .collect();
        s.sort_by(|a, b| {
            b.confidence
                .partial_cmp(&a.confidence)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        s
    }

    /// The model's reading as `intent`, with its sentence (else `fallback`).
    fn reading(&self, intent: Intent, fallback: &str) -> Understanding {
        Understanding {
            intent,
            confidence: round(self.prob(intent)),
            evidence: model_evidence(self.words, self.model, intent, self.ctx)
                .unwrap_or_else(|| fallback.to_string()),
            secondary: self.secondary(intent),
            basis: Basis::Model,
            vetoed: self.vetoed.clone(),
            ..Understanding::nothing()
        }
    }
}

/// A reading a human settles: never confident enough to decide.
fn unsettled(mut u: Understanding) -> Understanding {
    u.confidence = round(u.confidence.min(UNSETTLED));
    u.unsettled = true;
    u
}

/// The rules read a decision. Where the model does not see one at all, a
/// human decides. The robot's own people are read as anyone else: their
/// status reports ("we retested, the drop is gone") are rarely read as
/// decisions, and their retractions ("this report is noise, sorry") are the
/// closures the labelling guide says they are (BENCHMARKS.md, "An
/// eighteenth session").
fn rules_decision(mut u: Understanding, w: &Weighing, t: Thresholds) -> Understanding {
    u.secondary = w.secondary(u.intent);
    if w.signal() < t.veto {
        return unsettled(u);
    }
    u
}

/// The rules read no decision; the model may. Its likeliest decision is the
/// reading when it beats every other intent or decisions weigh
/// `Thresholds::signal` in all; it decides only as surely as `t` says, and a
/// closure only in a sentence that is the replier's own unhedged claim.
fn model_decision(w: &Weighing, by_rules: &Understanding, t: Thresholds) -> Option<Understanding> {
    let (d, pd) = w
        .decisions()
        .map(|i| (i, w.prob(i)))
        .max_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal))
        .expect("decisive intents");
    let (_, pn) = best_other(&w.p);
    if pd < pn && w.signal() < t.signal {
        return None;
    }
    let u = w.reading(d, &by_rules.evidence);
    let decides = if closes(d) {
        let e = normalise(&u.evidence);
        pd >= t.close && speech::own_throughout(&e) && !classify::hedged(&e)
    } else {
        pd >= t.decide
    };
    Some(if decides { u } else { unsettled(u) })
}

/// No decision: a request the rules read stands ("can you re-run…"); a
/// bare question mark is weighed by the model, which has seen how often it
/// is rhetorical. Else the model's reading of the reply's kind, the rules'
/// when they read the same.
fn reply_kind(by_rules: Understanding, w: &Weighing) -> Understanding {
    let (n, _) = best_other(&w.p);
    let asked = by_rules.intent == Intent::Question && by_rules.basis != Basis::QuestionMark;
    if asked || by_rules.intent == n {
        let mut u = by_rules;
        u.confidence = round(u.confidence.max(w.prob(u.intent)));
        u.secondary = w.secondary(u.intent);
        return u;
    }
    w.reading(n, &by_rules.evidence)
}
