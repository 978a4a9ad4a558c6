//! Mail coming in: parsing, who sent it, which case thread it belongs to, and
//! the sources it is read from (IMAP, maildir, mbox, standard input).

pub mod flowed;
pub mod imap_source;
pub(crate) mod ingestor;
pub(crate) mod mbox;
pub mod parse;
pub mod public_inbox;
pub(crate) mod sender;
pub(crate) mod sources;
pub mod thread;

pub use ingestor::{Ingestor, Outcome, Stats};
