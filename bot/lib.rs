//! perfbot: performance-regression reports in the kernel-test-robot style, sent
//! to mailing lists, tracked as cases, and followed through their threads.
//!
//! # Layout
//!
//! Five layers; each imports only from the layers below it (`tests/layers.rs`
//! checks, and ARCHITECTURE.md draws the map):
//!
//! 1. `model` — the values passed around (ids, cases, table rows, outbox and
//!    thread records). Imports nothing of the crate. `fsutil` — atomic and
//!    bounded file access.
//! 2. Engines, pure: `compare` (statistics, selection, headline), `report`
//!    (the table, plots, the view model and its rendering), `reply`
//!    (understanding a reply; the policy of what it does), `templates` (the
//!    built-in templates and how they render).
//! 3. Infrastructure: `config` (validated at start-up), `store` (sled, and
//!    nothing else touches it), `mail` (building messages, SMTP, IMAP, DKIM),
//!    `input` (report inputs and matrix files from disk).
//! 4. `flows`: the jobs — the report pipeline, ingestion, reply handling,
//!    delivery, follow-ups, the digest, reminders.
//! 5. `app`: the command line (a file per subcommand), the daemon, the
//!    dashboard, benchmarks, the reply evaluation.

pub mod app;
pub mod compare;
pub mod config;
pub mod digest;
pub mod flows;
pub mod fsutil;
pub mod input;
pub mod mail;
pub mod model;
pub mod reply;
pub mod report;
pub mod store;
pub mod templates;
