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

/// An error and its causes on one line, each cause added only when its
/// words are not in the line yet: many errors say their source in their own
/// message (so that a log line with `%e` keeps it), and would otherwise say
/// it twice.
pub fn chain_line(e: &dyn std::error::Error) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(inner) = cause {
        let words = inner.to_string();
        if !line.contains(&words) {
            line.push_str(": ");
            line.push_str(&words);
        }
        cause = inner.source();
    }
    line
}
