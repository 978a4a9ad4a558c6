//! The `lkp ncompare`-style case file: common axes, the compared axis, and one
//! matrix per column (paths relative to the case file).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::matrix::Matrix;
use super::rules::SelectionRules;
use super::{compare_columns, Column, SelectOptions};
use crate::error::InputError;
use crate::report::table::{sort_rows, Table};

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

impl CaseFile {
    pub fn load(path: &Path) -> Result<CaseFile, InputError> {
        let text = crate::error::read_input(path)?;
        let v: Value = serde_json::from_str(&text).map_err(|e| InputError::json(path, &e))?;
        let obj = v
            .as_object()
            .ok_or_else(|| InputError::field(path, "$", "a case file must be a JSON object"))?;
        if !obj.contains_key("columns") && obj.contains_key("tests") && obj.contains_key("commit") {
            return Err(InputError::general(
                path,
                "this is a report input (for `perfbot report`); `compare` takes an lkp-style \
                 case file (common_axes, compare_axis_key, columns), e.g. \
                 tests/fixtures/conformance/fio_two_commits/case.json, or two or more lkp \
                 matrix.json files with --commit for each",
            ));
        }
        let common_axes = match obj.get("common_axes") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), axis_text(v))).collect(),
            Some(_) => {
                return Err(InputError::field(
                    path,
                    "$.common_axes",
                    "must be an object",
                ))
            }
        };
        let axis = match obj.get("compare_axis_key") {
            None => "commit".to_string(),
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(_) => {
                return Err(InputError::field(
                    path,
                    "$.compare_axis_key",
                    "must be a non-empty string",
                ))
            }
        };
        let cols = obj
            .get("columns")
            .and_then(Value::as_array)
            .ok_or_else(|| InputError::field(path, "$.columns", "missing: an array of columns"))?;
        if cols.len() < 2 {
            return Err(InputError::field(
                path,
                "$.columns",
                "at least two columns are needed (the base first)",
            ));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut columns = Vec::new();
        for (i, c) in cols.iter().enumerate() {
            let at = format!("$.columns[{i}]");
            let id = c
                .get(&axis)
                .or_else(|| c.get("commit"))
                .map(axis_text)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| InputError::field(path, &at, &format!("missing {axis:?}")))?;
            let matrix = match c.get("matrix") {
                Some(Value::String(p)) => {
                    let mp = dir.join(p);
                    Matrix::load(&mp)?
                }
                Some(m @ Value::Object(_)) => Matrix::from_json(m, path, &format!("{at}.matrix"))?,
                _ => {
                    return Err(InputError::field(
                        path,
                        &format!("{at}.matrix"),
                        "missing: a matrix.json path or an inline matrix",
                    ))
                }
            };
            columns.push(Column::new(id, matrix));
        }
        Ok(CaseFile {
            path: path.to_path_buf(),
            common_axes,
            axis,
            columns,
        })
    }

    /// Two or more lkp `matrix.json` files given directly, with their commits.
    pub fn from_matrices(paths: &[PathBuf], commits: &[String]) -> Result<CaseFile, InputError> {
        let first = paths
            .first()
            .map(PathBuf::as_path)
            .unwrap_or(Path::new("-"));
        if paths.len() < 2 {
            return Err(InputError::general(
                first,
                "give at least two matrix files (the base first)",
            ));
        }
        if !commits.is_empty() && commits.len() != paths.len() {
            return Err(InputError::general(
                first,
                format!(
                    "{} matrix files but {} --commit values",
                    paths.len(),
                    commits.len()
                ),
            ));
        }
        let mut columns = Vec::new();
        for (i, p) in paths.iter().enumerate() {
            let id = commits
                .get(i)
                .cloned()
                .unwrap_or_else(|| p.display().to_string());
            columns.push(Column::new(id, Matrix::load(p)?));
        }
        Ok(CaseFile {
            path: first.to_path_buf(),
            common_axes: Vec::new(),
            axis: "commit".into(),
            columns,
        })
    }

    /// The comparison table, as `lkp ncompare` prints it.
    pub fn table(&self, rules: &SelectionRules, opts: &SelectOptions) -> Table {
        let mut rows = compare_columns(&self.columns, rules, opts);
        sort_rows(&mut rows, rules, true);
        let ids: Vec<String> = self.columns.iter().map(|c| c.id.clone()).collect();
        let params = if self.common_axes.is_empty() {
            vec![(self.axis.clone(), ids.join("/"))]
        } else {
            self.common_axes.clone()
        };
        Table {
            params,
            axis: self.axis.clone(),
            commit_lines: ids.clone(),
            column_ids: ids,
            rows,
        }
    }
}
