//! `perfbot optout`: addresses that never get mail from perfbot.

use anyhow::anyhow;
use chrono::Utc;
use clap::Subcommand;

use super::{open_store, who, Failure};
use crate::config::Config;
use crate::model::Address;
use crate::store::optout::OptOut;

#[derive(Subcommand, Debug)]
pub enum OptoutCmd {
    /// Never send mail to this address again
    Add {
        /// The address (`name@example.org` or `Name <name@example.org>`)
        #[arg(value_parser = address)]
        address: Address,
        /// Why, in a few words; kept with the address
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Allow mail to this address again
    Remove {
        /// The address as `optout list` shows it
        #[arg(value_parser = address)]
        address: Address,
    },
    /// List opted-out addresses (config and database)
    List,
}

impl OptoutCmd {
    pub fn only_prints(&self) -> bool {
        matches!(self, OptoutCmd::List)
    }
}

fn address(s: &str) -> Result<Address, String> {
    Address::parse(s).ok_or_else(|| format!("not an e-mail address: {s:?}"))
}

pub fn run(config: &Config, c: OptoutCmd) -> Result<(), Failure> {
    let store = open_store(config)?;
    match c {
        OptoutCmd::Add { address, reason } => {
            let new = store.optout_add(&OptOut {
                address: address.clone(),
                added: Utc::now(),
                by: who(),
                reason,
            })?;
            let what = if new {
                "opted out"
            } else {
                "was opted out already"
            };
            eprintln!("{address} {what}");
        }
        OptoutCmd::Remove { address } => {
            let stored = store.optout_remove(&address)?;
            // The config's list is the operator's file: perfbot cannot
            // edit it, so an address there still gets no mail.
            if config.file.outbound.optout.contains(&address) {
                let also = if stored {
                    " (its entry in the database is removed)"
                } else {
                    ""
                };
                return Err(anyhow!(
                    "{address} is opted out in {}; remove it there{also}",
                    config.source
                )
                .into());
            }
            if stored {
                eprintln!("{address} gets mail again");
            } else {
                eprintln!("{address} was not opted out");
            }
        }
        OptoutCmd::List => {
            let stored = store.optouts()?;
            if stored.is_empty() && config.file.outbound.optout.is_empty() {
                println!("no opt-outs");
            }
            for a in &config.file.outbound.optout {
                println!("{a}\t(config)");
            }
            for o in stored {
                let why = if o.reason.is_empty() {
                    String::new()
                } else {
                    format!(": {}", o.reason)
                };
                println!(
                    "{}\t{} by {}{why}",
                    o.address,
                    crate::model::shown_time(o.added),
                    o.by,
                );
            }
        }
    }
    Ok(())
}
