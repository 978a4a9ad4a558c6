//! `perfbot check` against the real mail servers on loopback (Postfix,
//! Dovecot): what works says so, and each failure is named on its own line
//! with exit 1; a config that cannot work is exit 2, as for `run`. Needs
//! `.ci/mailserver/start-mail.sh`.

mod common;

use std::path::{Path, PathBuf};

use common::*;

/// `check`'s stdout, and its exit code.
fn check(cfg: &Path, args: &[&str], env: &[(&str, &str)]) -> (String, Option<i32>) {
    let o = perfbot_env(cfg, &[&["check"][..], args].concat(), env);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    (format!("{out}{}", stderr(&o)), o.status.code())
}

/// The line of `what` (e.g. `sending`) that starts with `level`.
fn line<'a>(out: &'a str, level: &str, what: &str) -> Option<&'a str> {
    let head = format!("{level:<4}  {what}: ");
    out.lines().find(|l| l.starts_with(&head))
}

/// The default config's set-up: nothing to reach, nobody mailed.
#[test]
fn the_default_set_up_checks_out_offline() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("config.toml")).unwrap();
    let cfg = tmp.path().join("config.toml");
    std::fs::write(&cfg, text).unwrap();
    std::fs::create_dir(tmp.path().join("templates")).unwrap();
    let (out, code) = check(&cfg, &[], &[]);
    assert_eq!(code, Some(0), "{out}");
    for (what, says) in [
        ("state", "no database yet"),
        ("sending", "file outbox"),
        ("recipients", "nobody is mailed"),
        ("reading", "maildir"),
        ("templates", "compile"),
    ] {
        let l = line(&out, "ok", what).unwrap_or_else(|| panic!("no ok {what}: {out}"));
        assert!(l.contains(says), "{l}");
    }
    assert!(
        !tmp.path().join("state/db").exists(),
        "check made the database"
    );
    // After a report, the state says what it holds; an emergency stop and
    // an old copy of a template are warnings, not failures.
    let input = input(tmp.path(), "alice@example.test", &[]);
    ok(&perfbot(&cfg, &["report", input.to_str().unwrap()]));
    std::fs::write(tmp.path().join("templates/digest.hbs"), "{{generated}}\n").unwrap();
    let text = std::fs::read_to_string(&cfg).unwrap();
    let stopped = text.replacen("[outbound]\n", "[outbound]\nemergency_stop = true\n", 1);
    assert_ne!(text, stopped);
    std::fs::write(&cfg, stopped).unwrap();
    let (out, code) = check(&cfg, &[], &[]);
    assert_eq!(code, Some(0), "{out}");
    let state = line(&out, "ok", "state").unwrap();
    assert!(
        state.contains("1 cases (1 open); outbox 1 mails"),
        "{state}"
    );
    let stop = line(&out, "warn", "sending").unwrap_or_else(|| panic!("{out}"));
    assert!(stop.contains("emergency_stop"), "{stop}");
    let old = line(&out, "warn", "templates").unwrap_or_else(|| panic!("{out}"));
    assert!(old.contains("digest.hbs: this copy never names"), "{old}");

    // The dashboard's address taken by another program: `run` could not
    // start, so the check fails.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let at = taken.local_addr().unwrap();
    let text = std::fs::read_to_string(&cfg).unwrap();
    let listen = text.replacen(
        "listen = \"127.0.0.1:8080\"",
        &format!("listen = \"{at}\""),
        1,
    );
    assert_ne!(text, listen);
    std::fs::write(&cfg, listen).unwrap();
    let (out, code) = check(&cfg, &[], &[]);
    assert_eq!(code, Some(1), "{out}");
    let l = line(&out, "FAIL", "dashboard").unwrap_or_else(|| panic!("{out}"));
    assert!(l.contains(&format!("http://{at}/")), "{l}");
    drop(taken);
    let (out, code) = check(&cfg, &[], &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(line(&out, "ok", "dashboard").is_some(), "{out}");
}

/// SMTP: the real server takes the login; a wrong password and a port with
/// no server each fail on the sending line, and the password is never shown.
#[test]
fn check_tries_the_smtp_login() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("smtp://127.0.0.1:{SUBMISSION_PORT}?tls=required");
    let cfg = config(tmp.path(), &url, "", "user = \"bot@example.test\"");
    let (out, code) = check(&cfg, &[], &[("PERFBOT_SMTP_PASSWORD", "secret")]);
    assert_eq!(code, Some(0), "{out}");
    let l = line(&out, "ok", "sending").unwrap_or_else(|| panic!("{out}"));
    assert!(l.contains("answers and takes the login"), "{l}");
    let r = line(&out, "ok", "recipients").unwrap();
    assert!(r.contains("no list copied"), "{r}");

    let (out, code) = check(&cfg, &[], &[("PERFBOT_SMTP_PASSWORD", "wrong-pw-123")]);
    assert_eq!(code, Some(1), "{out}");
    assert!(line(&out, "FAIL", "sending").is_some(), "{out}");
    assert!(out.contains("1 of "), "{out}");
    assert!(
        !out.contains("wrong-pw-123"),
        "the password must not be shown"
    );
    // --offline connects to nothing.
    let (out, code) = check(
        &cfg,
        &["--offline"],
        &[("PERFBOT_SMTP_PASSWORD", "wrong-pw-123")],
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("not tried: --offline"), "{out}");

    let cfg = config(
        tmp.path(),
        &format!("smtp://127.0.0.1:{}?tls=none", free_port()),
        "",
        "",
    );
    let (out, code) = check(&cfg, &[], &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(line(&out, "FAIL", "sending").is_some(), "{out}");
    // A user without a password cannot work at all: a usage error, as
    // `run`; the other lines are still printed.
    let cfg = config(tmp.path(), &url, "", "user = \"bot@example.test\"");
    let (out, code) = check(&cfg, &[], &[]);
    assert_eq!(code, Some(2), "{out}");
    let l = line(&out, "FAIL", "sending").unwrap_or_else(|| panic!("{out}"));
    assert!(l.contains("no password"), "{l}");
    assert!(line(&out, "ok", "reading").is_some(), "{out}");
}

fn imap_config(dir: &Path, mailbox: &str) -> PathBuf {
    let text = format!(
        r#"
[bot]
state_dir = {state:?}

[report]
templates_dir = {templates:?}

{imap}"#,
        state = dir.join("state"),
        templates = root().join("templates"),
        imap = imap_sections(&format!("mailbox = {mailbox:?}\ntimeout_secs = 10")),
    );
    let p = dir.join("config.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// IMAP: the real server takes the login and has the mailbox; a mailbox
/// it lacks and a wrong password fail on the reading line.
#[test]
fn check_tries_the_imap_login_and_mailbox() {
    if !mail_server() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let pw = [("PERFBOT_IMAP_PASSWORD", "secret")];
    let cfg = imap_config(tmp.path(), "INBOX");
    let (out, code) = check(&cfg, &[], &pw);
    assert_eq!(code, Some(0), "{out}");
    let l = line(&out, "ok", "reading").unwrap_or_else(|| panic!("{out}"));
    assert!(l.contains("logged in, the mailbox is there"), "{l}");

    let cfg = imap_config(tmp.path(), "No-Such-Box");
    let (out, code) = check(&cfg, &[], &pw);
    assert_eq!(code, Some(1), "{out}");
    assert!(line(&out, "FAIL", "reading").is_some(), "{out}");

    let cfg = imap_config(tmp.path(), "INBOX");
    let (out, code) = check(&cfg, &[], &[("PERFBOT_IMAP_PASSWORD", "wrong-pw-123")]);
    assert_eq!(code, Some(1), "{out}");
    let l = line(&out, "FAIL", "reading").unwrap_or_else(|| panic!("{out}"));
    assert!(l.contains("login"), "{l}");
    assert!(
        !out.contains("wrong-pw-123"),
        "the password must not be shown"
    );
}

/// While `perfbot run` holds the state and the dashboard's address, the
/// check says so and passes; it waits for nothing.
#[test]
fn check_beside_a_running_daemon() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("config.toml")).unwrap();
    let port = free_port();
    let text = text.replacen(
        "listen = \"127.0.0.1:8080\"",
        &format!("listen = \"127.0.0.1:{port}\""),
        1,
    );
    let cfg = tmp.path().join("config.toml");
    std::fs::write(&cfg, text).unwrap();
    std::fs::create_dir(tmp.path().join("templates")).unwrap();
    let mut daemon = std::process::Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(&cfg)
        .arg("run")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_dashboard(port);
    let (out, code) = check(&cfg, &[], &[]);
    unsafe {
        libc::kill(daemon.id() as i32, libc::SIGTERM);
    }
    assert!(daemon.wait().unwrap().success());
    assert_eq!(code, Some(0), "{out}");
    let state = line(&out, "ok", "state").unwrap_or_else(|| panic!("{out}"));
    assert!(state.contains("held by a running `perfbot run`"), "{state}");
    let web = line(&out, "ok", "dashboard").unwrap_or_else(|| panic!("{out}"));
    assert!(web.contains("(the running daemon's)"), "{web}");
}
