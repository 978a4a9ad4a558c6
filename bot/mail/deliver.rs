//! Delivering what the outbox has due, exactly once per Message-ID.
//!
//! Each mail goes queued → sending (flushed to disk) → handed to the transport →
//! sent (flushed at once). A crash before "sending" leaves it queued; a crash
//! after the server accepted it but before "sent" was flushed leaves it in
//! "sending", and the next run sends it again *with the same Message-ID and the
//! same bytes*, which list archives and mail readers fold into one. That window
//! is the round trip of one sled flush; it is kept that small by flushing each
//! mail's "sent" mark alone, right after the server's reply.

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::task::JoinSet;

use super::guard;
use super::smtp::{SendError, SmtpSender};
use super::transport::deliver_file;
use super::Address;
use crate::case::{CaseState, Cause};
use crate::config::{Config, ConfigError};
use crate::store::{OutboxEntry, OutboxState, Store, StoreError};

/// Where mail goes.
#[derive(Clone)]
pub enum Transport {
    File(PathBuf),
    Stdout,
    Smtp(SmtpSender),
}

impl Transport {
    pub fn from_config(config: &Config) -> Result<Transport, ConfigError> {
        Ok(match config.file.outbound.transport.as_str() {
            "stdout" => Transport::Stdout,
            "smtp" => Transport::Smtp(SmtpSender::from_config(config)?),
            _ => Transport::File(config.outbox_dir()),
        })
    }

    pub fn describe(&self) -> String {
        match self {
            Transport::File(d) => format!("file outbox {}", d.display()),
            Transport::Stdout => "standard output".into(),
            Transport::Smtp(s) => format!("smtp {}:{}", s.url.host, s.url.port),
        }
    }

    async fn send(&self, e: &OutboxEntry, to: &[Address], raw: &[u8]) -> Result<String, SendError> {
        match self {
            Transport::File(dir) => deliver_file(dir, &e.message_id, raw)
                .map(|p| format!("written to {}", p.display()))
                .map_err(|err| SendError::Transient(err.to_string())),
            Transport::Stdout => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                out.write_all(raw)
                    .and_then(|_| out.write_all(b"\n"))
                    .map(|_| "written to standard output".to_string())
                    .map_err(|err| SendError::Transient(err.to_string()))
            }
            Transport::Smtp(s) => s.send(to, raw).await,
        }
    }
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SendSummary {
    pub sent: usize,
    /// Failed this time, to be retried later.
    pub failed: usize,
    /// Given up: permanent failure or out of attempts.
    pub dead: usize,
    /// Due but held back by the rate limit.
    pub deferred: usize,
    /// Would have been sent (dry run).
    pub would_send: usize,
    /// Why nothing was sent at all, if so.
    pub stopped: Option<String>,
    pub lines: Vec<String>,
}

impl SendSummary {
    pub fn line(&self) -> String {
        let mut s = format!(
            "sent {}, failed {}, dead {}, deferred by rate limit {}",
            self.sent, self.failed, self.dead, self.deferred
        );
        if self.would_send > 0 {
            s.push_str(&format!(", would send {}", self.would_send));
        }
        if let Some(r) = &self.stopped {
            s.push_str(&format!(" (stopped: {r})"));
        }
        s
    }
}

fn due(e: &OutboxEntry, now: DateTime<Utc>) -> bool {
    match e.state {
        OutboxState::Queued | OutboxState::Failed => e.next_attempt_at <= now,
        // Left over from a process that died mid-send: its fate is unknown, so it
        // goes again under the same Message-ID.
        OutboxState::Sending => true,
        _ => false,
    }
}

/// Everything the opt-out checks need: config addresses and the database's.
fn optouts(config: &Config, store: &Store) -> Result<Vec<Address>, StoreError> {
    let mut v = config.optout_addresses();
    v.extend(store.optouts()?.into_iter().map(|o| o.address));
    Ok(v)
}

/// Deliver every due message (at most what the rate limits allow). With
/// `dry_run`, say what would be sent and change nothing.
pub async fn send_due(
    config: &Config,
    store: &Store,
    transport: &Transport,
    now: DateTime<Utc>,
    dry_run: bool,
) -> Result<SendSummary, StoreError> {
    let mut s = SendSummary::default();
    let o = &config.file.outbound;
    let entries = store.outbox_entries()?;
    let due_list: Vec<OutboxEntry> = entries.iter().filter(|e| due(e, now)).cloned().collect();
    if due_list.is_empty() {
        return Ok(s);
    }
    if let Some(reason) = guard::stop_reason(config) {
        tracing::warn!(due = due_list.len(), %reason, "emergency stop: nothing sent");
        s.lines.push(format!(
            "emergency stop, {} due mail(s) stay queued: {reason}",
            due_list.len()
        ));
        s.stopped = Some(reason);
        return Ok(s);
    }
    let sent_times: Vec<DateTime<Utc>> = entries.iter().filter_map(|e| e.sent_at).collect();
    let (allowed, next_free) = guard::budget(&sent_times, now, o.max_per_hour, o.max_per_day);
    let optouts = optouts(config, store)?;
    let redirect = Address::parse(&o.redirect_all_to);

    let mut tasks = JoinSet::new();
    let transport = Arc::new(transport.clone());
    let mut started = 0usize;
    for (i, mut e) in due_list.iter().cloned().enumerate() {
        if started >= allowed {
            s.deferred = due_list.len() - i;
            let when = next_free.map_or("later".to_string(), |t| t.to_rfc3339());
            tracing::warn!(deferred = s.deferred, next = %when, "rate limit reached");
            s.lines.push(format!(
                "rate limit ({} per hour, {} per day): {} mail(s) wait until {when}",
                o.max_per_hour, o.max_per_day, s.deferred
            ));
            break;
        }
        let (to, dropped) = guard::envelope(&e.recipients, &optouts, redirect.as_ref());
        for (a, why) in &dropped {
            tracing::info!(message_id = %e.message_id, address = %a, reason = why, "recipient left out");
        }
        if to.is_empty() {
            if !dry_run {
                e.state = OutboxState::Dead;
                e.last_error = Some("no recipient left (all opted out or invalid)".into());
                store.outbox_transition(
                    &e,
                    None,
                    system("outbox"),
                    &format!("mail <{}> not sent: no recipient left", e.message_id),
                )?;
            }
            s.dead += 1;
            s.lines.push(format!(
                "dead {} ({}): no recipient left",
                e.message_id, e.kind
            ));
            continue;
        }
        if dry_run {
            s.would_send += 1;
            s.lines.push(format!(
                "would send {} ({}, case {}) to {}: {}",
                e.message_id,
                e.kind,
                e.case_id,
                to.iter()
                    .map(Address::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
                e.subject
            ));
            started += 1;
            continue;
        }
        let mut raw = store.outbox_raw(&e.message_id)?;
        if let Some(r) = &redirect {
            let original: Vec<Address> = guard::envelope(&e.recipients, &optouts, None).0;
            let mut with = guard::redirect_header(r, &original);
            with.extend_from_slice(&raw);
            raw = with;
        }
        if e.state == OutboxState::Sending {
            tracing::warn!(message_id = %e.message_id, case = %e.case_id,
                "was being sent when perfbot stopped; sending again under the same Message-ID");
        }
        // Durably "sending" before the first byte goes out.
        e.state = OutboxState::Sending;
        e.attempts += 1;
        store.put_outbox_entry(&e)?;
        started += 1;
        let t = transport.clone();
        tasks.spawn(async move {
            let r = t.send(&e, &to, &raw).await;
            (e, r)
        });
        // Bounded concurrency: as many in flight as pooled connections.
        if tasks.len() >= o.concurrency {
            if let Some(done) = tasks.join_next().await {
                let (e, r) = done.expect("send task panicked");
                record(config, store, e, r, &mut s)?;
            }
        }
    }
    while let Some(done) = tasks.join_next().await {
        let (e, r) = done.expect("send task panicked");
        record(config, store, e, r, &mut s)?;
    }
    Ok(s)
}

fn system(what: &str) -> Cause {
    Cause::System { what: what.into() }
}

/// Write down what the transport said about one mail.
fn record(
    config: &Config,
    store: &Store,
    mut e: OutboxEntry,
    r: Result<String, SendError>,
    s: &mut SendSummary,
) -> Result<(), StoreError> {
    let o = &config.file.outbound;
    match r {
        Ok(reply) => {
            let now = Utc::now();
            e.state = OutboxState::Sent;
            e.sent_at = Some(now);
            e.last_error = None;
            e.server_reply = Some(reply.clone());
            let advance = (e.kind == "report").then_some((CaseState::Queued, CaseState::Reported));
            store.outbox_transition(
                &e,
                advance,
                system("delivery"),
                &format!("{} <{}> sent: {reply}", e.kind, e.message_id),
            )?;
            tracing::info!(case = %e.case_id, message_id = %e.message_id, kind = %e.kind, %reply, "sent");
            s.sent += 1;
            s.lines
                .push(format!("sent {} ({}): {reply}", e.message_id, e.kind));
        }
        Err(err) => {
            let give_up = matches!(err, SendError::Permanent(_)) || e.attempts >= o.max_attempts;
            e.last_error = Some(err.to_string());
            let note = if give_up {
                e.state = OutboxState::Dead;
                s.dead += 1;
                format!(
                    "{} <{}> dead after {} attempt(s): {err}",
                    e.kind, e.message_id, e.attempts
                )
            } else {
                e.state = OutboxState::Failed;
                e.next_attempt_at =
                    Utc::now() + guard::backoff(e.attempts, o.retry_base_secs, o.retry_max_secs);
                s.failed += 1;
                format!(
                    "{} <{}> attempt {} failed, next at {}: {err}",
                    e.kind,
                    e.message_id,
                    e.attempts,
                    e.next_attempt_at.to_rfc3339()
                )
            };
            tracing::warn!(case = %e.case_id, message_id = %e.message_id, attempts = e.attempts, error = %err, "{}", if give_up { "gave up" } else { "will retry" });
            store.outbox_transition(&e, None, system("delivery"), &note)?;
            s.lines.push(note);
        }
    }
    Ok(())
}
