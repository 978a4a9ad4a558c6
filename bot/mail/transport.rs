//! Where outgoing mail goes: a directory of `.eml` files (the default outbox),
//! standard output, or an SMTP server.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::mail::MessageId;

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("writing {path}: {source}")]
    File {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Smtp(String),
}

/// A file name for a Message-ID that is safe on any file system.
pub fn file_name(id: &MessageId) -> String {
    let safe: String = id
        .as_str()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '@' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.eml")
}

/// Write the message atomically (temporary file, fsync, rename): a reader of the
/// outbox never sees half a mail, and a rewrite of the same Message-ID replaces
/// the file instead of adding a second one.
pub fn deliver_file(dir: &Path, id: &MessageId, raw: &[u8]) -> Result<PathBuf, TransportError> {
    let err = |path: &Path, source| TransportError::File {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(|e| err(dir, e))?;
    let path = dir.join(file_name(id));
    let tmp = dir.join(format!(".{}.tmp", file_name(id)));
    let mut f = std::fs::File::create(&tmp).map_err(|e| err(&tmp, e))?;
    f.write_all(raw).map_err(|e| err(&tmp, e))?;
    f.sync_all().map_err(|e| err(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| err(&path, e))?;
    Ok(path)
}
