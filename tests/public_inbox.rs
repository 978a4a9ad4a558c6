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
            "outbox_dir = \"state/outbox\"",
            &format!("outbox_dir = {:?}", dir.join("outbox")),
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

/// A damaged object in the middle of an archive (a loose blob overwritten):
/// the read stops with an error naming the repository and the commit, what
/// was read before it is kept, and once the object is repaired a rerun reads
/// the rest without doubling what it had.
#[test]
fn a_damaged_object_stops_the_read_and_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path());
    let repo = tmp.path().join("linux-crypto/git/0.git");
    let t = thread("2024-12-27_linux-crypto_e1d3422c95");
    let mut messages = vec![unrelated(1)];
    messages.extend(t.iter().cloned());
    write_archive(&repo, messages.iter().map(Vec::as_slice)).unwrap();
    // Damage the blob of the last reply: its loose object file.
    let last = messages.last().unwrap();
    let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, last).unwrap();
    let hex = id.to_string();
    let file = repo.join("objects").join(&hex[..2]).join(&hex[2..]);
    let good = std::fs::read(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, b"this is not zlib data").unwrap();
    let (o, err) = ingest(&cfg, &[&repo]);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("0.git"), "the repository is named: {err}");
    // Everything before the damaged message was recorded.
    let cases = Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(&cfg)
        .args(["cases", "list", "--json"])
        .output()
        .unwrap();
    let cases: serde_json::Value = serde_json::from_slice(&cases.stdout).unwrap();
    assert_eq!(cases.as_array().unwrap().len(), 1, "{err}");
    // Repaired: the rerun reads again from the cursor (none was set, the
    // read failed) and records only what is new: the last reply.
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, good).unwrap();
    let (o, err) = ingest(&cfg, &[&repo]);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("new 1,") || err.contains("new 1 "), "{err}");
    assert!(
        err.contains(&format!("duplicates {}", t.len() - 1)),
        "{err}"
    );
}
