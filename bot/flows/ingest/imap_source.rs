//! The IMAP inbox: read from a cursor (mailbox, UIDVALIDITY, last UID) kept in
//! sled, advanced only after the messages up to it are recorded; a changed
//! UIDVALIDITY means a full rescan (deduplicated by Message-ID). Waits with IDLE
//! when the server has it, else polls; reconnects with backoff.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::ingestor::Ingestor;
use crate::config::{Config, ConfigError};
use crate::mail::imap::{
    connect_with_socket, fetch_after, fetch_range, guarded, idle, ImapAccount, ImapError,
    ImapSession, SocketHandle,
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
    let ca_pem = if s.ca_file.as_os_str().is_empty() {
        None
    } else {
        let p = config.resolve(&s.ca_file);
        Some(std::fs::read(&p).map_err(|e| invalid(format!("imap.ca_file {}: {e}", p.display())))?)
    };
    Ok(ImapAccount {
        url,
        user: s.user.clone(),
        password: config.imap_password()?,
        ca_pem,
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
            conn: None,
            use_idle: config.file.imap.idle,
            idle_capable: false,
        })
    }

    /// The cursor's key: which account and mailbox it is of.
    pub fn cursor_key(&self) -> String {
        format!(
            "imap://{}@{}/{}",
            self.account.user,
            self.account.url.addr(),
            self.mailbox
        )
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
        let mut read = 0;
        // With UIDNEXT known, walk UID ranges (no search result of the whole
        // rest of the mailbox per batch); then (or without UIDNEXT) search for
        // what arrived meanwhile: IDLE, which comes next, only tells of mail
        // that arrives after it starts.
        let mut uid_next = mb.uid_next;
        loop {
            let got = match uid_next {
                Some(next) => {
                    let from = cursor.last_uid.saturating_add(1);
                    if from >= next {
                        uid_next = None;
                        continue;
                    }
                    let to = from.saturating_add(batch as u32 - 1).min(next - 1);
                    let got = fetch_range(s, from, to)?;
                    if got.is_empty() {
                        // A gap of expunged UIDs: step over it.
                        cursor.last_uid = to;
                        continue;
                    }
                    got
                }
                None => fetch_after(s, cursor.last_uid, batch)?,
            };
            if got.is_empty() {
                break;
            }
            for f in &got {
                ing.ingest(&f.raw, &format!("{key} uid {}", f.uid))?;
                read += 1;
            }
            // Recorded (each flushed): only now may the cursor move past them.
            cursor.last_uid = got.last().map(|f| f.uid).unwrap_or(cursor.last_uid);
            store.set_cursor(&key, cursor)?;
            tracing::info!(mailbox = %key, last_uid = cursor.last_uid, read, "batch recorded");
        }
        // A fresh cursor is saved even for an empty mailbox.
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
    ) {
        let mut backoff = Duration::from_secs(1);
        while !stop.load(Ordering::Relaxed) {
            let r = self
                .poll(ing)
                .inspect(|n| after_poll(ing, *n))
                .and_then(|_| self.wait(poll_every, stop));
            match r {
                Ok(()) => backoff = Duration::from_secs(1),
                Err(e) => {
                    tracing::warn!(mailbox = %self.cursor_key(), error = %e, retry_in = ?backoff, "IMAP error; reconnecting");
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
    }
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
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            let mut w = s.try_clone().unwrap();
            w.write_all(b"* OK [CAPABILITY IMAP4rev1 IDLE] odd\r\n")
                .unwrap();
            for line in BufReader::new(s).lines() {
                let Ok(line) = line else { break };
                let (tag, cmd) = line.split_once(' ').unwrap_or((&line, ""));
                let verb = cmd.split(' ').next().unwrap_or("");
                let answer = odd(tag, verb).unwrap_or_else(|| match verb {
                    "CAPABILITY" => format!("* CAPABILITY IMAP4rev1 IDLE\r\n{tag} OK done\r\n"),
                    _ => format!("{tag} OK done\r\n"),
                });
                if w.write_all(answer.as_bytes()).is_err() {
                    break;
                }
            }
        });
        port
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
}
