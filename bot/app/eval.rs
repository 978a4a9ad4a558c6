//! `perfbot eval-replies`: how well perfbot reads real replies. Each labelled
//! reply is read as ingestion reads it (its own words, the report's kind, the
//! sender's role), its effect on a freshly reported case is decided by the
//! policy, and the result is compared with the label: per-label precision and
//! recall, the confusion, and for every reply that carries a decision whether
//! it was decided right, sent to a human, silently missed or decided wrong.
//!
//! With `--folds K` the learned model is trained K times, each time without
//! one K-th of the threads, and each reply is read by the model that never saw
//! its thread: the figure that says how perfbot reads replies it has not seen.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::model::case::CaseState;
use crate::reply::policy::effect::{decide, decide_in, Effect, MovedBy};
use crate::reply::policy::trust::{Policy, Role};
use crate::reply::understand::classify::quoted_decision;
use crate::reply::understand::features::features;
use crate::reply::understand::model::{self, Sample, Train};
use crate::reply::understand::quote::own_words;
use crate::reply::understand::rules::Rules;
use crate::reply::understand::{
    read_with, understand_noting, Context, Intent, Model, Thresholds, Understanding,
};

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("{file}: {why}")]
    File { file: String, why: String },
    #[error("{file}: line {line}: {why}")]
    Line {
        file: String,
        line: usize,
        why: String,
    },
}

/// One labelled reply and where its message is.
#[derive(Debug, Clone)]
pub struct Labelled {
    /// The thread it belongs to (folds never split one).
    pub thread: String,
    pub message_id: String,
    pub path: PathBuf,
    /// The role the labeller gave the sender.
    pub role: Role,
    pub role_label: String,
    pub label: Intent,
    pub alt: Vec<Intent>,
    pub evidence: String,
    /// `regression` or `improvement`.
    pub report_kind: String,
    /// The reply's Subject posts a patch.
    pub patch_subject: bool,
    /// A patch is attached to it.
    pub patch_attached: bool,
    /// When it was sent and by whom (the order of a thread, and whose
    /// earlier decision a reply may overturn).
    pub date: Option<chrono::DateTime<chrono::Utc>>,
    pub from: Option<crate::model::Address>,
    /// Its body as text (as ingestion reads it).
    pub text: String,
    /// How much it weighs in training (the line's `weight`, else 1); 0:
    /// read and judged, never trained on (a labels file cannot say 0).
    pub weight: f64,
}

#[derive(serde::Deserialize)]
struct Line {
    #[serde(default)]
    thread: Option<String>,
    #[serde(default)]
    thread_key: Option<String>,
    file: String,
    #[serde(default)]
    message_id: Option<String>,
    from_role: String,
    label: String,
    #[serde(default)]
    alt_labels: Vec<String>,
    #[serde(default)]
    label_evidence: String,
    #[serde(default)]
    report_kind: String,
    /// How much it weighs in training beside a reply of weight 1.
    #[serde(default = "one")]
    weight: f64,
}

fn one() -> f64 {
    1.0
}

/// Whether `w` is a weight a label may carry beside a shipped one: in (0, 100].
pub fn weighs(w: f64) -> bool {
    w.is_finite() && w > 0.0 && w <= 100.0
}

/// The labeller's roles as perfbot's: the robot's own people are its
/// operators when perfbot follows the robot's reports.
pub fn role_of(label: &str) -> Role {
    match label {
        "author" => Role::Author,
        "committer" => Role::Committer,
        "maintainer" => Role::Maintainer,
        "robot-operator" | "operator" => Role::Operator,
        _ => Role::Other,
    }
}

/// Read labels files (`threads/labels.jsonl`: `thread`/`file`;
/// `replies-dev/labels.jsonl`: `file`, `thread_key`). A reply labelled in two
/// files counts once (the first).
pub fn load(files: &[PathBuf]) -> Result<Vec<Labelled>, EvalError> {
    let mut out: Vec<Labelled> = Vec::new();
    let mut seen = BTreeSet::new();
    for f in files {
        let shown = f.display().to_string();
        let text = crate::input::read_input(f).map_err(|e| EvalError::File {
            file: shown.clone(),
            why: e.message,
        })?;
        let dir = f.parent().unwrap_or(Path::new("."));
        for (n, l) in text.lines().enumerate() {
            if l.trim().is_empty() {
                continue;
            }
            let err = |why: String| EvalError::Line {
                file: shown.clone(),
                line: n + 1,
                why,
            };
            let v: Line = serde_json::from_str(l).map_err(|e| err(e.to_string()))?;
            let checked = Checked::of(v, dir).map_err(err)?;
            if seen.insert(checked.message_id.clone()) {
                out.push(checked.read()?);
            }
        }
    }
    Ok(out)
}

/// A labels line whose labels are intents, whose weight is one a label may
/// carry and whose mail is there.
struct Checked {
    line: Line,
    label: Intent,
    alt: Vec<Intent>,
    thread: String,
    path: PathBuf,
    message_id: String,
}

impl Checked {
    /// Check the line `v` of a labels file in `dir`.
    fn of(v: Line, dir: &Path) -> Result<Checked, String> {
        let intent = |s: &str| Intent::parse(s).ok_or_else(|| format!("unknown label {s:?}"));
        let label = intent(&v.label)?;
        if !weighs(v.weight) {
            return Err(format!("weight {} is not in (0, 100]", v.weight));
        }
        let alt = v
            .alt_labels
            .iter()
            .map(|a| intent(a))
            .collect::<Result<Vec<_>, _>>()?;
        let (thread, path) = match &v.thread {
            Some(t) => (t.clone(), dir.join(t).join(&v.file)),
            None => (
                v.thread_key.clone().unwrap_or_else(|| v.file.clone()),
                dir.join(&v.file),
            ),
        };
        if !path.exists() {
            return Err(format!("{} does not exist", path.display()));
        }
        // Replies known without a Message-ID are keyed by their file.
        let message_id = v.message_id.clone().unwrap_or_else(|| v.file.clone());
        Ok(Checked {
            line: v,
            label,
            alt,
            thread,
            path,
            message_id,
        })
    }

    /// The labelled reply: the mail is read once, its body and what the
    /// reading needs of its headers and attachments.
    fn read(self) -> Result<Labelled, EvalError> {
        let raw = crate::input::read_bytes(&self.path).map_err(|e| EvalError::File {
            file: self.path.display().to_string(),
            why: e.message,
        })?;
        let mail = crate::flows::ingest::parse::parse(&raw, &Default::default()).ok();
        let patch_subject = mail
            .as_ref()
            .is_some_and(|m| crate::model::subject::posts_a_patch(&m.head.subject));
        let patch_attached = mail.as_ref().is_some_and(|m| !m.patches.is_empty());
        let (text, date, from) = match mail {
            Some(m) => (m.text, m.head.date, m.head.from),
            None => (crate::flows::ingest::parse::body_text(&raw), None, None),
        };
        let v = self.line;
        Ok(Labelled {
            thread: normalise_thread(&self.thread),
            message_id: self.message_id,
            path: self.path,
            role: role_of(&v.from_role),
            role_label: v.from_role,
            label: self.label,
            alt: self.alt,
            evidence: v.label_evidence,
            report_kind: if v.report_kind.is_empty() {
                "regression".into()
            } else {
                v.report_kind
            },
            patch_subject,
            patch_attached,
            date,
            from,
            text,
            weight: v.weight,
        })
    }
}

/// More labelled replies to train on beside `items` (`--train-with`): those
/// of `files` that are not `items` already.
pub fn load_besides(files: &[PathBuf], items: &[Labelled]) -> Result<Vec<Labelled>, EvalError> {
    let mut extra = load(files)?;
    extra.retain(|x| !items.iter().any(|i| i.message_id == x.message_id));
    Ok(extra)
}

/// Threads are keyed by folder name in one file and by subject in the other;
/// the commit's short id joins them (`…_32678f1513` and `[xfs] 32678f1513: …`).
fn normalise_thread(t: &str) -> String {
    let sha = t
        .split(|c: char| !c.is_ascii_hexdigit())
        .find(|w| w.len() == 10);
    sha.map_or_else(|| t.to_string(), |s| s.to_ascii_lowercase())
}

/// What became of one reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A decision reply, decided as labelled (or as a defensible second reading).
    DecidedRight,
    /// Sent to a human (needs-human).
    ToHuman,
    /// A decision reply read as no decision, and nobody told.
    SilentlyMissed,
    /// A decision made that the reply did not make.
    WrongDecision,
    /// A reply without a decision, read without one and kept from humans.
    Quiet,
}

/// One reply, read.
#[derive(Debug, Clone, Serialize)]
pub struct Read {
    pub thread: String,
    pub message_id: String,
    pub role: String,
    pub label: Intent,
    pub alt: Vec<Intent>,
    pub intent: Intent,
    pub confidence: f64,
    pub evidence: String,
    /// What the reading rests on (a rule's id, `model`, `inline-patch`…).
    pub basis: String,
    /// The reading is unsettled (a human decides).
    pub unsettled: bool,
    pub state: Option<CaseState>,
    pub outcome: Outcome,
    pub note: String,
    /// When it was sent (a thread's order).
    pub date: Option<chrono::DateTime<chrono::Utc>>,
    /// The model's probability that the reply decides something (its
    /// decisive intents summed), where a model read it: how well the model
    /// alone tells decisions from quiet replies, whatever the thresholds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_score: Option<f64>,
    /// The reading itself (for replaying its thread); shown as the other
    /// intents it carries (≥ 0.1), strongest first.
    #[serde(rename = "secondary", serialize_with = "secondary_of")]
    pub understanding: Understanding,
}

fn secondary_of<S: serde::Serializer>(u: &Understanding, s: S) -> Result<S::Ok, S::Error> {
    u.secondary.serialize(s)
}

/// The state a decisive intent takes a reported case to.
pub fn target(i: Intent) -> Option<CaseState> {
    Some(match i {
        Intent::NotARegression => CaseState::NotARegression,
        Intent::WillRevert => CaseState::AwaitingRevert,
        Intent::FixPosted => CaseState::AwaitingFix,
        Intent::WontFix => CaseState::WontFix,
        Intent::Duplicate => CaseState::Duplicate,
        _ => return None,
    })
}

/// How a replayed thread ends against its labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThreadOutcome {
    /// Decided: ends in the labels' last decision (a fix or revert awaited
    /// agrees with either). Undecided: stays reported or investigating.
    Right,
    ToHuman,
    /// Decided, but left reported or investigating: the decision missed.
    LeftOpen,
    /// Decided: ends in another decision. Undecided: ends decided.
    Wrong,
}

impl ThreadOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            ThreadOutcome::Right => "right",
            ThreadOutcome::ToHuman => "with a human",
            ThreadOutcome::LeftOpen => "left open",
            ThreadOutcome::Wrong => "wrong",
        }
    }
}

/// One labelled thread, its replies read in order.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadRead {
    pub thread: String,
    pub replies: usize,
    /// The last decision its labels give (any role).
    pub decision: Option<Intent>,
    /// Someone in it asked something (a reply labelled question).
    pub asked: bool,
    pub state: CaseState,
    pub outcome: ThreadOutcome,
    /// Were an operator to settle the thread's decision by hand, whether
    /// the reply labelled would carry that label itself: the last reply,
    /// and the one `learn::deciding_reply` picks (`None`: nothing to settle,
    /// or no readings to pick by).
    pub settled: Option<Settled>,
}

/// Whether an operator's settlement would label the deciding reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Settled {
    pub last: bool,
    pub strongest: bool,
}

/// Replay each thread of `items` (with `reads` in the same order) as a case
/// would take it: from reported, each reply's reading in date order through
/// the policy, a sender's own earlier decision theirs to overturn (and a
/// stranger's a trusted sender's); then, the thread over, the review of a
/// case left open (`flows::review`, with `review`; `None`: none). Roles are
/// the labels' (no MAINTAINERS file or To/Cc to place people by).
pub fn replay_threads(
    items: &[Labelled],
    reads: &[Read],
    policy: &Policy,
    review: Option<&crate::config::ReviewSection>,
) -> Vec<ThreadRead> {
    let mut by: BTreeMap<&str, Vec<(&Labelled, &Read)>> = BTreeMap::new();
    for (l, r) in items.iter().zip(reads) {
        by.entry(&l.thread).or_default().push((l, r));
    }
    by.into_iter()
        .map(|(thread, mut replies)| {
            replies.sort_by(|a, b| (a.0.date, &a.0.path).cmp(&(b.0.date, &b.0.path)));
            let mut state = CaseState::Reported;
            let mut by_whom: Option<(Option<&crate::model::Address>, Role)> = None;
            for (l, r) in &replies {
                let moved_by = by_whom.map_or(MovedBy::Another, |(from, role)| {
                    MovedBy::of(from.is_some() && from == l.from.as_ref(), role, policy)
                });
                let e = decide_in(state, moved_by, &r.understanding, l.role, policy);
                if let Some(s) = e.state.filter(|s| *s != state) {
                    state = s;
                    by_whom = Some((l.from.as_ref(), l.role));
                }
            }
            let open = matches!(state, CaseState::Reported | CaseState::Investigating);
            let min = review.filter(|r| r.enabled).map(|r| r.min_signal);
            if let Some(min) = min.filter(|_| open) {
                let unsettled = |(l, r): &&(&Labelled, &Read)| {
                    let u = &r.understanding;
                    let secondary: Vec<(&str, f64)> = u
                        .secondary
                        .iter()
                        .map(|s| (s.intent.as_str(), s.confidence))
                        .collect();
                    crate::flows::review::unsettled_decision(
                        l.role,
                        policy,
                        u.intent.as_str(),
                        u.confidence,
                        &secondary,
                        min,
                    )
                    .is_some()
                };
                if replies.iter().any(|x| unsettled(&x)) {
                    state = CaseState::NeedsHuman;
                }
            }
            let labelled: Vec<&Labelled> = replies.iter().map(|(l, _)| *l).collect();
            let mut judged = judge_thread(thread, &labelled, Some(state));
            judged.settled = judged.decision.map(|d| settled(&replies, d));
            judged
        })
        .collect()
}

/// An operator settles a thread's decision `d` by hand: is the reply the
/// label lands on (the last, or the strongest reading of `d`) labelled `d`?
fn settled(replies: &[(&Labelled, &Read)], d: Intent) -> Settled {
    let strength = |u: &Understanding| {
        let secondary = u
            .secondary
            .iter()
            .map(|s| (s.intent.as_str(), s.confidence));
        crate::flows::learn::carried(d, u.intent.as_str(), u.confidence, secondary)
    };
    let last = replies.len().saturating_sub(1);
    let pick =
        crate::flows::learn::strongest(replies.iter().map(|(_, r)| strength(&r.understanding)))
            .unwrap_or(last);
    let is = |k: usize| replies.get(k).is_some_and(|(l, _)| l.label == d);
    Settled {
        last: is(last),
        strongest: is(pick),
    }
}

/// Judge where a thread ended (`None`: it has no case) against its labelled
/// replies, in date order: its last decision (any role), or what a careful
/// reader could defend (a decisive second reading of that decision or of
/// any later reply; of any reply, where nobody decided). A thread without a
/// case is counted wrong: perfbot lost it.
pub fn judge_thread(thread: &str, replies: &[&Labelled], state: Option<CaseState>) -> ThreadRead {
    let last = replies.iter().rposition(|l| l.label.is_decisive());
    let decision = last.map(|k| replies[k].label);
    let defensible: Vec<Intent> = replies[last.unwrap_or(0)..]
        .iter()
        .flat_map(|l| l.alt.iter().copied())
        .filter(|i| i.is_decisive())
        .collect();
    let asked = replies.iter().any(|l| l.label == Intent::Question);
    let (state, outcome) = match state {
        Some(s) => (s, thread_outcome(decision, &defensible, s)),
        None => (CaseState::Reported, ThreadOutcome::Wrong),
    };
    ThreadRead {
        thread: thread.to_string(),
        replies: replies.len(),
        decision,
        asked,
        state,
        outcome,
        settled: None,
    }
}

fn thread_outcome(
    decision: Option<Intent>,
    defensible: &[Intent],
    state: CaseState,
) -> ThreadOutcome {
    let awaited = |s: CaseState| matches!(s, CaseState::AwaitingFix | CaseState::AwaitingRevert);
    let ends_in = |i: &Intent| match i {
        Intent::FixPosted | Intent::WillRevert => awaited(state),
        d => target(*d) == Some(state),
    };
    let open = matches!(state, CaseState::Reported | CaseState::Investigating);
    let right = match decision {
        Some(d) => ends_in(&d),
        None => open,
    } || defensible.iter().any(ends_in);
    if right {
        ThreadOutcome::Right
    } else if state == CaseState::NeedsHuman {
        ThreadOutcome::ToHuman
    } else if open {
        ThreadOutcome::LeftOpen
    } else {
        ThreadOutcome::Wrong
    }
}

/// The thread figures as the issue counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ThreadFigures {
    pub threads: usize,
    /// Threads whose labels hold a decision.
    pub decided: usize,
    /// Of those, ending in the decided state, or with a human.
    pub right: usize,
    pub human: usize,
    /// Threads left reported or investigating although decided.
    pub open: usize,
    /// Threads in a state their labels contradict (of all).
    pub wrong: usize,
    /// Threads where nobody decided or asked anything, and of those, how
    /// many went to a human.
    pub quiet: usize,
    pub quiet_human: usize,
}

pub fn thread_figures(t: &[ThreadRead]) -> ThreadFigures {
    let count = |f: &dyn Fn(&ThreadRead) -> bool| t.iter().filter(|x| f(x)).count();
    ThreadFigures {
        threads: t.len(),
        decided: count(&|x| x.decision.is_some()),
        right: count(&|x| x.decision.is_some() && x.outcome == ThreadOutcome::Right),
        human: count(&|x| x.decision.is_some() && x.outcome == ThreadOutcome::ToHuman),
        open: count(&|x| x.outcome == ThreadOutcome::LeftOpen),
        wrong: count(&|x| x.outcome == ThreadOutcome::Wrong),
        quiet: count(&|x| x.decision.is_none() && !x.asked),
        quiet_human: count(&|x| {
            x.decision.is_none() && !x.asked && x.outcome == ThreadOutcome::ToHuman
        }),
    }
}

/// The thread figures as the issue counts them: of decided threads, right
/// and right-or-with-a-human; wrong, of all; of the threads where nobody
/// decided or asked anything, how many went to a human.
pub fn render_threads(t: &[ThreadRead]) -> String {
    let ThreadFigures {
        decided,
        right,
        human,
        open,
        wrong,
        quiet,
        quiet_human,
        ..
    } = thread_figures(t);
    let mut out = format!(
        "threads {}: of {decided} decided, right {}, right or with a human {}, left open {}; \
         in a wrong state {} of all; of {quiet} where nobody decided or asked, to a human {}\n",
        t.len(),
        pct(right, decided),
        pct(right + human, decided),
        pct(open, decided),
        pct(wrong, t.len()),
        pct(quiet_human, quiet),
    );
    let settled: Vec<(usize, Settled)> = t
        .iter()
        .filter_map(|x| x.settled.map(|s| (x.replies, s)))
        .collect();
    if !settled.is_empty() {
        let of = |many: bool, f: &dyn Fn(&Settled) -> bool| {
            let v: Vec<&Settled> = settled
                .iter()
                .filter(|(n, _)| !many || *n > 1)
                .map(|(_, s)| s)
                .collect();
            pct(v.iter().filter(|s| f(s)).count(), v.len())
        };
        out.push_str(&format!(
            "settled by hand, the reply labelled carries the decision: the last reply {}, \
             the strongest reading {} (threads of more than one reply: {}, {})\n",
            of(false, &|s| s.last),
            of(false, &|s| s.strongest),
            of(true, &|s| s.last),
            of(true, &|s| s.strongest),
        ));
    }
    out
}

/// The policy a default config has (authors, committers, maintainers and
/// operators decide by prose; decisions under 0.6 go to a human).
pub fn default_policy() -> Policy {
    crate::config::Config::load(None)
        .map(|c| c.reply.trust)
        .unwrap_or_default()
}

/// Judge one reading's effect against its label.
pub fn judge(l: &Labelled, e: &Effect) -> Outcome {
    let decisive = l.label.is_decisive();
    let state = e.state;
    let human = state == Some(CaseState::NeedsHuman);
    let decided = state.filter(|s| *s != CaseState::NeedsHuman && *s != CaseState::Investigating);
    match (decisive, decided, human) {
        (_, Some(s), _) => {
            let right = std::iter::once(l.label)
                .chain(l.alt.iter().copied())
                .filter(|i| i.is_decisive())
                .any(|i| target(i) == Some(s));
            // Decided as labelled, or as a defensible second reading.
            if right {
                Outcome::DecidedRight
            } else {
                Outcome::WrongDecision
            }
        }
        (_, None, true) => Outcome::ToHuman,
        (true, None, false) => Outcome::SilentlyMissed,
        (false, None, false) => Outcome::Quiet,
    }
}

/// Read every labelled reply with `read` (body text, context → understanding)
/// and judge the effect on a reported case.
pub fn run(
    items: &[Labelled],
    policy: &Policy,
    read: &dyn Fn(&Labelled, &str) -> Understanding,
) -> Vec<Read> {
    items
        .iter()
        .map(|l| read_one(l, &read(l, &l.text), policy))
        .collect()
}

/// Precision and recall of one label.
#[derive(Debug, Clone, Serialize)]
pub struct PerLabel {
    pub label: Intent,
    pub support: usize,
    pub predicted: usize,
    pub correct: usize,
    pub precision: f64,
    pub recall: f64,
}

/// The figures of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub replies: usize,
    /// Read as labelled.
    pub exact: usize,
    /// Read as labelled or as one of the alternative labels.
    pub lenient: usize,
    pub per_label: Vec<PerLabel>,
    /// label → predicted → count.
    pub confusion: BTreeMap<String, BTreeMap<String, usize>>,
    /// Of the replies labelled with a decision.
    pub decision_replies: usize,
    pub decided_right: usize,
    pub to_human: usize,
    pub silently_missed: usize,
    pub wrong_decisions_on_decisions: usize,
    /// Automatic decisions the replies did not make (of all replies).
    pub wrong_decisions: usize,
    /// Replies that decide nothing and ask nothing (investigating, thanks,
    /// other) sent to a human.
    pub quiet_replies: usize,
    pub quiet_to_human: usize,
    /// How well the model alone tells decisions from quiet replies (where a
    /// model read every one of them).
    pub separation: Option<Separation>,
}

/// The share of quiet replies the issue lets go to a human.
pub const QUIET_SHARE: f64 = 0.15;

/// How well a score tells decision replies from quiet ones, whatever the
/// thresholds: the chance that a decision outscores a quiet reply (AUC, a
/// tie counting half), and how many decisions score above the score that
/// only `QUIET_SHARE` of the quiet replies pass — the most decisions any
/// threshold on this score could send to a human while sending no more
/// quiet replies than the issue allows. It bounds what tuning can reach:
/// missing at most 15% of decisions needs 85% of them caught.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Separation {
    pub auc: f64,
    pub caught: usize,
    pub decisions: usize,
}

/// `Separation` of the scores of decision replies and of quiet ones; none
/// without both.
pub fn separation(decisions: &[f64], quiet: &[f64]) -> Option<Separation> {
    if decisions.is_empty() || quiet.is_empty() {
        return None;
    }
    let wins: f64 = decisions
        .iter()
        .flat_map(|d| quiet.iter().map(move |q| (d, q)))
        .map(|(d, q)| match d.partial_cmp(q) {
            Some(std::cmp::Ordering::Greater) => 1.0,
            Some(std::cmp::Ordering::Equal) => 0.5,
            _ => 0.0,
        })
        .sum();
    let mut q = quiet.to_vec();
    q.sort_by(|a, b| b.total_cmp(a));
    let allowed = (QUIET_SHARE * q.len() as f64).floor() as usize;
    let bar = q[allowed.min(q.len() - 1)];
    Some(Separation {
        auc: wins / (decisions.len() * quiet.len()) as f64,
        caught: decisions.iter().filter(|&&d| d > bar).count(),
        decisions: decisions.len(),
    })
}

/// The figures of one split of a repeated cross-validation: the replies'
/// counts the issue's targets name, and the threads'.
#[derive(Debug, Clone, Serialize)]
pub struct SplitFigures {
    pub seed: u64,
    pub replies: usize,
    pub lenient: usize,
    pub decision_replies: usize,
    pub decided_right: usize,
    pub to_human: usize,
    pub silently_missed: usize,
    pub wrong_decisions: usize,
    pub quiet_replies: usize,
    pub quiet_to_human: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub separation: Option<Separation>,
    pub threads: ThreadFigures,
}

impl SplitFigures {
    pub fn of(seed: u64, s: &Summary, t: &[ThreadRead]) -> SplitFigures {
        SplitFigures {
            seed,
            replies: s.replies,
            lenient: s.lenient,
            decision_replies: s.decision_replies,
            decided_right: s.decided_right,
            to_human: s.to_human,
            silently_missed: s.silently_missed,
            wrong_decisions: s.wrong_decisions,
            quiet_replies: s.quiet_replies,
            quiet_to_human: s.quiet_to_human,
            separation: s.separation,
            threads: thread_figures(t),
        }
    }

    /// The counts shown, by name, in order.
    fn counts(&self) -> [(&'static str, usize); 11] {
        let t = &self.threads;
        [
            ("lenient", self.lenient),
            ("decided right", self.decided_right),
            ("to a human", self.to_human),
            ("missed", self.silently_missed),
            ("wrong", self.wrong_decisions),
            ("quiet to a human", self.quiet_to_human),
            ("threads right", t.right),
            ("right or with a human", t.right + t.human),
            ("left open", t.open),
            ("threads wrong", t.wrong),
            ("quiet threads to a human", t.quiet_human),
        ]
    }
}

/// Each split's figures, then their mean and range: how far a figure moves
/// with the split alone, which a change must beat to mean anything.
pub fn render_splits(splits: &[SplitFigures]) -> String {
    let Some(first) = splits.first() else {
        return String::new();
    };
    let mut out = format!(
        "{} splits of {} replies ({} decisions, {} quiet) and {} threads ({} decided, {} quiet)\n",
        splits.len(),
        first.replies,
        first.decision_replies,
        first.quiet_replies,
        first.threads.threads,
        first.threads.decided,
        first.threads.quiet,
    );
    let names = first.counts().map(|(n, _)| n);
    let rows: Vec<[usize; 11]> = splits.iter().map(|s| s.counts().map(|(_, c)| c)).collect();
    out.push_str(&format!("{:>6}  {}\n", "seed", names.join(" | ")));
    for (s, row) in splits.iter().zip(&rows) {
        let v: Vec<String> = row.iter().map(usize::to_string).collect();
        out.push_str(&format!("{:>6}  {}\n", s.seed, v.join(" | ")));
    }
    let ranges: Vec<String> = (0..names.len())
        .map(|i| {
            let v: Vec<f64> = rows.iter().map(|r| r[i] as f64).collect();
            format!("{}: {}", names[i], mean_range(&v, 1, 0))
        })
        .collect();
    out.push_str(&format!("mean (range): {}\n", ranges.join(", ")));
    let seps: Vec<Separation> = splits.iter().filter_map(|s| s.separation).collect();
    if seps.len() == splits.len() {
        let auc: Vec<f64> = seps.iter().map(|s| s.auc).collect();
        let caught: Vec<f64> = seps.iter().map(|s| s.caught as f64).collect();
        out.push_str(&format!(
            "the model alone, decisions against quiet replies: AUC {}; decisions above the score {:.0}% of quiet replies pass {}\n",
            mean_range(&auc, 3, 3),
            100.0 * QUIET_SHARE,
            mean_range(&caught, 1, 1),
        ));
    }
    out
}

/// "mean (lowest–highest)" of `v` (not empty), the mean and the range with
/// their own numbers of decimals.
fn mean_range(v: &[f64], mean_digits: usize, range_digits: usize) -> String {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{mean:.mean_digits$} ({lo:.range_digits$}–{hi:.range_digits$})")
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

pub fn summarise(reads: &[Read]) -> Summary {
    let mut confusion: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for r in reads {
        *confusion
            .entry(r.label.to_string())
            .or_default()
            .entry(r.intent.to_string())
            .or_default() += 1;
    }
    let per_label = Intent::ALL
        .iter()
        .map(|&i| {
            let support = reads.iter().filter(|r| r.label == i).count();
            let predicted = reads.iter().filter(|r| r.intent == i).count();
            let correct = reads
                .iter()
                .filter(|r| r.label == i && r.intent == i)
                .count();
            PerLabel {
                label: i,
                support,
                predicted,
                correct,
                precision: ratio(correct, predicted),
                recall: ratio(correct, support),
            }
        })
        .collect();
    let decision: Vec<&Read> = reads.iter().filter(|r| r.label.is_decisive()).collect();
    let count = |rs: &[&Read], o: Outcome| rs.iter().filter(|r| r.outcome == o).count();
    let quiet: Vec<&Read> = reads
        .iter()
        .filter(|r| {
            matches!(
                r.label,
                Intent::Investigating | Intent::ThanksOnly | Intent::Other
            )
        })
        .collect();
    Summary {
        replies: reads.len(),
        exact: reads.iter().filter(|r| r.intent == r.label).count(),
        lenient: reads
            .iter()
            .filter(|r| r.intent == r.label || r.alt.contains(&r.intent))
            .count(),
        per_label,
        confusion,
        decision_replies: decision.len(),
        decided_right: count(&decision, Outcome::DecidedRight),
        to_human: count(&decision, Outcome::ToHuman),
        silently_missed: count(&decision, Outcome::SilentlyMissed),
        wrong_decisions_on_decisions: count(&decision, Outcome::WrongDecision),
        wrong_decisions: reads
            .iter()
            .filter(|r| r.outcome == Outcome::WrongDecision)
            .count(),
        quiet_replies: quiet.len(),
        quiet_to_human: count(&quiet, Outcome::ToHuman),
        separation: scores(&decision)
            .zip(scores(&quiet))
            .and_then(|(d, q)| separation(&d, &q)),
    }
}

/// Every read's decision score, or none if one lacks it.
fn scores(reads: &[&Read]) -> Option<Vec<f64>> {
    reads.iter().map(|r| r.decision_score).collect()
}

fn pct(a: usize, b: usize) -> String {
    format!("{a}/{b} ({:.0}%)", 100.0 * ratio(a, b))
}

/// The summary as text for people.
pub fn render(s: &Summary, reads: &[Read], show: bool) -> String {
    let mut o = String::new();
    o.push_str(&format!(
        "replies {}: lenient {}, exact {}\n",
        s.replies,
        pct(s.lenient, s.replies),
        pct(s.exact, s.replies)
    ));
    o.push_str(&format!(
        "decision replies {}: decided right {}, to a human {}, silently missed {}, decided wrong {}\n",
        s.decision_replies,
        pct(s.decided_right, s.decision_replies),
        pct(s.to_human, s.decision_replies),
        pct(s.silently_missed, s.decision_replies),
        pct(s.wrong_decisions_on_decisions, s.decision_replies),
    ));
    o.push_str(&format!(
        "wrong automatic decisions {} of all replies; replies that decide and ask nothing sent to a human {}\n",
        pct(s.wrong_decisions, s.replies),
        pct(s.quiet_to_human, s.quiet_replies),
    ));
    if let Some(sep) = s.separation {
        o.push_str(&format!(
            "the model alone, decisions against quiet replies: AUC {:.3}; above the score {:.0}% of quiet replies pass, {} decisions\n",
            sep.auc,
            100.0 * QUIET_SHARE,
            pct(sep.caught, sep.decisions),
        ));
    }
    o.push_str("\nlabel              support  precision  recall\n");
    for p in &s.per_label {
        if p.support == 0 && p.predicted == 0 {
            continue;
        }
        o.push_str(&format!(
            "{:<18} {:>7}  {:>9.2}  {:>6.2}\n",
            p.label.as_str(),
            p.support,
            p.precision,
            p.recall
        ));
    }
    o.push_str("\nconfusion (rows: label, columns: read as)\n");
    let cols: Vec<Intent> = Intent::ALL.to_vec();
    o.push_str(&format!("{:<18}", ""));
    for c in &cols {
        o.push_str(&format!(" {:>5}", short(*c)));
    }
    o.push('\n');
    for (label, row) in &s.confusion {
        o.push_str(&format!("{label:<18}"));
        for c in &cols {
            o.push_str(&format!(
                " {:>5}",
                row.get(c.as_str()).copied().unwrap_or(0)
            ));
        }
        o.push('\n');
    }
    o.push_str("\ndecision replies:\n");
    for r in reads.iter().filter(|r| r.label.is_decisive() || show) {
        o.push_str(&format!(
            "  {:<16} {:<18} read {:<16} {:.2} {:<10} {}\n      \"{}\"\n",
            format!("{:?}", r.outcome),
            r.label.as_str(),
            r.intent.as_str(),
            r.confidence,
            r.role,
            r.message_id,
            r.evidence.chars().take(110).collect::<String>()
        ));
    }
    o
}

fn short(i: Intent) -> &'static str {
    match i {
        Intent::NotARegression => "notr",
        Intent::WillRevert => "revt",
        Intent::FixPosted => "fix",
        Intent::Investigating => "inv",
        Intent::Question => "quest",
        Intent::WontFix => "wontf",
        Intent::Duplicate => "dup",
        Intent::ThanksOnly => "thank",
        Intent::Other => "other",
    }
}

/// How labelled replies are split for cross-validation: `k` thread-grouped
/// folds, dealt by a hash of each thread's key salted with `seed` (0: no
/// salt, the split every figure in BENCHMARKS.md was taken with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    pub k: usize,
    pub seed: u64,
}

impl Split {
    /// `k` folds, the usual split.
    pub fn folds(k: usize) -> Split {
        Split { k, seed: 0 }
    }
}

/// Thread-grouped folds: every thread in exactly one fold, assigned by a hash
/// of its key (stable across runs and machines; another `seed`, another
/// split).
pub fn folds(items: &[Labelled], split: Split) -> Vec<usize> {
    use sha2::{Digest, Sha256};
    let k = split.k;
    let threads: BTreeSet<&str> = items.iter().map(|l| l.thread.as_str()).collect();
    let key = |t: &str| {
        let mut h = Sha256::new();
        if split.seed != 0 {
            h.update(split.seed.to_le_bytes());
        }
        h.update(t.as_bytes());
        h.finalize().to_vec()
    };
    // Round-robin over threads in hash order: folds of near-equal size.
    let mut order: Vec<(Vec<u8>, &str)> = threads.into_iter().map(|t| (key(t), t)).collect();
    order.sort();
    let fold_of: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, (_, t))| (*t, i % k.max(1)))
        .collect();
    items.iter().map(|l| fold_of[l.thread.as_str()]).collect()
}

/// What a reader knows of a labelled reply besides its words.
pub fn context_of(l: &Labelled) -> Context {
    Context {
        speaker: crate::flows::reply::speaker(l.role),
        improvement: l.report_kind == "improvement",
        patch_subject: l.patch_subject,
        patch_attached: l.patch_attached,
    }
}

/// The training sample of a labelled reply.
pub fn sample(l: &Labelled, body: &str, rules: &Rules) -> Sample {
    let words = own_words(body);
    let (by_rules, hits) = understand_noting(body, &words, rules);
    let quoted = quoted_decision(body, rules);
    Sample {
        features: features(&words, body, &by_rules, &hits, quoted, context_of(l)),
        target: model::target(l.label, &l.alt),
        weight: l.weight,
    }
}

/// How a model is trained: the optimiser's settings, and how much each of
/// the labelling guide's examples weighs beside a real reply (0: none).
#[derive(Debug, Clone, Copy)]
pub struct Training {
    pub opts: Train,
    pub guide: f64,
}

/// The guide's examples weigh nothing by default: at 0.5 they lifted the
/// thread-grouped folds but not the held-out slice, where they sent more
/// quiet replies to a human and closed a case the model alone read
/// (BENCHMARKS.md, "The labelling guide as examples"). `--guide-weight`
/// trains with them.
pub const GUIDE_WEIGHT: f64 = 0.0;

impl Default for Training {
    fn default() -> Self {
        Training {
            opts: Train::default(),
            guide: GUIDE_WEIGHT,
        }
    }
}

/// The labelling guide as training examples (`bot/rules/guide.toml`).
const GUIDE: &str = include_str!("../rules/guide.toml");

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct GuideFile {
    example: Vec<GuideExample>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct GuideExample {
    label: String,
    role: String,
    /// The guide's words the example stands for (for its readers, and the
    /// test that the decision rules' edge cases are there).
    #[serde(default, rename = "says")]
    _says: String,
    text: String,
}

/// The labelling guide's examples, as labelled replies of their own threads
/// (`guide:N`): a sentence each, sent by the role it names, about a
/// regression report.
pub fn guide_examples() -> Vec<Labelled> {
    let file: GuideFile = toml::from_str(GUIDE).expect("bot/rules/guide.toml parses (tested)");
    file.example
        .into_iter()
        .enumerate()
        .map(|(n, e)| Labelled {
            thread: format!("guide:{n}"),
            message_id: format!("guide:{n}"),
            path: PathBuf::from("bot/rules/guide.toml"),
            role: role_of(&e.role),
            role_label: e.role,
            label: Intent::parse(&e.label).expect("guide labels are intents (tested)"),
            alt: Vec::new(),
            evidence: e.text.clone(),
            report_kind: "regression".into(),
            patch_subject: false,
            patch_attached: false,
            date: None,
            from: None,
            text: e.text,
            weight: 1.0,
        })
        .collect()
}

/// The guide's examples as training samples of weight `weight` (none at 0).
fn guide_samples(rules: &Rules, weight: f64) -> Vec<Sample> {
    if weight <= 0.0 {
        return Vec::new();
    }
    guide_examples()
        .iter()
        .map(|l| Sample {
            weight,
            ..sample(l, &l.text, rules)
        })
        .collect()
}

/// Train on every labelled reply, and on the guide's examples.
pub fn train(items: &[Labelled], rules: &Rules, t: Training) -> Model {
    let mut samples: Vec<Sample> = items
        .iter()
        .filter(|l| l.weight > 0.0)
        .map(|l| sample(l, &l.text, rules))
        .collect();
    samples.extend(guide_samples(rules, t.guide));
    Model::train(&samples, t.opts)
}

/// Thread-grouped cross-validation: `evaluate` split in `k` folds by thread;
/// each fold is read by a model trained on the other folds (and on `extra`,
/// less any of its replies from the held-out threads, and on the guide's
/// examples).
pub fn cross_validate(
    evaluate: &[Labelled],
    extra: &[Labelled],
    split: Split,
    policy: &Policy,
    rules: &Rules,
    training: Training,
    t: Thresholds,
) -> Vec<Read> {
    let all: Vec<Labelled> = evaluate.iter().chain(extra).cloned().collect();
    let k = split.k;
    let fold = folds(&all, split);
    let samples: Vec<Sample> = all.iter().map(|l| sample(l, &l.text, rules)).collect();
    // The guide's examples are in every fold's training, never evaluated.
    let guide = guide_samples(rules, training.guide);
    let mut reads: Vec<Option<Read>> = vec![None; evaluate.len()];
    for f in 0..k {
        let train: Vec<Sample> = samples
            .iter()
            .zip(&fold)
            .filter(|(s, g)| **g != f && s.weight > 0.0)
            .map(|(s, _)| s.clone())
            .chain(guide.iter().cloned())
            .collect();
        let model = Model::train(&train, training.opts);
        for (i, l) in evaluate.iter().enumerate() {
            if fold[i] != f {
                continue;
            }
            let words = own_words(&l.text);
            let u = read_with(&l.text, &words, context_of(l), rules, Some(&model), t);
            if std::env::var_os("PERFBOT_EVAL_DEBUG").is_some() {
                let p = model.predict(&samples[i].features);
                let mut v: Vec<(f64, Intent)> = Intent::ALL
                    .iter()
                    .map(|&x| (Model::probability(&p, x), x))
                    .collect();
                v.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
                eprintln!(
                    "{:<17} -> {:<17} {:.2} | {}",
                    l.label.as_str(),
                    u.intent.as_str(),
                    u.confidence,
                    v.iter()
                        .take(3)
                        .map(|(p, i)| format!("{}={p:.2}", i.as_str()))
                        .collect::<Vec<_>>()
                        .join(" ")
                );
            }
            reads[i] = Some(Read {
                decision_score: Some(model.decision_probability(&samples[i].features)),
                ..read_one(l, &u, policy)
            });
        }
    }
    reads
        .into_iter()
        .map(|r| r.expect("every reply in one fold"))
        .collect()
}

/// Give each read the decision score of `model` (the non-fold path: one
/// model reads every reply).
pub fn score_with(reads: &mut [Read], items: &[Labelled], rules: &Rules, model: &Model) {
    for (r, l) in reads.iter_mut().zip(items) {
        r.decision_score = Some(model.decision_probability(&sample(l, &l.text, rules).features));
    }
}

/// Judge one reading.
pub fn read_one(l: &Labelled, u: &Understanding, policy: &Policy) -> Read {
    let e = decide(CaseState::Reported, u, l.role, policy);
    Read {
        thread: l.thread.clone(),
        message_id: l.message_id.clone(),
        role: l.role_label.clone(),
        label: l.label,
        alt: l.alt.clone(),
        intent: u.intent,
        confidence: u.confidence,
        evidence: u.evidence.clone(),
        basis: u.basis.name(),
        unsettled: u.unsettled,
        state: e.state,
        outcome: judge(l, &e),
        note: e.note.clone(),
        date: l.date,
        decision_score: None,
        understanding: u.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::understand::Basis;

    /// The separation of decision scores from quiet ones: AUC with ties at
    /// half, and the decisions above the score that 15% of the quiet pass.
    /// A labels file's bad line is an error naming the file, the line and
    /// what is wrong with it; a reply labelled twice counts once.
    #[test]
    fn labels_files_are_checked_line_by_line() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.eml"), "Subject: x\n\nI'll revert it.\n").unwrap();
        let ok = r#"{"file": "a.eml", "from_role": "author", "label": "will-revert"}"#;
        let table = [
            (ok.to_string(), Ok(1)),
            (format!("{ok}\n\n{ok}"), Ok(1)),
            ("{".into(), Err("line 1: EOF while parsing")),
            (
                ok.replace("will-revert", "revert-maybe"),
                Err("line 1: unknown label \"revert-maybe\""),
            ),
            (
                ok.replace(r#""label""#, r#""alt_labels": ["nope"], "label""#),
                Err("line 1: unknown label \"nope\""),
            ),
            (
                format!(
                    "{ok}\n{}",
                    ok.replace(r#""label""#, r#""weight": 0, "label""#)
                ),
                Err("line 2: weight 0 is not in (0, 100]"),
            ),
            (
                ok.replace("a.eml", "gone.eml"),
                Err("line 1: {dir}/gone.eml does not exist"),
            ),
            (
                ok.replace(r#""from_role": "author", "#, ""),
                Err("line 1: missing field `from_role`"),
            ),
        ];
        let labels = tmp.path().join("labels.jsonl");
        for (text, want) in table {
            std::fs::write(&labels, &text).unwrap();
            let got = load(std::slice::from_ref(&labels));
            match (got, want) {
                (Ok(items), Ok(n)) => {
                    assert_eq!(items.len(), n, "{text}");
                    assert_eq!(items[0].label, Intent::WillRevert);
                    assert_eq!(items[0].role, Role::Author);
                }
                (Err(e), Err(why)) => {
                    let why = why.replace("{dir}", &tmp.path().display().to_string());
                    let e = e.to_string();
                    assert!(
                        e.starts_with(&format!("{}: {why}", labels.display())),
                        "{text}: {e}"
                    );
                }
                (got, want) => panic!("{text}: {got:?}, want {want:?}"),
            }
        }
        let missing = tmp.path().join("none.jsonl");
        let e = load(std::slice::from_ref(&missing))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&format!("{}: ", missing.display())), "{e}");
    }

    #[test]
    fn separation_of_decisions_from_quiet_replies() {
        // Twenty quiet replies at 0.05, 0.10, … 1.00: 15% is three of them,
        // so the bar is the fourth highest, 0.85.
        let quiet: Vec<f64> = (1..=20).map(|i| f64::from(i) / 20.0).collect();
        // (decision scores, quiet scores, (AUC, decisions caught)).
        type Row<'a> = (&'a [f64], &'a [f64], Option<(f64, usize)>);
        let table: [Row; 6] = [
            (&[0.9, 0.8], &[0.1, 0.2], Some((1.0, 2))),
            (&[0.1, 0.2], &[0.8, 0.9], Some((0.0, 0))),
            (&[0.5, 0.5], &[0.5, 0.5], Some((0.5, 0))),
            (
                &[0.86, 0.85, 0.99],
                &quiet,
                Some(((17.0 + 16.5 + 19.0) / 60.0, 2)),
            ),
            (&[], &[0.5], None),
            (&[0.5], &[], None),
        ];
        for (decisions, quiet, want) in table {
            let got = separation(decisions, quiet).map(|s| (s.auc, s.caught));
            match (got, want) {
                (Some((auc, caught)), Some((w_auc, w_caught))) => {
                    assert!(
                        (auc - w_auc).abs() < 1e-9,
                        "{decisions:?}: auc {auc} != {w_auc}"
                    );
                    assert_eq!(caught, w_caught, "{decisions:?}");
                }
                (got, want) => assert_eq!(got.is_none(), want.is_none(), "{decisions:?}"),
            }
        }
    }

    /// The guide's examples read: every label is an intent and every role
    /// one of the guide's, each label of the guide has examples, and the
    /// decision rules' edge cases (decision words deciding nothing) are there.
    #[test]
    fn the_guide_examples_cover_the_guide() {
        let file: GuideFile = toml::from_str(GUIDE).expect("guide.toml parses");
        for e in &file.example {
            assert!(Intent::parse(&e.label).is_some(), "label {:?}", e.label);
            assert!(
                ["author", "maintainer", "robot-operator", "other-developer"]
                    .contains(&e.role.as_str()),
                "role {:?}",
                e.role
            );
            assert!(!e.text.trim().is_empty());
        }
        let examples = guide_examples();
        for label in Intent::ALL {
            let n = examples.iter().filter(|l| l.label == label).count();
            assert!(n >= 4, "{label}: {n} examples");
        }
        let edges = file
            .example
            .iter()
            .filter(|e| e._says.starts_with("a decision word is not a decision"))
            .count();
        assert!(edges >= 10, "{edges}");
        // Weighed as asked; none at 0.
        let rules = Rules::builtin();
        assert!(guide_samples(rules, 0.0).is_empty());
        let s = guide_samples(rules, 0.5);
        assert_eq!(s.len(), examples.len());
        assert!(s.iter().all(|x| x.weight == 0.5));
    }

    /// A reply of `thread` from `from` (`role`), labelled `label`, read as
    /// `read` at `conf`, sent at minute `at`.
    fn reply(
        thread: &str,
        from: &str,
        role: Role,
        label: Intent,
        read: Intent,
        at: i64,
    ) -> (Labelled, Understanding) {
        let l = Labelled {
            thread: thread.into(),
            message_id: format!("{thread}-{at}@x"),
            path: PathBuf::from(format!("{thread}/{at:02}.eml")),
            role,
            role_label: String::new(),
            label,
            alt: Vec::new(),
            evidence: String::new(),
            report_kind: "regression".into(),
            patch_subject: false,
            patch_attached: false,
            date: chrono::DateTime::from_timestamp(1_700_000_000 + at * 60, 0),
            from: crate::model::Address::parse(from),
            text: String::new(),
            weight: 1.0,
        };
        let u = Understanding {
            intent: read,
            confidence: 0.9,
            evidence: "words".into(),
            basis: Basis::Rule { id: "r".into() },
            ..Understanding::nothing()
        };
        (l, u)
    }

    #[test]
    fn folds_hold_whole_threads_and_a_seed_deals_them_anew() {
        let items: Vec<Labelled> = (0..40)
            .map(|i| {
                reply(
                    &format!("t{}", i % 20),
                    "a@x.org",
                    Role::Author,
                    Intent::Other,
                    Intent::Other,
                    i,
                )
                .0
            })
            .collect();
        let deal = |seed| folds(&items, Split { k: 5, seed });
        for seed in [0, 1, 7] {
            let f = deal(seed);
            // A thread is in one fold, and the folds are near-equal.
            for (a, b) in items.iter().zip(&f) {
                for (c, d) in items.iter().zip(&f) {
                    assert!(a.thread != c.thread || b == d, "{} split", a.thread);
                }
            }
            let mut sizes = [0; 5];
            f.iter().for_each(|&x| sizes[x] += 1);
            assert!(sizes.iter().all(|&n| n == 8), "{sizes:?}");
        }
        // The usual split is stable; another seed is another split.
        assert_eq!(deal(0), folds(&items, Split::folds(5)));
        assert_ne!(deal(0), deal(1));
        assert_eq!(deal(1), deal(1));
    }

    /// Threads replayed in date order: `(replies, outcome, final state)`.
    #[test]
    fn threads_replayed_in_order() {
        use Intent as I;
        use Role as R;
        let policy = default_policy();
        type Thread = Vec<(Labelled, Understanding)>;
        let table: Vec<(Thread, ThreadOutcome, CaseState)> = vec![
            // The author awaits his fix, then finds the commit innocent.
            (
                vec![
                    reply(
                        "a",
                        "dave@x.org",
                        R::Author,
                        I::NotARegression,
                        I::NotARegression,
                        2,
                    ),
                    reply("a", "dave@x.org", R::Author, I::FixPosted, I::FixPosted, 1),
                ],
                ThreadOutcome::Right,
                CaseState::NotARegression,
            ),
            // Someone else contradicts the author: a human decides.
            (
                vec![
                    reply(
                        "b",
                        "dave@x.org",
                        R::Author,
                        I::WillRevert,
                        I::WillRevert,
                        1,
                    ),
                    reply(
                        "b",
                        "ted@x.org",
                        R::Maintainer,
                        I::NotARegression,
                        I::NotARegression,
                        2,
                    ),
                ],
                ThreadOutcome::ToHuman,
                CaseState::NeedsHuman,
            ),
            // A decision read as an investigation: left open.
            (
                vec![reply(
                    "c",
                    "dave@x.org",
                    R::Author,
                    I::WontFix,
                    I::Investigating,
                    1,
                )],
                ThreadOutcome::LeftOpen,
                CaseState::Investigating,
            ),
            // Nobody decided, and it stays so.
            (
                vec![reply(
                    "d",
                    "dave@x.org",
                    R::Author,
                    I::Question,
                    I::Question,
                    1,
                )],
                ThreadOutcome::Right,
                CaseState::Reported,
            ),
            // Nobody decided, but a fix is read: a wrong state.
            (
                vec![reply(
                    "e",
                    "dave@x.org",
                    R::Author,
                    I::Investigating,
                    I::FixPosted,
                    1,
                )],
                ThreadOutcome::Wrong,
                CaseState::AwaitingFix,
            ),
        ];
        for (replies, outcome, state) in table {
            let items: Vec<Labelled> = replies.iter().map(|(l, _)| l.clone()).collect();
            let reads: Vec<Read> = replies
                .iter()
                .map(|(l, u)| read_one(l, u, &policy))
                .collect();
            let t = replay_threads(&items, &reads, &policy, None);
            assert_eq!(t.len(), 1);
            assert_eq!(
                (t[0].outcome, t[0].state),
                (outcome, state),
                "{}",
                t[0].thread
            );
        }
    }

    /// The thread over, a case left open on an author's reading that also
    /// carries a decision goes to a human with the review, and stays open
    /// without it; a stranger's such reading leaves it open.
    #[test]
    fn a_thread_left_open_on_an_unsettled_decision_is_reviewed() {
        use crate::reply::understand::Secondary;
        let policy = default_policy();
        let review = crate::config::ReviewSection::default();
        for (role, with_review, want) in [
            (Role::Author, true, ThreadOutcome::ToHuman),
            (Role::Author, false, ThreadOutcome::LeftOpen),
            (Role::Other, true, ThreadOutcome::LeftOpen),
        ] {
            let (l, mut u) = reply(
                "q",
                "dave@x.org",
                role,
                Intent::WontFix,
                Intent::Investigating,
                1,
            );
            u.secondary = vec![Secondary {
                intent: Intent::WontFix,
                confidence: 0.3,
            }];
            let reads = vec![read_one(&l, &u, &policy)];
            let t = replay_threads(&[l], &reads, &policy, with_review.then_some(&review));
            assert_eq!(t[0].outcome, want, "{role} {with_review}");
        }
    }
}
