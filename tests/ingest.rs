//! Reading threads from local sources (maildir, mbox, gzip mbox, stdin) with
//! the real binary and a real sled database: matching, idempotence, own and
//! robot mail, quarantine, limits, and the case timeline.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::{mbox, ok, perfbot, perfbot_stdin, root, show, stderr as err, thread_ids};

/// A file-outbox config in `dir`, with small limits where a test needs them.
fn setup(dir: &Path, inbound_extra: &str) -> PathBuf {
    let text = format!(
        r#"
[bot]
state_dir = {state:?}
email = "perfbot@ci.example"
message_id_domain = "perfbot.ci.example"

[report]
templates_dir = {templates:?}
cc = ["oe-lkp@lists.linux.dev"]

[outbound]
outbox_dir = {outbox:?}

[inbound]
maildir = {inbox:?}
{inbound_extra}
"#,
        state = dir.join("state"),
        templates = root().join("templates"),
        outbox = dir.join("state/outbox"),
        inbox = dir.join("inbox"),
    );
    let p = dir.join("config.toml");
    std::fs::write(&p, text).unwrap();
    p
}

struct Case {
    id: String,
    message_id: String,
    subject: String,
}

fn report(cfg: &Path) -> Case {
    ok(&perfbot(
        cfg,
        &["report", "examples/seed002-xfs-fio-falloc-2022.json"],
    ));
    let o = perfbot(cfg, &["cases", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &v[0];
    Case {
        id: c["id"].as_str().unwrap().into(),
        message_id: c["message_id"].as_str().unwrap().into(),
        subject: c["subject"].as_str().unwrap().into(),
    }
}

/// A reply: headers given, then a body that quotes the robot.
fn reply(headers: &str, own: &str) -> String {
    format!(
        "{headers}\r\nDate: Tue, 5 Jun 2018 17:31:14 +1000\r\n\r\n\
         On Tue, Jun 05, 2018 at 03:16:57PM +0800, kernel test robot wrote:\r\n\
         > FYI, we noticed a -19.6% regression of fio.write_iops\r\n\
         > regression regression regression\r\n\r\n{own}\r\n\r\nCheers,\r\n\r\nDave.\r\n"
    )
}

fn stats(stderr: &str) -> String {
    stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("read "))
        .unwrap_or("")
        .to_string()
}

#[test]
fn maildir_reply_matched_once_and_moved_to_cur() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    let new = tmp.path().join("inbox/new");
    std::fs::create_dir_all(&new).unwrap();
    std::fs::create_dir_all(tmp.path().join("inbox/cur")).unwrap();
    let r = reply(
        &format!(
            "From: Dave Chinner <david@fromorbit.com>\r\nSubject: Re: {}\r\nMessage-ID: <r1@dastard>\r\nIn-Reply-To: <{}>",
            c.subject, c.message_id
        ),
        "This is not a regression. The histogram moved.",
    );
    std::fs::write(new.join("1700000000.r1.host"), &r).unwrap();
    let e = ok(&perfbot(&cfg, &["ingest"]));
    assert!(
        stats(&e).starts_with("read 1, matched 1, new 1, duplicates 0"),
        "{e}"
    );
    assert!(std::fs::read_dir(&new).unwrap().next().is_none());
    let cur: Vec<_> = std::fs::read_dir(tmp.path().join("inbox/cur"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(cur, ["1700000000.r1.host:2,S"]);
    // Again: seen, nothing changes.
    let e = ok(&perfbot(&cfg, &["ingest"]));
    assert!(
        stats(&e).starts_with("read 1, matched 1, new 0, duplicates 1"),
        "{e}"
    );
    // The same message from an mbox (another source): still nothing new.
    let f = tmp.path().join("same.mbox");
    std::fs::write(&f, mbox(std::slice::from_ref(&r))).unwrap();
    let e = ok(&perfbot(&cfg, &["ingest", "--mbox", f.to_str().unwrap()]));
    assert!(stats(&e).contains("new 0, duplicates 1"), "{e}");

    let v = show(&cfg, &c.id);
    let thread = v["thread"].as_array().unwrap();
    let replies: Vec<_> = thread.iter().filter(|t| t["sender"] == "person").collect();
    assert_eq!(replies.len(), 1);
    // The replier's own words only: not the quoted robot, not the sign-off.
    assert_eq!(
        replies[0]["text"],
        "This is not a regression. The histogram moved."
    );
    assert_eq!(replies[0]["message_id"], "r1@dastard");
    let events = v["events"].as_array().unwrap();
    let msg_events: Vec<_> = events
        .iter()
        .filter(|e| e["cause"]["kind"] == "message")
        .collect();
    // Recorded in the thread, then acted on (the sender is not the author:
    // a human decides); both events carry the Message-ID.
    assert_eq!(msg_events.len(), 2);
    assert!(msg_events
        .iter()
        .all(|e| e["cause"]["message_id"] == "r1@dastard"));
    assert_eq!(v["state"], "needs-human");
    assert!(msg_events[0]["cause"]["quote"]
        .as_str()
        .unwrap()
        .contains("not a regression"));
    let text =
        String::from_utf8_lossy(&perfbot(&cfg, &["cases", "show", &c.id]).stdout).into_owned();
    assert!(
        text.contains("thread:") && text.contains("| This is not a regression."),
        "{text}"
    );
}

#[test]
fn mbox_matching_bots_own_mail_and_quarantine() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(
        tmp.path(),
        "max_mime_parts = 50\nmax_message_bytes = 1000000",
    );
    let c = report(&cfg);
    let sha10 = c
        .subject
        .split_whitespace()
        .nth(1)
        .unwrap()
        .trim_end_matches(':');
    let mut deep = format!(
        "From: x@y.org\r\nMessage-ID: <deep@x>\r\nIn-Reply-To: <{}>\r\n",
        c.message_id
    );
    for i in 0..1000 {
        deep.push_str(&format!(
            "Content-Type: multipart/mixed; boundary=b{i}\r\n\r\n--b{i}\r\n"
        ));
    }
    let big_refs: String = (0..10_000).map(|i| format!(" <ref{i}@x>")).collect();
    let attachment = "QUFB".repeat(2_000_000 / 4 * 3 / 3); // ~2 MB of base64, over the 1 MB limit
    let messages = vec![
        // 1. by References only (nearest known ancestor)
        reply(
            &format!("From: Alice <alice@kernel.example>\r\nSubject: Re: something\r\nMessage-ID: <r-refs@x>\r\nReferences: <unknown@x> <{}>", c.message_id),
            "Where do I find the test?",
        ),
        // 2. by subject fallback: no threading headers
        reply(
            &format!("From: Bob <bob@kernel.example>\r\nSubject: AW: Re: [xfs] {sha10}: fio.write_iops -9.0% regression\r\nMessage-ID: <r-subject@x>"),
            "I'll revert this patch.",
        ),
        // 3. unrelated list traffic
        "From: someone@x.org\r\nSubject: [PATCH] mm: something\r\nMessage-ID: <patch@x>\r\n\r\nA patch.\r\n".to_string(),
        // 4. perfbot's own report coming back from the list
        format!("From: kernel test robot <perfbot@ci.example>\r\nSubject: {}\r\nMessage-ID: <{}>\r\n\r\nthe report\r\n", c.subject, c.message_id),
        // 5. another robot answering in the thread
        reply(
            &format!("From: syzbot <syzbot@syzkaller.example>\r\nSubject: Re: x\r\nMessage-ID: <bot@x>\r\nIn-Reply-To: <{}>\r\nAuto-Submitted: auto-generated", c.message_id),
            "#syz test",
        ),
        // 6. 1,000-level MIME nesting in the thread: quarantined with its id
        deep,
        // 7. 10,000 References, the report among the last ones
        reply(
            &format!("From: Carol <carol@kernel.example>\r\nSubject: Re: x\r\nMessage-ID: <r-many@x>\r\nReferences:{big_refs} <{}>", c.message_id),
            "Looking into it.",
        ),
        // 8. a big attachment: only its first part read, and marked so
        format!("From: Dan <dan@kernel.example>\r\nSubject: Re: x\r\nMessage-ID: <r-big@x>\r\nIn-Reply-To: <{}>\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\n--zz\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n--zz\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n{attachment}\r\n--zz--\r\n", c.message_id),
        // 9. NUL bytes and invalid UTF-8 in a reply
        format!("From: Eve <eve@kernel.example>\r\nSubject: Re: x\r\nMessage-ID: <r-nul@x>\r\nIn-Reply-To: <{}>\r\n\r\nbad \0 bytes \u{FFFD} here\r\n", c.message_id),
    ];
    let mut data = mbox(&messages);
    // Invalid UTF-8 in the last message.
    data.extend_from_slice(b"From x\nFrom: f@x.org\nMessage-ID: <r-utf@x>\nIn-Reply-To: <");
    data.extend_from_slice(c.message_id.as_bytes());
    data.extend_from_slice(b">\n\n\xff\xfe caf\xe9\n");
    let f = tmp.path().join("list.mbox");
    std::fs::write(&f, &data).unwrap();
    let e = ok(&perfbot(&cfg, &["ingest", "--mbox", f.to_str().unwrap()]));
    assert!(
        stats(&e)
            .starts_with("read 10, matched 9, new 7, duplicates 1, unmatched 1, quarantined 1 "),
        "{e}"
    );
    assert!(
        e.contains("deep@x"),
        "the log names the quarantined message: {e}"
    );

    let v = show(&cfg, &c.id);
    let thread = v["thread"].as_array().unwrap();
    let by_id = |id: &str| {
        thread
            .iter()
            .find(|t| t["message_id"] == id)
            .unwrap_or_else(|| panic!("{id} not in the thread"))
            .clone()
    };
    assert_eq!(by_id("r-refs@x")["text"], "Where do I find the test?");
    assert_eq!(by_id("r-subject@x")["text"], "I'll revert this patch.");
    assert_eq!(by_id("bot@x")["sender"], "bot");
    assert_eq!(by_id("r-many@x")["text"], "Looking into it.");
    assert!(by_id("r-nul@x")["text"].as_str().unwrap().contains("bad"));
    assert!(by_id("r-utf@x")["text"].as_str().unwrap().contains("caf"));
    // The big one is recorded with the words before its attachment, marked as
    // read in part (a decision in it would go to a human).
    let big = by_id("r-big@x");
    assert_eq!(big["text"], "see attached");
    assert!(
        big["limited"].as_str().unwrap().contains("only the first"),
        "{big}"
    );
    // perfbot's own mail is never a reply.
    assert_eq!(
        thread
            .iter()
            .filter(|t| t["message_id"] == c.message_id.as_str())
            .count(),
        1
    );
    // Quarantine keeps the bytes and the reason.
    let o = perfbot(&cfg, &["quarantine", "list", "--json"]);
    let listing: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(listing["unreadable"], serde_json::json!([]));
    let q = &listing["messages"];
    assert_eq!(q.as_array().unwrap().len(), 1);
    assert_eq!(q[0]["message_id"], "deep@x");
    assert!(q[0]["reason"].as_str().unwrap().contains("MIME parts"));
    let o = perfbot(
        &cfg,
        &["quarantine", "show", &q[0]["hash"].as_str().unwrap()[..12]],
    );
    assert!(o.stdout.starts_with(b"From: x@y.org"));
    // As text: when, which, how big, why, from where.
    let o = perfbot(&cfg, &["quarantine", "list"]);
    let text = String::from_utf8_lossy(&o.stdout);
    let hash = &q[0]["hash"].as_str().unwrap()[..16];
    let (first, second) = text.trim_end().split_once('\n').unwrap();
    assert!(
        first.contains(&format!("  {hash}  ")) && first.contains("MIME parts"),
        "{text}"
    );
    // Matched to its case before it could not be read: a reply that may
    // decide it.
    let tail = format!(" <deep@x>, a reply in case {}", c.id);
    assert!(
        second.starts_with("    ") && second.ends_with(&tail),
        "{text}"
    );
    let o = perfbot(&cfg, &["quarantine", "show", "ffffffffffff"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no quarantined message ffffffffffff"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // Overlapping files (the same list again, gzip this time): nothing new.
    let gz = tmp.path().join("list.mbox.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&data).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let e = ok(&perfbot(&cfg, &["ingest", "--mbox", gz.to_str().unwrap()]));
    assert!(stats(&e).contains("new 0,"), "{e}");
    let after = show(&cfg, &c.id);
    assert_eq!(after["events"], v["events"]);
}

#[test]
fn truncated_gzip_keeps_what_came_before_and_says_where() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    let mut messages: Vec<String> = (0..200)
        .map(|i| {
            format!(
                "From: a@x.org\r\nSubject: s\r\nMessage-ID: <n{i}@x>\r\n\r\n{}\r\n",
                "text ".repeat(200)
            )
        })
        .collect();
    messages.insert(
        3,
        reply(
            &format!("From: Dave <david@fromorbit.com>\r\nSubject: Re: x\r\nMessage-ID: <early@x>\r\nIn-Reply-To: <{}>", c.message_id),
            "Early reply.",
        ),
    );
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&mbox(&messages)).unwrap();
    let gz = enc.finish().unwrap();
    let f = tmp.path().join("cut.mbox.gz");
    std::fs::write(&f, &gz[..gz.len() / 2]).unwrap();
    let o = perfbot(&cfg, &["ingest", "--mbox", f.to_str().unwrap()]);
    assert!(!o.status.success());
    let e = err(&o);
    assert!(
        e.contains("cut.mbox.gz") && e.contains("near byte") && e.contains("kept"),
        "{e}"
    );
    assert!(stats(&e).contains("new 1,"), "{e}");
    let v = show(&cfg, &c.id);
    assert!(v["thread"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["message_id"] == "early@x"));
}

#[test]
fn one_message_on_stdin() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    let r = reply(
        &format!("From: Jaegeuk Kim <jaegeuk@kernel.example>\r\nSubject: Re: x\r\nMessage-ID: <stdin@x>\r\nIn-Reply-To: <{}>", c.message_id),
        "I'll revert this patch.",
    );
    let e = ok(&perfbot_stdin(
        &cfg,
        &["ingest", "--stdin"],
        Some(r.as_bytes()),
    ));
    assert!(stats(&e).starts_with("read 1, matched 1, new 1"), "{e}");
    // Junk on stdin: quarantined, not a crash.
    let e = ok(&perfbot_stdin(
        &cfg,
        &["ingest", "--stdin"],
        Some(b"\0\0\0 not mail"),
    ));
    assert!(stats(&e).contains("quarantined 1"), "{e}");
}

/// `perfbot run` reads its quarantine again when it starts: a reply
/// quarantined under a limit reaches its case once the limit is raised,
/// without `quarantine retry` (refused while the daemon holds the database).
/// What stays is warned of at the default log level, and `/metrics` counts
/// both.
#[test]
fn the_daemon_reads_its_quarantine_again_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "max_mime_parts = 10");
    let c = report(&cfg);
    let many = many_parts(&c.message_id);
    for raw in [many.as_bytes(), b"\0\0\0 not mail".as_slice()] {
        let e = ok(&perfbot_stdin(&cfg, &["ingest", "--stdin"], Some(raw)));
        assert!(stats(&e).contains("quarantined 1"), "{e}");
    }
    let port = common::free_port();
    let raised = format!("max_mime_parts = 50\n[web]\nlisten = \"127.0.0.1:{port}\"\n");
    let cfg = setup(tmp.path(), &raised);
    let mut daemon = std::process::Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(&cfg)
        .arg("run")
        .env_remove("RUST_LOG")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let path = format!("/api/cases/{}", c.id);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut seen = None;
    while seen.is_none() && std::time::Instant::now() < deadline {
        seen = common::http_get(port, &path).filter(|page| page.contains("many@x"));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // The reply reaches its case before it leaves the quarantine, and the
    // count follows the whole re-read: wait for both.
    let want = ["perfbot_quarantine_released 1", "perfbot_quarantine_held 1"];
    let mut metrics = String::new();
    while std::time::Instant::now() < deadline {
        metrics = common::http_get(port, "/metrics").unwrap_or_default();
        if want.iter().all(|w| metrics.lines().any(|l| l == *w)) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    unsafe {
        libc::kill(daemon.id() as i32, libc::SIGTERM);
    }
    let status = daemon.wait().unwrap();
    let mut log = String::new();
    std::io::Read::read_to_string(daemon.stderr.as_mut().unwrap(), &mut log).unwrap();
    assert!(status.success(), "{log}");
    assert!(
        seen.is_some(),
        "the reply never reached case {}: {log}",
        c.id
    );
    assert!(log.contains("quarantine read again at start"), "{log}");
    assert!(log.contains("read=1 kept=1"), "{log}");
    for line in want {
        assert!(metrics.lines().any(|l| l == line), "{line}: {metrics}");
    }
    let o = perfbot(&cfg, &["quarantine", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let left = v["messages"].as_array().unwrap();
    assert_eq!(left.len(), 1, "{v}");
    assert!(left[0]["message_id"].is_null(), "the junk stays: {v}");
}

/// A reply to `report` with 21 MIME parts.
fn many_parts(report: &str) -> String {
    let parts: String = (0..20)
        .map(|i| format!("--zz\r\nContent-Type: text/plain\r\n\r\npart {i}\r\n"))
        .collect();
    format!(
        "From: Dave Chinner <david@fromorbit.example>\r\nSubject: Re: x\r\nMessage-ID: <many@x>\r\n\
         In-Reply-To: <{report}>\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\n\
         --zz\r\nContent-Type: text/plain\r\n\r\nLooking into it.\r\n{parts}--zz--\r\n"
    )
}

/// A message quarantined under a limit is read once the limit is raised
/// (`quarantine retry`); one that is no mail stays, with its reason, until an
/// operator drops it.
#[test]
fn quarantine_retry_reads_what_a_raised_limit_lets_through() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "max_mime_parts = 10");
    let c = report(&cfg);
    let many = many_parts(&c.message_id);
    for raw in [many.as_bytes(), b"\0\0\0 not mail".as_slice()] {
        let e = ok(&perfbot_stdin(&cfg, &["ingest", "--stdin"], Some(raw)));
        assert!(stats(&e).contains("quarantined 1"), "{e}");
    }
    let quarantined = |cfg: &Path| -> Vec<serde_json::Value> {
        let o = perfbot(cfg, &["quarantine", "list", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["messages"].as_array().unwrap().clone()
    };
    let before = quarantined(&cfg);
    assert_eq!(before.len(), 2, "{before:?}");
    let hash_of = |id: Option<&str>| -> String {
        let q = before
            .iter()
            .find(|q| q["message_id"].as_str() == id)
            .unwrap();
        q["hash"].as_str().unwrap().to_string()
    };
    let (many_hash, junk_hash) = (hash_of(Some("many@x")), hash_of(None));
    // The reply was matched to its case before it could not be read: the
    // quarantine and the case both say so; the junk belongs to no case.
    let case_of = |id: Option<&str>| {
        let q = before.iter().find(|q| q["message_id"].as_str() == id);
        q.unwrap()["case"].as_str().map(str::to_string)
    };
    assert_eq!(case_of(Some("many@x")).as_deref(), Some(c.id.as_str()));
    assert_eq!(case_of(None), None);
    let o = perfbot(&cfg, &["cases", "show", &c.id]);
    let shown = String::from_utf8_lossy(&o.stdout);
    let want = format!("\nnot read:   <many@x> (quarantined {}, ", &many_hash[..16]);
    assert!(shown.contains(&want), "{shown}");

    // Under the same limits nothing changes, and each says why.
    let o = perfbot(&cfg, &["quarantine", "retry"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches("still quarantined:").count(), 2, "{out}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("read 0, still quarantined 2"));
    assert_eq!(quarantined(&cfg).len(), 2);

    // The limit raised: the reply is read into its case's thread and leaves.
    let cfg = setup(tmp.path(), "max_mime_parts = 50");
    let o = perfbot(&cfg, &["quarantine", "retry", &many_hash[..10]]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        out.trim_end(),
        format!("{}  read into case {}'s thread", &many_hash[..16], c.id),
        "{out}"
    );
    let v = show(&cfg, &c.id);
    let texts: Vec<&str> = v["thread"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["message_id"] == "many@x")
        .map(|t| t["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 1, "{v}");
    assert!(texts[0].starts_with("Looking into it."), "{v}");
    let left = quarantined(&cfg);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["hash"].as_str().unwrap(), junk_hash);
    let o = perfbot(&cfg, &["cases", "show", &c.id]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("not read:"));
    let dir = tmp.path().join("state/quarantine");
    assert!(!dir.join(format!("{many_hash}.eml")).exists());

    // A hash that names nothing is the command's mistake.
    let o = perfbot(&cfg, &["quarantine", "retry", "ffffffffffff"]);
    assert_eq!(o.status.code(), Some(2));
    // One message named twice is read once.
    let o = perfbot(
        &cfg,
        &["quarantine", "retry", &junk_hash[..8], &junk_hash[..12]],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
    // Its bytes gone from the state directory: said, exit 1, the record kept.
    let file = dir.join(format!("{junk_hash}.eml"));
    let bytes = std::fs::read(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    let o = perfbot(&cfg, &["quarantine", "retry"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with(&format!("{}  not read: ", &junk_hash[..16])),
        "{out}"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("could not be read from the state directory")
    );
    assert_eq!(quarantined(&cfg).len(), 1);
    std::fs::write(&file, bytes).unwrap();
    // Dropped by the operator: gone, bytes and record.
    let o = perfbot(&cfg, &["quarantine", "drop", &junk_hash[..12]]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("dropped {junk_hash}")));
    assert!(quarantined(&cfg).is_empty());
    assert!(!dir.join(format!("{junk_hash}.eml")).exists());
    let o = perfbot(&cfg, &["quarantine", "list"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "nothing quarantined"
    );
}

/// Replies read before the message they answer (a moderation queue held
/// it back, an archive read list by list) are kept and recorded once it
/// comes, chains too; over `inbound.early_replies_bytes`, the oldest kept go
/// first and stay about no case. `(room, thread read as, recorded)`.
/// The replies of `chain` in the case's thread, by name, sorted.
fn chain_read(cfg: &Path, c: &Case) -> Vec<String> {
    let v = show(cfg, &c.id);
    sorted(thread_ids(&v).iter().filter_map(|id| id.strip_suffix("@x")))
}

fn sorted<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Vec<String> {
    let mut v: Vec<String> = names.into_iter().map(|s| s.as_ref().to_string()).collect();
    v.sort();
    v
}

/// A chain of replies about a case: p answers the report; k1 and k2 answer
/// p; g answers k1. Subjects name no case, so only the thread joins them.
fn chain(c: &Case) -> Vec<(&'static str, String)> {
    let one = |id: &str, parent: &str| {
        reply(
            &format!(
                "From: Dev <dev@kernel.example>\r\nSubject: [PATCH v2] xfs: {id}\r\nMessage-ID: <{id}@x>\r\nIn-Reply-To: <{parent}>\r\nReferences: <{parent}>"
            ),
            "A new version of the fix, as discussed.",
        )
    };
    vec![
        ("p", one("p", &c.message_id)),
        ("k1", one("k1", "p@x")),
        ("k2", one("k2", "p@x")),
        ("g", one("g", "k1@x")),
    ]
}

#[test]
fn replies_read_before_the_message_they_answer() {
    let mails = chain;
    // The room: 2 for plenty, 1 for one reply's bytes, 0 for none.
    let table: &[(usize, &[&str], &[&str])] = &[
        (2, &["p", "k1", "k2", "g"], &["p", "k1", "k2", "g"]),
        (2, &["g", "k2", "k1", "p"], &["p", "k1", "k2", "g"]),
        (2, &["k1", "g", "p", "k2"], &["p", "k1", "k2", "g"]),
        // Room for one reply: g, read first, made room for k2.
        (1, &["g", "k2", "p", "k1"], &["p", "k2", "k1"]),
        (0, &["k1", "p"], &["p"]),
    ];
    for (room, order, recorded) in table {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = setup(tmp.path(), "");
        let c = report(&cfg);
        let all = mails(&c);
        let one = all.iter().map(|(_, m)| m.len()).max().unwrap() + 8;
        let room = [0, one, 1 << 20][*room];
        std::fs::write(
            &cfg,
            std::fs::read_to_string(&cfg).unwrap() + &format!("early_replies_bytes = {room}\n"),
        )
        .unwrap();
        let read: Vec<String> = order
            .iter()
            .map(|o| all.iter().find(|(n, _)| n == o).unwrap().1.clone())
            .collect();
        let f = tmp.path().join("list.mbox");
        std::fs::write(&f, mbox(&read)).unwrap();
        let e = ok(&perfbot(&cfg, &["ingest", "--mbox", f.to_str().unwrap()]));
        let (got, want) = (chain_read(&cfg, &c), sorted(recorded.iter()));
        assert_eq!(got, want, "room {room}, read as {order:?}: {}", stats(&e));
        let line = stats(&e);
        assert!(
            line.starts_with(&format!("read {}, matched {}", order.len(), recorded.len())),
            "{line}"
        );
    }
}

/// Kept replies outlive the run that read them (a `perfbot ingest` from
/// cron, one list's archive a day): each message here is read by a run of
/// its own. Kept longer than `inbound.hold_days` (0: any time at all), they
/// are let go of. `(hold_days, read as, recorded)`.
#[test]
fn replies_kept_from_one_run_to_the_next() {
    let table: &[(&str, u32, &[&str], &[&str])] = &[
        ("mbox", 30, &["g", "k2", "k1", "p"], &["p", "k1", "k2", "g"]),
        (
            "maildir",
            30,
            &["k1", "g", "p", "k2"],
            &["p", "k1", "k2", "g"],
        ),
        ("mbox", 0, &["k1", "p", "k2"], &["p", "k2"]),
    ];
    for (source, days, order, recorded) in table {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = setup(tmp.path(), &format!("hold_days = {days}\n"));
        let c = report(&cfg);
        let all = chain(&c);
        let mut late = 0;
        for o in *order {
            let m = &all.iter().find(|(n, _)| n == o).unwrap().1;
            let f = tmp.path().join(format!("{o}.{source}"));
            if *source == "mbox" {
                std::fs::write(&f, mbox(std::slice::from_ref(m))).unwrap();
            } else {
                std::fs::create_dir_all(f.join("new")).unwrap();
                std::fs::write(f.join("new").join(o), m).unwrap();
            }
            let e = ok(&perfbot(
                &cfg,
                &["ingest", &format!("--{source}"), f.to_str().unwrap()],
            ));
            late += stats(&e)
                .split(", ")
                .find_map(|p| p.strip_prefix("read before their parent "))
                .and_then(|n| n.split(' ').next()?.parse::<usize>().ok())
                .unwrap_or(0);
            if *o == order[0] {
                // Kept, and counted where an operator looks for mail not read.
                let o = perfbot(&cfg, &["quarantine", "list"]);
                let out = String::from_utf8_lossy(&o.stdout);
                assert!(out.contains("1 reply about no case ("), "{out}");
            }
        }
        // All read, or let go of: none kept.
        let o = perfbot(&cfg, &["quarantine", "list"]);
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim(),
            "nothing quarantined"
        );
        let (got, want) = (chain_read(&cfg, &c), sorted(recorded.iter()));
        assert_eq!(got, want, "{source}, hold_days {days}, read as {order:?}");
        let first = order.iter().position(|o| *o == "p").unwrap();
        let before: usize = if *days == 0 { 0 } else { first };
        assert_eq!(
            late, before,
            "{source}, hold_days {days}, read as {order:?}"
        );
    }
}

mod any_list {
    //! Whatever a list carries, ingestion keeps every message it accepts:
    //! each reply in the case's thread is recorded with it or quarantined
    //! with its bytes, every message is counted once, and reading the same
    //! list again changes nothing.

    use super::*;
    use proptest::prelude::*;

    /// One message of a list, written from its index (for unique ids).
    #[derive(Debug, Clone)]
    enum Mail {
        /// A person's reply in the case's thread.
        Reply { words: Vec<String>, quoted: bool },
        /// Other list traffic.
        Unrelated { words: Vec<String> },
        /// Bytes that may be anything.
        Junk(Vec<u8>),
        /// A copy of an earlier message of the list.
        Again(usize),
    }

    fn words() -> impl Strategy<Value = Vec<String>> {
        let word = prop_oneof![
            "[a-zA-Z']{1,10}",
            Just("not a regression".to_string()),
            Just("I'll revert it".to_string()),
            Just("please".to_string()),
            Just("?".to_string()),
            Just("#perfbot close".to_string()),
            "[ -~\u{a0}-\u{17f}]{1,30}",
        ];
        prop::collection::vec(word, 0..30)
    }

    fn mail() -> impl Strategy<Value = Mail> {
        prop_oneof![
            4 => (words(), any::<bool>()).prop_map(|(words, quoted)| Mail::Reply { words, quoted }),
            2 => words().prop_map(|words| Mail::Unrelated { words }),
            1 => prop::collection::vec(any::<u8>(), 0..400).prop_map(Mail::Junk),
            1 => (0usize..8).prop_map(Mail::Again),
        ]
    }

    fn text(i: usize, m: &Mail, case: &Case, written: &[String]) -> String {
        match m {
            Mail::Reply { words, quoted } => {
                let quote = if *quoted { "> FYI, we noticed a regression\r\n\r\n" } else { "" };
                format!(
                    "From: Dev {i} <dev{i}@kernel.example>\r\nSubject: Re: {}\r\n\
                     Message-ID: <r{i}@x>\r\nIn-Reply-To: <{}>\r\n\r\n{quote}{}\r\n",
                    case.subject,
                    case.message_id,
                    words.join(" ")
                )
            }
            Mail::Unrelated { words } => format!(
                "From: someone@x.org\r\nSubject: [PATCH] mm: {i}\r\nMessage-ID: <u{i}@x>\r\n\r\n{}\r\n",
                words.join(" ")
            ),
            Mail::Junk(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            Mail::Again(k) => written.get(*k).cloned().unwrap_or_default(),
        }
    }

    /// The count after `name` in the `read 10, matched 9, …` line.
    fn count(line: &str, name: &str) -> usize {
        let (_, rest) = line
            .split(", ")
            .find_map(|p| p.trim().split_once(' ').filter(|(n, _)| *n == name))
            .unwrap_or_else(|| panic!("{name} in {line}"));
        rest.split(' ').next().unwrap().parse().unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]

        #[test]
        fn every_message_of_a_list_is_kept_once(mails in prop::collection::vec(mail(), 1..14)) {
            let tmp = tempfile::tempdir().unwrap();
            let cfg = setup(tmp.path(), "");
            let case = report(&cfg);
            let mut written = Vec::new();
            for (i, m) in mails.iter().enumerate() {
                let t = text(i, m, &case, &written);
                written.push(t);
            }
            let f = tmp.path().join("list.mbox");
            std::fs::write(&f, mbox(&written)).unwrap();
            let e = ok(&perfbot(&cfg, &["ingest", "--mbox", f.to_str().unwrap()]));
            let line = stats(&e);
            // Every message is counted: matched to the case, not, or
            // quarantined before it could be (a quarantined reply is also
            // matched when its headers were read).
            let read = count(&line, "read");
            prop_assert_eq!(read, written.len(), "{}", line);
            let placed = count(&line, "matched") + count(&line, "unmatched");
            prop_assert!(placed <= read && read <= placed + count(&line, "quarantined"), "{}", line);
            let before = show(&cfg, &case.id);
            let thread = thread_ids(&before);
            let o = perfbot(&cfg, &["quarantine", "list", "--json"]);
            let q: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let quarantined: Vec<&str> = q["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|m| m["message_id"].as_str())
                .collect();
            for (i, m) in mails.iter().enumerate() {
                if matches!(m, Mail::Reply { .. }) {
                    let id = format!("r{i}@x");
                    prop_assert!(
                        thread.contains(&id.as_str()) || quarantined.contains(&id.as_str()),
                        "{id} lost: {line}"
                    );
                }
            }
            // The same list again: nothing new, the case as it was.
            let e = ok(&perfbot(&cfg, &["ingest", "--mbox", f.to_str().unwrap()]));
            prop_assert!(stats(&e).contains("new 0,"), "{}", stats(&e));
            let after = show(&cfg, &case.id);
            prop_assert_eq!(&after["events"], &before["events"]);
            prop_assert_eq!(&after["thread"], &before["thread"]);
        }
    }
}
