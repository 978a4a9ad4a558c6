//! sled, the one source of truth: cases, their events, the Message-ID index, the
//! outbox and mailbox cursors. Multi-tree updates run in one transaction.

pub mod cursor;
pub mod optout;
pub mod outbox;
pub mod thread;

use std::path::Path;

use chrono::Utc;
use sled::transaction::{ConflictableTransactionError, TransactionError};
use sled::Transactional;

use crate::case::{Case, CaseId, CaseState, Cause, Event};
use crate::mail::MessageId;
pub use outbox::{OutboxEntry, OutboxState};

/// The layout this code reads and writes.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("state database {path}: {source}")]
    Open { path: String, source: sled::Error },
    #[error("state database {path} is in use by another perfbot process (is `perfbot run` running? Its dashboard serves the same data; reports can go to its spool directory)")]
    Locked { path: String },
    #[error("state database: {0}")]
    Sled(#[from] sled::Error),
    #[error("state database {path} was written by a newer perfbot (schema {found}, this one knows {SCHEMA_VERSION}); refusing to touch it")]
    Newer { path: String, found: u32 },
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
    pub db: sled::Db,
    pub(crate) cases: sled::Tree,
    pub(crate) events: sled::Tree,
    pub(crate) messages: sled::Tree,
    pub(crate) outbox: sled::Tree,
    pub(crate) outbox_raw: sled::Tree,
    pub(crate) optout: sled::Tree,
    pub(crate) cursors: sled::Tree,
    pub(crate) thread: sled::Tree,
    pub(crate) quarantine: sled::Tree,
    pub(crate) meta: sled::Tree,
    /// The state directory (for files kept beside the database).
    pub dir: std::path::PathBuf,
}

/// What `Store::create_case` did.
#[derive(Debug)]
pub enum Created {
    New(Case),
    Existing(Case),
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

pub(crate) fn encode<T: serde::Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("records serialise")
}

pub(crate) fn abort<E: std::fmt::Display>(e: E) -> ConflictableTransactionError<String> {
    ConflictableTransactionError::Abort(e.to_string())
}

pub(crate) fn tx_err(e: TransactionError<String>) -> StoreError {
    match e {
        TransactionError::Abort(s) => StoreError::Corrupt {
            path: String::new(),
            why: s,
        },
        TransactionError::Storage(e) => StoreError::Sled(e),
    }
}

pub(crate) fn event_key(case: &CaseId, seq: u64) -> Vec<u8> {
    let mut k = case.as_str().as_bytes().to_vec();
    k.push(b'/');
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

impl Store {
    /// Open (or create) the database in `state_dir/db`.
    pub fn open(state_dir: &Path) -> Result<Store, StoreError> {
        let path = state_dir.join("db");
        let shown = path.display().to_string();
        if path.exists() && !path.join("conf").exists() && !path.join("db").exists() {
            return Err(StoreError::Corrupt {
                path: shown,
                why: "the directory has no sled files".into(),
            });
        }
        // sled's page cache defaults to 1 GB; perfbot's working set is small,
        // and a long backfill must not grow the process.
        let db = sled::Config::new()
            .path(&path)
            .cache_capacity(32 << 20)
            .open()
            .map_err(|source| {
                let locked = matches!(&source, sled::Error::Io(e) if e.kind() == std::io::ErrorKind::WouldBlock)
                    || source.to_string().contains("lock");
                if locked {
                    StoreError::Locked { path: shown.clone() }
                } else {
                    StoreError::Open {
                        path: shown.clone(),
                        source,
                    }
                }
            })?;
        let meta = db.open_tree("meta")?;
        match meta.get("schema")? {
            Some(v) => {
                let found: u32 = std::str::from_utf8(&v)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| StoreError::Corrupt {
                        path: shown.clone(),
                        why: "unreadable schema version".into(),
                    })?;
                if found > SCHEMA_VERSION {
                    return Err(StoreError::Newer { path: shown, found });
                }
                // Older layouts would be migrated here, one version at a time.
            }
            None => {
                let names = db.tree_names();
                let used = names
                    .iter()
                    .any(|n| n.as_ref() != b"__sled__default" && n.as_ref() != b"meta");
                if used {
                    return Err(StoreError::Corrupt {
                        path: shown,
                        why: "no schema version".into(),
                    });
                }
                meta.insert("schema", SCHEMA_VERSION.to_string().as_bytes())?;
                db.flush()?;
            }
        }
        Ok(Store {
            cases: db.open_tree("cases")?,
            events: db.open_tree("events")?,
            messages: db.open_tree("messages")?,
            outbox: db.open_tree("outbox")?,
            outbox_raw: db.open_tree("outbox_raw")?,
            optout: db.open_tree("optout")?,
            cursors: db.open_tree("cursors")?,
            thread: db.open_tree("thread")?,
            quarantine: db.open_tree("quarantine")?,
            meta,
            dir: state_dir.to_path_buf(),
            db,
        })
    }

    pub fn flush(&self) -> Result<(), StoreError> {
        self.db.flush()?;
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
        )
            .transaction(|(cases, events, messages, outbox, outbox_raw)| {
                if let Some(existing) = cases.get(case.id.as_str())? {
                    let c: Case = serde_json::from_slice(&existing).map_err(abort)?;
                    return Ok(Created::Existing(c));
                }
                cases.insert(case.id.as_str(), encode(case))?;
                let ev = Event {
                    time: case.created,
                    cause: cause.clone(),
                    old: None,
                    new: case.state,
                    note: "report queued".into(),
                };
                events.insert(event_key(&case.id, seq), encode(&ev))?;
                messages.insert(
                    case.message_id.as_str(),
                    encode(&outbox::MessageRef::ours(&case.id, "report")),
                )?;
                outbox.insert(entry.message_id.as_str(), encode(entry))?;
                outbox_raw.insert(entry.message_id.as_str(), raw)?;
                Ok(Created::New(case.clone()))
            });
        let created = result.map_err(tx_err)?;
        self.flush()?;
        Ok(created)
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

    pub fn cases(&self) -> Result<Vec<Case>, StoreError> {
        let mut out = Vec::new();
        for kv in self.cases.iter() {
            let (k, v) = kv?;
            out.push(decode("cases", &k, &v)?);
        }
        out.sort_by(|a: &Case, b: &Case| a.created.cmp(&b.created).then_with(|| a.id.cmp(&b.id)));
        Ok(out)
    }

    pub fn events(&self, id: &CaseId) -> Result<Vec<Event>, StoreError> {
        let mut prefix = id.as_str().as_bytes().to_vec();
        prefix.push(b'/');
        let mut out = Vec::new();
        for kv in self.events.scan_prefix(prefix) {
            let (k, v) = kv?;
            out.push(decode("events", &k, &v)?);
        }
        Ok(out)
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
        let seq = self.db.generate_id()?;
        let now = Utc::now();
        let result = (&self.cases, &self.events).transaction(|(cases, events)| {
            let v = cases
                .get(id.as_str())?
                .ok_or_else(|| abort(format!("no case {id}")))?;
            let mut c: Case = serde_json::from_slice(&v).map_err(abort)?;
            let ev = Event {
                time: now,
                cause: cause.clone(),
                old: Some(c.state),
                new,
                note: note.to_string(),
            };
            c.state = new;
            c.updated = now;
            cases.insert(id.as_str(), encode(&c))?;
            events.insert(event_key(id, seq), encode(&ev))?;
            Ok(c)
        });
        let c = result.map_err(|e| match e {
            TransactionError::Abort(s) if s.starts_with("no case") => {
                StoreError::NoCase(id.to_string())
            }
            e => tx_err(e),
        })?;

        Ok(c)
    }

    /// Which case a Message-ID belongs to, if any.
    pub fn message(&self, id: &MessageId) -> Result<Option<outbox::MessageRef>, StoreError> {
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

impl Store {
    /// Pretend a newer perfbot wrote this database (for tests of the refusal).
    #[doc(hidden)]
    pub fn meta_set_schema_for_test(&self, v: u32) {
        self.meta
            .insert("schema", v.to_string().as_bytes())
            .unwrap();
        self.db.flush().unwrap();
    }
}
