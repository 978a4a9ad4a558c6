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
use crate::mail::deliver::{send_due, SendSummary, Transport};
use crate::mail::followup::{prepare_followup, FollowUp};
use crate::mail::{Address, MessageId};
use crate::report::build::ReportError;
use crate::report::queue::{prepare, queue, QueueError};
use crate::store::optout::OptOut;
use crate::store::{Created, OutboxState, Store};

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
    /// Inspect and moderate the outbox
    #[command(subcommand)]
    Outbox(OutboxCmd),
    /// Addresses that never get mail from perfbot
    #[command(subcommand)]
    Optout(OptoutCmd),
    /// Say what a reply means: intent, confidence, evidence
    Classify {
        /// A raw RFC 5322 message or plain text; - (the default) for standard input
        #[arg(default_value = "-")]
        file: PathBuf,
        #[arg(long)]
        json: bool,
        /// Also print the replier's own words, as the classifier read them
        #[arg(long)]
        words: bool,
        /// Who sent it: author, committer, maintainer, operator, other
        #[arg(long, default_value = "other")]
        role: String,
        /// The report was an improvement (not a regression)
        #[arg(long)]
        improvement: bool,
        /// The phrase rules alone, without the learned model
        #[arg(long)]
        rules_only: bool,
    },
    /// How well replies are understood: labelled real replies against what
    /// perfbot reads and decides (per-label precision/recall, decisions)
    EvalReplies {
        /// labels.jsonl files (threads/ or replies-dev/ layout)
        #[arg(required = true)]
        labels: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
        /// Thread-grouped cross-validation of the learned model in K folds
        #[arg(long)]
        folds: Option<usize>,
        /// More labelled replies to train the folds' models on (not evaluated)
        #[arg(long = "train-with")]
        train_with: Vec<PathBuf>,
        #[command(flatten)]
        train: TrainArgs,
        /// List every reply, not only the decision replies
        #[arg(long)]
        all: bool,
    },
    /// Train the intent model on labelled replies and write its weights
    TrainIntents {
        /// labels.jsonl files (threads/ or replies-dev/ layout)
        #[arg(required = true)]
        labels: Vec<PathBuf>,
        /// Where to write the weights
        #[arg(long, default_value = "bot/rules/intents.model")]
        out: PathBuf,
        #[command(flatten)]
        train: TrainArgs,
    },
    /// Run the whole job: ingest, deliver, remind, digest, dashboard (until SIGTERM)
    Run,
    /// The thread-status digest
    Digest {
        /// text (an e-mail), html (the dashboard page) or json
        #[arg(long, default_value = "text")]
        format: String,
        /// Closed cases since: 7d, 36h, 2w
        #[arg(long, default_value = "7d")]
        since: String,
        /// Queue it as a mail to the operators (digest.to)
        #[arg(long)]
        send: bool,
    },
    /// Queue the reminders that are due, mark stale cases
    Remind {
        #[arg(long)]
        dry_run: bool,
    },
    /// Read mail and record what belongs to case threads
    Ingest(IngestArgs),
    /// Messages that could not be read, kept with the reason
    #[command(subcommand)]
    Quarantine(QuarantineCmd),
    /// Measure throughput (figures for BENCHMARKS.md)
    Bench(BenchArgs),
}

impl Command {
    /// Commands whose job is to print (tables, mails, listings) and that talk
    /// to no server: they may end quietly on a closed pipe.
    pub fn prints_for_a_pipe(&self) -> bool {
        match self {
            Command::Compare(_)
            | Command::Classify { .. }
            | Command::Quarantine(_)
            | Command::EvalReplies { .. } => true,
            Command::Report(a) => a.print,
            Command::Cases(c) => matches!(c, CasesCmd::List { .. } | CasesCmd::Show { .. }),
            Command::Outbox(c) => matches!(c, OutboxCmd::List { .. } | OutboxCmd::Show { .. }),
            Command::Optout(c) => matches!(c, OptoutCmd::List),
            Command::Digest { send, .. } => !send,
            _ => false,
        }
    }
}

/// How the intent model is trained (defaults: the committed model's).
#[derive(Args, Debug, Clone, Copy)]
pub struct TrainArgs {
    /// L2 penalty per weight
    #[arg(long)]
    pub l2: Option<f64>,
    /// Gradient descent steps
    #[arg(long)]
    pub iterations: Option<usize>,
    /// Features seen in fewer replies are left out
    #[arg(long)]
    pub min_count: Option<usize>,
}

impl TrainArgs {
    fn train(self) -> crate::reply::understand::model::Train {
        let d = crate::reply::understand::model::Train::default();
        crate::reply::understand::model::Train {
            l2: self.l2.unwrap_or(d.l2),
            iterations: self.iterations.unwrap_or(d.iterations),
            min_count: self.min_count.unwrap_or(d.min_count),
            ..d
        }
    }
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
    /// Queue a mail from the operator in the case's thread (Re: subject, threaded)
    Reply {
        id: String,
        /// File with the body text, or - for standard input
        #[arg(long)]
        body: PathBuf,
        /// Answer this Message-ID of the thread instead of the report
        #[arg(long)]
        parent: Option<String>,
    },
}

#[derive(Args, Debug)]
pub struct IngestArgs {
    /// Read this maildir instead of the configured source
    #[arg(long, conflicts_with_all = ["mbox", "stdin"])]
    pub maildir: Option<PathBuf>,
    /// Read these mbox files (gzip too) instead of the configured source
    #[arg(long, num_args = 1.., conflicts_with = "stdin")]
    pub mbox: Vec<PathBuf>,
    /// Read one message from standard input
    #[arg(long)]
    pub stdin: bool,
    /// Keep following the configured IMAP mailbox (IDLE or polling) until stopped
    #[arg(long)]
    pub follow: bool,
}

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

#[derive(Subcommand, Debug)]
pub enum OptoutCmd {
    /// Never send mail to this address again
    Add {
        address: String,
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Allow mail to this address again
    Remove { address: String },
    /// List opted-out addresses (config and database)
    List,
}

#[derive(Subcommand, Debug)]
pub enum OutboxCmd {
    /// List mail with its delivery state
    List {
        #[arg(long)]
        state: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Print one message as it will be (or was) sent
    Show {
        message_id: String,
        /// Delivery state and history instead of the message
        #[arg(long)]
        status: bool,
    },
    /// Release a held (moderated) mail for sending
    Approve { message_id: String },
    /// Never send this mail (it stays listed as dead, with the reason)
    Drop {
        message_id: String,
        #[arg(long)]
        reason: String,
    },
    /// Try a failed or dead mail again now, under the same Message-ID
    Retry { message_id: String },
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// What to measure: compare (statistics + table), deliver (queue and send
    /// reports through the configured transport, in a scratch state directory),
    /// ingest (a synthetic LKML-like mbox of --count messages)
    #[arg(long, default_value = "compare")]
    pub what: String,
    /// deliver: how many reports; ingest: how many messages
    #[arg(long, default_value_t = 1000)]
    pub count: usize,
    /// deliver: the recipient of every report
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
    /// ingest: write the synthetic mbox here and keep it (reused if it exists)
    #[arg(long)]
    pub mbox: Option<PathBuf>,
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

/// How long a command waits for another perfbot command to release the
/// database before it gives up (the daemon's hold is reported at once).
fn lock_wait(config: &Config) -> std::time::Duration {
    std::time::Duration::from_secs(config.file.run.lock_wait_secs)
}

fn open_store(config: &Config) -> Result<Store, Failure> {
    Ok(Store::open_waiting(&config.state_dir(), lock_wait(config))?)
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
            let s = send_now(&config, &store, dry_run)?;
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
        Command::Cases(c) => cases(&load_config(config_path.as_deref())?, c),
        Command::Outbox(c) => outbox(&load_config(config_path.as_deref())?, c),
        Command::Optout(c) => optout(&load_config(config_path.as_deref())?, c),
        Command::Run => run_daemon(load_config(config_path.as_deref())?),
        Command::Digest {
            format,
            since,
            send,
        } => digest(&load_config(config_path.as_deref())?, &format, &since, send),
        Command::Remind { dry_run } => {
            let config = load_config(config_path.as_deref())?;
            let store = open_store(&config)?;
            for l in crate::remind::run(&config, &store, Utc::now(), dry_run)? {
                eprintln!("{l}");
            }
            Ok(())
        }
        Command::Classify {
            file,
            json,
            words,
            role,
            improvement,
            rules_only,
        } => {
            let role = crate::reply::policy::trust::Role::parse(&role).ok_or_else(|| Failure {
                code: 2,
                error: anyhow!("--role {role:?}: author, committer, maintainer, operator or other"),
            })?;
            let ctx = crate::reply::understand::Context {
                speaker: crate::reply::handle::speaker(role),
                improvement,
            };
            classify(
                &load_config(config_path.as_deref())?,
                &file,
                json,
                words,
                ctx,
                rules_only,
            )
        }
        Command::Ingest(a) => ingest(&load_config(config_path.as_deref())?, a),
        Command::EvalReplies {
            labels,
            json,
            folds,
            train_with,
            train,
            all,
        } => eval_replies(
            &load_config(config_path.as_deref())?,
            &labels,
            &train_with,
            train.train(),
            json,
            folds,
            all,
        ),
        Command::TrainIntents { labels, out, train } => {
            let config = load_config(config_path.as_deref())?;
            let items = crate::eval::load(&labels).map_err(|e| Failure {
                code: 2,
                error: e.into(),
            })?;
            let model = crate::eval::train(&items, config.intent_rules(), train.train())?;
            let text = model.to_text();
            std::fs::write(&out, &text).with_context(|| out.display().to_string())?;
            eprintln!("{}: {} ({} bytes)", out.display(), model.about, text.len());
            Ok(())
        }
        Command::Quarantine(c) => quarantine(&load_config(config_path.as_deref())?, c),
        Command::Bench(b) => {
            let config = load_config(config_path.as_deref())?;
            let out = match b.what.as_str() {
                "compare" => crate::bench::compare_render(
                    &config,
                    b.metrics,
                    b.runs,
                    b.commits,
                    b.iterations,
                ),
                "deliver" => runtime()?.block_on(crate::bench::deliver(&config, b.count, &b.to))?,
                "ingest" => crate::bench::ingest(&config, b.count, b.mbox.as_deref())?,
                "classify" => crate::bench::classify(&config, b.iterations.max(100)),
                "daemon" => crate::bench::daemon(&config, b.count)?,
                other => {
                    return Err(Failure {
                        code: 2,
                        error: anyhow!(
                        "unknown benchmark {other:?}: compare, deliver, ingest, classify or daemon"
                    ),
                    })
                }
            };
            print!("{out}");
            Ok(())
        }
    }
}

/// A tokio runtime for the async edges (SMTP) of one-shot commands.
fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// Deliver what is due through the configured transport; print each outcome.
fn send_now(config: &Config, store: &Store, dry_run: bool) -> Result<SendSummary, Failure> {
    // lettre's connection pool lives on the runtime: build and drop it there.
    let s = runtime()?.block_on(async {
        let transport = Transport::from_config(config).map_err(|e| Failure {
            code: 2,
            error: e.into(),
        })?;
        Ok::<_, Failure>(send_due(config, store, &transport, Utc::now(), dry_run).await?)
    })?;
    for l in &s.lines {
        eprintln!("{l}");
    }
    Ok(s)
}

/// SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

fn who() -> String {
    std::env::var("USER").unwrap_or_else(|_| "operator".into())
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
    let store = match Store::open_waiting(&config.state_dir(), lock_wait(config)) {
        Ok(s) => s,
        // Only the daemon's hold means "hand it over": it drains the spool.
        Err(crate::store::StoreError::Locked { .. })
            if crate::store::daemon_running(&config.state_dir()) =>
        {
            return spool(config, &a.inputs)
        }
        Err(e) => return Err(e.into()),
    };
    let optouts: Vec<Address> = store.optouts()?.into_iter().map(|o| o.address).collect();
    for p in &mut prepared {
        p.exclude(&optouts, config.file.outbound.max_recipients)
            .map_err(queue_failure)?;
    }
    for p in &prepared {
        for (a, why) in &p.dropped {
            eprintln!("{}: {a} left out: {why}", p.input);
        }
        match queue(config, &store, p, now).map_err(queue_failure)? {
            Created::New(c) if config.file.outbound.moderation => {
                eprintln!(
                    "case {} queued, mail held for moderation: {}",
                    c.id, c.subject
                )
            }
            Created::New(c) => eprintln!("case {} queued: {}", c.id, c.subject),
            Created::Existing(c) => {
                eprintln!("case {} exists already ({}): nothing queued", c.id, c.state)
            }
        }
    }
    // The file outbox is local and instant: write it at once.
    if config.file.outbound.transport == "file" {
        send_now(config, &store, false)?;
    }
    Ok(())
}

/// The daemon holds the database: hand the (already validated) inputs to it
/// through its spool directory.
fn spool(config: &Config, inputs: &[PathBuf]) -> Result<(), Failure> {
    let dir = config.spool_dir();
    std::fs::create_dir_all(&dir).with_context(|| dir.display().to_string())?;
    for i in inputs {
        // A pointer to the input, not a copy: inputs may name matrix files
        // relative to themselves.
        let abs = std::fs::canonicalize(i).with_context(|| i.display().to_string())?;
        let name = format!(
            "{}-{}.ref",
            Utc::now().format("%Y%m%d%H%M%S%f"),
            i.file_stem().unwrap_or_default().to_string_lossy()
        );
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, abs.to_string_lossy().as_bytes())?;
        std::fs::rename(&tmp, dir.join(&name))?;
        eprintln!(
            "perfbot run holds the database: {} handed to it through {}",
            i.display(),
            dir.display()
        );
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
            } else if list.is_empty() {
                println!(
                    "no cases{}",
                    state.map(|s| format!(" in state {s}")).unwrap_or_default()
                );
            } else {
                for c in &list {
                    println!("{}  {:<16}  {}", c.id, c.state, c.subject);
                }
            }
        }
        CasesCmd::Show { id, json } => {
            let c = store.find_case(&id)?;
            let events = store.events(&c.id)?;
            let timeline = crate::case::view::timeline_of(&store, &c.id)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&crate::case::view::show_json(
                        &c, &events, &timeline
                    ))?
                );
            } else {
                print!("{}", crate::case::view::show_text(&c, &events, &timeline));
            }
        }
        CasesCmd::Set { id, state, reason } => {
            let c = store.find_case(&id)?;
            let new = CaseState::parse(&state).ok_or_else(|| Failure {
                code: 2,
                error: anyhow!("unknown state {state:?}"),
            })?;
            let user = who();
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
        CasesCmd::Reply { id, body, parent } => {
            let c = store.find_case(&id)?;
            let text = if body.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(&body)
                    .with_context(|| format!("reading {}", body.display()))?
            };
            let parent = match parent {
                Some(p) => {
                    Some(MessageId::parse(&p).ok_or_else(|| anyhow!("not a Message-ID: {p:?}"))?)
                }
                None => None,
            };
            let f = FollowUp {
                kind: "note",
                body: &text,
                parent: parent.as_ref(),
                to: Vec::new(),
                cc: Vec::new(),
            };
            let (entry, raw) = prepare_followup(config, &c, &f, Utc::now())?;
            let new = store.queue_followup(
                &entry,
                &raw,
                Cause::Cli {
                    user: who(),
                    reason: "operator reply".into(),
                },
                &format!("operator reply <{}> queued", entry.message_id),
            )?;
            if new {
                eprintln!("queued <{}>: {}", entry.message_id, entry.subject);
            } else {
                eprintln!("<{}> is queued already", entry.message_id);
            }
        }
    }
    Ok(())
}

fn parse_id(s: &str) -> Result<MessageId, Failure> {
    MessageId::parse(s).ok_or_else(|| Failure {
        code: 2,
        error: anyhow!("not a Message-ID: {s:?}"),
    })
}

fn outbox(config: &Config, c: OutboxCmd) -> Result<(), Failure> {
    let store = open_store(config)?;
    let cli = |reason: &str| Cause::Cli {
        user: who(),
        reason: reason.to_string(),
    };
    match c {
        OutboxCmd::List { state, json } => {
            let list: Vec<_> = store
                .outbox_entries()?
                .into_iter()
                .filter(|e| state.as_deref().is_none_or(|s| e.state.as_str() == s))
                .collect();
            if json {
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else if list.is_empty() {
                println!("no mail in the outbox");
            } else {
                for e in &list {
                    println!(
                        "{:<7} {:<10} {}  <{}>  {}{}",
                        e.state.as_str(),
                        e.kind,
                        e.case_id,
                        e.message_id,
                        e.subject,
                        e.last_error
                            .as_ref()
                            .map(|r| format!("\n        last error: {r}"))
                            .unwrap_or_default()
                    );
                }
            }
        }
        OutboxCmd::Show { message_id, status } => {
            let id = parse_id(&message_id)?;
            if status {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&store.outbox_entry(&id)?)?
                );
            } else {
                use std::io::Write;
                std::io::stdout().write_all(&store.outbox_raw(&id)?)?;
            }
        }
        OutboxCmd::Approve { message_id } => {
            let mut e = store.outbox_entry(&parse_id(&message_id)?)?;
            if e.state != OutboxState::Held {
                return Err(anyhow!("<{}> is {}, not held", e.message_id, e.state.as_str()).into());
            }
            e.state = OutboxState::Queued;
            e.next_attempt_at = Utc::now();
            store.outbox_transition(
                &e,
                None,
                cli("approved"),
                &format!("{} <{}> approved for sending", e.kind, e.message_id),
            )?;
            eprintln!("<{}> approved; `perfbot send` delivers it", e.message_id);
        }
        OutboxCmd::Drop { message_id, reason } => {
            let mut e = store.outbox_entry(&parse_id(&message_id)?)?;
            if matches!(e.state, OutboxState::Sent | OutboxState::Sending) {
                return Err(anyhow!(
                    "<{}> is {}: too late to drop",
                    e.message_id,
                    e.state.as_str()
                )
                .into());
            }
            e.state = OutboxState::Dead;
            e.last_error = Some(format!("dropped by {}: {reason}", who()));
            store.outbox_transition(
                &e,
                None,
                cli(&reason),
                &format!("{} <{}> dropped", e.kind, e.message_id),
            )?;
            eprintln!("<{}> dropped", e.message_id);
        }
        OutboxCmd::Retry { message_id } => {
            let mut e = store.outbox_entry(&parse_id(&message_id)?)?;
            if !matches!(e.state, OutboxState::Failed | OutboxState::Dead) {
                return Err(anyhow!(
                    "<{}> is {}, not failed or dead",
                    e.message_id,
                    e.state.as_str()
                )
                .into());
            }
            e.state = OutboxState::Queued;
            e.attempts = 0;
            e.next_attempt_at = Utc::now();
            store.outbox_transition(
                &e,
                None,
                cli("retry"),
                &format!("{} <{}> queued again", e.kind, e.message_id),
            )?;
            eprintln!("<{}> queued again", e.message_id);
        }
    }
    Ok(())
}

fn optout(config: &Config, c: OptoutCmd) -> Result<(), Failure> {
    let store = open_store(config)?;
    let addr = |s: &str| {
        Address::parse(s).ok_or_else(|| Failure {
            code: 2,
            error: anyhow!("not an e-mail address: {s:?}"),
        })
    };
    match c {
        OptoutCmd::Add { address, reason } => {
            let a = addr(&address)?;
            let new = store.optout_add(&OptOut {
                address: a.clone(),
                added: Utc::now(),
                by: who(),
                reason,
            })?;
            eprintln!(
                "{a} {}",
                if new {
                    "opted out"
                } else {
                    "was opted out already"
                }
            );
        }
        OptoutCmd::Remove { address } => {
            let a = addr(&address)?;
            if store.optout_remove(&a)? {
                eprintln!("{a} gets mail again");
            } else if config
                .file
                .outbound
                .optout
                .iter()
                .any(|o| Address::parse(o).as_ref() == Some(&a))
            {
                return Err(
                    anyhow!("{a} is opted out in {}; remove it there", config.source).into(),
                );
            } else {
                eprintln!("{a} was not opted out");
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
            for o in store.optouts()? {
                println!(
                    "{}\t{} by {}: {}",
                    o.address,
                    o.added.to_rfc3339(),
                    o.by,
                    o.reason
                );
            }
        }
    }
    Ok(())
}

fn ingest(config: &Config, a: IngestArgs) -> Result<(), Failure> {
    use crate::inbound::imap_source::ImapInbox;
    use crate::inbound::sources::{ingest_maildir, ingest_mbox, ingest_stdin};
    use crate::inbound::Ingestor;

    let store = open_store(config)?;
    let mut ing = Ingestor::new(config, &store)?;
    let t0 = std::time::Instant::now();
    let mut errors = Vec::new();
    if a.stdin {
        ingest_stdin(&mut ing)?;
    } else if !a.mbox.is_empty() {
        for f in &a.mbox {
            // A broken file is reported; the other files are still read.
            if let Err(e) = ingest_mbox(&mut ing, f) {
                eprintln!("perfbot: {e}");
                errors.push(e.to_string());
            }
        }
    } else if let Some(dir) = &a.maildir {
        ingest_maildir(&mut ing, dir)?;
    } else {
        match config.file.inbound.source.as_str() {
            "imap" => {
                let mut inbox = ImapInbox::new(config).map_err(|e| Failure {
                    code: 2,
                    error: e.into(),
                })?;
                if a.follow {
                    let stop = std::sync::atomic::AtomicBool::new(false);
                    let every = std::time::Duration::from_secs(config.file.imap.poll_secs.max(1));
                    let rt = runtime()?;
                    std::thread::scope(|scope| {
                        let stop = &stop;
                        let worker = scope.spawn(|| {
                            inbox.follow(&mut ing, every, stop, |ing, n| {
                                if n > 0 {
                                    eprintln!("{}", ing.stats.line());
                                }
                            })
                        });
                        rt.block_on(shutdown_signal());
                        eprintln!("stopping");
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                        let _ = worker.join();
                    });
                } else {
                    inbox.poll(&mut ing).map_err(anyhow::Error::from)?;
                    inbox.disconnect();
                }
            }
            "maildir" => ingest_maildir(&mut ing, &config.maildir())?,
            _ => {
                eprintln!("inbound.source is none: nothing to read");
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "{} ({:.1} MB in {:.2} s)",
        ing.stats.line(),
        ing.stats.bytes as f64 / 1e6,
        secs
    );
    if !errors.is_empty() {
        return Err(anyhow!("{} source(s) could not be read to the end", errors.len()).into());
    }
    Ok(())
}

fn quarantine(config: &Config, c: QuarantineCmd) -> Result<(), Failure> {
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
                        &q.hash[..16],
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
            let p = store
                .dir
                .join("quarantine")
                .join(format!("{}_quarantine.eml", q.hash));
            let p = if p.exists() {
                p
            } else {
                store
                    .dir
                    .join("quarantine")
                    .join(format!("{}@quarantine.eml", q.hash))
            };
            use std::io::Write;
            std::io::stdout()
                .write_all(&std::fs::read(&p).with_context(|| p.display().to_string())?)?;
        }
    }
    Ok(())
}

fn classify(
    config: &Config,
    file: &Path,
    json: bool,
    words: bool,
    ctx: crate::reply::understand::Context,
    rules_only: bool,
) -> Result<(), Failure> {
    use std::io::Read;
    let mut raw = Vec::new();
    if file.as_os_str() == "-" {
        std::io::stdin().read_to_end(&mut raw)?;
    } else {
        raw = std::fs::read(file).with_context(|| file.display().to_string())?;
    }
    let body = crate::reply::body_of(&raw);
    let own = crate::reply::understand::quote::own_words(&body);
    let model = if rules_only {
        None
    } else {
        config.intent_model()
    };
    let u = crate::reply::understand::read(&body, &own, ctx, config.intent_rules(), model);
    if words {
        eprintln!(
            "--- own words\n{}\n---",
            crate::reply::understand::quote::own_words(&body)
        );
    }
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "intent": u.intent,
                "confidence": u.confidence,
                "evidence": u.evidence,
                "secondary": u.secondary,
                "tags": u.tags(),
                "rule": (u.basis != crate::reply::understand::Basis::Fallback).then(|| u.basis.name()),
                "basis": u.basis,
            }))?
        );
    } else {
        println!("{} ({:.2}): {}", u.intent, u.confidence, u.evidence);
        for s in &u.secondary {
            println!("  also {} ({:.2})", s.intent, s.confidence);
        }
    }
    Ok(())
}

fn eval_replies(
    config: &Config,
    labels: &[PathBuf],
    train_with: &[PathBuf],
    train: crate::reply::understand::model::Train,
    json: bool,
    folds: Option<usize>,
    all: bool,
) -> Result<(), Failure> {
    let bad = |e: crate::eval::EvalError| Failure {
        code: 2,
        error: e.into(),
    };
    let items = crate::eval::load(labels).map_err(bad)?;
    let mut extra = crate::eval::load(train_with).map_err(bad)?;
    extra.retain(|x| !items.iter().any(|i| i.message_id == x.message_id));
    let rules = config.intent_rules();
    let reads = match folds {
        Some(k) if k >= 2 => {
            crate::eval::cross_validate(&items, &extra, k, &config.policy, rules, train)
                .map_err(bad)?
        }
        Some(_) => {
            return Err(Failure {
                code: 2,
                error: anyhow!("--folds needs at least 2"),
            })
        }
        None => {
            let model = config.intent_model();
            crate::eval::run(&items, &config.policy, &|l, body| {
                let words = crate::reply::understand::quote::own_words(body);
                crate::reply::understand::read(
                    body,
                    &words,
                    crate::eval::context_of(l),
                    rules,
                    model,
                )
            })
            .map_err(bad)?
        }
    };
    let s = crate::eval::summarise(&reads);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"summary": s, "replies": reads}))?
        );
    } else {
        print!("{}", crate::eval::render(&s, &reads, all));
    }
    Ok(())
}

fn run_daemon(config: Config) -> Result<(), Failure> {
    let dir = config.state_dir();
    let _lock = crate::store::DaemonLock::acquire(&dir).map_err(|e| match e {
        crate::store::StoreError::Locked { path } => {
            anyhow!("another perfbot run holds {path}: only one daemon per state directory")
        }
        e => e.into(),
    })?;
    // A command that had the database when the daemon started finishes first.
    let store = Store::open_waiting_unless(&dir, lock_wait(&config), || false)?;
    let config = std::sync::Arc::new(config);
    runtime()?.block_on(crate::daemon::run(config, store))?;
    Ok(())
}

fn digest(config: &Config, format: &str, since: &str, send: bool) -> Result<(), Failure> {
    let back = crate::digest::parse_since(since).ok_or_else(|| Failure {
        code: 2,
        error: anyhow!("--since {since:?}: use e.g. 7d, 36h, 2w"),
    })?;
    let store = open_store(config)?;
    let now = Utc::now();
    let d = crate::digest::from_store(&store, now, now - back, config.digest_thresholds())?;
    match format {
        "json" => println!("{}", serde_json::to_string_pretty(&d)?),
        "text" => print!(
            "{}",
            crate::digest::render_text(config, &d).map_err(anyhow::Error::msg)?
        ),
        "html" => {
            let hb = crate::web::templates(config).map_err(anyhow::Error::msg)?;
            let content = hb.render("digest", &crate::digest::view(&d))?;
            print!(
                "{}",
                hb.render(
                    "layout",
                    &serde_json::json!({"title": "Digest", "content": content})
                )?
            );
        }
        other => {
            return Err(Failure {
                code: 2,
                error: anyhow!("--format {other:?}: use text, html or json"),
            })
        }
    }
    if send {
        match crate::digest::queue_mail(config, &store, &d).map_err(anyhow::Error::msg)? {
            Some(id) => eprintln!("digest queued as <{id}>; `perfbot send` delivers it"),
            None => {
                return Err(
                    anyhow!("nobody gets the digest: set digest.to or trust.operators").into(),
                )
            }
        }
    }
    Ok(())
}
