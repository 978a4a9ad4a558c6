//! Mail: message identity and building, transports, inbound sources.

pub mod address;
pub mod deliver;
pub mod message;
pub mod transport;

pub use address::MessageId;
