//! Errors about what the operator gave perfbot. Each names the file and, where it
//! can, the JSON path or line, so that a one-line message says what to fix.

use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub struct InputError {
    pub file: PathBuf,
    /// JSON path (`$.tests[0].samples`) or `line L, column C`.
    pub at: Option<String>,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.at {
            Some(at) => write!(f, "{}: {}: {}", self.file.display(), at, self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// The most an input file (report input, matrix, case file) may weigh: a
/// 20,000-metric lkp matrix of 10 runs is under 10 MB.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Read an input file: a regular file of at most `MAX_INPUT_BYTES`, as UTF-8.
/// `/dev/zero`, a FIFO or a directory is refused instead of read without end.
pub fn read_input(path: &Path) -> Result<String, InputError> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| InputError::io(path, e))?;
    if !meta.is_file() {
        return Err(InputError::general(path, "not a regular file"));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(InputError::general(
            path,
            format!(
                "{} bytes, over the limit of {} for an input file",
                meta.len(),
                MAX_INPUT_BYTES
            ),
        ));
    }
    let f = std::fs::File::open(path).map_err(|e| InputError::io(path, e))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::io(path, e))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(InputError::general(
            path,
            "grew past the input size limit while read",
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        InputError::general(
            path,
            format!(
                "not UTF-8 text (byte {} is invalid)",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

impl InputError {
    pub fn io(path: &Path, e: std::io::Error) -> Self {
        InputError {
            file: path.to_path_buf(),
            at: None,
            message: match e.kind() {
                std::io::ErrorKind::NotFound => "no such file".to_string(),
                _ => e.to_string(),
            },
        }
    }

    pub fn json(path: &Path, e: &serde_json::Error) -> Self {
        let msg = e.to_string();
        // serde_json appends " at line L column C"; move it to the front.
        let message = match msg.rfind(" at line ") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        };
        InputError {
            file: path.to_path_buf(),
            at: Some(format!("line {}, column {}", e.line(), e.column())),
            message: format!("malformed JSON: {message}"),
        }
    }

    pub fn field(path: &Path, at: &str, message: &str) -> Self {
        InputError {
            file: path.to_path_buf(),
            at: Some(at.to_string()),
            message: message.to_string(),
        }
    }

    pub fn general(path: &Path, message: impl Into<String>) -> Self {
        InputError {
            file: path.to_path_buf(),
            at: None,
            message: message.into(),
        }
    }
}
