//! The bottom layer: the values everything else passes around — Message-IDs
//! and addresses, cases and their events, table rows, bisect samples, outbox
//! records and thread messages, input errors, server URLs. Plain data with
//! their own small rules (parsing an id, naming a state); this module imports
//! nothing else of the crate.

pub mod bisect;
pub mod case;
pub mod charset;
pub mod error;
pub mod ids;
pub mod ignore;
pub mod layout;
pub mod list_policy;
pub mod outbox;
pub mod quote_marks;
pub mod series;
pub mod spacing;
pub mod subject;
pub mod table;
pub mod thread;
pub mod url;

pub use case::{Case, CaseId, CaseState, Cause, Event};
pub use charset::Charset;
pub use ids::{Address, MessageId};
pub use outbox::{Direction, MessageRef, OutboxEntry, OutboxKind, OutboxState, RefKind};
pub use thread::{
    Chosen, EarlyReply, Held, MailSource, MatchedBy, OperatorLabel, Quarantined, Reading, Sender,
    SenderKind, ThreadEntry, Unreadable,
};

/// A time in a line for people ("2026-12-05 10:20:31 UTC"), not the
/// nanoseconds of RFC 3339 that JSON and the logs keep.
pub fn shown_time(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// `shown_time` to the minute ("2026-12-05 10:20 UTC"), where seconds say
/// nothing (a digest's period, an embargo's end).
pub fn shown_minute(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// "1 thread", "2 threads": a count with its noun in the number it takes.
pub fn counted(n: impl std::fmt::Display, one: &str, many: &str) -> String {
    let n = n.to_string();
    let noun = if n == "1" { one } else { many };
    format!("{n} {noun}")
}
