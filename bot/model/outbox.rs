//! Mail perfbot sends: each mail's delivery record, and what the Message-ID
//! index says about a message (ours or theirs, of which case).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::case::CaseId;
use super::ids::MessageId;
use super::thread::Sender;

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

    pub const ALL: [OutboxState; 6] = [
        OutboxState::Queued,
        OutboxState::Sending,
        OutboxState::Sent,
        OutboxState::Failed,
        OutboxState::Dead,
        OutboxState::Held,
    ];

    pub fn parse(s: &str) -> Option<OutboxState> {
        OutboxState::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// Still to leave: queued, held, being handed over or failing for now.
    pub fn pending(self) -> bool {
        !matches!(self, OutboxState::Sent | OutboxState::Dead)
    }
}

/// What a mail perfbot sends is (its outbox record's `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutboxKind {
    /// A regression or improvement report: the root of a case's thread.
    Report,
    /// To the sender: a settled decision acknowledged.
    Ack,
    /// To the sender: their `#perfbot` line(s) could not be followed.
    CommandError,
    /// To the operators: a human is needed.
    Escalation,
    /// In the thread: a polite ping when nobody answered.
    Reminder,
    /// To the operators: the thread-status digest.
    Digest,
    /// In the thread: an operator's own words (`perfbot cases reply`).
    Note,
}

impl OutboxKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OutboxKind::Report => "report",
            OutboxKind::Ack => "ack",
            OutboxKind::CommandError => "command-error",
            OutboxKind::Escalation => "escalation",
            OutboxKind::Reminder => "reminder",
            OutboxKind::Digest => "digest",
            OutboxKind::Note => "note",
        }
    }

    /// Written by perfbot itself, not by a person: other robots must not
    /// answer it, and a reply that only repeats it says nothing.
    pub fn automatic(self) -> bool {
        matches!(
            self,
            OutboxKind::Ack
                | OutboxKind::CommandError
                | OutboxKind::Escalation
                | OutboxKind::Reminder
        )
    }

    /// An answer to one sender's mail (limited per sender and hour).
    pub fn answer(self) -> bool {
        matches!(self, OutboxKind::Ack | OutboxKind::CommandError)
    }
}

impl std::fmt::Display for OutboxKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboxEntry {
    pub message_id: MessageId,
    pub case_id: CaseId,
    pub kind: OutboxKind,
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
    /// Recipients the server refused permanently (with its words): the mail
    /// went to the others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
    /// Why it is held for a human, when it is not moderation that holds it
    /// (the noise gate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_because: Option<String>,
    /// The last attempt ended with the server silent, perhaps after it had
    /// the whole mail: before the next, perfbot's own mailbox is searched
    /// for it, as for a mail whose sending was cut short.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fate_unknown: bool,
}

impl OutboxEntry {
    /// A mail just queued: due at `now`, no attempt yet.
    pub fn queued(
        message_id: MessageId,
        case_id: CaseId,
        kind: OutboxKind,
        subject: String,
        recipients: Vec<String>,
        now: DateTime<Utc>,
    ) -> OutboxEntry {
        OutboxEntry {
            message_id,
            case_id,
            kind,
            subject,
            state: OutboxState::Queued,
            recipients,
            attempts: 0,
            queued_at: now,
            next_attempt_at: now,
            sent_at: None,
            last_error: None,
            server_reply: None,
            refused: Vec::new(),
            held_because: None,
            fate_unknown: false,
        }
    }
}

/// Whose a message in the Message-ID index is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// perfbot sent it.
    Ours,
    /// A message of the thread from someone else.
    Theirs,
}

/// What kind of message an index entry is: one of perfbot's mails, or who
/// sent someone else's (the two vocabularies share no word).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RefKind {
    Ours(OutboxKind),
    Theirs(Sender),
}

/// What the Message-ID index says about a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageRef {
    pub case_id: CaseId,
    pub direction: Direction,
    pub kind: RefKind,
}

impl MessageRef {
    pub fn ours(case: &CaseId, kind: OutboxKind) -> Self {
        MessageRef {
            case_id: case.clone(),
            direction: Direction::Ours,
            kind: RefKind::Ours(kind),
        }
    }

    pub fn theirs(case: &CaseId, sender: Sender) -> Self {
        MessageRef {
            case_id: case.clone(),
            direction: Direction::Theirs,
            kind: RefKind::Theirs(sender),
        }
    }

    /// perfbot's own mail of this kind, if it is one.
    pub fn our_kind(&self) -> Option<OutboxKind> {
        match self.kind {
            RefKind::Ours(k) if self.direction == Direction::Ours => Some(k),
            _ => None,
        }
    }
}
