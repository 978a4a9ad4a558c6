//! Understanding replies: the replier's own words, what they mean (intent,
//! confidence, evidence), explicit commands, who may decide, and what each
//! decision does to a case.

pub mod classify;
pub mod command;
pub mod dkim;
pub mod effect;
pub mod handle;
pub mod intent;
pub mod policy;
pub mod quote;
pub mod rules;
pub mod trust;

pub use classify::{understand, Understanding};
pub use intent::Intent;

use crate::inbound::parse::{parse, parse_head, Limits};

/// The body text of `input`: a raw RFC 5322 message, or plain text.
pub fn body_of(input: &[u8]) -> String {
    let limits = Limits::default();
    if parse_head(input, &limits).is_ok() {
        if let Ok(m) = parse(input, &limits) {
            return m.text;
        }
    }
    String::from_utf8_lossy(input).replace("\r\n", "\n")
}
