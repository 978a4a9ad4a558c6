//! `perfbot quarantine`: messages that could not be read, kept with the reason.

use anyhow::anyhow;
use clap::Subcommand;

use super::{open_store, Failure};
use crate::config::Config;

#[derive(Subcommand, Debug)]
pub enum QuarantineCmd {
    /// List quarantined messages
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
            if json {
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else if list.is_empty() {
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
