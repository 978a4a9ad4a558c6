//! Mail at the edge: building RFC 5322 messages, the transports that carry
//! them (files, standard output, SMTP), IMAP access, DKIM verification, and the
//! guard rails applied at send time.

pub mod ca;
pub(crate) mod dkim;
pub(crate) mod guard;
pub mod imap;
pub(crate) mod message;
pub mod smtp;
pub(crate) mod transport;
