//! End to end, for real: the mail server, `perfbot run`, a report delivered
//! over SMTP, a maintainer's reply sent over SMTP and read over IMAP (IDLE),
//! the case closed with the reply's words as evidence — on the dashboard, in
//! the digest and, after a graceful SIGTERM, in `perfbot cases show`. And a
//! question that reaches the operators' mailbox. Needs the mail server.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use common::*;

fn daemon_config(dir: &Path, web_port: u16) -> PathBuf {
    let text = format!(
        r#"
[bot]
state_dir = {state:?}
email = "bot@example.test"
message_id_domain = "{domain}"

[report]
templates_dir = {templates:?}
cc = ["list@example.test"]
cc_self = true

[outbound]
transport = "smtp"
outbox_dir = {outbox:?}
stop_file = {stop:?}
retry_base_secs = 1

[smtp]
url = "smtp://127.0.0.1:{SMTP_PORT}"
ca_file = {ca:?}

{imap}
[trust]
operators = ["bob@example.test"]

[web]
listen = "127.0.0.1:{web_port}"
templates_dir = {web_templates:?}

[run]
spool_dir = {spool:?}
send_every_secs = 1
poll_every_secs = 1
"#,
        state = dir.join("state"),
        domain = id_domain(dir),
        templates = root().join("templates"),
        web_templates = root().join("templates/web"),
        outbox = dir.join("state/outbox"),
        stop = dir.join("STOP"),
        spool = dir.join("spool"),
        ca = ca_file(),
        imap = imap_sections("poll_secs = 60"),
    );
    let p = dir.join("config.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn get_json(port: u16, path: &str) -> Option<serde_json::Value> {
    serde_json::from_str(&http_get(port, path)?).ok()
}

fn start(cfg: &Path, port: u16) -> Daemon {
    let child = Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(cfg)
        .arg("run")
        .env("PERFBOT_IMAP_PASSWORD", "secret")
        .env("RUST_LOG", "perfbot=info")
        .stderr(Stdio::from(
            std::fs::File::create(cfg.with_file_name("run.log")).unwrap(),
        ))
        .spawn()
        .unwrap();
    let d = Daemon(Some(child));
    wait_for("the dashboard", 30, || http_get(port, "/healthz"));
    d
}

fn reply(id: &str, parent: &str, text: &str) -> String {
    format!(
        "From: Alice Author <alice@example.test>\r\nTo: bot@example.test\r\nCc: list@example.test\r\nSubject: Re: report\r\nMessage-ID: <{id}>\r\nIn-Reply-To: <{parent}>\r\nReferences: <{parent}>\r\n\r\nOn Mon, Jan 1, 2024, kernel test robot wrote:\r\n> kernel test robot noticed a -9.0% regression of fio.write_iops\r\n\r\n{text}\r\n\r\nThanks,\r\nAlice\r\n"
    )
}

/// The case whose Message-ID is not in `known`, once the daemon has it.
fn new_case(port: u16, known: &[String]) -> serde_json::Value {
    wait_for("the spooled report to become a case", 30, || {
        let v = get_json(port, "/api/cases")?;
        v.as_array()?
            .iter()
            .find(|c| !known.contains(&c["id"].as_str().unwrap_or("").to_string()))
            .cloned()
    })
}

#[test]
fn report_reply_close_and_escalate_with_the_daemon_running() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = daemon_config(tmp.path(), port);
    let mut daemon = start(&cfg, port);
    let _ = &mut daemon;

    // A report, handed to the running daemon (it holds the database).
    let input1 = input(tmp.path(), "Alice Author <alice@example.test>", &[]);
    let out = ok(&perfbot(&cfg, &["report", input1.to_str().unwrap()]));
    assert!(out.contains("handed to it"), "{out}");
    let c1 = new_case(port, &[]);
    let (id1, mid1) = (
        c1["id"].as_str().unwrap().to_string(),
        c1["message_id"].as_str().unwrap().to_string(),
    );
    // Delivered over SMTP, once, to the author and the list.
    assert_eq!(wait_copies("alice", &mid1, 1).len(), 1);
    assert_eq!(wait_copies("list", &mid1, 1).len(), 1);

    // The author answers; within seconds the case is closed on those words.
    let t = token();
    let r1 = format!("nar.{t}@example.test");
    let sent = Instant::now();
    smtp_to_bot(&reply(
        &r1,
        &mid1,
        "This is not a regression: the test measures a histogram bin that moved.",
    ));
    let log = cfg.with_file_name("run.log");
    let case = wait_for_or(&log, "the case to close", 20, || {
        let v = get_json(port, &format!("/api/cases/{id1}"))?;
        (v["case"]["state"] == "not-a-regression").then_some(v)
    });
    eprintln!("reply applied {:?} after SMTP accepted it", sent.elapsed());
    let ev = event_to(&case, "not-a-regression");
    assert_eq!(ev["cause"]["message_id"], r1.as_str());
    assert!(ev["cause"]["quote"]
        .as_str()
        .unwrap()
        .contains("This is not a regression"));
    // On the dashboard, the evidence is highlighted in the thread.
    let page = http_get(port, &format!("/case/{id1}")).unwrap();
    assert!(
        page.contains("<mark class=\"evidence\">This is not a regression"),
        "{page}"
    );
    // And in the digest (JSON and HTML).
    let d = get_json(port, "/api/digest").unwrap();
    let closed = d["recently_closed"].as_array().unwrap();
    assert!(closed.iter().any(|c| c["case"]["id"] == id1.as_str()
        && c["evidence"]
            .as_str()
            .unwrap()
            .contains("This is not a regression")
        && c["who"] == "Alice Author <alice@example.test>"));
    assert!(http_get(port, "/digest")
        .unwrap()
        .contains("This is not a regression"));

    // Second path: a question goes to the operators' mailbox.
    let input2 = input(tmp.path(), "Alice Author <alice@example.test>", &[]);
    ok(&perfbot(&cfg, &["report", input2.to_str().unwrap()]));
    let c2 = new_case(port, std::slice::from_ref(&id1));
    let (id2, mid2) = (
        c2["id"].as_str().unwrap().to_string(),
        c2["message_id"].as_str().unwrap().to_string(),
    );
    assert_eq!(wait_copies("alice", &mid2, 1).len(), 1);
    let q = format!("q.{t}@example.test");
    smtp_to_bot(&reply(
        &q,
        &mid2,
        "Where do I find the test and its job file?",
    ));
    wait_for("the question to escalate", 20, || {
        let v = get_json(port, &format!("/api/cases/{id2}"))?;
        (v["case"]["state"] == "needs-human").then_some(())
    });
    // The escalation mail reaches bob (the operator), quoting the question.
    let esc = wait_for("the escalation mail", 20, || {
        let mut s = imap("bob");
        let uids = s.uid_search(format!("HEADER In-Reply-To \"{q}\"")).ok()?;
        let u = uids.into_iter().next()?;
        let f = s.uid_fetch(u.to_string(), "BODY.PEEK[]").ok()?;
        let raw = f.iter().next()?.body()?.to_vec();
        let _ = s.logout();
        Some(String::from_utf8_lossy(&raw).into_owned())
    });
    assert!(esc.contains("Where do I find the test"), "{esc}");
    assert!(esc.contains(&id2), "{esc}");

    // Graceful stop; then the CLI sees the same history.
    let mut child = daemon.0.take().unwrap();
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let st = child.wait().unwrap();
    assert!(st.success(), "perfbot run exits 0 on SIGTERM: {st:?}");
    let shown = ok(&perfbot(&cfg, &["cases", "show", &id1]));
    let _ = shown;
    let o = perfbot(&cfg, &["cases", "show", &id1]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("[not-a-regression]") && text.contains("This is not a regression"),
        "{text}"
    );
    let o = perfbot(&cfg, &["digest"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("Needs a human (1)") && text.contains("Where do I find the test"),
        "{text}"
    );
    assert!(text.contains("This is not a regression"), "{text}");
}
