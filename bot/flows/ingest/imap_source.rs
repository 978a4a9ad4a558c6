//! The IMAP inbox: read from a cursor (mailbox, UIDVALIDITY, last UID) kept in
//! sled, advanced only after the messages up to it are recorded; a changed
//! UIDVALIDITY means a full rescan (deduplicated by Message-ID). Waits with IDLE
//! when the server has it, else polls; reconnects with backoff.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::ingestor::Ingestor;
use crate::config::{Config, ConfigError};
use crate::mail::imap::{
    connect_with_socket, fetch_uids, guarded, holds, idle, sizes, uids_after, ImapAccount,
    ImapError, ImapSession, SocketHandle, MAX_ANSWER_BYTES,
};
use crate::store::cursor::Cursor;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ImapSourceError {
    #[error(transparent)]
    Imap(#[from] ImapError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl From<imap::Error> for ImapSourceError {
    fn from(e: imap::Error) -> Self {
        ImapSourceError::Imap(ImapError::Protocol(e))
    }
}

/// The configured IMAP account.
pub fn account(config: &Config) -> Result<ImapAccount, ConfigError> {
    let s = &config.file.imap;
    let invalid = |message: String| ConfigError::Invalid {
        path: config.source.clone(),
        message,
    };
    let url = crate::model::url::ServerUrl::imap(&s.url)
        .map_err(|e| invalid(format!("imap.url: {e}")))?;
    let ca = if s.ca_file.as_os_str().is_empty() {
        Vec::new()
    } else {
        let p = config.resolve(&s.ca_file);
        crate::mail::ca::read(&p)
            .map_err(|e| invalid(format!("imap.ca_file {}: {e}", p.display())))?
    };
    // Said before a connection, rather than as the server's "authentication
    // failed" that reads like a wrong password.
    if s.user.is_empty() {
        return Err(invalid("imap.user: needed to log in".into()));
    }
    let password = config.imap_password()?;
    if password.is_empty() {
        return Err(invalid(
            "imap.user is set but there is no password: set PERFBOT_IMAP_PASSWORD or imap.password_file".into(),
        ));
    }
    Ok(ImapAccount {
        url,
        user: s.user.clone(),
        password,
        ca,
        timeout: Duration::from_secs(s.timeout_secs.max(1)),
    })
}

/// The longest IDLE: RFC 2177 asks clients to end one within 29 minutes.
pub const IDLE_ROUND: Duration = Duration::from_secs(29 * 60);

/// One mailbox being followed.
pub struct ImapInbox {
    pub account: ImapAccount,
    pub mailbox: String,
    pub batch: usize,
    /// Messages bigger than this are not fetched (recorded instead): four
    /// times `inbound.max_message_bytes`, as for archives, and well under
    /// what one answer may be.
    pub max_fetch: u64,
    /// The session, with a handle on its socket (to end an IDLE from the
    /// stop watcher).
    conn: Option<(ImapSession, SocketHandle)>,
    /// `imap.idle`: wait with IDLE when the server offers it.
    use_idle: bool,
    idle_capable: bool,
}

impl ImapInbox {
    pub fn new(config: &Config) -> Result<ImapInbox, ConfigError> {
        Ok(ImapInbox {
            account: account(config)?,
            mailbox: config.file.imap.mailbox.clone(),
            batch: config.file.imap.batch.max(1),
            max_fetch: ((super::OVERSIZE_FACTOR * config.file.inbound.max_message_bytes) as u64)
                .min(MAX_ANSWER_BYTES / 2),
            conn: None,
            use_idle: config.file.imap.idle,
            idle_capable: false,
        })
    }

    /// The cursor's key: which account and mailbox it is of.
    pub fn cursor_key(&self) -> String {
        let account = format!(
            "{}@{}/{}",
            self.account.user,
            self.account.url.addr(),
            self.mailbox
        );
        crate::model::MailSource::Imap(account).key()
    }

    fn connection(&mut self) -> Result<&mut (ImapSession, SocketHandle), ImapSourceError> {
        if self.conn.is_none() {
            let (mut s, socket) = connect_with_socket(&self.account)?;
            self.idle_capable = self.use_idle && guarded(|| s.capabilities())?.has_str("IDLE");
            tracing::info!(mailbox = %self.cursor_key(), idle = self.idle_capable, "connected");
            self.conn = Some((s, socket));
        }
        Ok(self.conn.as_mut().expect("just set"))
    }

    /// Drop the connection (after an error, or to reconnect).
    pub fn disconnect(&mut self) {
        if let Some((mut s, _)) = self.conn.take() {
            let _ = s.logout();
        }
    }

    /// Fetch and ingest everything past the cursor. Returns how many messages
    /// were read.
    pub fn poll(&mut self, ing: &mut Ingestor) -> Result<usize, ImapSourceError> {
        let key = self.cursor_key();
        let mailbox = self.mailbox.clone();
        let batch = self.batch;
        let max_fetch = self.max_fetch;
        let store = ing.store;
        let (s, _) = self.connection()?;
        let mb = guarded(|| s.select(&mailbox))?;
        let validity = mb.uid_validity.unwrap_or(0);
        let mut cursor = match store.cursor(&key)? {
            Some(c) if c.uid_validity == validity => c,
            Some(c) => {
                tracing::warn!(mailbox = %key, old = c.uid_validity, new = validity,
                    "UIDVALIDITY changed: reading the whole mailbox again (known messages are skipped)");
                Cursor {
                    uid_validity: validity,
                    last_uid: 0,
                }
            }
            None => Cursor {
                uid_validity: validity,
                last_uid: 0,
            },
        };
        if cursor.last_uid == 0 {
            // A new mailbox, or a new UIDVALIDITY: old UIDs mean nothing.
            for u in store.unreadable(Some(&key))? {
                store.clear_unreadable(&key, &u.commit)?;
            }
        }
        let mut read = retry_missing(s, ing, &key, max_fetch)?;
        // What the server says exists past the cursor (UID SEARCH), in
        // batches: a server claiming a UIDNEXT of 4e9 costs nothing, and
        // the cursor moves only over UIDs the server named.
        let uids = uids_after(s, cursor.last_uid)?;
        for chunk in uids.chunks(batch.max(1)) {
            for group in fetch_groups(s, ing, &key, chunk, max_fetch)? {
                let got = fetch_uids(s, &group)?;
                for f in &got {
                    ing.ingest(&f.raw, &format!("{key} uid {}", f.uid))?;
                    read += 1;
                }
                // Named by the search, not given by the fetch (no answer, or
                // no body): recorded, retried every poll, never passed over
                // in silence.
                let missing: Vec<u32> = group
                    .iter()
                    .copied()
                    .filter(|u| got.binary_search_by_key(u, |f| f.uid).is_err())
                    .collect();
                for &uid in &missing {
                    note_missing(ing, &key, uid, NO_BODY.into())?;
                }
                if !missing.is_empty() {
                    tracing::warn!(mailbox = %key, missing = missing.len(), first = missing[0],
                        "the server answered UID FETCH without some messages' bodies: recorded, tried again next poll");
                }
            }
            // Recorded (each flushed), and the replies kept for a later
            // parent saved: only now may the cursor move past them.
            ing.save_early()?;
            cursor.last_uid = chunk.last().copied().unwrap_or(cursor.last_uid);
            store.set_cursor(&key, cursor)?;
            tracing::info!(mailbox = %key, last_uid = cursor.last_uid, read, "batch recorded");
        }
        // A fresh cursor is saved even for an empty mailbox; with it, the
        // replies kept from the messages retried.
        ing.save_early()?;
        store.set_cursor(&key, cursor)?;
        tracing::debug!(mailbox = %key, read, "polled");
        Ok(read)
    }

    /// Wait for news: IDLE for about `max` (at most [`IDLE_ROUND`]) when the
    /// server has it, else sleep `max` (in short steps, watching `stop`).
    ///
    /// Each IDLE ends the wait, and a poll follows: the `imap` crate drops
    /// what the server says in answer to DONE, so a `* EXISTS` sent there
    /// reaches perfbot only through that poll. (The 2 s IDLE rounds this
    /// replaced went back into IDLE after DONE and could miss such mail until
    /// `poll_secs` ran out.)
    pub fn wait(&mut self, max: Duration, stop: &AtomicBool) -> Result<(), ImapSourceError> {
        if self.idle_capable {
            let timeout = self.account.timeout;
            let (s, socket) = self.connection()?;
            // Mail that arrived during the poll is announced in the untagged
            // responses of its commands (`* 5 EXISTS` before a SEARCH's
            // result): IDLE would not tell of it again.
            let arrived = s.take_all_unsolicited().any(|r| {
                matches!(
                    r,
                    imap::types::UnsolicitedResponse::Exists(_)
                        | imap::types::UnsolicitedResponse::Recent(_)
                )
            });
            if arrived {
                return Ok(());
            }
            let round = max.clamp(Duration::from_secs(1), IDLE_ROUND);
            return match idle(s, socket, round, timeout, stop) {
                Ok(()) => Ok(()),
                // `stop` closed the socket: this session is over.
                Err(_) if stop.load(Ordering::Relaxed) => {
                    self.disconnect();
                    Ok(())
                }
                Err(e) => Err(e.into()),
            };
        }
        let deadline = Instant::now() + max;
        while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(())
    }

    /// Follow the mailbox until `stop`: poll, wait, repeat; on errors reconnect
    /// with backoff (1 s doubling to 60 s). `after_poll` runs after every poll
    /// (the daemon delivers follow-ups there).
    pub fn follow(
        &mut self,
        ing: &mut Ingestor,
        poll_every: Duration,
        stop: &AtomicBool,
        mut after_poll: impl FnMut(&mut Ingestor, usize),
    ) -> Result<(), ImapSourceError> {
        let mut backoff = Duration::from_secs(1);
        let mut failing = super::failing::Failing::new(&self.cursor_key());
        while !stop.load(Ordering::Relaxed) {
            let r = self
                .poll(ing)
                .inspect(|n| after_poll(ing, *n))
                .and_then(|_| self.wait(poll_every, stop));
            match r {
                Ok(()) => {
                    failing.ended();
                    backoff = Duration::from_secs(1);
                }
                // Not the server's doing: reconnecting mends nothing.
                Err(ImapSourceError::Store(e)) if e.is_broken() => {
                    self.disconnect();
                    return Err(e.into());
                }
                Err(e) => {
                    failing.again(&e.to_string(), Instant::now());
                    tracing::info!(mailbox = %self.cursor_key(), error = %e, retry_in = ?backoff, "reconnecting");
                    self.disconnect();
                    let until = Instant::now() + backoff;
                    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(60));
                }
            }
        }
        self.disconnect();
        Ok(())
    }
}

const NO_BODY: &str = "the server answered UID FETCH without the message's body";

/// The UIDs of `chunk` in groups whose messages add up to at most
/// `FETCH_BYTES` (by RFC822.SIZE); a message over `max_fetch` is recorded,
/// not fetched.
fn fetch_groups(
    s: &mut ImapSession,
    ing: &mut Ingestor,
    key: &str,
    chunk: &[u32],
    max_fetch: u64,
) -> Result<Vec<Vec<u32>>, ImapSourceError> {
    let known = sizes(s, chunk)?;
    let mut groups = Vec::new();
    let (mut group, mut bytes) = (Vec::new(), 0u64);
    for &uid in chunk {
        let size = known
            .binary_search_by_key(&uid, |k| k.0)
            .map_or(0, |i| known[i].1);
        if size > max_fetch {
            let why = format!(
                "{size} bytes, over {max_fetch} (4 × inbound.max_message_bytes): not fetched"
            );
            note_missing(ing, key, uid, why)?;
            continue;
        }
        if !group.is_empty() && bytes + size > FETCH_BYTES {
            groups.push(std::mem::take(&mut group));
            bytes = 0;
        }
        group.push(uid);
        bytes += size;
    }
    if !group.is_empty() {
        groups.push(group);
    }
    Ok(groups)
}

/// What one fetch asks for at most, by the messages' sizes.
const FETCH_BYTES: u64 = 64 << 20;

/// Record that the server did not give message `uid` of mailbox `key`.
fn note_missing(
    ing: &mut Ingestor,
    key: &str,
    uid: u32,
    reason: String,
) -> Result<(), ImapSourceError> {
    ing.store
        .record_unreadable(&crate::model::Unreadable::first(
            key,
            &format!("uid {uid}"),
            None,
            reason,
        ))?;
    ing.stats.unreadable += 1;
    Ok(())
}

/// Fetch the mailbox's messages the server did not give before: read now,
/// or gone (the server no longer has the UID), or recorded again.
fn retry_missing(
    s: &mut ImapSession,
    ing: &mut Ingestor,
    key: &str,
    max_fetch: u64,
) -> Result<usize, ImapSourceError> {
    let mut read = 0;
    for old in ing.store.unreadable(Some(key))? {
        let Some(uid) = old
            .commit
            .strip_prefix("uid ")
            .and_then(|u| u.parse::<u32>().ok())
        else {
            continue;
        };
        if fetch_groups(s, ing, key, &[uid], max_fetch)?.is_empty() {
            continue; // Still too big: recorded again.
        }
        match fetch_uids(s, &[uid])?.into_iter().next() {
            Some(f) => {
                ing.ingest(&f.raw, &format!("{key} uid {uid}"))?;
                ing.store.clear_unreadable(key, &old.commit)?;
                tracing::info!(mailbox = %key, uid, "a message the server did not give before was read");
                read += 1;
            }
            None if !holds(s, uid)? => ing.store.clear_unreadable(key, &old.commit)?,
            None => note_missing(ing, key, uid, NO_BODY.into())?,
        }
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::path::Path;

    /// A scripted server on loopback: it greets, answers CAPABILITY with
    /// IDLE, and answers every command with what `odd` gives for it (the
    /// tag, the command) or else a plain tagged OK.
    fn scripted_server(odd: fn(&str, &str) -> Option<String>) -> u16 {
        scripted_with(true, move |tag, cmd| {
            let verb = cmd.split(' ').next().unwrap_or("");
            odd(tag, verb)
        })
    }

    fn config(dir: &Path, port: u16) -> Config {
        let pw = dir.join("pw");
        std::fs::write(&pw, "secret").unwrap();
        let text = format!(
            "[inbound]\nsource = \"imap\"\n[imap]\nurl = \"imap://127.0.0.1:{port}?tls=none\"\nuser = \"bot\"\npassword_file = {pw:?}\ntimeout_secs = 5\n"
        );
        Config::parse(&text, "test", dir.to_path_buf()).unwrap()
    }

    #[test]
    fn a_server_that_breaks_the_idle_exchange_is_an_error_not_a_panic() {
        // IDLE answered with a tagged OK and no `+`: the crate's unreachable!().
        let port = scripted_server(|_, _| None);
        let tmp = tempfile::tempdir().unwrap();
        let config = config(tmp.path(), port);
        let mut inbox = ImapInbox::new(&config).unwrap();
        inbox.connection().unwrap();
        assert!(inbox.idle_capable);
        let stop = AtomicBool::new(false);
        let e = inbox
            .wait(Duration::from_secs(2), &stop)
            .expect_err("the odd answer was taken for an IDLE");
        assert!(e.to_string().contains("broke the IMAP library"), "{e}");
    }

    #[test]
    fn an_untagged_no_in_a_select_is_an_error_not_a_panic() {
        // Servers send `* NO [ALERT] …` warnings; inside a SELECT's answer
        // the crate takes them for the impossible.
        let port = scripted_server(|tag, verb| {
            (verb == "SELECT").then(|| {
                format!("* NO [ALERT] mailbox is over quota\r\n* 0 EXISTS\r\n{tag} OK [READ-WRITE] done\r\n")
            })
        });
        let tmp = tempfile::tempdir().unwrap();
        let config = config(tmp.path(), port);
        let store = crate::store::Store::open(&config.state_dir()).unwrap();
        let mut ing = Ingestor::new(&config, &store).unwrap();
        let mut inbox = ImapInbox::new(&config).unwrap();
        let e = inbox
            .poll(&mut ing)
            .expect_err("the SELECT was taken as read");
        assert!(e.to_string().contains("broke the IMAP library"), "{e}");
    }

    /// A scripted server whose answers see the whole command (after the
    /// tag) and may keep state; unknown commands get a tagged OK.
    fn scripted(answer: impl Fn(&str, &str) -> Option<String> + Send + 'static) -> u16 {
        scripted_with(false, answer)
    }

    /// The scripted server, offering IDLE or not.
    fn scripted_with(
        idle: bool,
        answer: impl Fn(&str, &str) -> Option<String> + Send + 'static,
    ) -> u16 {
        let caps = if idle { "IMAP4rev1 IDLE" } else { "IMAP4rev1" };
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            let mut w = s.try_clone().unwrap();
            w.write_all(format!("* OK [CAPABILITY {caps}] scripted\r\n").as_bytes())
                .unwrap();
            for line in BufReader::new(s).lines() {
                let Ok(line) = line else { break };
                let (tag, cmd) = line.split_once(' ').unwrap_or((&line, ""));
                let reply = answer(tag, cmd).unwrap_or_else(|| {
                    if cmd.starts_with("CAPABILITY") {
                        format!("* CAPABILITY {caps}\r\n{tag} OK done\r\n")
                    } else {
                        format!("{tag} OK done\r\n")
                    }
                });
                if w.write_all(reply.as_bytes()).is_err() {
                    break;
                }
            }
        });
        port
    }

    fn message(uid: u32) -> String {
        let m = format!(
            "From: a@example.org\r\nMessage-ID: <m{uid}@example.org>\r\nSubject: hello {uid}\r\n\r\nbody\r\n"
        );
        format!(
            "* {uid} FETCH (UID {uid} BODY[] {{{}}}\r\n{m})\r\n",
            m.len()
        )
    }

    /// A server that claims UIDNEXT 4e9 and answers one UID FETCH without a
    /// message's body: the cursor walks only the UIDs the server named (no
    /// 20 million empty ranges), the message without a body is recorded
    /// (not passed over in silence) and read on the next poll, when the
    /// server gives it.
    #[test]
    fn a_fetch_without_a_body_is_recorded_and_read_again() {
        let fetches = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = fetches.clone();
        let port = scripted(move |tag, cmd| {
            if cmd.starts_with("SELECT") {
                return Some(format!(
                    "* 3 EXISTS\r\n* OK [UIDVALIDITY 7] v\r\n* OK [UIDNEXT 4000000000] n\r\n{tag} OK [READ-WRITE] done\r\n"
                ));
            }
            if let Some(q) = cmd.strip_prefix("UID SEARCH UID ") {
                let hits = match q {
                    "1:*" => "1 2 3",
                    "2" => "2",
                    _ => "3",
                };
                return Some(format!("* SEARCH {hits}\r\n{tag} OK done\r\n"));
            }
            if let Some(set) = cmd.strip_prefix("UID FETCH ") {
                let set = set.split(' ').next().unwrap_or("");
                if cmd.contains("RFC822.SIZE") {
                    let sizes: String = set
                        .split(',')
                        .map(|u| format!("* {u} FETCH (UID {u} RFC822.SIZE 90)\r\n"))
                        .collect();
                    return Some(format!("{sizes}{tag} OK done\r\n"));
                }
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let body = match set {
                    "1,2,3" => format!("{}* 2 FETCH (UID 2)\r\n{}", message(1), message(3)),
                    "2" => message(2),
                    _ => String::new(),
                };
                return Some(format!("{body}{tag} OK done\r\n"));
            }
            None
        });
        let tmp = tempfile::tempdir().unwrap();
        let config = config(tmp.path(), port);
        let store = crate::store::Store::open(&config.state_dir()).unwrap();
        let mut ing = Ingestor::new(&config, &store).unwrap();
        let mut inbox = ImapInbox::new(&config).unwrap();
        assert_eq!(inbox.poll(&mut ing).unwrap(), 2);
        assert_eq!(ing.stats.unreadable, 1);
        let key = inbox.cursor_key();
        let missing = store.unreadable(Some(&key)).unwrap();
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].commit, "uid 2");
        assert!(missing[0].reason.contains("without the message's body"));
        assert_eq!(store.cursor(&key).unwrap().unwrap().last_uid, 3);
        // The next poll tries it again and reads it.
        assert_eq!(inbox.poll(&mut ing).unwrap(), 1);
        assert!(store.unreadable(Some(&key)).unwrap().is_empty());
        assert_eq!(fetches.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    /// A message the server says is bigger than perfbot fetches is
    /// recorded with its size, not fetched; and an answer that never ends
    /// (untagged lines without end) fails the poll with one clear line
    /// once it passes `MAX_ANSWER_BYTES`, instead of growing memory.
    #[test]
    fn huge_messages_and_endless_answers_are_bounded() {
        let port = scripted(move |tag, cmd| {
            if cmd.starts_with("SELECT") {
                return Some(format!(
                    "* 2 EXISTS\r\n* OK [UIDVALIDITY 7] v\r\n{tag} OK [READ-WRITE] done\r\n"
                ));
            }
            if cmd.starts_with("UID SEARCH UID 1:*") {
                return Some(format!("* SEARCH 1 2\r\n{tag} OK done\r\n"));
            }
            if cmd.contains("RFC822.SIZE") {
                return Some(format!(
                    "* 1 FETCH (UID 1 RFC822.SIZE 90)\r\n* 2 FETCH (UID 2 RFC822.SIZE 4000000000)\r\n{tag} OK done\r\n"
                ));
            }
            if cmd.starts_with("UID FETCH 1 ") {
                return Some(format!("{}{tag} OK done\r\n", message(1)));
            }
            None
        });
        let tmp = tempfile::tempdir().unwrap();
        let cfg = config(tmp.path(), port);
        let store = crate::store::Store::open(&cfg.state_dir()).unwrap();
        let mut ing = Ingestor::new(&cfg, &store).unwrap();
        let mut inbox = ImapInbox::new(&cfg).unwrap();
        assert_eq!(inbox.poll(&mut ing).unwrap(), 1);
        let missing = store.unreadable(Some(&inbox.cursor_key())).unwrap();
        assert_eq!(missing.len(), 1);
        assert!(
            missing[0].reason.contains("4000000000 bytes"),
            "{}",
            missing[0].reason
        );

        // A SELECT answered with untagged lines that never end.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            let mut w = s.try_clone().unwrap();
            w.write_all(b"* OK [CAPABILITY IMAP4rev1] flood\r\n")
                .unwrap();
            let mut r = BufReader::new(s);
            let mut line = String::new();
            while r.read_line(&mut line).is_ok() {
                let tag = line.split(' ').next().unwrap_or("").to_string();
                if line.contains("SELECT") {
                    let junk = format!("* OK {}\r\n", "x".repeat(4000));
                    while w.write_all(junk.as_bytes()).is_ok() {}
                    break;
                }
                let _ = w.write_all(format!("{tag} OK done\r\n").as_bytes());
                line.clear();
            }
        });
        let tmp = tempfile::tempdir().unwrap();
        let cfg = config(tmp.path(), port);
        let store = crate::store::Store::open(&cfg.state_dir()).unwrap();
        let mut ing = Ingestor::new(&cfg, &store).unwrap();
        let mut inbox = ImapInbox::new(&cfg).unwrap();
        let e = inbox
            .poll(&mut ing)
            .expect_err("an endless answer was read");
        assert!(e.to_string().contains("in answer to one command"), "{e}");
    }
}
