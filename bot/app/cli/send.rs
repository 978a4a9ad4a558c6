//! `perfbot send`: deliver the mail that is due.

use anyhow::anyhow;
use chrono::Utc;
use clap::Args;

use super::{open_store, runtime, Failure};
use crate::config::Config;
use crate::flows::delivery::{send_due, SendSummary, Transport};
use crate::store::Store;

#[derive(Args, Debug)]
pub struct SendArgs {
    /// Say what would be sent; change nothing
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(config: &Config, a: SendArgs) -> Result<(), Failure> {
    let store = open_store(config)?;
    let s = send_now(config, &store, a.dry_run)?;
    eprintln!("{}", s.line());
    if let Some(why) = &s.operator_error {
        return Err(anyhow!(
            "nothing more was sent: the mail server refused perfbot ({why}); the mail stays queued"
        )
        .into());
    }
    if s.trouble() {
        return Err(anyhow!(
            "{} mail(s) failed (retried later) and {} given up in this run: `perfbot outbox list` says why",
            s.failed,
            s.dead
        )
        .into());
    }
    Ok(())
}

/// Deliver what is due through the configured transport; print each outcome.
pub fn send_now(config: &Config, store: &Store, dry_run: bool) -> Result<SendSummary, Failure> {
    // lettre's connection pool lives on the runtime: build and drop it there.
    let s = runtime()?.block_on(async {
        let transport = Transport::from_config(config).map_err(Failure::usage)?;
        Ok::<_, Failure>(send_due(config, store, &transport, Utc::now(), dry_run).await?)
    })?;
    for l in &s.lines {
        eprintln!("{l}");
    }
    Ok(s)
}
