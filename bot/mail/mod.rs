//! Mail at the edge: building RFC 5322 messages, the transports that carry
//! them (files, standard output, SMTP), IMAP access, DKIM verification, and the
//! guard rails applied at send time.

pub mod dkim;
pub mod guard;
pub mod imap;
pub mod message;
pub mod smtp;
pub mod transport;
