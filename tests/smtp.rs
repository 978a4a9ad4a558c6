//! Delivery through a real SMTP server (Postfix on loopback), read back over
//! real IMAP (Dovecot). Needs `.ci/mailserver/start-mail.sh`.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::*;

fn smtp_url() -> String {
    format!("smtp://127.0.0.1:{SMTP_PORT}")
}

/// Report one fresh case; return its Message-ID.
fn report(cfg: &Path, dir: &Path, to: &str, cc: &[&str]) -> String {
    let input = input(dir, to, cc);
    ok(&perfbot(cfg, &["report", input.to_str().unwrap()]));
    let o = perfbot(cfg, &["cases", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v.as_array().unwrap().last().unwrap()["message_id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn state_of(cfg: &Path, id: &str) -> serde_json::Value {
    outbox(cfg)
        .into_iter()
        .find(|e| e["message_id"] == id)
        .unwrap_or_else(|| panic!("{id} not in the outbox"))
}

#[test]
fn report_arrives_once_with_the_right_headers() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &smtp_url(), "", "");
    let id = report(
        &cfg,
        tmp.path(),
        "Alice Author <alice@example.test>",
        &["list@example.test"],
    );
    // Over SMTP nothing leaves until `send`.
    assert_eq!(state_of(&cfg, &id)["state"], "queued");
    let err = ok(&perfbot(&cfg, &["send"]));
    assert!(err.contains("sent 1,"), "{err}");
    let got = wait_copies("alice", &id, 1);
    assert_eq!(got.len(), 1);
    let raw = &got[0];
    assert_eq!(header(raw, "Message-ID").unwrap(), format!("<{id}>"));
    assert!(header(raw, "From").unwrap().contains("<bot@example.test>"));
    assert!(header(raw, "To").unwrap().contains("alice@example.test"));
    assert!(header(raw, "Cc").unwrap().contains("list@example.test"));
    assert!(header(raw, "Subject").unwrap().contains("fio.write_iops"));
    assert!(header(raw, "X-Perfbot-Case").is_some());
    assert_eq!(
        header(raw, "Content-Type").unwrap(),
        "text/plain; charset=\"iso-8859-1\""
    );
    // The list copy too, once.
    assert_eq!(wait_copies("list", &id, 1).len(), 1);

    // Sending again sends nothing; the case says it was reported.
    let err = ok(&perfbot(&cfg, &["send"]));
    assert!(err.contains("sent 0,"), "{err}");
    let e = state_of(&cfg, &id);
    assert_eq!(e["state"], "sent");
    assert!(e["server_reply"].as_str().unwrap().starts_with("250"));
    let o = perfbot(&cfg, &["cases", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["state"], "reported");
    let o = ok(&perfbot(
        &cfg,
        &["cases", "show", v[0]["id"].as_str().unwrap()],
    ));
    let _ = o;
    assert_eq!(copies("alice", &id).len(), 1);
}

/// A report with files attached arrives as the robot's do: multipart/mixed,
/// the text first, each file under its name with its bytes intact.
#[test]
fn attachments_arrive_as_multipart_mixed() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &smtp_url(), "", "");
    let p = input(tmp.path(), "Alice Author <alice@example.test>", &[]);
    let config_text = "#\n# Automatically generated file; DO NOT EDIT.\nCONFIG_X86_64=y\n";
    std::fs::write(tmp.path().join("config-6.1.0"), config_text).unwrap();
    std::fs::write(tmp.path().join("job.yaml"), "suite: fio-basic\n").unwrap();
    let binary: Vec<u8> = (0..=255u8).chain([0, 10, 13, 10]).collect();
    std::fs::write(tmp.path().join("vmlinux.xz"), &binary).unwrap();
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    v["attachments"] = serde_json::json!([
        {"name": "config-6.1.0", "path": "config-6.1.0"},
        {"name": "job.yaml", "path": "job.yaml"},
        {"name": "vmlinux.xz", "path": "vmlinux.xz"}
    ]);
    std::fs::write(&p, v.to_string()).unwrap();
    ok(&perfbot(&cfg, &["report", p.to_str().unwrap()]));
    let o = perfbot(&cfg, &["cases", "list", "--json"]);
    let cases: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let id = cases[0]["message_id"].as_str().unwrap().to_string();
    ok(&perfbot(&cfg, &["send"]));
    let got = wait_copies("alice", &id, 1);
    let m = mail_parser::MessageParser::default()
        .parse(&got[0])
        .expect("a mail");
    assert!(header(&got[0], "Content-Type")
        .unwrap()
        .starts_with("multipart/mixed"));
    assert!(m.body_text(0).unwrap().contains("fio.write_iops"));
    let files: Vec<(String, Vec<u8>)> = m
        .attachments()
        .map(|a| {
            use mail_parser::MimeHeaders;
            (
                a.attachment_name().unwrap().to_string(),
                a.contents().to_vec(),
            )
        })
        .collect();
    // Text travels in MIME's canonical form (CRLF line ends); other files
    // byte for byte.
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap().replace("\r\n", "\n");
    assert_eq!(files.len(), 3);
    assert_eq!(files[0].0, "config-6.1.0");
    assert_eq!(text(&files[0].1), config_text);
    assert_eq!(files[1].0, "job.yaml");
    assert_eq!(text(&files[1].1), "suite: fio-basic\n");
    assert_eq!(files[2], ("vmlinux.xz".to_string(), binary));
    // A missing file is an input error naming the field; nothing is queued.
    v["commit"]["sha"] = fresh_sha().into();
    v["attachments"] = serde_json::json!([{"name": "reproduce", "path": "nosuch"}]);
    std::fs::write(&p, v.to_string()).unwrap();
    let o = perfbot(&cfg, &["report", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("$.attachments[0].path"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn server_down_then_retried_later_nothing_lost() {
    if !mail_server() {
        return;
    }
    // A port with nobody listening.
    let dead = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(
        tmp.path(),
        &format!("smtp://127.0.0.1:{port}"),
        "max_attempts = 5",
        "",
    );
    let id = report(&cfg, tmp.path(), "alice@example.test", &[]);
    let o = perfbot(&cfg, &["send"]);
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a failed mail is a failed run: {err}"
    );
    assert!(err.contains("failed 1"), "{err}");
    assert!(err.contains(&id), "the log names the mail: {err}");
    let e = state_of(&cfg, &id);
    assert_eq!(e["state"], "failed");
    assert_eq!(e["attempts"], 1);
    assert!(
        e["last_error"].as_str().unwrap().contains("temporary"),
        "{e}"
    );

    // The server is back: the same mail goes, under the same Message-ID.
    let cfg = config(tmp.path(), &smtp_url(), "max_attempts = 5", "");
    ok(&perfbot(&cfg, &["send"]));
    assert_eq!(wait_copies("alice", &id, 1).len(), 1);
    let e = state_of(&cfg, &id);
    assert_eq!(
        (e["state"].as_str(), e["attempts"].as_u64()),
        (Some("sent"), Some(2))
    );
}

#[test]
fn bounded_attempts_end_dead_with_the_reason() {
    if !mail_server() {
        return;
    }
    let dead = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(
        tmp.path(),
        &format!("smtp://127.0.0.1:{port}"),
        "max_attempts = 2",
        "",
    );
    let id = report(&cfg, tmp.path(), "alice@example.test", &[]);
    perfbot(&cfg, &["send"]);
    let err = stderr(&perfbot(&cfg, &["send"]));
    assert!(err.contains("dead 1"), "{err}");
    let e = state_of(&cfg, &id);
    assert_eq!(e["state"], "dead");
    assert!(
        e["last_error"]
            .as_str()
            .unwrap()
            .contains("Connection refused"),
        "{e}"
    );
    // An operator can send it again once the cause is fixed.
    let cfg = config(tmp.path(), &smtp_url(), "max_attempts = 2", "");
    ok(&perfbot(&cfg, &["outbox", "retry", &id]));
    ok(&perfbot(&cfg, &["send"]));
    assert_eq!(wait_copies("alice", &id, 1).len(), 1);
}

/// A server that takes the connection and then never says a word: lettre
/// bounds only the connect, so perfbot bounds the conversation. The mail
/// fails (to be retried) with the reason; `check` says so; neither hangs.
#[test]
fn a_server_gone_silent_fails_the_mail_instead_of_holding_it() {
    if !mail_server() {
        return;
    }
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        // Held open, unanswered.
        let _held: Vec<_> = silent.incoming().collect();
    });
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(
        tmp.path(),
        &format!("smtp://127.0.0.1:{port}?tls=none"),
        "",
        "",
    );
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, text.replace("timeout_secs = 10", "timeout_secs = 1")).unwrap();
    let id = report(&cfg, tmp.path(), "alice@example.test", &[]);
    let o = perfbot(&cfg, &["send"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = state_of(&cfg, &id);
    assert_eq!(e["state"], "failed", "{e}");
    let why = e["last_error"].as_str().unwrap();
    assert!(why.contains("the server went silent"), "{why}");
    let o = perfbot(&cfg, &["check"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_ne!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("FAIL  sending") && out.contains("the server went silent"),
        "{out}"
    );
}

/// What a proxy does with the bytes a client just sent, given all it sent
/// on the connection so far.
enum Pass {
    On,
    /// Cut the connection both ways, like a network failure.
    Cut,
    /// Pass them on, but withhold the server's answers from here on.
    Withhold,
}

/// A TCP relay in front of the real SMTP server; on the first connection
/// only, `watch` decides what becomes of each read from the client.
fn smtp_proxy(watch: impl Fn(&[u8]) -> Pass + Send + Sync + 'static) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let watch = Arc::new(watch);
    let first = Arc::new(AtomicBool::new(true));
    std::thread::spawn(move || {
        for client in l.incoming() {
            let Ok(client) = client else { continue };
            let server = TcpStream::connect(("127.0.0.1", SMTP_PORT)).unwrap();
            let watched = first.swap(false, Ordering::SeqCst);
            let withheld = Arc::new(AtomicBool::new(false));
            let (mut c_r, mut s_w) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (mut s_r, mut c_w) = (server, client);
            let answers_withheld = withheld.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = s_r.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    if answers_withheld.load(Ordering::SeqCst) {
                        continue;
                    }
                    if c_w.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = c_w.shutdown(Shutdown::Both);
            });
            let watch = watch.clone();
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = c_r.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    match if watched { watch(&seen) } else { Pass::On } {
                        Pass::On => {}
                        Pass::Cut => {
                            let _ = s_w.shutdown(Shutdown::Both);
                            let _ = c_r.shutdown(Shutdown::Both);
                            break;
                        }
                        // Before the bytes reach the server, so that its
                        // answer to them is never passed on.
                        Pass::Withhold => withheld.store(true, Ordering::SeqCst),
                    }
                    if s_w.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = s_w.shutdown(Shutdown::Write);
            });
        }
    });
    port
}

/// Where the message body starts in what a client sent (after `DATA`).
fn body_at(seen: &[u8]) -> Option<usize> {
    seen.windows(6)
        .position(|w| w == b"DATA\r\n")
        .map(|d| d + 6)
}

/// A relay that cuts the first connection in the middle of the message
/// body (after DATA), like a network failure.
fn cutting_proxy() -> u16 {
    smtp_proxy(|seen| match body_at(seen) {
        // Part of the body has gone through: cut both ways.
        Some(b) if seen.len() - b > 600 => Pass::Cut,
        _ => Pass::On,
    })
}

/// A relay that passes everything, but withholds the server's answers once
/// the client has sent the message's end of data on the first connection:
/// the server has the mail, its sender never hears so.
fn withholding_proxy() -> u16 {
    smtp_proxy(|seen| match body_at(seen) {
        Some(b) if seen[b..].windows(5).any(|w| w == b"\r\n.\r\n") => Pass::Withhold,
        _ => Pass::On,
    })
}

/// A test's config sending through the proxy on `port`, without TLS, so
/// that the proxy can see where DATA starts.
fn through_proxy(dir: &Path, port: u16) -> std::path::PathBuf {
    config(dir, &format!("smtp://127.0.0.1:{port}?tls=none"), "", "")
}

/// A config sending through a proxy that withholds the server's answer to
/// the end of a mail, copying perfbot itself and reading its own mailbox over
/// IMAP (`smtp.timeout_secs` as given), with the environment it needs.
fn withholding_and_self_copied(
    dir: &Path,
    timeout_secs: u32,
) -> (std::path::PathBuf, [(&'static str, &'static str); 1]) {
    let cfg = through_proxy(dir, withholding_proxy());
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("cc_self = false", "cc_self = true")
        .replace(
            "timeout_secs = 10",
            &format!("timeout_secs = {timeout_secs}"),
        );
    std::fs::write(
        &cfg,
        format!(
            "{text}\n[inbound]\nsource = \"imap\"\n\n[imap]\nurl = \"imap://127.0.0.1:{IMAP_PORT}\"\nuser = \"bot@example.test\"\nca_file = {:?}\n",
            ca_file()
        ),
    )
    .unwrap();
    (cfg, [("PERFBOT_IMAP_PASSWORD", "secret")])
}

/// perfbot killed after the server took a mail but before it heard so: the
/// mail stays "sending". With its own copy in its IMAP mailbox, the next
/// run finds it there and marks it sent instead of sending it again.
#[test]
fn a_mail_interrupted_after_the_server_took_it_is_found_not_sent_again() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (cfg, env) = withholding_and_self_copied(tmp.path(), 10);
    let id = report(&cfg, tmp.path(), "alice@example.test", &[]);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(&cfg)
        .arg("send")
        .envs(env)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The server took it (its copy is in perfbot's own mailbox); perfbot
    // still waits for the answer the proxy holds back (up to the config's
    // 10 s an exchange).
    assert_eq!(wait_copies("bot", &id, 1).len(), 1);
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    assert_eq!(state_of(&cfg, &id)["state"], "sending");

    let err = stderr(&perfbot_env(&cfg, &["send"], &env));
    assert!(
        err.contains(&format!(
            "report <{id}> was interrupted while sending and found in the own mailbox: marked sent"
        )) && err.contains("found already delivered 1"),
        "{err}"
    );
    let e = state_of(&cfg, &id);
    assert_eq!(e["state"], "sent", "{e}");
    assert_eq!(e["attempts"], 1, "{e}");
    // Sent once: one copy each, nothing more after a while.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(copies("alice", &id).len(), 1);
    assert_eq!(copies("bot", &id).len(), 1);
}

/// The server took the mail and then fell silent: the send fails, its fate
/// unknown, and the next run finds the mail in perfbot's own mailbox and marks
/// it sent instead of sending it a second time.
#[test]
fn a_mail_the_server_fell_silent_over_is_looked_for_before_it_goes_again() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (cfg, env) = withholding_and_self_copied(tmp.path(), 1);
    let id = report(&cfg, tmp.path(), "alice@example.test", &[]);
    let o = perfbot_env(&cfg, &["send"], &env);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = state_of(&cfg, &id);
    assert_eq!(
        (e["state"].as_str(), e["fate_unknown"].as_bool()),
        (Some("failed"), Some(true)),
        "{e}"
    );
    assert_eq!(wait_copies("bot", &id, 1).len(), 1);
    let o = perfbot_env(&cfg, &["outbox", "show", "--status", &id], &env);
    let shown = String::from_utf8_lossy(&o.stdout);
    assert!(
        shown.contains("fate:       unknown: the server may have taken it"),
        "{shown}"
    );

    let err = stderr(&perfbot_env(&cfg, &["send"], &env));
    assert!(err.contains("found already delivered 1"), "{err}");
    let e = state_of(&cfg, &id);
    assert_eq!(e["state"], "sent", "{e}");
    assert_eq!(e.get("fate_unknown"), None, "{e}");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(copies("alice", &id).len(), 1);
}

#[test]
fn connection_dropped_during_data_is_retried_with_the_same_message_id() {
    if !mail_server() {
        return;
    }
    let port = cutting_proxy();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = through_proxy(tmp.path(), port);
    let id = report(&cfg, tmp.path(), "alice@example.test", &[]);
    let err = stderr(&perfbot(&cfg, &["send"]));
    assert!(err.contains("failed 1"), "{err}");
    assert_eq!(
        copies("alice", &id).len(),
        0,
        "a cut message must not arrive"
    );
    let err = ok(&perfbot(&cfg, &["send"]));
    assert!(err.contains("sent 1"), "{err}");
    let got = wait_copies("alice", &id, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(header(&got[0], "Message-ID").unwrap(), format!("<{id}>"));
    assert_eq!(state_of(&cfg, &id)["attempts"], 2);
}

#[test]
fn a_rejected_recipient_kills_that_mail_only() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &smtp_url(), "", "");
    let bad = report(&cfg, tmp.path(), "nobody@example.test", &[]);
    let good = report(&cfg, tmp.path(), "alice@example.test", &[]);
    let err = stderr(&perfbot(&cfg, &["send"]));
    assert!(err.contains("sent 1, failed 0, dead 1"), "{err}");
    let e = state_of(&cfg, &bad);
    assert_eq!(e["state"], "dead");
    let why = e["last_error"].as_str().unwrap();
    assert!(why.contains("permanent") && why.contains("550"), "{why}");
    assert!(err.contains(&bad) && err.contains("550"), "{err}");
    assert_eq!(wait_copies("alice", &good, 1).len(), 1);
}

/// One unknown Cc among good recipients: the server refuses it (550), the
/// mail goes to the others once, and the refused address is recorded.
#[test]
fn a_refused_recipient_is_left_out_and_the_others_get_the_mail() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &smtp_url(), "", "");
    let id = report(
        &cfg,
        tmp.path(),
        "alice@example.test",
        &["nobody@example.test", "list@example.test"],
    );
    let err = stderr(&perfbot(&cfg, &["send"]));
    assert!(err.contains("sent 1, failed 0, dead 0"), "{err}");
    assert!(err.contains("left out: nobody@example.test"), "{err}");
    let e = state_of(&cfg, &id);
    assert_eq!(e["state"], "sent");
    let refused = e["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{e}");
    let why = refused[0].as_str().unwrap();
    assert!(
        why.starts_with("nobody@example.test") && why.contains("550"),
        "{why}"
    );
    assert_eq!(wait_copies("alice", &id, 1).len(), 1);
    assert_eq!(wait_copies("list", &id, 1).len(), 1);
}

#[test]
fn rate_limit_holds_and_emergency_stop_halts() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(
        tmp.path(),
        &smtp_url(),
        "max_per_hour = 2\nfollowups_per_hour = 1",
        "",
    );
    let ids: Vec<String> = (0..3)
        .map(|_| report(&cfg, tmp.path(), "alice@example.test", &[]))
        .collect();
    let err = stderr(&perfbot(&cfg, &["send"]));
    assert!(
        err.contains("sent 2, failed 0, dead 0, deferred by rate limit 1"),
        "{err}"
    );
    let err = stderr(&perfbot(&cfg, &["send"]));
    assert!(
        err.contains("sent 0,") && err.contains("deferred by rate limit 1"),
        "{err}"
    );
    assert_eq!(wait_copies("alice", &ids[1], 1).len(), 1);
    assert_eq!(copies("alice", &ids[2]).len(), 0);

    // Emergency stop: the stop file halts sending; reports are still recorded.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &smtp_url(), "", "");
    std::fs::write(tmp.path().join("STOP"), "incident 42").unwrap();
    let id = report(&cfg, tmp.path(), "alice@example.test", &[]);
    let err = stderr(&perfbot(&cfg, &["send"]));
    assert!(
        err.contains("emergency stop") && err.contains("STOP"),
        "{err}"
    );
    assert_eq!(state_of(&cfg, &id)["state"], "queued");
    std::fs::remove_file(tmp.path().join("STOP")).unwrap();
    // The config flag does the same.
    let cfg = config(tmp.path(), &smtp_url(), "emergency_stop = true", "");
    let err = stderr(&perfbot(&cfg, &["send"]));
    assert!(err.contains("emergency_stop"), "{err}");
    let cfg = config(tmp.path(), &smtp_url(), "", "");
    ok(&perfbot(&cfg, &["send"]));
    assert_eq!(wait_copies("alice", &id, 1).len(), 1);
}

#[test]
fn a_dry_run_says_what_would_go_and_changes_nothing() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &smtp_url(), "", "");
    let id = report(&cfg, tmp.path(), "alice@example.test", &[]);
    // Every recipient of the second mail opted out after it was queued.
    let gone = report(&cfg, tmp.path(), "bob@example.test", &[]);
    ok(&perfbot(&cfg, &["optout", "add", "bob@example.test"]));
    let err = stderr(&perfbot(&cfg, &["send", "--dry-run"]));
    assert!(
        err.contains(&format!("would send {id} (report, case "))
            && err.contains("to alice@example.test"),
        "{err}"
    );
    assert!(
        err.contains(&format!("dead {gone} (report): no recipient left")),
        "{err}"
    );
    assert!(err.contains("would send 1"), "{err}");
    // Nothing moved: both still queued, nothing on the server.
    for m in [&id, &gone] {
        let e = state_of(&cfg, m);
        assert_eq!(e["state"], "queued", "{e}");
        assert_eq!(e["attempts"], 0, "{e}");
    }
    assert_eq!(copies("alice", &id).len(), 0);
    // The real run sends the one and buries the other.
    let err = stderr(&perfbot(&cfg, &["send"]));
    assert!(err.contains("sent 1, failed 0, dead 1"), "{err}");
    assert_eq!(wait_copies("alice", &id, 1).len(), 1);
    assert_eq!(state_of(&cfg, &gone)["state"], "dead");
}

#[test]
fn moderation_holds_until_approved() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &smtp_url(), "moderation = true", "");
    let id = report(&cfg, tmp.path(), "alice@example.test", &[]);
    assert_eq!(state_of(&cfg, &id)["state"], "held");
    let err = stderr(&perfbot(&cfg, &["send"]));
    assert!(err.contains("sent 0"), "{err}");
    ok(&perfbot(&cfg, &["outbox", "approve", &id]));
    ok(&perfbot(&cfg, &["send"]));
    assert_eq!(wait_copies("alice", &id, 1).len(), 1);
    // Dropping: a second held mail never goes.
    let id2 = report(&cfg, tmp.path(), "alice@example.test", &[]);
    ok(&perfbot(
        &cfg,
        &["outbox", "drop", &id2, "--reason", "bogus result"],
    ));
    ok(&perfbot(&cfg, &["send"]));
    let e = state_of(&cfg, &id2);
    assert_eq!(e["state"], "dead");
    assert!(e["last_error"].as_str().unwrap().contains("bogus result"));
    assert_eq!(copies("alice", &id2).len(), 0);
}

#[test]
fn optout_and_redirect() {
    if !mail_server() {
        return;
    }
    // Opted out before the report: not in the headers, not in the envelope.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &smtp_url(), "", "");
    ok(&perfbot(
        &cfg,
        &[
            "optout",
            "add",
            "Bob <BOB@example.test>",
            "--reason",
            "asked",
        ],
    ));
    let o = perfbot(&cfg, &["optout", "list"]);
    ok(&o);
    let list = String::from_utf8_lossy(&o.stdout);
    assert!(
        list.contains("bob@example.test") && list.contains("asked"),
        "{list}"
    );
    let id = report(
        &cfg,
        tmp.path(),
        "alice@example.test",
        &["bob@example.test"],
    );
    ok(&perfbot(&cfg, &["send"]));
    let got = wait_copies("alice", &id, 1);
    assert!(!header(&got[0], "Cc").unwrap_or_default().contains("bob@"));
    // Opted out after queueing: left out of the envelope at send time.
    ok(&perfbot(&cfg, &["optout", "remove", "bob@example.test"]));
    let id2 = report(
        &cfg,
        tmp.path(),
        "alice@example.test",
        &["bob@example.test"],
    );
    ok(&perfbot(&cfg, &["optout", "add", "bob@example.test"]));
    ok(&perfbot(&cfg, &["send"]));
    let got = wait_copies("alice", &id2, 1);
    assert!(header(&got[0], "Cc").unwrap().contains("bob@example.test"));
    assert_eq!(copies("bob", &id).len() + copies("bob", &id2).len(), 0);

    // Staging: the envelope goes to the redirect address only, headers unchanged.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(
        tmp.path(),
        &smtp_url(),
        "redirect_all_to = \"bob@example.test\"",
        "",
    );
    let id = report(
        &cfg,
        tmp.path(),
        "alice@example.test",
        &["list@example.test"],
    );
    ok(&perfbot(&cfg, &["send"]));
    let got = wait_copies("bob", &id, 1);
    assert_eq!(got.len(), 1);
    assert!(header(&got[0], "To")
        .unwrap()
        .contains("alice@example.test"));
    let redirected = header(&got[0], "X-Perfbot-Redirected").unwrap();
    assert!(redirected.contains("alice@example.test") && redirected.contains("list@example.test"));
    assert_eq!(copies("alice", &id).len(), 0);
    assert_eq!(copies("list", &id).len(), 0);
}

#[test]
fn followups_are_threaded_under_the_report() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &smtp_url(), "", "");
    let id = report(
        &cfg,
        tmp.path(),
        "alice@example.test",
        &["list@example.test"],
    );
    let o = perfbot(&cfg, &["cases", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let case = v[0]["id"].as_str().unwrap().to_string();
    let subject = v[0]["subject"].as_str().unwrap().to_string();
    let body = tmp.path().join("body.txt");
    std::fs::write(&body, "Any news on this one?\n").unwrap();
    ok(&perfbot(
        &cfg,
        &["cases", "reply", &case, "--body", body.to_str().unwrap()],
    ));
    // Queued twice, sent once.
    let err = ok(&perfbot(
        &cfg,
        &["cases", "reply", &case, "--body", body.to_str().unwrap()],
    ));
    assert!(err.contains("already"), "{err}");
    // An empty body, or a parent outside the thread, queues nothing.
    let empty = tmp.path().join("empty.txt");
    std::fs::write(&empty, " \n").unwrap();
    let refused = [
        (
            vec!["--body", empty.to_str().unwrap()],
            "the body is empty, nothing queued",
        ),
        (
            vec!["--body", body.to_str().unwrap(), "--parent", "elsewhere@x"],
            "<elsewhere@x> is not in case",
        ),
    ];
    for (more, why) in refused {
        let mut args = vec!["cases", "reply", &case];
        args.extend(more);
        let o = perfbot(&cfg, &args);
        // The command's mistake, as a body path that is not there.
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
    }
    ok(&perfbot(&cfg, &["send"]));
    let notes: Vec<_> = outbox(&cfg)
        .into_iter()
        .filter(|e| e["kind"] == "note")
        .collect();
    assert_eq!(notes.len(), 1);
    let nid = notes[0]["message_id"].as_str().unwrap();
    let got = wait_copies("list", nid, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(header(&got[0], "In-Reply-To").unwrap(), format!("<{id}>"));
    assert!(header(&got[0], "References")
        .unwrap()
        .contains(&format!("<{id}>")));
    assert_eq!(
        header(&got[0], "Subject").unwrap(),
        format!("Re: {subject}")
    );
    let shown = ok(&perfbot(&cfg, &["cases", "show", &case]));
    let _ = shown;
}

#[test]
fn tls_and_auth_failures_are_clear_and_secrets_stay_out_of_logs() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // Submission with STARTTLS required, a private CA and AUTH: works.
    let url = format!("smtp://127.0.0.1:{SUBMISSION_PORT}?tls=required");
    let cfg = config(tmp.path(), &url, "", "user = \"bot@example.test\"");
    let id = report(&cfg, tmp.path(), "alice@example.test", &[]);
    let o = perfbot_env(
        &cfg,
        &["send"],
        &[("PERFBOT_SMTP_PASSWORD", "secret"), ("RUST_LOG", "trace")],
    );
    let err = ok(&o);
    assert!(err.contains("sent 1"), "{err}");
    // Neither the word nor its AUTH PLAIN encoding (rustls' own trace lines
    // say "extended_master_secret", hence the word boundaries).
    let word = regex::Regex::new(r"\bsecret\b").unwrap();
    assert!(
        !word.is_match(&err),
        "the password must not be logged:\n{err}"
    );
    assert!(!err.contains("AGJvdEBleGFtcGxlLnRlc3QAc2VjcmV0"), "{err}");
    assert_eq!(wait_copies("alice", &id, 1).len(), 1);

    // Wrong password: an operator's error, not the mail's. Sending stops, the
    // mail stays queued (no attempt counted), and `send` fails saying why.
    let id = report(&cfg, tmp.path(), "alice@example.test", &[]);
    let id2 = report(&cfg, tmp.path(), "alice@example.test", &[]);
    let o = perfbot_env(
        &cfg,
        &["send"],
        &[
            ("PERFBOT_SMTP_PASSWORD", "wrong-pw-123"),
            ("RUST_LOG", "trace"),
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("refused perfbot"), "{err}");
    assert!(
        !err.contains("wrong-pw-123"),
        "the password must not be logged"
    );
    for i in [&id, &id2] {
        let e = state_of(&cfg, i);
        assert_eq!(e["state"], "queued", "{e}");
        assert_eq!(e["attempts"], 0, "{e}");
        assert!(e["last_error"].as_str().unwrap().contains("535"), "{e}");
    }

    // The password from a file works too: the kept mail goes, nothing to retry.
    let pw = tmp.path().join("pw");
    std::fs::write(&pw, "secret\n").unwrap();
    let cfg = config(
        tmp.path(),
        &url,
        "",
        &format!("user = \"bot@example.test\"\npassword_file = {pw:?}"),
    );
    ok(&perfbot(&cfg, &["send"]));
    assert_eq!(wait_copies("alice", &id, 1).len(), 1);
    assert_eq!(wait_copies("alice", &id2, 1).len(), 1);

    // TLS failure: implicit TLS against a plain-text port.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(
        tmp.path(),
        &format!("smtps://127.0.0.1:{SMTP_PORT}"),
        "",
        "",
    );
    let id = report(&cfg, tmp.path(), "alice@example.test", &[]);
    let err = stderr(&perfbot(&cfg, &["send"]));
    assert!(err.contains("failed 1"), "{err}");
    let e = state_of(&cfg, &id);
    assert_eq!(e["state"], "failed");
    // And STARTTLS without trusting the private CA: a certificate error.
    let cfg = config(tmp.path(), &format!("{}?tls=required", smtp_url()), "", "").to_path_buf();
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace(&format!("ca_file = {:?}", ca_file()), "");
    std::fs::write(&cfg, text).unwrap();
    ok(&perfbot(&cfg, &["outbox", "retry", &id]));
    perfbot(&cfg, &["send"]);
    let e = state_of(&cfg, &id);
    let why = e["last_error"].as_str().unwrap().to_lowercase();
    assert!(why.contains("certificate") || why.contains("tls"), "{why}");
}

/// TLS from the first byte (`smtps://`, `imaps://`) carries mail both ways,
/// trusting the private CA. A CA file that cannot be used is named with its
/// setting before any connection; one that does not vouch for the server
/// fails the handshake, said as TLS.
#[test]
fn implicit_tls_carries_mail_and_ca_files_are_checked() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let imap = |url: &str, ca: &Path| {
        format!(
            "[inbound]\nsource = \"imap\"\n[imap]\nurl = \"{url}\"\n\
             user = \"bot@example.test\"\nca_file = {ca:?}\n"
        )
    };
    let with_ca = |ca: &Path| {
        let cfg = config(
            tmp.path(),
            &format!("smtps://127.0.0.1:{SUBMISSIONS_PORT}"),
            "",
            "user = \"bot@example.test\"",
        );
        let text = std::fs::read_to_string(&cfg).unwrap().replace(
            &format!("ca_file = {:?}", ca_file()),
            &format!("ca_file = {ca:?}"),
        );
        let text = text + &imap(&format!("imaps://127.0.0.1:{IMAPS_PORT}"), ca);
        std::fs::write(&cfg, text).unwrap();
        cfg
    };
    let pw = [
        ("PERFBOT_SMTP_PASSWORD", "secret"),
        ("PERFBOT_IMAP_PASSWORD", "secret"),
    ];
    let cfg = with_ca(&ca_file());
    let o = perfbot_env(&cfg, &["check"], &pw);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    for line in ["ok    sending: ", "ok    reading: "] {
        assert!(out.contains(line), "{line}: {out}");
    }
    let id = report(&cfg, tmp.path(), "alice@example.test", &[]);
    let err = ok(&perfbot_env(&cfg, &["send"], &pw));
    assert!(err.contains("sent 1,"), "{err}");
    assert_eq!(wait_copies("alice", &id, 1).len(), 1);

    // Files that are no CA: refused as the config's error (exit 2), each
    // naming its setting and path.
    let bad = [
        ("empty.pem", "", "no certificate in it"),
        (
            "key.pem",
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            "no certificate in it",
        ),
        (
            "junk.pem",
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
            "certificate 1: not a usable certificate",
        ),
    ];
    for (name, text, why) in bad {
        let ca = tmp.path().join(name);
        std::fs::write(&ca, text).unwrap();
        let o = perfbot_env(&with_ca(&ca), &["check"], &pw);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(2), "{out}");
        for setting in ["smtp.ca_file", "imap.ca_file"] {
            let said = format!("{setting} {}: {why}", ca.display());
            assert!(out.contains(&said), "{said}: {out}");
        }
    }

    // A real CA, but not the server's: the handshake fails, said as TLS.
    let other = tmp.path().join("other-ca.pem");
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
        ])
        .args(["-nodes", "-days", "1", "-subj", "/CN=another CA", "-keyout"])
        .arg(tmp.path().join("other-key.pem"))
        .arg("-out")
        .arg(&other)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let o = perfbot_env(&with_ca(&other), &["check"], &pw);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let reading = out
        .lines()
        .find(|l| l.contains("reading: "))
        .unwrap_or_default();
    assert!(
        reading.starts_with("FAIL")
            && reading.contains(&format!("TLS with 127.0.0.1:{IMAPS_PORT}")),
        "{out}"
    );
    assert!(reading.contains("UnknownIssuer"), "{out}");
    let sending = out
        .lines()
        .find(|l| l.contains("sending: "))
        .unwrap_or_default();
    assert!(sending.starts_with("FAIL"), "{out}");
    assert!(sending.to_lowercase().contains("certificate"), "{out}");
}

#[test]
fn kill_9_while_sending_loses_nothing_and_never_changes_a_message_id() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &smtp_url(), "concurrency = 1", "");
    let ids: Vec<String> = (0..24)
        .map(|_| report(&cfg, tmp.path(), "alice@example.test", &[]))
        .collect();
    // Kill the sender at a few different instants, then let a last run finish.
    let mut progress = Vec::new();
    let domain = id_domain(tmp.path());
    for target in [1usize, 8, 16] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_perfbot"))
            .arg("--config")
            .arg(&cfg)
            .arg("send")
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Kill as soon as the server has taken `target` of them: mid-run.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while count_matching("alice", &domain) < target && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let states: Vec<String> = outbox(&cfg)
            .iter()
            .map(|e| e["state"].as_str().unwrap().to_string())
            .collect();
        eprintln!("killed after {target} arrived: {states:?}");
        progress.push(states.iter().filter(|s| *s == "sent").count());
    }
    // The kills landed in the middle of the work, not before or after it.
    assert!(progress.iter().any(|n| *n > 0 && *n < 24), "{progress:?}");
    ok(&perfbot(&cfg, &["send"]));
    let entries = outbox(&cfg);
    assert_eq!(entries.len(), 24);
    let mut dupes = 0;
    for id in &ids {
        let got = wait_copies("alice", id, 1);
        assert!(!got.is_empty(), "{id} was lost");
        // At most the one unavoidable resend, and always under the same id.
        assert!(got.len() <= 2, "{id} arrived {} times", got.len());
        dupes += got.len() - 1;
        for raw in &got {
            assert_eq!(header(raw, "Message-ID").unwrap(), format!("<{id}>"));
        }
        let e = entries
            .iter()
            .find(|e| e["message_id"] == *id.as_str())
            .unwrap();
        assert_eq!(e["state"], "sent");
    }
    // Each kill can hit the window at most once.
    assert!(dupes <= 3, "{dupes} duplicates");
}
