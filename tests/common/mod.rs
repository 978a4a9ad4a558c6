//! Shared by the integration tests that use the real mail server started by
//! `.ci/mailserver/start-mail.sh` (Postfix SMTP on 127.0.0.1:2525, Dovecot IMAP
//! on 1143, users bot/alice/bob/list@example.test, password "secret").
#![allow(dead_code)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use perfbot::config::Secret;
use perfbot::mail::imap::{connect, ImapAccount, ImapSession};
use perfbot::model::url::ServerUrl;

pub const SMTP_PORT: u16 = 2525;
pub const SUBMISSION_PORT: u16 = 1587;
pub const SUBMISSIONS_PORT: u16 = 1465;
pub const IMAP_PORT: u16 = 1143;
pub const IMAPS_PORT: u16 = 1993;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn mail_dir() -> PathBuf {
    PathBuf::from(std::env::var("MAIL_TEST_DIR").unwrap_or_else(|_| "/tmp/mailtest".into()))
}

pub fn ca_file() -> PathBuf {
    mail_dir().join("ca.pem")
}

/// A config's `[inbound]` and `[imap]` sections: replies read over IMAP as
/// `bot@example.test` from the test server, trusting its CA; `extra` adds
/// `[imap]` keys.
pub fn imap_sections(extra: &str) -> String {
    format!(
        "[inbound]\nsource = \"imap\"\n\n[imap]\nurl = \"imap://127.0.0.1:{IMAP_PORT}\"\n\
         user = \"bot@example.test\"\nca_file = {:?}\n{extra}\n",
        ca_file()
    )
}

/// The mail server must be up: these tests never pass by skipping. Set
/// `PERFBOT_SKIP_MAIL_TESTS=1` to leave them out on purpose (they then say so).
pub fn mail_server() -> bool {
    if std::env::var("PERFBOT_SKIP_MAIL_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("mail server tests skipped (PERFBOT_SKIP_MAIL_TESTS=1)");
        return false;
    }
    for port in [SMTP_PORT, IMAP_PORT] {
        if TcpStream::connect(("127.0.0.1", port)).is_err() {
            panic!(
                "no mail server on 127.0.0.1:{port}: start it with `sudo .ci/mailserver/start-mail.sh` \
                 (or set PERFBOT_SKIP_MAIL_TESTS=1)"
            );
        }
    }
    true
}

/// A token unique to this test run and call, for Message-IDs and subjects.
pub fn token() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{:x}{:x}{:x}",
        t,
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// A 40-hex "commit" that makes a new case (and Message-ID) every time. Its
/// first ten digits differ too (a hash of a unique token), so that a reply's
/// subject from another test never names this test's commit.
pub fn fresh_sha() -> String {
    use sha2::Digest;
    sha2::Sha256::digest(token().as_bytes())
        .iter()
        .take(20)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Seed 002's input, as a new case, addressed to test users.
pub fn input(dir: &Path, to: &str, cc: &[&str]) -> PathBuf {
    let text =
        std::fs::read_to_string(root().join("examples/seed002-xfs-fio-falloc-2022.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["commit"]["sha"] = fresh_sha().into();
    let (name, email) = match to.split_once('<') {
        Some((n, e)) => (n.trim().to_string(), e.trim_end_matches('>').to_string()),
        None => ("Test Author".to_string(), to.to_string()),
    };
    v["commit"]["author"] = serde_json::json!({ "name": name, "email": email });
    v["recipients"] = serde_json::json!({ "cc": cc });
    let p = dir.join(format!("input-{}.json", token()));
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    p
}

/// A config for the test: state in `dir`, SMTP through `smtp_url`, plus `extra`
/// TOML appended to the `[outbound]` section.
pub fn config(dir: &Path, smtp_url: &str, outbound_extra: &str, smtp_extra: &str) -> PathBuf {
    let text = format!(
        r#"
[bot]
state_dir = {state:?}
name = "kernel test robot"
email = "bot@example.test"
message_id_domain = "{domain}"

[report]
templates_dir = {templates:?}
cc = []
cc_self = false

[outbound]
transport = "smtp"
outbox_dir = {outbox:?}
stop_file = {stop:?}
retry_base_secs = 0
{outbound_extra}

[smtp]
url = {smtp_url:?}
ca_file = {ca:?}
timeout_secs = 10
{smtp_extra}
"#,
        domain = id_domain(dir),
        state = dir.join("state"),
        templates = root().join("templates"),
        outbox = dir.join("state/outbox"),
        stop = dir.join("STOP"),
        ca = ca_file(),
    );
    let p = dir.join("config.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// The Message-ID domain of a test's config: unique to its directory, so that
/// one IMAP search finds every mail of that test.
pub fn id_domain(dir: &Path) -> String {
    let name: String = dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    format!("{}.perfbot.test", name.to_ascii_lowercase())
}

/// How many mails in `user`'s INBOX have a Message-ID containing `part`.
pub fn count_matching(user: &str, part: &str) -> usize {
    let mut s = imap(user);
    let n = s
        .uid_search(format!("HEADER Message-ID \"{part}\""))
        .unwrap()
        .len();
    let _ = s.logout();
    n
}

pub fn perfbot(config: &Path, args: &[&str]) -> Output {
    perfbot_env(config, args, &[])
}

pub fn perfbot_env(config: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perfbot"));
    c.arg("--config").arg(config).args(args).current_dir(root());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// `perfbot` with `input` on standard input (none: an empty one).
pub fn perfbot_stdin(config: &Path, args: &[&str], input: Option<&[u8]>) -> Output {
    use std::io::Write;
    let mut c = Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(config)
        .args(args)
        .current_dir(root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = c.stdin.take().unwrap();
    if let Some(i) = input {
        stdin.write_all(i).unwrap();
    }
    drop(stdin);
    c.wait_with_output().unwrap()
}

/// `perfbot cases show ID --json`.
pub fn show(config: &Path, id: &str) -> serde_json::Value {
    let o = perfbot(config, &["cases", "show", id, "--json"]);
    ok(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The Message-IDs of a shown case's thread (`cases show --json`), in its
/// order.
pub fn thread_ids(v: &serde_json::Value) -> Vec<&str> {
    v["thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["message_id"].as_str().unwrap())
        .collect()
}

/// Messages (CRLF or LF) as one mbox, each after a `From ` line.
pub fn mbox(messages: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in messages {
        out.extend_from_slice(b"From mboxrd@z Thu Jan  1 00:00:00 1970\n");
        out.extend_from_slice(m.replace("\r\n", "\n").as_bytes());
        out.extend_from_slice(b"\n");
    }
    out
}

/// A shown case's first event that moved it to `state` (`cases show
/// --json`, or the dashboard's `/api/cases/ID`).
pub fn event_to(v: &serde_json::Value, state: &str) -> serde_json::Value {
    v["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["new"] == state)
        .unwrap_or_else(|| panic!("no event to {state}: {}", v["events"]))
        .clone()
}

/// A TCP port nobody listens on (for the dashboard, or a server that is down).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `perfbot run` child, killed if a test fails before stopping it.
pub struct Daemon(pub Option<std::process::Child>);

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn ok(o: &Output) -> String {
    assert!(o.status.success(), "perfbot failed: {}", stderr(o));
    stderr(o)
}

pub fn imap(user: &str) -> ImapSession {
    let acct = ImapAccount {
        url: ServerUrl::imap(&format!("imap://127.0.0.1:{IMAP_PORT}")).unwrap(),
        user: format!("{user}@example.test"),
        password: Secret::new("secret".into()),
        ca: perfbot::mail::ca::read(&ca_file()).unwrap(),
        timeout: Duration::from_secs(10),
    };
    let mut s = connect(&acct).unwrap();
    s.select("INBOX").unwrap();
    s
}

/// Every copy of the message with this Message-ID in `user`'s INBOX.
pub fn copies(user: &str, message_id: &str) -> Vec<Vec<u8>> {
    let mut s = imap(user);
    let uids = s
        .uid_search(format!("HEADER Message-ID \"{message_id}\""))
        .unwrap();
    let mut out = Vec::new();
    for u in uids {
        for f in s.uid_fetch(u.to_string(), "BODY.PEEK[]").unwrap().iter() {
            out.push(f.body().unwrap().to_vec());
        }
    }
    let _ = s.logout();
    out
}

/// Wait (with a deadline, not a sleep) until `user` has `n` copies.
pub fn wait_copies(user: &str, message_id: &str, n: usize) -> Vec<Vec<u8>> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let c = copies(user, message_id);
        if c.len() >= n || Instant::now() > deadline {
            return c;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The value of header `name` in a raw message (first occurrence, unfolded).
pub fn header(raw: &[u8], name: &str) -> Option<String> {
    let text = String::from_utf8_lossy(raw);
    let head = text.split("\r\n\r\n").next().unwrap_or("");
    let unfolded = head.replace("\r\n ", " ").replace("\r\n\t", " ");
    unfolded.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
    })
}

/// `perfbot outbox list --json`.
pub fn outbox(config: &Path) -> Vec<serde_json::Value> {
    let o = perfbot(config, &["outbox", "list", "--json"]);
    ok(&o);
    serde_json::from_slice::<serde_json::Value>(&o.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// Send `raw` to the bot's mailbox over SMTP (Postfix on 2525), as a
/// maintainer's mail client would.
pub fn smtp_to_bot(raw: &str) {
    let cfg = perfbot::config::Config::parse(
        &format!(
            "[bot]\nemail = \"alice@example.test\"\n[smtp]\nurl = \"smtp://127.0.0.1:{SMTP_PORT}\"\nca_file = {:?}\n",
            ca_file()
        ),
        "test",
        root(),
    )
    .unwrap();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let s = perfbot::mail::smtp::SmtpSender::from_config(&cfg).unwrap();
        let to = [perfbot::model::Address::parse("bot@example.test").unwrap()];
        s.send(&to, raw.as_bytes()).await.unwrap();
    });
}

/// `f` until it gives a value, every 100 ms; the test fails after `secs`,
/// saying what it waited for.
pub fn wait_for<T>(what: &str, secs: u64, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `wait_for`, printing the daemon's log when it times out.
pub fn wait_for_or<T>(log: &Path, what: &str, secs: u64, f: impl FnMut() -> Option<T>) -> T {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| wait_for(what, secs, f)));
    match r {
        Ok(v) => v,
        Err(e) => {
            eprintln!(
                "--- daemon log\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
            std::panic::resume_unwind(e)
        }
    }
}

/// Up to 20 s for a starting daemon's dashboard on `port` to answer
/// `/healthz`; what the test checks next says whether it did.
pub fn wait_for_dashboard(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while http_get(port, "/healthz").is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A plain HTTP GET on loopback (the dashboard); the body of a 200 answer
/// (another answer is printed, for the failing test's output).
pub fn http_get(port: u16, path: &str) -> Option<String> {
    perfbot::app::web::get_local(port, path)
        .map_err(|answer| {
            if let Some(answer) = answer {
                eprintln!("GET {path}: {answer}");
            }
        })
        .ok()
}
