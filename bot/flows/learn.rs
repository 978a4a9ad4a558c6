//! Learning from the operators. When a human settles a case (`cases set`),
//! the reply that led there becomes a labelled example: the intent the new
//! state stands for, beside what perfbot had read in it. `export` writes
//! them in the corpus' layout (`labels.jsonl` and one `.eml` per reply), so
//! that `train-intents` retrains on them with the shipped labels and
//! `eval-replies` measures on them; `agreement` is the digest's line on how
//! often perfbot read replies as its humans did.

use std::path::Path;

use chrono::{DateTime, Utc};

use crate::model::case::{CaseId, CaseState};
use crate::model::{Chosen, MessageId, OperatorLabel, Sender, ThreadEntry};
use crate::reply::understand::Intent;
use crate::store::{Store, StoreError};

/// The intent a state set by hand says the reply had.
pub fn intent_of(state: CaseState) -> Option<Intent> {
    Some(match state {
        CaseState::NotARegression => Intent::NotARegression,
        CaseState::AwaitingRevert | CaseState::Reverted => Intent::WillRevert,
        CaseState::AwaitingFix | CaseState::Fixed => Intent::FixPosted,
        CaseState::WontFix => Intent::WontFix,
        CaseState::Duplicate => Intent::Duplicate,
        CaseState::Investigating => Intent::Investigating,
        _ => return None,
    })
}

/// Why a case could not be settled.
#[derive(Debug, thiserror::Error)]
pub enum SettleError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The named reply is not a person's message in the case's thread.
    #[error("<{message_id}> is not a person's reply in case {case}'s thread (`perfbot cases show {case}` lists them)")]
    NotAReply { case: CaseId, message_id: String },
    /// The named message is in no case's thread.
    #[error("<{0}> is in no case's thread (`perfbot cases show CASE` lists a thread's messages)")]
    Unknown(String),
    /// `queued` is perfbot's own: a report not sent yet. Set by hand, a
    /// case sent long ago would read as never reported and never be chased.
    #[error("queued is perfbot's own state (a report not sent yet), not one a human sets")]
    NotForHumans,
}

/// A human settles a case (`cases set`, the dashboard): the state is set
/// with their reason, and the reply that led there is labelled by what the
/// state says it meant (none if it says nothing of a reply, or nobody
/// replied) — `reply` when they name it, else the one `deciding_reply`
/// finds. A named reply is checked before anything is written.
pub fn settle(
    store: &Store,
    case: &CaseId,
    state: CaseState,
    cause: crate::model::case::Cause,
    by: &str,
    reason: &str,
    reply: Option<&str>,
) -> Result<(crate::model::case::Case, Option<OperatorLabel>), SettleError> {
    if state == CaseState::Queued {
        return Err(SettleError::NotForHumans);
    }
    let thread = store.thread(case)?;
    let named = match reply {
        None => None,
        Some(id) => {
            let parsed = MessageId::parse(id);
            let found = parsed
                .as_ref()
                .and_then(|id| thread.iter().find(|e| is_reply(e) && e.message_id == *id));
            Some(found.ok_or_else(|| SettleError::NotAReply {
                case: case.clone(),
                message_id: parsed.map_or_else(|| id.to_string(), |m| m.to_string()),
            })?)
        }
    };
    let c = store.set_state(case, state, cause, "set by a human")?;
    let Some(intent) = intent_of(state) else {
        return Ok((c, None));
    };
    let chosen = named
        .map(|e| (e, Chosen::Named))
        .or_else(|| deciding_reply(&thread, intent));
    let Some((reply, chosen)) = chosen else {
        return Ok((c, None));
    };
    let label = label_of(&c, reply, intent, state.as_str(), by, reason, chosen);
    store.record_label(&label)?;
    Ok((c, Some(label)))
}

fn is_reply(e: &ThreadEntry) -> bool {
    e.sender == Sender::Person
}

/// How strongly a reading carries `intent`: its confidence where it is the
/// reading, a second reading's where it is one, else 0. The reader's
/// `Understanding` and the thread's `Reading` both ask it.
pub fn carried<'a>(
    intent: Intent,
    read: &str,
    confidence: f64,
    secondary: impl IntoIterator<Item = (&'a str, f64)>,
) -> f64 {
    if read == intent.as_str() {
        return confidence;
    }
    secondary
        .into_iter()
        .find(|(i, _)| *i == intent.as_str())
        .map_or(0.0, |(_, c)| c)
}

/// How strongly a reply's reading carries `intent` (0 when not read).
fn strength(e: &ThreadEntry, intent: Intent) -> f64 {
    e.understanding.as_ref().map_or(0.0, |r| {
        let secondary = r
            .secondary
            .iter()
            .map(|s| (s.intent.as_str(), s.confidence));
        carried(intent, &r.intent, r.confidence, secondary)
    })
}

/// The reply a human's decision for `intent` most likely rests on: the
/// person's reply whose reading carried that intent most strongly (the
/// later one on a tie), else the last reply by a person. The last reply
/// alone is often the thanks or the talk after the decision: replayed over
/// the labelled threads with out-of-fold readings, it is the deciding
/// reply in 17 of 36 threads of more than one reply, the strongest reading
/// in 29 (BENCHMARKS.md).
pub fn deciding_reply(thread: &[ThreadEntry], intent: Intent) -> Option<(&ThreadEntry, Chosen)> {
    let replies: Vec<&ThreadEntry> = thread.iter().filter(|e| is_reply(e)).collect();
    match strongest(replies.iter().map(|e| strength(e, intent))) {
        Some(k) => Some((replies[k], Chosen::Strongest)),
        None => replies.last().map(|e| (*e, Chosen::Last)),
    }
}

/// Which of a thread's replies, in order, carries an intent most strongly,
/// given how strongly each does: the strongest above 0, the later on a
/// tie. Shared with `eval-replies`, which measures the choice.
pub fn strongest(strengths: impl IntoIterator<Item = f64>) -> Option<usize> {
    strengths
        .into_iter()
        .enumerate()
        .filter(|(_, s)| *s > 0.0)
        .fold(None::<(usize, f64)>, |best, (k, s)| match best {
            Some((_, b)) if b > s => best,
            _ => Some((k, s)),
        })
        .map(|(k, _)| k)
}

/// The label of `reply` in case `c`: `intent`, given by `by` for `reason`
/// (with the state they set, if any).
fn label_of(
    c: &crate::model::case::Case,
    reply: &ThreadEntry,
    intent: Intent,
    state: &str,
    by: &str,
    reason: &str,
    chosen: Chosen,
) -> OperatorLabel {
    let reading = reply.understanding.as_ref();
    OperatorLabel {
        message_id: reply.message_id.to_string(),
        case_id: c.id.to_string(),
        label: intent.as_str().to_string(),
        perfbot: reading.map(|u| u.intent.clone()),
        state: state.to_string(),
        by: by.to_string(),
        reason: reason.to_string(),
        time: Utc::now(),
        from: crate::model::ids::display_mailbox(&reply.from_name, &reply.from),
        subject: reply.subject.clone(),
        date: reply.date,
        text: reply.text.clone(),
        role: reading.map(|u| u.role.clone()),
        report_kind: c.verdict.to_string(),
        chosen,
    }
}

/// An operator labels one reply directly (`labels set`), any intent,
/// without moving its case: a question perfbot read as a closure, thanks
/// read as an investigation. Settled again later, the later label stands.
/// `in_case`: the reply must be in that case's thread.
pub fn label_reply(
    store: &Store,
    message_id: &str,
    in_case: Option<&CaseId>,
    intent: Intent,
    by: &str,
    reason: &str,
) -> Result<OperatorLabel, SettleError> {
    let unknown = || SettleError::Unknown(message_id.trim_matches(['<', '>', ' ']).to_string());
    let id = MessageId::parse(message_id).ok_or_else(unknown)?;
    let case = store.message_case(&id)?.ok_or_else(unknown)?;
    if let Some(want) = in_case.filter(|want| **want != case) {
        return Err(SettleError::NotAReply {
            case: want.clone(),
            message_id: id.to_string(),
        });
    }
    let c = store.case(&case)?;
    let thread = store.thread(&case)?;
    let reply = thread
        .iter()
        .find(|e| is_reply(e) && e.message_id == id)
        .ok_or_else(|| SettleError::NotAReply {
            case: case.clone(),
            message_id: id.to_string(),
        })?;
    let label = label_of(&c, reply, intent, "", by, reason, Chosen::Named);
    store.record_label(&label)?;
    Ok(label)
}

/// How often perfbot had read the replies its humans settled since `since`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Agreement {
    pub settled: usize,
    pub agreed: usize,
}

pub fn agreement(labels: &[OperatorLabel], since: DateTime<Utc>) -> Agreement {
    let recent: Vec<&OperatorLabel> = labels.iter().filter(|l| l.time >= since).collect();
    Agreement {
        settled: recent.len(),
        agreed: recent
            .iter()
            .filter(|l| l.perfbot.as_deref() == Some(l.label.as_str()))
            .count(),
    }
}

/// One line of `labels.jsonl`, in the corpus' layout.
#[derive(serde::Serialize)]
struct Line<'a> {
    id: String,
    file: String,
    thread_key: &'a str,
    message_id: &'a str,
    subject: &'a str,
    from_name: &'a str,
    from_role: &'a str,
    report_kind: &'a str,
    label: &'a str,
    alt_labels: [&'a str; 0],
    label_evidence: &'a str,
    notes: String,
}

/// Write every label into `dir` as `labels.jsonl` and one `.eml` each (the
/// reply's own words under its headers). The number written.
pub fn export(store: &Store, dir: &Path) -> Result<usize, std::io::Error> {
    let labels = store.labels().map_err(std::io::Error::other)?;
    std::fs::create_dir_all(dir)?;
    let mut lines = String::new();
    for (n, l) in labels.iter().enumerate() {
        let file = format!("operator-{:04}.eml", n + 1);
        let date = l
            .date
            .map(|d| format!("Date: {}\r\n", d.to_rfc2822()))
            .unwrap_or_default();
        let mail = format!(
            "From: {}\r\nSubject: {}\r\nMessage-ID: <{}>\r\n{date}Content-Type: text/plain; charset=utf-8\r\n\r\n{}\r\n",
            l.from.replace(['\r', '\n'], " "),
            l.subject.replace(['\r', '\n'], " "),
            l.message_id,
            l.text.replace("\r\n", "\n").replace('\n', "\r\n"),
        );
        std::fs::write(dir.join(&file), mail)?;
        let line = Line {
            id: format!("operator-{:04}", n + 1),
            file,
            thread_key: &l.case_id,
            message_id: &l.message_id,
            subject: &l.subject,
            from_name: &l.from,
            from_role: l.role.as_deref().unwrap_or("other"),
            report_kind: &l.report_kind,
            label: &l.label,
            alt_labels: [],
            label_evidence: "",
            notes: if l.state.is_empty() {
                format!("labelled by {}: {}", l.by, l.reason)
            } else {
                format!(
                    "set {} by {}: {} (reply {})",
                    l.state,
                    l.by,
                    l.reason,
                    l.chosen.as_str()
                )
            },
        };
        lines.push_str(&serde_json::to_string(&line).expect("a line serialises"));
        lines.push('\n');
    }
    crate::fsutil::write_atomic(dir, "labels.jsonl", lines.as_bytes())?;
    Ok(labels.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::thread::SecondaryReading;

    /// A reply read as `intent` at `confidence`, also carrying `secondary`.
    fn read(id: &str, intent: &str, confidence: f64, secondary: &[(&str, f64)]) -> ThreadEntry {
        let mut e = ThreadEntry::sample(id, "dev@example.org", "words");
        e.understanding = Some(crate::model::Reading {
            intent: intent.into(),
            confidence,
            evidence: String::new(),
            secondary: secondary
                .iter()
                .map(|(i, c)| SecondaryReading {
                    intent: (*i).into(),
                    confidence: *c,
                })
                .collect(),
            role: "author".into(),
            effect: String::new(),
            dkim: None,
            notes: Vec::new(),
        });
        e
    }

    fn robot(id: &str) -> ThreadEntry {
        let mut e = read(id, "not-a-regression", 0.99, &[]);
        e.sender = Sender::Bot;
        e
    }

    fn unread(id: &str) -> ThreadEntry {
        ThreadEntry::sample(id, "dev@example.org", "words")
    }

    #[test]
    fn the_reply_a_decision_rests_on() {
        use Chosen::*;
        use Intent::*;
        type Case<'a> = (Vec<ThreadEntry>, Intent, Option<(&'a str, Chosen)>);
        let table: Vec<Case> = vec![
            // The decision, then thanks: the decision, not the last reply.
            (
                vec![
                    read("a@x", "not-a-regression", 0.8, &[]),
                    read("b@x", "thanks-only", 0.9, &[]),
                ],
                NotARegression,
                Some(("a@x", Strongest)),
            ),
            // Read as something else, but carrying the intent second.
            (
                vec![
                    read("a@x", "investigating", 0.6, &[("fix-posted", 0.3)]),
                    read("b@x", "other", 0.7, &[]),
                ],
                FixPosted,
                Some(("a@x", Strongest)),
            ),
            // The strongest wins over an earlier, fainter one…
            (
                vec![
                    read("a@x", "will-revert", 0.9, &[]),
                    read("b@x", "other", 0.5, &[("will-revert", 0.2)]),
                ],
                WillRevert,
                Some(("a@x", Strongest)),
            ),
            // …and on a tie the later reply (the decision that stood).
            (
                vec![
                    read("a@x", "wont-fix", 0.7, &[]),
                    read("b@x", "wont-fix", 0.7, &[]),
                ],
                WontFix,
                Some(("b@x", Strongest)),
            ),
            // No reply carries it: the last person's reply.
            (
                vec![
                    read("a@x", "question", 0.7, &[]),
                    read("b@x", "thanks-only", 0.9, &[]),
                ],
                Duplicate,
                Some(("b@x", Last)),
            ),
            // Robots' mail is never the reply; unread replies carry nothing.
            (
                vec![unread("a@x"), robot("r@x")],
                NotARegression,
                Some(("a@x", Last)),
            ),
            (vec![robot("r@x")], NotARegression, None),
            (vec![], Investigating, None),
        ];
        for (thread, intent, want) in table {
            let got = deciding_reply(&thread, intent).map(|(e, c)| (e.message_id.as_str(), c));
            assert_eq!(
                got,
                want,
                "{intent:?} over {:?}",
                thread
                    .iter()
                    .map(|e| e.message_id.as_str())
                    .collect::<Vec<_>>()
            );
        }
    }
}
