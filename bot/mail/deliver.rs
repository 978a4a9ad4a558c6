//! Delivering what the outbox has due, through the configured transport.

use chrono::{DateTime, Utc};

use super::transport::deliver_file;
use crate::case::{CaseState, Cause};
use crate::config::Config;
use crate::store::{OutboxEntry, OutboxState, Store, StoreError};

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SendSummary {
    pub sent: usize,
    pub failed: usize,
    pub skipped: usize,
    pub lines: Vec<String>,
}

fn due(e: &OutboxEntry, now: DateTime<Utc>) -> bool {
    matches!(e.state, OutboxState::Queued | OutboxState::Failed) && e.next_attempt_at <= now
}

/// Deliver every due message. With `dry_run`, say what would be sent and change nothing.
pub fn send_due(
    config: &Config,
    store: &Store,
    now: DateTime<Utc>,
    dry_run: bool,
) -> Result<SendSummary, StoreError> {
    let mut s = SendSummary::default();
    for mut e in store.outbox_entries()? {
        if !due(&e, now) {
            continue;
        }
        if dry_run {
            s.skipped += 1;
            s.lines.push(format!(
                "would send {} ({}) to {}: {}",
                e.message_id,
                e.kind,
                e.recipients.join(", "),
                e.subject
            ));
            continue;
        }
        let raw = store.outbox_raw(&e.message_id)?;
        e.state = OutboxState::Sending;
        e.attempts += 1;
        store.put_outbox_entry(&e)?;
        let result = match config.file.outbound.transport.as_str() {
            "stdout" => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                out.write_all(&raw)
                    .and_then(|_| out.write_all(b"\n"))
                    .map(|_| "stdout".to_string())
                    .map_err(|e| e.to_string())
            }
            _ => deliver_file(&config.outbox_dir(), &e.message_id, &raw)
                .map(|p| p.display().to_string())
                .map_err(|e| e.to_string()),
        };
        match result {
            Ok(where_to) => {
                e.state = OutboxState::Sent;
                e.sent_at = Some(Utc::now());
                e.last_error = None;
                store.put_outbox_entry(&e)?;
                if e.kind == "report" {
                    let case = store.case(&e.case_id)?;
                    if case.state == CaseState::Queued {
                        store.set_state(
                            &e.case_id,
                            CaseState::Reported,
                            Cause::System {
                                what: format!("delivered to {where_to}"),
                            },
                            "report sent",
                        )?;
                    }
                }
                s.sent += 1;
                s.lines
                    .push(format!("sent {} ({}) -> {where_to}", e.message_id, e.kind));
            }
            Err(err) => {
                e.state = OutboxState::Failed;
                e.last_error = Some(err.clone());
                store.put_outbox_entry(&e)?;
                s.failed += 1;
                s.lines
                    .push(format!("failed {} ({}): {err}", e.message_id, e.kind));
            }
        }
    }
    Ok(s)
}
