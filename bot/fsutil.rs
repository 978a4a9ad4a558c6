//! File access with the guarantees perfbot relies on: a file written whole or
//! not at all (temporary file, fsync, rename), used for the outbox, the
//! quarantine and the database's companions; a file or stream read only up
//! to a limit, so that no input holds more memory than that, or blocks for
//! ever. Imports nothing of the crate.

use std::io::{Read, Write};
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

/// Why a bounded read read nothing.
#[derive(Debug)]
pub enum Bounded {
    Io(std::io::Error),
    /// A FIFO, a device, a directory: refused before a byte is read.
    NotRegular,
    /// Over the limit: as listed (`Some`), or it grew past it while read.
    Over(Option<u64>),
}

impl std::fmt::Display for Bounded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bounded::Io(e) => write!(f, "{e}"),
            Bounded::NotRegular => write!(f, "not a regular file"),
            Bounded::Over(Some(len)) => write!(f, "{len} bytes, over the limit"),
            Bounded::Over(None) => write!(f, "grew past the size limit while read"),
        }
    }
}

/// All of `r` (a file, standard input, a decompressor), if it is at most
/// `limit` bytes: a stream without end is refused at the limit, never held
/// beyond it. `expected`: the size known beforehand (0 if none).
pub fn read_capped(r: impl Read, limit: u64, expected: u64) -> Result<Vec<u8>, Bounded> {
    let mut bytes = Vec::with_capacity(expected.min(limit) as usize);
    r.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Bounded::Io)?;
    if bytes.len() as u64 > limit {
        return Err(Bounded::Over(None));
    }
    Ok(bytes)
}

/// A regular file of at most `limit` bytes, whole.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, Bounded> {
    let meta = std::fs::metadata(path).map_err(Bounded::Io)?;
    if !meta.is_file() {
        return Err(Bounded::NotRegular);
    }
    if meta.len() > limit {
        return Err(Bounded::Over(Some(meta.len())));
    }
    let f = std::fs::File::open(path).map_err(Bounded::Io)?;
    read_capped(f, limit, meta.len())
}

/// A file of UTF-8 text of at most `limit` bytes, whole (a configuration
/// file, a secret, a MAINTAINERS file). A pipe is read (`--config <(…)`, a
/// secret from a process), up to the limit: `/dev/zero` is refused there.
pub fn read_text(path: &Path, limit: u64) -> Result<String, String> {
    let bytes = read_limited(path, limit).map_err(|e| match e {
        Bounded::Over(_) => format!("over the limit of {limit} bytes"),
        e => e.to_string(),
    })?;
    utf8(bytes)
}

/// `bytes` as text, or where they stop being UTF-8.
pub fn utf8(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (byte {} is invalid)",
            e.utf8_error().valid_up_to()
        )
    })
}

/// A file of any kind, read up to `limit` bytes: over it, refused.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, Bounded> {
    let f = std::fs::File::open(path).map_err(Bounded::Io)?;
    let expected = f.metadata().map_or(0, |m| m.len());
    read_capped(f, limit, expected)
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

    /// What is no regular file, or is over the limit, is refused before it
    /// is read; a stream is cut at the limit.
    #[test]
    fn bounded_reads() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"12345").unwrap();
        let table: [(&Path, u64, &str); 5] = [
            (&f, 5, "12345"),
            (&f, 4, "over the limit of 4 bytes"),
            (dir.path(), 100, "Is a directory (os error 21)"),
            (Path::new("/dev/zero"), 100, "over the limit of 100 bytes"),
            (Path::new("/dev/null"), 100, ""),
        ];
        for (path, limit, want) in table {
            let got = read_text(path, limit).unwrap_or_else(|e| e);
            assert_eq!(got, want, "{}", path.display());
        }
        let regular = |p: &Path| read_regular(p, 4).map_err(|e| e.to_string());
        assert_eq!(regular(&f).unwrap_err(), "5 bytes, over the limit");
        assert_eq!(
            regular(Path::new("/dev/zero")).unwrap_err(),
            "not a regular file"
        );
        std::fs::write(&f, b"caf\xe9").unwrap();
        assert_eq!(
            read_text(&f, 10).unwrap_err(),
            "not UTF-8 text (byte 3 is invalid)"
        );
        let zeros = std::io::repeat(0);
        assert!(matches!(
            read_capped(zeros, 1000, 0),
            Err(Bounded::Over(None))
        ));
        assert_eq!(read_capped(&b"abc"[..], 3, 0).unwrap(), b"abc");
    }
}
