//! `perfbot review`: hand to a human the open cases whose thread went quiet
//! after a reply that may carry a decision perfbot did not act on.

use chrono::Utc;
use clap::Args;

use super::{open_store, Failure};
use crate::config::Config;

#[derive(Args, Debug)]
pub struct ReviewArgs {
    /// Say which cases would go to a human; change nothing
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(config: &Config, a: ReviewArgs) -> Result<(), Failure> {
    let store = open_store(config)?;
    if !config.file.review.enabled {
        eprintln!("review.enabled is false: nothing to do");
        return Ok(());
    }
    let lines = crate::flows::review::run(config, &store, Utc::now(), a.dry_run)?;
    if lines.is_empty() {
        eprintln!("no case to review");
    }
    for l in lines {
        eprintln!("{l}");
    }
    Ok(())
}
