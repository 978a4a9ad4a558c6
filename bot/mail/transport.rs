//! Where outgoing mail goes: a directory of `.eml` files (the default outbox),
//! standard output, or an SMTP server.

use std::path::{Path, PathBuf};

use crate::model::MessageId;

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("writing {path}: {source}")]
    File {
        path: String,
        source: std::io::Error,
    },
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

/// Write the message atomically (see `fsutil::write_atomic`): a reader of the
/// outbox never sees half a mail, and a rewrite of the same Message-ID
/// replaces the file instead of adding a second one.
pub fn deliver_file(dir: &Path, id: &MessageId, raw: &[u8]) -> Result<PathBuf, TransportError> {
    crate::fsutil::write_atomic(dir, &file_name(id), raw).map_err(|source| TransportError::File {
        path: dir.join(file_name(id)).display().to_string(),
        source,
    })
}
