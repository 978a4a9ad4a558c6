//! `perfbot quarantine`: messages that could not be read, kept with the reason.

use anyhow::anyhow;
use clap::Subcommand;

use super::{open_store, Failure};
use crate::config::Config;

#[derive(Subcommand, Debug)]
pub enum QuarantineCmd {
    /// List quarantined messages, and the messages of archives that could
    /// not be read out of them (missing or damaged objects)
    List {
        #[arg(long)]
        json: bool,
    },
    /// Print a quarantined message's raw bytes
    Show { hash: String },
}

pub fn run(config: &Config, c: QuarantineCmd) -> Result<(), Failure> {
    let store = open_store(config)?;
    match c {
        QuarantineCmd::List { json } => {
            let list = store.quarantined()?;
            let unreadable = store.unreadable(None)?;
            let held = store.held()?;
            if json {
                #[derive(serde::Serialize)]
                struct Listing<'a> {
                    messages: &'a [crate::model::Quarantined],
                    unreadable: &'a [crate::model::Unreadable],
                    held: &'a [crate::model::Held],
                }
                let listing = Listing {
                    messages: &list,
                    unreadable: &unreadable,
                    held: &held,
                };
                println!("{}", serde_json::to_string_pretty(&listing)?);
                return Ok(());
            }
            for u in &unreadable {
                println!(
                    "{}  unreadable  tried {}×, last {}  {}\n    {} commit {}{}",
                    u.first_seen.format("%Y-%m-%d %H:%M:%S"),
                    u.tries,
                    u.last_tried.format("%Y-%m-%d %H:%M:%S"),
                    u.reason,
                    u.repository.trim_start_matches("public-inbox:"),
                    u.commit,
                    u.object
                        .as_ref()
                        .filter(|o| **o != u.commit)
                        .map(|o| format!(" object {o}"))
                        .unwrap_or_default()
                );
            }
            for h in &held {
                println!(
                    "{}  held  {} bytes  answers a report not read yet: {}\n    {} <{}>",
                    h.time.format("%Y-%m-%d %H:%M:%S"),
                    h.size,
                    h.subject,
                    h.source,
                    h.message_id
                );
            }
            if list.is_empty() && unreadable.is_empty() && held.is_empty() {
                println!("nothing quarantined");
            } else {
                for q in &list {
                    println!(
                        "{}  {}  {} bytes  {}\n    {}{}",
                        q.time.format("%Y-%m-%d %H:%M:%S"),
                        &q.hash[..16.min(q.hash.len())],
                        q.size,
                        q.reason,
                        q.source,
                        q.message_id
                            .as_ref()
                            .map(|m| format!(" <{m}>"))
                            .unwrap_or_default()
                    );
                }
            }
        }
        QuarantineCmd::Show { hash } => {
            let q = store
                .quarantined()?
                .into_iter()
                .find(|q| q.hash.starts_with(&hash.to_ascii_lowercase()))
                .ok_or_else(|| anyhow!("no quarantined message {hash}"))?;
            use std::io::Write;
            std::io::stdout().write_all(&store.quarantined_raw(&q)?)?;
        }
    }
    Ok(())
}
