//! `perfbot outbox`: inspect and moderate the mail perfbot sends.

use anyhow::anyhow;
use chrono::Utc;
use clap::Subcommand;

use super::{by_operator, open_store, parse_id, who, Failure};
use crate::config::Config;
use crate::model::{CaseState, OutboxEntry, OutboxKind, OutboxState};
use crate::store::Store;

#[derive(Subcommand, Debug)]
pub enum OutboxCmd {
    /// List mail with its delivery state
    List {
        #[arg(long, value_parser = state)]
        state: Option<OutboxState>,
        /// As JSON, for scripts
        #[arg(long)]
        json: bool,
    },
    /// Print one message as it will be (or was) sent
    Show {
        /// The mail's Message-ID as `outbox list` shows it (with or without <>)
        message_id: String,
        /// Delivery state and history instead of the message
        #[arg(long)]
        status: bool,
        /// With --status: the delivery record as JSON
        #[arg(long, requires = "status")]
        json: bool,
    },
    /// Release a held (moderated) mail for sending
    Approve {
        /// The mail's Message-ID as `outbox list` shows it (with or without <>)
        message_id: String,
    },
    /// Never send this mail (it stays listed as dead, with the reason)
    Drop {
        /// The mail's Message-ID as `outbox list` shows it (with or without <>)
        message_id: String,
        /// Why, in a few words; kept with the mail
        #[arg(long, value_parser = super::reason)]
        reason: String,
    },
    /// Try a failed or dead mail again now, under the same Message-ID
    Retry {
        /// The mail's Message-ID as `outbox list` shows it (with or without <>)
        message_id: String,
    },
}

impl OutboxCmd {
    pub fn only_prints(&self) -> bool {
        matches!(self, OutboxCmd::List { .. } | OutboxCmd::Show { .. })
    }
}

fn state(s: &str) -> Result<OutboxState, String> {
    OutboxState::parse(s)
        .ok_or_else(|| super::unknown_state(s, OutboxState::ALL.iter().map(|o| o.as_str())))
}

pub fn run(config: &Config, c: OutboxCmd) -> Result<(), Failure> {
    let store = open_store(config)?;
    match c {
        OutboxCmd::List { state, json } => list(&store, state, json),
        OutboxCmd::Show {
            message_id,
            status,
            json,
        } => show(&store, &message_id, status, json),
        OutboxCmd::Approve { message_id } => approve(&store, &message_id),
        OutboxCmd::Drop { message_id, reason } => drop_mail(&store, &message_id, &reason),
        OutboxCmd::Retry { message_id } => retry(&store, &message_id),
    }
}

fn list(store: &Store, state: Option<OutboxState>, json: bool) -> Result<(), Failure> {
    let list: Vec<_> = store
        .outbox_entries()?
        .into_iter()
        .filter(|e| state.is_none_or(|s| e.state == s))
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else if list.is_empty() {
        println!(
            "no mail in the outbox{}",
            state
                .map(|s| format!(" {}", s.as_str()))
                .unwrap_or_default()
        );
    } else {
        for e in &list {
            // What an operator acts on: why it waits, or why it failed.
            let why = match (&e.held_because, &e.last_error) {
                (Some(h), _) if e.state == OutboxState::Held => format!("\n        held: {h}"),
                (_, Some(r)) => format!("\n        last error: {r}"),
                _ => String::new(),
            };
            println!(
                "{:<7} {:<10} {}  <{}>  {}{why}",
                e.state.as_str(),
                e.kind,
                e.case_id,
                e.message_id,
                e.subject,
            );
        }
    }
    Ok(())
}

/// The mail as it is sent, or (`status`) its delivery record, in words
/// with its history or (`json`) as stored.
fn show(store: &Store, message_id: &str, status: bool, json: bool) -> Result<(), Failure> {
    let id = parse_id(message_id)?;
    if status {
        let e = store.outbox_entry(&id)?;
        if json {
            println!("{}", serde_json::to_string_pretty(&e)?);
        } else {
            let events = store.events(&e.case_id)?;
            print!("{}", status_text(&e, &events));
        }
    } else {
        use std::io::Write;
        std::io::stdout().write_all(&store.outbox_raw(&id)?)?;
    }
    Ok(())
}

/// A mail's delivery record in words, with the case events that name it.
fn status_text(e: &OutboxEntry, events: &[crate::model::Event]) -> String {
    use crate::model::shown_time;
    use std::fmt::Write;
    let mut out = format!(
        "<{}>  {} of case {}: {}\n",
        e.message_id,
        e.kind,
        e.case_id,
        e.state.as_str()
    );
    let mut line = |k: &str, v: &str| {
        let _ = writeln!(out, "{k:<12}{v}");
    };
    line("subject:", &e.subject);
    line("recipients:", &e.recipients.join(", "));
    line("attempts:", &e.attempts.to_string());
    line("queued:", &shown_time(e.queued_at));
    match e.sent_at {
        Some(t) => line("sent:", &shown_time(t)),
        None if e.state.pending() => line("next try:", &shown_time(e.next_attempt_at)),
        None => {}
    }
    for (k, v) in [
        ("server:", &e.server_reply),
        ("last error:", &e.last_error),
        ("held:", &e.held_because),
    ] {
        if let Some(v) = v {
            line(k, v);
        }
    }
    for r in &e.refused {
        line("refused:", r);
    }
    if e.fate_unknown {
        line(
            "fate:",
            "unknown: the server may have taken it before it fell silent (looked for in perfbot's own mailbox before it goes again, when that is read over IMAP)",
        );
    }
    let named = format!("<{}>", e.message_id);
    let mine: Vec<_> = events.iter().filter(|v| v.note.contains(&named)).collect();
    if !mine.is_empty() {
        out.push_str("history:\n");
        for v in mine {
            let why = crate::app::view::cause_line(&v.cause);
            let _ = writeln!(out, "  {}  {}: {why}", shown_time(v.time), v.note);
        }
    }
    out
}

/// Release a mail held by moderation.
fn approve(store: &Store, message_id: &str) -> Result<(), Failure> {
    let mut e = store.outbox_entry(&parse_id(message_id)?)?;
    // What approving asks for, a mail that leaves, is so already: said,
    // and done (a script may approve twice). A dead one never leaves.
    match e.state {
        OutboxState::Held => {}
        OutboxState::Sent => {
            eprintln!("<{}> was sent already", e.message_id);
            return Ok(());
        }
        OutboxState::Queued | OutboxState::Sending | OutboxState::Failed => {
            let s = e.state.as_str();
            eprintln!("<{}> is {s}, not held: it is sent when due", e.message_id);
            return Ok(());
        }
        OutboxState::Dead => {
            let id = &e.message_id;
            let why = anyhow!("<{id}> is dead, not held: `perfbot outbox retry` queues it again");
            return Err(why.into());
        }
    }
    e.state = OutboxState::Queued;
    e.next_attempt_at = Utc::now();
    let mut note = format!("{} <{}> approved for sending", e.kind, e.message_id);
    let set_aside = set_aside(store, &e)?;
    if let Some((from, _)) = set_aside {
        note.push_str(&format!(
            "; the case's state before its report left ({from}) is set aside: reported once sent"
        ));
    }
    store.outbox_transition(&e, set_aside, by_operator("approved"), &note)?;
    eprintln!("<{}> approved; `perfbot send` delivers it", e.message_id);
    if let Some((from, _)) = set_aside {
        eprintln!(
            "case {} was {from} before its report ever left; it is followed as reported once the report is sent",
            e.case_id
        );
    }
    Ok(())
}

/// A held report whose case is no longer queued — a decision carried over
/// to it (series memory, `#perfbot ignore`), or a state an operator set
/// while it waited — is sent anyway only when the operator disagrees with
/// that state: the case goes back to queued, so that sending it makes it
/// reported and its thread is followed and chased.
fn set_aside(store: &Store, e: &OutboxEntry) -> Result<Option<(CaseState, CaseState)>, Failure> {
    if e.kind != OutboxKind::Report {
        return Ok(None);
    }
    let state = store.case(&e.case_id)?.state;
    Ok((state != CaseState::Queued).then_some((state, CaseState::Queued)))
}

/// Never send a mail (kept, as dead), unless it has left already.
fn drop_mail(store: &Store, message_id: &str, reason: &str) -> Result<(), Failure> {
    let mut e = store.outbox_entry(&parse_id(message_id)?)?;
    // Dropped, or given up on, already: it keeps the reason it has.
    if e.state == OutboxState::Dead {
        eprintln!("<{}> is dead already: it is never sent", e.message_id);
        return Ok(());
    }
    if matches!(e.state, OutboxState::Sent | OutboxState::Sending) {
        return Err(anyhow!(
            "<{}> is {}: too late to drop",
            e.message_id,
            e.state.as_str()
        )
        .into());
    }
    e.state = OutboxState::Dead;
    e.last_error = Some(format!("dropped by {}: {reason}", who()));
    let note = format!("{} <{}> dropped", e.kind, e.message_id);
    store.outbox_transition(&e, None, by_operator(reason), &note)?;
    eprintln!("<{}> dropped", e.message_id);
    Ok(())
}

/// A failed or dead mail again, under the same Message-ID.
fn retry(store: &Store, message_id: &str) -> Result<(), Failure> {
    let mut e = store.outbox_entry(&parse_id(message_id)?)?;
    if !matches!(e.state, OutboxState::Failed | OutboxState::Dead) {
        return Err(anyhow!(
            "<{}> is {}, not failed or dead",
            e.message_id,
            e.state.as_str()
        )
        .into());
    }
    e.state = OutboxState::Queued;
    e.attempts = 0;
    e.next_attempt_at = Utc::now();
    let note = format!("{} <{}> queued again", e.kind, e.message_id);
    store.outbox_transition(&e, None, by_operator("retry"), &note)?;
    eprintln!("<{}> queued again", e.message_id);
    Ok(())
}
