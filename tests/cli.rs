//! The `perfbot` binary as an operator runs it: real files, a real sled
//! database in a temporary state directory, exit codes and messages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A config whose state lives in `dir`.
fn setup(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(root().join("config.toml")).unwrap();
    let text = text
        .replace(
            "state_dir = \"state\"",
            &format!("state_dir = {:?}", dir.join("state")),
        )
        .replace(
            "templates_dir = \"templates\"",
            &format!("templates_dir = {:?}", root().join("templates")),
        );
    let p = dir.join("config.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn perfbot(config: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(config)
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn eml_files(dir: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(dir.join("state/outbox")) {
        Ok(rd) => rd
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "eml"))
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn report_twice_makes_one_case_and_one_email() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path());
    let ex = "examples/seed004-f2fs-aim7-improvement.json";
    let o = perfbot(&cfg, &["report", ex]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("queued"), "{}", stderr(&o));
    let o = perfbot(&cfg, &["report", ex]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("exists already"), "{}", stderr(&o));
    let files = eml_files(tmp.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let eml = std::fs::read(&files[0]).unwrap();
    assert!(eml.windows(13).any(|w| w == b"aim7.jobs-per"));

    let o = perfbot(&cfg, &["cases", "list", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cases = v.as_array().unwrap();
    assert_eq!(cases.len(), 1);
    let c = &cases[0];
    assert_eq!(c["state"], "reported");
    assert_eq!(c["headline_metric"], "aim7.jobs-per-min");
    assert_eq!(c["commit"], "84b89e5d943d8d6b997fcebb4609373e1b3e4b03");
    for k in ["id", "subject", "message_id", "created", "updated"] {
        assert!(c.get(k).is_some(), "missing {k}");
    }
    // A reported case waits on the commit's author, the report's first To.
    let waits = c["waits_on"].as_str().expect("waits_on");
    assert!(waits.contains('@'), "{waits}");

    let id = c["id"].as_str().unwrap();
    let o = perfbot(&cfg, &["cases", "list"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.ends_with(&format!("  [waits on {waits}]\n")), "{out}");
    // The dashboard's filters, at the command line; the state column is
    // padded whatever the state's length.
    for (args, want) in [
        (
            &["--state", "reported", "--age", "1"][..],
            format!("{id}  reported          [f2fs]"),
        ),
        (&["--year", "1999"][..], "no cases that match".to_string()),
        (
            &["--state", "fixed"][..],
            "no cases in state fixed".to_string(),
        ),
        (&["--needs-human"][..], "no cases that match".to_string()),
    ] {
        let o = perfbot(&cfg, &[&["cases", "list"][..], args].concat());
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.starts_with(&want), "{args:?}: {out}");
    }
    let o = perfbot(&cfg, &["cases", "show", id]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("queued -> reported") || out.contains("-> reported"),
        "{out}"
    );
    assert!(out.contains("report from examples/seed004"), "{out}");
}

#[test]
fn print_writes_the_mail_and_records_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path());
    let o = perfbot(
        &cfg,
        &[
            "report",
            "--print",
            "--template",
            "classic",
            "examples/seed002-xfs-fio-falloc-2022.json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("Subject: [xfs] 0b02c8c0d7: fio.write_iops -9.0% regression"),
        "{out}"
    );
    assert!(out.contains(
        "In addition to that, the commit also has significant impact on the following tests:"
    ));
    assert!(
        !tmp.path().join("state").exists(),
        "--print must not create state"
    );
}

#[test]
fn nothing_to_report_exits_3_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path());
    let o = perfbot(
        &cfg,
        &["report", "examples/seed000-xfs-fio-randwrite-2018.json"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("latency-histogram bin"),
        "{}",
        stderr(&o)
    );
    assert!(eml_files(tmp.path()).is_empty());
    // Forced, it is reported with the named headline.
    let o = perfbot(
        &cfg,
        &[
            "report",
            "--force",
            "examples/seed000-xfs-fio-randwrite-2018.json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(eml_files(tmp.path()).len(), 1);
}

/// Each bad input: exit 2, one line naming the file and the field, nothing written.
#[test]
fn bad_input_is_refused_clearly_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path());
    let good: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("examples/seed004-f2fs-aim7-improvement.json"))
            .unwrap(),
    )
    .unwrap();
    let mut cases: Vec<(&str, String, &str)> = Vec::new();
    cases.push(("missing.json", String::new(), "no such file"));
    cases.push((
        "malformed.json",
        "{\"commit\": {\n  \"sha\": ".into(),
        "line 2",
    ));
    let mut v = good.clone();
    v["tests"][0]["aggregated"][0]["head"] = serde_json::json!({"mean": 1.0, "stddev_percent": -3});
    cases.push((
        "negative-spread.json",
        v.to_string(),
        "$.tests[0].aggregated[0].head",
    ));
    let mut v = good.clone();
    v["tests"][0]["aggregated"] = serde_json::json!([]);
    cases.push(("empty-rows.json", v.to_string(), "$.tests[0].aggregated"));
    let mut v = good.clone();
    v["tests"][0].as_object_mut().unwrap().remove("aggregated");
    v["tests"][0]["samples"] =
        serde_json::json!({"base": {"fio.write_iops": [1, 2, 3]}, "head": {"fio.write_iops": []}});
    cases.push(("empty-samples.json", v.to_string(), "empty sample list"));
    let mut v = good.clone();
    v["tests"][0].as_object_mut().unwrap().remove("aggregated");
    v["tests"][0]["samples"] =
        serde_json::json!({"base": {"a.x": [1, 2, 3]}, "head": {"b.y": [1, 2, 3]}});
    cases.push(("mismatched.json", v.to_string(), "no metric in common"));
    let mut v = good.clone();
    v["tests"][0].as_object_mut().unwrap().remove("aggregated");
    cases.push(("no-samples.json", v.to_string(), "no samples"));
    let mut v = good.clone();
    v["tests"][0].as_object_mut().unwrap().remove("aggregated");
    v["tests"][0]["samples"] =
        serde_json::json!({"base": {"fio.write_iops": [1, 2, 3]}, "head": "missing.matrix.json"});
    cases.push((
        "missing-matrix.json",
        v.to_string(),
        "missing.matrix.json: no such file",
    ));
    let mut v = good.clone();
    v["commit"]["sha"] = serde_json::json!("not-a-sha");
    cases.push(("bad-sha.json", v.to_string(), "$.commit.sha"));
    let mut v = good.clone();
    v["commit"]["subject"] = serde_json::json!("xfs: evil\r\nBcc: victim@example.org");
    cases.push(("header-injection.json", v.to_string(), "$.commit.subject"));
    let mut v = good.clone();
    v["tests"][0]["params"]["x"] = serde_json::json!({"nested": 1});
    cases.push(("nested-param.json", v.to_string(), "$.tests[0].params.x"));
    let mut v = good.clone();
    v["tests"][0]["bisect"]["points"][0]["values"]["aim7.jobs-per-min"] = serde_json::json!("NaN");
    cases.push(("nan-bisect.json", v.to_string(), "values"));
    let mut v = good.clone();
    v["style"]["archive_tag"] = serde_json::json!("Fixes");
    cases.push(("archive-tag.json", v.to_string(), "unknown variant `Fixes`"));
    let mut v = good.clone();
    v["tests"][0]["aggregated"][0]["base"] = serde_json::json!({"mean": null, "stddev_percent": 1});
    v["tests"][0]["aggregated"][0]
        .as_object_mut()
        .unwrap()
        .remove("change");
    cases.push((
        "blank-mean.json",
        v.to_string(),
        "$.tests[0].aggregated[0].change",
    ));
    let mut v = good.clone();
    v["tests"][0]["kconfig"] = serde_json::json!(" ");
    cases.push(("blank-kconfig.json", v.to_string(), "$.tests[0].kconfig"));
    let mut v = good.clone();
    v["unexpected"] = serde_json::json!(1);
    cases.push((
        "unknown-field.json",
        v.to_string(),
        "unknown field `unexpected`",
    ));
    cases.push((
        "nan-literal.json",
        std::fs::read_to_string(root().join("examples/seed004-f2fs-aim7-improvement.json"))
            .unwrap()
            .replacen("2085.0", "NaN", 1),
        "malformed JSON",
    ));

    for (name, text, needle) in &cases {
        let p = tmp.path().join(name);
        if *name != "missing.json" {
            std::fs::write(&p, text).unwrap();
        }
        let o = perfbot(&cfg, &["report", p.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(name),
            "{name}: error does not name the file: {err}"
        );
        assert!(
            err.contains(needle),
            "{name}: error does not say {needle:?}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{name}: not one line: {err}");
    }
    assert!(
        !tmp.path().join("state").exists(),
        "bad input created state"
    );

    let o = perfbot(
        &cfg,
        &[
            "report",
            "--template",
            "nosuch",
            "examples/seed004-f2fs-aim7-improvement.json",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("unknown template"), "{}", stderr(&o));
    assert!(!tmp.path().join("state").exists());
}

/// `PERFBOT_CONFIG` set but empty is no config file; set, it is one.
#[test]
fn an_empty_perfbot_config_is_none() {
    let case = root().join("tests/fixtures/conformance/fio_two_commits/case.json");
    let run = |value: &str| {
        Command::new(env!("CARGO_BIN_EXE_perfbot"))
            .args(["compare", case.to_str().unwrap()])
            .env("PERFBOT_CONFIG", value)
            .current_dir(root())
            .output()
            .unwrap()
    };
    let o = run("");
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run("/nonexistent/perfbot.toml");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/nonexistent/perfbot.toml"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn compare_prints_the_conformance_table_and_accepts_matrices() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path());
    let dir = root().join("tests/fixtures/conformance/fio_two_commits");
    let o = perfbot(&cfg, &["compare", dir.join("case.json").to_str().unwrap()]);
    assert!(o.status.success());
    assert_eq!(o.stdout, std::fs::read(dir.join("output.txt")).unwrap());
    let o = perfbot(
        &cfg,
        &[
            "compare",
            dir.join("base.matrix.json").to_str().unwrap(),
            dir.join("head.matrix.json").to_str().unwrap(),
            "--commit",
            "8925a3dc4771004b2ff4c1d0f3a9e6b7c5d2e1f0",
            "--commit",
            "0b02c8c0d75a738c5db1f6b9d8d6a17c9b7e4a93",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let want = std::fs::read_to_string(dir.join("output.txt")).unwrap();
    // Same rows as the case file; only the params lines differ (no axes given).
    let rows = |s: &str| {
        s.lines()
            .skip_while(|l| !l.starts_with("---"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(rows(&out), rows(&want));
    // The commits as one list, or after one flag, are the same thing.
    let (base, head) = (dir.join("base.matrix.json"), dir.join("head.matrix.json"));
    for commits in [
        vec![
            "--commit",
            "8925a3dc4771004b2ff4c1d0f3a9e6b7c5d2e1f0,0b02c8c0d75a738c5db1f6b9d8d6a17c9b7e4a93",
        ],
        vec![
            "--commit",
            "8925a3dc4771004b2ff4c1d0f3a9e6b7c5d2e1f0",
            "0b02c8c0d75a738c5db1f6b9d8d6a17c9b7e4a93",
        ],
    ] {
        let mut args = vec!["compare", base.to_str().unwrap(), head.to_str().unwrap()];
        args.extend(commits);
        let o = perfbot(&cfg, &args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(String::from_utf8_lossy(&o.stdout), out);
    }
    // Common axes print sorted by name, as ncompare does, whatever the
    // order in the case file.
    let mut case: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("case.json")).unwrap()).unwrap();
    let axes = case["common_axes"].as_object().unwrap().clone();
    let mut reversed = serde_json::Map::new();
    for (k, v) in axes.iter().rev() {
        reversed.insert(k.clone(), v.clone());
    }
    case["common_axes"] = serde_json::Value::Object(reversed);
    for m in ["base.matrix.json", "head.matrix.json"] {
        std::fs::copy(dir.join(m), tmp.path().join(m)).unwrap();
    }
    let shuffled = tmp.path().join("case.json");
    std::fs::write(&shuffled, serde_json::to_vec_pretty(&case).unwrap()).unwrap();
    let o = perfbot(&cfg, &["compare", shuffled.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, std::fs::read(dir.join("output.txt")).unwrap());
}

#[test]
fn corrupt_or_newer_state_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path());
    let db = tmp.path().join("state/db");
    std::fs::create_dir_all(&db).unwrap();
    std::fs::write(db.join("garbage"), b"not sled").unwrap();
    let o = perfbot(&cfg, &["cases", "list"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not a perfbot database"),
        "{}",
        stderr(&o)
    );
    assert!(db.join("garbage").exists(), "must not reset the directory");

    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path());
    {
        // Create the database, then write as a newer perfbot would: sled
        // directly, a schema this one does not know.
        drop(perfbot::store::Store::open(&tmp.path().join("state")).unwrap());
        // sled's flusher thread lets go of the file lock a moment after the
        // drop: wait for it (bounded).
        let mut tries = 0;
        let db = loop {
            match sled::open(tmp.path().join("state/db")) {
                Ok(db) => break db,
                Err(_) if tries < 100 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(e) => panic!("{e}"),
            }
        };
        db.open_tree("meta")
            .unwrap()
            .insert("schema", b"99".as_slice())
            .unwrap();
        db.flush().unwrap();
    }
    let o = perfbot(&cfg, &["cases", "list"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("newer perfbot"), "{}", stderr(&o));
}

/// `bench --what open` reads back every case it queued, each time it opens
/// the database (else it fails), in a scratch directory it removes. No
/// timing is judged.
#[test]
fn the_open_bench_reads_back_every_case() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path());
    let scratch = tmp.path().join("tmp");
    std::fs::create_dir(&scratch).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(&cfg)
        .args([
            "bench",
            "--what",
            "open",
            "--count",
            "5",
            "--iterations",
            "3",
        ])
        .env("TMPDIR", &scratch)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("open: a database of 5 cases"), "{out}");
    let rows: Vec<&str> = out.lines().skip(1).map(str::trim_start).collect();
    assert!(rows[0].starts_with("open "), "{out}");
    assert!(rows[1].starts_with("list cases "), "{out}");
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
    assert!(!tmp.path().join("state").exists());
}

/// `bench --what dashboard` serves every page it times, over its own
/// scratch cases: each line names a page answered 200 OK (else the bench
/// fails). No timing is judged.
#[test]
fn the_dashboard_bench_serves_every_page() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path());
    let args = [
        "bench",
        "--what",
        "dashboard",
        "--count",
        "6",
        "--iterations",
        "2",
    ];
    let scratch = tmp.path().join("tmp");
    std::fs::create_dir(&scratch).unwrap();
    let in_scratch = |cfg: &Path| {
        Command::new(env!("CARGO_BIN_EXE_perfbot"))
            .arg("--config")
            .arg(cfg)
            .args(args)
            .env("TMPDIR", &scratch)
            .output()
            .unwrap()
    };
    let o = in_scratch(&cfg);
    assert!(o.status.success(), "{}", stderr(&o));
    let left = || std::fs::read_dir(&scratch).unwrap().count();
    assert_eq!(left(), 0, "the bench's scratch directory is removed");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("dashboard: 6 cases"), "{out}");
    let pages: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        pages,
        [
            "/",
            "/?page=2",
            "/?state=reported",
            "/?waits_on=bob",
            "/api/cases",
            "/digest"
        ]
    );
    // Its scratch state is its own: the configured one is never made.
    assert!(!tmp.path().join("state").exists());
    // A bench that fails part way (here: a dashboard template that does
    // not parse, after the cases are queued) says why and leaves nothing.
    // (`[web] templates_dir` is `templates/web` beside the config.)
    let web = tmp.path().join("templates/web");
    std::fs::create_dir_all(&web).unwrap();
    std::fs::write(web.join("list.hbs"), "{{#each cases}}").unwrap();
    let o = in_scratch(&cfg);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("web/list"), "{}", stderr(&o));
    assert_eq!(left(), 0, "nothing left behind by a failed bench");
}

#[test]
fn optout_commands_say_what_they_did() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path());
    // The operator's own list in the config: perfbot cannot edit it.
    let text = std::fs::read_to_string(&cfg).unwrap();
    let text = text.replace("optout = []", "optout = [\"Carol <carol@example.test>\"]");
    assert!(text.contains("carol@"), "config.toml has no `optout = []`");
    std::fs::write(&cfg, text).unwrap();
    // (arguments, exit code, what stderr says), in order.
    let steps: &[(&[&str], i32, &str)] = &[
        (
            &["add", "Bob <BOB@example.test>", "--reason", "asked"],
            0,
            "bob@example.test opted out",
        ),
        (
            &["add", "bob@example.test"],
            0,
            "bob@example.test was opted out already",
        ),
        (&["add", "not an address"], 2, "not an e-mail address"),
        (
            &["remove", "nobody@example.test"],
            0,
            "nobody@example.test was not opted out",
        ),
        (
            &["remove", "carol@example.test"],
            1,
            "carol@example.test is opted out in",
        ),
        (
            &["add", "carol@example.test"],
            0,
            "carol@example.test opted out",
        ),
        (
            &["remove", "CAROL@example.test"],
            1,
            "remove it there (its entry in the database is removed)",
        ),
        (
            &["remove", "bob@example.test"],
            0,
            "bob@example.test gets mail again",
        ),
        (
            &["remove", "bob@example.test"],
            0,
            "bob@example.test was not opted out",
        ),
    ];
    for (args, code, says) in steps {
        let mut all = vec!["optout"];
        all.extend_from_slice(args);
        let o = perfbot(&cfg, &all);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(*code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let o = perfbot(&cfg, &["optout", "list"]);
    let list = String::from_utf8_lossy(&o.stdout);
    assert_eq!(list.trim_end(), "carol@example.test\t(config)", "{list}");
    // An opt-out with its reason is listed with it.
    assert!(perfbot(
        &cfg,
        &[
            "optout",
            "add",
            "dan@example.test",
            "--reason",
            "asked by mail"
        ]
    )
    .status
    .success());
    let list = String::from_utf8_lossy(&perfbot(&cfg, &["optout", "list"]).stdout).into_owned();
    assert!(
        list.lines()
            .any(|l| l.starts_with("dan@example.test") && l.contains("asked by mail")),
        "{list}"
    );
}

/// An operator's copy of the digest template made before a section was
/// added: the digest is still printed, and stderr says what the copy leaves
/// out (the JSON, which no template renders, says nothing).
#[test]
fn digest_warns_of_an_old_copy_of_its_template() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path());
    let mine = tmp.path().join("templates");
    std::fs::create_dir(&mine).unwrap();
    let text = std::fs::read_to_string(&cfg).unwrap();
    let text = text.replace(
        &format!("templates_dir = {:?}", root().join("templates")),
        &format!("templates_dir = {mine:?}"),
    );
    assert!(text.contains(&format!("{mine:?}")), "no templates_dir set");
    std::fs::write(&cfg, text).unwrap();
    let shipped = std::fs::read_to_string(root().join("templates/digest.hbs")).unwrap();
    let (head, rest) = shipped.split_once("{{#if unread.total}}").unwrap();
    let (_, tail) = rest.split_once("{{/if}}\n{{/if}}").unwrap();
    std::fs::write(mine.join("digest.hbs"), format!("{head}{tail}")).unwrap();
    let o = perfbot(&cfg, &["digest"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("perfbot digest"));
    let want = format!(
        "warning: {}: this copy never names `unread`",
        mine.join("digest.hbs").display()
    );
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    let o = perfbot(&cfg, &["digest", "--format", "json"]);
    assert!(
        o.status.success() && stderr(&o).is_empty(),
        "{}",
        stderr(&o)
    );
    // The shipped copy says nothing.
    std::fs::write(mine.join("digest.hbs"), shipped).unwrap();
    let o = perfbot(&cfg, &["digest"]);
    assert!(
        o.status.success() && stderr(&o).is_empty(),
        "{}",
        stderr(&o)
    );

    // `--format html` renders the dashboard's digest page in its layout:
    // an old copy of either is named.
    let web = tmp.path().join("web");
    std::fs::create_dir(&web).unwrap();
    let text = std::fs::read_to_string(&cfg).unwrap();
    let text = text.replacen("[web]\n", &format!("[web]\ntemplates_dir = {web:?}\n"), 1);
    assert!(text.contains(&format!("{web:?}")), "no [web] section");
    std::fs::write(&cfg, text).unwrap();
    let layout = std::fs::read_to_string(root().join("templates/web/layout.hbs")).unwrap();
    let untitled = layout.replace(
        "<title>{{title}} · perfbot</title>",
        "<title>perfbot</title>",
    );
    assert_ne!(layout, untitled);
    std::fs::write(web.join("layout.hbs"), untitled).unwrap();
    let o = perfbot(&cfg, &["digest", "--format", "html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("<title>perfbot</title>"));
    let want = format!(
        "warning: {}: this copy never names `title`",
        web.join("layout.hbs").display()
    );
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    // The text digest uses no page: it says nothing of them.
    let o = perfbot(&cfg, &["digest"]);
    assert!(
        o.status.success() && stderr(&o).is_empty(),
        "{}",
        stderr(&o)
    );
}
