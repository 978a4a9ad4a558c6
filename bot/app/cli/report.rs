//! `perfbot report`: comparison results → report mails, cases, queued mail.

use std::path::PathBuf;

use anyhow::Context;
use chrono::Utc;
use clap::Args;

use super::{lock_wait, send, Failure};
use crate::config::{Config, TransportKind};
use crate::flows::report::{prepare, prepare_loaded, submit, QueueError};
use crate::flows::verify;
use crate::input::LoadedInput;
use crate::model::case::CaseState;
use crate::report::build::ReportError;
use crate::store::{Created, Store, StoreError};

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

pub(super) fn queue_failure(e: QueueError) -> Failure {
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

pub fn run(config: &Config, a: ReportArgs) -> Result<(), Failure> {
    let now = Utc::now();
    if a.print {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for input in &a.inputs {
            let p = prepare(config, input, a.template.as_deref(), a.force, now)
                .map_err(queue_failure)?;
            out.write_all(&p.raw)?;
            out.write_all(b"\n")?;
        }
        return Ok(());
    }
    let store = match Store::open_waiting(&config.state_dir(), lock_wait(config)) {
        Ok(s) => s,
        // Only the daemon's hold means "hand it over": it drains the spool.
        Err(StoreError::Locked { .. }) if crate::store::daemon_running(&config.state_dir()) => {
            for input in &a.inputs {
                match prepare(config, input, a.template.as_deref(), a.force, now) {
                    // Perhaps a follow-up comparison of a fix: the daemon
                    // checks it against the cases.
                    Ok(_) | Err(QueueError::Report(ReportError::NothingToReport { .. })) => {}
                    Err(e) => return Err(queue_failure(e)),
                }
            }
            return spool(config, &a.inputs);
        }
        Err(e) => return Err(e.into()),
    };
    // Everything is checked (and so validated) before anything is recorded:
    // a follow-up comparison of a fix verifies its case, the rest report.
    let mut prepared = Vec::new();
    let mut verifications = Vec::new();
    for input in &a.inputs {
        let loaded = LoadedInput::load(input).map_err(|e| queue_failure(e.into()))?;
        if let Some(v) = verify::find(config, &store, &loaded)? {
            verifications.push(v);
            continue;
        }
        prepared.push(
            prepare_loaded(config, loaded, a.template.as_deref(), a.force, now)
                .map_err(queue_failure)?,
        );
    }
    for v in &verifications {
        match verify::record(&store, v)? {
            Some(c) if v.verified() => {
                eprintln!("{}: case {} fixed (verified): {}", v.input, c.id, v.figures)
            }
            Some(c) => eprintln!(
                "{}: case {} reopened, the fix did not bring it back: {}",
                v.input, c.id, v.figures
            ),
            None => eprintln!(
                "{}: case {} moved meanwhile; nothing recorded",
                v.input, v.case.id
            ),
        }
    }
    for p in &mut prepared {
        let created = submit(config, &store, p, now).map_err(queue_failure)?;
        if let (Some(why), Created::New(_)) = (&p.regzbot, &created) {
            eprintln!(
                "{}: handed to regzbot ({why}): `#regzbot introduced:` and Cc {}",
                p.input, config.file.regzbot.cc
            );
        }
        for (a, why) in &p.dropped {
            eprintln!("{}: {a} left out: {why}", p.input);
        }
        match created {
            Created::New(c) if !matches!(c.state, CaseState::Queued | CaseState::Reported) => {
                // Series memory or an ignore rule: the outbox says which.
                let why = store
                    .outbox_entry(&c.message_id)?
                    .held_because
                    .unwrap_or_default();
                eprintln!(
                    "case {} is {}, carried over ({why}); its mail is held, `perfbot outbox approve {}` sends it: {}",
                    c.id, c.state, c.message_id, c.subject
                )
            }
            Created::New(c) if p.held_because.is_some() => {
                eprintln!(
                    "case {} queued, mail held ({}); `perfbot outbox approve {}` sends it: {}",
                    c.id,
                    p.held_because.as_deref().unwrap_or_default(),
                    c.message_id,
                    c.subject
                )
            }
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
    if config.file.outbound.transport == TransportKind::File {
        send::send_now(config, &store, false)?;
    }
    Ok(())
}

/// The daemon holds the database: hand the (already validated) inputs to it
/// through its spool directory.
fn spool(config: &Config, inputs: &[PathBuf]) -> Result<(), Failure> {
    let dir = config.spool_dir();
    for i in inputs {
        // A pointer to the input, not a copy: inputs may name matrix files
        // relative to themselves.
        let abs = std::fs::canonicalize(i).with_context(|| i.display().to_string())?;
        let name = format!(
            "{}-{}.ref",
            Utc::now().format("%Y%m%d%H%M%S%f"),
            i.file_stem().unwrap_or_default().to_string_lossy()
        );
        crate::fsutil::write_atomic(&dir, &name, abs.to_string_lossy().as_bytes())
            .with_context(|| dir.display().to_string())?;
        eprintln!(
            "perfbot run holds the database: {} handed to it through {}",
            i.display(),
            dir.display()
        );
    }
    Ok(())
}
