//! File access with the guarantees perfbot relies on: a file written whole or
//! not at all (temporary file, fsync, rename), used for the outbox, the
//! quarantine and the database's companions. Imports nothing of the crate.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Write `bytes` to `dir/name` atomically: a reader never sees half a file,
/// and writing the same name again replaces it instead of adding another.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.tmp"));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    });
    if let Err(e) = written {
        // A write that failed leaves nothing of its own behind.
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("taken")).unwrap();
        assert!(write_atomic(dir.path(), "taken", b"x").is_err());
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["taken"]);
        let p = write_atomic(dir.path(), "ok", b"x").unwrap();
        assert_eq!(std::fs::read(p).unwrap(), b"x");
    }
}
