//! `perfbot remind`: queue the reminders that are due, mark stale cases.

use chrono::Utc;
use clap::Args;

use super::{open_store, Failure};
use crate::config::Config;

#[derive(Args, Debug)]
pub struct RemindArgs {
    /// Say what would be queued; change nothing
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(config: &Config, a: RemindArgs) -> Result<(), Failure> {
    let store = open_store(config)?;
    let lines = crate::flows::remind::run(config, &store, Utc::now(), a.dry_run)?;
    if lines.is_empty() {
        eprintln!("no reminder due, no case gone stale");
    }
    for l in lines {
        eprintln!("{l}");
    }
    Ok(())
}
