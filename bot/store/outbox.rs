//! The outbox: each mail with its delivery state. A mail's Message-ID is fixed
//! when it is queued, so every retry sends the same message.

use chrono::Utc;
use sled::transaction::{ConflictableTransactionResult, TransactionalTree};
use sled::Transactional;

use super::{
    abort, case_prefix, decode, decode_all, encode, event_key, move_case, no_case, note_event,
    outbox_case_key, Abort, Store, StoreError,
};
use crate::model::case::{Case, CaseId, CaseState, Cause, Event};
use crate::model::{MessageId, MessageRef, OutboxEntry};

impl Store {
    pub fn outbox_entries(&self) -> Result<Vec<OutboxEntry>, StoreError> {
        let mut out: Vec<OutboxEntry> = decode_all("outbox", self.outbox.iter())?;
        out.sort_by(|a, b| {
            a.queued_at
                .cmp(&b.queued_at)
                .then_with(|| a.message_id.cmp(&b.message_id))
        });
        Ok(out)
    }

    /// The mail perfbot queued or sent about one case, oldest first (as
    /// `outbox_entries` orders them).
    pub fn case_outbox(&self, case: &CaseId) -> Result<Vec<OutboxEntry>, StoreError> {
        self.check_outbox_index()?;
        let prefix = case_prefix(case);
        let mut out = Vec::new();
        for k in self.outbox_by_case.scan_prefix(&prefix).keys() {
            let k = k?;
            let id = &k[prefix.len()..];
            // Indexed with the entry, in one transaction: one without the
            // other is a damaged database.
            let v = self.outbox.get(id)?.ok_or_else(|| StoreError::Record {
                tree: "outbox_by_case",
                key: String::from_utf8_lossy(&k).into_owned(),
                why: "names no outbox entry".into(),
            })?;
            out.push(decode::<OutboxEntry>("outbox", id, &v)?);
        }
        out.sort_by(|a, b| {
            a.queued_at
                .cmp(&b.queued_at)
                .then_with(|| a.message_id.cmp(&b.message_id))
        });
        Ok(out)
    }

    /// Make `outbox_by_case` hold one key per outbox entry, if it does not
    /// (a database written before the index, or by a perfbot without it),
    /// once per open database: the first time a case's mail is looked up,
    /// not at open, since counting both trees reads every key and most
    /// commands never ask.
    fn check_outbox_index(&self) -> Result<(), StoreError> {
        // Held while the index is made again: one rebuild, not one per thread.
        let mut checked = self
            .outbox_indexed
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if !*checked {
            self.index_outbox()?;
            *checked = true;
        }
        Ok(())
    }

    /// Counting keys is cheap next to decoding every entry, which happens
    /// only when the counts differ. The index's keys are read before the
    /// entries: a mail queued meanwhile (its entry and key written in one
    /// transaction) is then either in neither list, and untouched, or its
    /// entry is read too and its key written back.
    fn index_outbox(&self) -> Result<(), StoreError> {
        if self.outbox_by_case.len() == self.outbox.len() {
            return Ok(());
        }
        let mut batch = sled::Batch::default();
        for k in self.outbox_by_case.iter().keys() {
            batch.remove(k?);
        }
        let entries = self.outbox_entries()?;
        for e in &entries {
            batch.insert(outbox_case_key(e), &[]);
        }
        self.outbox_by_case.apply_batch(batch)?;
        tracing::info!(entries = entries.len(), "outbox indexed by case");
        Ok(())
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
        let result =
            (&self.outbox, &self.cases, &self.events).transaction(|(outbox, cases, events)| {
                outbox.insert(e.message_id.as_str(), encode(e))?;
                // Mail about no case (a digest) has no history to write to.
                let Some(v) = cases.get(e.case_id.as_str())? else {
                    return Ok(());
                };
                let mut c: Case = serde_json::from_slice(&v).map_err(abort)?;
                let ev = match advance {
                    Some((from, to)) if c.state == from => {
                        let ev = move_case(&mut c, to, cause.clone(), note.to_string(), now, None);
                        cases.insert(e.case_id.as_str(), encode(&c))?;
                        ev
                    }
                    _ => note_event(&c, cause.clone(), note.to_string(), now),
                };
                events.insert(event_key(&e.case_id, seq), encode(&ev))?;
                Ok(())
            });
        self.committed(result)?;
        self.flush()
    }

    /// Queue mail that is about no case (the digest). Idempotent by Message-ID.
    pub fn queue_system_mail(&self, e: &OutboxEntry, raw: &[u8]) -> Result<bool, StoreError> {
        self.queue_system_mail_noting(e, raw, None)
    }

    /// `queue_system_mail`, and in the same transaction `meta[key] = value`
    /// when given: the daemon's digest and the time it was last sent, so
    /// that a kill between the two can neither send it twice nor skip it.
    pub fn queue_system_mail_noting(
        &self,
        e: &OutboxEntry,
        raw: &[u8],
        note: Option<(&str, &str)>,
    ) -> Result<bool, StoreError> {
        let result = (
            &self.outbox,
            &self.outbox_raw,
            &self.outbox_by_case,
            &self.meta,
        )
            .transaction(|(outbox, outbox_raw, by_case, meta)| {
                // Noted even when the mail is queued already (the same
                // Message-ID): what the note records is queued either way.
                if let Some((key, value)) = note {
                    meta.insert(key, value.as_bytes())?;
                }
                if outbox.get(e.message_id.as_str())?.is_some() {
                    return Ok(false);
                }
                outbox.insert(e.message_id.as_str(), encode(e))?;
                outbox_raw.insert(e.message_id.as_str(), raw)?;
                by_case.insert(outbox_case_key(e), &[])?;
                Ok(true)
            });
        let created = self.committed(result)?;
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
        let result = (
            &self.outbox,
            &self.outbox_raw,
            &self.outbox_by_case,
            &self.messages,
            &self.cases,
            &self.events,
        )
            .transaction(
                |(outbox, outbox_raw, outbox_by_case, messages, cases, events)| {
                    let v = cases
                        .get(e.case_id.as_str())?
                        .ok_or_else(|| no_case(&e.case_id))?;
                    let c: Case = serde_json::from_slice(&v).map_err(abort)?;
                    let ev = note_event(&c, cause.clone(), note.to_string(), e.queued_at);
                    let queue = MailTrees {
                        outbox,
                        outbox_raw,
                        outbox_by_case,
                        messages,
                        events,
                    };
                    queue.put(&e.case_id, e, raw, &ev, seq)
                },
            );
        let created = self.committed(result)?;

        Ok(created)
    }
}

/// Where a queued mail goes, inside a transaction of the caller's (a
/// follow-up alone, or a reply's with everything it does).
pub(super) struct MailTrees<'t> {
    pub outbox: &'t TransactionalTree,
    pub outbox_raw: &'t TransactionalTree,
    pub outbox_by_case: &'t TransactionalTree,
    pub messages: &'t TransactionalTree,
    pub events: &'t TransactionalTree,
}

impl MailTrees<'_> {
    /// Queue mail `e` of `case` (its bytes `raw`) with its timeline event
    /// `ev` at `seq`. A mail queued already (the same Message-ID) is left as
    /// it is: `false`.
    pub fn put(
        &self,
        case: &CaseId,
        e: &OutboxEntry,
        raw: &[u8],
        ev: &Event,
        seq: u64,
    ) -> ConflictableTransactionResult<bool, Abort> {
        let id = e.message_id.as_str();
        if self.outbox.get(id)?.is_some() {
            return Ok(false);
        }
        self.outbox.insert(id, encode(e))?;
        self.outbox_raw.insert(id, raw)?;
        self.outbox_by_case.insert(outbox_case_key(e), &[])?;
        self.messages
            .insert(id, encode(&MessageRef::ours(case, e.kind)))?;
        self.events.insert(event_key(case, seq), encode(ev))?;
        Ok(true)
    }
}
