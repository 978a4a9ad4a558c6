//! Mail coming in: parsing, who sent it, which case thread it belongs to, and
//! the sources it is read from (IMAP, maildir, mbox, standard input).

pub(crate) mod early;
pub(crate) mod failing;
pub mod flowed;
pub(crate) mod html;
pub mod imap_source;
pub(crate) mod ingestor;
pub(crate) mod mbox;
pub(crate) mod mend;
pub mod parse;
pub mod public_inbox;
pub(crate) mod sender;
pub(crate) mod sources;
pub mod thread;

pub use ingestor::{Ingestor, Outcome, Stats};

/// A message bigger than this many times `inbound.max_message_bytes` is not
/// read at all, from any source (memory stays bounded by the limit, not by
/// what a mailbox or an archive holds): it is recorded as unreadable, and
/// read once the limit is raised. Within it, the first `max_message_bytes`
/// are read (`parse::parse`).
pub const OVERSIZE_FACTOR: usize = 4;
