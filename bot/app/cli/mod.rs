//! The command line: argument parsing and dispatch; one file per subcommand,
//! each a thin function over the flows. Exit codes: 0 done, 1 failure, 2 bad
//! input or usage, 3 nothing to report.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::anyhow;
use clap::{Parser, Subcommand};

use crate::config::Config;
use crate::model::MessageId;
use crate::store::Store;

mod bench;
mod cases;
mod check;
mod classify;
mod compare;
mod digest;
mod ignores;
mod ingest;
mod labels;
mod optout;
mod outbox;
mod people;
mod policy;
mod quarantine;
mod remind;
mod replies;
mod report;
mod review;
mod robot;
mod run;
mod send;

#[derive(Parser, Debug)]
#[command(
    name = "perfbot",
    version,
    about = "Kernel performance-regression reports, sent and followed up by mail"
)]
pub struct Cli {
    /// Configuration file [default: ./config.toml if present, else built in]
    #[arg(long, global = true, env = "PERFBOT_CONFIG")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the %stddev/%change table of a comparison (like `lkp ncompare`)
    Compare(compare::CompareArgs),
    /// Turn comparison results into report e-mails, record cases, queue the mail
    Report(report::ReportArgs),
    /// Deliver the mail that is due
    Send(send::SendArgs),
    /// List, show and decide cases
    #[command(subcommand)]
    Cases(cases::CasesCmd),
    /// Inspect and moderate the outbox
    #[command(subcommand)]
    Outbox(outbox::OutboxCmd),
    /// Addresses that never get mail from perfbot
    #[command(subcommand)]
    Optout(optout::OptoutCmd),
    /// Say what a reply means: intent, confidence, evidence
    Classify(classify::ClassifyArgs),
    /// How well replies are understood: labelled real replies against what
    /// perfbot reads and decides (per-label precision/recall, decisions)
    EvalReplies(replies::EvalArgs),
    /// Train the intent model on labelled replies and write its weights
    TrainIntents(replies::TrainIntentsArgs),
    /// The replies operators settled (`cases set`), as labelled examples
    #[command(subcommand)]
    Labels(labels::LabelsCmd),
    /// The `#perfbot ignore` rules people gave (list, drop)
    #[command(subcommand)]
    Ignores(ignores::IgnoresCmd),
    /// The lists' opt-in mail policies (`lists.policy_file`)
    #[command(subcommand)]
    Policy(policy::PolicyCmd),
    /// Run the whole job: ingest, deliver, remind, digest, dashboard (until SIGTERM)
    Run,
    /// Check what `run` would start with: config, templates, state, and that the mail servers take perfbot's login
    Check(check::CheckArgs),
    /// The thread-status digest
    Digest(digest::DigestArgs),
    /// Queue the reminders that are due, mark stale cases
    Remind(remind::RemindArgs),
    /// Hand to a human the open cases whose thread went quiet after words that may decide them
    Review(review::ReviewArgs),
    /// Read mail and record what belongs to case threads
    Ingest(ingest::IngestArgs),
    /// Messages that could not be read, kept with the reason
    #[command(subcommand)]
    Quarantine(quarantine::QuarantineCmd),
    /// Measure throughput (figures for BENCHMARKS.md)
    Bench(bench::BenchArgs),
    /// Read a kernel test robot report mail into a report input (JSON)
    ParseReport(robot::ParseReportArgs),
    /// Read robot report mails and render them back: how many come back identical
    Roundtrip(robot::RoundtripArgs),
    /// Replay thread folders (report, then replies): each reply's reading and
    /// the case's final state
    Replay(robot::ReplayArgs),
    /// Whose replies are read as a followed robot's own people (learnt from
    /// its adopted reports, and `[track] people`)
    People(people::PeopleArgs),
}

impl Command {
    /// Commands whose job is to print (tables, mails, listings) and that talk
    /// to no server: they may end quietly on a closed pipe.
    pub fn prints_for_a_pipe(&self) -> bool {
        match self {
            Command::Compare(_)
            | Command::Classify(_)
            | Command::EvalReplies(_)
            | Command::ParseReport(_)
            | Command::Roundtrip(_)
            | Command::People(_) => true,
            Command::Report(a) => a.print,
            Command::Cases(c) => c.only_prints(),
            Command::Outbox(c) => c.only_prints(),
            Command::Optout(c) => c.only_prints(),
            Command::Quarantine(c) => c.only_prints(),
            Command::Digest(a) => !a.send,
            _ => false,
        }
    }
}

/// An error with the exit code it deserves: 2 for bad input, 3 for "nothing to
/// report", 1 for everything else.
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        let error = e.into();
        // A case or mail the command line named that is not there is bad
        // input, as every other unknown id is; the store's other errors are
        // operational.
        let named_nothing = matches!(
            error.downcast_ref::<crate::store::StoreError>(),
            Some(crate::store::StoreError::NoCase(_) | crate::store::StoreError::NoMessage(_))
        );
        Failure {
            code: if named_nothing { 2 } else { 1 },
            error,
        }
    }
}

impl Failure {
    /// Bad input or usage: exit code 2.
    pub(crate) fn usage(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: 2,
            error: error.into(),
        }
    }
}

/// Parse the command line and run it; the exit code tells what happened.
pub fn main() -> ExitCode {
    run(Cli::parse())
}

pub fn run(cli: Cli) -> ExitCode {
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("perfbot: {}", error_line(&f.error));
            ExitCode::from(f.code)
        }
    }
}

/// An error and its causes on one line, as anyhow's `{:#}` prints them, but
/// each cause once (`model::error::chain_line`).
fn error_line(e: &anyhow::Error) -> String {
    crate::model::error::chain_line(e.as_ref())
}

fn dispatch(cli: Cli) -> Result<(), Failure> {
    let config = load_config(cli.config.as_deref())?;
    match cli.command {
        Command::Compare(a) => compare::run(&config, a),
        Command::Report(a) => report::run(&config, a),
        Command::Send(a) => send::run(&config, a),
        Command::Cases(c) => cases::run(&config, c),
        Command::Outbox(c) => outbox::run(&config, c),
        Command::Optout(c) => optout::run(&config, c),
        Command::Run => run::run(config),
        Command::Check(a) => check::run(&config, a),
        Command::Digest(a) => digest::run(&config, a),
        Command::Remind(a) => remind::run(&config, a),
        Command::Review(a) => review::run(&config, a),
        Command::Classify(a) => classify::run(&config, a),
        Command::Ingest(a) => ingest::run(&config, a),
        Command::EvalReplies(a) => replies::eval(&config, a),
        Command::TrainIntents(a) => replies::train(&config, a),
        Command::Quarantine(c) => quarantine::run(&config, c),
        Command::Labels(c) => labels::run(&config, c),
        Command::Ignores(c) => ignores::run(&config, c),
        Command::Policy(c) => policy::run(&config, c),
        Command::Bench(a) => bench::run(&config, a),
        Command::ParseReport(a) => robot::parse(&config, a),
        Command::Roundtrip(a) => robot::run(&config, a),
        Command::Replay(a) => robot::replay(&config, a),
        Command::People(a) => people::run(&config, a),
    }
}

fn load_config(path: Option<&Path>) -> Result<Config, Failure> {
    let path = match path {
        Some(p) => Some(p.to_path_buf()),
        None => Path::new("config.toml")
            .exists()
            .then(|| PathBuf::from("config.toml")),
    };
    Config::load(path.as_deref()).map_err(Failure::usage)
}

/// How long a command waits for another perfbot command to release the
/// database before it gives up (the daemon's hold is reported at once).
fn lock_wait(config: &Config) -> std::time::Duration {
    std::time::Duration::from_secs(config.file.run.lock_wait_secs)
}

fn open_store(config: &Config) -> Result<Store, Failure> {
    Ok(Store::open_waiting(&config.state_dir(), lock_wait(config))?)
}

/// A tokio runtime for the async edges (SMTP) of one-shot commands.
fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// Who is at the command line, for the record of a human decision.
fn who() -> String {
    std::env::var("USER").unwrap_or_else(|_| "operator".into())
}

/// A state on the command line that is none: the ones there are.
fn unknown_state<'a>(s: &str, all: impl IntoIterator<Item = &'a str>) -> String {
    let all: Vec<&str> = all.into_iter().collect();
    format!("unknown state {s:?}: one of {}", all.join(", "))
}

/// `--reason` of a human decision: the words the history and the digest
/// show for it, so never blank (as the dashboard asks too).
fn reason(s: &str) -> Result<String, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("a reason is needed: what the decision rests on".into());
    }
    Ok(s.to_string())
}

/// An operator's action at the command line, for the case's timeline.
fn by_operator(reason: &str) -> crate::model::case::Cause {
    crate::model::case::Cause::Cli {
        user: who(),
        reason: reason.to_string(),
    }
}

fn parse_id(s: &str) -> Result<MessageId, Failure> {
    MessageId::parse(s).ok_or_else(|| Failure::usage(anyhow!("not a Message-ID: {s:?}")))
}

/// Where a model's weights go: `out`'s directory and file name (a
/// directory, or a path without a file name, is a usage error).
fn model_file(out: &Path) -> Result<(&Path, String), Failure> {
    let name = out
        .file_name()
        .filter(|_| !out.is_dir())
        .ok_or_else(|| Failure::usage(anyhow!("--out {} names no file", out.display())))?;
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok((dir, name.to_string_lossy().into_owned()))
}

/// Write a model's weights to `out` whole or not at all (a kill while it is
/// written leaves the file of before).
fn write_model(out: &Path, model: &crate::reply::understand::Model) -> Result<usize, Failure> {
    let (dir, name) = model_file(out)?;
    let text = model.to_text();
    crate::fsutil::write_atomic(dir, &name, text.as_bytes())
        .map_err(|e| anyhow!("{}: {e}", out.display()))?;
    Ok(text.len())
}

/// Standard input for `-`, else the file; either at most
/// `input::MAX_INPUT_BYTES` (`/dev/zero` is refused, not read without end).
fn read_input(path: &Path) -> Result<Vec<u8>, Failure> {
    use crate::fsutil::{read_capped, Bounded};
    use crate::input::MAX_INPUT_BYTES;
    if path.as_os_str() == "-" {
        return read_capped(std::io::stdin().lock(), MAX_INPUT_BYTES, 0).map_err(|e| match e {
            Bounded::Io(e) => anyhow!("standard input: {e}").into(),
            _ => Failure::usage(anyhow!(
                "standard input: over {MAX_INPUT_BYTES} bytes, the limit for an input: not read"
            )),
        });
    }
    require_files([path])?;
    crate::input::read_bytes(path).map_err(Failure::usage)
}

/// Every command says the same of an input path that is not there: exit 2,
/// `PATH: no such file`, before anything is read.
fn require_files<'p>(paths: impl IntoIterator<Item = &'p Path>) -> Result<(), Failure> {
    for p in paths {
        if std::fs::symlink_metadata(p).is_err() {
            return Err(Failure::usage(anyhow::anyhow!(
                "{}: no such file",
                p.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::error_line;

    /// Each cause once, whether or not an error says its source itself.
    #[test]
    fn an_error_line_says_each_cause_once() {
        let sled = || sled::Error::Unsupported("x".into());
        let table: Vec<(anyhow::Error, &str)> = vec![
            (anyhow::anyhow!("a").context("b"), "b: a"),
            (
                crate::store::StoreError::Sled(sled()).into(),
                "state database: Unsupported: x",
            ),
            (
                anyhow::Error::new(crate::store::StoreError::Sled(sled())).context("reading cases"),
                "reading cases: state database: Unsupported: x",
            ),
            (
                crate::config::ConfigError::Rules {
                    path: "c.toml".into(),
                    section: "[compare.selection]",
                    why: crate::compare::rules::RulesError::Toml("`min_runs`: bad".into()),
                }
                .into(),
                "c.toml: [compare.selection]: `min_runs`: bad",
            ),
        ];
        for (e, want) in table {
            assert_eq!(error_line(&e), want);
        }
    }
}
