//! The outbox: each mail with its delivery state. A mail's Message-ID is fixed
//! when it is queued, so every retry sends the same message.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use sled::Transactional;

use super::{abort, decode, encode, event_key, tx_err, Store, StoreError};
use crate::case::{Case, CaseId, CaseState, Cause, Event};
use crate::mail::MessageId;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutboxState {
    Queued,
    /// Handed to the transport; if the process died here, the mail may or may
    /// not have left (see README, "Exactly once").
    Sending,
    Sent,
    Failed,
    Dead,
    Held,
}

impl OutboxState {
    pub fn as_str(self) -> &'static str {
        match self {
            OutboxState::Queued => "queued",
            OutboxState::Sending => "sending",
            OutboxState::Sent => "sent",
            OutboxState::Failed => "failed",
            OutboxState::Dead => "dead",
            OutboxState::Held => "held",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboxEntry {
    pub message_id: MessageId,
    pub case_id: CaseId,
    /// `report`, `ack`, `reminder`, `escalation`, `digest`.
    pub kind: String,
    pub subject: String,
    pub state: OutboxState,
    /// Envelope recipients (bare addresses).
    pub recipients: Vec<String>,
    pub attempts: u32,
    pub queued_at: DateTime<Utc>,
    pub next_attempt_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    /// What the server said when it took the mail (`250 2.0.0 Ok: queued as …`).
    #[serde(default)]
    pub server_reply: Option<String>,
}

impl OutboxEntry {
    /// A mail just queued: due at `now`, no attempt yet.
    pub fn queued(
        message_id: MessageId,
        case_id: CaseId,
        kind: &str,
        subject: String,
        recipients: Vec<String>,
        now: DateTime<Utc>,
    ) -> OutboxEntry {
        OutboxEntry {
            message_id,
            case_id,
            kind: kind.to_string(),
            subject,
            state: OutboxState::Queued,
            recipients,
            attempts: 0,
            queued_at: now,
            next_attempt_at: now,
            sent_at: None,
            last_error: None,
            server_reply: None,
        }
    }
}

/// What the Message-ID index says about a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageRef {
    pub case_id: CaseId,
    /// `ours` (perfbot sent it) or `theirs` (a reply in the thread).
    pub direction: String,
    pub kind: String,
}

impl MessageRef {
    pub fn ours(case: &CaseId, kind: &str) -> Self {
        MessageRef {
            case_id: case.clone(),
            direction: "ours".into(),
            kind: kind.into(),
        }
    }
}

impl Store {
    pub fn outbox_entries(&self) -> Result<Vec<OutboxEntry>, StoreError> {
        let mut out = Vec::new();
        for kv in self.outbox.iter() {
            let (k, v) = kv?;
            out.push(decode::<OutboxEntry>("outbox", &k, &v)?);
        }
        out.sort_by(|a, b| {
            a.queued_at
                .cmp(&b.queued_at)
                .then_with(|| a.message_id.cmp(&b.message_id))
        });
        Ok(out)
    }

    /// The mail perfbot queued or sent about one case, oldest first.
    pub fn case_outbox(&self, case: &CaseId) -> Result<Vec<OutboxEntry>, StoreError> {
        let mut v = self.outbox_entries()?;
        v.retain(|e| &e.case_id == case);
        Ok(v)
    }

    pub fn outbox_entry(&self, id: &MessageId) -> Result<OutboxEntry, StoreError> {
        let v = self
            .outbox
            .get(id.as_str())?
            .ok_or_else(|| StoreError::NoMessage(id.to_string()))?;
        decode("outbox", id.as_str().as_bytes(), &v)
    }

    pub fn outbox_raw(&self, id: &MessageId) -> Result<Vec<u8>, StoreError> {
        Ok(self
            .outbox_raw
            .get(id.as_str())?
            .ok_or_else(|| StoreError::NoMessage(id.to_string()))?
            .to_vec())
    }

    /// Write an entry back (state changes), durably.
    pub fn put_outbox_entry(&self, e: &OutboxEntry) -> Result<(), StoreError> {
        self.outbox.insert(e.message_id.as_str(), encode(e))?;
        self.flush()
    }

    /// Write an entry back and record what happened as an event of its case, in
    /// one transaction; when `advance` is `(from, to)` and the case is in `from`,
    /// the case moves to `to`.
    pub fn outbox_transition(
        &self,
        e: &OutboxEntry,
        advance: Option<(CaseState, CaseState)>,
        cause: Cause,
        note: &str,
    ) -> Result<(), StoreError> {
        let seq = self.db.generate_id()?;
        let now = Utc::now();
        (&self.outbox, &self.cases, &self.events)
            .transaction(|(outbox, cases, events)| {
                outbox.insert(e.message_id.as_str(), encode(e))?;
                // Mail about no case (a digest) has no history to write to.
                let Some(v) = cases.get(e.case_id.as_str())? else {
                    return Ok(());
                };
                let mut c: Case = serde_json::from_slice(&v).map_err(abort)?;
                let old = c.state;
                if let Some((from, to)) = advance {
                    if c.state == from {
                        c.state = to;
                        c.updated = now;
                        cases.insert(e.case_id.as_str(), encode(&c))?;
                    }
                }
                let ev = Event {
                    time: now,
                    cause: cause.clone(),
                    old: Some(old),
                    new: c.state,
                    note: note.to_string(),
                };
                events.insert(event_key(&e.case_id, seq), encode(&ev))?;
                Ok(())
            })
            .map_err(tx_err)?;
        self.flush()
    }

    /// Queue mail that is about no case (the digest). Idempotent by Message-ID.
    pub fn queue_system_mail(&self, e: &OutboxEntry, raw: &[u8]) -> Result<bool, StoreError> {
        let created = (&self.outbox, &self.outbox_raw)
            .transaction(|(outbox, outbox_raw)| {
                if outbox.get(e.message_id.as_str())?.is_some() {
                    return Ok(false);
                }
                outbox.insert(e.message_id.as_str(), encode(e))?;
                outbox_raw.insert(e.message_id.as_str(), raw)?;
                Ok(true)
            })
            .map_err(tx_err)?;
        self.flush()?;
        Ok(created)
    }

    /// Queue a follow-up mail in a case's thread (ack, reminder, escalation,
    /// operator reply). Idempotent by Message-ID: `false` when it exists already.
    pub fn queue_followup(
        &self,
        e: &OutboxEntry,
        raw: &[u8],
        cause: Cause,
        note: &str,
    ) -> Result<bool, StoreError> {
        let created = self.queue_followup_deferred(e, raw, cause, note)?;
        self.flush()?;
        Ok(created)
    }

    /// `queue_followup` without the flush (ingestion's batch; delivery flushes
    /// before it sends anything, which covers it).
    pub fn queue_followup_deferred(
        &self,
        e: &OutboxEntry,
        raw: &[u8],
        cause: Cause,
        note: &str,
    ) -> Result<bool, StoreError> {
        let seq = self.db.generate_id()?;
        let created = (
            &self.outbox,
            &self.outbox_raw,
            &self.messages,
            &self.cases,
            &self.events,
        )
            .transaction(|(outbox, outbox_raw, messages, cases, events)| {
                if outbox.get(e.message_id.as_str())?.is_some() {
                    return Ok(false);
                }
                let v = cases
                    .get(e.case_id.as_str())?
                    .ok_or_else(|| abort(format!("no case {}", e.case_id)))?;
                let c: Case = serde_json::from_slice(&v).map_err(abort)?;
                outbox.insert(e.message_id.as_str(), encode(e))?;
                outbox_raw.insert(e.message_id.as_str(), raw)?;
                messages.insert(
                    e.message_id.as_str(),
                    encode(&MessageRef::ours(&e.case_id, &e.kind)),
                )?;
                let ev = Event {
                    time: e.queued_at,
                    cause: cause.clone(),
                    old: Some(c.state),
                    new: c.state,
                    note: note.to_string(),
                };
                events.insert(event_key(&e.case_id, seq), encode(&ev))?;
                Ok(true)
            })
            .map_err(tx_err)?;

        Ok(created)
    }
}
