//! Trust under faults and bad input, through the `perfbot` binary: a damaged
//! database is never taken for a new one, two commands at once never lose a
//! report, numbers in mail are numbers, bad input is an input error (exit 2)
//! naming the field, no input makes perfbot panic, and the dashboard cannot be
//! starved by half-open connections.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{
    event_to, free_port, http_get, ok, perfbot, root, stderr, wait_for_dashboard, wait_for_or,
    Daemon,
};

/// A file-outbox config whose state lives in `dir`, plus `extra` TOML.
fn setup(dir: &Path, extra: &str) -> PathBuf {
    let text = format!(
        r#"
[bot]
state_dir = {state:?}
email = "perfbot@ci.example"
message_id_domain = "perfbot.ci.example"

[report]
templates_dir = {templates:?}

[outbound]
transport = "file"
outbox_dir = {outbox:?}

[inbound]
maildir = {inbox:?}

[run]
spool_dir = {spool:?}
poll_every_secs = 1

{extra}
"#,
        state = dir.join("state"),
        templates = root().join("templates"),
        outbox = dir.join("state/outbox"),
        inbox = dir.join("state/inbox"),
        spool = dir.join("state/spool"),
    );
    let p = dir.join("config.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Seed 002's input with `edit` applied, written into `dir`.
fn input_with(dir: &Path, name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let text =
        std::fs::read_to_string(root().join("examples/seed002-xfs-fio-falloc-2022.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut v);
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    p
}

fn sha(n: u32) -> String {
    format!("{:040x}", 0x5eed_0000u64 + n as u64)
}

fn outbox_files(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("state/outbox"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
                .count()
        })
        .unwrap_or(0)
}

/// The text of every mail in the outbox (a report in ISO 8859-1 read
/// lossily: the tests look for ASCII in it).
fn outbox_mails(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join("state/outbox"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "eml"))
                .map(|e| String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The mails in the outbox once there are `n`, or after 20 s.
fn outbox_after_waiting(dir: &Path, n: usize) -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while outbox_files(dir) < n && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    outbox_files(dir)
}

#[test]
fn a_damaged_database_is_never_taken_for_a_new_one() {
    // (what is done to the database, young or with 30 cases)
    type Damage = (&'static str, fn(&Path));
    let damages: &[Damage] = &[
        ("zero-length", |db| {
            std::fs::write(db.join("db"), b"").unwrap()
        }),
        ("truncated", |db| {
            // Cut into what was written (sled may have sized the file to a
            // whole segment, zeros past the data).
            let written = std::fs::read(db.join("db"))
                .unwrap()
                .iter()
                .rposition(|&b| b != 0)
                .map_or(0, |i| i + 1) as u64;
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(db.join("db"))
                .unwrap();
            f.set_len(written / 3).unwrap();
        }),
        ("random bytes", |db| {
            let len = std::fs::metadata(db.join("db")).unwrap().len() as usize;
            let mut x: u64 = 0x2545_f491_4f6c_dd1d;
            let bytes: Vec<u8> = (0..len.max(4096))
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            std::fs::write(db.join("db"), bytes).unwrap();
        }),
        ("removed", |db| std::fs::remove_dir_all(db).unwrap()),
    ];
    let mut afresh = Vec::new();
    for cases in [1u32, 30] {
        for (what, damage) in damages {
            let tmp = tempfile::tempdir().unwrap();
            let cfg = setup(tmp.path(), "");
            let inputs: Vec<PathBuf> = (0..cases)
                .map(|n| {
                    input_with(tmp.path(), &format!("in{n}.json"), |v| {
                        v["commit"]["sha"] = sha(n).into()
                    })
                })
                .collect();
            let mut args = vec!["report"];
            args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
            ok(&perfbot(&cfg, &args));
            assert_eq!(outbox_files(tmp.path()), cases as usize);
            damage(&tmp.path().join("state/db"));

            let o = perfbot(&cfg, &["cases", "list"]);
            assert_eq!(code(&o), 1, "{what}, {cases} case(s): {}", stderr(&o));
            let err = stderr(&o);
            assert!(
                err.contains("state database")
                    && (err.contains("damaged") || err.contains("missing")),
                "{what}: {err}"
            );
            // The next report must not go out a second time.
            let o = perfbot(&cfg, &["report", inputs[0].to_str().unwrap()]);
            assert_eq!(code(&o), 1, "{what}: {}", stderr(&o));
            assert_eq!(
                outbox_files(tmp.path()),
                cases as usize,
                "{what}: a report went out again"
            );
            // The refusal's own way to start afresh works, at the first try.
            if let Some(paths) = to_move_aside(&err) {
                let aside = tmp.path().join("aside");
                std::fs::create_dir_all(&aside).unwrap();
                for (n, p) in paths.iter().enumerate() {
                    std::fs::rename(p, aside.join(n.to_string())).unwrap();
                }
                let o = perfbot(&cfg, &["cases", "list"]);
                assert_eq!(code(&o), 0, "{what}: {err} → {}", stderr(&o));
                assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "no cases");
                afresh.push(*what);
            }
        }
    }
    // At least the removed database's refusal says how to start afresh.
    assert!(afresh.contains(&"removed"), "{afresh:?}");
}

/// The files a refusal says to move aside to start a new database:
/// "(or move A, B and C aside to start a new, empty database)".
fn to_move_aside(err: &str) -> Option<Vec<PathBuf>> {
    let (_, rest) = err.split_once("(or move ")?;
    let (list, _) = rest.split_once(" aside to start a new")?;
    let list = list.replace(" and ", ", ");
    Some(list.split(", ").map(PathBuf::from).collect())
}

/// A state directory whose database and marker were removed, but not its
/// generation file, is not taken for a new one either; moving that file
/// aside starts afresh, and nothing was half made meanwhile.
#[test]
fn a_database_gone_with_its_marker_is_still_known_by_its_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let input = input_with(tmp.path(), "in.json", |_| {});
    ok(&perfbot(&cfg, &["report", input.to_str().unwrap()]));
    let state = tmp.path().join("state");
    std::fs::remove_dir_all(state.join("db")).unwrap();
    std::fs::remove_file(state.join("db.marker")).unwrap();
    let o = perfbot(&cfg, &["cases", "list"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("db.generation says one made"),
        "{}",
        stderr(&o)
    );
    assert!(!state.join("db").exists() && !state.join("db.marker").exists());
    for p in to_move_aside(&stderr(&o)).expect("a way to start afresh") {
        std::fs::rename(&p, tmp.path().join("generation.aside")).unwrap();
    }
    let o = perfbot(&cfg, &["cases", "list"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

/// `kill -9` while the very first command makes the database, at instants
/// spread over its start-up: the next command opens a database (new, or the
/// one made) and never finds a half-made one it must refuse.
#[test]
fn a_kill_while_the_database_is_made_leaves_none_half_made() {
    let tmp = tempfile::tempdir().unwrap();
    let mut refused = Vec::new();
    for n in 0..40u64 {
        let dir = tmp.path().join(format!("run{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = setup(&dir, "");
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_perfbot"))
            .arg("--config")
            .arg(&cfg)
            .args(["cases", "list"])
            .current_dir(root())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // 0 to 39 ms: from before sled starts to after the marker is written.
        std::thread::sleep(std::time::Duration::from_millis(n));
        let _ = child.kill();
        let _ = child.wait();
        let o = perfbot(&cfg, &["cases", "list"]);
        if code(&o) != 0 {
            refused.push(format!("killed after {n} ms: {}", stderr(&o)));
        }
    }
    assert!(refused.is_empty(), "{refused:#?}");
}

#[test]
fn a_replaced_database_is_refused_and_one_without_marker_is_adopted() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let (cfg_a, cfg_b) = (setup(a.path(), ""), setup(b.path(), ""));
    let input = input_with(a.path(), "in.json", |_| {});
    ok(&perfbot(&cfg_a, &["report", input.to_str().unwrap()]));
    ok(&perfbot(&cfg_b, &["cases", "list"]));
    // Another state directory's database copied over this one.
    std::fs::remove_dir_all(a.path().join("state/db")).unwrap();
    copy_dir(&b.path().join("state/db"), &a.path().join("state/db"));
    let o = perfbot(&cfg_a, &["cases", "list"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("replaced"), "{}", stderr(&o));
    // A database from before markers (or whose marker was lost) is adopted.
    std::fs::remove_file(b.path().join("state/db.marker")).unwrap();
    ok(&perfbot(&cfg_b, &["cases", "list"]));
    assert!(b.path().join("state/db.marker").exists());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn two_reports_at_once_without_a_daemon_both_land() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let inputs: Vec<PathBuf> = (0..6)
        .map(|n| {
            input_with(tmp.path(), &format!("in{n}.json"), |v| {
                v["commit"]["sha"] = sha(100 + n).into()
            })
        })
        .collect();
    let children: Vec<_> = inputs
        .iter()
        .map(|i| {
            std::process::Command::new(env!("CARGO_BIN_EXE_perfbot"))
                .arg("--config")
                .arg(&cfg)
                .arg("report")
                .arg(i)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        let err = stderr(&o);
        assert!(o.status.success(), "{err}");
        assert!(!err.contains("handed to it"), "spooled to no daemon: {err}");
    }
    let o = ok(&perfbot(&cfg, &["cases", "list", "--json"]));
    let _ = o;
    let list = perfbot(&cfg, &["cases", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 6);
    assert_eq!(outbox_files(tmp.path()), 6);
}

#[test]
fn a_command_that_cannot_get_the_database_says_so_and_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "poll_every_secs = 1",
        "poll_every_secs = 1\nlock_wait_secs = 1",
    );
    std::fs::write(&cfg, text).unwrap();
    ok(&perfbot(&cfg, &["cases", "list"]));
    // This test process holds the database, as a long command would.
    let store = perfbot::store::Store::open(&tmp.path().join("state")).unwrap();
    let input = input_with(tmp.path(), "in.json", |_| {});
    let t0 = std::time::Instant::now();
    let o = perfbot(&cfg, &["report", input.to_str().unwrap()]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("still in use"), "{}", stderr(&o));
    assert!(t0.elapsed() >= std::time::Duration::from_secs(1));
    assert!(
        !tmp.path().join("state/spool").exists(),
        "spooled to no daemon"
    );
    drop(store);
    ok(&perfbot(&cfg, &["report", input.to_str().unwrap()]));
}

#[test]
fn numbers_in_mail_are_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let print = |p: &Path| perfbot(&cfg, &["report", "--print", p.to_str().unwrap()]);
    // Samples too large for their squares: an input error naming the sample.
    let huge = input_with(tmp.path(), "huge.json", |v| {
        v["tests"][0]["aggregated"] = serde_json::Value::Null;
        v["tests"][0].as_object_mut().unwrap().remove("aggregated");
        v["tests"][0]["samples"] = serde_json::json!({
            "base": {"fio.write_iops": [1e308, 1e308, 1e308]},
            "head": {"fio.write_iops": [1e307, 1e307, 1e307]},
        });
    });
    let o = print(&huge);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("samples.base.\"fio.write_iops\"[0]"),
        "{}",
        stderr(&o)
    );
    // Pre-aggregated: the same.
    let agg = input_with(tmp.path(), "agg.json", |v| {
        v["tests"][0]["aggregated"][0]["base"] = serde_json::json!(1e308);
        v["tests"][0]["aggregated"][0]["head"] = serde_json::json!(-1e308);
    });
    let o = print(&agg);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("aggregated[0].base"), "{}", stderr(&o));
    // A zero or negative base is no headline (a percent of it means nothing).
    for (name, base) in [("zero.json", 0.0), ("negative.json", -3.0)] {
        let p = input_with(tmp.path(), name, |v| {
            let rows = serde_json::json!([
                {"metric": "fio.write_iops", "base": base, "head": 1000.0}
            ]);
            v["tests"] = serde_json::json!([v["tests"][0].clone()]);
            v["tests"][0]["aggregated"] = rows;
            v["tests"][0].as_object_mut().unwrap().remove("bisect");
        });
        let o = print(&p);
        assert_eq!(code(&o), 3, "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("percent change says nothing"),
            "{}",
            stderr(&o)
        );
        // Forced, the figure is lkp's, never a 100-digit number.
        let forced = input_with(tmp.path(), &format!("forced-{name}"), |v| {
            let mut w: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            w["headline"] = serde_json::json!({"metric": "fio.write_iops"});
            *v = w;
        });
        let o = perfbot(
            &cfg,
            &["report", "--print", "--force", forced.to_str().unwrap()],
        );
        let mail = String::from_utf8_lossy(&o.stdout);
        assert!(
            !mail.contains("NaN") && !mail.to_lowercase().contains("inf%"),
            "{mail}"
        );
        for line in mail.lines() {
            assert!(
                !line
                    .split(|c: char| !c.is_ascii_digit())
                    .any(|run| run.len() > 20),
                "{name}: a huge figure: {line}"
            );
        }
    }
}

#[test]
fn bad_input_is_an_input_error_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let print = |p: &Path| perfbot(&cfg, &["report", "--print", p.to_str().unwrap()]);
    let long = "x".repeat(5000);
    // (file, edit, the words the error must contain)
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "string-sample.json",
            Box::new(|v| {
                v["tests"] = serde_json::json!([v["tests"][0].clone()]);
                v["tests"][0].as_object_mut().unwrap().remove("aggregated");
                v["tests"][0].as_object_mut().unwrap().remove("bisect");
                v["tests"][0]["samples"] = serde_json::json!({
                    "base": {"fio.write_iops": ["41000", 41200, 40800]},
                    "head": {"fio.write_iops": [37000, 37100, 36900]},
                });
            }),
            "samples.base.\"fio.write_iops\"",
        ),
        (
            "stddev-typo.json",
            Box::new(|v| {
                v["tests"][0]["aggregated"][0]["base"] =
                    serde_json::json!({"mean": 100.0, "stddev": 5});
            }),
            "unknown field `stddev`",
        ),
        (
            "long-branch.json",
            Box::new(move |v| v["tree"]["branch"] = long.clone().into()),
            "$.tree.branch",
        ),
        (
            "attachment-typo.json",
            Box::new(|v| v["attachments"] = serde_json::json!([{"name": "x", "file": "y"}])),
            "$.attachments[0]: a file name, or {\"name\", \"path\"}",
        ),
        (
            "attachment-header-injection.json",
            Box::new(|v| v["attachments"] = serde_json::json!(["x\"; name=\"evil"])),
            "$.attachments[0]: a file name",
        ),
        (
            "remark-opens-a-section.json",
            Box::new(|v| {
                v["style"]["remarks"] = serde_json::json!([
                    {"before": "details", "text": "see\ncommit: 1234"}
                ])
            }),
            "$.style.remarks[0].text: has a line that opens a section",
        ),
        (
            "crlf-branch.json",
            Box::new(|v| v["tree"]["branch"] = "master\r\nBcc: x@evil.example".into()),
            "$.tree.branch",
        ),
        (
            "crlf-url.json",
            Box::new(|v| v["tree"]["url"] = "https://x\nInjected: yes".into()),
            "$.tree.url",
        ),
        (
            "crlf-param.json",
            Box::new(|v| {
                v["tests"][0]["params"]["run\ntime"] = "300s".into();
            }),
            "params",
        ),
        (
            "no-origin.json",
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("tree");
            }),
            "give either \"tree\" (url, branch) or \"patch\"",
        ),
        (
            "tree-and-patch.json",
            Box::new(|v| {
                v["patch"] = serde_json::json!({"subject": "x", "message_id": "p@x.example"});
            }),
            "not both",
        ),
        (
            "patch-id.json",
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("tree");
                v["patch"] = serde_json::json!({"subject": "x", "message_id": "no id"});
            }),
            "$.patch.message_id: not a Message-ID",
        ),
        (
            "crlf-patch-subject.json",
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("tree");
                v["patch"] = serde_json::json!({"subject": "x\nBcc: y@evil.example", "message_id": "p@x.example"});
            }),
            "$.patch.subject",
        ),
        (
            "crlf-tip.json",
            Box::new(|v| {
                v["still_regression_on"] = serde_json::json!([{"ref": "v6.1\nX: y", "sha": "abc"}]);
            }),
            "$.still_regression_on[0].ref",
        ),
        (
            "blank-pages.json",
            Box::new(|v| v["style"]["spacing"] = serde_json::json!({"tags": 200})),
            "$.style.spacing.tags: 200 blank lines",
        ),
        (
            "many-to.json",
            Box::new(|v| {
                let to: Vec<String> = (0..10_000).map(|i| format!("a{i}@x.example")).collect();
                v["recipients"]["to"] = serde_json::json!(to);
            }),
            "never cuts To",
        ),
        (
            "old-date.json",
            Box::new(|v| v["date"] = "1969-12-31T23:59:59Z".into()),
            "$.date",
        ),
        (
            "duplicate-row.json",
            Box::new(|v| {
                let row = v["tests"][0]["aggregated"][0].clone();
                v["tests"][0]["aggregated"]
                    .as_array_mut()
                    .unwrap()
                    .push(row);
            }),
            "listed twice",
        ),
    ];
    for (name, edit, want) in &cases {
        let p = input_with(tmp.path(), name, |v| edit(v));
        let o = print(&p);
        assert_eq!(code(&o), 2, "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(name),
            "{name}: names the file: {}",
            stderr(&o)
        );
    }
    // Trailing garbage after the object.
    let p = input_with(tmp.path(), "trailing.json", |_| {});
    let mut text = std::fs::read_to_string(&p).unwrap();
    text.push_str("\n{\"more\": 1}\n");
    std::fs::write(&p, text).unwrap();
    let o = print(&p);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("line"), "{}", stderr(&o));
    // A matrix that is not a regular file is not read.
    let p = input_with(tmp.path(), "devzero.json", |v| {
        v["tests"] = serde_json::json!([v["tests"][0].clone()]);
        v["tests"][0].as_object_mut().unwrap().remove("aggregated");
        v["tests"][0].as_object_mut().unwrap().remove("bisect");
        v["tests"][0]["samples"] = serde_json::json!({"base": "/dev/zero", "head": "/dev/zero"});
    });
    let o = print(&p);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
}

#[test]
fn names_that_need_quoting_are_quoted() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    for name in ["Chinner, Dave", "Dave: the; xfs@maintainer <x>"] {
        let p = input_with(tmp.path(), "name.json", |v| {
            v["commit"]["author"]["name"] = name.into();
        });
        let o = perfbot(&cfg, &["report", "--print", p.to_str().unwrap()]);
        let mail = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        // The header holds one address, the author's, under that name.
        let m = mail_parser::MessageParser::default()
            .parse(o.stdout.as_slice())
            .unwrap();
        let to: Vec<_> = m.to().unwrap().iter().collect();
        assert_eq!(to.len(), 1, "{name}: {mail}");
        let a = to[0];
        assert_eq!(a.name(), Some(name), "{mail}");
        assert_eq!(a.address(), Some("dchinner@xfs.example"));
    }
}

#[test]
fn no_panics_on_odd_periods_and_dates() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    for since in ["99999999999999d", "9999999999999999999999w", "0h"] {
        let o = perfbot(&cfg, &["digest", "--since", since]);
        assert!(
            matches!(code(&o), 0 | 2),
            "digest --since {since}: {}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

/// The daemon mails the digest when it is due, once a period: started
/// again within the period (after a kill), it finds the digest sent and
/// says when the next is due, instead of sending another.
#[test]
fn the_daemon_mails_the_digest_once_a_period_across_restarts() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = setup(
        tmp.path(),
        &format!(
            "[web]\nlisten = \"127.0.0.1:{port}\"\n\
             [digest]\nevery_hours = 24\nto = [\"ops@ci.example\"]\n"
        ),
    );
    let input = input_with(tmp.path(), "in.json", |_| {});
    ok(&perfbot(&cfg, &["report", input.to_str().unwrap()]));
    let digests = || {
        outbox_mails(tmp.path())
            .iter()
            .filter(|text| {
                text.contains("Subject: [perfbot] digest") && text.contains("To: ops@ci.example")
            })
            .count()
    };
    let log = tmp.path().join("run.log");
    let start = || start_daemon_logging(&cfg, &log);
    let daemon = start();
    wait_for_or(&log, "the digest mailed", 30, || {
        (digests() == 1).then_some(())
    });
    drop(daemon);
    let _daemon = start();
    wait_for_or(&log, "the next digest's time said", 30, || {
        std::fs::read_to_string(&log)
            .is_ok_and(|l| l.contains("digest not due yet"))
            .then_some(())
    });
    assert_eq!(digests(), 1, "a second digest within the period");
    assert_eq!(outbox_files(tmp.path()), 2, "the report and one digest");
}

/// The daemon pings a report nobody answered, in its thread, at most
/// `max_pings` times; started again (after a kill) it counts the pings
/// already sent and sends no more.
#[test]
fn the_daemon_pings_a_silent_thread_at_most_max_pings_across_restarts() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = setup(
        tmp.path(),
        &format!(
            "schedule_every_secs = 1\n\
             [web]\nlisten = \"127.0.0.1:{port}\"\n\
             [reminders]\nenabled = true\nno_reply_days = 0\nmax_pings = 2\n\
             [digest]\nevery_hours = 24\nto = [\"ops@ci.example\"]\n"
        ),
    );
    let input = input_with(tmp.path(), "in.json", |_| {});
    ok(&perfbot(&cfg, &["report", input.to_str().unwrap()]));
    let mails = || outbox_mails(tmp.path());
    let pings = || -> Vec<String> {
        mails()
            .into_iter()
            .filter(|text| text.contains("(reminder "))
            .collect()
    };
    let log = tmp.path().join("run.log");
    let daemon = start_daemon_logging(&cfg, &log);
    let sent = wait_for_or(&log, "two pings", 30, || {
        let p = pings();
        (p.len() == 2).then_some(p)
    });
    let report = mails()
        .into_iter()
        .find(|t| t.contains("X-Perfbot-Case: ") && !t.contains("In-Reply-To: "))
        .expect("the report in the outbox");
    let report_id = report
        .lines()
        .find_map(|l| l.strip_prefix("Message-ID: "))
        .expect("the report's Message-ID")
        .trim()
        .to_string();
    for text in &sent {
        assert!(
            text.contains(&format!("In-Reply-To: {report_id}")),
            "a ping outside the report's thread ({report_id}): {text}"
        );
    }
    assert!(sent.iter().any(|t| t.contains("(reminder 1 of 2)")));
    assert!(sent.iter().any(|t| t.contains("(reminder 2 of 2)")));
    drop(daemon);
    let _daemon = start_daemon_logging(&cfg, &log);
    // The digest comes after the reminders in each round of the
    // scheduler: once it is said not due, a round has run.
    wait_for_or(
        &log,
        "a round of the scheduler after the restart",
        30,
        || {
            std::fs::read_to_string(&log)
                .is_ok_and(|l| l.contains("digest not due yet"))
                .then_some(())
        },
    );
    assert_eq!(pings().len(), 2, "a ping past max_pings after a restart");
}

/// A stop waits for the mail in flight; a second SIGTERM does not: perfbot
/// stops at once with 128 + the signal's number, saying so, and the mail cut
/// short is still in the outbox, unsent, for the next start.
#[test]
fn a_second_signal_stops_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    // An SMTP server that takes the connection and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    silent.set_nonblocking(true).unwrap();
    let smtp = silent.local_addr().unwrap().port();
    let web = free_port();
    let cfg = setup(
        tmp.path(),
        &format!(
            "[web]\nlisten = \"127.0.0.1:{web}\"\n\
             [smtp]\nurl = \"smtp://127.0.0.1:{smtp}\"\ntimeout_secs = 600\n"
        ),
    );
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace("transport = \"file\"", "transport = \"smtp\""),
    )
    .unwrap();
    let input = input_with(tmp.path(), "in.json", |_| {});
    ok(&perfbot(&cfg, &["report", input.to_str().unwrap()]));
    let log = tmp.path().join("run.log");
    let mut d = start_daemon_logging(&cfg, &log);
    let _held = wait_for_or(&log, "the mail in flight", 30, || silent.accept().ok());
    let pid = d.0.as_ref().unwrap().id() as i32;
    let said = || std::fs::read_to_string(&log).unwrap_or_default();
    unsafe { libc::kill(pid, libc::SIGTERM) };
    wait_for_or(&log, "the first stop said", 30, || {
        said().contains("perfbot run: stopping").then_some(())
    });
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let status = d.0.take().unwrap().wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{}", said());
    assert!(
        said().contains("perfbot run: stopped at once (a second signal)"),
        "{}",
        said()
    );
    let o = perfbot(&cfg, &["outbox", "list", "--json"]);
    let entries: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let entries = entries.as_array().unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_ne!(entries[0]["state"], "sent", "{entries:?}");
}

/// `perfbot run` on `cfg`, its log (at debug level) written to `log`.
fn start_daemon_logging(cfg: &Path, log: &Path) -> Daemon {
    let child = Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(cfg)
        .arg("run")
        .env("RUST_LOG", "perfbot=debug")
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    Daemon(Some(child))
}

#[test]
fn the_daemon_survives_bad_spool_files_and_half_open_connections() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = setup(
        tmp.path(),
        &format!("[web]\nlisten = \"127.0.0.1:{port}\"\n"),
    );
    let spool = tmp.path().join("state/spool");
    std::fs::create_dir_all(&spool).unwrap();
    // A bad file sorts first; the good one after it must still be queued.
    let bad = input_with(&spool, "a-old-date.json", |v| {
        v["date"] = "1969-07-20T20:17:40Z".into()
    });
    let _ = bad;
    input_with(&spool, "b-good.json", |v| {
        v["commit"]["sha"] = sha(7).into()
    });
    // A pointer that is a directory: moved aside with the reason, not
    // skipped on every pass.
    std::fs::create_dir_all(spool.join("a-dir.ref")).unwrap();
    // A FIFO sorts first: read, it would hold the spool for ever.
    let fifo = std::ffi::CString::new(spool.join("a-fifo.json").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let child = spawn_run(&cfg);
    let pid = child.id();
    let mut d = Daemon(Some(child));
    wait_for_dashboard(port);
    // 300 half-open connections: each sends half a request line and waits.
    let mut held = Vec::new();
    for _ in 0..300 {
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            use std::io::Write;
            let _ = s.write_all(b"GET / HT");
            held.push(s);
        }
    }
    // The spool still works, and the bad file is set aside with the reason.
    assert_eq!(outbox_after_waiting(tmp.path(), 1), 1);
    let err_file = spool.join("failed/a-old-date.json.error");
    let why = std::fs::read_to_string(&err_file).unwrap();
    assert!(why.contains("$.date"), "{why}");
    let why = std::fs::read_to_string(spool.join("failed/a-dir.ref.error")).unwrap();
    assert!(why.contains("not a readable pointer file"), "{why}");
    assert!(!spool.join("a-dir.ref").exists());
    let why = std::fs::read_to_string(spool.join("failed/a-fifo.json.error")).unwrap();
    assert!(why.contains("not a regular file"), "{why}");
    // The daemon keeps its open files bounded whatever the clients do.
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    assert!(
        fds < perfbot::app::web::MAX_PENDING + 64,
        "{fds} open files with 300 half-open clients"
    );
    // The dashboard and its odd parameters answer once the slow clients are cut off.
    let deadline = std::time::Instant::now() + perfbot::app::web::HEADER_TIMEOUT * 3;
    let mut page = None;
    while page.is_none() && std::time::Instant::now() < deadline {
        page = http_get(port, "/?age=9223372036854775807");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(page.is_some(), "the dashboard never answered again");
    // An absurd period is answered, as the asker's mistake (400, saying
    // what a period is), not silently read as a week.
    for path in [
        "/digest?since=99999999999999d",
        "/api/digest?since=9999999999999999999999d",
    ] {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        assert!(out.starts_with("HTTP/1.1 400"), "{path}: {out}");
        assert!(out.contains("a period such as 7d"), "{path}: {out}");
    }
    assert!(http_get(port, "/digest?since=2w").is_some());
    drop(held);
    let c = d.0.take().unwrap();
    unsafe {
        libc::kill(c.id() as i32, libc::SIGTERM);
    }
    let o = c.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // Without RUST_LOG it said where the dashboard is and what it reads.
    assert!(
        err.contains(&format!("dashboard: http://127.0.0.1:{port}/")),
        "{err}"
    );
    assert!(err.contains("reading: maildir"), "{err}");
    // And that it stopped, the work in hand done.
    assert!(
        err.ends_with(
            "perfbot run: stopping, finishing the work in hand (a second Ctrl-C or SIGTERM stops at once)\nperfbot run: stopped\n"
        ),
        "{err}"
    );
}

#[test]
fn newcomer_stumbles() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    // Empty listings say so.
    let o = perfbot(&cfg, &["cases", "list"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "no cases");
    let o = perfbot(&cfg, &["cases", "list", "--json"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "[]");
    let o = perfbot(&cfg, &["outbox", "list"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "no mail in the outbox"
    );
    let o = perfbot(&cfg, &["quarantine", "list"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "nothing quarantined"
    );
    // An empty digest and nothing to remind say so, rather than print
    // headings over nothing.
    let o = perfbot(&cfg, &["digest"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("\n0 cases: none\nOpen by subsystem: none\n"),
        "{text}"
    );
    let o = perfbot(&cfg, &["remind", "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim(), "no reminder due, no case gone stale");
    // Mistakes are refused with what is wrong, and change nothing:
    // (arguments, exit code, what the error says).
    let folder = tmp.path().join("mails");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("one.eml"), "Subject: x\n\ny\n").unwrap();
    let folder = folder.to_str().unwrap();
    let closed = "unknown state \"closed\": one of queued, reported, investigating,";
    let reason = "a reason is needed";
    let table: &[(&[&str], i32, &str)] = &[
        // A state that is none names the ones there are.
        (&["cases", "list", "--state", "closed"], 2, closed),
        (
            &["cases", "set", "abc", "closed", "--reason", "x"],
            2,
            closed,
        ),
        (
            &["outbox", "list", "--state", "closed"],
            2,
            "unknown state \"closed\": one of queued, sending, sent, failed, dead, held",
        ),
        // A human decision needs its reason, as on the dashboard.
        (
            &["cases", "set", "abc", "fixed", "--reason", "  "],
            2,
            reason,
        ),
        (
            &["labels", "set", "<a@b>", "other", "--reason", ""],
            2,
            reason,
        ),
        (&["outbox", "drop", "<a@b>", "--reason", " "], 2, reason),
        // `compare` on a report input says what it wants instead.
        (
            &["compare", "examples/seed002-xfs-fio-falloc-2022.json"],
            2,
            "case.json",
        ),
        // Inputs are reported all or none; the refusal says none was queued.
        (
            &[
                "report",
                "examples/seed004-f2fs-aim7-improvement.json",
                "examples/seed000-xfs-fio-randwrite-2018.json",
            ],
            3,
            "perfbot: none of the 2 inputs was queued: no reportable",
        ),
        // One mail given as an mbox is no mbox: said, not read as nothing,
        // and the command's mistake (2), as a path that is not there is.
        (
            &[
                "ingest",
                "--mbox",
                "tests/fixtures/threads/2023-10-20_cgroups_51d74c18a9/00-report.eml",
            ],
            2,
            "not an mbox, nothing read (one message is read with `ingest --stdin`)",
        ),
        // A folder that is no maildir is said to be none, not made one.
        (
            &["ingest", "--maildir", folder],
            2,
            "not a maildir: no new/ or cur/ in it",
        ),
        // A folder given as an mbox is said to be one, with what reads it.
        (
            &["ingest", "--mbox", folder],
            2,
            "a directory, not an mbox file (a maildir is read with --maildir",
        ),
        // An id that names nothing is bad input (2), as every unknown name
        // is; an empty one names nothing, not the only case there is.
        (&["cases", "show", "nosuch"], 2, "no case nosuch"),
        (
            &["outbox", "show", "nobody@nowhere"],
            2,
            "no outbox message",
        ),
        (
            &["quarantine", "show", "ffff"],
            2,
            "no quarantined message ffff",
        ),
        (&["quarantine", "show", " "], 2, "a hash is needed"),
        (
            &["cases", "set", "", "fixed", "--reason", "x"],
            2,
            "(an empty id)",
        ),
        // Reminders that are off stay off by hand too.
        (
            &["remind"],
            2,
            "reminders are off (`[reminders] enabled = false`)",
        ),
        // A digest to send with nobody to get it is refused before it is
        // printed, so none is taken for queued.
        (
            &["digest", "--send"],
            2,
            "nobody gets the digest: set digest.to or trust.operators",
        ),
    ];
    for &(args, want, words) in table {
        let o = perfbot(&cfg, args);
        assert_eq!(code(&o), want, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(words), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?} printed before refusing");
    }
    let o = perfbot(&cfg, &["cases", "list"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "no cases");
    assert_eq!(std::fs::read_dir(folder).unwrap().count(), 1);
    // `report --print | head` ends quietly.
    let sh = format!(
        "{:?} --config {:?} report --print examples/seed002-xfs-fio-falloc-2022.json | head -1",
        env!("CARGO_BIN_EXE_perfbot"),
        cfg
    );
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(&sh)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    // The digest and reminders work with a config outside the repository and
    // no templates directory at all.
    let elsewhere = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        &format!("{:?}", root().join("templates")),
        "\"no-such-dir\"",
    );
    let cfg2 = elsewhere.path().join("config.toml");
    std::fs::write(&cfg2, text).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(&cfg2)
        .args(["digest"])
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("perfbot"));
    // The default config mails no public list and does not pose as the robot.
    let default = std::fs::read_to_string(root().join("config.toml")).unwrap();
    assert!(!default.contains("kernel test robot\""), "{default}");
    let c = perfbot::config::Config::parse(&default, "config.toml", root()).unwrap();
    assert!(c.file.report.cc.is_empty());
    assert_eq!(
        c.file.outbound.transport,
        perfbot::config::TransportKind::File
    );
}

/// Each outbox command refuses a mail in a state it cannot act on, says
/// why, and changes nothing; in the right state it acts.
#[test]
fn outbox_moderation_refuses_what_it_cannot_do() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace(
            "transport = \"file\"",
            "transport = \"file\"\nmoderation = true",
        ),
    )
    .unwrap();
    ok(&perfbot(
        &cfg,
        &["report", "examples/seed002-xfs-fio-falloc-2022.json"],
    ));
    let state = || {
        let o = perfbot(&cfg, &["outbox", "list", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let e = &v.as_array().unwrap()[0];
        (
            e["message_id"].as_str().unwrap().to_string(),
            e["state"].as_str().unwrap().to_string(),
        )
    };
    let (id, held) = state();
    assert_eq!(held, "held");
    // The listing says why it waits.
    let o = perfbot(&cfg, &["outbox", "list", "--state", "held"]);
    let listed = String::from_utf8_lossy(&o.stdout);
    assert!(
        listed.contains(&format!("<{id}>")) && listed.contains("\n        held: moderation"),
        "{listed}"
    );
    let refused = |args: &[&str], why: &str, now: &str| {
        let o = perfbot(&cfg, args);
        assert_eq!(code(&o), 1, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
        assert_eq!(state().1, now, "{args:?} changed nothing");
    };
    refused(
        &["outbox", "retry", &id],
        &format!("<{id}> is held, not failed or dead"),
        "held",
    );
    ok(&perfbot(
        &cfg,
        &["outbox", "drop", &id, "--reason", "bogus"],
    ));
    assert_eq!(state().1, "dead");
    let reason = || {
        let o = perfbot(&cfg, &["outbox", "show", &id, "--status", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["last_error"].as_str().unwrap_or_default().to_string()
    };
    assert!(reason().ends_with(": bogus"), "{}", reason());
    refused(
        &["outbox", "approve", &id],
        &format!("<{id}> is dead, not held: `perfbot outbox retry` queues it again"),
        "dead",
    );
    // Asked twice, what is so already is said and done; the mail keeps
    // the reason it was dropped for.
    let again = |args: &[&str], says: &str, now: &str| {
        let o = perfbot(&cfg, args);
        ok(&o);
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert_eq!(state().1, now, "{args:?}");
    };
    again(
        &["outbox", "drop", &id, "--reason", "twice"],
        &format!("<{id}> is dead already: it is never sent"),
        "dead",
    );
    assert!(reason().ends_with(": bogus"), "{}", reason());
    ok(&perfbot(&cfg, &["outbox", "retry", &id]));
    assert_eq!(state().1, "queued");
    again(
        &["outbox", "approve", &id],
        &format!("<{id}> is queued, not held: it is sent when due"),
        "queued",
    );
    ok(&perfbot(&cfg, &["send"]));
    assert_eq!(state().1, "sent");
    assert_eq!(outbox_files(tmp.path()), 1);
    again(
        &["outbox", "approve", &id],
        &format!("<{id}> was sent already"),
        "sent",
    );
    refused(
        &["outbox", "drop", &id, "--reason", "late"],
        &format!("<{id}> is sent: too late to drop"),
        "sent",
    );
    refused(
        &["outbox", "retry", &id],
        &format!("<{id}> is sent, not failed or dead"),
        "sent",
    );
    // Its delivery record in words, with the history that names it; as
    // stored with --json.
    let o = perfbot(&cfg, &["outbox", "show", &id, "--status"]);
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with(&format!("<{id}>  report of case ")),
        "{text}"
    );
    assert!(text.contains(": sent\nsubject:    [xfs]"), "{text}");
    let history = text.split("\nhistory:\n").nth(1).unwrap_or_default();
    for step in [
        "dropped: ",
        "(command line): bogus",
        "queued again",
        "sent: ",
    ] {
        assert!(history.contains(step), "{step}: {text}");
    }
    let o = perfbot(&cfg, &["outbox", "show", &id, "--status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["state"], "sent");
    let o = perfbot(&cfg, &["outbox", "show", "nobody@nowhere"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no outbox message nobody@nowhere"),
        "{}",
        stderr(&o)
    );
}

/// A report's attachments are regular files inside the input's folder, of
/// bounded size and number: anything else is an input error naming the
/// entry, and nothing is read from it (a FIFO would block, /dev/zero never
/// ends, /proc/self/environ holds the secrets).
#[test]
fn attachments_are_regular_files_inside_the_inputs_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let dir = tmp.path();
    std::fs::write(dir.join("job.yaml"), "suite: fio\n").unwrap();
    std::fs::write(dir.join("big"), vec![b'x'; (4 << 20) + 1]).unwrap();
    std::fs::write(dir.join("mib"), vec![b'x'; 1 << 20]).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.join("passwd")).unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    assert!(Command::new("mkfifo")
        .arg(dir.join("fifo"))
        .status()
        .unwrap()
        .success());
    let one = |path: &str| serde_json::json!([{"name": "x", "path": path}]);
    let many = |n: usize, path: &str| -> serde_json::Value {
        (0..n)
            .map(|i| serde_json::json!({"name": format!("x{i}"), "path": path}))
            .collect()
    };
    let cases: Vec<(&str, serde_json::Value, &str)> = vec![
        (
            "abs",
            one("/etc/hostname"),
            "leads out of the input's folder",
        ),
        (
            "dotdot",
            one("../../etc/passwd"),
            "leads out of the input's folder",
        ),
        (
            "devzero",
            one("/dev/zero"),
            "leads out of the input's folder",
        ),
        (
            "environ",
            one("/proc/self/environ"),
            "leads out of the input's folder",
        ),
        (
            "symlink-out",
            one("passwd"),
            "leads out of the input's folder",
        ),
        ("fifo", one("fifo"), "not a regular file"),
        ("dir", one("sub"), "not a regular file"),
        ("big", one("big"), "over"),
        ("too-many", many(100, "job.yaml"), "100 attachments, over"),
        ("too-much", many(20, "mib"), "add up to over"),
    ];
    for (name, attachments, want) in cases {
        let p = input_with(dir, &format!("{name}.json"), |v| {
            v["attachments"] = attachments.clone()
        });
        let o = perfbot(&cfg, &["report", "--print", p.to_str().unwrap()]);
        assert_eq!(code(&o), 2, "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("$.attachments"),
            "{name}: {}",
            stderr(&o)
        );
    }
    let p = input_with(dir, "ok.json", |v| {
        v["attachments"] = serde_json::json!([{"name": "job.yaml", "path": "job.yaml"}])
    });
    let o = perfbot(&cfg, &["report", "--print", p.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("job.yaml"));
}

/// Every command that reads a mail or a labels file refuses what is no
/// regular file before reading a byte (`/dev/zero` never ends, a FIFO
/// blocks), and a gzipped mail that inflates past the input limit: exit 2
/// (or, for `roundtrip`, a mail "could not be read"), the file named.
#[test]
fn mail_and_label_files_are_regular_files_of_bounded_size() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let fifo = tmp.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let fifo = fifo.to_str().unwrap();
    for args in [
        vec!["classify", "/dev/zero"],
        vec!["classify", fifo],
        vec!["parse-report", "/dev/zero"],
        vec!["parse-report", fifo],
        vec!["eval-replies", "/dev/zero"],
        vec!["eval-replies", fifo],
    ] {
        let o = perfbot(&cfg, &args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        let want = format!("{}: not a regular file", args[1]);
        assert!(stderr(&o).contains(&want), "{args:?}: {}", stderr(&o));
    }
    // 300 MB of zeros, gzipped to 300 KB: refused at the 256 MB limit.
    let dir = tmp.path().join("mails");
    std::fs::create_dir(&dir).unwrap();
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(dir.join("bomb.eml.gz")).unwrap(),
        flate2::Compression::fast(),
    );
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..300 {
        std::io::Write::write_all(&mut gz, &zeros).unwrap();
    }
    gz.finish().unwrap();
    let o = perfbot(&cfg, &["roundtrip", "--json", dir.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("over 268435456 bytes decompressed"),
        "{out} {}",
        stderr(&o)
    );
}

/// The noise gate: a headline whose bootstrap interval stays under the
/// reporting threshold (or reaches zero) is held for a
/// human with the reason (never mailed, never dropped) and goes once
/// approved; a clear change goes at once; `[noise] enabled = false` turns
/// the gate off. An input named without a folder is read from the current
/// one.
#[test]
fn a_change_within_the_scatter_is_held_with_the_reason() {
    let with_samples = |base: serde_json::Value, head: serde_json::Value| {
        move |v: &mut serde_json::Value| {
            v["tests"] = serde_json::json!([v["tests"][0].clone()]);
            let t = v["tests"][0].as_object_mut().unwrap();
            t.remove("aggregated");
            t.remove("bisect");
            v["tests"][0]["samples"] = serde_json::json!({
                "base": {"fio.write_iops": base},
                "head": {"fio.write_iops": head},
            });
        }
    };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    // Clear, but maybe under 1%.
    input_with(
        tmp.path(),
        "small.json",
        with_samples(
            serde_json::json!([41000, 41200, 40800]),
            serde_json::json!([40400, 40500, 40300]),
        ),
    );
    let o = Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(&cfg)
        .args(["report", "small.json"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("mail held (noise gate:"),
        "{}",
        stderr(&o)
    );
    let list = perfbot(&cfg, &["outbox", "list", "--json"]);
    let entries: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let e = &entries[0];
    assert_eq!(e["state"], "held", "{e}");
    let why = e["held_because"].as_str().unwrap();
    assert!(
        why.contains("under the reporting threshold") && why.contains("95% interval"),
        "{why}"
    );
    assert_eq!(outbox_files(tmp.path()), 0, "nothing written to the outbox");
    ok(&perfbot(
        &cfg,
        &["outbox", "approve", e["message_id"].as_str().unwrap()],
    ));
    ok(&perfbot(&cfg, &["send"]));
    assert_eq!(outbox_files(tmp.path()), 1, "sent once approved");

    // A clear change goes at once; the gate off lets the noisy one go too.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let clear = input_with(
        tmp.path(),
        "clear.json",
        with_samples(
            serde_json::json!([41000, 41200, 40800, 41100, 40900]),
            serde_json::json!([37300, 37200, 37400, 37350, 37250]),
        ),
    );
    let o = perfbot(&cfg, &["report", clear.to_str().unwrap()]);
    assert!(!stderr(&o).contains("held"), "{}", stderr(&o));
    assert_eq!(outbox_files(tmp.path()), 1);
    // With the gate off, the small change goes.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "[noise]\nenabled = false\n");
    let small = input_with(
        tmp.path(),
        "small.json",
        with_samples(
            serde_json::json!([41000, 41200, 40800]),
            serde_json::json!([40400, 40500, 40300]),
        ),
    );
    let o = perfbot(&cfg, &["report", small.to_str().unwrap()]);
    assert!(!stderr(&o).contains("held"), "{}", stderr(&o));
    assert_eq!(outbox_files(tmp.path()), 1);
}

/// Regzbot hand-off: a mainline regression above the threshold, sent to a
/// list that asked for it, gets a `#regzbot introduced:` paragraph of its
/// own and Cc regressions@lists.linux.dev; anything else, and the default
/// config, hands nothing over.
#[test]
fn qualifying_regressions_are_handed_to_regzbot() {
    let tmp = tempfile::tempdir().unwrap();
    let on = "[regzbot]\nenabled = true\nlists = [\"linux-xfs@vger.kernel.example\"]\n";
    let print = |extra: &str, name: &str, tree: &str| -> (String, String) {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = setup(&dir, extra);
        let tree = tree.to_string();
        let p = input_with(&dir, "in.json", move |v| {
            v["tree"]["name"] = tree.clone().into()
        });
        let o = perfbot(&cfg, &["report", "--print", p.to_str().unwrap()]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        (String::from_utf8_lossy(&o.stdout).to_string(), stderr(&o))
    };
    let (mail, _) = print(on, "linus", "linus");
    assert!(
        mail.contains("\n#regzbot introduced: 0b02c8c0d75a738c98c35f02efb36217c170d78c\r\n"),
        "{mail}"
    );
    assert!(mail.contains("regressions@lists.linux.dev"), "{mail}");
    let before = mail.split("\n#regzbot").next().unwrap();
    assert!(
        before.ends_with("\r\n\r"),
        "a paragraph of its own: {before:?}"
    );
    for (extra, name, tree) in [
        (on, "topic-tree", "kdave-btrfs-devel"),
        (
            "[regzbot]\nenabled = true\nlists = [\"other@lists.example\"]\n",
            "other-list",
            "linus",
        ),
        ("", "default", "linus"),
    ] {
        let (mail, _) = print(extra, name, tree);
        assert!(!mail.contains("#regzbot"), "{name}: {mail}");
        assert!(!mail.contains("regressions@lists.linux.dev"), "{name}");
    }
}

/// Opt-in list policies: with a policy file, a report for a list with no
/// policy is muted (held with the reason), a muted list the same; an open
/// list with its consent gets its embargo, prefix and recipients; a policy
/// file with an unknown field or an unmuted list without consent is a
/// start-up error naming it; `policy check` says what would go where.
#[test]
fn list_policies_decide_where_reports_go() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = |text: &str| {
        std::fs::write(tmp.path().join("policy.toml"), text).unwrap();
        setup(
            tmp.path(),
            &format!(
                "[lists]\npolicy_file = {:?}\n",
                tmp.path().join("policy.toml")
            ),
        )
    };
    let input = input_with(tmp.path(), "in.json", |_| {});
    let check = |cfg: &Path| {
        let o = perfbot(cfg, &["policy", "check", input.to_str().unwrap()]);
        (
            code(&o),
            String::from_utf8_lossy(&o.stdout).to_string(),
            stderr(&o),
        )
    };
    // No policy for linux-xfs@vger.kernel.example: muted.
    let cfg = policy("[[list]]\nlist = \"linux-mm@kvack.org\"\n");
    let (c, out, err) = check(&cfg);
    assert_eq!(c, 0, "{err}");
    assert!(
        out.contains("held, not sent: muted: no list policy"),
        "{out}"
    );
    assert_eq!(out.matches("no list policy").count(), 1, "said once: {out}");
    // Muted explicitly.
    let cfg = policy("[[list]]\nlist = \"linux-xfs@vger.kernel.example\"\n");
    let (_, out, _) = check(&cfg);
    assert!(
        out.contains("muted by the policy of linux-xfs@vger.kernel.example"),
        "{out}"
    );
    // Open, author only, with an embargo and a prefix.
    let cfg = policy(
        "[[list]]\nlist = \"linux-xfs@vger.kernel.example\"\nmuted = false\nmail = \"author\"\n\
         embargo_hours = 12\nsubject_prefix = \"[perfbot]\"\n\
         consent = { message_id = \"<yes@xfs.example>\", date = 2026-11-01 }\n",
    );
    let (_, out, _) = check(&cfg);
    assert!(out.contains("Subject: [perfbot] [xfs]"), "{out}");
    assert!(out.contains("\n  Cc: (nobody)\n"), "{out}");
    assert!(
        out.starts_with("1 list policy (checked):\n  linux-xfs@vger.kernel.example: open, mail author, embargo 12 h, subject prefix \"[perfbot]\", consent"),
        "{out}"
    );
    // The time as people read it.
    let after = out.split("sent after ").nth(1).unwrap_or_default();
    assert!(
        after.len() > 20 && after.as_bytes()[10] == b' ' && after[16..].starts_with(" UTC\n"),
        "{out}"
    );
    assert!(
        out.contains("consent <yes@xfs.example> of 2026-11-01"),
        "{out}"
    );
    // Recorded by `report`: the embargo holds the mail back.
    let o = perfbot(&cfg, &["report", input.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(outbox_files(tmp.path()), 0, "embargoed");
    // Bad policy files are start-up errors naming what is wrong.
    for (text, want) in [
        (
            "[[list]]\nlist = \"x@y.org\"\nmute = true\n",
            "unknown field `mute`",
        ),
        ("[[list]]\nlist = \"x@y.org\"\nmuted = false\n", "consent"),
        ("[[list]]\nlist = \"nonsense\"\n", "not a list address"),
    ] {
        let cfg = policy(text);
        let (c, _, err) = check(&cfg);
        assert_eq!(c, 2, "{text}: {err}");
        assert!(
            err.contains("lists.policy_file") && err.contains(want),
            "{err}"
        );
    }
}

/// Series memory: a regression accepted on v1 of a patch (won't fix) is not
/// mailed again when v2 shows it: the new case carries the decision over and
/// its mail is held with the reason. Another patch, or another author, is
/// reported as usual.
#[test]
fn a_later_version_of_a_series_carries_the_decision_over() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let version = |name: &str, sha: &str, subject: &str, author: &str| {
        let (sha, subject, author) = (sha.to_string(), subject.to_string(), author.to_string());
        input_with(tmp.path(), name, move |v| {
            v["commit"]["sha"] = sha.clone().into();
            v["patch"] = serde_json::json!({
                "subject": subject.clone(),
                "message_id": format!("<{name}@patch.example>", name = sha),
            });
            v["recipients"]["to"] = serde_json::json!([author.clone()]);
            v.as_object_mut().unwrap().remove("tree");
        })
    };
    let v1 = version(
        "v1.json",
        &sha(1),
        "[PATCH 1/2] xfs: prealloc less",
        "Dave <dave@xfs.example>",
    );
    ok(&perfbot(&cfg, &["report", v1.to_str().unwrap()]));
    let list = |cfg: &Path| -> serde_json::Value {
        serde_json::from_slice(&perfbot(cfg, &["cases", "list", "--json"]).stdout).unwrap()
    };
    let first = list(&cfg)[0]["id"].as_str().unwrap().to_string();
    ok(&perfbot(
        &cfg,
        &[
            "cases",
            "set",
            &first,
            "wont-fix",
            "--reason",
            "accepted in the cover letter",
        ],
    ));
    let v2 = version(
        "v2.json",
        &sha(2),
        "[PATCH v2 1/2] xfs: prealloc less",
        "Dave <dave@xfs.example>",
    );
    let o = perfbot(&cfg, &["report", v2.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("series memory"), "{}", stderr(&o));
    let cases = list(&cfg);
    let second = cases
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] != first.as_str())
        .unwrap();
    assert_eq!(second["state"], "wont-fix", "{second}");
    assert_eq!(outbox_files(tmp.path()), 1, "only v1 was mailed");
    // Another author's patch of the same title is its own case.
    let other = version(
        "other.json",
        &sha(3),
        "[PATCH v3 1/2] xfs: prealloc less",
        "Eve <eve@else.example>",
    );
    let o = perfbot(&cfg, &["report", other.to_str().unwrap()]);
    assert!(!stderr(&o).contains("series memory"), "{}", stderr(&o));
    assert_eq!(outbox_files(tmp.path()), 2);
    // A version with a new title is linked by its thread: its patch was
    // posted in reply to v1's, so the reports' References meet.
    let renamed = |name: &str, n: u32, title: &str, refs: serde_json::Value| {
        let name_owned = name.to_string();
        let title = title.to_string();
        input_with(tmp.path(), name, move |v| {
            v["commit"]["sha"] = sha(n).into();
            v["patch"] = serde_json::json!({
                "subject": title.clone(),
                "message_id": format!("<{name_owned}@patch.example>"),
                "references": refs.clone(),
            });
            v["recipients"]["to"] = serde_json::json!(["Dave <dave@xfs.example>"]);
            v.as_object_mut().unwrap().remove("tree");
        })
    };
    let v4 = renamed(
        "v4.json",
        4,
        "[PATCH v4] xfs: allocate fewer blocks up front",
        serde_json::json!([format!("<{}@patch.example>", sha(1))]),
    );
    let o = perfbot(&cfg, &["report", v4.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("series memory"), "{}", stderr(&o));
    assert_eq!(outbox_files(tmp.path()), 2, "v4 is held, not mailed");
    // Another new title outside that thread is a new case.
    let v5 = renamed(
        "v5.json",
        5,
        "[PATCH] xfs: trim speculative preallocation",
        serde_json::json!([format!("<{}@patch.example>", sha(9))]),
    );
    let o = perfbot(&cfg, &["report", v5.to_str().unwrap()]);
    assert!(!stderr(&o).contains("series memory"), "{}", stderr(&o));
    assert_eq!(outbox_files(tmp.path()), 3);
}

/// Verified closure: a case closed as fixed is "fix unverified" until a
/// comparison of a commit with the fix is given to `report`. Matched by the
/// test, the headline metric and the commit it compares against (the
/// regressing commit: another report on the same base is a report), it
/// verifies the fix when the metric is back within the noise of the case's
/// base, and reopens the case with the new numbers when it is not. No mail
/// goes out for either; the digest lists verified and unverified fixes
/// apart.
#[test]
fn a_fix_is_verified_by_a_later_comparison_or_the_case_reopens() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let base = serde_json::json!([41000, 41200, 40800, 41100, 40900]);
    let regressed = serde_json::json!([37300, 37200, 37400, 37350, 37250]);
    let back = serde_json::json!([40950, 41150, 40850, 41050, 40900]);
    let comparison = |name: &str,
                      base_sha: &str,
                      head_sha: &str,
                      b: &serde_json::Value,
                      h: &serde_json::Value| {
        let (base_sha, head_sha, b, h) = (
            base_sha.to_string(),
            head_sha.to_string(),
            b.clone(),
            h.clone(),
        );
        input_with(tmp.path(), name, move |v| {
            v["tests"] = serde_json::json!([v["tests"][0].clone()]);
            let t = v["tests"][0].as_object_mut().unwrap();
            t.remove("aggregated");
            t.remove("bisect");
            v["tests"][0]["samples"] = serde_json::json!({
                "base": {"fio.write_iops": b},
                "head": {"fio.write_iops": h},
            });
            v["base"]["sha"] = base_sha.clone().into();
            v["commit"]["sha"] = head_sha.clone().into();
        })
    };
    let parent = sha(100);
    let culprit = sha(101);
    let first = comparison("r1.json", &parent, &culprit, &base, &regressed);
    ok(&perfbot(&cfg, &["report", first.to_str().unwrap()]));
    let cases = |cfg: &Path| -> Vec<serde_json::Value> {
        serde_json::from_slice::<serde_json::Value>(
            &perfbot(cfg, &["cases", "list", "--json"]).stdout,
        )
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
    };
    let id = cases(&cfg)[0]["id"].as_str().unwrap().to_string();
    let set = || {
        perfbot(
            &cfg,
            &["cases", "set", &id, "fixed", "--reason", "fix merged"],
        )
    };
    let o = set();
    ok(&o);
    assert!(
        stderr(&o).contains(&format!("case {id} is now fixed")),
        "{}",
        stderr(&o)
    );
    // Set again, it says it was so: nothing is "now" what it was.
    let o = set();
    ok(&o);
    let again = format!("case {id} was fixed already: the decision is recorded again");
    assert!(stderr(&o).contains(&again), "{}", stderr(&o));
    let digest = |cfg: &Path| {
        String::from_utf8(perfbot(cfg, &["digest", "--format", "text", "--since", "1d"]).stdout)
            .unwrap()
    };
    let d = digest(&cfg);
    assert!(
        d.contains("fixed (unverified)") && d.contains("Fixes not verified yet (1)"),
        "{d}"
    );

    // Another regression on the same base (reports share one) is a report
    // of its own, not a verification of this fix.
    let other = comparison("o1.json", &parent, &sha(110), &base, &regressed);
    let o = perfbot(&cfg, &["report", other.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!stderr(&o).contains("verified"), "{}", stderr(&o));
    assert_eq!(cases(&cfg).len(), 2);
    let mails = outbox_files(tmp.path());

    // The regressing commit against a commit with the fix: back within the
    // noise of the case's own base samples.
    let followup = comparison("f1.json", &culprit, &sha(102), &regressed, &back);
    let o = perfbot(&cfg, &["report", followup.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("case {id} fixed (verified)")),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("back within the noise"),
        "{}",
        stderr(&o)
    );
    let c = cases(&cfg)
        .into_iter()
        .find(|c| c["id"] == id.as_str())
        .unwrap();
    assert_eq!(c["state"], "fixed");
    assert_eq!(
        outbox_files(tmp.path()),
        mails,
        "no mail for a verification"
    );
    let d = digest(&cfg);
    assert!(d.contains("Fixes verified by a comparison (1)"), "{d}");
    assert!(d.contains("fixed (verified)"), "{d}");
    assert!(!d.contains("Fixes not verified yet"), "{d}");
    // Verified once: the same comparison again is a report of its own
    // (an improvement over the regressing commit), not a second
    // verification.
    let o = perfbot(&cfg, &["report", followup.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("improvement"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("verified"), "{}", stderr(&o));

    // A second case: a "fix" that leaves it down reopens it.
    let tmp2 = tempfile::tempdir().unwrap();
    let cfg2 = setup(tmp2.path(), "");
    let first = comparison("r2.json", &parent, &culprit, &base, &regressed);
    ok(&perfbot(&cfg2, &["report", first.to_str().unwrap()]));
    let id2 = cases(&cfg2)[0]["id"].as_str().unwrap().to_string();
    ok(&perfbot(
        &cfg2,
        &["cases", "set", &id2, "fixed", "--reason", "fix merged"],
    ));
    let still = serde_json::json!([37500, 37400, 37600, 37550, 37450]);
    let followup = comparison("f2.json", &culprit, &sha(103), &regressed, &still);
    let o = perfbot(&cfg2, &["report", followup.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("reopened, the fix did not bring it back"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("still regressed"), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&perfbot(&cfg2, &["cases", "show", &id2, "--json"]).stdout).unwrap();
    assert_eq!(v["state"], "reopened", "{v}");
    assert!(
        v.to_string().contains("base 41000, with the fix 37500"),
        "{v}"
    );
}

/// Series memory on real mail: the robot reported the same regression on
/// v2 and v3 of "mm: memcg: make stats flushing threshold per-memcg" (2023;
/// on v3 the author had to repeat that it does not matter). Read back with
/// `parse-report` and reported by perfbot, v2's case settled as won't fix
/// (the author's reply 09 of its thread) makes v3's report carry that
/// decision over with its mail held, instead of asking again.
#[test]
fn the_real_v3_of_a_series_carries_over_the_decision_on_v2() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let parsed = |thread: &str| {
        let mail = root().join(format!("tests/fixtures/threads/{thread}/00-report.eml"));
        let o = perfbot(&cfg, &["parse-report", mail.to_str().unwrap()]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let p = tmp.path().join(format!("{thread}.json"));
        std::fs::write(&p, &o.stdout).unwrap();
        p
    };
    let v2 = parsed("2023-10-20_cgroups_51d74c18a9");
    let v3 = parsed("2023-11-22_cgroups_c7fbfc7b4e");
    ok(&perfbot(&cfg, &["report", v2.to_str().unwrap()]));
    let list = || -> Vec<serde_json::Value> {
        serde_json::from_slice::<serde_json::Value>(
            &perfbot(&cfg, &["cases", "list", "--json"]).stdout,
        )
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
    };
    let first = list()[0]["id"].as_str().unwrap().to_string();
    ok(&perfbot(
        &cfg,
        &[
            "cases",
            "set",
            &first,
            "wont-fix",
            "--reason",
            "Yosry: the benefits outweigh a regression in this particular benchmark",
        ],
    ));
    let mails = outbox_files(tmp.path());
    let o = perfbot(&cfg, &["report", v3.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("series memory"), "{}", stderr(&o));
    let second = list()
        .into_iter()
        .find(|c| c["id"] != first.as_str())
        .unwrap();
    assert_eq!(second["state"], "wont-fix", "{second}");
    assert!(
        second["subject"]
            .as_str()
            .unwrap()
            .contains("[PATCH v3 3/5]"),
        "{second}"
    );
    assert_eq!(outbox_files(tmp.path()), mails, "v3 is not mailed again");
    let o = perfbot(&cfg, &["digest", "--format", "text", "--since", "1d"]);
    let digest = String::from_utf8_lossy(&o.stdout);
    assert!(
        digest.contains(&format!("carried over from case {first}")),
        "{digest}"
    );
}

/// `perfbot run` on `cfg` with `env` set (and no dashboard token unless
/// given), once its dashboard on `port` answers.
fn start_daemon(cfg: &Path, port: u16, env: &[(&str, &str)]) -> Daemon {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_perfbot"));
    c.arg("--config").arg(cfg).arg("run");
    c.env_remove("PERFBOT_WEB_TOKEN");
    for (k, v) in env {
        c.env(k, v);
    }
    let d = Daemon(Some(c.stderr(std::process::Stdio::null()).spawn().unwrap()));
    wait_for_dashboard(port);
    d
}

/// A transport or mail source that cannot work as configured (a user with
/// no password) stops `run` at the start with exit 2 and what to set,
/// rather than a daemon that runs with delivery or ingestion off.
#[test]
fn a_daemon_that_could_not_send_or_read_does_not_start() {
    let table = [
        (
            "[smtp]\nurl = \"smtp://127.0.0.1:1\"\nuser = \"bot\"\n",
            ("transport = \"file\"", "transport = \"smtp\""),
            "smtp.user is set but there is no password",
        ),
        (
            "[imap]\nurl = \"imap://127.0.0.1:1\"\nuser = \"bot\"\n",
            ("[inbound]\n", "[inbound]\nsource = \"imap\"\n"),
            "imap.user is set but there is no password",
        ),
    ];
    for (extra, (from, to), want) in table {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = setup(tmp.path(), extra);
        let text = std::fs::read_to_string(&cfg).unwrap().replacen(from, to, 1);
        std::fs::write(&cfg, text).unwrap();
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_perfbot"))
            .arg("--config")
            .arg(&cfg)
            .arg("run")
            .env_remove("PERFBOT_SMTP_PASSWORD")
            .env_remove("PERFBOT_IMAP_PASSWORD")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while c.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        if c.try_wait().unwrap().is_none() {
            let _ = c.kill();
            panic!("{want}: the daemon started");
        }
        let o = c.wait_with_output().unwrap();
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
}

/// Stop a daemon with SIGTERM; it must exit cleanly.
fn stop_daemon(mut d: Daemon) {
    let c = d.0.take().unwrap();
    unsafe {
        libc::kill(c.id() as i32, libc::SIGTERM);
    }
    assert!(c.wait_with_output().unwrap().status.success());
}

/// A plain HTTP POST of a form on loopback: the status line and the body.
fn http_post(port: u16, path: &str, form: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{form}",
        form.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// Operators settle a case on the dashboard, as with `cases set`: only with
/// the operator token (a wrong one is refused and changes nothing), with
/// their name and reason in the timeline, and the case's last reply becomes
/// a labelled example. Without a token configured the dashboard only reads.
#[test]
fn operators_settle_cases_on_the_dashboard_with_the_token() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = setup(
        tmp.path(),
        &format!("[web]\nlisten = \"127.0.0.1:{port}\"\n"),
    );
    let input = input_with(tmp.path(), "r.json", |_| {});
    ok(&perfbot(&cfg, &["report", input.to_str().unwrap()]));
    let cases: serde_json::Value =
        serde_json::from_slice(&perfbot(&cfg, &["cases", "list", "--json"]).stdout).unwrap();
    let id = cases[0]["id"].as_str().unwrap().to_string();
    let mid = cases[0]["message_id"].as_str().unwrap().to_string();
    let reply = format!(
        "From: Dave Chinner <david@fromorbit.example>\r\nSubject: Re: {}\r\nMessage-ID: <d1@x>\r\nIn-Reply-To: <{mid}>\r\nDate: Tue, 5 Jun 2018 17:31:14 +1000\r\n\r\nMeh. Compilers do that. I wouldn't lose sleep over this one.\r\n",
        cases[0]["subject"].as_str().unwrap()
    );
    let o = common::perfbot_stdin(&cfg, &["ingest", "--stdin"], Some(reply.as_bytes()));
    ok(&o);
    let start = |token: Option<&str>| {
        let env: Vec<(&str, &str)> = token
            .map(|t| ("PERFBOT_WEB_TOKEN", t))
            .into_iter()
            .collect();
        start_daemon(&cfg, port, &env)
    };
    let stop = stop_daemon;
    let path = format!("/case/{id}/settle");
    let form = |token: &str| {
        format!("state=not-a-regression&reason=compiler+noise%2C+says+Dave&operator=Ops+Person&token={token}")
    };

    // Read-only without a token.
    let d = start(None);
    let page = http_get(port, &format!("/case/{id}")).unwrap();
    assert!(!page.contains("id=\"settle\""), "{page}");
    let out = http_post(port, &path, &form("anything"));
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
    stop(d);

    let d = start(Some("s3cret-t0ken"));
    let page = http_get(port, &format!("/case/{id}")).unwrap();
    assert!(page.contains("id=\"settle\""), "{page}");
    let out = http_post(port, &path, &form("wrong"));
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
    // A page (not a dead end of plain text) says what was wrong, and leads
    // back to the case.
    assert!(
        out.contains("<p class=\"error\">wrong operator token</p>"),
        "{out}"
    );
    assert!(
        out.contains(&format!("<a href=\"/case/{id}\">Back to the case</a>")),
        "{out}"
    );
    let out = http_post(port, "/case/%3Cb%3E/settle", &form("wrong"));
    assert!(out.contains("<a href=\"/\">Back to the cases</a>"), "{out}");
    assert!(!out.contains("<b>"), "{out}");
    let state = || {
        let v: serde_json::Value =
            serde_json::from_str(&http_get(port, &format!("/api/cases/{id}")).unwrap()).unwrap();
        v["case"]["state"].as_str().unwrap_or_default().to_string()
    };
    assert_ne!(state(), "not-a-regression");
    let out = http_post(
        port,
        &path,
        "state=nonsense&reason=x&operator=O&token=s3cret-t0ken",
    );
    assert!(out.starts_with("HTTP/1.1 400"), "{out}");
    // `queued` is perfbot's own state: not offered, and refused.
    assert!(!page.contains("<option>queued</option>"), "{page}");
    let out = http_post(
        port,
        &path,
        "state=queued&reason=x&operator=O&token=s3cret-t0ken",
    );
    assert!(out.starts_with("HTTP/1.1 400"), "{out}");
    assert!(out.contains("queued is perfbot&#x27;s own state"), "{out}");
    // The form offers the thread's replies; one not in it is refused.
    assert!(page.contains("<option value=\"d1@x\">"), "{page}");
    let out = http_post(
        port,
        &path,
        &format!("{}&reply=elsewhere%40x", form("s3cret-t0ken")),
    );
    assert!(out.starts_with("HTTP/1.1 400"), "{out}");
    assert!(
        out.contains("&lt;elsewhere@x&gt; is not a person&#x27;s reply"),
        "{out}"
    );
    assert_ne!(state(), "not-a-regression");
    let out = http_post(
        port,
        &path,
        &format!("{}&reply=d1%40x", form("s3cret-t0ken")),
    );
    assert!(out.starts_with("HTTP/1.1 303"), "{out}");
    assert!(out.contains(&format!("location: /case/{id}")), "{out}");
    assert_eq!(state(), "not-a-regression");
    stop(d);
    let o = perfbot(&cfg, &["cases", "set", &id, "queued", "--reason", "x"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("queued is perfbot's own state"),
        "{}",
        stderr(&o)
    );

    let v: serde_json::Value =
        serde_json::from_slice(&perfbot(&cfg, &["cases", "show", &id, "--json"]).stdout).unwrap();
    let settled = event_to(&v, "not-a-regression");
    assert_eq!(
        settled["cause"],
        serde_json::json!({"kind": "dashboard", "user": "Ops Person", "reason": "compiler noise, says Dave"})
    );
    let labels: serde_json::Value =
        serde_json::from_slice(&perfbot(&cfg, &["labels", "list", "--json"]).stdout).unwrap();
    assert_eq!(labels.as_array().unwrap().len(), 1, "{labels}");
    assert_eq!(labels[0]["label"], "not-a-regression");
    assert_eq!(labels[0]["message_id"], "d1@x");
    assert_eq!(labels[0]["by"], "Ops Person (dashboard)");
    assert_eq!(labels[0]["chosen"], "named");

    // One reply labelled on the dashboard, the case left as it is; a reply
    // of no case, an unknown intent or a wrong token changes nothing.
    let d = start(Some("s3cret-t0ken"));
    let page = http_get(port, &format!("/case/{id}")).unwrap();
    assert!(page.contains("id=\"label\""), "{page}");
    // The case's history on the page says who settled it and why.
    assert!(
        page.contains("<td>Ops Person (dashboard): compiler noise, says Dave</td>"),
        "{page}"
    );
    let path = format!("/case/{id}/label");
    let label = |reply: &str, intent: &str, token: &str| {
        http_post(
            port,
            &path,
            &format!("reply={reply}&intent={intent}&reason=only+numbers&operator=Ops+Person&token={token}"),
        )
    };
    for (out, code) in [
        (label("d1%40x", "other", "wrong"), "403"),
        (label("d1%40x", "maybe", "s3cret-t0ken"), "400"),
        (label("elsewhere%40x", "other", "s3cret-t0ken"), "400"),
    ] {
        assert!(out.starts_with(&format!("HTTP/1.1 {code}")), "{out}");
    }
    let out = label("d1%40x", "other", "s3cret-t0ken");
    assert!(out.starts_with("HTTP/1.1 303"), "{out}");
    assert_eq!(state(), "not-a-regression");
    stop(d);
    let labels: serde_json::Value =
        serde_json::from_slice(&perfbot(&cfg, &["labels", "list", "--json"]).stdout).unwrap();
    assert_eq!(labels.as_array().unwrap().len(), 1, "{labels}");
    assert_eq!(labels[0]["label"], "other");
    assert_eq!(labels[0]["state"], "");
}

/// `report` while `run` holds the database hands the daemon a snapshot: the
/// input and the files it names, copied and validated. Deleting or editing
/// them afterwards changes nothing: the report goes out as validated, with
/// the attachment as it was.
#[test]
fn a_spooled_report_is_a_snapshot_not_a_pointer() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = setup(
        tmp.path(),
        &format!("[web]\nlisten = \"127.0.0.1:{port}\"\n"),
    );
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("base.json"),
        r#"{"fio.write_iops": [41000, 41200, 40800, 41100, 40900]}"#,
    )
    .unwrap();
    std::fs::write(
        work.join("head.json"),
        r#"{"fio.write_iops": [37300, 37200, 37400, 37350, 37250]}"#,
    )
    .unwrap();
    std::fs::write(work.join("config.txt"), "CONFIG_XFS_FS=y\n").unwrap();
    let input = input_with(&work, "in.json", |v| {
        v["tests"] = serde_json::json!([v["tests"][0].clone()]);
        let t = v["tests"][0].as_object_mut().unwrap();
        t.remove("aggregated");
        t.remove("bisect");
        v["tests"][0]["samples"] = serde_json::json!({"base": "base.json", "head": "head.json"});
        v["attachments"] = serde_json::json!([{"name": "config.txt", "path": "config.txt"}]);
    });
    let d = start_daemon(&cfg, port, &[]);
    // The snapshot is complete before `report` returns.
    let o = perfbot(&cfg, &["report", input.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("handed to it as"), "{}", stderr(&o));
    // The originals change or vanish at once.
    std::fs::write(work.join("config.txt"), "CONFIG_EVIL=y\n").unwrap();
    std::fs::remove_file(work.join("head.json")).unwrap();
    std::fs::write(&input, "not even JSON").unwrap();
    assert_eq!(
        outbox_after_waiting(tmp.path(), 1),
        1,
        "the snapshot was queued and sent"
    );
    let mail = std::fs::read_dir(tmp.path().join("state/outbox"))
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "eml"))
        .unwrap()
        .path();
    let raw = std::fs::read(&mail).unwrap();
    let m = mail_parser::MessageParser::default().parse(&raw).unwrap();
    let att = m.attachments().next().expect("the attachment");
    assert_eq!(att.contents(), b"CONFIG_XFS_FS=y\n");
    assert!(String::from_utf8_lossy(&raw).contains("fio.write_iops"));
    let done: Vec<_> = std::fs::read_dir(tmp.path().join("state/spool/done"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    assert!(done.iter().any(|n| n.ends_with("-in.d")), "{done:?}");
    stop_daemon(d);
}

/// The dashboard under load: 100 clients at once, 20 requests each, all
/// answered (queued for a slot, not dropped); and while 100 slow clients
/// keep reconnecting and never finish their headers, `/healthz` still
/// answers at once (a slot is given only to a request that has arrived).
#[test]
fn the_dashboard_queues_bursts_and_answers_health_under_slowloris() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = setup(
        tmp.path(),
        &format!("[web]\nlisten = \"127.0.0.1:{port}\"\n"),
    );
    let d = start_daemon(&cfg, port, &[]);
    let clients: Vec<_> = (0..100)
        .map(|_| {
            std::thread::spawn(move || {
                (0..20)
                    .filter(|_| http_get(port, "/api/cases").is_some())
                    .count()
            })
        })
        .collect();
    let answered: usize = clients.into_iter().map(|c| c.join().unwrap()).sum();
    assert_eq!(answered, 2000, "every request of the burst answered");

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let slow: Vec<_> = (0..100)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                use std::io::Write;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
                        let _ = s.write_all(b"GET /healthz HTTP/1.1\r\nX-Slow: ");
                        for _ in 0..20 {
                            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                                break;
                            }
                            std::thread::sleep(std::time::Duration::from_millis(100));
                            let _ = s.write_all(b"a");
                        }
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(500));
    for _ in 0..10 {
        let t = std::time::Instant::now();
        assert!(http_get(port, "/healthz").is_some(), "health answered");
        assert!(
            t.elapsed() < perfbot::app::web::HEADER_TIMEOUT / 2,
            "health took {:?}",
            t.elapsed()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in slow {
        t.join().unwrap();
    }
    stop_daemon(d);
}

/// A tmpfs of `mb` MB mounted on a new folder, unmounted when dropped
/// (then the folder is removed). `None` where this machine does not let the
/// tests mount (not root, or a container without the right): the caller
/// says so and checks nothing.
struct SmallDisk(PathBuf, #[allow(dead_code)] tempfile::TempDir);

impl SmallDisk {
    fn mount(mb: u32) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mb}M"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallDisk(dir.path().to_path_buf(), dir))
    }

    /// Fill it up but for `left` KB (with one more `filler` file each time).
    fn fill(&self, left: u64) {
        let free = fs_free(&self.0);
        let mut name = "filler".to_string();
        while self.0.join(&name).exists() {
            name.push('+');
        }
        let f = std::fs::File::create(self.0.join(name)).unwrap();
        let keep = free.saturating_sub(left * 1024);
        std::io::Write::write_all(&mut &f, &vec![0u8; keep as usize]).unwrap();
        f.sync_all().unwrap();
    }
}

impl SmallDisk {
    /// Remove what `fill` wrote.
    fn empty(&self) {
        for e in std::fs::read_dir(&self.0).unwrap() {
            let p = e.unwrap().path();
            if p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("filler")
            {
                std::fs::remove_file(p).unwrap();
            }
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Free bytes of the file system holding `p` (from `df`).
fn fs_free(p: &Path) -> u64 {
    let o = Command::new("df")
        .args(["--output=avail", "-B1"])
        .arg(p)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The disk holding the state fills while the daemon reads replies: sled
/// fails every later write of the process, even once space is freed, so
/// the daemon stops with exit 1 and the reason in words, instead of
/// failing every round for ever; the replies it could not record stay
/// unread in the maildir, and a start once there is room reads them.
#[test]
fn a_full_disk_stops_the_daemon_and_loses_no_mail() {
    let Some(disk) = SmallDisk::mount(16) else {
        eprintln!("skipped: this machine does not let the tests mount a tmpfs");
        return;
    };
    let cfg = setup(&disk.0, "[web]\nenabled = false\n");
    let o = perfbot(
        &cfg,
        &["report", "examples/seed002-xfs-fio-falloc-2022.json"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let cases: serde_json::Value =
        serde_json::from_slice(&perfbot(&cfg, &["cases", "list", "--json"]).stdout).unwrap();
    let report = cases[0]["message_id"].as_str().unwrap().to_string();
    let case = cases[0]["id"].as_str().unwrap().to_string();
    // Replies in the maildir, outside the small disk.
    let md = tempfile::tempdir().unwrap();
    for sub in ["new", "cur", "tmp"] {
        std::fs::create_dir_all(md.path().join(sub)).unwrap();
    }
    let n = 400;
    for i in 0..n {
        let body = "x".repeat(3000);
        std::fs::write(
            md.path().join(format!("new/{}.r.host", 1000 + i)),
            format!(
                "From: Dev {i} <dev{i}@kernel.example>\nSubject: Re: x\nMessage-ID: <m{i}@x>\n\
                 In-Reply-To: <{report}>\n\nI looked at this: {body} fine {i}.\n"
            ),
        )
        .unwrap();
    }
    let text = std::fs::read_to_string(&cfg).unwrap().replacen(
        &format!("maildir = {:?}", disk.0.join("state/inbox")),
        &format!("maildir = {:?}", md.path()),
        1,
    );
    std::fs::write(&cfg, text).unwrap();
    disk.fill(600);
    let o = wait_or_kill(spawn_run(&cfg), 60);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the disk that holds it is full")
            && stderr(&o).contains("perfbot run stopped"),
        "{}",
        stderr(&o)
    );
    let unread = std::fs::read_dir(md.path().join("new")).unwrap().count();
    assert!(unread > 0, "the disk did not fill");
    // Not a byte left: even opening the database (which writes) says why.
    disk.fill(0);
    let o = perfbot(&cfg, &["cases", "list"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the disk that holds it is full"),
        "{}",
        stderr(&o)
    );
    disk.empty();
    // Room again: every reply is recorded once, none lost.
    let o = perfbot(&cfg, &["ingest"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&perfbot(&cfg, &["cases", "show", &case, "--json"]).stdout).unwrap();
    let ids: std::collections::BTreeSet<&str> = v["thread"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["message_id"].as_str())
        .filter(|id| id.starts_with('m') && id.ends_with("@x"))
        .collect();
    assert_eq!(ids.len(), n, "{ids:?}");
    assert_eq!(
        v["thread"].as_array().unwrap().len(),
        n + 1,
        "the report and each reply once"
    );
}

/// `perfbot run` on `cfg`, its standard error kept for the test to read.
fn spawn_run(cfg: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(cfg)
        .arg("run")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// The output of `c`, once it exits within `secs` (else killed: a failure).
fn wait_or_kill(mut c: std::process::Child, secs: u64) -> Output {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while c.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    if c.try_wait().unwrap().is_none() {
        let _ = c.kill();
        let o = c.wait_with_output().unwrap();
        panic!("still running after {secs} s: {}", stderr(&o));
    }
    c.wait_with_output().unwrap()
}

/// The disk holding the state fills while the daemon takes report inputs
/// from its spool: the input it could not record is not moved to `failed/`
/// (it is not the input's fault) but left in the spool, the daemon stops
/// with exit 1 (and does not hang in sled's flush on the way out), and a
/// start once there is room takes every input left, once.
#[test]
fn a_full_disk_leaves_spooled_inputs_for_the_next_start() {
    let Some(disk) = SmallDisk::mount(16) else {
        eprintln!("skipped: this machine does not let the tests mount a tmpfs");
        return;
    };
    let spool = tempfile::tempdir().unwrap();
    let cfg = setup(&disk.0, "[web]\nenabled = false\n");
    let text = std::fs::read_to_string(&cfg).unwrap().replacen(
        &format!("spool_dir = {:?}", disk.0.join("state/spool")),
        &format!("spool_dir = {:?}", spool.path()),
        1,
    );
    std::fs::write(&cfg, text).unwrap();
    let o = perfbot(
        &cfg,
        &["report", "examples/seed002-xfs-fio-falloc-2022.json"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    disk.fill(100);
    let example = root().join("examples/seed004-f2fs-aim7-improvement.json");
    let mut input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(example).unwrap()).unwrap();
    let n = 80;
    let settled = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    for i in 0..n {
        input["commit"]["sha"] = format!("{:040x}", 0xabc0000 + i).into();
        let f = spool.path().join(format!("a{i:02}.json"));
        std::fs::write(&f, input.to_string()).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&f)
            .unwrap()
            .set_modified(settled)
            .unwrap();
    }
    let left = || {
        std::fs::read_dir(spool.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "json")
            })
            .count()
    };
    let o = wait_or_kill(spawn_run(&cfg), 60);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the disk that holds it is full"),
        "{}",
        stderr(&o)
    );
    assert!(left() > 0, "the disk did not fill");
    assert!(
        !spool.path().join("failed").exists(),
        "an input was failed for the disk"
    );
    disk.empty();
    let mut d = Daemon(Some(spawn_run(&cfg)));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while left() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(left(), 0, "the inputs left were not taken");
    let c = d.0.take().unwrap();
    unsafe {
        libc::kill(c.id() as i32, libc::SIGTERM);
    }
    assert!(c.wait_with_output().unwrap().status.success());
    let cases: serde_json::Value =
        serde_json::from_slice(&perfbot(&cfg, &["cases", "list", "--json"]).stdout).unwrap();
    assert_eq!(cases.as_array().unwrap().len(), n as usize + 1);
}
