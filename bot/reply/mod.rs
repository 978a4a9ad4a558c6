//! Replies to a case's thread, in three parts:
//!
//! - `understand`: what a reply says — the replier's own words, the phrase
//!   rules, the learned model, `#perfbot` commands and kernel trailers. Pure.
//! - `policy`: who is speaking and what that does to the case — roles and
//!   trust, the state machine, and the mails that follow, as data. Pure.
//! - `handle`: the one part with I/O — gathers the facts, records the reply
//!   and everything it does in one write. (`dkim` verifies signatures.)

pub mod dkim;
pub mod handle;
pub mod policy;
pub mod understand;

pub use understand::{understand, Intent, Understanding};

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
