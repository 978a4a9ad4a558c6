//! `perfbot run`: the whole job in one process. Loops on tokio — delivery,
//! the report spool, the scheduler (reminders, digest), the dashboard — and
//! the blocking ingest loop (IMAP IDLE or a polled maildir) on a thread of its
//! own. SIGTERM/SIGINT stop it: loops finish the item in hand (a mail being
//! sent is either recorded as sent or stays "sending", to be resent under the
//! same Message-ID), the database is flushed, and the process exits 0.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use tokio::sync::{watch, Notify};

use crate::app::web::{AppState, Metrics};
use crate::config::{Config, InboundSource, TransportKind};
use crate::flows::delivery::{send_due, Transport};
use crate::flows::ingest::sources::{read_configured, Reading};
use crate::flows::ingest::Ingestor;
use crate::flows::report::{prepare_loaded, submit};
use crate::flows::verify;
use crate::input::LoadedInput;
use crate::store::Store;

/// Shared between the loops.
struct Shared {
    config: Arc<Config>,
    store: Arc<Store>,
    metrics: Arc<Metrics>,
    /// Read by the blocking ingest thread between messages and waits.
    stop: AtomicBool,
    /// The shutdown broadcast the async loops wait on (no polling).
    shutdown: watch::Sender<bool>,
    /// Wakes the delivery loop when something was queued.
    wake: Notify,
    /// Bumped when the spool creates a case (ingestion reloads its index).
    generation: Arc<AtomicU64>,
    /// Why a loop stopped the daemon, if one did (the database can no
    /// longer be written).
    failure: std::sync::Mutex<Option<String>>,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Tell every loop to finish the item in hand and end.
    fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.shutdown.send_replace(true);
        self.wake.notify_waiters();
    }

    /// A loop found the database can no longer be written: every loop
    /// stops, and `run` ends with the reason, so that a supervisor starts
    /// perfbot again (sled fails each later write of this process, even
    /// once the disk has room again).
    fn fail(&self, why: String) {
        tracing::error!(error = %why, "the state database can no longer be written: stopping");
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(why);
        self.stop();
    }

    /// Resolves once `stop` was called.
    async fn stopped(&self) {
        let mut rx = self.shutdown.subscribe();
        let _ = rx.wait_for(|stop| *stop).await;
    }
}

/// Sleep up to `d`, waking early on stop or `notify`.
async fn nap(s: &Shared, d: Duration, notify: Option<&Notify>) {
    let step = async {
        match notify {
            Some(n) => {
                let _ = tokio::time::timeout(d, n.notified()).await;
            }
            None => tokio::time::sleep(d).await,
        }
    };
    tokio::select! {
        _ = step => {}
        _ = s.stopped() => {}
    }
}

async fn delivery_loop(s: Arc<Shared>, transport: Transport) {
    tracing::info!(transport = %transport.describe(), "delivery loop started");
    let every = Duration::from_secs(s.config.file.run.send_every_secs.max(1));
    while !s.stopping() {
        match send_due(&s.config, &s.store, &transport, Utc::now(), false).await {
            Ok(sum) => {
                Metrics::add(&s.metrics.mails_sent, sum.sent as u64);
                Metrics::add(&s.metrics.mails_failed, (sum.failed + sum.dead) as u64);
                if sum.sent + sum.failed + sum.dead > 0 {
                    tracing::info!("{}", sum.line());
                }
            }
            Err(e) if e.is_broken() => s.fail(e.to_string()),
            Err(e) => tracing::error!(error = %e, "delivery failed"),
        }
        nap(&s, every, Some(&s.wake)).await;
    }
}

/// Queue the report inputs dropped in the spool directory; move each to
/// `done/` or `failed/` (with a `.error` file saying why).
fn drain_spool(s: &Shared) -> usize {
    let dir = s.config.spool_dir();
    let mut n = 0;
    for f in spooled(&dir) {
        let Some(input) = spooled_input(&f, &dir) else {
            continue;
        };
        // One bad file must not stop the ones after it, even by a bug.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            take_spooled(s, &input, &f, Utc::now())
        }))
        .unwrap_or_else(|_| {
            Err(NotTaken::Refused(
                "perfbot failed on this input (a bug: please report it)".into(),
            ))
        });
        let name = f.file_name().unwrap_or_default().to_owned();
        match result {
            Ok(created) => {
                if let crate::store::Created::New(c) = created {
                    tracing::info!(case = %c.id, subject = %c.subject, input = %f.display(), "report queued from the spool");
                    Metrics::add(&s.metrics.reports_queued, 1);
                    n += 1;
                }
                move_to(&f, &dir.join("done"), &name);
            }
            // Not the input's fault: it stays, for the next start.
            Err(NotTaken::Broken(why)) => {
                s.fail(why);
                break;
            }
            Err(NotTaken::Refused(e)) => {
                tracing::warn!(input = %f.display(), error = %e, "spooled report refused");
                move_to_failed(&f, &dir, &e);
            }
        }
    }
    if n > 0 {
        s.generation.fetch_add(1, Ordering::Release);
        s.wake.notify_one();
    }
    n
}

/// A file dropped by hand is taken once it has not changed for this long: a
/// `cp` of a large input still under way is not read half-written.
const SPOOL_SETTLE: Duration = Duration::from_secs(2);

/// What waits in the spool, in name order. `*.d`: a snapshot `perfbot
/// report` made (its input and the files it names), moved in whole by one
/// rename; `.json`: an input an operator dropped, once it has settled;
/// `.ref`: a pointer an older perfbot wrote. Hidden names are snapshots
/// still being made.
fn spooled(dir: &Path) -> Vec<PathBuf> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::error!(spool = %dir.display(), error = %e, "cannot read the spool directory");
            }
            return Vec::new();
        }
    };
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json" || e == "ref") && settled(p)
                || (p.is_dir() && p.extension().is_some_and(|e| e == "d"))
        })
        .collect();
    files.sort();
    files
}

/// Unchanged for `SPOOL_SETTLE` (a clock set back counts as settled: the
/// file is never left waiting for ever).
fn settled(p: &Path) -> bool {
    let modified = std::fs::metadata(p).and_then(|m| m.modified());
    modified.map_or(true, |t| {
        t.elapsed().map_or(true, |age| age >= SPOOL_SETTLE)
    })
}

/// The input a spooled file stands for. A `.ref` pointer that cannot be
/// read is said and moved aside (never skipped again and again): `None`. So
/// is what is no regular file (a FIFO named `x.json` would hold the spool,
/// and a stop, for ever on the first read).
fn spooled_input(f: &Path, dir: &Path) -> Option<PathBuf> {
    let file = if f.is_dir() {
        f.join(crate::flows::spool::INPUT)
    } else {
        f.to_path_buf()
    };
    if file.exists() && !file.is_file() {
        let why = format!(
            "{}: not a regular file (a FIFO, a socket or a device): never read",
            file.display()
        );
        tracing::warn!(file = %f.display(), "{why}: moved to failed/");
        move_to_failed(f, dir, &why);
        return None;
    }
    if f.extension().is_some_and(|e| e == "ref") {
        match std::fs::read_to_string(f) {
            Ok(p) => Some(PathBuf::from(p.trim())),
            Err(e) => {
                tracing::warn!(file = %f.display(), error = %e, "spooled pointer unreadable: moved to failed/");
                move_to_failed(f, dir, &format!("not a readable pointer file: {e}"));
                None
            }
        }
    } else {
        Some(file)
    }
}

/// Why a spooled input was not taken.
enum NotTaken {
    /// Its own fault (or a bug): moved to `failed/` with the reason.
    Refused(String),
    /// The database can no longer be written (`StoreError::is_broken`):
    /// the input is left where it is, for the next start.
    Broken(String),
}

impl From<crate::store::StoreError> for NotTaken {
    fn from(e: crate::store::StoreError) -> NotTaken {
        if e.is_broken() {
            NotTaken::Broken(e.to_string())
        } else {
            NotTaken::Refused(e.to_string())
        }
    }
}

impl From<crate::flows::report::QueueError> for NotTaken {
    fn from(e: crate::flows::report::QueueError) -> NotTaken {
        match e {
            crate::flows::report::QueueError::Store(e) => e.into(),
            e => NotTaken::Refused(e.to_string()),
        }
    }
}

/// Report a spooled input, or verify its case when it is a follow-up
/// comparison of a fix.
fn take_spooled(
    s: &Shared,
    input: &Path,
    f: &Path,
    now: chrono::DateTime<Utc>,
) -> Result<crate::store::Created, NotTaken> {
    let loaded = LoadedInput::load(input).map_err(|e| NotTaken::Refused(e.to_string()))?;
    if let Some(v) = verify::find(&s.config, &s.store, &loaded)? {
        let c = verify::record(&s.store, &v)?;
        tracing::info!(case = %v.case.id, verified = v.verified(), recorded = c.is_some(), figures = %v.figures, input = %f.display(), "follow-up comparison from the spool");
        return Ok(crate::store::Created::Existing(v.case));
    }
    let mut p = prepare_loaded(&s.config, &loaded, None, false, now)?;
    Ok(submit(&s.config, &s.store, &mut p, now)?)
}

/// Move a spooled file to `failed/`, with why beside it (`NAME.error`).
fn move_to_failed(f: &Path, dir: &Path, why: &str) {
    let failed = dir.join("failed");
    let name = f.file_name().unwrap_or_default().to_owned();
    move_to(f, &failed, &name);
    let _ = std::fs::write(
        failed.join(format!("{}.error", name.to_string_lossy())),
        why,
    );
}

fn move_to(f: &Path, dir: &Path, name: &std::ffi::OsStr) {
    let _ = std::fs::create_dir_all(dir);
    if let Err(e) = std::fs::rename(f, dir.join(name)) {
        tracing::warn!(file = %f.display(), error = %e, "could not move spooled file");
    }
}

async fn spool_loop(s: Arc<Shared>) {
    let every = Duration::from_secs(s.config.file.run.poll_every_secs.max(1));
    let _ = std::fs::create_dir_all(s.config.spool_dir());
    while !s.stopping() {
        let s2 = s.clone();
        let _ = tokio::task::spawn_blocking(move || drain_spool(&s2)).await;
        nap(&s, every, None).await;
    }
}

async fn scheduler_loop(s: Arc<Shared>) {
    let every = Duration::from_secs(s.config.file.run.schedule_every_secs.max(1));
    while !s.stopping() {
        let s2 = s.clone();
        let _ = tokio::task::spawn_blocking(move || schedule_once(&s2)).await;
        nap(&s, every, None).await;
    }
}

fn schedule_once(s: &Shared) {
    let now = Utc::now();
    if s.config.file.reminders.enabled {
        match crate::flows::remind::run(&s.config, &s.store, now, false) {
            Ok(lines) => {
                for l in &lines {
                    tracing::info!("{l}");
                }
                if !lines.is_empty() {
                    s.wake.notify_one();
                }
            }
            Err(e) if broken(&e) => return s.fail(e.to_string()),
            Err(e) => tracing::error!(error = %e, "reminders failed"),
        }
    }
    match crate::flows::review::run(&s.config, &s.store, now, false) {
        Ok(lines) => {
            for l in &lines {
                tracing::info!("{l}");
            }
        }
        Err(e) if e.is_broken() => return s.fail(e.to_string()),
        Err(e) => tracing::error!(error = %e, "the review of quiet cases failed"),
    }
    scheduled_digest(s, now);
}

/// An error of a job that may come from the database: whether that can no
/// longer be written.
fn broken(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<crate::store::StoreError>())
        .any(crate::store::StoreError::is_broken)
}

/// The digest, when `digest.every_hours` says it is due: queued together
/// with the time it was due (`Occasion::Scheduled`), so a restart within
/// the period finds it sent.
fn scheduled_digest(s: &Shared, now: chrono::DateTime<Utc>) {
    use crate::flows::digest::{from_store, last_scheduled, queue_mail, DigestError, Occasion};
    let hours = s.config.file.digest.every_hours;
    if hours == 0 {
        return;
    }
    let every = chrono::Duration::hours(hours as i64);
    let last = last_scheduled(&s.store).ok().flatten();
    if let Some(last) = last.filter(|l| now - *l < every) {
        tracing::debug!(next = %(last + every).to_rfc3339(), "digest not due yet");
        return;
    }
    let queued = from_store(&s.store, now, now - every, s.config.digest_thresholds())
        .map_err(DigestError::from)
        .and_then(|d| queue_mail(&s.config, &s.store, &d, Occasion::Scheduled));
    match queued {
        Ok(Some(id)) => {
            tracing::info!(message_id = %id, "digest queued");
            s.wake.notify_one();
        }
        Ok(None) => {
            tracing::warn!("digest due, but nobody gets it (digest.to, trust.operators)")
        }
        Err(DigestError::Store(e)) if e.is_broken() => s.fail(e.to_string()),
        Err(e) => tracing::error!(error = %e, "digest failed"),
    }
}

/// The blocking ingest loop: the configured source, followed until stop.
fn ingest_thread(s: Arc<Shared>) {
    let config = s.config.clone();
    let store = s.store.clone();
    let mut ing = match Ingestor::new(&config, &store) {
        Ok(i) => i,
        Err(e) => {
            tracing::error!(error = %e, "ingestion disabled");
            return;
        }
    };
    ing.generation = Some(s.generation.clone());
    if let Err(e) = ing.release_held() {
        tracing::warn!(error = %e, "held replies: not read again now");
    }
    let released = reread_quarantine(&mut ing, &store);
    Metrics::add(&s.metrics.quarantine_released, released);
    let report = |ing: &mut Ingestor, before: &crate::flows::ingest::Stats| {
        let st = &ing.stats;
        Metrics::add(&s.metrics.messages_ingested, (st.read - before.read) as u64);
        Metrics::add(
            &s.metrics.messages_quarantined,
            (st.quarantined - before.quarantined) as u64,
        );
        Metrics::add(
            &s.metrics.replies_handled,
            (st.handled - before.handled) as u64,
        );
        if st.read > before.read {
            tracing::info!("{}", st.line());
        }
        if st.handled > before.handled {
            s.wake.notify_one();
        }
    };
    let mut before = ing.stats.clone();
    let r = read_configured(&config, &mut ing, Reading::Until(&s.stop), |ing| {
        report(ing, &before);
        before = ing.stats.clone();
    });
    match r {
        Err(e) if e.is_broken_store() => s.fail(e.to_string()),
        Err(e) => tracing::error!(error = %e, "ingestion disabled"),
        Ok(()) => {}
    }
}

/// Read the quarantine again, once, at start: after an upgrade or a raised
/// limit (`inbound.max_mime_parts`), a reply that reads now reaches its
/// case. `quarantine retry` does it by hand, but is refused while the
/// daemon holds the database. What still cannot be read stays, with the
/// reason it has now, and a warning says how many stay. Returns how many
/// were read.
fn reread_quarantine(ing: &mut Ingestor, store: &Store) -> u64 {
    let list = match store.quarantined() {
        Ok(list) => list,
        Err(e) => {
            tracing::warn!(error = %e, "quarantine: not read again now");
            return 0;
        }
    };
    let (mut read, mut kept) = (0u64, 0u64);
    for q in &list {
        match ing.retry_quarantined(q) {
            Ok(crate::flows::ingest::Outcome::Quarantined(_)) => kept += 1,
            Ok(_) => read += 1,
            Err(e) => {
                kept += 1;
                tracing::warn!(hash = %q.hash, error = %e, "quarantined message not read again");
            }
        }
    }
    // Each message read is durable already: letting it go flushed the store.
    if kept > 0 {
        tracing::warn!(
            read,
            kept,
            "quarantine read again at start; `perfbot quarantine list` names what stays"
        );
    } else if read > 0 {
        tracing::info!(read, kept, "quarantine read again at start");
    }
    read
}

/// What the daemon tells its operator when it starts.
fn startup_lines(config: &Config, web: Option<&str>) -> Vec<String> {
    let mut out = vec![format!(
        "perfbot run: state {} (config {})",
        config.state_dir().display(),
        config.source
    )];
    out.push(match web {
        Some(a) => format!("  dashboard: http://{a}/"),
        None => "  dashboard: off (web.enabled = false)".into(),
    });
    out.push(match config.file.inbound.source {
        InboundSource::Imap => format!(
            "  reading: IMAP {} mailbox {}",
            config.file.imap.url, config.file.imap.mailbox
        ),
        InboundSource::Maildir => format!("  reading: maildir {}", config.maildir().display()),
        InboundSource::None => "  reading: nothing (inbound.source = none)".into(),
    });
    out.push(match config.file.outbound.transport {
        TransportKind::Smtp => format!("  sending: SMTP {}", config.file.smtp.url),
        TransportKind::Stdout => "  sending: to standard output".into(),
        TransportKind::File => format!("  sending: files in {}", config.outbox_dir().display()),
    });
    out.push(format!(
        "  reports: drop inputs in {} (or run `perfbot report`); stop with Ctrl-C or SIGTERM",
        config.spool_dir().display()
    ));
    out
}

/// SIGINT and SIGTERM, listened for from the moment this is made, so that a
/// second signal after the first is never missed.
pub struct StopSignals {
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    /// Must be called within the runtime.
    pub fn new() -> StopSignals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let listen = |kind, name: &str| {
                signal(kind)
                    .map_err(|e| tracing::warn!(error = %e, "no {name} handler"))
                    .ok()
            };
            StopSignals {
                int: listen(SignalKind::interrupt(), "SIGINT"),
                term: listen(SignalKind::terminate(), "SIGTERM"),
            }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    /// The next SIGINT or SIGTERM: its number.
    pub async fn next(&mut self) -> i32 {
        #[cfg(unix)]
        {
            async fn one(s: &mut Option<tokio::signal::unix::Signal>, n: i32) -> i32 {
                if let Some(s) = s {
                    if s.recv().await.is_some() {
                        return n;
                    }
                }
                std::future::pending().await
            }
            tokio::select! {
                n = one(&mut self.int, libc::SIGINT) => n,
                n = one(&mut self.term, libc::SIGTERM) => n,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            2
        }
    }
}

impl Default for StopSignals {
    fn default() -> Self {
        Self::new()
    }
}

/// Run until SIGTERM/SIGINT, delivering through `transport` (made from the
/// config, and checked, by the caller).
pub async fn run(config: Arc<Config>, store: Store, transport: Transport) -> anyhow::Result<()> {
    for d in config.template_drift() {
        tracing::warn!("{d}");
    }
    let store = Arc::new(store);
    let metrics = Arc::new(Metrics::default());
    let s = Arc::new(Shared {
        config: config.clone(),
        store: store.clone(),
        metrics: metrics.clone(),
        stop: AtomicBool::new(false),
        shutdown: watch::channel(false).0,
        wake: Notify::new(),
        generation: Arc::new(AtomicU64::new(0)),
        failure: std::sync::Mutex::new(None),
    });
    let web = match config.file.web.enabled {
        true => Some(start_web(&s).await?),
        false => None,
    };
    let ingest = {
        let s2 = s.clone();
        std::thread::Builder::new()
            .name("ingest".into())
            .spawn(move || ingest_thread(s2))?
    };
    // Listened for before anything starts: a signal during the start is kept.
    let mut signals = StopSignals::new();
    let loops = vec![
        tokio::spawn(delivery_loop(s.clone(), transport)),
        tokio::spawn(spool_loop(s.clone())),
        tokio::spawn(scheduler_loop(s.clone())),
    ];
    tracing::info!(state = %config.state_dir().display(), "perfbot running");
    // Said on the terminal whatever RUST_LOG is: where to look, what is read.
    let web_addr = web.as_ref().map(|(_, addr)| addr.as_str());
    eprintln!("{}", startup_lines(&config, web_addr).join("\n"));

    tokio::select! {
        _ = signals.next() => {
            // Said on the terminal too, as the start is: Ctrl-C is answered,
            // and a slow stop (a mail in flight) is seen to be one.
            eprintln!(
                "perfbot run: stopping, finishing the work in hand (a second Ctrl-C or SIGTERM stops at once)"
            );
        }
        // A loop stopped it (`Shared::fail`).
        _ = s.stopped() => {
            eprintln!("perfbot run: stopping: the state database can no longer be written");
        }
    }
    tokio::spawn(exit_at_second_signal(signals));
    tracing::info!("stopping: finishing the work in hand");
    s.stop();
    for l in loops {
        let _ = l.await;
    }
    if let Some((w, _)) = web {
        let _ = w.await;
    }
    let _ = tokio::task::spawn_blocking(move || ingest.join()).await;
    finish(&s)
}

/// The dashboard, served until the daemon stops; and the address it
/// listens on.
async fn start_web(s: &Arc<Shared>) -> anyhow::Result<(tokio::task::JoinHandle<()>, String)> {
    let config = &s.config;
    let state = Arc::new(
        AppState::new(config.clone(), s.store.clone(), s.metrics.clone())
            .map_err(anyhow::Error::msg)?
            .with_settle_token(&config.web_token()?),
    );
    let listener = tokio::net::TcpListener::bind(config.file.web.listen)
        .await
        .map_err(|e| anyhow::anyhow!("web.listen {}: {e}", config.file.web.listen))?;
    let addr = listener.local_addr()?;
    tracing::info!(listen = %addr, "dashboard");
    let s2 = s.clone();
    let served = tokio::spawn(async move {
        let stop = async move { s2.stopped().await };
        crate::app::web::serve(listener, crate::app::web::router(state), stop).await;
    });
    Ok((served, addr.to_string()))
}

/// A second signal does not wait for the work in hand (an SMTP server that
/// went silent holds a mail up to its timeout). Stopping at once is safe:
/// the state is durable at every step, as under kill -9, and a mail whose
/// sending was cut short is checked before it is sent again.
async fn exit_at_second_signal(mut signals: StopSignals) {
    let n = signals.next().await;
    eprintln!(
        "perfbot run: stopped at once (a second signal); the work in hand is taken up at the next start"
    );
    std::process::exit(128 + n);
}

/// The end of a run whose work has stopped: the database flushed, or the
/// error that stopped it.
fn finish(s: &Shared) -> anyhow::Result<()> {
    let failure = s.failure.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(why) = failure {
        // Not flushed on the way out (see `Store`'s `Drop`), whichever
        // error of which loop said it.
        s.store.mark_broken();
        anyhow::bail!("{why} (perfbot run stopped)");
    }
    s.store.flush()?;
    tracing::info!("stopped");
    eprintln!("perfbot run: stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.json` dropped by hand waits until it has settled; a snapshot
    /// folder, moved in by one rename, is taken at once; hidden names and
    /// other files are never taken.
    #[test]
    fn the_spool_takes_a_dropped_file_once_it_has_settled() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        for f in ["a.json", ".b.json", "c.txt"] {
            std::fs::write(dir.join(f), "{}").unwrap();
        }
        std::fs::create_dir(dir.join("d.d")).unwrap();
        let names = || -> Vec<String> {
            spooled(dir)
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names(), ["d.d"]);
        let before = std::time::SystemTime::now() - SPOOL_SETTLE;
        let f = std::fs::File::options()
            .write(true)
            .open(dir.join("a.json"))
            .unwrap();
        f.set_modified(before).unwrap();
        assert_eq!(names(), ["a.json", "d.d"]);
    }
}
