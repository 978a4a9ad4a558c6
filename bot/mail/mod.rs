//! Mail: message identity and building, transports, guard rails, inbound sources.

pub mod address;
pub mod deliver;
pub mod followup;
pub mod guard;
pub mod imap;
pub mod message;
pub mod server_url;
pub mod smtp;
pub mod transport;

pub use address::{Address, MessageId};
