//! How cases are shown: stable JSON for scripts and text for people.

use serde_json::{json, Value};

use super::{Case, Cause, Event};

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

pub fn show_json(c: &Case, events: &[Event]) -> Value {
    let mut v = list_json(c);
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

pub fn show_text(c: &Case, events: &[Event]) -> String {
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
