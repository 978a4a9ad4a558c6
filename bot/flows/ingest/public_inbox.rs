//! public-inbox archives, as lore.kernel.org serves them: git repositories
//! (one or more epochs `N.git` per list), one message per commit in a blob
//! named `m` (a deletion leaves `d`). Read with gitoxide, in commit order,
//! with a cursor per repository (the last commit read) kept in sled, so that
//! a rerun reads only what is new. A cursor that is no longer in the history
//! (the archive was rewritten) means a rescan: every message is offered
//! again and the Message-ID index keeps them from counting twice.

use std::path::{Path, PathBuf};

use super::Ingestor;
use crate::store::StoreError;

/// Why an archive could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PublicInboxError {
    #[error("{0}: not a public-inbox archive (no git repository, no epochs N.git below it)")]
    NotARepository(String),
    #[error("{path}: {why}")]
    Git { path: String, why: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The git repositories of an archive path: the repository itself, its
/// epochs (`git/0.git`, `git/1.git`, … of public-inbox v2), or every list of
/// a grokmirror-style tree; epochs in number order.
pub fn repositories(path: &Path) -> Result<Vec<PathBuf>, PublicInboxError> {
    fn is_repo(p: &Path) -> bool {
        p.join("objects").is_dir() && p.join("HEAD").is_file()
    }
    fn epoch(p: &Path) -> (String, u64) {
        let parent = p
            .parent()
            .map(|x| x.display().to_string())
            .unwrap_or_default();
        let n = p
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.parse().ok())
            .unwrap_or(u64::MAX);
        (parent, n)
    }
    fn walk(p: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        if is_repo(p) {
            out.push(p.to_path_buf());
            return;
        }
        if depth == 0 {
            return;
        }
        let Ok(entries) = std::fs::read_dir(p) else {
            return;
        };
        for e in entries.flatten() {
            let q = e.path();
            if q.is_dir() {
                walk(&q, depth - 1, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(path, 4, &mut out);
    if out.is_empty() {
        return Err(PublicInboxError::NotARepository(path.display().to_string()));
    }
    out.sort_by_key(|p| epoch(p));
    Ok(out)
}

/// The cursor's key for a repository: its canonical path.
fn cursor_key(repo: &Path) -> String {
    let p = std::fs::canonicalize(repo).unwrap_or_else(|_| repo.to_path_buf());
    format!("public-inbox:{}", p.display())
}

/// What one repository gave.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Read {
    pub commits: usize,
    /// The cursor was not in the history any more: everything was read again.
    pub rescanned: bool,
}

/// Make durable and move the cursor every this many messages.
const CHECKPOINT: usize = 10_000;

/// Read one repository from its cursor to its head, oldest first.
/// `progress` is told the bytes of message data read so far.
pub fn ingest_repository(
    ing: &mut Ingestor,
    repo_path: &Path,
    mut progress: impl FnMut(u64),
) -> Result<Read, PublicInboxError> {
    let shown = repo_path.display().to_string();
    let git = |why: String| PublicInboxError::Git {
        path: shown.clone(),
        why,
    };
    let repo = gix::open(repo_path).map_err(|e| git(e.to_string()))?;
    // public-inbox writes refs/heads/master; a mirror's HEAD points there.
    let head = match repo.find_reference("refs/heads/master") {
        Ok(r) => r
            .into_fully_peeled_id()
            .map_err(|e| git(e.to_string()))?
            .detach(),
        Err(_) => match repo.head_id() {
            Ok(id) => id.detach(),
            // An empty epoch: nothing to read.
            Err(_) => return Ok(Read::default()),
        },
    };
    let key = cursor_key(repo_path);
    let cursor = ing
        .store
        .text_cursor(&key)?
        .and_then(|c| gix::ObjectId::from_hex(c.as_bytes()).ok());
    // The first-parent chain from the head back to the cursor: public-inbox
    // history is linear. Each commit is decoded once, for its tree and parent.
    let mut chain: Vec<(gix::ObjectId, gix::ObjectId)> = Vec::new();
    let walk = std::time::Instant::now();
    let mut at = Some(head);
    let mut reached = cursor.is_none();
    while let Some(id) = at {
        if Some(id) == cursor {
            reached = true;
            break;
        }
        let commit = repo.find_commit(id).map_err(|e| git(e.to_string()))?;
        let tree = commit.tree_id().map_err(|e| git(e.to_string()))?.detach();
        chain.push((id, tree));
        at = commit.parent_ids().next().map(|p| p.detach());
    }
    let rescanned = !reached;
    tracing::debug!(repository = %shown, commits = chain.len(), ms = walk.elapsed().as_millis() as u64, "history walked");
    if rescanned {
        tracing::warn!(repository = %shown, "the cursor's commit is not in the history (rewritten?): reading everything again, known Message-IDs are skipped");
    }
    chain.reverse();
    // The blobs are read (inflated) on reader threads while this one
    // ingests: reader k takes messages k, k+n, k+2n… into a bounded queue of
    // its own, and this thread takes from the queues in turn, so messages
    // stay in commit order and memory stays flat. Loose objects (a file
    // each, three per message) need more than one reader to keep up.
    let readers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 4);
    let mut bytes = 0u64;
    let result = std::thread::scope(|scope| -> Result<(), PublicInboxError> {
        let chain = &chain;
        let mut queues = Vec::with_capacity(readers);
        for k in 0..readers {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Blob>(64);
            queues.push(rx);
            scope.spawn(move || read_blobs(repo_path, chain.iter().skip(k).step_by(readers), tx));
        }
        for n in 0..chain.len() {
            let Ok(item) = queues[n % readers].recv() else {
                return Err(git("a reader thread stopped".into()));
            };
            let (id, blob) = item.map_err(git)?;
            if let Some(data) = blob {
                bytes += data.len() as u64;
                let source = format!("{shown} commit {id}");
                ing.ingest(&data, &source)?;
            }
            if (n + 1) % CHECKPOINT == 0 {
                ing.store.flush()?;
                ing.store.set_text_cursor(&key, &id.to_string())?;
                progress(bytes);
            }
        }
        Ok(())
    });
    result?;
    ing.store.flush()?;
    if let Some((last, _)) = chain.last() {
        ing.store.set_text_cursor(&key, &last.to_string())?;
    }
    progress(bytes);
    Ok(Read {
        commits: chain.len(),
        rescanned,
    })
}

/// What a reader thread hands on: a commit and its message (`None`: the
/// commit deletes one), or why it could not be read.
type Blob = Result<(gix::ObjectId, Option<Vec<u8>>), String>;

/// A reader thread: the message blob (`m`) of each commit's tree, in the
/// order given, into `tx`; a commit that deletes a message (only `d`) gives
/// `None`. Stops at the first error (sent on) or when the receiver is gone.
fn read_blobs<'c>(
    repo_path: &Path,
    commits: impl Iterator<Item = &'c (gix::ObjectId, gix::ObjectId)>,
    tx: std::sync::mpsc::SyncSender<Blob>,
) {
    // A handle of its own (gitoxide's handles stay on their thread).
    let repo = match gix::open(repo_path) {
        Ok(r) => r,
        Err(e) => {
            let _ = tx.send(Err(e.to_string()));
            return;
        }
    };
    for (id, tree) in commits {
        let blob = repo
            .find_tree(*tree)
            .map_err(|e| e.to_string())
            .and_then(|t| match t.find_entry("m") {
                None => Ok(None),
                Some(e) => e
                    .object()
                    .map(|o| Some(o.detach().data))
                    .map_err(|e| e.to_string()),
            });
        let failed = blob.is_err();
        if tx.send(blob.map(|b| (*id, b))).is_err() || failed {
            return;
        }
    }
}

/// Write messages into a new public-inbox repository at `path` (a bare git
/// repository, one commit per message with the message as blob `m`, on
/// `refs/heads/master`), or append them to an existing one. For tests and
/// benchmarks, which build their own archives.
pub fn write_archive<'m>(
    path: &Path,
    messages: impl IntoIterator<Item = &'m [u8]>,
) -> Result<usize, PublicInboxError> {
    use gix::objs::tree::{Entry, EntryKind};
    let shown = path.display().to_string();
    let git = |why: String| PublicInboxError::Git {
        path: shown.clone(),
        why,
    };
    let repo = if path.join("objects").is_dir() {
        gix::open(path).map_err(|e| git(e.to_string()))?
    } else {
        std::fs::create_dir_all(path).map_err(|e| git(e.to_string()))?;
        gix::init_bare(path).map_err(|e| git(e.to_string()))?
    };
    let mut parent = repo
        .find_reference("refs/heads/master")
        .ok()
        .and_then(|r| r.into_fully_peeled_id().ok())
        .map(|id| id.detach());
    let sig = gix::actor::SignatureRef {
        name: "perfbot".into(),
        email: "perfbot@localhost".into(),
        time: "1700000000 +0000",
    };
    let mut n = 0;
    for m in messages {
        let blob = repo.write_blob(m).map_err(|e| git(e.to_string()))?.detach();
        let tree = gix::objs::Tree {
            entries: vec![Entry {
                mode: EntryKind::Blob.into(),
                filename: "m".into(),
                oid: blob,
            }],
        };
        let tree_id = repo
            .write_object(&tree)
            .map_err(|e| git(e.to_string()))?
            .detach();
        let id = repo
            .commit_as(sig, sig, "refs/heads/master", "message", tree_id, parent)
            .map_err(|e| git(e.to_string()))?
            .detach();
        parent = Some(id);
        n += 1;
    }
    // Mirrors point HEAD at master.
    std::fs::write(path.join("HEAD"), "ref: refs/heads/master\n")
        .map_err(|e| git(e.to_string()))?;
    Ok(n)
}
