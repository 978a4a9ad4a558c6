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
    /// A count beyond `i64` (a u64 counter near its top): still a whole
    /// number, never wrapped to a negative one.
    pub fn uint(v: u64) -> Self {
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

    /// Read a matrix file's text. Streams the JSON straight into the series
    /// (no intermediate `serde_json::Value`), and builds the sorted map in one
    /// pass: on 20,000 metrics this is most of what `perfbot compare` costs.
    pub fn parse(text: &str, path: &Path) -> Result<Matrix, InputError> {
        let fault = std::cell::RefCell::new(None);
        let mut de = serde_json::Deserializer::from_str(text);
        let read =
            serde::Deserializer::deserialize_any(&mut de, stream::MatrixVisitor { fault: &fault })
                .and_then(|m| de.end().map(|()| m));
        match (read, fault.into_inner()) {
            (_, Some(stream::Fault { field, message })) => {
                Err(InputError::field(path, &format!("${field}"), &message))
            }
            (Err(e), None) => Err(InputError::json(path, &e)),
            (Ok((mut stats, runs)), None) => {
                stats.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                if let Some(w) = stats.windows(2).find(|w| w[0].0 == w[1].0) {
                    return Err(InputError::field(
                        path,
                        &format!("$.{}", json_key(&w[0].0)),
                        "the metric is listed twice",
                    ));
                }
                Ok(Matrix {
                    stats: stats.into_iter().collect(),
                    stats_source_len: runs,
                })
            }
        }
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
                Some(Sample::uint(u))
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

/// The streaming reader of `Matrix::parse`: the same rules as `from_json`.
mod stream {
    use std::cell::RefCell;
    use std::fmt;

    use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

    use super::{json_key, Sample, Series, MAX_SAMPLE};

    /// What was wrong, and where (a JSON path below `$`): kept aside so that
    /// the error names the field as `from_json` does.
    pub struct Fault {
        pub field: String,
        pub message: String,
    }

    type Stats = (Vec<(String, Series)>, Option<usize>);

    pub struct MatrixVisitor<'a> {
        pub fault: &'a RefCell<Option<Fault>>,
    }

    fn fail<E: de::Error>(fault: &RefCell<Option<Fault>>, field: String, message: String) -> E {
        let e = E::custom(&message);
        *fault.borrow_mut() = Some(Fault { field, message });
        e
    }

    impl<'de> Visitor<'de> for MatrixVisitor<'_> {
        type Value = Stats;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a matrix: an object of metric name to samples")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Stats, A::Error> {
            let mut stats = Vec::with_capacity(map.size_hint().unwrap_or(1024));
            let mut runs = None;
            while let Some(name) = map.next_key::<String>()? {
                if name == "stats_source" {
                    runs = Some(map.next_value_seed(Count)?);
                    continue;
                }
                let series = map.next_value_seed(SeriesSeed {
                    name: &name,
                    fault: self.fault,
                })?;
                stats.push((name, series));
            }
            Ok((stats, runs))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Stats, A::Error> {
            Err(not_an_object(self.fault))
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Stats, E> {
            Err(not_an_object(self.fault))
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Stats, E> {
            Err(not_an_object(self.fault))
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Stats, E> {
            Err(not_an_object(self.fault))
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Stats, E> {
            Err(not_an_object(self.fault))
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Stats, E> {
            Err(not_an_object(self.fault))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Stats, E> {
            Err(not_an_object(self.fault))
        }
    }

    fn not_an_object<E: de::Error>(fault: &RefCell<Option<Fault>>) -> E {
        fail(
            fault,
            String::new(),
            "a matrix must be an object of metric name to samples".into(),
        )
    }

    /// `stats_source`: its length is the number of runs (1 if not a list).
    struct Count;

    impl<'de> DeserializeSeed<'de> for Count {
        type Value = usize;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Count {
        type Value = usize;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list of runs")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut n = 0;
            while seq.next_element::<IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(n)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(1)
        }
        fn visit_str<E>(self, _: &str) -> Result<usize, E> {
            Ok(1)
        }
        fn visit_f64<E>(self, _: f64) -> Result<usize, E> {
            Ok(1)
        }
        fn visit_i64<E>(self, _: i64) -> Result<usize, E> {
            Ok(1)
        }
        fn visit_u64<E>(self, _: u64) -> Result<usize, E> {
            Ok(1)
        }
        fn visit_bool<E>(self, _: bool) -> Result<usize, E> {
            Ok(1)
        }
        fn visit_unit<E>(self) -> Result<usize, E> {
            Ok(1)
        }
    }

    /// One sample as read: a number, text, or something else (described).
    enum Item {
        Number(Sample),
        Text(String),
        Other(&'static str),
    }

    impl Item {
        fn shown(&self) -> String {
            match self {
                Item::Number(s) => s.value.to_string(),
                Item::Text(t) => format!("{t:?}"),
                Item::Other(what) => what.to_string(),
            }
        }
    }

    struct ItemVisitor;

    impl<'de> de::Deserialize<'de> for Item {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Item, D::Error> {
            d.deserialize_any(ItemVisitor)
        }
    }

    fn float(v: f64) -> Item {
        if v.is_finite() && v.abs() <= MAX_SAMPLE {
            Item::Number(Sample::float(v))
        } else {
            Item::Other("a number beyond ±1e100")
        }
    }

    impl<'de> Visitor<'de> for ItemVisitor {
        type Value = Item;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a sample")
        }
        fn visit_i64<E>(self, v: i64) -> Result<Item, E> {
            Ok(Item::Number(Sample::int(v)))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Item, E> {
            Ok(Item::Number(Sample::uint(v)))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Item, E> {
            Ok(float(v))
        }
        fn visit_bool<E>(self, v: bool) -> Result<Item, E> {
            Ok(Item::Number(Sample::int(v as i64)))
        }
        fn visit_str<E>(self, v: &str) -> Result<Item, E> {
            Ok(Item::Text(v.to_string()))
        }
        fn visit_unit<E>(self) -> Result<Item, E> {
            Ok(Item::Other("null"))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Item::Other("a list"))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Item::Other("an object"))
        }
    }

    struct SeriesSeed<'a> {
        name: &'a str,
        fault: &'a RefCell<Option<Fault>>,
    }

    impl SeriesSeed<'_> {
        fn bad<E: de::Error>(&self, index: Option<usize>, item: &Item) -> E {
            let mut field = format!(".{}", json_key(self.name));
            if let Some(i) = index {
                field.push_str(&format!("[{i}]"));
            }
            fail(
                self.fault,
                field,
                format!("not a number within ±1e100: {}", item.shown()),
            )
        }
        fn single<E: de::Error>(&self, item: Item) -> Result<Series, E> {
            match item {
                Item::Number(s) => Ok(Series::Numbers(vec![s])),
                Item::Text(_) => Ok(Series::Text),
                other => Err(self.bad(None, &other)),
            }
        }
    }

    impl<'de> DeserializeSeed<'de> for SeriesSeed<'_> {
        type Value = Series;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Series, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for SeriesSeed<'_> {
        type Value = Series;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list of samples")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Series, A::Error> {
            let mut samples = Vec::with_capacity(seq.size_hint().unwrap_or(8));
            // The first thing that is not a number, kept until the end: a
            // list whose last sample is text is a text stat (lkp skips
            // those), anything else must be all numbers.
            let mut odd: Option<(usize, Item)> = None;
            let mut last_text = false;
            let mut n = 0;
            while let Some(item) = seq.next_element::<Item>()? {
                last_text = matches!(item, Item::Text(_));
                match item {
                    Item::Number(s) => samples.push(s),
                    other => {
                        if odd.is_none() {
                            odd = Some((n, other));
                        }
                    }
                }
                n += 1;
            }
            if n == 0 {
                return Err(fail(
                    self.fault,
                    format!(".{}", json_key(self.name)),
                    "empty sample list".into(),
                ));
            }
            if last_text {
                return Ok(Series::Text);
            }
            match odd {
                Some((i, item)) => Err(self.bad(Some(i), &item)),
                None => Ok(Series::Numbers(samples)),
            }
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Series, E> {
            self.single(Item::Number(Sample::int(v)))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Series, E> {
            self.single(ItemVisitor.visit_u64(v)?)
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Series, E> {
            self.single(float(v))
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Series, E> {
            self.single(Item::Number(Sample::int(v as i64)))
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Series, E> {
            Ok(Series::Text)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Series, E> {
            self.single(Item::Other("null"))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Series, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            self.single(Item::Other("an object"))
        }
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

    /// Counters near the top of u64 (past i64): whole and positive in
    /// both readers, never wrapped to a negative number.
    #[test]
    fn counters_past_i64_stay_positive() {
        let text = r#"{"a": [18446744073709551615, 9223372036854775808, 1]}"#;
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        let p = Path::new("m.json");
        let want = Series::Numbers(vec![
            Sample::uint(u64::MAX),
            Sample::uint(1 << 63),
            Sample::int(1),
        ]);
        for m in [
            Matrix::parse(text, p).unwrap(),
            Matrix::from_json(&value, p, "$").unwrap(),
        ] {
            assert_eq!(m.stats["a"], want);
            let Series::Numbers(v) = &m.stats["a"] else {
                unreachable!()
            };
            assert!(v[0].value > 1.8e19 && v[1].value > 9.2e18 && v[0].integer);
        }
    }

    #[test]
    fn rejects_null_and_empty() {
        let e = Matrix::parse(r#"{"a": [1, null]}"#, Path::new("m.json")).unwrap_err();
        assert!(e.to_string().contains("$.a[1]"), "{e}");
        let e = Matrix::parse(r#"{"a": []}"#, Path::new("m.json")).unwrap_err();
        assert!(e.to_string().contains("empty sample list"), "{e}");
    }

    #[test]
    fn the_streaming_reader_agrees_with_the_value_reader() {
        let p = Path::new("m.json");
        for text in [
            r#"{"a": [1, 2.5, true], "b": ["x"], "c": [1, "x"], "d": 7, "e": "t", "stats_source": 3}"#,
            r#"{"z": [1e100, -1e100, 0], "a.b%": [18446744073709551615], "stats_source": {"x": 1}}"#,
            r#"{"a": [1, null]}"#,
            r#"{"a": ["x", 2]}"#,
            r#"{"a": [1, [2]]}"#,
            r#"{"a": [1, 1e101]}"#,
            r#"{"a": {"b": 1}}"#,
            r#"{"a": null}"#,
            r#"{"a": []}"#,
            r#"[1, 2]"#,
            r#""text""#,
        ] {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            let slow = Matrix::from_json(&value, p, "$").map_err(|e| e.to_string());
            let fast = Matrix::parse(text, p).map_err(|e| e.to_string());
            match (&slow, &fast) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
                // The same field named; the value may be described in words.
                (Err(a), Err(b)) => {
                    let field = |e: &str| e.split(": ").take(2).collect::<Vec<_>>().join(": ");
                    assert_eq!(field(a), field(b), "{text}: {a} / {b}");
                }
                _ => panic!("{text}: {slow:?} / {fast:?}"),
            }
        }
    }

    #[test]
    fn a_metric_listed_twice_is_an_error_and_junk_after_is_too() {
        let e =
            Matrix::parse(r#"{"a": [1], "b": [2], "a": [3]}"#, Path::new("m.json")).unwrap_err();
        assert!(
            e.to_string().contains("$.a: the metric is listed twice"),
            "{e}"
        );
        let e = Matrix::parse(r#"{"a": [1]} {"b": 2}"#, Path::new("m.json")).unwrap_err();
        assert!(e.to_string().contains("line 1, column"), "{e}");
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
