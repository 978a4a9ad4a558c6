//! How cases are shown: stable JSON for scripts and text for people.

use serde_json::{json, Value};

use crate::model::case::{Case, CaseId, Cause, Event};
use crate::model::OutboxEntry;
use crate::model::ThreadEntry;

/// One line of a case's thread timeline: perfbot's mail and everyone else's.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TimelineItem {
    pub time: chrono::DateTime<chrono::Utc>,
    pub message_id: String,
    pub from: String,
    /// `perfbot` for our mail, else `person`, `bot` or `own`.
    pub sender: String,
    pub subject: String,
    /// The sender's own words (replies) or the mail's kind and state (ours).
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub understanding: Option<crate::model::Reading>,
    /// A size limit cut the message: what was not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limited: Option<String>,
    /// Patches attached to it, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<String>,
}

/// A case's thread as stored: its outbox mail and its recorded replies.
pub fn timeline_of(
    store: &crate::store::Store,
    case: &CaseId,
) -> Result<Vec<TimelineItem>, crate::store::StoreError> {
    Ok(timeline(&store.case_outbox(case)?, &store.thread(case)?))
}

/// The thread in time order: perfbot's outbox mail and the recorded replies.
pub fn timeline(outbox: &[OutboxEntry], thread: &[ThreadEntry]) -> Vec<TimelineItem> {
    let mut items: Vec<TimelineItem> = outbox
        .iter()
        .map(|e| TimelineItem {
            time: e.sent_at.unwrap_or(e.queued_at),
            message_id: e.message_id.to_string(),
            from: "perfbot".into(),
            sender: "perfbot".into(),
            subject: e.subject.clone(),
            text: format!("{} ({})", e.kind, e.state.as_str()),
            understanding: None,
            limited: None,
            patches: Vec::new(),
        })
        .chain(thread.iter().map(|t| TimelineItem {
            time: t.date.unwrap_or(t.received),
            message_id: t.message_id.to_string(),
            from: crate::model::ids::display_mailbox(&t.from_name, &t.from),
            sender: t.sender.as_str().into(),
            subject: t.subject.clone(),
            text: t.text.clone(),
            understanding: t.understanding.clone(),
            limited: t.limited.clone(),
            patches: t.patches.clone(),
        }))
        .collect();
    items.sort_by_key(|i| i.time);
    items
}

/// One case in `cases list --json` (a stable, documented shape).
pub fn list_json(c: &Case) -> Value {
    json!({
        "id": c.id,
        "state": c.state,
        "subject": c.subject,
        "message_id": c.message_id,
        "commit": c.commit,
        "headline_metric": c.headline_metric,
        "headline_change": c.headline_change,
        "verdict": c.verdict,
        "testcase": c.testcase,
        "created": c.created.to_rfc3339(),
        "updated": c.updated.to_rfc3339(),
    })
}

pub fn show_json(c: &Case, events: &[Event], timeline: &[TimelineItem]) -> Value {
    let mut v = list_json(c);
    v["thread"] = json!(timeline);
    v["to"] = json!(c.to);
    v["cc"] = json!(c.cc);
    v["commit_subject"] = json!(c.commit_subject);
    v["subsystem"] = json!(c.subsystem);
    v["events"] = json!(events);
    v
}

fn cause_text(c: &Cause) -> String {
    match c {
        Cause::Report { input } => format!("report from {input}"),
        Cause::Cli { user, reason } => format!("{user} (command line): {reason}"),
        Cause::Dashboard { user, reason } => format!("{user} (dashboard): {reason}"),
        Cause::Message {
            message_id,
            from,
            quote,
        } => {
            let q: String = quote.lines().map(|l| format!("\n      > {l}")).collect();
            format!("mail <{message_id}> from {from}{q}")
        }
        Cause::System { what } => what.clone(),
    }
}

pub fn show_text(c: &Case, events: &[Event], timeline: &[TimelineItem]) -> String {
    let mut out = String::new();
    out.push_str(&format!("case {}  [{}]\n", c.id, c.state));
    out.push_str(&format!("subject:    {}\n", c.subject));
    out.push_str(&format!("message-id: <{}>\n", c.message_id));
    out.push_str(&format!(
        "commit:     {} (\"{}\")\n",
        c.commit, c.commit_subject
    ));
    out.push_str(&format!(
        "headline:   {} {} {}\n",
        c.headline_metric, c.headline_change, c.verdict
    ));
    out.push_str(&format!("to:         {}\n", c.to.join(", ")));
    out.push_str(&format!("cc:         {}\n", c.cc.join(", ")));
    if !timeline.is_empty() {
        out.push_str("thread:\n");
        for t in timeline {
            out.push_str(&format!(
                "  {}  {}  <{}>\n      {}\n",
                t.time.format("%Y-%m-%d %H:%M"),
                t.from,
                t.message_id,
                t.subject
            ));
            if let Some(u) = &t.understanding {
                out.push_str(&format!(
                    "      understood: {} ({})\n",
                    u.intent, u.confidence
                ));
            }
            if let Some(cut) = &t.limited {
                out.push_str(&format!("      (read in part: {cut})\n"));
            }
            if !t.patches.is_empty() {
                out.push_str(&format!("      (attached: {})\n", t.patches.join(", ")));
            }
            if t.sender != "perfbot" {
                for l in t.text.lines().take(12) {
                    out.push_str(&format!("      | {l}\n"));
                }
                if t.sender != "person" {
                    out.push_str(&format!(
                        "      ({} mail: recorded, not acted on)\n",
                        t.sender
                    ));
                }
            } else {
                out.push_str(&format!("      {}\n", t.text));
            }
        }
    }
    out.push_str("history:\n");
    for e in events {
        let change = match e.old {
            Some(o) if o != e.new => format!("{o} -> {}", e.new),
            Some(_) => format!("{} (unchanged)", e.new),
            None => format!("-> {}", e.new),
        };
        out.push_str(&format!(
            "  {}  {:<32} {}: {}\n",
            e.time.format("%Y-%m-%d %H:%M:%S"),
            change,
            e.note,
            cause_text(&e.cause)
        ));
    }
    out
}
