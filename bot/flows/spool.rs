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
