//! lkp `matrix.json` files: metric name → one sample per run.

use std::collections::BTreeMap;
use std::path::Path;

use crate::model::error::InputError;

/// One sample. lkp is written in Ruby, where `3` and `3.0` are different types,
/// and one selection rule (the perf-profile threshold) depends on that, so the
/// distinction survives parsing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub value: f64,
    pub integer: bool,
}

impl Sample {
    pub fn int(v: i64) -> Self {
        Sample {
            value: v as f64,
            integer: true,
        }
    }
    pub fn float(v: f64) -> Self {
        Sample {
            value: v,
            integer: false,
        }
    }
}

/// The samples of one stat across the runs of one commit.
#[derive(Debug, Clone, PartialEq)]
pub enum Series {
    Numbers(Vec<Sample>),
    /// A stat whose last sample is text (lkp skips those).
    Text,
}

impl Series {
    pub fn numbers(&self) -> Option<&[Sample]> {
        match self {
            Series::Numbers(v) => Some(v),
            Series::Text => None,
        }
    }
}

/// All stats of one commit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matrix {
    pub stats: BTreeMap<String, Series>,
    /// Length of `stats_source` when present: the number of runs.
    pub stats_source_len: Option<usize>,
}

pub const INCOMPLETE_RUN: &str = "last_state.is_incomplete_run";

impl Matrix {
    pub fn from_f64(stats: impl IntoIterator<Item = (String, Vec<f64>)>) -> Self {
        let mut m = Matrix::default();
        for (k, v) in stats {
            let samples = v
                .into_iter()
                .map(|x| {
                    if x.fract() == 0.0 && x.abs() < 9.0e15 {
                        Sample::int(x as i64)
                    } else {
                        Sample::float(x)
                    }
                })
                .collect();
            m.stats.insert(k, Series::Numbers(samples));
        }
        m
    }

    pub fn parse(text: &str, path: &Path) -> Result<Matrix, InputError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| InputError::json(path, &e))?;
        Self::from_json(&value, path, "$")
    }

    /// Build from an already parsed JSON object; `at` is the JSON path for errors.
    pub fn from_json(
        value: &serde_json::Value,
        path: &Path,
        at: &str,
    ) -> Result<Matrix, InputError> {
        let obj = value.as_object().ok_or_else(|| {
            InputError::field(
                path,
                at,
                "a matrix must be an object of metric name to samples",
            )
        })?;
        let mut m = Matrix::default();
        for (name, v) in obj {
            if name == "stats_source" {
                m.stats_source_len = Some(match v {
                    serde_json::Value::Array(a) => a.len(),
                    _ => 1,
                });
                continue;
            }
            let field = format!("{at}.{}", json_key(name));
            let series = match v {
                serde_json::Value::Array(items) => {
                    if items.is_empty() {
                        return Err(InputError::field(path, &field, "empty sample list"));
                    }
                    if items.last().is_some_and(|x| x.is_string()) {
                        Series::Text
                    } else {
                        let mut samples = Vec::with_capacity(items.len());
                        for (i, x) in items.iter().enumerate() {
                            samples.push(sample(x).ok_or_else(|| {
                                InputError::field(
                                    path,
                                    &format!("{field}[{i}]"),
                                    &format!("not a number within ±1e100: {x}"),
                                )
                            })?);
                        }
                        Series::Numbers(samples)
                    }
                }
                serde_json::Value::String(_) => Series::Text,
                x => Series::Numbers(vec![sample(x).ok_or_else(|| {
                    InputError::field(path, &field, &format!("not a number within ±1e100: {x}"))
                })?]),
            };
            m.stats.insert(name.clone(), series);
        }
        Ok(m)
    }

    /// lkp's `matrix_cols`: the number of runs.
    pub fn runs(&self) -> usize {
        if let Some(n) = self.stats_source_len {
            return n;
        }
        let len = |s: Option<&Series>| match s {
            Some(Series::Numbers(v)) => v.len(),
            _ => 0,
        };
        len(self.stats.values().next()).max(len(self.stats.values().next_back()))
    }

    /// Pad every series with zeros up to the number of runs, as lkp does when it
    /// loads a result root (a stat missing in some runs counts as 0 there).
    pub fn fill_missing_zeros(&mut self) {
        let runs = self.runs();
        for s in self.stats.values_mut() {
            if let Series::Numbers(v) = s {
                while v.len() < runs {
                    v.push(Sample::int(0));
                }
            }
        }
    }

    pub fn has_incomplete_runs(&self) -> bool {
        self.stats.contains_key(INCOMPLETE_RUN)
    }

    /// The matrix without its incomplete runs (lkp's `complete_matrix`);
    /// borrowed when every run completed.
    pub fn complete(&self) -> std::borrow::Cow<'_, Matrix> {
        let Some(Series::Numbers(flags)) = self.stats.get(INCOMPLETE_RUN) else {
            return std::borrow::Cow::Borrowed(self);
        };
        let drop: Vec<usize> = flags
            .iter()
            .enumerate()
            .filter(|(_, s)| s.value == 1.0)
            .map(|(i, _)| i)
            .collect();
        let mut out = Matrix {
            stats: BTreeMap::new(),
            stats_source_len: self.stats_source_len.map(|n| n.saturating_sub(drop.len())),
        };
        for (k, s) in &self.stats {
            if k == INCOMPLETE_RUN {
                continue;
            }
            let s = match s {
                Series::Numbers(v) => Series::Numbers(
                    v.iter()
                        .enumerate()
                        .filter(|(i, _)| !drop.contains(i))
                        .map(|(_, x)| *x)
                        .collect(),
                ),
                Series::Text => Series::Text,
            };
            out.stats.insert(k.clone(), s);
        }
        std::borrow::Cow::Owned(out)
    }
}

/// The largest magnitude a sample may have: means and squared deviations of
/// such samples stay finite (1e308 samples would make "NaN%" changes).
pub const MAX_SAMPLE: f64 = 1e100;

fn sample(x: &serde_json::Value) -> Option<Sample> {
    match x {
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(Sample::int(i))
            } else if let Some(u) = n.as_u64() {
                Some(Sample::int(u as i64))
            } else {
                n.as_f64()
                    .filter(|f| f.is_finite() && f.abs() <= MAX_SAMPLE)
                    .map(Sample::float)
            }
        }
        serde_json::Value::Bool(b) => Some(Sample::int(*b as i64)),
        _ => None,
    }
}

/// Render a key for a JSON path: bare when simple, quoted otherwise.
pub fn json_key(k: &str) -> String {
    if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        k.to_string()
    } else {
        format!("{k:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ints_floats_and_text() {
        let m = Matrix::parse(
            r#"{"a": [1, 2.5], "b": ["x"], "stats_source": ["s1", "s2", "s3"]}"#,
            Path::new("m.json"),
        )
        .unwrap();
        assert_eq!(m.runs(), 3);
        assert_eq!(
            m.stats["a"],
            Series::Numbers(vec![Sample::int(1), Sample::float(2.5)])
        );
        assert_eq!(m.stats["b"], Series::Text);
    }

    #[test]
    fn rejects_null_and_empty() {
        let e = Matrix::parse(r#"{"a": [1, null]}"#, Path::new("m.json")).unwrap_err();
        assert!(e.to_string().contains("$.a[1]"), "{e}");
        let e = Matrix::parse(r#"{"a": []}"#, Path::new("m.json")).unwrap_err();
        assert!(e.to_string().contains("empty sample list"), "{e}");
    }

    #[test]
    fn complete_drops_incomplete_runs() {
        let mut m = Matrix::from_f64([
            ("x".to_string(), vec![1.0, 2.0, 3.0]),
            (INCOMPLETE_RUN.to_string(), vec![0.0, 1.0, 0.0]),
        ]);
        m.stats_source_len = Some(3);
        let c = m.complete();
        assert_eq!(c.runs(), 2);
        assert_eq!(
            c.stats["x"],
            Series::Numbers(vec![Sample::int(1), Sample::int(3)])
        );
    }
}
