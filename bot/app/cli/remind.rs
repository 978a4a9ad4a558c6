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
    // Off means off, by hand as in the daemon: nobody is pinged and no
    // case goes stale; a dry run still says what would be due.
    if !config.file.reminders.enabled && !a.dry_run {
        return Err(Failure::usage(anyhow::anyhow!(
            "reminders are off (`[reminders] enabled = false`): nothing queued, no case marked \
             stale; `perfbot remind --dry-run` says what would be due"
        )));
    }
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
