//! `perfbot report`: comparison results → report mails, cases, queued mail.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use clap::Args;

use super::{lock_wait, send, Failure};
use crate::config::{Config, TransportKind};
use crate::flows::report::{prepare, prepare_loaded, submit, Prepared, QueueError};
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
    // Everything is prepared (and so validated) before anything is recorded.
    let checked = check(config, &a, now)?;
    if a.print {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for p in checked.iter().filter_map(|(_, p)| p.as_ref().ok()) {
            out.write_all(&p.raw)?;
            out.write_all(b"\n")?;
        }
        return Ok(());
    }
    let store = match Store::open_waiting(&config.state_dir(), lock_wait(config)) {
        Ok(s) => s,
        // Only the daemon's hold means "hand it over": it drains the spool
        // (and checks follow-up comparisons against the cases itself).
        Err(StoreError::Locked { .. }) if crate::store::daemon_running(&config.state_dir()) => {
            return spool(config, &a.inputs, &a)
        }
        Err(e) => return Err(e.into()),
    };
    record(config, &store, &a, checked, now)?;
    // The file outbox is local and instant: write it at once.
    if config.file.outbound.transport == TransportKind::File {
        send::send_now(config, &store, false)?;
    }
    Ok(())
}

/// An input and its report, or why it has none.
type Checked = (LoadedInput, Result<Prepared, QueueError>);

/// Every input loaded and its report prepared. An input with nothing to
/// report may still be a follow-up comparison of a fix: the cases decide,
/// once the store is open. Any other refusal ends the command.
fn check(config: &Config, a: &ReportArgs, now: DateTime<Utc>) -> Result<Vec<Checked>, Failure> {
    let mut checked = Vec::new();
    for input in &a.inputs {
        let loaded = LoadedInput::load(input).map_err(|e| none_queued(a, e.into()))?;
        match prepare_loaded(config, &loaded, a.template.as_deref(), a.force, now) {
            Ok(p) => checked.push((loaded, Ok(p))),
            Err(e @ QueueError::Report(ReportError::NothingToReport { .. }))
                if !a.print && Store::exists(&config.state_dir()) =>
            {
                checked.push((loaded, Err(e)))
            }
            Err(e) => return Err(none_queued(a, e)),
        }
    }
    Ok(checked)
}

/// One input refused, none queued: the error says so when there were more.
fn none_queued(a: &ReportArgs, e: QueueError) -> Failure {
    let mut f = queue_failure(e);
    if a.inputs.len() > 1 && !a.print {
        f.error = f
            .error
            .context(format!("none of the {} inputs was queued", a.inputs.len()));
    }
    f
}

/// A follow-up comparison of a fix verifies its case; the other inputs are
/// reported (recorded, queued), each said as it goes.
fn record(
    config: &Config,
    store: &Store,
    a: &ReportArgs,
    checked: Vec<Checked>,
    now: DateTime<Utc>,
) -> Result<(), Failure> {
    let mut prepared = Vec::new();
    let mut verifications = Vec::new();
    for (loaded, p) in checked {
        match (verify::find(config, store, &loaded)?, p) {
            (Some(v), _) => verifications.push(v),
            (None, Ok(p)) => prepared.push(p),
            (None, Err(e)) => return Err(none_queued(a, e)),
        }
    }
    for v in &verifications {
        say_verified(v, verify::record(store, v)?.as_ref());
    }
    for p in &mut prepared {
        let created = submit(config, store, p, now).map_err(queue_failure)?;
        if let (Some(why), Created::New(_)) = (&p.regzbot, &created) {
            eprintln!(
                "{}: handed to regzbot ({why}): `#regzbot introduced:` and Cc {}",
                p.input, config.file.regzbot.cc
            );
        }
        for (a, why) in &p.dropped {
            eprintln!("{}: {a} left out: {why}", p.input);
        }
        say_submitted(config, store, &created, p.held_because.as_deref())?;
    }
    Ok(())
}

/// What a follow-up comparison of a fix did to its case (`None`: the case
/// moved meanwhile).
fn say_verified(v: &verify::Verification, case: Option<&crate::model::case::Case>) {
    match case {
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

/// What became of a report submitted: queued, held (and why), or a case
/// that exists already.
fn say_submitted(
    config: &Config,
    store: &Store,
    created: &Created,
    held_because: Option<&str>,
) -> Result<(), Failure> {
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
        Created::New(c) if held_because.is_some() => {
            eprintln!(
                "case {} queued, mail held ({}); `perfbot outbox approve {}` sends it: {}",
                c.id,
                held_because.unwrap_or_default(),
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
    Ok(())
}

/// The daemon holds the database: hand the (already validated) inputs to it
/// through its spool directory, each as a snapshot (the input and the files
/// it names, copied and validated again as copied), never a pointer.
fn spool(config: &Config, inputs: &[PathBuf], a: &ReportArgs) -> Result<(), Failure> {
    use crate::flows::spool;
    let dir = config.spool_dir();
    let now = Utc::now();
    for i in inputs {
        let stem = i
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let stem: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let staging = spool::staging(&dir, &stem).map_err(anyhow::Error::from)?;
        let checked = spool::snapshot(i, &staging)
            .map_err(|e| Failure::usage(anyhow::Error::from(e)))
            .and_then(
                |copy| match prepare(config, &copy, a.template.as_deref(), a.force, now) {
                    Ok(_) | Err(QueueError::Report(ReportError::NothingToReport { .. })) => Ok(()),
                    Err(e) => Err(queue_failure(e)),
                },
            );
        if let Err(e) = checked {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
        let to = spool::commit(&staging, &dir, &stem).map_err(anyhow::Error::from)?;
        eprintln!(
            "perfbot run holds the database: {} handed to it as {}",
            i.display(),
            to.display()
        );
    }
    Ok(())
}
