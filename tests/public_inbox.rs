//! `perfbot ingest --public-inbox`: archives in public-inbox layout, built
//! here with gitoxide from the corpus' threads, read from a cursor per
//! repository; a rewritten history is read again without doubling anything.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use perfbot::flows::ingest::public_inbox::write_archive;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn config(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(root().join("config.toml"))
        .unwrap()
        .replace(
            "state_dir = \"state\"",
            &format!("state_dir = {:?}", dir.join("state")),
        )
        .replace(
            "templates_dir = \"templates\"",
            &format!("templates_dir = {:?}", root().join("templates")),
        );
    let p = dir.join("config.toml");
    std::fs::write(
        &p,
        format!("{text}\n[track]\nsenders = [\"oliver.sang@intel.com\"]\n"),
    )
    .unwrap();
    p
}

/// Run `ingest --public-inbox`; the summary line is on standard error.
fn ingest(cfg: &Path, paths: &[&Path]) -> (Output, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(cfg)
        .arg("ingest")
        .arg("--public-inbox")
        .args(paths)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    (o, err)
}

fn thread(name: &str) -> Vec<Vec<u8>> {
    let dir = root().join("tests/fixtures/threads").join(name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .collect();
    files.sort();
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

fn unrelated(n: usize) -> Vec<u8> {
    format!(
        "From: someone@example.org\r\nTo: list@vger.kernel.org\r\nMessage-ID: <unrelated-{n}@example.org>\r\n\
         Subject: [PATCH] something else {n}\r\n\r\nA patch about nothing perfbot follows.\r\n"
    )
    .into_bytes()
}

#[test]
fn an_archive_is_read_from_its_cursor() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path());
    let repo = tmp.path().join("linux-crypto/git/0.git");
    let mut messages = vec![unrelated(1)];
    let t = thread("2024-12-27_linux-crypto_e1d3422c95");
    messages.extend(t.iter().take(4).cloned());
    write_archive(&repo, messages.iter().map(Vec::as_slice)).unwrap();
    // The list folder (grokmirror style): its epochs are found.
    let (o, err) = ingest(&cfg, &[&tmp.path().join("linux-crypto")]);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("read 5,") && err.contains("adopted 1"),
        "{err}"
    );
    assert!(err.contains("new 3"), "{err}");
    // Nothing new: nothing read.
    let (_, err) = ingest(&cfg, &[&repo]);
    assert!(err.contains("read 0,"), "{err}");
    // Appended: only the new commits are read.
    write_archive(&repo, t[4..].iter().map(Vec::as_slice)).unwrap();
    let (_, err) = ingest(&cfg, &[&repo]);
    assert!(err.contains(&format!("read {},", t.len() - 4)), "{err}");
    assert!(err.contains(&format!("new {}", t.len() - 4)), "{err}");
    // A second epoch is read after the first.
    let epoch1 = tmp.path().join("linux-crypto/git/1.git");
    write_archive(&epoch1, [unrelated(2).as_slice()]).unwrap();
    let (_, err) = ingest(&cfg, &[&tmp.path().join("linux-crypto")]);
    assert!(
        err.contains("read 1,") && err.contains("unmatched 1"),
        "{err}"
    );
}

#[test]
fn a_rewritten_history_is_read_again_without_doubles() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path());
    let repo = tmp.path().join("0.git");
    let t = thread("2023-10-20_cgroups_51d74c18a9");
    write_archive(&repo, t.iter().map(Vec::as_slice)).unwrap();
    let (o, err) = ingest(&cfg, &[&repo]);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("adopted 1"), "{err}");
    // The archive is rebuilt with other commits (a message removed from the
    // middle, one added): the cursor's commit is gone.
    std::fs::remove_dir_all(&repo).unwrap();
    let mut again: Vec<Vec<u8>> = t.clone();
    again.remove(3);
    again.push(unrelated(9));
    write_archive(&repo, again.iter().map(Vec::as_slice)).unwrap();
    let (o, err) = ingest(&cfg, &[&repo]);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("history rewritten"), "{err}");
    assert!(
        err.contains("new 0") && err.contains(&format!("duplicates {}", t.len() - 1)),
        "{err}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(&cfg)
        .args(["cases", "list", "--json"])
        .output()
        .unwrap();
    let cases: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(cases.as_array().unwrap().len(), 1, "one case, not two");
}

#[test]
fn a_path_that_is_no_archive_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path());
    let (o, err) = ingest(&cfg, &[tmp.path()]);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not a public-inbox archive"), "{err}");
}

fn git(repo: &Path, args: &[&str], stdin: Option<&str>) -> String {
    use std::io::Write;
    let mut c = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("git runs");
    if let Some(input) = stdin {
        c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    }
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success(), "git {args:?}");
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

fn blob_id(data: &[u8]) -> String {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, data)
        .unwrap()
        .to_string()
}

fn loose(repo: &Path, hex: &str) -> PathBuf {
    repo.join("objects").join(&hex[..2]).join(&hex[2..])
}

fn perfbot_json(cfg: &Path, args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&perfbot_out(cfg, args)).unwrap()
}

/// What `perfbot` prints on standard output; it must succeed.
fn perfbot_out(cfg: &Path, args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(cfg)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Make `repo` what `git clone --filter` leaves: every object in one
/// promisor pack but `missing`, which is nowhere.
fn make_partial_clone(repo: &Path, missing: &str) {
    let objects = git(repo, &["rev-list", "--objects", "--all"], None);
    let keep: Vec<&str> = objects
        .lines()
        .map(|l| l.split(' ').next().unwrap())
        .filter(|id| *id != missing)
        .collect();
    let pack = git(
        repo,
        &["pack-objects", "objects/pack/pack"],
        Some(&(keep.join("\n") + "\n")),
    );
    std::fs::write(repo.join(format!("objects/pack/pack-{pack}.promisor")), "").unwrap();
    git(repo, &["prune-packed"], None);
    std::fs::remove_file(loose(repo, missing)).unwrap();
    git(repo, &["config", "core.repositoryformatversion", "1"], None);
    git(repo, &["config", "extensions.partialClone", "origin"], None);
    git(repo, &["config", "remote.origin.promisor", "true"], None);
    git(
        repo,
        &["config", "remote.origin.url", "https://lore.kernel.org/x"],
        None,
    );
}

/// A partial clone with a blob missing in the middle: every other message
/// is read (the report and the replies after the hole too), the hole is
/// listed with repository, commit, object and reason, the exit code says
/// something was skipped, a rerun tries it again without doubling anything,
/// and once the object is there it is read.
#[test]
fn a_partial_clone_is_read_past_its_missing_object() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path());
    let repo = tmp.path().join("linux-crypto/git/0.git");
    let t = thread("2024-12-27_linux-crypto_e1d3422c95");
    let mut messages = vec![unrelated(1)];
    messages.extend(t.iter().cloned());
    write_archive(&repo, messages.iter().map(Vec::as_slice)).unwrap();
    // The first reply's blob is the hole; the report comes before it.
    let hole = &messages[2];
    let hole_id = blob_id(hole);
    make_partial_clone(&repo, &hole_id);

    let (o, err) = ingest(&cfg, &[&repo]);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains(&format!("read {},", messages.len() - 1)),
        "{err}"
    );
    assert!(err.contains("unreadable 1"), "{err}");
    assert!(err.contains("adopted 1"), "{err}");
    assert!(
        err.contains(&format!("new {}", t.len() - 2)),
        "every later reply: {err}"
    );
    let listing = perfbot_json(&cfg, &["quarantine", "list", "--json"]);
    let u = &listing["unreadable"];
    assert_eq!(u.as_array().unwrap().len(), 1, "{listing}");
    assert_eq!(u[0]["object"], hole_id.as_str());
    assert!(
        u[0]["repository"].as_str().unwrap().ends_with("0.git"),
        "{u}"
    );
    assert_eq!(u[0]["commit"].as_str().unwrap().len(), 40);
    assert!(!u[0]["reason"].as_str().unwrap().is_empty());
    // For people: what could not be read, where, and how often it was tried.
    let text = perfbot_out(&cfg, &["quarantine", "list"]);
    assert!(text.contains("  unreadable  tried 1×, last "), "{text}");
    let place = format!(
        "{} commit {} object {hole_id}",
        u[0]["repository"]
            .as_str()
            .unwrap()
            .trim_start_matches("public-inbox:"),
        u[0]["commit"].as_str().unwrap()
    );
    assert!(text.contains(&place), "{place}: {text}");

    // Again: the hole is tried again, nothing else is read twice.
    let (o, err) = ingest(&cfg, &[&repo]);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains("read 0,") && err.contains("unreadable 1"),
        "{err}"
    );
    let listing = perfbot_json(&cfg, &["quarantine", "list", "--json"]);
    assert_eq!(listing["unreadable"][0]["tries"], 2);

    // The object arrives (a fetch from the promisor): it is read, once.
    let dir = loose(&repo, &hole_id);
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    let r = gix::open(&repo).unwrap();
    r.write_blob(hole).unwrap();
    let (o, err) = ingest(&cfg, &[&repo]);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("read 1,") && err.contains("new 1,"), "{err}");
    assert!(err.contains("unreadable before were read"), "{err}");
    let listing = perfbot_json(&cfg, &["quarantine", "list", "--json"]);
    assert_eq!(listing["unreadable"], serde_json::json!([]));
}

/// Damaged objects of every kind: each is named and skipped, the message
/// after it is read, nothing is taken for valid that is not.
#[test]
fn damaged_objects_are_named_and_skipped() {
    type Damage = fn(&Path, &str);
    let garbage: Damage = |file, _| std::fs::write(file, b"this is not zlib data").unwrap();
    let truncated: Damage = |file, _| {
        let data = std::fs::read(file).unwrap();
        std::fs::write(file, &data[..data.len() / 2]).unwrap();
    };
    // A valid loose object, but of other content than its name says.
    let swapped: Damage = |file, _| {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(b"blob 5\0hello").unwrap();
        std::fs::write(file, z.finish().unwrap()).unwrap();
    };
    let cases: [(&str, Damage, &str); 3] = [
        ("garbage", garbage, "blob `m`"),
        ("truncated", truncated, "blob `m`"),
        ("swapped", swapped, "damaged"),
    ];
    for (name, damage, reason) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = config(tmp.path());
        let repo = tmp.path().join("0.git");
        let t = thread("2024-12-27_linux-crypto_e1d3422c95");
        write_archive(&repo, t.iter().map(Vec::as_slice)).unwrap();
        let id = blob_id(&t[1]);
        let file = loose(&repo, &id);
        let mut perms = std::fs::metadata(&file).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&file, perms).unwrap();
        damage(&file, &id);
        let (o, err) = ingest(&cfg, &[&repo]);
        assert_eq!(o.status.code(), Some(4), "{name}: {err}");
        assert!(err.contains("unreadable 1"), "{name}: {err}");
        assert!(
            err.contains(&format!("new {}", t.len() - 2)),
            "{name}: {err}"
        );
        let listing = perfbot_json(&cfg, &["quarantine", "list", "--json"]);
        let why = listing["unreadable"][0]["reason"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(why.contains(reason), "{name}: {why}");
    }
}

/// `m` that is a gitlink, and a blob over the size cap: named and skipped
/// (the big one is never inflated).
#[test]
fn an_m_that_is_no_message_blob_is_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path());
    // A cap of 4 × 2,000 bytes.
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace("[inbound]", "[inbound]\nmax_message_bytes = 2000"),
    )
    .unwrap();
    let repo = tmp.path().join("0.git");
    let mut big = unrelated(2);
    big.extend(std::iter::repeat_n(b'x', 10_000));
    write_archive(&repo, [unrelated(1).as_slice(), big.as_slice()]).unwrap();
    // A commit whose `m` is a gitlink to a commit that is nowhere.
    let tree = git(
        &repo,
        &["mktree"],
        Some("160000 commit 1234567890123456789012345678901234567890\tm\n"),
    );
    let head = git(&repo, &["rev-parse", "refs/heads/master"], None);
    let c = git(
        &repo,
        &["commit-tree", &tree, "-p", &head, "-m", "gitlink"],
        None,
    );
    git(&repo, &["update-ref", "refs/heads/master", &c], None);
    write_archive(&repo, [unrelated(3).as_slice()]).unwrap();
    let (o, err) = ingest(&cfg, &[&repo]);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains("read 2,") && err.contains("unreadable 2"),
        "{err}"
    );
    let listing = perfbot_json(&cfg, &["quarantine", "list", "--json"]);
    let reasons: Vec<&str> = listing["unreadable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["reason"].as_str().unwrap())
        .collect();
    assert!(
        reasons.iter().any(|r| r.contains("not a message blob")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("10") && r.contains("max_message_bytes")),
        "{reasons:?}"
    );
}

/// A merge's second parent holds messages too: they are read.
#[test]
fn a_merged_line_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path());
    let repo = tmp.path().join("0.git");
    write_archive(&repo, [unrelated(1).as_slice()]).unwrap();
    let base = git(&repo, &["rev-parse", "refs/heads/master"], None);
    write_archive(&repo, [unrelated(2).as_slice()]).unwrap();
    let main = git(&repo, &["rev-parse", "refs/heads/master"], None);
    // A side line from the base with a message of its own, merged.
    git(&repo, &["update-ref", "refs/heads/master", &base], None);
    write_archive(&repo, [unrelated(3).as_slice()]).unwrap();
    let side = git(&repo, &["rev-parse", "refs/heads/master"], None);
    let tree = git(&repo, &["rev-parse", &format!("{main}^{{tree}}")], None);
    let merge = git(
        &repo,
        &[
            "commit-tree",
            &tree,
            "-p",
            &main,
            "-p",
            &side,
            "-m",
            "merge",
        ],
        None,
    );
    git(&repo, &["update-ref", "refs/heads/master", &merge], None);
    let (o, err) = ingest(&cfg, &[&repo]);
    assert!(o.status.success(), "{err}");
    // 1, 2, 3 and the merge's own tree (message 2 again); first parents
    // alone would read three.
    assert!(err.contains("read 4,"), "{err}");
}

/// A grokmirror tree where one list's repository cannot be opened: the
/// others are still read, and the broken one is named.
#[test]
fn one_broken_list_does_not_stop_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path());
    let a = tmp.path().join("lists/aaa/git/0.git");
    let b = tmp.path().join("lists/bbb/git/0.git");
    write_archive(&a, [unrelated(1).as_slice()]).unwrap();
    write_archive(&b, [unrelated(2).as_slice()]).unwrap();
    std::fs::write(a.join("config"), "[core\nthis is not a git config").unwrap();
    let (o, err) = ingest(&cfg, &[&tmp.path().join("lists")]);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("aaa"), "the broken list is named: {err}");
    assert!(err.contains("read 1,"), "the other list is read: {err}");
}

/// Replies read before their report (an archive out of order, or the
/// report in a later epoch): held, and recorded in the case once the report
/// is read and adopted.
#[test]
fn replies_before_their_report_are_held_until_it_comes() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path());
    let repo = tmp.path().join("0.git");
    let t = thread("2024-12-27_linux-crypto_e1d3422c95");
    let replies = &t[1..];
    write_archive(&repo, replies.iter().map(Vec::as_slice)).unwrap();
    let (o, err) = ingest(&cfg, &[&repo]);
    assert!(o.status.success(), "{err}");
    assert!(err.contains(&format!("held {}", replies.len())), "{err}");
    let listing = perfbot_json(&cfg, &["quarantine", "list", "--json"]);
    assert_eq!(listing["held"].as_array().unwrap().len(), replies.len());
    let text = perfbot_out(&cfg, &["quarantine", "list"]);
    let said = text
        .lines()
        .filter(|l| l.contains("  held  ") && l.contains("answers a report not read yet"))
        .count();
    assert_eq!(said, replies.len(), "{text}");
    for h in listing["held"].as_array().unwrap() {
        let id = format!("<{}>", h["message_id"].as_str().unwrap());
        assert!(text.contains(&id), "{id}: {text}");
    }
    // The report comes: adopted, and every held reply lands in its case.
    write_archive(&repo, [t[0].as_slice()]).unwrap();
    let (o, err) = ingest(&cfg, &[&repo]);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("adopted 1"), "{err}");
    assert!(err.contains(&format!("new {}", replies.len())), "{err}");
    let cases = perfbot_json(&cfg, &["cases", "list", "--json"]);
    let id = cases[0]["id"].as_str().unwrap();
    let case = perfbot_json(&cfg, &["cases", "show", id, "--json"]);
    let people = case["thread"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["sender"] == "person")
        .count();
    assert!(people >= 1, "{case}");
    let listing = perfbot_json(&cfg, &["quarantine", "list", "--json"]);
    assert_eq!(listing["held"], serde_json::json!([]));
    // Nothing is read twice on a rerun.
    let (_, err) = ingest(&cfg, &[&repo]);
    assert!(err.contains("read 0,") && !err.contains("held"), "{err}");
}
