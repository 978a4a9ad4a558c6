//! sled, the one source of truth: cases, their events, the Message-ID index, the
//! outbox and mailbox cursors. Multi-tree updates run in one transaction.

pub(crate) mod cursor;
pub(crate) mod early;
pub(crate) mod held;
pub(crate) mod labels;
pub(crate) mod optout;
pub(crate) mod outbox;
pub(crate) mod thread;

use std::path::Path;

use chrono::{DateTime, Utc};
use sled::transaction::{ConflictableTransactionError, TransactionError};
use sled::Transactional;

use crate::model::case::{Case, CaseId, CaseState, Cause, Event, MovedByMail};
use crate::model::{MessageId, OutboxEntry, ThreadEntry};

/// The layout this code reads and writes.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("state database {path}: {source}")]
    Open { path: String, source: sled::Error },
    #[error("state database {path}: the disk that holds it is full, and opening a database writes to it: nothing was read or written; free some space and run again")]
    OpenFull { path: String },
    #[error("state database {path} is in use by another perfbot process (is `perfbot run` running? Its dashboard serves the same data; reports can go to its spool directory)")]
    Locked { path: String },
    #[error("state database {path} is still in use by another perfbot command after waiting {secs} s; try again when it has finished")]
    Busy { path: String, secs: u64 },
    #[error("state database: {0}")]
    Sled(sled::Error),
    /// A write failed for want of space: said as such, not as sled's debug
    /// text of the OS error.
    #[error("state database: the disk that holds it is full: this was not written (what was written before is kept); free some space and run again")]
    DiskFull,
    #[error("state database {path} was written by a newer perfbot (schema {found}, this one knows {SCHEMA_VERSION}); refusing to touch it")]
    Newer { path: String, found: u32 },
    #[error("state database {path} is missing, but {marker} says one was created there on {created}; restore db/ from a backup (or move {marker} and {generation} aside to start a new, empty database)")]
    Missing {
        path: String,
        marker: String,
        generation: String,
        created: String,
    },
    #[error("state database {path} is missing, but {generation} says one made {writes} writes durable there; restore db/ and its marker from a backup (or move {generation} aside to start a new, empty database)")]
    MissingSinceWrites {
        path: String,
        generation: String,
        writes: u64,
    },
    #[error("state database {path} is empty or damaged, but {marker} says a database was created there on {created}; perfbot will not start afresh on top of it. Restore db/ from a backup (or move {path}, {marker} and {generation} aside to start a new, empty database)")]
    Emptied {
        path: String,
        marker: String,
        generation: String,
        created: String,
    },
    #[error("state database {path} is not a perfbot database or is damaged: {why}")]
    Corrupt { path: String, why: String },
    #[error("record {key} in {tree} is damaged: {why}")]
    Record {
        tree: &'static str,
        key: String,
        why: String,
    },
    #[error("no case {0}")]
    NoCase(String),
    #[error("no outbox message {0}")]
    NoMessage(String),
}

pub struct Store {
    db: sled::Db,
    /// A write failed so that sled fails every later one (`is_broken`):
    /// then the database is never dropped (see `Drop`).
    broken: std::sync::atomic::AtomicBool,
    generation: std::sync::atomic::AtomicU64,
    flush_lock: std::sync::Mutex<()>,
    generation_path: std::path::PathBuf,
    cases: sled::Tree,
    events: sled::Tree,
    messages: sled::Tree,
    outbox: sled::Tree,
    outbox_raw: sled::Tree,
    /// The outbox's Message-IDs by case (`case/` + Message-ID → nothing):
    /// a case's mail without decoding every mail perfbot ever queued.
    /// Written with every new entry (a mail's case never changes); made
    /// again, the first time it is read, when it does not hold one key per
    /// entry (`outbox_indexed` says it was checked).
    outbox_by_case: sled::Tree,
    outbox_indexed: std::sync::Mutex<bool>,
    optout: sled::Tree,
    cursors: sled::Tree,
    thread: sled::Tree,
    quarantine: sled::Tree,
    /// Messages an archive holds that could not be read out of it, by
    /// repository and commit (see `Unreadable`).
    unreadable: sled::Tree,
    /// Replies that may answer a report not read yet, and their bytes.
    held: sled::Tree,
    held_raw: sled::Tree,
    /// Replies about no case kept for the message they answer, and their
    /// bytes (see `EarlyReply`).
    early: sled::Tree,
    early_raw: sled::Tree,
    /// Replies operators settled, by Message-ID (see `OperatorLabel`).
    labels: sled::Tree,
    /// Obeyed `#perfbot ignore` rules (see `IgnoreRule`).
    ignores: sled::Tree,
    meta: sled::Tree,
    /// The state directory (for files kept beside the database).
    dir: std::path::PathBuf,
}

/// What `Store::create_case` did.
#[derive(Debug)]
pub enum Created {
    New(Case),
    Existing(Case),
}

impl StoreError {
    /// The database can no longer be written by this process: sled keeps
    /// failing every write after an I/O error (a full disk freed again
    /// included), so a daemon must stop, and be started again, rather than
    /// go on failing each round.
    pub fn is_broken(&self) -> bool {
        matches!(
            self,
            StoreError::DiskFull
                | StoreError::Sled(
                    sled::Error::Io(_)
                        | sled::Error::Corruption { .. }
                        | sled::Error::ReportableBug(_)
                )
        )
    }
}

impl From<sled::Error> for StoreError {
    fn from(e: sled::Error) -> StoreError {
        match &e {
            sled::Error::Io(io) if io.kind() == std::io::ErrorKind::StorageFull => {
                StoreError::DiskFull
            }
            _ => StoreError::Sled(e),
        }
    }
}

pub(crate) fn decode<T: serde::de::DeserializeOwned>(
    tree: &'static str,
    key: &[u8],
    v: &[u8],
) -> Result<T, StoreError> {
    serde_json::from_slice(v).map_err(|e| StoreError::Record {
        tree,
        key: String::from_utf8_lossy(key).into_owned(),
        why: e.to_string(),
    })
}

/// Every record `kvs` yields (a tree, or a prefix of one), decoded.
pub(crate) fn decode_all<T: serde::de::DeserializeOwned>(
    tree: &'static str,
    kvs: impl Iterator<Item = sled::Result<(sled::IVec, sled::IVec)>>,
) -> Result<Vec<T>, StoreError> {
    kvs.map(|kv| {
        let (k, v) = kv?;
        decode(tree, &k, &v)
    })
    .collect()
}

/// Cases as lists show them: oldest first, then by id.
fn in_creation_order(cases: &mut [Case]) {
    cases.sort_by(|a, b| a.created.cmp(&b.created).then_with(|| a.id.cmp(&b.id)));
}

pub(crate) fn encode<T: serde::Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("records serialise")
}

/// Why a transaction gave up.
#[derive(Debug)]
pub(crate) enum Abort {
    /// The case it writes to does not exist.
    NoCase(CaseId),
    /// A record it read could not be decoded.
    Damaged(String),
}

pub(crate) fn abort<E: std::fmt::Display>(e: E) -> ConflictableTransactionError<Abort> {
    ConflictableTransactionError::Abort(Abort::Damaged(e.to_string()))
}

pub(crate) fn no_case(id: &CaseId) -> ConflictableTransactionError<Abort> {
    ConflictableTransactionError::Abort(Abort::NoCase(id.clone()))
}

fn tx_err(e: TransactionError<Abort>) -> StoreError {
    match e {
        TransactionError::Abort(Abort::NoCase(id)) => StoreError::NoCase(id.to_string()),
        TransactionError::Abort(Abort::Damaged(why)) => StoreError::Corrupt {
            path: String::new(),
            why,
        },
        TransactionError::Storage(e) => e.into(),
    }
}

/// Open `case` inside a transaction: the case, its first event and its
/// report's Message-ID, unless the case exists already (then it is returned
/// and nothing is written). Shared by perfbot's own reports and adopted ones.
fn open_case(
    (cases, events, messages): (
        &sled::transaction::TransactionalTree,
        &sled::transaction::TransactionalTree,
        &sled::transaction::TransactionalTree,
    ),
    case: &Case,
    cause: &Cause,
    seq: u64,
    note: &str,
    report: &crate::model::MessageRef,
) -> Result<Option<Case>, ConflictableTransactionError<Abort>> {
    if let Some(existing) = cases.get(case.id.as_str())? {
        return Ok(Some(serde_json::from_slice(&existing).map_err(abort)?));
    }
    cases.insert(case.id.as_str(), encode(case))?;
    let ev = Event {
        time: case.created,
        cause: cause.clone(),
        old: None,
        new: case.state,
        note: note.into(),
    };
    events.insert(event_key(&case.id, seq), encode(&ev))?;
    messages.insert(case.message_id.as_str(), encode(report))?;
    Ok(None)
}

/// The one place a case changes state. Every transaction that moves a case
/// (a decision of `set_state`, a mail delivered by `outbox_transition`, a
/// reply's decision in `record_reply`) calls this, so the state and the last
/// event of its history cannot disagree. `mail`: the thread entry of a
/// `Cause::Message`. Returns the event to write.
pub(crate) fn move_case(
    c: &mut Case,
    new: CaseState,
    cause: Cause,
    note: String,
    time: DateTime<Utc>,
    mail: Option<&ThreadEntry>,
) -> Event {
    let ev = Event {
        time,
        cause,
        old: Some(c.state),
        new,
        note,
    };
    if new != c.state {
        (c.moved_by, c.moved_by_mail) = match &ev.cause {
            Cause::Message {
                from, message_id, ..
            } => (
                Some(from.clone()),
                mail.map(|e| MovedByMail {
                    message_id: message_id.clone(),
                    written: e.written(),
                    answers: e.in_reply_to.clone(),
                    from: c.state,
                    from_by: c.moved_by.clone(),
                    unsettled: None,
                }),
            ),
            _ => (None, None),
        };
    }
    // A human who settles the case has seen its open question.
    if matches!(ev.cause, Cause::Cli { .. } | Cause::Dashboard { .. }) {
        c.question = None;
    }
    c.state = new;
    c.updated = time;
    ev
}

/// An event that leaves the case where it is (a message recorded, a mail
/// queued or sent while the case was elsewhere).
pub(crate) fn note_event(c: &Case, cause: Cause, note: String, time: DateTime<Utc>) -> Event {
    Event {
        time,
        cause,
        old: Some(c.state),
        new: c.state,
        note,
    }
}

pub(crate) fn event_key(case: &CaseId, seq: u64) -> Vec<u8> {
    let mut k = case_prefix(case);
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// The key prefix of a case's events and thread entries (`event_key`
/// adds the sequence).
/// An outbox entry's key in `outbox_by_case`.
pub(crate) fn outbox_case_key(e: &crate::model::OutboxEntry) -> Vec<u8> {
    let mut k = case_prefix(&e.case_id);
    k.extend_from_slice(e.message_id.as_str().as_bytes());
    k
}

pub(crate) fn case_prefix(case: &CaseId) -> Vec<u8> {
    let mut k = case.as_str().as_bytes().to_vec();
    k.push(b'/');
    k
}

/// The identity card kept beside the database (`state/db.marker`), written once
/// when the database is created. sled opens a missing, emptied or damaged young
/// database as a new empty one; the marker is how perfbot knows one existed,
/// and refuses to carry on from an empty database in its place (the next
/// `report` would otherwise send every report a second time).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Marker {
    /// Random id, also stored inside the database (`meta/id`).
    pub id: String,
    pub created: chrono::DateTime<Utc>,
    #[serde(default)]
    pub note: String,
}

pub const MARKER_FILE: &str = "db.marker";

/// How many times the database was made durable, kept beside it and inside it
/// (`meta/generation`) at every flush. A database that holds fewer than the
/// file says has lost writes (a truncated or rolled-back file that sled would
/// open as if nothing happened): refused.
pub const GENERATION_FILE: &str = "db.generation";

fn read_generation(path: &Path) -> Result<Option<u64>, StoreError> {
    match std::fs::read_to_string(path) {
        Ok(t) => t.trim().parse().map(Some).map_err(|_| StoreError::Corrupt {
            path: path.display().to_string(),
            why: format!("unreadable generation {:?}", t.trim()),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::Corrupt {
            path: path.display().to_string(),
            why: e.to_string(),
        }),
    }
}

/// Overwrite the generation file in place and sync its data: the number is a
/// few bytes, written in one call, padded so that it never shrinks. The
/// first one is written whole beside its place and renamed in: created in
/// place, a kill between creating the file and writing it left it empty,
/// and the next open refused the database as damaged.
fn write_generation(path: &Path, n: u64) -> Result<(), StoreError> {
    use std::io::Write;
    let err = |e: std::io::Error| StoreError::Corrupt {
        path: path.display().to_string(),
        why: format!("writing the generation: {e}"),
    };
    let line = format!("{n:<20}\n");
    let mut f = match std::fs::OpenOptions::new().write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return write_whole(path, line.as_bytes()).map_err(err);
        }
        Err(e) => return Err(err(e)),
    };
    f.write_all(line.as_bytes()).map_err(err)?;
    f.sync_data().map_err(err)
}

fn new_db_id(path: &Path) -> String {
    let mut h = sha2::Sha256::new();
    use sha2::Digest;
    h.update(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
            .to_le_bytes(),
    );
    h.update(std::process::id().to_le_bytes());
    h.update(path.as_os_str().as_encoded_bytes());
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn read_marker(path: &Path) -> Result<Option<Marker>, StoreError> {
    let shown = path.display().to_string();
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| StoreError::Corrupt {
                path: shown,
                why: format!("the database marker is unreadable ({e}); restore it from a backup, or move the state directory aside to start afresh"),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::Corrupt {
            path: shown,
            why: e.to_string(),
        }),
    }
}

/// Write the marker atomically: it exists whole or not at all.
fn write_marker(path: &Path, m: &Marker) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec_pretty(m).expect("marker serialises");
    write_whole(path, &bytes).map_err(|e| StoreError::Corrupt {
        path: path.display().to_string(),
        why: format!("writing the database marker: {e}"),
    })
}

/// Write a file beside the database whole or not at all
/// (`fsutil::write_atomic`: temporary file, fsync, rename), then sync its
/// directory so that the rename itself survives a crash.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "no file name",
        ));
    };
    crate::fsutil::write_atomic(dir, &name.to_string_lossy(), bytes)?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Make a new database: built in `db.new-<pid>` beside its place, given its
/// schema and id, flushed, and renamed into place. A kill while sled writes
/// its first files (its `conf`, an empty snapshot) then leaves a folder that
/// is not `db`, never a half-made `db` that the next open would have to
/// refuse as damaged. Such leftovers are removed once they are old.
fn create_db(state_dir: &Path, path: &Path, shown: &str) -> Result<(), StoreError> {
    let io = |what: &str, e: std::io::Error| StoreError::Open {
        path: shown.to_string(),
        source: sled::Error::Io(std::io::Error::new(
            e.kind(),
            format!("creating it: {what}: {e}"),
        )),
    };
    if let Ok(entries) = std::fs::read_dir(state_dir) {
        for e in entries.flatten() {
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > std::time::Duration::from_secs(600));
            if old && e.file_name().to_string_lossy().starts_with("db.new-") {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let tmp = state_dir.join(format!("db.new-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| io(&tmp.display().to_string(), e))?;
    }
    {
        let db = open_sled(&tmp, shown)?;
        let meta = db.open_tree("meta")?;
        meta.insert("schema", SCHEMA_VERSION.to_string().as_bytes())?;
        meta.insert("id", new_db_id(path).as_bytes())?;
        db.flush()?;
    }
    match std::fs::rename(&tmp, path) {
        Ok(()) => {
            if let Ok(d) = std::fs::File::open(state_dir) {
                let _ = d.sync_all();
            }
            Ok(())
        }
        // Another process made it first: use theirs.
        Err(_) if path.exists() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(())
        }
        Err(e) => Err(io("renaming it into place", e)),
    }
}

/// Open sled, turning its panics on damaged files into an error.
/// sled 0.34 writes a snapshot to `snap.<lsn>.generating`, then renames it
/// to `snap.<lsn>`. A kill between the two leaves the first file behind, and
/// the next open takes it for the newest snapshot and reports the whole
/// database corrupt (spacejam/sled#1527; seen here under `kill -9`). It never
/// was part of the database: the snapshot before it and the log hold
/// everything. It is removed here, under sled's own lock on `db/db`, so that
/// the file of a process still writing it is never touched.
fn drop_unfinished_snapshots(path: &Path) {
    let Ok(lock) = std::fs::File::options()
        .read(true)
        .write(true)
        .open(path.join("db"))
    else {
        return;
    };
    // In use by a live process (or not lockable): leave it to sled to say so.
    if lock.try_lock().is_err() {
        return;
    }
    let Ok(dir) = std::fs::read_dir(path) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("snap.") && name.ends_with(".generating") {
            match std::fs::remove_file(e.path()) {
                Ok(()) => tracing::warn!(
                    file = %e.path().display(),
                    "removed an unfinished sled snapshot left by an interrupted run; \
                     the database is read from the snapshot before it and its log"
                ),
                Err(err) => tracing::warn!(file = %e.path().display(), error = %err,
                    "could not remove an unfinished sled snapshot"),
            }
        }
    }
}

fn open_sled(path: &Path, shown: &str) -> Result<sled::Db, StoreError> {
    drop_unfinished_snapshots(path);
    let opened = std::panic::catch_unwind(|| {
        // sled's page cache defaults to 1 GB; perfbot's working set is small,
        // and a long backfill must not grow the process.
        sled::Config::new()
            .path(path)
            .cache_capacity(32 << 20)
            .open()
    });
    let opened = opened.map_err(|_| StoreError::Corrupt {
        path: shown.to_string(),
        why: "sled could not read it (it panicked while opening)".into(),
    })?;
    opened.map_err(|source| {
        let locked = matches!(&source, sled::Error::Io(e) if e.kind() == std::io::ErrorKind::WouldBlock)
            || source.to_string().contains("lock");
        if locked {
            StoreError::Locked {
                path: shown.to_string(),
            }
        } else if matches!(&source, sled::Error::Io(e) if e.kind() == std::io::ErrorKind::StorageFull) {
            StoreError::OpenFull {
                path: shown.to_string(),
            }
        } else if matches!(source, sled::Error::Corruption { .. }) {
            StoreError::Corrupt {
                path: shown.to_string(),
                why: format!("{source}; restore db/ from a backup"),
            }
        } else {
            StoreError::Open {
                path: shown.to_string(),
                source,
            }
        }
    })
}

/// The files of a state directory's database.
struct DbFiles {
    db: std::path::PathBuf,
    marker: std::path::PathBuf,
    generation: std::path::PathBuf,
    /// `db`, as errors show it.
    shown: String,
}

impl DbFiles {
    fn in_dir(state_dir: &Path) -> DbFiles {
        let db = state_dir.join("db");
        DbFiles {
            shown: db.display().to_string(),
            db,
            marker: state_dir.join(MARKER_FILE),
            generation: state_dir.join(GENERATION_FILE),
        }
    }

    /// A database holding fewer flushes (`held`) than its generation file
    /// says were made durable has lost writes.
    fn check_durable(&self, held: u64, durable: Option<u64>) -> Result<(), StoreError> {
        match durable.filter(|d| held < *d) {
            Some(d) => Err(self.corrupt(format!(
                "it lost writes: it holds generation {held}, but {} says {d} were made durable (a truncated or restored file?); restore db/ from a backup (or move {}, {} and {} aside to start a new, empty database)",
                self.generation.display(),
                self.shown,
                self.marker.display(),
                self.generation.display()
            ))),
            None => Ok(()),
        }
    }

    fn corrupt(&self, why: impl Into<String>) -> StoreError {
        StoreError::Corrupt {
            path: self.shown.clone(),
            why: why.into(),
        }
    }

    /// Refuse a database directory without sled files, or one missing where
    /// the marker or the generation file says one was made; create it where
    /// none ever was (`true`).
    fn check_or_create(
        &self,
        state_dir: &Path,
        marker: Option<&Marker>,
        durable: Option<u64>,
    ) -> Result<bool, StoreError> {
        if self.db.exists() {
            if !self.db.join("conf").exists() && !self.db.join("db").exists() {
                return Err(self.corrupt("the directory has no sled files"));
            }
            return Ok(false);
        }
        if let Some(m) = marker {
            return Err(StoreError::Missing {
                path: self.shown.clone(),
                marker: self.marker.display().to_string(),
                generation: self.generation.display().to_string(),
                created: m.created.to_rfc3339(),
            });
        }
        if let Some(writes) = durable.filter(|&n| n > 0) {
            return Err(StoreError::MissingSinceWrites {
                path: self.shown.clone(),
                generation: self.generation.display().to_string(),
                writes,
            });
        }
        create_db(state_dir, &self.db, &self.shown)?;
        Ok(true)
    }
}

/// What a database that passed every check still lacks: its schema (when
/// new), its id, and the marker beside it.
fn settle(
    db: &sled::Db,
    meta: &sled::Tree,
    at: &DbFiles,
    fresh: bool,
    id: Option<String>,
    unmarked: bool,
) -> Result<(), StoreError> {
    if fresh {
        meta.insert("schema", SCHEMA_VERSION.to_string().as_bytes())?;
    }
    let id = match id {
        Some(id) => id,
        None => {
            let id = new_db_id(&at.db);
            meta.insert("id", id.as_bytes())?;
            id
        }
    };
    db.flush()?;
    if unmarked {
        // Flushed before the marker is written: a crash in between leaves
        // a database with an id and no marker, which the next open adopts.
        write_marker(
            &at.marker,
            &Marker {
                id,
                created: Utc::now(),
                note: "Written by perfbot when it created db/. Keep it with db/: \
                    without it perfbot cannot tell a damaged database from a new one."
                    .into(),
            },
        )?;
    }
    Ok(())
}

/// Open a database just created: the handle that made it may hold its lock
/// a moment longer.
fn open_created(at: &DbFiles) -> Result<sled::Db, StoreError> {
    let mut tries = 0;
    loop {
        match open_sled(&at.db, &at.shown) {
            Err(StoreError::Locked { .. }) if tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// How many writes the database holds as made durable (0 in a new one).
fn stored_generation(meta: &sled::Tree, at: &DbFiles) -> Result<u64, StoreError> {
    match meta.get("generation")? {
        Some(v) => std::str::from_utf8(&v)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| at.corrupt("unreadable generation")),
        None => Ok(0),
    }
}

/// The schema version is one this perfbot reads; a database without one is
/// new (`true`: it gets one once every check passed), unless it holds data
/// or its marker says it was made before: then it was damaged or emptied.
fn check_schema(
    db: &sled::Db,
    meta: &sled::Tree,
    at: &DbFiles,
    marker: Option<&Marker>,
) -> Result<bool, StoreError> {
    if let Some(v) = meta.get("schema")? {
        let found: u32 = std::str::from_utf8(&v)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| at.corrupt("unreadable schema version"))?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::Newer {
                path: at.shown.clone(),
                found,
            });
        }
        // Older layouts would be migrated here, one version at a time.
        return Ok(false);
    }
    let used = db
        .tree_names()
        .iter()
        .any(|n| n.as_ref() != b"__sled__default" && n.as_ref() != b"meta");
    if used {
        return Err(at.corrupt("no schema version"));
    }
    if let Some(m) = marker {
        return Err(StoreError::Emptied {
            path: at.shown.clone(),
            marker: at.marker.display().to_string(),
            generation: at.generation.display().to_string(),
            created: m.created.to_rfc3339(),
        });
    }
    Ok(true)
}

/// The database's id: the one it holds, which must be its marker's; none
/// yet in a new database (or one written before markers existed).
fn stored_id(
    meta: &sled::Tree,
    at: &DbFiles,
    marker: Option<&Marker>,
) -> Result<Option<String>, StoreError> {
    let stored = meta
        .get("id")?
        .map(|v| String::from_utf8_lossy(&v).into_owned());
    match (stored, marker) {
        (Some(id), Some(m)) if id != m.id => Err(at.corrupt(format!(
            "it is not the database {} was written for (id {id}, the marker says {}): was it replaced?",
            at.marker.display(),
            m.id
        ))),
        (Some(id), _) => Ok(Some(id)),
        // The schema is there but the id is not: a database from before
        // markers with a marker? Only a damaged one.
        (None, Some(m)) => Err(at.corrupt(format!(
            "it has no id although {} says one was created there on {}",
            at.marker.display(),
            m.created.to_rfc3339()
        ))),
        (None, None) => Ok(None),
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if self.broken.load(std::sync::atomic::Ordering::Relaxed) {
            // sled flushes every tree as its database is dropped, and after
            // a failed write that flush can wait for ever (`perfbot run`
            // did, on a full disk). What was written before is durable.
            std::mem::forget(self.db.clone());
        }
    }
}

impl Store {
    /// A transaction's outcome as the store's: its error noted first if it
    /// leaves the database unwritable.
    fn committed<T>(&self, result: Result<T, TransactionError<Abort>>) -> Result<T, StoreError> {
        result.map_err(|e| self.noted(tx_err(e)))
    }

    /// `e`, noted first if it leaves the database unwritable.
    fn noted(&self, e: StoreError) -> StoreError {
        if e.is_broken() {
            self.mark_broken();
        }
        e
    }

    /// The database can no longer be written (an error said so): it is not
    /// flushed on the way out.
    pub fn mark_broken(&self) {
        self.broken
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// A database was made in `state_dir` (it may hold cases).
    pub fn exists(state_dir: &Path) -> bool {
        let at = DbFiles::in_dir(state_dir);
        at.db.exists() || at.marker.exists()
    }

    /// Open (or create) the database in `state_dir/db`.
    ///
    /// A new database is created only where none existed: when the marker
    /// beside it says one was created here, an empty database (emptied,
    /// truncated or replaced files) is refused, never taken for a new one.
    pub fn open(state_dir: &Path) -> Result<Store, StoreError> {
        let at = DbFiles::in_dir(state_dir);
        let marker = read_marker(&at.marker)?;
        let durable = read_generation(&at.generation)?;
        let created = at.check_or_create(state_dir, marker.as_ref(), durable)?;
        let db = if created {
            open_created(&at)?
        } else {
            open_sled(&at.db, &at.shown)?
        };
        let meta = db.open_tree("meta")?;
        let held = stored_generation(&meta, &at)?;
        // Every refusal comes before anything is written (a schema, an id,
        // a marker): a refused database stays as it was found.
        let fresh = check_schema(&db, &meta, &at, marker.as_ref())?;
        let id = stored_id(&meta, &at, marker.as_ref())?;
        at.check_durable(held, durable)?;
        settle(&db, &meta, &at, fresh, id, marker.is_none())?;
        let store = Store {
            broken: std::sync::atomic::AtomicBool::new(false),
            generation: std::sync::atomic::AtomicU64::new(held.max(durable.unwrap_or(0))),
            flush_lock: std::sync::Mutex::new(()),
            generation_path: at.generation,
            cases: db.open_tree("cases")?,
            events: db.open_tree("events")?,
            messages: db.open_tree("messages")?,
            outbox: db.open_tree("outbox")?,
            outbox_raw: db.open_tree("outbox_raw")?,
            outbox_by_case: db.open_tree("outbox_by_case")?,
            outbox_indexed: std::sync::Mutex::new(false),
            optout: db.open_tree("optout")?,
            cursors: db.open_tree("cursors")?,
            thread: db.open_tree("thread")?,
            quarantine: db.open_tree("quarantine")?,
            unreadable: db.open_tree("unreadable")?,
            held: db.open_tree("held")?,
            held_raw: db.open_tree("held_raw")?,
            early: db.open_tree("early")?,
            early_raw: db.open_tree("early_raw")?,
            labels: db.open_tree("labels")?,
            ignores: db.open_tree("ignores")?,
            meta,
            dir: state_dir.to_path_buf(),
            db,
        };
        Ok(store)
    }

    /// `open`, waiting up to `wait` while another short-lived perfbot command
    /// holds the database. When the daemon holds it (`daemon_running`), the
    /// wait is pointless and `Locked` comes back at once.
    pub fn open_waiting(state_dir: &Path, wait: std::time::Duration) -> Result<Store, StoreError> {
        Self::open_waiting_unless(state_dir, wait, || daemon_running(state_dir))
    }

    /// `open_waiting` for the daemon itself, which holds the daemon lock.
    pub fn open_waiting_unless(
        state_dir: &Path,
        wait: std::time::Duration,
        give_up: impl Fn() -> bool,
    ) -> Result<Store, StoreError> {
        let start = std::time::Instant::now();
        loop {
            match Store::open(state_dir) {
                Err(StoreError::Locked { path }) => {
                    if give_up() {
                        return Err(StoreError::Locked { path });
                    }
                    if start.elapsed() >= wait {
                        return Err(StoreError::Busy {
                            path,
                            secs: wait.as_secs(),
                        });
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                other => return other,
            }
        }
    }

    /// Make everything written so far durable (a checkpoint), and record
    /// beside the database that it was (see `GENERATION_FILE`).
    pub fn flush(&self) -> Result<(), StoreError> {
        use std::sync::atomic::Ordering;
        let _one_at_a_time = self.flush_lock.lock().unwrap_or_else(|p| p.into_inner());
        let n = self.generation.load(Ordering::Acquire) + 1;
        self.meta
            .insert("generation", n.to_string().as_bytes())
            .map_err(|e| self.noted(e.into()))?;
        self.db.flush().map_err(|e| self.noted(e.into()))?;
        write_generation(&self.generation_path, n)?;
        self.generation.store(n, Ordering::Release);
        Ok(())
    }

    /// Record a new case, its first event, its Message-ID and its queued mail,
    /// all at once; an existing case with the same id is returned untouched.
    pub fn create_case(
        &self,
        case: &Case,
        cause: Cause,
        entry: &OutboxEntry,
        raw: &[u8],
    ) -> Result<Created, StoreError> {
        let seq = self.db.generate_id()?;
        let result = (
            &self.cases,
            &self.events,
            &self.messages,
            &self.outbox,
            &self.outbox_raw,
            &self.outbox_by_case,
        )
            .transaction(|(cases, events, messages, outbox, outbox_raw, by_case)| {
                let report =
                    crate::model::MessageRef::ours(&case.id, crate::model::OutboxKind::Report);
                let opened = (cases, events, messages);
                if let Some(existing) =
                    open_case(opened, case, &cause, seq, "report queued", &report)?
                {
                    return Ok(Created::Existing(existing));
                }
                outbox.insert(entry.message_id.as_str(), encode(entry))?;
                outbox_raw.insert(entry.message_id.as_str(), raw)?;
                by_case.insert(outbox_case_key(entry), &[])?;
                Ok(Created::New(case.clone()))
            });
        let created = self.committed(result)?;
        self.flush()?;
        Ok(created)
    }

    /// Open a case for another robot's report seen on a list: the case, its
    /// first event and its report's Message-ID (theirs, a robot's), in one
    /// transaction; nothing is queued. Not flushed: part of ingestion's batch.
    pub fn adopt_case(&self, case: &Case, cause: Cause) -> Result<Created, StoreError> {
        let seq = self.db.generate_id()?;
        let result =
            (&self.cases, &self.events, &self.messages).transaction(|(cases, events, messages)| {
                let trees = (cases, events, messages);
                let report = crate::model::MessageRef::theirs(&case.id, crate::model::Sender::Bot);
                let note = "robot report adopted from the list";
                Ok(match open_case(trees, case, &cause, seq, note, &report)? {
                    Some(existing) => Created::Existing(existing),
                    None => Created::New(case.clone()),
                })
            });
        self.committed(result)
    }

    pub fn case(&self, id: &CaseId) -> Result<Case, StoreError> {
        let v = self
            .cases
            .get(id.as_str())?
            .ok_or_else(|| StoreError::NoCase(id.to_string()))?;
        decode("cases", id.as_str().as_bytes(), &v)
    }

    /// A case by id or unique id prefix.
    pub fn find_case(&self, id: &str) -> Result<Case, StoreError> {
        let id = id.trim().to_ascii_lowercase();
        // An empty prefix would name the only case there is.
        if id.is_empty() {
            return Err(StoreError::NoCase("\"\" (an empty id)".into()));
        }
        let mut found = None;
        for kv in self.cases.scan_prefix(id.as_bytes()) {
            let (k, v) = kv?;
            if found.is_some() {
                return Err(StoreError::NoCase(format!("{id} (ambiguous prefix)")));
            }
            found = Some(decode::<Case>("cases", &k, &v)?);
        }
        found.ok_or(StoreError::NoCase(id))
    }

    /// Every case, oldest first.
    pub fn cases(&self) -> Result<Vec<Case>, StoreError> {
        let mut out: Vec<Case> = decode_all("cases", self.cases.iter())?;
        in_creation_order(&mut out);
        Ok(out)
    }

    /// The cases in one of `states`, ordered as `cases` orders them. Each
    /// record's state is read first, alone: the others are not decoded (a
    /// report queued among thousands of cases looks for the few settled ones).
    pub fn cases_in(&self, states: &[CaseState]) -> Result<Vec<Case>, StoreError> {
        #[derive(serde::Deserialize)]
        struct StateOnly {
            state: CaseState,
        }
        let mut out = Vec::new();
        for kv in self.cases.iter() {
            let (k, v) = kv?;
            let head: StateOnly = decode("cases", &k, &v)?;
            if states.contains(&head.state) {
                out.push(decode::<Case>("cases", &k, &v)?);
            }
        }
        in_creation_order(&mut out);
        Ok(out)
    }

    pub fn events(&self, id: &CaseId) -> Result<Vec<Event>, StoreError> {
        let prefix = case_prefix(id);
        decode_all("events", self.events.scan_prefix(prefix))
    }

    /// Move a case to `new` (or just record an event when the state is unchanged).
    pub fn set_state(
        &self,
        id: &CaseId,
        new: CaseState,
        cause: Cause,
        note: &str,
    ) -> Result<Case, StoreError> {
        let c = self.set_state_deferred(id, new, cause, note)?;
        self.flush()?;
        Ok(c)
    }

    /// `set_state` without the flush, for callers that make a batch durable at
    /// their own checkpoint (ingestion: before its cursor moves; a crash before
    /// that re-reads the message, and handling it again changes nothing).
    pub fn set_state_deferred(
        &self,
        id: &CaseId,
        new: CaseState,
        cause: Cause,
        note: &str,
    ) -> Result<Case, StoreError> {
        let moved = self.move_unless_moved(id, None, new, cause, note)?;
        Ok(moved.expect("a move without a condition is made"))
    }

    /// `set_state`, only while the case is as `seen` read it (the same state
    /// and last update): a job that decided from an earlier read (the
    /// scheduler's review, a stale mark) never overwrites a move a reply made
    /// since. `Ok(None)`: the case moved meanwhile, and nothing is written.
    /// Flushed.
    pub fn set_state_if(
        &self,
        seen: &Case,
        new: CaseState,
        cause: Cause,
        note: &str,
    ) -> Result<Option<Case>, StoreError> {
        let moved = self.move_unless_moved(&seen.id, Some(seen), new, cause, note)?;
        self.flush()?;
        Ok(moved)
    }

    /// Move case `id` and record the event, in one transaction; with `seen`,
    /// only while the case's state and last update are still `seen`'s (else
    /// `None`, nothing written). Not flushed.
    fn move_unless_moved(
        &self,
        id: &CaseId,
        seen: Option<&Case>,
        new: CaseState,
        cause: Cause,
        note: &str,
    ) -> Result<Option<Case>, StoreError> {
        let seq = self.db.generate_id()?;
        let now = Utc::now();
        let result = (&self.cases, &self.events).transaction(|(cases, events)| {
            let v = cases.get(id.as_str())?.ok_or_else(|| no_case(id))?;
            let mut c: Case = serde_json::from_slice(&v).map_err(abort)?;
            if seen.is_some_and(|s| c.state != s.state || c.updated != s.updated) {
                return Ok(None);
            }
            let ev = move_case(&mut c, new, cause.clone(), note.to_string(), now, None);
            cases.insert(id.as_str(), encode(&c))?;
            events.insert(event_key(id, seq), encode(&ev))?;
            Ok(Some(c))
        });
        self.committed(result)
    }

    /// Record that a follow-up comparison verified a case's fix: the case
    /// keeps its state and gains `verified`, with an event saying so.
    /// Flushed. `Ok(None)`: the case is no longer in `expect`, or was
    /// verified already (nothing written).
    pub fn record_verified(
        &self,
        id: &CaseId,
        expect: CaseState,
        v: &crate::model::case::Verified,
    ) -> Result<Option<Case>, StoreError> {
        self.amend_case(id, v.at, |c| {
            if c.state != expect || c.verified.is_some() {
                return None;
            }
            c.verified = Some(v.clone());
            let cause = Cause::system(format!("follow-up comparison {}", v.input));
            Some((
                cause,
                format!("fix verified with {}: {}", v.commit, v.figures),
            ))
        })
    }

    /// A report read at a glance, now read in full (a whole copy of the same
    /// mail, `source`): the case takes what the full reading says of the
    /// commit, the test and the headline, and is no longer `unread`; its
    /// state, recipients and thread stay. Flushed. `Ok(None)`: the case was
    /// read in full already (nothing written).
    pub fn record_read_in_full(
        &self,
        id: &CaseId,
        full: &Case,
        source: &str,
    ) -> Result<Option<Case>, StoreError> {
        self.amend_case(id, chrono::Utc::now(), |c| {
            let why = c.unread.take()?;
            c.commit = full.commit.clone();
            c.commit_subject = full.commit_subject.clone();
            c.subsystem = full.subsystem.clone();
            c.testcase = full.testcase.clone();
            c.headline_metric = full.headline_metric.clone();
            c.headline_change = full.headline_change.clone();
            c.verdict = full.verdict.clone();
            c.author = full.author.clone();
            c.base = full.base.clone();
            let cause = Cause::system(format!("a whole copy of the report from {source}"));
            Some((
                cause,
                format!("the report read in full (it was read at a glance: {why})"),
            ))
        })
    }

    /// Change a case where it stands, with an event saying how, in one
    /// transaction; flushed. `change` amends the case and gives the event's
    /// cause and note, or `None` to write nothing (`Ok(None)`).
    fn amend_case(
        &self,
        id: &CaseId,
        at: DateTime<Utc>,
        change: impl Fn(&mut Case) -> Option<(Cause, String)>,
    ) -> Result<Option<Case>, StoreError> {
        let seq = self.db.generate_id()?;
        let result = (&self.cases, &self.events).transaction(|(cases, events)| {
            let raw = cases.get(id.as_str())?.ok_or_else(|| no_case(id))?;
            let mut c: Case = serde_json::from_slice(&raw).map_err(abort)?;
            let Some((cause, note)) = change(&mut c) else {
                return Ok(None);
            };
            // The state stays: the event notes the change where it stands.
            let ev = note_event(&c, cause, note, at);
            c.updated = at;
            cases.insert(id.as_str(), encode(&c))?;
            events.insert(event_key(id, seq), encode(&ev))?;
            Ok(Some(c))
        });
        let c = self.committed(result)?;
        self.flush()?;
        Ok(c)
    }

    /// Which case a Message-ID belongs to, if any.
    pub fn message(&self, id: &MessageId) -> Result<Option<crate::model::MessageRef>, StoreError> {
        match self.messages.get(id.as_str())? {
            Some(v) => Ok(Some(decode("messages", id.as_str().as_bytes(), &v)?)),
            None => Ok(None),
        }
    }
}

impl Store {
    /// A small value of perfbot's own (e.g. when the digest last went out).
    pub fn meta_get(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .meta
            .get(key)?
            .map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    pub fn meta_set(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.meta.insert(key, value.as_bytes())?;
        self.flush()
    }
}

/// The file `perfbot run` keeps locked while it runs (beside the database).
pub const DAEMON_LOCK: &str = "daemon.lock";

/// Held by the daemon for its lifetime: tells other commands that the
/// database is the daemon's (hand reports to its spool) rather than briefly
/// another command's (wait for it).
pub struct DaemonLock {
    _file: std::fs::File,
}

impl DaemonLock {
    pub fn acquire(state_dir: &Path) -> Result<DaemonLock, StoreError> {
        let path = state_dir.join(DAEMON_LOCK);
        let shown = path.display().to_string();
        let _ = std::fs::create_dir_all(state_dir);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| StoreError::Corrupt {
                path: shown.clone(),
                why: e.to_string(),
            })?;
        match file.try_lock() {
            Ok(()) => Ok(DaemonLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::Locked { path: shown }),
            Err(std::fs::TryLockError::Error(e)) => Err(StoreError::Corrupt {
                path: shown,
                why: e.to_string(),
            }),
        }
    }
}

/// Whether a `perfbot run` holds this state directory right now.
pub fn daemon_running(state_dir: &Path) -> bool {
    let Ok(f) = std::fs::File::open(state_dir.join(DAEMON_LOCK)) else {
        return false;
    };
    matches!(f.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock))
}

#[cfg(test)]
impl Store {
    /// For tests of the layers above: record `c` as `create_case` does for a
    /// report, with a queued mail to one list; returns the mail's entry.
    pub(crate) fn create_sample(&self, c: &Case) -> OutboxEntry {
        let e = OutboxEntry::queued(
            c.message_id.clone(),
            c.id.clone(),
            crate::model::OutboxKind::Report,
            c.subject.clone(),
            vec!["lkml@example.test".into()],
            Utc::now(),
        );
        let cause = Cause::Report {
            input: "in.json".into(),
        };
        self.create_case(c, cause, &e, b"Subject: x\r\n\r\nbody\r\n")
            .expect("a sample case is created");
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job that read a case moves it only while it is as read: a move made
    /// since (a reply's) wins, and nothing is written over it.
    #[test]
    fn a_conditional_move_yields_to_a_move_made_since() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path()).unwrap();
        let c = Case::sample("0123456789ab", CaseState::Investigating, Utc::now());
        let system = || Cause::system("review");
        store.adopt_case(&c, system()).unwrap();
        let seen = store.case(&c.id).unwrap();
        let reply = Cause::Message {
            message_id: MessageId::parse("m@x").unwrap(),
            from: "dave@x.org".into(),
            quote: "I'll send a fix.".into(),
        };
        store
            .set_state(&c.id, CaseState::AwaitingFix, reply, "fix-posted")
            .unwrap();
        let events = store.events(&c.id).unwrap().len();
        let late = store.set_state_if(&seen, CaseState::NeedsHuman, system(), "review");
        assert_eq!(late.unwrap(), None);
        assert_eq!(store.case(&c.id).unwrap().state, CaseState::AwaitingFix);
        assert_eq!(store.events(&c.id).unwrap().len(), events);
        // Read again, it moves.
        let seen = store.case(&c.id).unwrap();
        let moved = store.set_state_if(&seen, CaseState::NeedsHuman, system(), "review");
        assert_eq!(moved.unwrap().map(|c| c.state), Some(CaseState::NeedsHuman));
    }

    /// A move records who made it when a mail did, and that mail; a note
    /// leaves them, and a move by anything else (an operator, the system)
    /// clears them.
    #[test]
    fn a_move_remembers_the_sender_who_made_it() {
        let mut c = Case::sample("0123456789ab", CaseState::Reported, Utc::now());
        let mail = |from: &str| Cause::Message {
            message_id: MessageId::parse("m@x").unwrap(),
            from: from.into(),
            quote: String::new(),
        };
        let mut entry = ThreadEntry::sample("m@x", "dave@x.org", "I'll fix it.");
        entry.date = Some(Utc::now() - chrono::Duration::days(1));
        entry.in_reply_to = MessageId::parse("report@x");
        move_case(
            &mut c,
            CaseState::AwaitingFix,
            mail("dave@x.org"),
            String::new(),
            Utc::now(),
            Some(&entry),
        );
        assert_eq!(c.moved_by.as_deref(), Some("dave@x.org"));
        assert_eq!(
            c.moved_by_mail,
            Some(MovedByMail {
                message_id: entry.message_id.clone(),
                written: entry.date.unwrap(),
                answers: entry.in_reply_to.clone(),
                from: CaseState::Reported,
                from_by: None,
                unsettled: None,
            })
        );
        move_case(
            &mut c,
            CaseState::AwaitingFix,
            mail("ted@x.org"),
            String::new(),
            Utc::now(),
            None,
        );
        assert_eq!(
            c.moved_by.as_deref(),
            Some("dave@x.org"),
            "no move, no new mover"
        );
        // The next move keeps who made the one before.
        move_case(
            &mut c,
            CaseState::NeedsHuman,
            mail("ted@x.org"),
            String::new(),
            Utc::now(),
            Some(&entry),
        );
        let m = c.moved_by_mail.as_ref().unwrap();
        assert_eq!(c.moved_by.as_deref(), Some("ted@x.org"));
        assert_eq!(
            (m.from, m.from_by.as_deref()),
            (CaseState::AwaitingFix, Some("dave@x.org"))
        );
        let by_operator = Cause::Cli {
            user: "ops".into(),
            reason: String::new(),
        };
        move_case(
            &mut c,
            CaseState::NotARegression,
            by_operator,
            String::new(),
            Utc::now(),
            None,
        );
        assert_eq!((c.moved_by, c.moved_by_mail), (None, None));
    }

    fn store() -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let s = Store::open(&tmp.path().join("state")).unwrap();
        (tmp, s)
    }
    /// A message quarantined again keeps its first record; a later reading
    /// that matched it to a case names the case, once.
    #[test]
    fn a_quarantined_message_learns_its_case_once() {
        let (_tmp, s) = store();
        let first = Utc::now() - chrono::Duration::days(3);
        let q = |case: Option<&str>, reason: &str, time| {
            let case = case.map(|c| CaseId::parse(c).unwrap());
            crate::model::Quarantined::sample("ab", "m@x", reason, time, case.as_ref())
        };
        let kept = || s.quarantined().unwrap().remove(0);
        assert!(s.quarantine(&q(None, "first", first), b"raw\n").unwrap());
        let table = [
            (Some("aaaaaaaaaaaa"), Some("aaaaaaaaaaaa")),
            (Some("bbbbbbbbbbbb"), Some("aaaaaaaaaaaa")),
            (None, Some("aaaaaaaaaaaa")),
        ];
        for (given, want) in table {
            assert!(!s
                .quarantine(&q(given, "again", Utc::now()), b"raw\n")
                .unwrap());
            let k = kept();
            assert_eq!(k.case.as_ref().map(CaseId::as_str), want, "{given:?}");
            assert_eq!((k.reason.as_str(), k.time), ("first", first));
        }
        assert_eq!(s.quarantined().unwrap().len(), 1);
    }

    fn queued_case(s: &Store) -> (Case, OutboxEntry) {
        let c = Case::sample("0123456789ab", CaseState::Queued, Utc::now());
        let e = s.create_sample(&c);
        (c, e)
    }

    /// `cases_in` finds what a full read filtered by state finds, in the
    /// same order, for each set of states; a record it cannot read is an
    /// error naming it, as `cases` says.
    #[test]
    fn cases_in_states_are_the_cases_read_whole_then_filtered() {
        let (_tmp, s) = store();
        let states = [
            CaseState::Queued,
            CaseState::NotARegression,
            CaseState::WontFix,
            CaseState::Duplicate,
            CaseState::NotARegression,
        ];
        let t0 = Utc::now();
        for (i, st) in states.iter().enumerate() {
            let c = Case::sample(&format!("{i:012x}"), CaseState::Queued, t0);
            s.create_sample(&c);
            if *st != CaseState::Queued {
                s.set_state(&c.id, *st, cli(), "test").unwrap();
            }
        }
        let ids = |v: Vec<Case>| v.into_iter().map(|c| c.id.to_string()).collect::<Vec<_>>();
        for want in [
            vec![],
            vec![CaseState::NotARegression],
            vec![CaseState::Queued, CaseState::Duplicate],
            vec![CaseState::Fixed],
            states.to_vec(),
        ] {
            let whole = s.cases().unwrap();
            let filtered: Vec<Case> = whole
                .into_iter()
                .filter(|c| want.contains(&c.state))
                .collect();
            assert_eq!(ids(s.cases_in(&want).unwrap()), ids(filtered), "{want:?}");
        }
        s.cases.insert("0000000000zz", &b"{\"id\":1}"[..]).unwrap();
        let e = s.cases_in(&[CaseState::Fixed]).unwrap_err().to_string();
        assert!(e.contains("0000000000zz"), "{e}");
    }

    fn cli() -> Cause {
        Cause::Cli {
            user: "op".into(),
            reason: "test".into(),
        }
    }

    /// Open again once sled's flusher has let go of the lock.
    fn reopen(state: &Path) -> Result<Store, StoreError> {
        let mut tries = 0;
        loop {
            match Store::open(state) {
                Err(StoreError::Locked { .. }) if tries < 100 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                other => return other,
            }
        }
    }

    /// A full disk is said as such, whichever way sled wraps it; other
    /// errors keep sled's words.
    #[test]
    fn a_full_disk_is_said_in_words() {
        use std::io::{Error, ErrorKind};
        let full = || sled::Error::Io(Error::new(ErrorKind::StorageFull, "Os { code: 28 }"));
        let got: StoreError = full().into();
        assert!(matches!(got, StoreError::DiskFull), "{got}");
        let got = tx_err(sled::transaction::TransactionError::Storage(full()));
        assert!(
            got.to_string().contains("the disk that holds it is full"),
            "{got}"
        );
        let other: StoreError = sled::Error::Io(Error::from(ErrorKind::PermissionDenied)).into();
        assert!(matches!(other, StoreError::Sled(_)), "{other}");
    }

    /// A case's mail, read by the index, is the outbox's mail of that case
    /// (reports, follow-ups, mail of no case), in the outbox's order; a
    /// database whose index is missing or stale (written before it, or by a
    /// perfbot without it) is indexed again when opened.
    #[test]
    fn a_cases_mail_is_found_by_its_index_and_the_index_is_made_at_open() {
        let tmp = tempfile::tempdir().unwrap();
        let state = tmp.path().join("state");
        let s = Store::open(&state).unwrap();
        let ids = ["0123456789ab", "0123456789ac", "abcdef012345"];
        let mut cases = Vec::new();
        for id in ids {
            let c = Case::sample(id, CaseState::Queued, Utc::now());
            s.create_sample(&c);
            cases.push(c);
        }
        for (i, c) in cases.iter().enumerate().take(2) {
            let mut e = OutboxEntry::queued(
                MessageId::parse(&format!("ack{i}@perfbot")).unwrap(),
                c.id.clone(),
                crate::model::OutboxKind::Ack,
                "Re: x".into(),
                vec!["a@example.test".into()],
                Utc::now(),
            );
            assert!(s.queue_followup(&e, b"x", cli(), "ack").unwrap());
            // Written back (a delivery): still indexed once.
            e.attempts = 1;
            s.put_outbox_entry(&e).unwrap();
        }
        let digest = OutboxEntry::queued(
            MessageId::parse("digest1@perfbot").unwrap(),
            CaseId::system(),
            crate::model::OutboxKind::Digest,
            "digest".into(),
            vec!["op@example.test".into()],
            Utc::now(),
        );
        assert!(s.queue_system_mail(&digest, b"x").unwrap());
        let by_scan = |s: &Store, case: &CaseId| -> Vec<String> {
            let all = s.outbox_entries().unwrap();
            all.into_iter()
                .filter(|e| &e.case_id == case)
                .map(|e| e.message_id.to_string())
                .collect()
        };
        let by_index = |s: &Store, case: &CaseId| -> Vec<String> {
            let v = s.case_outbox(case).unwrap();
            v.into_iter().map(|e| e.message_id.to_string()).collect()
        };
        let check = |s: &Store| {
            for c in cases
                .iter()
                .map(|c| c.id.clone())
                .chain([digest.case_id.clone()])
            {
                assert_eq!(by_index(s, &c), by_scan(s, &c), "{c}");
            }
            assert_eq!(by_index(s, &cases[0].id).len(), 2);
            assert_eq!(by_index(s, &cases[2].id).len(), 1);
        };
        check(&s);
        // An index lost, then one stale: made again at open.
        let mut s = s;
        for lost in [true, false] {
            if lost {
                s.outbox_by_case.clear().unwrap();
            } else {
                s.outbox_by_case.insert(b"zzz/gone@x", &[]).unwrap();
            }
            s.flush().unwrap();
            drop(s);
            s = reopen(&state).unwrap();
            check(&s);
            assert_eq!(s.outbox_by_case.len(), s.outbox.len());
        }
    }

    #[test]
    fn an_unfinished_snapshot_left_by_a_kill_is_dropped_not_taken_for_damage() {
        let (t, s) = store();
        let (c, _) = queued_case(&s);
        s.flush().unwrap();
        drop(s);
        let db = t.path().join("state/db");
        // What a kill inside sled's write_snapshot leaves: the newest name,
        // cut short (empty here, or a few bytes).
        for (n, bytes) in [(0u8, &b""[..]), (1, &b"\x01\x02\x03"[..])] {
            let junk = db.join(format!("snap.FFFFFFFFFFFFFF{n:02X}.generating"));
            std::fs::write(&junk, bytes).unwrap();
            let s = reopen(&t.path().join("state")).unwrap();
            assert!(!junk.exists());
            assert_eq!(s.case(&c.id).unwrap().state, CaseState::Queued);
            drop(s);
        }
        // A finished snapshot that is damaged is still damage.
        std::fs::write(db.join("snap.FFFFFFFFFFFFFFFF"), b"\x01\x02\x03").unwrap();
        let e = reopen(&t.path().join("state"))
            .err()
            .expect("a damaged snapshot was accepted");
        assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
    }

    #[test]
    fn a_snapshot_being_written_by_a_live_process_is_left_alone() {
        let (t, s) = store();
        let db = t.path().join("state/db");
        let junk = db.join("snap.FFFFFFFFFFFFFFFF.generating");
        std::fs::write(&junk, b"").unwrap();
        // `s` holds sled's lock, as a running perfbot would.
        drop_unfinished_snapshots(&db);
        assert!(junk.exists());
        std::fs::remove_file(&junk).unwrap();
        drop(s);
    }

    #[test]
    fn a_missing_case_is_a_typed_error() {
        let (_t, s) = store();
        let id = CaseId::parse("ffffffffffff").unwrap();
        let e = s.set_state(&id, CaseState::Fixed, cli(), "x").unwrap_err();
        assert!(
            matches!(&e, StoreError::NoCase(i) if i == "ffffffffffff"),
            "{e}"
        );
        assert!(matches!(s.case(&id), Err(StoreError::NoCase(_))));
    }

    #[test]
    fn every_move_leaves_state_and_history_agreeing() {
        let (_t, s) = store();
        let (c, mut e) = queued_case(&s);
        // Delivered: queued → reported, through the outbox's transition.
        e.state = crate::model::OutboxState::Sent;
        let advance = Some((CaseState::Queued, CaseState::Reported));
        s.outbox_transition(&e, advance, cli(), "sent").unwrap();
        // A second delivery record does not move it again (it is not queued).
        s.outbox_transition(&e, advance, cli(), "sent again")
            .unwrap();
        s.set_state(&c.id, CaseState::AwaitingRevert, cli(), "will revert")
            .unwrap();
        let now = s.case(&c.id).unwrap();
        assert_eq!(now.state, CaseState::AwaitingRevert);
        let events = s.events(&c.id).unwrap();
        let moves: Vec<(Option<CaseState>, CaseState)> =
            events.iter().map(|e| (e.old, e.new)).collect();
        assert_eq!(
            moves[1..],
            [
                (Some(CaseState::Queued), CaseState::Reported),
                (Some(CaseState::Reported), CaseState::Reported),
                (Some(CaseState::Reported), CaseState::AwaitingRevert),
            ]
        );
        // Each event starts where the one before ended.
        for w in events.windows(2) {
            assert_eq!(w[1].old, Some(w[0].new), "{events:#?}");
        }
        assert_eq!(events.last().unwrap().new, now.state);
    }

    /// Open, waiting while a just-dropped handle's flusher holds the lock.
    fn open_retrying(dir: &Path) -> Store {
        Store::open_waiting_unless(dir, std::time::Duration::from_secs(5), || false).unwrap()
    }

    #[test]
    fn a_creation_cut_short_leaves_no_damaged_database() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        std::fs::create_dir_all(&dir).unwrap();
        // What a kill while sled wrote its first files left: a `db.new-*`
        // folder with a torn `conf`. It is not `db`, and a new one is made.
        let torn = dir.join("db.new-999999");
        std::fs::create_dir_all(&torn).unwrap();
        std::fs::write(torn.join("conf"), b"segment_size: 52").unwrap();
        let s = Store::open(&dir).unwrap();
        queued_case(&s);
        assert!(dir.join("db").join("conf").exists());
        assert!(!dir.join(format!("db.new-{}", std::process::id())).exists());
        drop(s);
        // It opens again with what it holds.
        let s = open_retrying(&dir);
        assert_eq!(s.cases().unwrap().len(), 1);
    }

    #[test]
    fn a_newer_schema_is_refused_not_reset() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        {
            let s = Store::open(&dir).unwrap();
            queued_case(&s);
            s.meta_set("schema", "99").unwrap();
        }
        let e = refusal(&dir);
        assert!(matches!(e, StoreError::Newer { found: 99, .. }), "{e}");
        // Nothing was reset: back at the known schema, the case is still there.
        {
            // sled's flusher thread lets go of the lock a moment after a drop.
            let mut tries = 0;
            let db = loop {
                match sled::open(dir.join("db")) {
                    Ok(db) => break db,
                    Err(_) if tries < 100 => {
                        tries += 1;
                        std::thread::sleep(std::time::Duration::from_millis(50));
                    }
                    Err(e) => panic!("{e}"),
                }
            };
            db.open_tree("meta").unwrap().insert("schema", "1").unwrap();
            db.flush().unwrap();
        }
        let s = open_retrying(&dir);
        assert_eq!(s.cases().unwrap().len(), 1);
    }

    /// `Store::open` until it gives an error other than a lock a dropped
    /// handle's flusher still holds: sled's flusher thread lets go of the
    /// lock a moment after a drop, so the file lock (Sled) or perfbot's own
    /// (Locked) may still be held.
    fn refusal(dir: &Path) -> StoreError {
        for _ in 0..100 {
            match Store::open(dir) {
                Err(StoreError::Sled(_) | StoreError::Locked { .. }) => {
                    std::thread::sleep(std::time::Duration::from_millis(50))
                }
                Err(e) => return e,
                Ok(_) => panic!("opened"),
            }
        }
        panic!("still locked")
    }

    /// The files that tell a damaged database from a new one, damaged
    /// themselves: each refusal names the file and what is wrong, and
    /// nothing is reset (put back, the database opens with its case).
    #[test]
    fn damaged_identity_files_are_refused_not_reset() {
        let table = [
            (MARKER_FILE, "the database marker is unreadable"),
            (GENERATION_FILE, "unreadable generation \"not a number\""),
        ];
        for (file, words) in table {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("state");
            let path = dir.join(file);
            let kept = {
                let s = Store::open(&dir).unwrap();
                queued_case(&s);
                std::fs::read(&path).unwrap()
            };
            std::fs::write(&path, "not a number").unwrap();
            let e = refusal(&dir);
            let shown = e.to_string();
            assert!(matches!(e, StoreError::Corrupt { .. }), "{file}: {shown}");
            assert!(shown.contains(&path.display().to_string()), "{shown}");
            assert!(shown.contains(words), "{file}: {shown}");
            std::fs::write(&path, kept).unwrap();
            let s = open_retrying(&dir);
            assert_eq!(s.cases().unwrap().len(), 1, "{file}");
        }
    }

    /// A kill while the first generation is written leaves no generation
    /// file, or a part of it beside its place, never an empty one in it:
    /// the database opens, and the next flush writes the number whole.
    #[test]
    fn a_kill_at_the_first_generation_leaves_a_database_that_opens() {
        for left in [None, Some(""), Some("12")] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("state");
            let s = Store::open(&dir).unwrap();
            queued_case(&s);
            drop(s);
            let path = dir.join(GENERATION_FILE);
            std::fs::remove_file(&path).unwrap();
            let part = dir.join(format!(".{GENERATION_FILE}.tmp"));
            if let Some(text) = left {
                std::fs::write(&part, text).unwrap();
            }
            let s = open_retrying(&dir);
            assert_eq!(s.cases().unwrap().len(), 1, "{left:?}");
            s.flush().unwrap();
            let n = read_generation(&path).unwrap().unwrap();
            assert_eq!(n, s.generation.load(std::sync::atomic::Ordering::Acquire));
            assert!(!part.exists(), "{left:?}");
        }
    }

    /// A database that lost its schema version but holds data is damaged;
    /// one emptied under its marker is refused as emptied. Neither is
    /// taken for a new database.
    #[test]
    fn a_database_without_its_schema_is_not_a_new_one() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        {
            let s = Store::open(&dir).unwrap();
            queued_case(&s);
            s.meta.remove("schema").unwrap();
            s.flush().unwrap();
        }
        let e = refusal(&dir).to_string();
        assert!(e.contains("no schema version"), "{e}");

        // Emptied: a new, empty sled database in its place, the marker and
        // the generation file beside it as they were.
        std::fs::remove_dir_all(dir.join("db")).unwrap();
        sled::open(dir.join("db")).unwrap().flush().unwrap();
        let e = refusal(&dir);
        assert!(matches!(e, StoreError::Emptied { .. }), "{e}");
        assert!(e.to_string().contains("Restore db/ from a backup"), "{e}");
    }
}
