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
use crate::model::{OperatorLabel, Sender};
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

/// A human settles a case (`cases set`, the dashboard): the state is set
/// with their reason, and the reply that led there is labelled by it.
pub fn settle(
    store: &Store,
    case: &CaseId,
    state: CaseState,
    cause: crate::model::case::Cause,
    by: &str,
    reason: &str,
) -> Result<(crate::model::case::Case, Option<OperatorLabel>), StoreError> {
    let c = store.set_state(case, state, cause, "set by a human")?;
    let label = learn(store, &c.id, state, by, reason)?;
    Ok((c, label))
}

/// Label the case's last reply by a person with what `state` says it meant.
/// `None`: the state says nothing of a reply, or nobody replied.
pub fn learn(
    store: &Store,
    case: &CaseId,
    state: CaseState,
    by: &str,
    reason: &str,
) -> Result<Option<OperatorLabel>, StoreError> {
    let Some(intent) = intent_of(state) else {
        return Ok(None);
    };
    let c = store.case(case)?;
    let thread = store.thread(case)?;
    let Some(reply) = thread.iter().rev().find(|e| e.sender == Sender::Person) else {
        return Ok(None);
    };
    let reading = reply.understanding.as_ref();
    let label = OperatorLabel {
        message_id: reply.message_id.to_string(),
        case_id: c.id.to_string(),
        label: intent.as_str().to_string(),
        perfbot: reading.map(|u| u.intent.clone()),
        state: state.as_str().to_string(),
        by: by.to_string(),
        reason: reason.to_string(),
        time: Utc::now(),
        from: crate::model::ids::display_mailbox(&reply.from_name, &reply.from),
        subject: reply.subject.clone(),
        date: reply.date,
        text: reply.text.clone(),
        role: reading.map(|u| u.role.clone()),
        report_kind: c.verdict.to_string(),
    };
    store.record_label(&label)?;
    Ok(Some(label))
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
            notes: format!("set {} by {}: {}", l.state, l.by, l.reason),
        };
        lines.push_str(&serde_json::to_string(&line).expect("a line serialises"));
        lines.push('\n');
    }
    crate::fsutil::write_atomic(dir, "labels.jsonl", lines.as_bytes())?;
    Ok(labels.len())
}
