//! Replies to a case's thread, as pure engines:
//!
//! - `understand`: what a reply says — the replier's own words, the phrase
//!   rules, the learned model, `#perfbot` commands and kernel trailers.
//! - `policy`: who is speaking and what that does to the case — roles and
//!   trust, the state machine, and the mails that follow, as data.
//!
//! The flow that gathers the facts and records a reply is `flows::reply`.

pub mod policy;
pub mod understand;

pub use understand::{understand, Intent, Understanding};
