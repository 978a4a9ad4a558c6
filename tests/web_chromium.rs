//! The dashboard in a real headless Chromium: the list links to the case, the
//! case page shows the reply with its evidence highlighted, and nothing from
//! the mail runs as script (a reply full of `<script>` and `onerror=` shows as
//! text). Needs Debian's `chromium` (installed by `.ci/test`).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{free_port, root, Daemon};

fn chromium() -> Option<PathBuf> {
    if std::env::var("PERFBOT_SKIP_BROWSER_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("browser tests skipped (PERFBOT_SKIP_BROWSER_TESTS=1)");
        return None;
    }
    for p in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(p).exists() {
            return Some(PathBuf::from(p));
        }
    }
    panic!("no chromium: install Debian's chromium (`.ci/test` does), or set PERFBOT_SKIP_BROWSER_TESTS=1");
}

/// The DOM after the page's scripts ran.
fn dump_dom(chrome: &Path, profile: &Path, url: &str) -> String {
    let o = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--no-first-run",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(url)
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "chromium failed on {url}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn dashboard_in_headless_chromium_shows_evidence_and_runs_no_mail_script() {
    let Some(chrome) = chromium() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = tmp.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            r#"
[bot]
state_dir = {state:?}
email = "perfbot@ci.example"
[report]
templates_dir = {templates:?}
[outbound]
outbox_dir = {outbox:?}
[inbound]
maildir = {inbox:?}
[web]
listen = "127.0.0.1:{port}"
templates_dir = {web:?}
[run]
poll_every_secs = 1
send_every_secs = 1
"#,
            state = tmp.path().join("state"),
            templates = root().join("templates"),
            web = root().join("templates/web"),
            outbox = tmp.path().join("state/outbox"),
            inbox = tmp.path().join("inbox"),
        ),
    )
    .unwrap();
    let perfbot = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_perfbot"))
            .arg("--config")
            .arg(&cfg)
            .args(args)
            .current_dir(root())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o
    };
    perfbot(&["report", "examples/seed002-xfs-fio-falloc-2022.json"]);
    let v: serde_json::Value =
        serde_json::from_slice(&perfbot(&["cases", "list", "--json"]).stdout).unwrap();
    let (id, mid) = (
        v[0]["id"].as_str().unwrap().to_string(),
        v[0]["message_id"].as_str().unwrap().to_string(),
    );
    // A hostile reply from the author: scripts in the subject, the words and
    // the name; the decision is still read.
    let new = tmp.path().join("inbox/new");
    std::fs::create_dir_all(&new).unwrap();
    std::fs::create_dir_all(tmp.path().join("inbox/cur")).unwrap();
    std::fs::write(
        new.join("1.hostile"),
        format!(
            "From: \"<img src=x onerror=document.body.setAttribute('data-pwned','name')>\" <dchinner@xfs.example>\r\n\
             Subject: Re: <script>document.body.setAttribute('data-pwned','subject')</script>\r\n\
             Message-ID: <hostile@x>\r\nIn-Reply-To: <{mid}>\r\n\r\n\
             > quoted regression\r\n\
             <script>document.body.setAttribute('data-pwned','body')</script>\r\n\
             <img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">\r\n\r\n\
             This is not a regression, the latency bins moved.\r\n"
        ),
    )
    .unwrap();
    let daemon = Daemon(Some(
        Command::new(env!("CARGO_BIN_EXE_perfbot"))
            .arg("--config")
            .arg(&cfg)
            .arg("run")
            // With a token, the case page carries the settle and label
            // forms, which name the thread's replies by their senders.
            .env("PERFBOT_WEB_TOKEN", "chromium-t0ken")
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    ));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let closed = common::http_get(port, &format!("/api/cases/{id}"))
            .and_then(|b| serde_json::from_str::<serde_json::Value>(&b).ok())
            .is_some_and(|v| v["case"]["state"] == "not-a-regression");
        if closed {
            break;
        }
        assert!(Instant::now() < deadline, "the reply was not applied");
        std::thread::sleep(Duration::from_millis(100));
    }

    let profile = tmp.path().join("chromium-profile");
    // The list: a link to the case.
    let list = dump_dom(&chrome, &profile, &format!("http://127.0.0.1:{port}/"));
    let href = format!("href=\"/case/{id}\"");
    assert!(list.contains(&href), "{list}");
    assert!(list.contains("not-a-regression"), "{list}");
    // Follow it, as a person would.
    let page = dump_dom(
        &chrome,
        &profile,
        &format!("http://127.0.0.1:{port}/case/{id}"),
    );
    assert!(
        page.contains(
            "<mark class=\"evidence\">This is not a regression, the latency bins moved.</mark>"
        ),
        "{page}"
    );
    // The mail's markup is text, and none of it ran: had any of it run, the
    // <body> element would carry the attribute it sets.
    let ran = regex::Regex::new(r#"<body[^>]*data-pwned"#).unwrap();
    assert!(!ran.is_match(&page), "script from mail ran:\n{page}");
    assert!(page.contains("&lt;img src=x onerror="), "{page}");
    assert!(
        page.contains("&lt;script&gt;document.body.setAttribute"),
        "{page}"
    );
    assert!(!page.contains("<img src=\"x\""), "{page}");
    // The forms list the hostile reply by its sender's name, as text.
    for form in ["id=\"settle\"", "id=\"label\""] {
        assert!(page.contains(form), "{page}");
    }
    assert!(page.contains("<option value=\"hostile@x\">"), "{page}");
    // The digest page renders in the browser too.
    let digest = dump_dom(
        &chrome,
        &profile,
        &format!("http://127.0.0.1:{port}/digest"),
    );
    assert!(digest.contains("This is not a regression"), "{digest}");
    assert!(!ran.is_match(&digest), "{digest}");
    drop(daemon);
}
