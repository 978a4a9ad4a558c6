//! Mail coming in: parsing, who sent it, which case thread it belongs to, and
//! the sources it is read from (IMAP, maildir, mbox, standard input).

pub mod flowed;
pub mod imap_source;
pub mod ingestor;
pub mod mbox;
pub mod parse;
pub mod sender;
pub mod sources;
pub mod thread;

pub use ingestor::{Ingestor, Outcome, Stats};
