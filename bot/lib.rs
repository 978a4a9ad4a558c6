//! perfbot: performance-regression reports in the kernel-test-robot style, sent
//! to mailing lists, tracked as cases, and followed through their threads.
//!
//! # Layout
//!
//! Layers, bottom up; a module imports only from layers below it
//! (`tests/layers.rs` checks; ARCHITECTURE.md is the map and the invariants):
//!
//! 0. `model` — the values passed around (ids, cases, table rows, outbox and
//!    thread records); `fsutil` — files written whole or not at all.
//! 1. `compare` (statistics, selection, headline) and `templates` (every
//!    Handlebars template and how it renders). Pure.
//! 2. `input` — report inputs and their validation.
//! 3. Pure engines: `report` (the table, plots, the view model), `reply`
//!    (understanding a reply; the policy of what it does), `digest`.
//! 4. `config` (typed, validated at start-up) and `store` (sled; nothing else
//!    touches it).
//! 5. `mail` — building messages, SMTP, IMAP, DKIM, guard rails.
//! 6. `flows` — the jobs: the report pipeline, ingestion, reply handling,
//!    delivery, follow-ups, reminders, the digest.
//! 7. `app` — the command line (a file per subcommand), the daemon, the
//!    dashboard, benchmarks, the reply evaluation.
//!
//! The public API is what the tests and an embedding need; the rest is
//! `pub(crate)`.

pub mod app;
pub mod compare;
pub mod config;
pub(crate) mod digest;
pub mod flows;
pub(crate) mod fsutil;
pub mod input;
pub mod mail;
pub mod model;
pub mod reply;
pub mod report;
pub mod store;
pub(crate) mod templates;
