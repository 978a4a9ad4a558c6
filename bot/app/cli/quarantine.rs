//! `perfbot quarantine`: messages that could not be read, kept with the reason.

use anyhow::anyhow;
use clap::Subcommand;

use super::{open_store, Failure};
use crate::config::Config;
use crate::flows::ingest::{Ingestor, Outcome};
use crate::model::thread::short_hash;
use crate::model::{Held, Quarantined, Unreadable};
use crate::store::{Store, StoreError};

#[derive(Subcommand, Debug)]
pub enum QuarantineCmd {
    /// List quarantined messages, and the messages of archives and
    /// mailboxes that could not be read out of them (missing or damaged
    /// objects, over the size cap)
    List {
        /// As JSON, for scripts
        #[arg(long)]
        json: bool,
    },
    /// Print a quarantined message's raw bytes
    Show {
        /// The hash `quarantine list` shows, or enough of its start
        hash: String,
    },
    /// Read quarantined messages again (after an upgrade, or a limit
    /// raised): those read now leave the quarantine, the others stay with
    /// the reason they have now
    Retry {
        /// Hashes (or their starts) as `quarantine list` shows them; none:
        /// every quarantined message
        hashes: Vec<String>,
    },
    /// Delete a quarantined message for good (its bytes and its record)
    Drop {
        /// The hash `quarantine list` shows, or enough of its start
        hash: String,
    },
}

impl QuarantineCmd {
    /// `retry` and `drop` change the state: a closed pipe must not end them
    /// part way.
    pub fn only_prints(&self) -> bool {
        matches!(
            self,
            QuarantineCmd::List { .. } | QuarantineCmd::Show { .. }
        )
    }
}

pub fn run(config: &Config, c: QuarantineCmd) -> Result<(), Failure> {
    let store = open_store(config)?;
    match c {
        QuarantineCmd::List { json } => list(&store, json),
        QuarantineCmd::Show { hash } => show(&store, &hash),
        QuarantineCmd::Retry { hashes } => retry(config, &store, &hashes),
        QuarantineCmd::Drop { hash } => {
            let q = find(&store, &hash)?;
            store.release_quarantined(&q)?;
            eprintln!(
                "dropped {} ({} bytes, {}; from {})",
                q.hash, q.size, q.reason, q.source
            );
            Ok(())
        }
    }
}

fn list(store: &Store, json: bool) -> Result<(), Failure> {
    let list = store.quarantined()?;
    let unreadable = store.unreadable(None)?;
    let held = store.held()?;
    let (early, early_bytes) = store.early_count()?;
    if json {
        #[derive(serde::Serialize)]
        struct Early {
            replies: usize,
            bytes: u64,
        }
        #[derive(serde::Serialize)]
        struct Listing<'a> {
            messages: &'a [Quarantined],
            unreadable: &'a [Unreadable],
            held: &'a [Held],
            /// Replies about no case kept for the message they answer.
            early: Early,
        }
        let listing = Listing {
            messages: &list,
            unreadable: &unreadable,
            held: &held,
            early: Early {
                replies: early,
                bytes: early_bytes,
            },
        };
        println!("{}", serde_json::to_string_pretty(&listing)?);
        return Ok(());
    }
    for u in &unreadable {
        println!("{}", unreadable_line(u));
    }
    for h in &held {
        println!("{}", held_line(h));
    }
    if list.is_empty() && unreadable.is_empty() && held.is_empty() {
        println!("nothing quarantined");
    }
    if early > 0 {
        // Many, and about no case yet: counted, not listed.
        println!(
            "{early} {} about no case ({early_bytes} bytes) kept until the message {} answer is read (inbound.early_replies_bytes)",
            if early == 1 { "reply" } else { "replies" },
            if early == 1 { "it" } else { "they" },
        );
    }
    for q in &list {
        println!("{}", quarantined_line(q));
    }
    Ok(())
}

/// A message of an archive or a mailbox that could not be read out of it.
fn unreadable_line(u: &Unreadable) -> String {
    format!(
        "{}  unreadable  tried {}×, last {}  {}\n    {}",
        crate::model::shown_time(u.first_seen),
        u.tries,
        crate::model::shown_time(u.last_tried),
        u.reason,
        u.place()
    )
}

/// A reply held until the report it answers is read.
fn held_line(h: &Held) -> String {
    format!(
        "{}  held  {} bytes  answers a report not read yet: {}\n    {} <{}>",
        crate::model::shown_time(h.time),
        h.size,
        h.subject,
        h.source,
        h.message_id
    )
}

/// A message that could not be read, with the reason.
fn quarantined_line(q: &Quarantined) -> String {
    format!(
        "{}  {}  {} bytes  {}\n    {}{}{}",
        crate::model::shown_time(q.time),
        short_hash(&q.hash),
        q.size,
        q.reason,
        q.source,
        q.message_id
            .as_ref()
            .map(|m| format!(" <{m}>"))
            .unwrap_or_default(),
        q.case
            .as_ref()
            .map(|c| format!(", a reply in case {c}"))
            .unwrap_or_default()
    )
}

/// A quarantined message's raw bytes, by (a prefix of) its hash.
fn show(store: &Store, hash: &str) -> Result<(), Failure> {
    let q = find(store, hash)?;
    use std::io::Write;
    std::io::stdout().write_all(&store.quarantined_raw(&q)?)?;
    Ok(())
}

/// The one quarantined message whose hash starts with `hash`.
fn find(store: &Store, hash: &str) -> Result<Quarantined, Failure> {
    let prefix = hash.trim().to_ascii_lowercase();
    if prefix.is_empty() {
        return Err(Failure::usage(anyhow!(
            "a hash is needed (its start will do; `perfbot quarantine list` shows them)"
        )));
    }
    let mut found: Vec<_> = store
        .quarantined()?
        .into_iter()
        .filter(|q| q.hash.starts_with(&prefix))
        .collect();
    if found.len() > 1 {
        return Err(Failure::usage(anyhow!(
            "{hash:?} starts {} quarantined messages' hashes: give more of it",
            found.len()
        )));
    }
    found
        .pop()
        .ok_or_else(|| Failure::usage(anyhow!("no quarantined message {hash}")))
}

/// Read the messages `hashes` name (all when none) again, each said with
/// what became of it.
fn retry(config: &Config, store: &Store, hashes: &[String]) -> Result<(), Failure> {
    let list = if hashes.is_empty() {
        store.quarantined()?
    } else {
        let mut v = hashes
            .iter()
            .map(|h| find(store, h))
            .collect::<Result<Vec<_>, _>>()?;
        // The same message named twice (two starts of its hash) is read once.
        let mut seen = std::collections::HashSet::new();
        v.retain(|q| seen.insert(q.hash.clone()));
        v
    };
    let mut ing = Ingestor::new(config, store)?;
    let (mut read, mut kept, mut lost) = (0, 0, 0);
    for q in &list {
        let short = short_hash(&q.hash);
        match ing.retry_quarantined(q) {
            Ok(outcome) => {
                if matches!(outcome, Outcome::Quarantined(_)) {
                    kept += 1;
                } else {
                    read += 1;
                }
                println!("{short}  {}", retried(&outcome));
            }
            // Its bytes are gone or unreadable: said, and the others are
            // still tried.
            Err(StoreError::Corrupt { path, why }) => {
                lost += 1;
                println!("{short}  not read: {path}: {why}");
            }
            Err(e) => return Err(e.into()),
        }
    }
    eprintln!("read {read}, still quarantined {kept}");
    if lost > 0 {
        return Err(anyhow!(
            "{lost} quarantined message(s) could not be read from the state directory; \
             their records stay (`perfbot quarantine drop` removes one)"
        )
        .into());
    }
    Ok(())
}

/// What became of a message read again.
fn retried(o: &Outcome) -> String {
    match o {
        Outcome::New { case, .. } => format!("read into case {case}'s thread"),
        Outcome::Duplicate => "read: its thread has it already".into(),
        Outcome::Unmatched => "read: about no case".into(),
        Outcome::Held => "read: held until the report it answers is read".into(),
        Outcome::Adopted { case } => format!("read: a robot's report, adopted as case {case}"),
        Outcome::ReadInFull { case } => format!("read: case {case}'s report in full"),
        Outcome::Quarantined(why) => format!("still quarantined: {why}"),
    }
}
