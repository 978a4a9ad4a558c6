//! `perfbot ignores`: the `#perfbot ignore` rules people gave, and an
//! operator's undo.

use clap::Subcommand;

use super::{open_store, Failure};
use crate::config::Config;

#[derive(Subcommand, Debug)]
pub enum IgnoresCmd {
    /// List the rules: what, where, by whom, in which mail
    List {
        /// As JSON, for scripts
        #[arg(long)]
        json: bool,
    },
    /// Drop the rules a mail gave (its Message-ID), or only its rule for one
    /// metric or testcase
    Drop {
        message_id: String,
        what: Option<String>,
    },
}

pub fn run(config: &Config, c: IgnoresCmd) -> Result<(), Failure> {
    let store = open_store(config)?;
    match c {
        IgnoresCmd::List { json } => {
            let rules = store.ignores()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&rules)?);
            } else if rules.is_empty() {
                println!("no #perfbot ignore rule");
            }
            for r in rules.iter().filter(|_| !json) {
                println!(
                    "{}  case {}  {}",
                    r.at.format("%Y-%m-%d %H:%M"),
                    r.case,
                    r.describe()
                );
            }
        }
        IgnoresCmd::Drop { message_id, what } => {
            let id = message_id.trim_matches(['<', '>']);
            let doomed: Vec<_> = store
                .ignores()?
                .into_iter()
                .filter(|r| r.message_id.as_str() == id)
                .filter(|r| what.as_deref().is_none_or(|w| w == r.what))
                .collect();
            if doomed.is_empty() {
                return Err(Failure::usage(anyhow::anyhow!(
                    "no ignore rule from <{id}>{}",
                    what.map(|w| format!(" for {w}")).unwrap_or_default()
                )));
            }
            for r in &doomed {
                store.drop_ignore(&r.key())?;
                eprintln!("dropped: {}", r.describe());
            }
        }
    }
    Ok(())
}
