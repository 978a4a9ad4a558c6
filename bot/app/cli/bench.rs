//! `perfbot bench`: the throughput figures of BENCHMARKS.md.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{runtime, Failure};
use crate::app::bench;
use crate::config::Config;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum What {
    /// Statistics and the table
    Compare,
    /// Queue and send reports through the configured transport, in a scratch
    /// state directory
    Deliver,
    /// A synthetic LKML-like mbox of --count messages
    Ingest,
    /// Reading replies
    Classify,
    /// The daemon's loops
    Daemon,
    /// A maildir with --count read messages: the follower's round (new/
    /// only) and the first reading (cur/ too)
    Maildir,
    /// A synthetic LKML of --count messages as a public-inbox repository
    PublicInbox,
    /// The noise gate's bootstrap interval over --metrics metrics × --runs
    Noise,
    /// The dashboard's pages over --count cases, --iterations requests each
    Dashboard,
    /// Opening a database of --count cases, --iterations times
    Open,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// What to measure
    #[arg(long, value_enum, default_value = "compare")]
    pub what: What,
    /// deliver: how many reports; ingest: how many messages; dashboard,
    /// open: how many cases
    #[arg(long, default_value_t = 1000)]
    pub count: usize,
    /// deliver, dashboard: the recipient of every report
    #[arg(long, default_value = "bob@example.test")]
    pub to: String,
    /// Metrics per commit
    #[arg(long, default_value_t = 20_000)]
    pub metrics: usize,
    /// Runs per commit
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Commits (columns)
    #[arg(long, default_value_t = 2)]
    pub commits: usize,
    /// Repetitions
    #[arg(long, default_value_t = 20)]
    pub iterations: usize,
    /// ingest: cases reported before the reading (the outbox of a bot that
    /// has run for a while)
    #[arg(long, default_value_t = 10)]
    pub cases: usize,
    /// ingest: write the synthetic mbox here and keep it (reused if it exists)
    #[arg(long)]
    pub mbox: Option<PathBuf>,
    /// maildir: make the maildir here and keep it (for other tools; it must
    /// not exist yet)
    #[arg(long)]
    pub maildir: Option<PathBuf>,
}

pub fn run(config: &Config, b: BenchArgs) -> Result<(), Failure> {
    let out = match b.what {
        What::Compare => bench::compare_render(config, b.metrics, b.runs, b.commits, b.iterations),
        What::Deliver => runtime()?.block_on(bench::deliver(config, b.count, &b.to))?,
        What::Ingest => bench::ingest(config, b.count, b.cases, b.mbox.as_deref())?,
        What::Classify => bench::classify(config, b.iterations.max(100)),
        What::Daemon => bench::daemon(config, b.count)?,
        What::Maildir => bench::maildir(config, b.count, b.iterations, b.maildir.as_deref())?,
        What::PublicInbox => bench::public_inbox(config, b.count)?,
        What::Noise => bench::noise(config, b.metrics, b.runs),
        What::Dashboard => bench::dashboard(config, b.count, b.iterations, &b.to)?,
        What::Open => bench::open(config, b.count, b.iterations, &b.to)?,
    };
    print!("{out}");
    Ok(())
}
