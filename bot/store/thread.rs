//! The messages of each case's thread (other than perfbot's own, which are in
//! the outbox), and the quarantine of messages that could not be read.

use chrono::Utc;
use sled::Transactional;

use super::outbox::MailTrees;
use super::{
    abort, case_prefix, decode, decode_all, encode, event_key, move_case, no_case, note_event,
    Store, StoreError,
};
use crate::model::case::{Case, CaseId, CaseState, Cause, Question, Unsettled};
use crate::model::{MessageId, MessageRef, Quarantined, ThreadEntry, Unreadable};

/// What a reply does, for `Store::record_reply`.
pub struct Reply<'a> {
    /// The note of the message's own timeline event.
    pub note: &'a str,
    /// The case state the decision was made against (`None`: no decision).
    pub expect: Option<CaseState>,
    /// The case's move: new state, cause (the Message-ID and the quoted
    /// evidence), note.
    pub change: Option<(CaseState, Cause, String)>,
    /// Mails queued because of it (escalation, ack, command error).
    pub mails: &'a [QueuedMail],
    /// The `#perfbot ignore` rule it gave, kept with the reply.
    pub ignore: Option<&'a crate::model::ignore::IgnoreRule>,
    /// The sender posted a patch: they join the case's contributors.
    pub contributor: Option<&'a str>,
    /// What the reply does to the case's open question.
    pub question: QuestionChange,
    /// What the move to a human leaves unsettled (`MovedByMail::unsettled`).
    pub unsettled: Option<Unsettled>,
    /// The reply was written before the mail that moved the case last, and
    /// read after it: a move it makes (to a human) leaves that later mail
    /// the case's mover, so that what was written between the two is still
    /// read late.
    pub late: bool,
    /// The reply says again the decision the case holds
    /// (`effect::says_again`): when it moves nothing (`change` is `None`)
    /// and was written after the mail that moved the case, it becomes the
    /// case's newest word (`Case::moved_by_mail`), so that a reply written
    /// between the two and read after both is weighed as if read in order.
    /// The mover (`Case::moved_by`) stays who it was.
    pub says_again: bool,
}

/// What a reply does to a case's open question (`Case::question`).
#[derive(Debug, Clone, PartialEq)]
pub enum QuestionChange {
    /// Nothing.
    Keep,
    /// It asks the robot's people something: the question a human owes an
    /// answer (a later question replaces an earlier one).
    Ask(Question),
    /// The robot's people wrote in the thread: the question is answered.
    Answered,
}

/// A follow-up mail ready to queue.
#[derive(Debug, Clone)]
pub struct QueuedMail {
    pub entry: crate::model::OutboxEntry,
    pub raw: Vec<u8>,
    pub cause: Cause,
    pub note: String,
}

impl Reply<'_> {
    /// What the reply changes in its case besides a move: a contributor who
    /// joins, the open question. True when the case changed.
    fn note_on(&self, c: &mut Case) -> bool {
        let joined = self
            .contributor
            .filter(|a| !c.contributors.iter().any(|k| k.eq_ignore_ascii_case(a)));
        if let Some(a) = joined {
            c.contributors.push(a.to_string());
        }
        let question_changed = match &self.question {
            QuestionChange::Keep => false,
            QuestionChange::Ask(q) => {
                c.question = Some(q.clone());
                true
            }
            QuestionChange::Answered => c.question.take().is_some(),
        };
        joined.is_some() || question_changed
    }

    /// What the reply's move leaves unsettled goes with it when it moved
    /// the case (`moved`). A case it finds with a human already now needs
    /// one for more than the mail that sent it there said, but for two
    /// questions for the robot's people: as on `Case::question`, the later
    /// one stands for both (their answer answers both).
    fn leave_unsettled(&self, c: &mut Case, moved: bool) {
        let Some(m) = c.moved_by_mail.as_mut() else {
            return;
        };
        let both_asked = matches!(
            (&m.unsettled, &self.unsettled),
            (Some(Unsettled::Asked(_)), Some(Unsettled::Asked(_)))
        );
        if moved || (both_asked && !self.late) {
            m.unsettled = self.unsettled.clone();
        } else if !both_asked {
            m.unsettled = None;
        }
    }
}

/// A reply that says again where the case is, written after the mail that
/// put it there, is the case's newest word for it (`Case::moved_by_mail`);
/// the mover stays who it was, and what it left unsettled is the caller's
/// (`Reply::leave_unsettled`). True when the case changed.
fn newest_word(c: &mut Case, entry: &ThreadEntry) -> bool {
    match c.moved_by_mail.as_mut() {
        Some(m) if entry.written() > m.written => {
            m.message_id = entry.message_id.clone();
            m.written = entry.written();
            m.answers = entry.in_reply_to.clone();
            true
        }
        _ => false,
    }
}

/// What `Store::record_reply` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    New,
    /// The Message-ID was known: nothing written.
    Duplicate,
    /// The case is no longer in the expected state: nothing written.
    Conflict(CaseState),
}

impl Store {
    /// The case a Message-ID of a thread belongs to.
    pub fn message_case(&self, id: &MessageId) -> Result<Option<CaseId>, StoreError> {
        Ok(self.message(id)?.map(|r| r.case_id))
    }

    /// Record a message of a case's thread and its timeline event, once: `false`
    /// (and nothing written) when the Message-ID is known already. Not flushed:
    /// a source makes it durable at its own checkpoints (an IMAP cursor move, the
    /// end of a file), and a message lost to a crash before that is read again.
    pub fn record_thread_message(
        &self,
        case: &CaseId,
        entry: &mut ThreadEntry,
        note: &str,
    ) -> Result<bool, StoreError> {
        let r = self.record_reply(
            case,
            entry,
            &Reply {
                note,
                expect: None,
                change: None,
                mails: &[],
                ignore: None,
                contributor: None,
                question: QuestionChange::Keep,
                unsettled: None,
                late: false,
                says_again: false,
            },
        )?;
        Ok(matches!(r, Recorded::New))
    }

    /// Record a person's reply together with everything it does — its thread
    /// entry (with what it was understood to say), the case's move, and the
    /// mails that follow from it — in one transaction: after a crash either
    /// all of it is on disk or none of it, and a reply read again is then
    /// handled again (never "stored, but its decision lost"). Not flushed (see
    /// `record_thread_message`).
    ///
    /// `reply.expect` is the case state the decision was made against; if the
    /// case moved meanwhile, nothing is written and `Conflict` says where it
    /// is now, so the caller can decide again.
    pub fn record_reply(
        &self,
        case: &CaseId,
        entry: &mut ThreadEntry,
        reply: &Reply,
    ) -> Result<Recorded, StoreError> {
        let seq = self.db.generate_id()?;
        entry.seq = seq;
        let change_seq = self.db.generate_id()?;
        let mail_seqs = reply
            .mails
            .iter()
            .map(|_| self.db.generate_id())
            .collect::<Result<Vec<u64>, _>>()?;
        let now = Utc::now();
        let entry = &*entry;
        let trees = (
            &self.messages,
            &self.thread,
            &self.cases,
            &self.events,
            &self.outbox,
            &self.outbox_raw,
            &self.outbox_by_case,
            &self.ignores,
        );
        let result = trees.transaction(
            |(messages, thread, cases, events, outbox, outbox_raw, outbox_by_case, ignores)| {
                if messages.get(entry.message_id.as_str())?.is_some() {
                    return Ok(Recorded::Duplicate);
                }
                let v = cases.get(case.as_str())?.ok_or_else(|| no_case(case))?;
                let mut c: Case = serde_json::from_slice(&v).map_err(abort)?;
                if reply.expect.is_some_and(|e| e != c.state) {
                    return Ok(Recorded::Conflict(c.state));
                }
                messages.insert(
                    entry.message_id.as_str(),
                    encode(&MessageRef::theirs(case, entry.sender)),
                )?;
                thread.insert(event_key(case, seq), encode(entry))?;
                let cause = Cause::Message {
                    message_id: entry.message_id.clone(),
                    from: entry.from.clone(),
                    quote: entry.text.chars().take(2000).collect(),
                };
                let ev = note_event(&c, cause, reply.note.to_string(), entry.received);
                events.insert(event_key(case, seq), encode(&ev))?;
                let mut noted = reply.note_on(&mut c);
                if reply.says_again && reply.change.is_none() {
                    noted |= newest_word(&mut c, entry);
                }
                if let Some((new, cause, note)) = &reply.change {
                    let was = c.state;
                    let later = reply
                        .late
                        .then(|| (c.moved_by.clone(), c.moved_by_mail.clone()));
                    let ev = move_case(&mut c, *new, cause.clone(), note.clone(), now, Some(entry));
                    events.insert(event_key(case, change_seq), encode(&ev))?;
                    if let Some(mover) = later {
                        (c.moved_by, c.moved_by_mail) = mover;
                    } else if was == *new {
                        // Sent where the case already is (a human): said
                        // again, and the newest word for it.
                        newest_word(&mut c, entry);
                    }
                    reply.leave_unsettled(&mut c, was != *new && !reply.late);
                }
                if noted || reply.change.is_some() {
                    cases.insert(case.as_str(), encode(&c))?;
                }
                if let Some(rule) = reply.ignore {
                    ignores.insert(rule.key().as_bytes(), encode(rule))?;
                }
                let queue = MailTrees {
                    outbox,
                    outbox_raw,
                    outbox_by_case,
                    messages,
                    events,
                };
                for (m, mseq) in reply.mails.iter().zip(&mail_seqs) {
                    let ev = note_event(&c, m.cause.clone(), m.note.clone(), m.entry.queued_at);
                    queue.put(case, &m.entry, &m.raw, &ev, *mseq)?;
                }
                Ok(Recorded::New)
            },
        );
        self.committed(result)
    }

    /// A case's thread in arrival order.
    pub fn thread(&self, case: &CaseId) -> Result<Vec<ThreadEntry>, StoreError> {
        self.thread
            .scan_prefix(case_prefix(case))
            .map(|kv| {
                let (k, v) = kv?;
                decode("thread", &k, &v)
            })
            .collect()
    }

    /// The name `address` last gave in a case's thread (the latest of its
    /// messages, read from the end: the one asked about is usually recent).
    pub fn sender_name(&self, case: &CaseId, address: &str) -> Result<Option<String>, StoreError> {
        for kv in self.thread.scan_prefix(case_prefix(case)).rev() {
            let (k, v) = kv?;
            let e: ThreadEntry = decode("thread", &k, &v)?;
            if e.from == address {
                return Ok(Some(e.from_name));
            }
        }
        Ok(None)
    }

    /// Every case with its events and thread.
    pub fn case_records(&self) -> Result<Vec<crate::model::case::CaseRecord>, StoreError> {
        let mut out = Vec::new();
        for c in self.cases()? {
            let (ev, th) = self.history(&c.id)?;
            out.push((c, ev, th));
        }
        Ok(out)
    }

    /// A case's history and thread: what a `CaseRecord` holds besides the
    /// case.
    pub fn history(
        &self,
        case: &CaseId,
    ) -> Result<(Vec<crate::model::case::Event>, Vec<ThreadEntry>), StoreError> {
        Ok((self.events(case)?, self.thread(case)?))
    }

    /// Every Message-ID perfbot knows to belong to a case thread.
    pub fn known_message_ids(&self) -> Result<Vec<(MessageId, CaseId)>, StoreError> {
        self.messages
            .iter()
            .map(|kv| {
                let (k, v) = kv?;
                let r: MessageRef = decode("messages", &k, &v)?;
                let id = MessageId::parse(&String::from_utf8_lossy(&k)).ok_or_else(|| {
                    StoreError::Record {
                        tree: "messages",
                        key: String::from_utf8_lossy(&k).into_owned(),
                        why: "not a Message-ID".into(),
                    }
                })?;
                Ok((id, r.case_id))
            })
            .collect()
    }

    /// Keep an unreadable message: its bytes in `state/quarantine/<hash>.eml`,
    /// its record here. `false` when it was quarantined before.
    pub fn quarantine(&self, q: &Quarantined, raw: &[u8]) -> Result<bool, StoreError> {
        if let Some(bytes) = self.quarantine.get(&q.hash)? {
            // Kept already. A later reading that matched it to a case (read
            // again once its report came, or kept before cases were noted)
            // names the case; nothing else changes.
            let mut kept: Quarantined = decode("quarantine", q.hash.as_bytes(), &bytes)?;
            if kept.case.is_none() && q.case.is_some() {
                kept.case = q.case.clone();
                self.quarantine.insert(q.hash.as_str(), encode(&kept))?;
                self.flush()?;
            }
            return Ok(false);
        }
        let dir = self.dir.join("quarantine");
        // The hash is hex: a safe file name as it is.
        crate::fsutil::write_atomic(&dir, &format!("{}.eml", q.hash), raw).map_err(|e| {
            StoreError::Corrupt {
                path: dir.display().to_string(),
                why: e.to_string(),
            }
        })?;
        self.quarantine.insert(q.hash.as_str(), encode(q))?;
        self.flush()?;
        Ok(true)
    }

    pub fn quarantined(&self) -> Result<Vec<Quarantined>, StoreError> {
        let mut v: Vec<Quarantined> = decode_all("quarantine", self.quarantine.iter())?;
        v.sort_by_key(|q| q.time);
        Ok(v)
    }

    /// How many messages the quarantine holds, none of them decoded (the
    /// gauge `/metrics` reads on every scrape).
    pub fn quarantine_len(&self) -> usize {
        self.quarantine.len()
    }

    /// A quarantined message read again and still not read: its reason now,
    /// its first quarantine's time kept.
    pub fn requarantine(&self, hash: &str, reason: &str) -> Result<(), StoreError> {
        let Some(bytes) = self.quarantine.get(hash)? else {
            return Ok(());
        };
        let mut q: Quarantined = decode("quarantine", hash.as_bytes(), &bytes)?;
        if q.reason != reason {
            q.reason = reason.to_string();
            self.quarantine.insert(hash, encode(&q))?;
            self.flush()?;
        }
        Ok(())
    }

    /// Let a quarantined message go: read since (`quarantine retry`) or
    /// dropped by an operator. The record goes first, so a crash between
    /// leaves a file no list names rather than a record without its bytes.
    pub fn release_quarantined(&self, q: &Quarantined) -> Result<(), StoreError> {
        self.quarantine.remove(q.hash.as_str())?;
        self.flush()?;
        let dir = self.dir.join("quarantine");
        for name in [
            format!("{}.eml", q.hash),
            format!("{}@quarantine.eml", q.hash),
            format!("{}_quarantine.eml", q.hash),
        ] {
            match std::fs::remove_file(dir.join(&name)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(StoreError::Corrupt {
                        path: dir.join(name).display().to_string(),
                        why: e.to_string(),
                    })
                }
            }
        }
        Ok(())
    }

    /// The raw bytes of a quarantined message. Older versions named the file
    /// after a Message-ID made of the hash; those names are still found.
    pub fn quarantined_raw(&self, q: &Quarantined) -> Result<Vec<u8>, StoreError> {
        let dir = self.dir.join("quarantine");
        let names = [
            format!("{}.eml", q.hash),
            format!("{}@quarantine.eml", q.hash),
            format!("{}_quarantine.eml", q.hash),
        ];
        let path = names
            .iter()
            .map(|n| dir.join(n))
            .find(|p| p.exists())
            .unwrap_or_else(|| dir.join(&names[0]));
        std::fs::read(&path).map_err(|e| StoreError::Corrupt {
            path: path.display().to_string(),
            why: e.to_string(),
        })
    }

    /// Record that a message of an archive could not be read (again): a
    /// first failure is kept as it is, a later one counts a try.
    pub fn record_unreadable(&self, u: &Unreadable) -> Result<(), StoreError> {
        let key = unreadable_key(&u.repository, &u.commit);
        let record = match self.unreadable.get(&key)? {
            Some(v) => {
                let mut old: Unreadable = decode("unreadable", &key, &v)?;
                old.tries += 1;
                old.last_tried = u.last_tried;
                old.reason.clone_from(&u.reason);
                old.object.clone_from(&u.object);
                old
            }
            None => u.clone(),
        };
        self.unreadable.insert(key, encode(&record))?;
        Ok(())
    }

    /// The unreadable messages of one repository (`None`: of every one), in
    /// the order they were first seen.
    pub fn unreadable(&self, repository: Option<&str>) -> Result<Vec<Unreadable>, StoreError> {
        let prefix = repository.map(|r| format!("{r}\0")).unwrap_or_default();
        let mut v: Vec<Unreadable> =
            decode_all("unreadable", self.unreadable.scan_prefix(prefix.as_bytes()))?;
        v.sort_by_key(|u| u.first_seen);
        Ok(v)
    }

    /// A message once unreadable has been read: forget the failure.
    pub fn clear_unreadable(&self, repository: &str, commit: &str) -> Result<(), StoreError> {
        self.unreadable.remove(unreadable_key(repository, commit))?;
        Ok(())
    }
}

fn unreadable_key(repository: &str, commit: &str) -> Vec<u8> {
    format!("{repository}\0{commit}").into_bytes()
}
