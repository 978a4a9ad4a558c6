//! Reading replies from the real IMAP server (Dovecot on loopback): replies sent
//! over SMTP are picked up once; a server restart in the middle of a fetch and a
//! forced UIDVALIDITY change lose and double nothing; IDLE wakes ingestion
//! quickly. Needs `.ci/mailserver/start-mail.sh`; the tests here share the bot's
//! mailbox and restart the server, so they take turns.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::*;

static TURN: Mutex<()> = Mutex::new(());

fn imap_config(dir: &Path, extra: &str) -> PathBuf {
    let text = format!(
        r#"
[bot]
state_dir = {state:?}
email = "perfbot@ci.example"
message_id_domain = "{domain}"

[report]
templates_dir = {templates:?}
cc = []

[outbound]
outbox_dir = {outbox:?}

{imap}"#,
        state = dir.join("state"),
        domain = id_domain(dir),
        templates = root().join("templates"),
        outbox = dir.join("state/outbox"),
        imap = imap_sections(&format!("mailbox = \"INBOX\"\ntimeout_secs = 10\n{extra}")),
    );
    let p = dir.join("config.toml");
    std::fs::write(&p, text).unwrap();
    p
}

const PW: &[(&str, &str)] = &[("PERFBOT_IMAP_PASSWORD", "secret")];

/// Report a fresh case (file outbox); its Message-ID.
fn new_case(cfg: &Path, dir: &Path) -> (String, String) {
    let input = input(dir, "alice@example.test", &[]);
    ok(&perfbot(cfg, &["report", input.to_str().unwrap()]));
    let o = perfbot(cfg, &["cases", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let last = v.as_array().unwrap().last().unwrap();
    (
        last["id"].as_str().unwrap().into(),
        last["message_id"].as_str().unwrap().into(),
    )
}

fn reply_to(parent: &str, id: &str, text: &str) -> String {
    format!(
        "From: Dave Chinner <david@fromorbit.example>\r\nTo: bot@example.test\r\nSubject: Re: report\r\nMessage-ID: <{id}>\r\nIn-Reply-To: <{parent}>\r\nReferences: <{parent}>\r\nDate: Tue, 5 Jun 2018 17:31:14 +1000\r\n\r\n> quoted regression\r\n{text}\r\n"
    )
}

fn doveadm(args: &[&str], stdin: Option<&[u8]>) {
    let conf = mail_dir().join("dovecot.conf");
    let mut c = Command::new("doveadm")
        .arg("-c")
        .arg(&conf)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("doveadm (Dovecot) must be installed");
    if let Some(data) = stdin {
        use std::io::Write;
        c.stdin.take().unwrap().write_all(data).unwrap();
    }
    drop(c.stdin.take());
    let o = c.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "doveadm {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `kill -9` every Dovecot IMAP session process.
fn kill_imap_sessions() {
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let exe = std::fs::read_link(e.path().join("exe")).unwrap_or_default();
        if exe.to_string_lossy().ends_with("/dovecot/imap") {
            let pid = e.file_name().to_string_lossy().into_owned();
            Command::new("kill").args(["-9", &pid]).status().unwrap();
        }
    }
}

/// Stop Dovecot, with its live IMAP sessions, and start it again (Postfix
/// keeps running). The sessions die first, at once, as in a crash: the
/// master's own shutdown can take longer than a fast fetch, which would
/// then end before the restart hit it.
fn restart_dovecot() {
    kill_imap_sessions();
    let dir = mail_dir();
    let pid: i32 = std::fs::read_to_string(dir.join("run/master.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    Command::new("kill").arg(pid.to_string()).status().unwrap();
    let gone = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < gone {
        std::thread::sleep(Duration::from_millis(20));
    }
    // IMAP sessions outlive their master: end those opened meanwhile too.
    kill_imap_sessions();
    let st = Command::new("dovecot")
        .arg("-c")
        .arg(dir.join("dovecot.conf"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    let up = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", IMAP_PORT)).is_err() && Instant::now() < up {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The stats of the last "read …" line of an ingest run.
fn stat(line: &str, key: &str) -> usize {
    line.split(", ")
        .find_map(|p| p.trim().strip_prefix(&format!("{key} ")))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

fn last_stats(stderr: &str) -> String {
    stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("read "))
        .unwrap_or_else(|| panic!("no stats in {stderr}"))
        .to_string()
}

/// A test's turn at the shared mailbox: a state directory of its own (the
/// config with `extra` in `[imap]`) holding one reported case, caught up
/// with what earlier tests left in the mailbox. `None`: no mail server.
struct Turn {
    _turn: std::sync::MutexGuard<'static, ()>,
    _tmp: tempfile::TempDir,
    cfg: PathBuf,
    case: String,
    mid: String,
}

fn caught_up(extra: &str) -> Option<Turn> {
    if !mail_server() {
        return None;
    }
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let cfg = imap_config(tmp.path(), extra);
    let (case, mid) = new_case(&cfg, tmp.path());
    ok(&perfbot_env(&cfg, &["ingest"], PW));
    Some(Turn {
        _turn: turn,
        _tmp: tmp,
        cfg,
        case,
        mid,
    })
}

/// `ingest` again and again (delivery to the mailbox takes a few ms) until
/// `done` holds (given the run's output), or 15 s have passed; the last
/// run's output.
fn ingest_until(cfg: &Path, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let e = ok(&perfbot_env(cfg, &["ingest"], PW));
        if done(&e) || Instant::now() > deadline {
            return e;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn thread_ids(cfg: &Path, case: &str) -> Vec<String> {
    let o = perfbot(cfg, &["cases", "show", case, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["thread"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["sender"] == "person")
        .map(|t| t["message_id"].as_str().unwrap().to_string())
        .collect()
}

/// `perfbot ingest --follow` with its stderr lines arriving on a channel.
/// A running `perfbot ingest --follow`, killed if the test fails before
/// stopping it (else it would outlive the test, holding its output open).
struct Follower(Child);

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn follow(cfg: &Path) -> (Follower, Receiver<(Instant, String)>) {
    follow_logging(cfg, "perfbot=info")
}

fn follow_logging(cfg: &Path, log: &str) -> (Follower, Receiver<(Instant, String)>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(cfg)
        .args(["ingest", "--follow"])
        .env("PERFBOT_IMAP_PASSWORD", "secret")
        .env("RUST_LOG", log)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(err).lines() {
            let Ok(l) = l else { break };
            if tx.send((Instant::now(), l)).is_err() {
                break;
            }
        }
    });
    (Follower(child), rx)
}

fn stop(mut f: Follower) {
    Command::new("kill")
        .args(["-TERM", &f.0.id().to_string()])
        .status()
        .unwrap();
    let st = f.0.wait().unwrap();
    assert!(st.success(), "the follower ends cleanly on SIGTERM: {st:?}");
}

/// A case, the mailbox caught up with, and a follower that has connected:
/// the case, its report's Message-ID, the follower, its output and its
/// `connected` line.
fn following(
    cfg: &Path,
    dir: &Path,
) -> (
    String,
    String,
    Follower,
    Receiver<(Instant, String)>,
    String,
) {
    let (case, mid) = new_case(cfg, dir);
    ok(&perfbot_env(cfg, &["ingest"], PW));
    let (child, rx) = follow(cfg);
    let (_, connected) = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    (case, mid, child, rx, connected)
}

/// How long after `since` the follower said it recorded a new message, if it
/// did within 30 s.
fn new_message_after(rx: &Receiver<(Instant, String)>, since: Instant) -> Option<Duration> {
    while since.elapsed() < Duration::from_secs(30) {
        if let Ok((at, l)) = rx.recv_timeout(Duration::from_millis(100)) {
            if l.starts_with("read ") && stat(&l, "new") >= 1 {
                return Some(at - since);
            }
        }
    }
    None
}

#[test]
fn replies_over_smtp_are_read_once_and_uidvalidity_change_rescans() {
    if !mail_server() {
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let cfg = imap_config(tmp.path(), "");
    let (case, mid) = new_case(&cfg, tmp.path());
    let t = token();
    let ids = [format!("a{t}@dastard"), format!("b{t}@dastard")];
    smtp_to_bot(&reply_to(&mid, &ids[0], "This is not a regression."));
    smtp_to_bot(&reply_to(&ids[0], &ids[1], "And a second thought."));
    ingest_until(&cfg, |_| thread_ids(&cfg, &case).len() >= 2);
    let mut got = thread_ids(&cfg, &case);
    got.sort();
    assert_eq!(got, ids);

    // The cursor: nothing read again.
    let e = ok(&perfbot_env(&cfg, &["ingest"], PW));
    assert_eq!(stat(&last_stats(&e), "read"), 0, "{e}");

    // A new UIDVALIDITY: everything is read again, nothing recorded twice.
    let validity = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        % 1_000_000_000) as u32
        + 7;
    doveadm(
        &[
            "mailbox",
            "update",
            "--uid-validity",
            &validity.to_string(),
            "-u",
            "bot@example.test",
            "INBOX",
        ],
        None,
    );
    let e = ok(&perfbot_env(&cfg, &["ingest"], PW));
    assert!(e.contains("UIDVALIDITY changed"), "{e}");
    let s = last_stats(&e);
    assert!(stat(&s, "read") >= 2, "{s}");
    assert_eq!(stat(&s, "new"), 0, "{s}");
    assert_eq!(thread_ids(&cfg, &case).len(), 2);
}

/// A reply to a reply, read by one run of `ingest` before the reply it
/// answers (a moderation queue held that back): saved before the cursor
/// moved past it, it joins the case's thread when the next run reads its
/// parent.
#[test]
fn a_reply_read_before_its_parent_waits_for_it_across_runs() {
    let Some(turn) = caught_up("") else {
        return;
    };
    let (cfg, case, mid) = (&turn.cfg, &turn.case, &turn.mid);
    let t = token();
    let (a, b) = (format!("a{t}@dastard"), format!("b{t}@dastard"));
    let mut second = reply_to(&a, &b, "And a second thought.");
    second = second.replace("Subject: Re: report", "Subject: [PATCH] xfs: the fix");
    smtp_to_bot(&second);
    let e = ingest_until(cfg, |e| stat(&last_stats(e), "read") >= 1);
    assert_eq!(stat(&last_stats(&e), "unmatched"), 1, "{e}");
    assert!(thread_ids(cfg, case).is_empty());
    smtp_to_bot(&reply_to(mid, &a, "This is not a regression."));
    let e = ingest_until(cfg, |e| stat(&last_stats(e), "read") >= 1);
    let mut got = thread_ids(cfg, case);
    got.sort();
    assert_eq!(got, [a, b], "{e}");
    assert!(last_stats(&e).contains("read before their parent 1"), "{e}");
}

#[test]
fn server_restart_mid_fetch_loses_and_doubles_nothing() {
    let Some(turn) = caught_up("batch = 5\npoll_secs = 1") else {
        return;
    };
    let (cfg, case, mid) = (&turn.cfg, &turn.case, &turn.mid);
    let t = token();
    let n = 3000;
    let ids: Vec<String> = (0..n).map(|i| format!("m{i}.{t}@dastard")).collect();
    // Straight into the Maildir (as a local delivery agent would): fast.
    let new_dir = mail_dir().join("mail/example.test/bot/Maildir/new");
    for (i, id) in ids.iter().enumerate() {
        let f = new_dir.join(format!("{t}.{i}.perfbot-test"));
        std::fs::write(&f, reply_to(mid, id, "Looking into it.")).unwrap();
    }
    Command::new("chown")
        .args(["-R", "mail:mail"])
        .arg(&new_dir)
        .status()
        .unwrap();
    let (child, rx) = follow(cfg);
    // Restart the server once the follower is in the middle of the fetch:
    // a few batches of ours are recorded.
    let mut lines = Vec::new();
    let mut batches = 0;
    while batches < 20 {
        let (_, l) = rx.recv_timeout(Duration::from_secs(30)).unwrap();
        if l.contains("batch recorded") {
            batches += 1;
        }
        lines.push(l);
    }
    restart_dovecot();
    let deadline = Instant::now() + Duration::from_secs(120);
    let (mut new, mut reconnected) = (0, false);
    // Until every message is in and the follower has found the session gone
    // (it may find out only once the fetch is over, in IDLE).
    while (new < n || !reconnected) && Instant::now() < deadline {
        if let Ok((_, l)) = rx.recv_timeout(Duration::from_millis(200)) {
            if l.starts_with("read ") {
                new = stat(&l, "new");
            }
            reconnected |= l.contains("reconnecting");
            lines.push(l);
        }
    }
    stop(child);
    let log = lines.join("\n");
    assert!(
        log.contains("reconnecting"),
        "the restart hit a live session:\n{log}"
    );
    let mut got = thread_ids(cfg, case);
    assert_eq!(got.len(), n, "{log}");
    got.sort();
    got.dedup();
    assert_eq!(got.len(), n, "a message was recorded twice");
}

#[test]
fn idle_wakes_ingestion_within_seconds() {
    if !mail_server() {
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    // Polling alone would take two minutes.
    let cfg = imap_config(tmp.path(), "poll_secs = 120");
    let (case, mid, child, rx, l) = following(&cfg, tmp.path());
    assert!(l.contains("connected") && l.contains("idle=true"), "{l}");
    // Let it enter IDLE.
    std::thread::sleep(Duration::from_millis(1500));
    while rx.try_recv().is_ok() {}
    // Twice: after the first wake-up the follower polls and goes back to IDLE.
    let mut ids = Vec::new();
    for (n, text) in [(1, "I'll revert this patch."), (2, "Reverted now.")] {
        let id = format!("idle{n}.{}@dastard", token());
        smtp_to_bot(&reply_to(&mid, &id, text));
        ids.push(id);
        let woke = new_message_after(&rx, Instant::now())
            .unwrap_or_else(|| panic!("reply {n} was not ingested within 30 s"));
        eprintln!("IDLE: reply {n} ingested {woke:?} after SMTP accepted it");
        // Far below the 120 s poll interval: IDLE did it. (Timing is printed,
        // the bound is loose on purpose: the machine is shared.)
        assert!(woke < Duration::from_secs(10), "{woke:?}");
    }
    // A stop request ends the IDLE at once, not when its 120 s are up.
    let asked = Instant::now();
    stop(child);
    assert!(
        asked.elapsed() < Duration::from_secs(30),
        "the follower took {:?} to stop",
        asked.elapsed()
    );
    let mut got = thread_ids(&cfg, &case);
    got.sort();
    ids.sort();
    assert_eq!(got, ids);
}

#[test]
fn without_idle_the_follower_polls() {
    if !mail_server() {
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let cfg = imap_config(tmp.path(), "idle = false\npoll_secs = 1");
    let (case, mid, child, rx, l) = following(&cfg, tmp.path());
    assert!(l.contains("connected") && l.contains("idle=false"), "{l}");
    let id = format!("poll.{}@dastard", token());
    smtp_to_bot(&reply_to(&mid, &id, "Looking into it."));
    let read = new_message_after(&rx, Instant::now());
    stop(child);
    assert!(
        read.is_some(),
        "the poll did not read the reply within 30 s"
    );
    assert_eq!(thread_ids(&cfg, &case), [id]);
}

#[test]
fn keep_alive_lines_do_not_keep_an_idle_open() {
    if !mail_server() {
        return;
    }
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    // Dovecot sends this user `* OK Still here` every second (start-mail.sh),
    // and each line restarts the silence timeout of a 2 s IDLE.
    let cfg = imap_config(tmp.path(), "poll_secs = 2");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("bot@example.test", "chatty@example.test");
    std::fs::write(&cfg, text).unwrap();
    let (child, rx) = follow_logging(&cfg, "perfbot=debug");
    let t0 = Instant::now();
    let mut polls = 0;
    let mut idle = false;
    while t0.elapsed() < Duration::from_secs(12) {
        if let Ok((_, l)) = rx.recv_timeout(Duration::from_millis(100)) {
            idle |= l.contains("connected") && l.contains("idle=true");
            polls += usize::from(l.contains("polled"));
        }
    }
    stop(child);
    assert!(idle, "the follower did not use IDLE");
    // One poll at the start, then one after each IDLE of about 2-3 s.
    assert!(
        polls >= 3,
        "{polls} polls in 12 s: the IDLE outlived poll_secs"
    );
}

/// A proxy in front of the real IMAP server that hides STARTTLS from the
/// capabilities it lists, as a server without TLS would. Its port.
fn proxy_without_starttls() -> u16 {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let server = std::net::TcpStream::connect(("127.0.0.1", IMAP_PORT)).unwrap();
            let (mut to_server, mut from_client) =
                (server.try_clone().unwrap(), client.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from_client, &mut to_server);
                let _ = to_server.shutdown(std::net::Shutdown::Write);
            });
            std::thread::spawn(move || {
                let mut from_server = BufReader::new(server);
                let mut to_client = client;
                let mut line = Vec::new();
                while from_server
                    .read_until(b'\n', &mut line)
                    .is_ok_and(|n| n > 0)
                {
                    let text = String::from_utf8_lossy(&line);
                    let shown = if text.contains("CAPABILITY") {
                        text.replace(" STARTTLS", "").into_bytes()
                    } else {
                        std::mem::take(&mut line)
                    };
                    if to_client.write_all(&shown).is_err() {
                        break;
                    }
                    line.clear();
                }
                let _ = to_client.shutdown(std::net::Shutdown::Both);
            });
        }
    });
    port
}

/// A server on this machine that offers no STARTTLS: `imap://` logs in in
/// plain text (loopback only), `?tls=required` refuses, saying why.
#[test]
fn a_loopback_server_without_starttls_is_read_in_plain_text_unless_tls_is_required() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let port = proxy_without_starttls();
    let cfg = imap_config(tmp.path(), "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let at = |url: &str| {
        let text = text.replace(&format!("imap://127.0.0.1:{IMAP_PORT}"), url);
        std::fs::write(&cfg, text).unwrap();
        let o = perfbot_env(&cfg, &["check"], PW);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let reading = out
            .lines()
            .find(|l| l.contains("reading: "))
            .unwrap_or_default()
            .to_string();
        (o.status.code(), reading)
    };
    let (code, reading) = at(&format!("imap://127.0.0.1:{port}"));
    assert_eq!(code, Some(0), "{reading}");
    assert!(
        reading.starts_with("ok") && reading.contains("logged in"),
        "{reading}"
    );
    let (code, reading) = at(&format!("imap://127.0.0.1:{port}?tls=required"));
    assert_eq!(code, Some(1), "{reading}");
    assert!(reading.starts_with("FAIL"), "{reading}");
    assert!(reading.contains("does not offer STARTTLS"), "{reading}");
}
