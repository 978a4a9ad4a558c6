//! IMAP access with the `imap` crate over our own rustls stream, so that a
//! private CA can be trusted. Blocking by nature: callers run it on a thread of
//! its own (or `spawn_blocking`).
//!
//! `imap://host:port` uses STARTTLS (plain text allowed only on a loopback host
//! whose server offers no STARTTLS), `?tls=required|none` overrides, and
//! `imaps://` is TLS from the first byte.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use crate::config::Secret;
use crate::model::url::{ServerUrl, TlsMode};

#[derive(Debug, thiserror::Error)]
pub enum ImapError {
    #[error("imap url {0}")]
    Url(String),
    #[error("connecting to {addr}: {source}")]
    Connect {
        addr: String,
        source: std::io::Error,
    },
    #[error("TLS with {addr}: {why}")]
    Tls { addr: String, why: String },
    #[error("login as {user} at {addr} failed: {why}")]
    Login {
        user: String,
        addr: String,
        why: String,
    },
    #[error("imap: {0}")]
    Protocol(#[from] imap::Error),
    /// The `imap` crate panicked on what the server sent (it has
    /// `unreachable!()`s for answers it does not expect).
    #[error("imap: the server's answer broke the IMAP library: {0}")]
    Library(String),
}

/// Where to log in.
#[derive(Debug, Clone)]
pub struct ImapAccount {
    pub url: ServerUrl,
    pub user: String,
    pub password: Secret,
    /// A CA to trust besides the public roots (`imap.ca_file`, read and
    /// checked with the config by [`crate::mail::ca::read`]).
    pub ca: Vec<CertificateDer<'static>>,
    pub timeout: Duration,
}

/// A plain or TLS connection; one type so that sessions and IDLE work on
/// both. It counts what the server sends in answer to each command: past
/// [`MAX_ANSWER_BYTES`] the read fails, so a server flooding one answer
/// (untagged lines without end) cannot grow perfbot's memory without bound.
#[derive(Debug)]
pub struct ImapStream {
    transport: Transport,
    /// Bytes read since perfbot last wrote (its last command).
    answered: u64,
}

#[derive(Debug)]
enum Transport {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

/// The most one answer may be: 256 MiB (a fetch is sized to stay well
/// under it; see `fetch_uids`).
pub const MAX_ANSWER_BYTES: u64 = 256 << 20;

impl ImapStream {
    fn plain(tcp: TcpStream) -> ImapStream {
        ImapStream {
            transport: Transport::Plain(tcp),
            answered: 0,
        }
    }
    fn tls(s: StreamOwned<ClientConnection, TcpStream>) -> ImapStream {
        ImapStream {
            transport: Transport::Tls(Box::new(s)),
            answered: 0,
        }
    }
}

impl Read for ImapStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = match &mut self.transport {
            Transport::Plain(s) => s.read(buf),
            Transport::Tls(s) => s.read(buf),
        }?;
        self.answered += n as u64;
        if self.answered > MAX_ANSWER_BYTES {
            return Err(std::io::Error::other(format!(
                "the server sent over {} MiB in answer to one command",
                MAX_ANSWER_BYTES >> 20
            )));
        }
        Ok(n)
    }
}

impl Write for ImapStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.answered = 0;
        match &mut self.transport {
            Transport::Plain(s) => s.write(buf),
            Transport::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.transport {
            Transport::Plain(s) => s.flush(),
            Transport::Tls(s) => s.flush(),
        }
    }
}

impl ImapStream {
    fn tcp(&self) -> &TcpStream {
        match &self.transport {
            Transport::Plain(s) => s,
            Transport::Tls(s) => s.get_ref(),
        }
    }
}

impl imap::extensions::idle::SetReadTimeout for ImapStream {
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> imap::Result<()> {
        self.tcp()
            .set_read_timeout(timeout)
            .map_err(imap::Error::Io)
    }
}

pub type ImapSession = imap::Session<ImapStream>;

fn tls_config(ca: &[CertificateDer<'static>]) -> Result<Arc<ClientConfig>, ImapError> {
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    // Checked when read: none is refused here.
    roots.add_parsable_certificates(ca.iter().cloned());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ImapError::Tls {
            addr: String::new(),
            why: e.to_string(),
        })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(cfg))
}

fn wrap(tcp: TcpStream, acct: &ImapAccount) -> Result<ImapStream, ImapError> {
    let addr = acct.url.addr();
    let cfg = tls_config(&acct.ca)?;
    let name = ServerName::try_from(acct.url.host.clone()).map_err(|e| ImapError::Tls {
        addr: addr.clone(),
        why: e.to_string(),
    })?;
    let conn = ClientConnection::new(cfg, name).map_err(|e| ImapError::Tls {
        addr: addr.clone(),
        why: e.to_string(),
    })?;
    let mut s = StreamOwned::new(conn, tcp);
    // Finish the handshake now, so that a bad certificate is reported as such.
    while s.conn.is_handshaking() {
        s.conn
            .complete_io(&mut s.sock)
            .map_err(|e| ImapError::Tls {
                addr: addr.clone(),
                why: e.to_string(),
            })?;
    }
    Ok(ImapStream::tls(s))
}

/// Connect, secure the connection as the URL asks, log in.
pub fn connect(acct: &ImapAccount) -> Result<ImapSession, ImapError> {
    connect_with_socket(acct).map(|(s, _)| s)
}

/// Whether `acct` can read `mailbox`: connect, log in, EXAMINE it (read
/// only), log out.
pub fn can_read(acct: &ImapAccount, mailbox: &str) -> Result<(), ImapError> {
    let mut s = connect(acct)?;
    guarded(|| s.examine(mailbox))?;
    let _ = s.logout();
    Ok(())
}

/// A second handle on a session's TCP socket. The `imap` crate keeps its
/// stream to itself, and its IDLE clears the read timeout and blocks in a
/// read: this handle is how another thread ends that read (`stop`) and how
/// the timeout is put back afterwards.
#[derive(Debug)]
pub struct SocketHandle(TcpStream);

impl SocketHandle {
    /// End the connection: a read blocked on it returns at once.
    pub fn stop(&self) {
        let _ = self.0.shutdown(std::net::Shutdown::Both);
    }

    pub fn set_read_timeout(&self, d: Duration) {
        let _ = self.0.set_read_timeout(Some(d));
    }
}

/// Connect to the first of `addrs` that takes the connection, as other
/// clients do: a name such as `localhost` may give `::1` first to a server
/// that listens on 127.0.0.1 only. The last refusal is the error.
fn connect_any(addrs: &[SocketAddr], timeout: Duration) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::other("the name gave no address");
    for a in addrs {
        match TcpStream::connect_timeout(a, timeout) {
            Ok(tcp) => return Ok(tcp),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// [`connect`], with a [`SocketHandle`] on the session's socket.
pub fn connect_with_socket(acct: &ImapAccount) -> Result<(ImapSession, SocketHandle), ImapError> {
    let addr = acct.url.addr();
    let cerr = |source| ImapError::Connect {
        addr: addr.clone(),
        source,
    };
    let addrs: Vec<SocketAddr> = addr.to_socket_addrs().map_err(cerr)?.collect();
    let tcp = connect_any(&addrs, acct.timeout).map_err(cerr)?;
    tcp.set_read_timeout(Some(acct.timeout)).map_err(cerr)?;
    tcp.set_write_timeout(Some(acct.timeout)).map_err(cerr)?;
    let socket = SocketHandle(tcp.try_clone().map_err(cerr)?);
    let stream = match acct.url.tls {
        TlsMode::Implicit => wrap(tcp, acct)?,
        TlsMode::None => ImapStream::plain(tcp),
        TlsMode::StartTls | TlsMode::Opportunistic => {
            let mut tcp = tcp;
            if starttls(&mut tcp).map_err(cerr)? {
                let tls = wrap(tcp, acct)?;
                // The greeting was read before STARTTLS; none follows it.
                return Ok((login(imap::Client::new(tls), acct)?, socket));
            }
            if acct.url.tls == TlsMode::StartTls {
                return Err(ImapError::Tls {
                    addr,
                    why: "the server does not offer STARTTLS".into(),
                });
            }
            return Ok((
                login(imap::Client::new(ImapStream::plain(tcp)), acct)?,
                socket,
            ));
        }
    };
    let mut c = imap::Client::new(stream);
    c.read_greeting()?;
    Ok((login(c, acct)?, socket))
}

/// One CRLF-terminated line, read a byte at a time so that nothing past it is
/// consumed (the TLS handshake follows on the same socket).
fn read_line(tcp: &mut TcpStream) -> std::io::Result<String> {
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while line.len() < 8192 {
        if tcp.read(&mut b)? == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        line.push(b[0]);
        if line.ends_with(b"\r\n") {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&line).into_owned())
}

/// Read the greeting, ask for capabilities, and start TLS when offered.
/// `Ok(false)`: the server offers no STARTTLS (the greeting has been read).
fn starttls(tcp: &mut TcpStream) -> std::io::Result<bool> {
    let greeting = read_line(tcp)?;
    if !greeting.starts_with("* OK") {
        return Err(std::io::Error::other(format!(
            "unexpected greeting {:?}",
            greeting.trim_end()
        )));
    }
    tcp.write_all(b"p0 CAPABILITY\r\n")?;
    let mut offered = false;
    loop {
        let l = read_line(tcp)?;
        if l.starts_with("* CAPABILITY") {
            offered = l
                .split_whitespace()
                .any(|w| w.eq_ignore_ascii_case("STARTTLS"));
        } else if l.starts_with("p0 ") {
            break;
        }
    }
    if !offered {
        return Ok(false);
    }
    tcp.write_all(b"p1 STARTTLS\r\n")?;
    loop {
        let l = read_line(tcp)?;
        if l.starts_with("p1 OK") {
            return Ok(true);
        }
        if l.starts_with("p1 ") {
            return Err(std::io::Error::other(format!(
                "STARTTLS refused: {}",
                l.trim_end()
            )));
        }
    }
}

fn login(c: imap::Client<ImapStream>, acct: &ImapAccount) -> Result<ImapSession, ImapError> {
    c.login(&acct.user, acct.password.expose())
        .map_err(|(e, _)| ImapError::Login {
            user: acct.user.clone(),
            addr: acct.url.addr(),
            why: e.to_string(),
        })
}

/// One exchange with the server through the `imap` crate, which panics on
/// some answers it does not expect (`unreachable!()` for an untagged `* NO`
/// inside a SELECT's answer, or for an IDLE answered without `+`): such a
/// panic becomes [`ImapError::Library`], so that the caller reconnects
/// instead of losing its thread.
pub fn guarded<T>(exchange: impl FnOnce() -> imap::Result<T>) -> Result<T, ImapError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(exchange)) {
        Ok(r) => r.map_err(ImapError::Protocol),
        Err(p) => Err(ImapError::Library(
            p.downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into()),
        )),
    }
}

/// One IDLE of about `round`, ended early by news from the server or by
/// `stop` (the socket is closed then: the session is over).
///
/// A watcher thread does both ends: it closes the socket on `stop`, and past
/// the deadline it makes reads time out at once, so that the server's next
/// line ends the IDLE. (The crate's own timeout counts silence, and servers'
/// keep-alive lines, Dovecot's `* OK Still here`, restart it.) Afterwards the
/// socket gets `timeout` back: the crate leaves it with none, and DONE, sent
/// when the IDLE handle is dropped, needs one like every later command.
pub fn idle(
    s: &mut ImapSession,
    socket: &SocketHandle,
    round: Duration,
    timeout: Duration,
    stop: &AtomicBool,
) -> Result<(), ImapError> {
    let deadline = Instant::now() + round;
    let (done, ended) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let watcher = scope.spawn(move || {
            let mut nudged = false;
            while let Err(RecvTimeoutError::Timeout) =
                ended.recv_timeout(Duration::from_millis(100))
            {
                if stop.load(Ordering::Relaxed) {
                    socket.stop();
                    break;
                }
                if !nudged && Instant::now() >= deadline {
                    socket.set_read_timeout(Duration::from_millis(200));
                    nudged = true;
                }
            }
        });
        let mut handle = s.idle();
        handle.timeout(round);
        handle.keepalive(false);
        // A server that answers IDLE with neither `+` nor NO/BAD makes the
        // crate panic: `guarded` makes that an error.
        let r = guarded(|| handle.wait_while(|_| false));
        drop(done);
        let _ = watcher.join();
        socket.set_read_timeout(timeout);
        drop(handle);
        r.map(|_| ())
    })
}

/// One message fetched by UID.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub uid: u32,
    pub raw: Vec<u8>,
}

/// Fetch the messages of a UID set, keeping those `keep` accepts, in UID order.
fn fetch_set(
    s: &mut ImapSession,
    set: &str,
    keep: impl Fn(u32) -> bool,
) -> Result<Vec<Fetched>, ImapError> {
    let fetches = guarded(|| s.uid_fetch(set, "(UID BODY.PEEK[])"))?;
    let mut out: Vec<Fetched> = fetches
        .iter()
        .filter_map(|f| {
            Some(Fetched {
                uid: f.uid?,
                raw: f.body()?.to_vec(),
            })
        })
        .filter(|f| keep(f.uid))
        .collect();
    out.sort_by_key(|f| f.uid);
    Ok(out)
}

/// The UIDs greater than `after` the mailbox holds, in order (what the
/// server says exists: the cursor walks these, never guessed ranges).
pub fn uids_after(s: &mut ImapSession, after: u32) -> Result<Vec<u32>, ImapError> {
    let mut uids: Vec<u32> =
        guarded(|| s.uid_search(format!("UID {}:*", after.saturating_add(1))))?
            .into_iter()
            .filter(|u| *u > after) // `n:*` always matches the last message
            .collect();
    uids.sort_unstable();
    Ok(uids)
}

/// The sizes (RFC822.SIZE) of the messages of `uids`, by UID; a message the
/// answer leaves out is not among them.
pub fn sizes(s: &mut ImapSession, uids: &[u32]) -> Result<Vec<(u32, u64)>, ImapError> {
    if uids.is_empty() {
        return Ok(Vec::new());
    }
    let set: Vec<String> = uids.iter().map(u32::to_string).collect();
    let fetches = guarded(|| s.uid_fetch(set.join(","), "(UID RFC822.SIZE)"))?;
    let mut out: Vec<(u32, u64)> = fetches
        .iter()
        .filter_map(|f| Some((f.uid?, u64::from(f.size?))))
        .filter(|(u, _)| uids.binary_search(u).is_ok())
        .collect();
    out.sort_unstable();
    Ok(out)
}

/// Whether the mailbox still holds `uid`.
pub fn holds(s: &mut ImapSession, uid: u32) -> Result<bool, ImapError> {
    Ok(guarded(|| s.uid_search(format!("UID {uid}")))?.contains(&uid))
}

/// The messages of `uids`, in UID order; a UID the answer leaves out, or
/// gives without its body, is not among them.
pub fn fetch_uids(s: &mut ImapSession, uids: &[u32]) -> Result<Vec<Fetched>, ImapError> {
    if uids.is_empty() {
        return Ok(Vec::new());
    }
    let set: Vec<String> = uids.iter().map(u32::to_string).collect();
    fetch_set(s, &set.join(","), |u| uids.binary_search(&u).is_ok())
}

/// Which of `ids` are in `mailbox` (by their Message-ID header), read-only.
pub fn find_message_ids(
    acct: &ImapAccount,
    mailbox: &str,
    ids: &[crate::model::MessageId],
) -> Result<Vec<crate::model::MessageId>, ImapError> {
    let mut s = connect(acct)?;
    guarded(|| s.examine(mailbox))?;
    let mut found = Vec::new();
    for id in ids {
        // Message-IDs perfbot makes are atoms: no quoting trouble.
        let hits = guarded(|| s.uid_search(format!("HEADER Message-ID \"{}\"", id.bracketed())))?;
        if !hits.is_empty() {
            found.push(id.clone());
        }
    }
    let _ = s.logout();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first address that takes the connection is used; with none, the
    /// last refusal is the error.
    #[test]
    fn every_address_of_a_name_is_tried() {
        let live = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let refused = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let t = Duration::from_secs(5);
        let tcp = connect_any(&[refused, live.local_addr().unwrap()], t).unwrap();
        assert_eq!(tcp.peer_addr().unwrap(), live.local_addr().unwrap());
        let e = connect_any(&[refused], t).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
        assert!(connect_any(&[], t)
            .unwrap_err()
            .to_string()
            .contains("no address"));
    }
}
