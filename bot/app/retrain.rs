//! `perfbot labels retrain`: the reader retrained on the shipped labels and
//! on the operators' (`cases set`, `labels set`), measured against the reader
//! of now before anything is written.
//!
//! Both readers are measured by the same thread-grouped folds over the same
//! replies, the shipped ones and the operators': the reader of now never
//! trains on the operators' labels (it is what the shipped weights are), the
//! retrained one does, in the folds that do not hold their case. A retrained
//! reader is refused when it makes more wrong automatic decisions than the
//! reader of now, or sends more quiet replies to a human than the bar
//! allows: retraining on settlements alone once made a reader close
//! explanations as "not a regression" by the model alone (BENCHMARKS.md,
//! "what operators teach"), and nobody reads a digest full of quiet replies.

use std::path::PathBuf;

use serde::Serialize;

use crate::app::eval::{self, Labelled, Read, Summary, Training};
use crate::model::subject::posts_a_patch;
use crate::model::thread::OperatorLabel;
use crate::reply::policy::trust::Policy;
use crate::reply::understand::rules::Rules;
use crate::reply::understand::{Intent, Model, Thresholds};

/// The labels the committed model is trained on, from the repository's top.
pub const SHIPPED: [&str; 3] = [
    "tests/fixtures/threads/labels.jsonl",
    "tests/fixtures/replies/dev/labels.jsonl",
    "tests/fixtures/replies/more/labels.jsonl",
];

/// At most this share of the replies that decide and ask nothing may go to
/// a human (the bar), unless the reader of now already sends more.
pub const QUIET_TO_HUMAN: f64 = 0.15;

/// The operators' labels as labelled replies of their cases' threads, each
/// weighing `weight` in training (0: read, never trained on).
pub fn operator_labelled(labels: &[OperatorLabel], weight: f64) -> Result<Vec<Labelled>, String> {
    labels
        .iter()
        .map(|l| {
            let label = Intent::parse(&l.label).ok_or_else(|| {
                format!(
                    "the label of <{}> (case {}) is {:?}, which is no intent",
                    l.message_id, l.case_id, l.label
                )
            })?;
            let role = l.role.clone().unwrap_or_else(|| "other".into());
            Ok(Labelled {
                thread: format!("case:{}", l.case_id),
                message_id: l.message_id.clone(),
                path: PathBuf::from(format!("case {} <{}>", l.case_id, l.message_id)),
                role: eval::role_of(&role),
                role_label: role,
                label,
                alt: Vec::new(),
                evidence: String::new(),
                report_kind: l.report_kind.clone(),
                patch_subject: posts_a_patch(&l.subject),
                patch_attached: false,
                date: l.date,
                from: None,
                text: l.text.clone(),
                weight,
            })
        })
        .collect()
}

/// Both readers' figures over the same replies.
#[derive(Debug, Clone, Serialize)]
pub struct Measure {
    pub folds: usize,
    pub shipped: usize,
    pub operators: usize,
    pub now: Summary,
    pub retrained: Summary,
    /// Of the operators' labels, how many each reader reads as labelled.
    pub operators_read_now: usize,
    pub operators_read_retrained: usize,
}

/// Read every reply by `k` thread-grouped folds, once as the reader of now
/// (the operators' labels never trained on) and once retrained with them.
/// A shipped reply an operator labelled counts once, as the operator said.
pub fn measure(
    shipped: &[Labelled],
    operators: &[Labelled],
    k: usize,
    policy: &Policy,
    rules: &Rules,
    training: Training,
) -> Measure {
    let shipped = unless_relabelled(shipped, operators);
    let with = |weight: Option<f64>| -> Vec<Read> {
        let all: Vec<Labelled> = shipped
            .iter()
            .cloned()
            .chain(operators.iter().map(|o| Labelled {
                weight: weight.unwrap_or(o.weight),
                ..o.clone()
            }))
            .collect();
        eval::cross_validate(
            &all,
            &[],
            eval::Split::folds(k),
            policy,
            rules,
            training,
            Thresholds::default(),
        )
    };
    let now = with(Some(0.0));
    let retrained = with(None);
    let agreed = |reads: &[Read]| {
        reads[shipped.len()..]
            .iter()
            .filter(|r| r.intent == r.label)
            .count()
    };
    Measure {
        folds: k,
        shipped: shipped.len(),
        operators: operators.len(),
        operators_read_now: agreed(&now),
        operators_read_retrained: agreed(&retrained),
        now: eval::summarise(&now),
        retrained: eval::summarise(&retrained),
    }
}

/// Whether the retrained reader may replace the reader of now: the reasons
/// it may not (none: it may).
pub fn refusals(now: &Summary, retrained: &Summary) -> Vec<String> {
    let mut why = Vec::new();
    if retrained.wrong_decisions > now.wrong_decisions {
        why.push(format!(
            "it makes {} wrong automatic decisions where the reader of now makes {}",
            retrained.wrong_decisions, now.wrong_decisions
        ));
    }
    let share = |s: &Summary| s.quiet_to_human as f64 / s.quiet_replies.max(1) as f64;
    let bar = share(now).max(QUIET_TO_HUMAN);
    if share(retrained) > bar {
        why.push(format!(
            "it sends {} of {} quiet replies to a human (over {:.0}%)",
            retrained.quiet_to_human,
            retrained.quiet_replies,
            100.0 * bar
        ));
    }
    why
}

/// The two readers side by side, for people.
pub fn render(m: &Measure) -> String {
    type Figure = fn(&Summary) -> (usize, usize);
    let figures: [(&str, Figure); 7] = [
        ("lenient", |s| (s.lenient, s.replies)),
        ("decided right", |s| (s.decided_right, s.decision_replies)),
        ("decisions to a human", |s| (s.to_human, s.decision_replies)),
        ("decisions silently missed", |s| {
            (s.silently_missed, s.decision_replies)
        }),
        ("wrong automatic decisions", |s| {
            (s.wrong_decisions, s.replies)
        }),
        ("quiet replies to a human", |s| {
            (s.quiet_to_human, s.quiet_replies)
        }),
        // Whatever the thresholds: the decisions the model alone could
        // send to a human with 15% of quiet replies (eval::Separation).
        ("decisions the model alone separates", |s| {
            s.separation.map_or((0, 0), |p| (p.caught, p.decisions))
        }),
    ];
    let row = |name: &str, (a, n): (usize, usize), (b, r): (usize, usize)| {
        format!(
            "{name:<36} {:>10} {:>10}\n",
            format!("{a}/{n}"),
            format!("{b}/{r}")
        )
    };
    let mut out = format!(
        "{} and {}, {} thread-grouped folds\n{:<36} {:>10} {:>10}\n",
        crate::model::counted(m.shipped, "shipped label", "shipped labels"),
        crate::model::counted(m.operators, "operator's label", "operators' labels"),
        m.folds,
        "",
        "now",
        "retrained"
    );
    for (name, f) in figures {
        out.push_str(&row(name, f(&m.now), f(&m.retrained)));
    }
    out.push_str(&row(
        "operators' labels read as labelled",
        (m.operators_read_now, m.operators),
        (m.operators_read_retrained, m.operators),
    ));
    out
}

/// Train on the shipped labels and the operators' (a shipped reply an
/// operator labelled counts as the operator said).
pub fn train(
    shipped: &[Labelled],
    operators: &[Labelled],
    rules: &Rules,
    training: Training,
) -> Model {
    let mut all = unless_relabelled(shipped, operators);
    all.extend_from_slice(operators);
    eval::train(&all, rules, training)
}

/// The shipped replies but those an operator labelled: theirs stands.
fn unless_relabelled(shipped: &[Labelled], operators: &[Labelled]) -> Vec<Labelled> {
    shipped
        .iter()
        .filter(|s| !operators.iter().any(|o| o.message_id == s.message_id))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(wrong: usize, quiet_to_human: usize) -> Summary {
        Summary {
            wrong_decisions: wrong,
            quiet_to_human,
            quiet_replies: 100,
            ..eval::summarise(&[])
        }
    }

    /// Wrong automatic decisions, and quiet replies (of 100) to a human.
    type Figures = (usize, usize);

    #[test]
    fn refusals_table() {
        // (now: wrong, quiet to a human of 100; retrained: the same; refused because)
        let table: &[(Figures, Figures, &[&str])] = &[
            ((2, 10), (2, 10), &[]),
            ((2, 10), (1, 15), &[]),
            (
                (2, 10),
                (3, 10),
                &["3 wrong automatic decisions where the reader of now makes 2"],
            ),
            (
                (2, 10),
                (2, 16),
                &["16 of 100 quiet replies to a human (over 15%)"],
            ),
            // A reader of now over the bar: the retrained one may not be worse.
            ((0, 20), (0, 20), &[]),
            (
                (0, 20),
                (0, 21),
                &["21 of 100 quiet replies to a human (over 20%)"],
            ),
            ((0, 0), (1, 30), &["1 wrong", "30 of 100"]),
        ];
        for &((nw, nq), (rw, rq), says) in table {
            let why = refusals(&summary(nw, nq), &summary(rw, rq));
            assert_eq!(why.len(), says.len(), "{why:?}");
            for (w, s) in why.iter().zip(says) {
                assert!(w.contains(s), "{w:?} should say {s:?}");
            }
        }
    }
}
