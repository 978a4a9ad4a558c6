//! Local sources of mail: a maildir (`new/` and `cur/`), mbox files (plain or
//! gzip, as lore exports threads and lists), one message on standard input.
//! Each message goes through the `Ingestor`; a read error stops that source
//! with a message that says where, and everything before it is kept.

use std::fs::File;
use std::io::{BufReader, IsTerminal, Read};
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::failing::Failing;
use super::imap_source::{ImapInbox, ImapSourceError};
use super::ingestor::Ingestor;
use super::mbox::Item;
use crate::config::{Config, ConfigError, InboundSource};
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{path}: {why}")]
    Read { path: String, why: String },
    /// What was given is not the kind of source it was named as (a folder
    /// that is no maildir, a file that is no mbox): nothing in it was read.
    #[error("{path}: {why}")]
    NotASource { path: String, why: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The configured source cannot be used as configured (operator error).
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Imap(#[from] ImapSourceError),
}

/// How long the configured source is read.
#[derive(Clone, Copy)]
pub enum Reading<'a> {
    /// What is there now, then return.
    Once,
    /// Keep following it (IMAP IDLE or polling; a maildir polled every
    /// `run.poll_every_secs`) until the flag is set.
    Until(&'a AtomicBool),
}

/// Read the configured source (`inbound.source`), for `perfbot ingest` and
/// the daemon alike. `after` runs after every round (the callers report
/// progress and wake delivery there). Following, errors are logged and the
/// source retried, but for a database that can no longer be written
/// (`StoreError::is_broken`), which ends the following; once, they are
/// returned.
pub fn read_configured(
    config: &Config,
    ing: &mut Ingestor,
    reading: Reading,
    mut after: impl FnMut(&mut Ingestor),
) -> Result<(), SourceError> {
    match (config.file.inbound.source, reading) {
        (InboundSource::None, _) => {
            tracing::info!("inbound.source is none: not reading mail");
        }
        (InboundSource::Imap, Reading::Once) => {
            let mut inbox = ImapInbox::new(config)?;
            let r = inbox.poll(ing);
            inbox.disconnect();
            r?;
            after(ing);
        }
        (InboundSource::Imap, Reading::Until(stop)) => {
            let mut inbox = ImapInbox::new(config)?;
            let every = Duration::from_secs(config.file.imap.poll_secs.max(1));
            inbox.follow(ing, every, stop, |ing, _| after(ing))?;
        }
        (InboundSource::Maildir, Reading::Once) => {
            // perfbot's own maildir: made on first use.
            ingest_maildir_with(ing, &config.maildir(), true)?;
            after(ing);
        }
        (InboundSource::Maildir, Reading::Until(stop)) => {
            let dir = config.maildir();
            let every = Duration::from_secs(config.file.run.poll_every_secs.max(1));
            let mut first = true;
            let mut failing = Failing::new("maildir");
            while !stop.load(Ordering::Relaxed) {
                // cur/ once at start (until that reading succeeds), then
                // only what arrives in new/.
                match ingest_maildir_with(ing, &dir, first) {
                    Ok(()) => {
                        failing.ended();
                        first = false;
                    }
                    Err(SourceError::Store(e)) if e.is_broken() => return Err(e.into()),
                    Err(e) => {
                        failing.again(&e.to_string(), Instant::now());
                    }
                }
                after(ing);
                let until = Instant::now() + every;
                while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }
    Ok(())
}

impl SourceError {
    /// The database can no longer be written (see `StoreError::is_broken`).
    pub fn is_broken_store(&self) -> bool {
        match self {
            SourceError::Store(e) => e.is_broken(),
            SourceError::Imap(ImapSourceError::Store(e)) => e.is_broken(),
            _ => false,
        }
    }
}

impl From<std::io::Error> for SourceError {
    fn from(e: std::io::Error) -> Self {
        SourceError::Read {
            path: String::new(),
            why: e.to_string(),
        }
    }
}

/// A reader that counts what it has read (for the progress bar and offsets).
struct Counting<R> {
    inner: R,
    count: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

fn progress(len: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(
            "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

/// An mbox file opened for reading: its bytes (inflated, for gzip) and how
/// far into the file the reading is, for the progress bar.
struct OpenMbox {
    reader: Box<dyn Read + Send>,
    len: u64,
    gz: bool,
    /// Bytes of the file read (compressed, for gzip; for a plain file, set
    /// from the offsets of the messages).
    count: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// Open an mbox, gzip detected by its magic bytes.
fn open_mbox(path: &Path, shown: &str) -> Result<OpenMbox, SourceError> {
    let err = |e: std::io::Error| SourceError::Read {
        path: shown.to_string(),
        why: e.to_string(),
    };
    if path.is_dir() {
        let maildir = path.join("new").is_dir() || path.join("cur").is_dir();
        return Err(SourceError::NotASource {
            path: shown.to_string(),
            why: format!(
                "a directory, not an mbox file{}",
                if maildir {
                    ": a maildir (read with --maildir)"
                } else {
                    " (a maildir is read with --maildir, a public-inbox archive with --public-inbox)"
                }
            ),
        });
    }
    let mut f = File::open(path).map_err(err)?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut magic = [0u8; 2];
    let gz = f.read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
    drop(f);
    let f = File::open(path).map_err(err)?;
    let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let reader: Box<dyn Read + Send> = if gz {
        let file = Counting {
            inner: f,
            count: count.clone(),
        };
        Box::new(flate2::read::MultiGzDecoder::new(BufReader::with_capacity(
            1 << 16,
            file,
        )))
    } else {
        // A plain file is read straight into the splitter's buffers.
        Box::new(f)
    };
    Ok(OpenMbox {
        reader,
        len,
        gz,
        count,
    })
}

/// Ingest every message of an mbox file (gzip detected by its magic bytes).
pub fn ingest_mbox(ing: &mut Ingestor, path: &Path) -> Result<(), SourceError> {
    let shown = path.display().to_string();
    let OpenMbox {
        reader,
        len,
        gz,
        count,
    } = open_mbox(path, &shown)?;
    let pb = progress(len, &shown);
    let mut n = 0usize;
    let mut last_tick = 0u64;
    // Where the last message started (of the decompressed stream, for gzip).
    let mut last_start = 0u64;
    let key = crate::model::MailSource::Mbox(shown.clone()).key();
    let cap = ing.limits.never_read_over();
    // The messages of this file once over the cap, by where they start.
    let unread = unread_places(ing, &key)?;
    let result = super::mbox::for_each::<_, SourceError>(reader, cap, |item| {
        n += 1;
        let offset = match &item {
            Item::Message(m) => m.offset,
            Item::TooLarge(t) => t.offset,
        };
        last_start = offset;
        if !gz {
            count.store(offset, std::sync::atomic::Ordering::Relaxed);
        }
        let at = format!("byte {offset}");
        match item {
            Item::TooLarge(t) => {
                let what = format!("message {n}, ");
                note_oversize(ing, &key, (&at, None), &what, t.len, cap as u64)?
            }
            Item::Message(m) => {
                let source = format!("mbox {shown} message {n} (at {at})");
                ing.ingest_stored(m.raw, &source)?;
                if unread.contains(&at) {
                    // Read at last (the limit was raised).
                    ing.store.clear_unreadable(&key, &at)?;
                }
            }
        }
        if n.is_multiple_of(CHECKPOINT) {
            ing.store.flush()?;
        }
        let c = count.load(std::sync::atomic::Ordering::Relaxed);
        if c - last_tick > (1 << 20) {
            pb.set_position(c);
            last_tick = c;
        }
        Ok(())
    });
    pb.finish_and_clear();
    // What was read is kept, whatever stopped the reading.
    ing.checkpoint()?;
    mbox_outcome(result, &shown, gz, n, last_start)
}

/// What the reading of an mbox came to, after `n` messages up to byte `at`
/// (of the decompressed data for gzip).
fn mbox_outcome(
    result: Result<u64, SourceError>,
    shown: &str,
    gz: bool,
    n: usize,
    at: u64,
) -> Result<(), SourceError> {
    let err = |why: String| SourceError::Read {
        path: shown.to_string(),
        why,
    };
    match result {
        // A file with no `From ` line is no mbox: nothing in it was read.
        Ok(skipped) if n == 0 && skipped > 0 => Err(SourceError::NotASource {
            path: shown.to_string(),
            why: format!(
                "no `From ` line in its {skipped} bytes{}: not an mbox, nothing read \
                 (one message is read with `ingest --stdin`)",
                if gz { " (decompressed)" } else { "" }
            ),
        }),
        Ok(skipped) => {
            if skipped > 0 {
                tracing::warn!(
                    source = %shown,
                    "the {skipped} bytes before its first `From ` line are no message: not read"
                );
            }
            Ok(())
        }
        Err(SourceError::Read { why, .. }) => Err(err(format!(
            "read error after {n} message(s), near byte {at}{}: {why} (the messages before it are kept)",
            if gz { " of the decompressed data" } else { "" }
        ))),
        Err(e) => Err(e),
    }
}

/// Messages between two durability checkpoints of a long file.
const CHECKPOINT: usize = 10_000;

/// Ingest a maildir: `new/` first, each message then moved to `cur/` marked
/// seen (as a mail reader does); `cur/` messages are read too (and deduplicated).
/// It must be one already: a directory given by mistake (a maildir's
/// parent, a folder of .eml files) is refused, not made a maildir and read
/// as empty.
pub fn ingest_maildir(ing: &mut Ingestor, dir: &Path) -> Result<(), SourceError> {
    if !dir.join("new").is_dir() && !dir.join("cur").is_dir() {
        return Err(SourceError::NotASource {
            path: dir.display().to_string(),
            why: "not a maildir: no new/ or cur/ in it".into(),
        });
    }
    ingest_maildir_with(ing, dir, true)
}

/// Like `ingest_maildir`; with `include_cur` false only `new/` is read (a
/// follower that has read `cur/` once need not read it again).
pub fn ingest_maildir_with(
    ing: &mut Ingestor,
    dir: &Path,
    include_cur: bool,
) -> Result<(), SourceError> {
    let shown = dir.display().to_string();
    for sub in ["new", "cur", "tmp"] {
        std::fs::create_dir_all(dir.join(sub)).map_err(|e| SourceError::Read {
            path: shown.clone(),
            why: e.to_string(),
        })?;
    }
    let subdirs: &[&str] = if include_cur {
        &["cur", "new"]
    } else {
        &["new"]
    };
    // Read from cur/ and not made durable yet: flushed once at the end (a
    // follower's round that reads nothing writes nothing).
    let mut unflushed = false;
    let key = crate::model::MailSource::Maildir(shown.clone()).key();
    let cap = ing.limits.never_read_over() as u64;
    // The files of this maildir once over the cap (a record to clear when
    // one is read at last): looked up here once, not per file.
    let unread = unread_places(ing, &key)?;
    for sub in subdirs {
        for (path, size) in maildir_files(&dir.join(sub)).map_err(|e| SourceError::Read {
            path: format!("{shown}/{sub}"),
            why: e.to_string(),
        })? {
            if !take_one(ing, &key, &unread, (&path, size), cap)? {
                continue;
            }
            if *sub == "new" {
                // Durable before the file is marked read. What is in cur/
                // stays there: a crash before the flush below only means
                // it is read again.
                ing.checkpoint()?;
                mark_read(dir, &path);
            } else {
                unflushed = true;
            }
        }
    }
    if unflushed {
        ing.checkpoint()?;
    }
    Ok(())
}

/// Read one maildir file (or, over the size cap, record it unread).
/// `false`: it cannot be read now, and stays where it is for the next
/// reading.
fn take_one(
    ing: &mut Ingestor,
    key: &str,
    unread: &std::collections::HashSet<String>,
    (path, size): (&Path, u64),
    cap: u64,
) -> Result<bool, SourceError> {
    let unique = unique_name(path);
    if size > cap {
        let file = path.display().to_string();
        note_oversize(ing, key, (&unique, Some(file)), "", size, cap)?;
        return Ok(true);
    }
    let raw = match std::fs::read(path) {
        Ok(raw) => raw,
        Err(e) => {
            tracing::warn!(message = %path.display(), error = %e, "unreadable maildir entry left for later");
            return Ok(false);
        }
    };
    ing.ingest(&raw, &format!("maildir {}", path.display()))?;
    if unread.contains(&unique) {
        // Read at last (the limit was raised): no longer unreadable.
        ing.store.clear_unreadable(key, &unique)?;
    }
    Ok(true)
}

/// A maildir file's unique part: its name without the `:2,` flags, which
/// change when it is marked read.
fn unique_name(path: &Path) -> String {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    name.split_once(":2,")
        .map_or(&*name, |(u, _)| u)
        .to_string()
}

/// Where in the source keyed `key` its messages once too big to read are
/// (a maildir's file, an mbox's byte): a record to clear when one is read
/// at last. Looked up once a reading, not per message.
fn unread_places(
    ing: &Ingestor,
    key: &str,
) -> Result<std::collections::HashSet<String>, SourceError> {
    Ok(ing
        .store
        .unreadable(Some(key))?
        .into_iter()
        .map(|u| u.commit)
        .collect())
}

/// A message over the cap is not read: recorded as unreadable (`quarantine
/// list`) where it is (`at`, and the file `object` if any), `what` first in
/// the reason; it stays in its mailbox, and is read by the first reading
/// after the limit is raised.
fn note_oversize(
    ing: &mut Ingestor,
    key: &str,
    (at, object): (&str, Option<String>),
    what: &str,
    size: u64,
    cap: u64,
) -> Result<(), SourceError> {
    let reason = format!(
        "{what}{size} bytes, over {cap} ({} × inbound.max_message_bytes): not read",
        super::OVERSIZE_FACTOR
    );
    let u = crate::model::Unreadable::first(key, at, object, reason);
    ing.store.record_unreadable(&u)?;
    ing.stats.unreadable += 1;
    tracing::warn!(source = %key, at, size, cap, "message over the size cap: recorded, not read");
    Ok(())
}

/// The message files of a maildir's `new/` or `cur/`, in name order (for
/// the names delivery agents give, the order they arrived in). Dot files
/// are left alone, as the maildir convention says. Only the names are
/// listed: a follower that reads `new/` every few seconds never touches
/// the thousands of read messages in `cur/`.
/// Each with its size, from the one `stat` that tells a file.
fn maildir_files(sub: &Path) -> std::io::Result<Vec<(PathBuf, u64)>> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(sub)? {
        let e = e?;
        if e.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        // Followed through a symbolic link, as a mail reader would.
        match std::fs::metadata(e.path()) {
            Ok(m) if m.is_file() => files.push((e.path(), m.len())),
            _ => {}
        }
    }
    files.sort_unstable();
    Ok(files)
}

/// Recorded (or found irrelevant): marked read by its move from `new/` to
/// `cur/`, with the seen flag, as a mail reader does.
fn mark_read(dir: &Path, path: &Path) {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let target = dir.join("cur").join(if name.contains(":2,") {
        name.to_string()
    } else {
        format!("{name}:2,S")
    });
    if let Err(e) = std::fs::rename(path, &target) {
        tracing::warn!(from = %path.display(), error = %e, "could not move to cur/");
    }
}

/// One message on standard input.
/// Over 4 × `inbound.max_message_bytes` it is refused unread, as the other
/// sources refuse such a message: a mail agent piping it in keeps it, and
/// memory stays bounded by the limit.
pub fn ingest_stdin(ing: &mut Ingestor) -> Result<(), SourceError> {
    let cap = ing.limits.never_read_over();
    let raw = read_capped(std::io::stdin().lock(), cap).map_err(|why| SourceError::Read {
        path: "standard input".into(),
        why,
    })?;
    ing.ingest(&raw, "standard input")?;
    ing.checkpoint()?;
    Ok(())
}

/// All of `r`, if it is no more than `cap` bytes.
fn read_capped(r: impl Read, cap: usize) -> Result<Vec<u8>, String> {
    use crate::fsutil::Bounded;
    crate::fsutil::read_capped(r, cap as u64, 0).map_err(|e| match e {
        Bounded::Io(e) => e.to_string(),
        _ => format!(
            "the message is over {cap} bytes ({} × inbound.max_message_bytes): not read \
             (raise the limit to read it)",
            super::OVERSIZE_FACTOR
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn mail(n: usize) -> String {
        format!("From: a@x.org\r\nSubject: s{n}\r\nMessage-ID: <m{n}@x.org>\r\n\r\nHi.\r\n")
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    /// A follower reads `new/` only, in the order of the names, and marks
    /// each message read; `cur/` is read when asked (at start). Dot files
    /// and directories are no messages and stay; a symbolic link to a
    /// message is read.
    #[test]
    fn a_maildir_follower_reads_new_only_and_cur_when_asked() {
        let tmp = tempfile::tempdir().unwrap();
        let md = tmp.path().join("md");
        for sub in ["new", "cur", "tmp"] {
            std::fs::create_dir_all(md.join(sub)).unwrap();
        }
        std::fs::write(md.join("new/2.b.host"), mail(2)).unwrap();
        std::fs::write(md.join("new/1.a.host"), mail(1)).unwrap();
        std::fs::write(md.join("new/.3.c.host"), mail(3)).unwrap();
        std::fs::create_dir(md.join("new/4.folder")).unwrap();
        std::fs::write(tmp.path().join("5.mail"), mail(5)).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("5.mail"), md.join("new/5.e.host")).unwrap();
        std::fs::write(md.join("cur/0.z.host:2,S"), mail(0)).unwrap();
        assert_eq!(
            maildir_files(&md.join("new"))
                .unwrap()
                .into_iter()
                .map(|(p, _)| p)
                .collect::<Vec<_>>(),
            ["1.a.host", "2.b.host", "5.e.host"].map(|n| md.join("new").join(n))
        );

        let store = Store::open(&tmp.path().join("state")).unwrap();
        let config = crate::config::Config::load(None).unwrap();
        let mut ing = Ingestor::new(&config, &store).unwrap();
        ingest_maildir_with(&mut ing, &md, false).unwrap();
        assert_eq!(ing.stats.read, 3, "new/ only: {:?}", ing.stats);
        assert_eq!(names(&md.join("new")), [".3.c.host", "4.folder"]);
        assert_eq!(
            names(&md.join("cur")),
            [
                "0.z.host:2,S",
                "1.a.host:2,S",
                "2.b.host:2,S",
                "5.e.host:2,S"
            ]
        );
        ingest_maildir_with(&mut ing, &md, true).unwrap();
        assert_eq!(ing.stats.read, 7, "cur/ too: {:?}", ing.stats);
        // A follower's round that finds nothing new writes nothing (a
        // flush syncs to disk: not every few seconds of an idle daemon).
        let generation = || {
            std::fs::read_to_string(tmp.path().join("state").join(crate::store::GENERATION_FILE))
                .unwrap()
        };
        let before = generation();
        ingest_maildir_with(&mut ing, &md, false).unwrap();
        assert_eq!(generation(), before, "an idle round flushed");
    }

    /// A file over 4 × the message limit is never read into memory: it is
    /// recorded as unreadable and marked read, stays in the maildir, and is
    /// read (its record cleared) by a reading of `cur/` once the limit is
    /// raised.
    #[test]
    fn a_maildir_file_over_the_cap_is_recorded_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let md = tmp.path().join("md");
        std::fs::create_dir_all(md.join("new")).unwrap();
        let big = format!("{}{}", mail(1), "x".repeat(5000));
        std::fs::write(md.join("new/1.a.host"), &big).unwrap();
        let store = Store::open(&tmp.path().join("state")).unwrap();
        let config = crate::config::Config::load(None).unwrap();
        let mut ing = Ingestor::new(&config, &store).unwrap();
        ing.limits.max_bytes = 1000;
        ingest_maildir_with(&mut ing, &md, false).unwrap();
        assert_eq!((ing.stats.read, ing.stats.unreadable), (0, 1));
        assert_eq!(names(&md.join("cur")), ["1.a.host:2,S"]);
        let key = crate::model::MailSource::Maildir(md.display().to_string()).key();
        let u = store.unreadable(Some(&key)).unwrap();
        assert_eq!(u.len(), 1, "{u:?}");
        assert_eq!(u[0].commit, "1.a.host");
        assert!(
            u[0].reason
                .starts_with(&format!("{} bytes, over 4000", big.len())),
            "{u:?}"
        );

        ing.limits.max_bytes = 2000;
        ingest_maildir_with(&mut ing, &md, true).unwrap();
        assert_eq!(ing.stats.read, 1);
        assert!(store.unreadable(Some(&key)).unwrap().is_empty());
    }

    #[test]
    fn standard_input_is_read_up_to_the_cap() {
        for (len, cap, read) in [
            (0, 0, true),
            (10, 10, true),
            (11, 10, false),
            (5, 1000, true),
        ] {
            let got = read_capped(&vec![b'x'; len][..], cap);
            assert_eq!(
                got.as_ref().map(Vec::len).ok(),
                read.then_some(len),
                "{len} {cap}"
            );
            if !read {
                assert!(got
                    .unwrap_err()
                    .starts_with(&format!("the message is over {cap} bytes")));
            }
        }
    }

    /// A message of an mbox over 4 × the message limit is never held whole:
    /// the messages around it are read, it is recorded as unreadable (where
    /// it starts, its size), the reading says so (exit 4), and a reading
    /// once the limit is raised reads it and clears the record.
    #[test]
    fn an_mbox_message_over_the_cap_is_recorded_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let big = format!("{}{}\n", mail(2), "x".repeat(5000));
        let data = [mail(1), big.clone(), mail(3)]
            .iter()
            .map(|m| {
                format!(
                    "From a@x.org Mon Jan  1 00:00:00 2024\n{}",
                    m.replace('\r', "")
                )
            })
            .collect::<String>();
        let f = tmp.path().join("list.mbox");
        std::fs::write(&f, &data).unwrap();
        let store = Store::open(&tmp.path().join("state")).unwrap();
        let config = crate::config::Config::load(None).unwrap();
        let mut ing = Ingestor::new(&config, &store).unwrap();
        ing.limits.max_bytes = 1000;
        ingest_mbox(&mut ing, &f).unwrap();
        assert_eq!((ing.stats.read, ing.stats.unreadable), (2, 1));
        let key = crate::model::MailSource::Mbox(f.display().to_string()).key();
        let u = store.unreadable(Some(&key)).unwrap();
        assert_eq!(u.len(), 1, "{u:?}");
        let at = data.find("Subject: s2").unwrap() - "From: a@x.org\n".len() - 38;
        assert_eq!(u[0].commit, format!("byte {at}"));
        let size = 38 + big.replace('\r', "").len();
        assert!(
            u[0].reason
                .starts_with(&format!("message 2, {size} bytes, over 4000")),
            "{u:?}"
        );

        ing.limits.max_bytes = 2000;
        ingest_mbox(&mut ing, &f).unwrap();
        assert_eq!((ing.stats.read, ing.stats.unreadable), (5, 1));
        assert!(store.unreadable(Some(&key)).unwrap().is_empty());
    }
}
