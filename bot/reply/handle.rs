//! A person's new message in a case thread: understand it, decide what it does
//! to the case, record that with the evidence, and queue what follows (an
//! escalation to the operators, an ack, a reply to a bad command). Mail from
//! perfbot itself or other robots never gets here.

use chrono::Utc;
use handlebars::Handlebars;
use serde_json::json;

use super::classify::{understand_words, Understanding};
use super::command::{commands, Command, USAGE};
use super::effect::{decide, Effect};
use super::intent::Intent;
use super::trust::{role, Role};
use crate::case::{Case, CaseState, Cause};
use crate::config::Config;
use crate::mail::followup::{prepare_followup, FollowUp};
use crate::mail::{Address, MessageId};
use crate::store::thread::ThreadEntry;
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum HandleError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("template {name}: {why}")]
    Template { name: String, why: String },
    #[error("building a follow-up: {0}")]
    Build(#[from] crate::mail::message::BuildError),
}

/// What handling one reply did.
#[derive(Debug, Clone)]
pub struct Handled {
    pub understanding: Understanding,
    pub role: Role,
    pub effect: Effect,
    /// Follow-ups queued (escalation, ack, command error).
    pub queued: Vec<MessageId>,
}

const BUILTIN: &[(&str, &str)] = &[
    ("ack", include_str!("../../templates/ack.hbs")),
    ("escalation", include_str!("../../templates/escalation.hbs")),
    (
        "command-error",
        include_str!("../../templates/command-error.hbs"),
    ),
];

/// Render a follow-up template: `templates/<name>.hbs` (or a path), else the
/// built-in copy. Plain text, strict, never re-parsing values.
pub fn render(
    config: &Config,
    name: &str,
    data: &serde_json::Value,
) -> Result<String, HandleError> {
    let path = config.template_path(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(_) => BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| t.to_string())
            .ok_or_else(|| HandleError::Template {
                name: name.into(),
                why: format!("{} does not exist", path.display()),
            })?,
    };
    let mut hb = Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_escape_fn(handlebars::no_escape);
    hb.render_template(&text, data)
        .map_err(|e| HandleError::Template {
            name: name.into(),
            why: e.to_string(),
        })
}

fn thread_url(config: &Config, case: &Case) -> String {
    format!(
        "{}/{}",
        config.file.report.archive_url.trim_end_matches('/'),
        case.message_id
    )
}

fn signature(config: &Config) -> String {
    config.file.report.signature.clone()
}

/// Queue a follow-up; returns its Message-ID when it is new.
fn queue(
    config: &Config,
    store: &Store,
    case: &Case,
    f: FollowUp,
    note: &str,
) -> Result<Option<MessageId>, HandleError> {
    let (entry, raw) = prepare_followup(config, case, &f, Utc::now())?;
    let id = entry.message_id.clone();
    let new = store.queue_followup_deferred(
        &entry,
        &raw,
        Cause::System {
            what: format!(
                "{} for <{}>",
                f.kind,
                f.parent.map(|p| p.as_str()).unwrap_or("")
            ),
        },
        note,
    )?;
    Ok(new.then_some(id))
}

/// How a thread message was matched decides what kind of fact it is.
fn fact(entry: &ThreadEntry) -> Option<Understanding> {
    let (intent, tag, evidence) = match entry.matched_by.as_str() {
        "revert" => (
            Intent::WillRevert,
            "revert-posted",
            "a revert of the commit was posted",
        ),
        "trailer" => (
            Intent::FixPosted,
            "trailer",
            "a patch that closes the report was posted",
        ),
        _ => return None,
    };
    Some(Understanding {
        intent,
        confidence: 0.95,
        evidence: format!("{evidence}: {}", entry.subject),
        secondary: Vec::new(),
        tags: vec![tag.into()],
        rule: Some("fact".into()),
        vetoed: Vec::new(),
    })
}

/// Handle a person's new message `entry` (body text `body`) in `case_id`'s thread.
pub fn handle_reply(
    config: &Config,
    store: &Store,
    case: &Case,
    entry: &ThreadEntry,
    body: &str,
    dkim: Option<(&super::dkim::Checker, &[u8])>,
) -> Result<Handled, HandleError> {
    let from = Address::parse(&entry.from);
    let mut who = role(from.as_ref(), false, case, &config.policy);
    // A failed DKIM check: the sender may not be who they say.
    let dkim_verdict = dkim.map(|(c, raw)| c.check(raw));
    if let Some(super::dkim::Verdict::Fail(why)) = &dkim_verdict {
        if who != Role::Other {
            tracing::warn!(case = %case.id, message_id = %entry.message_id, from = %entry.from, %why,
                "DKIM check failed: the sender is treated as untrusted");
            who = Role::Other;
        }
    }
    let mut queued = Vec::new();

    // Bad commands get a short answer, to the sender only.
    // The replier's own words of `body`, as ingestion recorded them.
    let words = &entry.text;
    for (line, parsed) in commands(words) {
        let problem = match parsed {
            Err(e) => Some(e),
            Ok(Command::Dup(ref other)) => match store.find_case(other) {
                Ok(c) if c.id == case.id => Some("a case cannot duplicate itself".into()),
                Ok(_) => None,
                Err(_) => Some(format!("#perfbot dup: no case {other:?}")),
            },
            Ok(_) if !config.policy.may_command(who) => Some(format!(
                "perfbot takes commands from {}; you are {who} for this case",
                config
                    .policy
                    .commands
                    .iter()
                    .map(|r| r.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Ok(_) => None,
        };
        if let (Some(error), Some(addr)) = (problem, from.as_ref()) {
            let text = render(
                config,
                "command-error",
                &json!({"line": line, "error": error, "usage": USAGE, "signature": signature(config)}),
            )?;
            let f = FollowUp {
                kind: "command-error",
                body: &text,
                parent: Some(&entry.message_id),
                to: vec![addr.to_string()],
                cc: Vec::new(),
            };
            if let Some(id) = queue(
                config,
                store,
                case,
                f,
                &format!("command error answered: {error}"),
            )? {
                queued.push(id);
            }
        }
    }

    let u = fact(entry).unwrap_or_else(|| understand_words(body, words, config.intent_rules()));
    let mut effect = if u.rule.as_deref() == Some("fact") {
        // A posted revert or a patch closing the report is a fact, whoever
        // posted it; it still must not contradict an earlier decision.
        let to = if u.tags.iter().any(|t| t == "revert-posted") {
            CaseState::Reverted
        } else {
            CaseState::AwaitingFix
        };
        let fact_u = Understanding {
            rule: Some("command".into()),
            ..u.clone()
        };
        let mut e = decide(case.state, &fact_u, Role::Operator, &config.policy);
        if e.state.is_some() && e.escalate.is_none() {
            e.state = Some(to);
        }
        e
    } else {
        decide(case.state, &u, who, &config.policy)
    };
    if u.rule.as_deref() == Some("fact")
        && matches!(
            case.state,
            CaseState::NotARegression | CaseState::WontFix | CaseState::Duplicate
        )
    {
        effect = Effect {
            state: Some(CaseState::NeedsHuman),
            note: format!("{} on a case closed as {}", u.evidence, case.state),
            escalate: Some(format!("{} on a case closed as {}", u.evidence, case.state)),
            decided: false,
        };
    }

    // The understanding goes on the thread entry, for the timeline.
    let mut e2 = entry.clone();
    e2.understanding = Some(json!({
        "intent": u.intent,
        "confidence": u.confidence,
        "evidence": u.evidence,
        "secondary": u.secondary,
        "role": who,
        "effect": effect.note,
        "dkim": dkim_verdict.as_ref().map(|v| match v {
            super::dkim::Verdict::Pass(d) => format!("pass ({d})"),
            super::dkim::Verdict::Fail(w) => format!("fail: {w}"),
            super::dkim::Verdict::Unsigned(w) => format!("none: {w}"),
        }),
    }));
    store.update_thread_entry(&case.id, &e2)?;

    if let Some(new) = effect.state {
        store.set_state_deferred(
            &case.id,
            new,
            Cause::Message {
                message_id: entry.message_id.clone(),
                from: entry.from.clone(),
                quote: u.evidence.clone(),
            },
            &effect.note,
        )?;
        tracing::info!(case = %case.id, message_id = %entry.message_id, from = %entry.from, role = %who,
            intent = %u.intent, confidence = u.confidence, new_state = %new, "case moved");
    }

    if let Some(reason) = &effect.escalate {
        let to = config.escalation_to();
        if to.is_empty() {
            tracing::warn!(case = %case.id, %reason, "a human is needed, but no operators are configured (trust.operators)");
        } else {
            let case_now = store.case(&case.id)?;
            let text = render(
                config,
                &config.file.escalation.template,
                &json!({
                    "case_id": case.id, "state": case_now.state, "subject": case.subject,
                    "thread_url": thread_url(config, case), "reason": reason,
                    "from": entry.from, "message_id": entry.message_id,
                    "quoted": entry.text.lines().take(40).collect::<Vec<_>>(),
                    "signature": signature(config),
                }),
            )?;
            let f = FollowUp {
                kind: "escalation",
                body: &text,
                parent: Some(&entry.message_id),
                to,
                cc: Vec::new(),
            };
            if let Some(id) = queue(
                config,
                store,
                case,
                f,
                &format!("escalated to the operators: {reason}"),
            )? {
                queued.push(id);
            }
        }
    }

    let acks = &config.file.acks;
    if acks.enabled
        && effect.decided
        && acks.intents.iter().any(|i| i == u.intent.as_str())
        && u.rule.as_deref() != Some("fact")
    {
        let already = store.case_outbox(&case.id)?.iter().any(|o| o.kind == "ack");
        if let (false, Some(addr)) = (already, from.as_ref()) {
            let case_now = store.case(&case.id)?;
            let first = entry
                .from_name
                .split([' ', ','])
                .find(|w| !w.is_empty())
                .unwrap_or("there")
                .to_string();
            let text = render(
                config,
                &acks.template,
                &json!({
                    "first_name": first, "evidence": u.evidence,
                    "reply_date": entry.date.map(|d| d.format("%a, %d %b %Y").to_string()).unwrap_or_default(),
                    "outcome": case_now.state.as_str().replace('-', " "),
                    "closing": case_now.state.is_closed(),
                    "signature": signature(config),
                }),
            )?;
            let mut cc = case.cc.clone();
            cc.retain(|c| Address::parse(c) != Some(addr.clone()));
            let f = FollowUp {
                kind: "ack",
                body: &text,
                parent: Some(&entry.message_id),
                to: vec![addr.to_string()],
                cc,
            };
            if let Some(id) = queue(config, store, case, f, "ack queued")? {
                queued.push(id);
            }
        }
    }
    Ok(Handled {
        understanding: u,
        role: who,
        effect,
        queued,
    })
}
