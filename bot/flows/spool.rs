//! Handing report inputs to a running daemon. `perfbot report` cannot open
//! the database `perfbot run` holds, so it spools the input: not a pointer
//! to it (an input edited or deleted afterwards would then fail, or send
//! what was never validated) but a snapshot. The input file and every file
//! it names (matrices of raw samples, attachments) are copied into a folder
//! of their own, the copy is validated as `report` validates, and only then
//! is the folder moved into the spool under its final name, in one rename.
//! The daemon reads `input.json` of each `*.d` folder it finds.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The snapshot's input file, inside its folder.
pub const INPUT: &str = "input.json";
/// The suffix of a snapshot folder in the spool.
pub const SUFFIX: &str = ".d";

#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error("{path}: {why}")]
    Io { path: String, why: String },
    #[error("{path}: not a JSON object")]
    NotAnObject { path: String },
}

fn io(path: &Path, e: impl std::fmt::Display) -> SpoolError {
    SpoolError::Io {
        path: path.display().to_string(),
        why: e.to_string(),
    }
}

/// Write `bytes` into the snapshot as `name`, returning the name.
fn write_in(staging: &Path, name: String, bytes: &[u8]) -> Result<String, SpoolError> {
    let to = staging.join(&name);
    std::fs::write(&to, bytes).map_err(|e| io(&to, e))?;
    Ok(name)
}

/// A plain file name for the copy of `path`: its last component, or `file`.
fn base_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .filter(|n| crate::input::is_plain_file_name(n))
        .unwrap_or_else(|| "file".into())
}

/// Copy `input` and the files it names into `staging` (a new, empty
/// folder), with the names in the copy pointing at the copies. Names that
/// are not strings are left for validation to refuse.
pub fn snapshot(input: &Path, staging: &Path) -> Result<PathBuf, SpoolError> {
    let text = crate::input::read_input(input).map_err(|e| io(input, e))?;
    let mut v: Value = serde_json::from_str(&text).map_err(|e| io(input, e))?;
    let dir = input.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let obj = v.as_object_mut().ok_or_else(|| SpoolError::NotAnObject {
        path: input.display().to_string(),
    })?;
    // Read as `report` reads them: matrices as bounded regular files,
    // attachments only from inside the input's folder.
    if let Some(Value::Array(tests)) = obj.get_mut("tests") {
        for (i, t) in tests.iter_mut().enumerate() {
            for side in ["base", "head"] {
                if let Some(Value::String(p)) = t.pointer_mut(&format!("/samples/{side}")) {
                    let src = dir.join(&*p);
                    let text = crate::input::read_input(&src).map_err(|e| io(&src, e))?;
                    *p = write_in(
                        staging,
                        format!("t{i}-{side}-{}", base_name(p)),
                        text.as_bytes(),
                    )?;
                }
            }
        }
    }
    if let Some(Value::Array(files)) = obj.get_mut("attachments") {
        let root = dir.canonicalize().map_err(|e| io(dir, e))?;
        for (k, a) in files.iter_mut().enumerate() {
            // A name alone is no file: nothing to copy.
            if let Some(Value::String(p)) = a.get_mut("path") {
                let bytes = crate::input::read_attachment(&root, Path::new(&*p))
                    .map_err(|why| io(input, why))?;
                *p = write_in(staging, format!("a{k}-{}", base_name(p)), &bytes)?;
            }
        }
    }
    let out = staging.join(INPUT);
    let text = serde_json::to_string_pretty(&v).map_err(|e| io(&out, e))?;
    std::fs::write(&out, text).map_err(|e| io(&out, e))?;
    Ok(out)
}

/// A fresh staging folder in `spool` (hidden: the daemon skips it).
pub fn staging(spool: &Path, stem: &str) -> Result<PathBuf, SpoolError> {
    std::fs::create_dir_all(spool).map_err(|e| io(spool, e))?;
    let name = format!(
        ".staging-{}-{}-{stem}",
        std::process::id(),
        chrono::Utc::now().format("%Y%m%d%H%M%S%f")
    );
    let p = spool.join(name);
    std::fs::create_dir(&p).map_err(|e| io(&p, e))?;
    Ok(p)
}

/// Move a validated snapshot into the spool under its final name (sorted by
/// time), in one rename; the daemon sees it whole or not at all.
pub fn commit(staging: &Path, spool: &Path, stem: &str) -> Result<PathBuf, SpoolError> {
    let name = format!(
        "{}-{stem}{SUFFIX}",
        chrono::Utc::now().format("%Y%m%d%H%M%S%f")
    );
    let to = spool.join(name);
    std::fs::rename(staging, &to).map_err(|e| io(&to, e))?;
    Ok(to)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{LoadedInput, TestData};

    /// An input in `dir` whose test's samples are two matrix files and
    /// which attaches a kernel config by path.
    fn input_with_files(dir: &Path) -> PathBuf {
        let example = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/seed004-f2fs-aim7-improvement.json");
        let mut v: Value =
            serde_json::from_str(&std::fs::read_to_string(example).unwrap()).unwrap();
        let t = v["tests"][0].as_object_mut().unwrap();
        t.remove("aggregated");
        t.remove("bisect");
        v["tests"][0]["samples"] =
            serde_json::json!({"base": "runs/base.matrix.json", "head": "head.json"});
        v["attachments"] = serde_json::json!([{"name": "config-4.16", "path": "config"}]);
        std::fs::create_dir_all(dir.join("runs")).unwrap();
        let matrix = |m: f64| format!("{{\"aim7.jobs-per-min\": [{m}, {m}, {m}]}}");
        std::fs::write(dir.join("runs/base.matrix.json"), matrix(2085.0)).unwrap();
        std::fs::write(dir.join("head.json"), matrix(3992.0)).unwrap();
        std::fs::write(dir.join("config"), "CONFIG_F2FS_FS=y\n").unwrap();
        let input = dir.join("in.json");
        std::fs::write(&input, v.to_string()).unwrap();
        input
    }

    /// The snapshot holds copies of the matrices and attachments the input
    /// names, under plain names, and reads as the input did; what happens
    /// to the originals afterwards changes nothing in it.
    #[test]
    fn a_snapshot_copies_every_file_the_input_names() {
        let tmp = tempfile::tempdir().unwrap();
        let input = input_with_files(tmp.path());
        let staging = staging(&tmp.path().join("spool"), "in").unwrap();
        let out = snapshot(&input, &staging).unwrap();
        for name in ["runs/base.matrix.json", "head.json", "config"] {
            std::fs::write(tmp.path().join(name), "changed afterwards").unwrap();
        }
        let mut names: Vec<String> = std::fs::read_dir(&staging)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "a0-config",
                INPUT,
                "t0-base-base.matrix.json",
                "t0-head-head.json"
            ]
        );
        let loaded = LoadedInput::load(&out).unwrap();
        assert_eq!(
            loaded.files,
            [("config-4.16".into(), b"CONFIG_F2FS_FS=y\n".to_vec())]
        );
        let Some(TestData::Raw { base, head }) = loaded.data.first() else {
            panic!("samples expected: {:?}", loaded.data);
        };
        let first = |m: &crate::compare::matrix::Matrix| {
            m.stats["aim7.jobs-per-min"].numbers().unwrap()[0].value
        };
        assert_eq!((first(base), first(head)), (2085.0, 3992.0));

        let spooled = commit(&staging, &tmp.path().join("spool"), "in").unwrap();
        assert!(spooled.join(INPUT).is_file() && !staging.exists());
        assert!(spooled.extension().is_some_and(|e| e == "d"));
    }

    /// What cannot be copied is named, and the input's own file when it is
    /// no JSON object.
    #[test]
    fn what_cannot_be_copied_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let input = input_with_files(tmp.path());
        let fresh = || staging(&tmp.path().join("spool"), "in").unwrap();
        std::fs::remove_file(tmp.path().join("head.json")).unwrap();
        let e = snapshot(&input, &fresh()).unwrap_err().to_string();
        assert!(e.contains("head.json") && e.contains("no such file"), "{e}");

        std::fs::write(tmp.path().join("head.json"), "{}").unwrap();
        std::fs::remove_file(tmp.path().join("config")).unwrap();
        let e = snapshot(&input, &fresh()).unwrap_err().to_string();
        assert!(e.starts_with(&input.display().to_string()), "{e}");
        assert!(e.contains("config"), "{e}");

        let list = tmp.path().join("list.json");
        std::fs::write(&list, "[1, 2]").unwrap();
        let e = snapshot(&list, &fresh()).unwrap_err();
        assert!(matches!(e, SpoolError::NotAnObject { .. }), "{e}");
    }
}
