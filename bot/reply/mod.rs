//! Understanding replies: the replier's own words first.

pub mod quote;
