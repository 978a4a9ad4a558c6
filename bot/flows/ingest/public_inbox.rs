//! public-inbox archives, as lore.kernel.org serves them: git repositories
//! (one or more epochs `N.git` per list), one message per commit in a blob
//! named `m` (a deletion leaves `d`). Read with gitoxide, in commit order,
//! with a cursor per repository (the last commit read) kept in sled, so that
//! a rerun reads only what is new. A cursor that is no longer in the history
//! (the archive was rewritten) means a rescan: every message is offered
//! again and the Message-ID index keeps them from counting twice.

use std::path::{Path, PathBuf};

use super::Ingestor;
use crate::model::Unreadable;
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
    crate::model::MailSource::PublicInbox(p.display().to_string()).key()
}

/// What one repository gave.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Read {
    pub commits: usize,
    /// The cursor was not in the history any more: everything was read again.
    pub rescanned: bool,
    /// Messages that could not be read this time, new or tried again (kept
    /// as `Unreadable`).
    pub unreadable: usize,
    /// Messages unreadable before that were read this time.
    pub recovered: usize,
}

/// Make durable and move the cursor every this many messages.
const CHECKPOINT: usize = 10_000;

/// Read one repository from its cursor to its head, oldest first.
/// `progress` is told the bytes of message data read so far.
///
/// A message that cannot be taken out of the archive (a missing object of a
/// partial clone, a damaged or mislabelled one, `m` that is no blob, a blob
/// over the cap) is recorded as `Unreadable` with the commit, the object and
/// the reason, and the read goes on: one bad object never stops an archive.
/// Every run first tries the earlier unreadable messages again.
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
    let key = cursor_key(repo_path);
    let cap = ing.limits.never_read_over();
    let before = ing.stats.unreadable;
    let mut read = Read {
        recovered: retry_unreadable(ing, &repo, &key, &shown, cap)?,
        ..Read::default()
    };
    let Some(head) = head_of(&repo).map_err(git)? else {
        // An empty epoch: nothing to read.
        read.unreadable = ing.stats.unreadable - before;
        return Ok(read);
    };
    let cursor = ing
        .store
        .text_cursor(&key)?
        .and_then(|c| gix::ObjectId::from_hex(c.as_bytes()).ok());
    let walk = std::time::Instant::now();
    let history = history(&repo, head, cursor);
    read.rescanned = cursor.is_some() && !history.reached;
    for (commit, why) in &history.missing {
        let u = unreadable(
            &key,
            commit,
            Some(*commit),
            format!("commit: {why} (its older history is not read)"),
        );
        note_unreadable(ing, &shown, &u)?;
    }
    let chain = history.chain;
    tracing::debug!(repository = %shown, commits = chain.len(), ms = walk.elapsed().as_millis() as u64, "history walked");
    if read.rescanned {
        tracing::warn!(repository = %shown, "the cursor's commit is not in the history (rewritten?): reading everything again, known Message-IDs are skipped");
    }
    let bytes = ingest_chain(ing, repo_path, &key, &chain, cap, &mut progress)?;
    ing.checkpoint()?;
    if let Some((last, _)) = chain.last() {
        ing.store.set_text_cursor(&key, &last.to_string())?;
    }
    progress(bytes);
    read.commits = chain.len();
    read.unreadable = ing.stats.unreadable - before;
    Ok(read)
}

/// The commit to read up to: public-inbox writes `refs/heads/master`, and a
/// mirror's HEAD points there. `None`: an empty epoch.
fn head_of(repo: &gix::Repository) -> Result<Option<gix::ObjectId>, String> {
    match repo.find_reference("refs/heads/master") {
        Ok(r) => Ok(Some(
            r.into_fully_peeled_id()
                .map_err(|e| e.to_string())?
                .detach(),
        )),
        Err(_) => Ok(repo.head_id().ok().map(|id| id.detach())),
    }
}

/// Ingest the messages of `chain` (commit, tree), in order, moving the
/// cursor every `CHECKPOINT` messages; returns the bytes of message data.
///
/// The blobs are read (inflated) on reader threads while this one ingests:
/// reader k takes messages k, k+n, k+2n… into a bounded queue of its own, and
/// this thread takes from the queues in turn, so messages stay in commit
/// order and memory stays flat. Loose objects (a file each, three per
/// message) need more than one reader to keep up.
fn ingest_chain(
    ing: &mut Ingestor,
    repo_path: &Path,
    key: &str,
    chain: &[(gix::ObjectId, gix::ObjectId)],
    cap: usize,
    progress: &mut impl FnMut(u64),
) -> Result<u64, PublicInboxError> {
    let shown = repo_path.display().to_string();
    let git = |why: String| PublicInboxError::Git {
        path: shown.clone(),
        why,
    };
    let readers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 4);
    let mut bytes = 0u64;
    std::thread::scope(|scope| -> Result<(), PublicInboxError> {
        let mut queues = Vec::with_capacity(readers);
        for k in 0..readers {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Blob>(64);
            queues.push(rx);
            scope.spawn(move || {
                read_blobs(repo_path, chain.iter().skip(k).step_by(readers), cap, tx)
            });
        }
        for n in 0..chain.len() {
            let Ok(item) = queues[n % readers].recv() else {
                return Err(git("a reader thread stopped".into()));
            };
            let (id, got) = item.map_err(git)?;
            match got {
                Got::Message(data) => {
                    bytes += data.len() as u64;
                    let source = format!("{shown} commit {id}");
                    ing.ingest(&data, &source)?;
                }
                Got::Deleted => {}
                Got::Unreadable { object, reason } => {
                    note_unreadable(ing, &shown, &unreadable(key, &id, object, reason))?;
                }
            }
            if (n + 1) % CHECKPOINT == 0 {
                ing.checkpoint()?;
                ing.store.set_text_cursor(key, &id.to_string())?;
                progress(bytes);
            }
        }
        Ok(())
    })?;
    Ok(bytes)
}

/// The commits from the head back to the cursor, oldest first.
struct History {
    /// (commit, its tree), parents before children.
    chain: Vec<(gix::ObjectId, gix::ObjectId)>,
    /// Commits that could not be read, and why (their history ends there).
    missing: Vec<(gix::ObjectId, String)>,
    /// The cursor was met on the way.
    reached: bool,
}

/// Walk every parent (public-inbox history is linear, but a merge must not
/// hide its second parent's messages), depth first along first parents, and
/// keep the commits in post-order: parents before children, the first
/// parent's line before a merged one. Each commit is decoded once. The
/// cursor and what lies behind it are not walked; a merged line that forks
/// from behind the cursor is read again, and the Message-ID index keeps it
/// from counting twice.
fn history(repo: &gix::Repository, head: gix::ObjectId, cursor: Option<gix::ObjectId>) -> History {
    let mut out = History {
        chain: Vec::new(),
        missing: Vec::new(),
        reached: cursor.is_none(),
    };
    let mut seen = std::collections::HashSet::new();
    // (commit, its tree once expanded)
    let mut stack: Vec<(gix::ObjectId, Option<gix::ObjectId>)> = vec![(head, None)];
    while let Some((id, expanded)) = stack.pop() {
        if let Some(tree) = expanded {
            out.chain.push((id, tree));
            continue;
        }
        if Some(id) == cursor {
            out.reached = true;
            continue;
        }
        if !seen.insert(id) {
            continue;
        }
        match commit_tree(repo, id) {
            Ok((tree, parents)) => {
                stack.push((id, Some(tree)));
                // The first parent on top: walked first.
                stack.extend(parents.into_iter().rev().map(|p| (p, None)));
            }
            Err(why) => out.missing.push((id, why)),
        }
    }
    out
}

/// A commit's tree and parents, decoded once; why not, if it cannot be.
fn commit_tree(
    repo: &gix::Repository,
    id: gix::ObjectId,
) -> Result<(gix::ObjectId, Vec<gix::ObjectId>), String> {
    let c = repo.find_commit(id).map_err(|e| e.to_string())?;
    let tree = c.tree_id().map_err(|e| e.to_string())?.detach();
    Ok((tree, c.parent_ids().map(|p| p.detach()).collect()))
}

/// Try the repository's unreadable messages again; the number now read.
fn retry_unreadable(
    ing: &mut Ingestor,
    repo: &gix::Repository,
    key: &str,
    shown: &str,
    cap: usize,
) -> Result<usize, PublicInboxError> {
    let mut recovered = 0;
    for old in ing.store.unreadable(Some(key))? {
        let Ok(id) = gix::ObjectId::from_hex(old.commit.as_bytes()) else {
            ing.store.clear_unreadable(key, &old.commit)?;
            continue;
        };
        let got = match commit_tree(repo, id) {
            Ok((tree, _)) => read_message(repo, tree, cap),
            Err(why) => Got::Unreadable {
                object: Some(id),
                reason: format!("commit: {why}"),
            },
        };
        match got {
            Got::Message(data) => {
                let source = format!("{shown} commit {id}");
                ing.ingest(&data, &source)?;
                ing.store.clear_unreadable(key, &old.commit)?;
                tracing::info!(repository = %shown, commit = %id, "an unreadable message was read");
                recovered += 1;
            }
            Got::Deleted => ing.store.clear_unreadable(key, &old.commit)?,
            Got::Unreadable { object, reason } => {
                note_unreadable(ing, shown, &unreadable(key, &id, object, reason))?;
            }
        }
    }
    Ok(recovered)
}

fn unreadable(
    key: &str,
    commit: &gix::ObjectId,
    object: Option<gix::ObjectId>,
    reason: String,
) -> Unreadable {
    Unreadable::first(
        key,
        &commit.to_string(),
        object.map(|o| o.to_string()),
        reason,
    )
}

fn note_unreadable(ing: &mut Ingestor, shown: &str, u: &Unreadable) -> Result<(), StoreError> {
    tracing::warn!(repository = %shown, commit = %u.commit, object = ?u.object, reason = %u.reason, "message unreadable: kept for a later run");
    ing.stats.unreadable += 1;
    ing.store.record_unreadable(u)
}

/// What a commit holds.
enum Got {
    Message(Vec<u8>),
    /// The commit deletes a message (no `m`).
    Deleted,
    /// Its message cannot be read: the object that failed and why.
    Unreadable {
        object: Option<gix::ObjectId>,
        reason: String,
    },
}

/// What a reader thread hands on: a commit and what it holds, or why the
/// repository cannot be read at all.
type Blob = Result<(gix::ObjectId, Got), String>;

/// A reader thread: what each commit's tree holds, in the order given, into
/// `tx`. Stops when the receiver is gone.
fn read_blobs<'c>(
    repo_path: &Path,
    commits: impl Iterator<Item = &'c (gix::ObjectId, gix::ObjectId)>,
    cap: usize,
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
        if tx.send(Ok((*id, read_message(&repo, *tree, cap)))).is_err() {
            return;
        }
    }
}

/// The message blob `m` of a commit's tree, checked: a blob, at most `cap`
/// bytes (asked of the object's header before anything is inflated), and
/// its content hashing to its id (a loose object can be overwritten with
/// another valid one).
fn read_message(repo: &gix::Repository, tree: gix::ObjectId, cap: usize) -> Got {
    let failed = |object: gix::ObjectId, reason: String| Got::Unreadable {
        object: Some(object),
        reason,
    };
    let t = match repo.find_tree(tree) {
        Ok(t) => t,
        Err(e) => return failed(tree, format!("tree: {e}")),
    };
    let Some(entry) = t.find_entry("m") else {
        return Got::Deleted;
    };
    let id = entry.object_id();
    if !entry.mode().is_blob() {
        return failed(
            id,
            format!("`m` is a {:?}, not a message blob", entry.mode().kind()),
        );
    }
    match repo.find_header(id) {
        Err(e) => return failed(id, format!("blob `m`: {e}")),
        Ok(h) if h.size() as usize > cap => {
            return failed(
                id,
                format!(
                    "blob `m` of {} bytes, over {} × inbound.max_message_bytes ({cap}): not read",
                    h.size(),
                    super::OVERSIZE_FACTOR
                ),
            )
        }
        Ok(_) => {}
    }
    let data = match repo.find_object(id) {
        Ok(o) if o.kind == gix::objs::Kind::Blob => o.detach().data,
        Ok(o) => return failed(id, format!("`m` is a {}, not a blob", o.kind)),
        Err(e) => return failed(id, format!("blob `m`: {e}")),
    };
    match gix::objs::compute_hash(id.kind(), gix::objs::Kind::Blob, &data) {
        Ok(actual) if actual == id => Got::Message(data),
        Ok(actual) => failed(
            id,
            format!("blob `m` is damaged: its content hashes to {actual}"),
        ),
        Err(e) => failed(id, format!("blob `m`: {e}")),
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
