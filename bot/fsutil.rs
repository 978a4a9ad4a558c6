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
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}
