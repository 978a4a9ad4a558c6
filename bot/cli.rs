//! The command line: argument parsing and one thin function per subcommand.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, Context};
use chrono::Utc;
use clap::{Args, Parser, Subcommand};

use crate::case::{CaseState, Cause};
use crate::compare::case_file::CaseFile;
use crate::compare::SelectOptions;
use crate::config::Config;
use crate::report::build::ReportError;
use crate::report::queue::{prepare, queue, QueueError};
use crate::store::{Created, Store};

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
    Compare(CompareArgs),
    /// Turn comparison results into report e-mails, record cases, queue the mail
    Report(ReportArgs),
    /// Deliver the mail that is due
    Send {
        /// Say what would be sent; change nothing
        #[arg(long)]
        dry_run: bool,
    },
    /// List, show and decide cases
    #[command(subcommand)]
    Cases(CasesCmd),
    /// Inspect the outbox
    #[command(subcommand)]
    Outbox(OutboxCmd),
    /// Measure throughput (figures for BENCHMARKS.md)
    Bench(BenchArgs),
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// A case file, or two or more lkp matrix.json files (the base first)
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The commit of each matrix file, in order
    #[arg(long = "commit")]
    pub commits: Vec<String>,
    /// Also show stats lkp's deny list hides (`ncompare -m`)
    #[arg(long)]
    pub more: bool,
    /// A perf-profile threshold (`ncompare -p`)
    #[arg(long)]
    pub perf_profile_threshold: Option<f64>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Input files (format in README.md)
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Template: classic, modern, or a path to a .hbs file
    #[arg(long)]
    pub template: Option<String>,
    /// Write the e-mail to standard output; record and queue nothing
    #[arg(long)]
    pub print: bool,
    /// Report even without a reportable headline (needs "headline" in the input)
    #[arg(long)]
    pub force: bool,
}

#[derive(Subcommand, Debug)]
pub enum CasesCmd {
    /// List cases
    List {
        #[arg(long)]
        state: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Show one case with its history
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Set a case's state (a human decision, recorded as such)
    Set {
        id: String,
        state: String,
        #[arg(long)]
        reason: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum OutboxCmd {
    /// List queued and sent mail
    List,
    /// Print one message as it will be (or was) sent
    Show { message_id: String },
}

#[derive(Args, Debug)]
pub struct BenchArgs {
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
}

/// An error with the exit code it deserves: 2 for bad input, 3 for "nothing to
/// report", 1 for everything else.
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure {
            code: 1,
            error: e.into(),
        }
    }
}

fn queue_failure(e: QueueError) -> Failure {
    let code = match &e {
        QueueError::Input(_) => 2,
        QueueError::Report(ReportError::NothingToReport { .. }) => 3,
        QueueError::Report(ReportError::UnknownHeadline { .. } | ReportError::Template(_)) => 2,
        _ => 1,
    };
    Failure {
        code,
        error: e.into(),
    }
}

fn load_config(path: Option<&Path>) -> Result<Config, Failure> {
    let path = match path {
        Some(p) => Some(p.to_path_buf()),
        None => Path::new("config.toml")
            .exists()
            .then(|| PathBuf::from("config.toml")),
    };
    Config::load(path.as_deref()).map_err(|e| Failure {
        code: 2,
        error: e.into(),
    })
}

fn open_store(config: &Config) -> Result<Store, Failure> {
    Ok(Store::open(&config.state_dir())?)
}

pub fn run(cli: Cli) -> ExitCode {
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("perfbot: {:#}", f.error);
            ExitCode::from(f.code)
        }
    }
}

fn dispatch(cli: Cli) -> Result<(), Failure> {
    let config_path = cli.config.clone();
    match cli.command {
        Command::Compare(a) => compare(&load_config(config_path.as_deref())?, a),
        Command::Report(a) => report(&load_config(config_path.as_deref())?, a),
        Command::Send { dry_run } => {
            let config = load_config(config_path.as_deref())?;
            let store = open_store(&config)?;
            let s = crate::mail::deliver::send_due(&config, &store, Utc::now(), dry_run)?;
            for l in &s.lines {
                eprintln!("{l}");
            }
            eprintln!(
                "sent {}, failed {}, not sent (dry run) {}",
                s.sent, s.failed, s.skipped
            );
            Ok(())
        }
        Command::Cases(c) => cases(&load_config(config_path.as_deref())?, c),
        Command::Outbox(c) => outbox(&load_config(config_path.as_deref())?, c),
        Command::Bench(b) => {
            let config = load_config(config_path.as_deref())?;
            print!(
                "{}",
                crate::bench::compare_render(&config, b.metrics, b.runs, b.commits, b.iterations)
            );
            Ok(())
        }
    }
}

fn compare(config: &Config, a: CompareArgs) -> Result<(), Failure> {
    let bad = |e: crate::error::InputError| Failure {
        code: 2,
        error: e.into(),
    };
    let case = if a.files.len() == 1 {
        CaseFile::load(&a.files[0]).map_err(bad)?
    } else {
        CaseFile::from_matrices(&a.files, &a.commits).map_err(bad)?
    };
    let opts = SelectOptions {
        more: a.more,
        perf_profile_threshold: a.perf_profile_threshold,
    };
    print!("{}", case.table(&config.selection, &opts).render());
    Ok(())
}

fn report(config: &Config, a: ReportArgs) -> Result<(), Failure> {
    let now = Utc::now();
    // Everything is prepared (and so validated) before anything is recorded.
    let mut prepared = Vec::new();
    for input in &a.inputs {
        prepared.push(
            prepare(config, input, a.template.as_deref(), a.force, now).map_err(queue_failure)?,
        );
    }
    if a.print {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for p in &prepared {
            out.write_all(&p.raw)?;
            out.write_all(b"\n")?;
        }
        return Ok(());
    }
    let store = open_store(config)?;
    for p in &prepared {
        match queue(&store, p, now).map_err(queue_failure)? {
            Created::New(c) => eprintln!("case {} queued: {}", c.id, c.subject),
            Created::Existing(c) => {
                eprintln!("case {} exists already ({}): nothing queued", c.id, c.state)
            }
        }
    }
    if config.file.outbound.transport == "file" {
        let s = crate::mail::deliver::send_due(config, &store, Utc::now(), false)?;
        for l in &s.lines {
            eprintln!("{l}");
        }
    }
    Ok(())
}

fn cases(config: &Config, c: CasesCmd) -> Result<(), Failure> {
    let store = open_store(config)?;
    match c {
        CasesCmd::List { state, json } => {
            let want = match &state {
                Some(s) => Some(CaseState::parse(s).ok_or_else(|| Failure {
                    code: 2,
                    error: anyhow!("unknown state {s:?}"),
                })?),
                None => None,
            };
            let list: Vec<_> = store
                .cases()?
                .into_iter()
                .filter(|c| want.is_none_or(|w| c.state == w))
                .collect();
            if json {
                let v: Vec<_> = list.iter().map(crate::case::view::list_json).collect();
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                for c in &list {
                    println!("{}  {:<16}  {}", c.id, c.state, c.subject);
                }
            }
        }
        CasesCmd::Show { id, json } => {
            let c = store.find_case(&id)?;
            let events = store.events(&c.id)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&crate::case::view::show_json(&c, &events))?
                );
            } else {
                print!("{}", crate::case::view::show_text(&c, &events));
            }
        }
        CasesCmd::Set { id, state, reason } => {
            let c = store.find_case(&id)?;
            let new = CaseState::parse(&state).ok_or_else(|| Failure {
                code: 2,
                error: anyhow!("unknown state {state:?}"),
            })?;
            let user = std::env::var("USER").unwrap_or_else(|_| "operator".into());
            let c = store
                .set_state(
                    &c.id,
                    new,
                    Cause::Cli {
                        user,
                        reason: reason.clone(),
                    },
                    "set by a human",
                )
                .context("setting the state")?;
            eprintln!("case {} is now {}", c.id, c.state);
        }
    }
    Ok(())
}

fn outbox(config: &Config, c: OutboxCmd) -> Result<(), Failure> {
    let store = open_store(config)?;
    match c {
        OutboxCmd::List => {
            for e in store.outbox_entries()? {
                println!(
                    "{:<7} {:<8} {}  {}  {}",
                    e.state.as_str(),
                    e.kind,
                    e.case_id,
                    e.message_id,
                    e.subject
                );
            }
        }
        OutboxCmd::Show { message_id } => {
            let id = crate::mail::MessageId::parse(&message_id)
                .ok_or_else(|| anyhow!("not a Message-ID: {message_id:?}"))?;
            use std::io::Write;
            std::io::stdout().write_all(&store.outbox_raw(&id)?)?;
        }
    }
    Ok(())
}
