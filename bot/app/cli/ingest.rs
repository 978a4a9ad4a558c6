//! `perfbot ingest`: read mail and record what belongs to case threads.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::anyhow;
use clap::Args;

use super::{open_store, runtime, Failure};
use crate::config::{Config, InboundSource};
use crate::flows::ingest::sources::{
    ingest_maildir, ingest_mbox, ingest_stdin, read_configured, Reading, SourceError,
};
use crate::flows::ingest::Ingestor;

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
    /// Read public-inbox archives (a repository, its epochs `N.git`, or a
    /// grokmirror tree of lists) from each repository's cursor on
    #[arg(long = "public-inbox", num_args = 1.., conflicts_with_all = ["mbox", "stdin", "maildir"])]
    pub public_inbox: Vec<PathBuf>,
    /// Keep following the configured source (IMAP IDLE or polling, a polled
    /// maildir) until stopped
    #[arg(long)]
    pub follow: bool,
}

pub fn run(config: &Config, a: IngestArgs) -> Result<(), Failure> {
    let store = open_store(config)?;
    super::require_files(
        a.mbox
            .iter()
            .chain(&a.maildir)
            .chain(&a.public_inbox)
            .map(PathBuf::as_path),
    )?;
    let mut ing = Ingestor::new(config, &store)?;
    let t0 = std::time::Instant::now();
    // Replies read before their report, whose case exists now.
    ing.release_held()?;
    let mut missed = Missed::default();
    if !a.public_inbox.is_empty() {
        missed.unread += public_inbox(&mut ing, &a.public_inbox)?;
    } else if a.stdin {
        ingest_stdin(&mut ing)?;
    } else if !a.mbox.is_empty() {
        missed = mboxes(&mut ing, &a.mbox);
    } else if let Some(dir) = &a.maildir {
        ingest_maildir(&mut ing, dir).map_err(usage)?;
    } else {
        configured(config, &mut ing, a.follow)?;
    }
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "{} ({:.1} MB in {:.2} s)",
        ing.stats.line(),
        ing.stats.bytes as f64 / 1e6,
        secs
    );
    missed.outcome(ing.stats.unreadable)
}

/// The sources of one `ingest` that were not read whole.
#[derive(Debug, Default)]
struct Missed {
    /// Files given as mbox files that are none (nothing in them read).
    not_mbox: usize,
    /// Sources whose reading stopped part way.
    unread: usize,
}

impl Missed {
    /// The exit the run comes to, with `unreadable` messages of an archive
    /// skipped: a file given for what it is not is the command's mistake
    /// (2); a source that stopped part way, a failure (1); skipped
    /// messages, 4.
    fn outcome(self, unreadable: usize) -> Result<(), Failure> {
        if self.not_mbox > 0 {
            let (is, it) = if self.not_mbox == 1 {
                ("is", "it")
            } else {
                ("are", "them")
            };
            return Err(Failure::usage(anyhow!(
                "{} of the files given {is} no mbox (nothing in {it} was read)",
                self.not_mbox
            )));
        }
        if self.unread > 0 {
            return Err(anyhow!("{} source(s) could not be read to the end", self.unread).into());
        }
        if unreadable > 0 {
            return Err(Failure {
                code: 4,
                error: anyhow!(
                    "{unreadable} message(s) could not be read out of the archive or mailbox and were skipped; \
                     `perfbot quarantine list` shows where and why, and the next run tries them again"
                ),
            });
        }
        Ok(())
    }
}

/// Every mbox file given, each said when it cannot be read: the others are
/// still read.
fn mboxes(ing: &mut Ingestor, files: &[PathBuf]) -> Missed {
    let mut missed = Missed::default();
    for f in files {
        match ingest_mbox(ing, f) {
            Ok(()) => {}
            Err(e @ SourceError::NotASource { .. }) => {
                eprintln!("perfbot: {e}");
                missed.not_mbox += 1;
            }
            Err(e) => {
                eprintln!("perfbot: {e}");
                missed.unread += 1;
            }
        }
    }
    missed
}

/// Every repository of the given archives, in epoch order, with a progress
/// line on a terminal; the number of repositories that could not be read
/// (each one named on standard error; the others are still read).
fn public_inbox(ing: &mut Ingestor, paths: &[PathBuf]) -> Result<usize, Failure> {
    use crate::flows::ingest::public_inbox::{ingest_repository, repositories, PublicInboxError};
    use std::io::IsTerminal;
    let mut repos = Vec::new();
    for p in paths {
        repos.extend(repositories(p).map_err(Failure::usage)?);
    }
    let mut failed = 0;
    for r in &repos {
        let pb = if std::io::stderr().is_terminal() {
            let pb = indicatif::ProgressBar::new_spinner();
            pb.set_style(
                indicatif::ProgressStyle::with_template("{msg} {bytes} {bytes_per_sec} {elapsed}")
                    .expect("valid template"),
            );
            pb.set_message(r.display().to_string());
            pb
        } else {
            indicatif::ProgressBar::hidden()
        };
        let read = ingest_repository(ing, r, |b| pb.set_position(b));
        pb.finish_and_clear();
        let read = match read {
            Ok(read) => read,
            // The state database failing ends everything; a repository
            // that cannot be opened or walked ends only itself.
            Err(PublicInboxError::Store(e)) => return Err(e.into()),
            Err(e) => {
                eprintln!("perfbot: {e}");
                failed += 1;
                continue;
            }
        };
        if read.recovered > 0 {
            eprintln!(
                "{}: {} message(s) unreadable before were read",
                r.display(),
                read.recovered
            );
        }
        if read.unreadable > 0 {
            eprintln!(
                "{}: {} message(s) could not be read (see `perfbot quarantine list`)",
                r.display(),
                read.unreadable
            );
        }
        if read.rescanned {
            eprintln!(
                "{}: history rewritten since the last run: read again ({} commits)",
                r.display(),
                read.commits
            );
        }
    }
    Ok(failed)
}

/// A source the operator named wrongly is a usage error (exit 2); any
/// other failure is operational.
fn usage(e: SourceError) -> Failure {
    match e {
        SourceError::Config(_) | SourceError::NotASource { .. } => Failure::usage(e),
        e => e.into(),
    }
}

/// The configured source, once or until Ctrl-C / SIGTERM.
fn configured(config: &Config, ing: &mut Ingestor, follow: bool) -> Result<(), Failure> {
    if config.file.inbound.source == InboundSource::None {
        eprintln!("inbound.source is none: nothing to read");
        return Ok(());
    }
    if !follow {
        return read_configured(config, ing, Reading::Once, |_| {}).map_err(usage);
    }
    let stop = AtomicBool::new(false);
    let rt = runtime()?;
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::scope(|scope| {
        let stop = &stop;
        let worker = scope.spawn(move || {
            let mut seen = ing.stats.read;
            let r = read_configured(config, ing, Reading::Until(stop), |ing| {
                if ing.stats.read > seen {
                    // Not eprintln!: a follower whose stderr is gone (its
                    // parent died) must keep working and still stop on SIGTERM.
                    let _ = writeln!(std::io::stderr(), "{}", ing.stats.line());
                    seen = ing.stats.read;
                }
            });
            // A source that cannot start ends the command at once.
            let _ = done_tx.send(());
            r
        });
        rt.block_on(async {
            let mut signals = crate::app::daemon::StopSignals::new();
            tokio::select! {
                _ = signals.next() => {
                    stop.store(true, Ordering::Relaxed);
                    let _ = writeln!(std::io::stderr(), "stopping");
                }
                _ = done_rx => {}
            }
        });
        stop.store(true, Ordering::Relaxed);
        worker.join().unwrap_or_else(|_| {
            Err(SourceError::Read {
                path: "ingest".into(),
                why: "the ingest thread panicked (a bug: please report it)".into(),
            })
        })
    })
    .map_err(usage)
}
