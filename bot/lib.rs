//! perfbot: performance-regression reports in the kernel-test-robot style, sent
//! to mailing lists, tracked as cases, and followed through their threads.
//!
//! The decision-making core (statistics, table, plots, classifier, state machine)
//! is plain synchronous code; I/O sits at the edges (`mail`, `store`, `daemon`).

pub mod bench;
pub mod case;
pub mod cli;
pub mod compare;
pub mod config;
pub mod daemon;
pub mod digest;
pub mod error;
pub mod eval;
pub mod inbound;
pub mod input;
pub mod mail;
pub mod remind;
pub mod reply;
pub mod report;
pub mod store;
pub mod templates;
pub mod web;
