//! The `lkp ncompare`-style case file: common axes, the compared axis, and one
//! matrix per column (paths relative to the case file).

use std::path::PathBuf;

use serde_json::Value;

use super::Column;

#[derive(Debug, Clone)]
pub struct CaseFile {
    pub path: PathBuf,
    pub common_axes: Vec<(String, String)>,
    pub axis: String,
    pub columns: Vec<Column>,
}

/// An axis value as Ruby's `to_s` would print it.
pub fn axis_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// lkp's order of a job's axes: as `key=value` strings, so that `fs2` comes
/// before `fs` (`2` sorts before `=`), as `ncompare` and the robot print them.
pub fn sort_axes(v: &mut [(String, String)]) {
    v.sort_by_cached_key(|(k, val)| format!("{k}={val}"));
}
