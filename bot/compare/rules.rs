//! The selection rules and the metric-direction table, loaded from data files
//! (`bot/rules/*.toml`, embedded) and optionally overridden from config.toml.

use std::collections::{BTreeMap, HashSet};

use regex::{Regex, RegexSet};
use serde::Deserialize;

pub const DEFAULT_SELECTION: &str = include_str!("../rules/selection.toml");
pub const DEFAULT_DIRECTION: &str = include_str!("../rules/direction.toml");

#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("{0}")]
    Toml(String),
    #[error("bad pattern {pattern:?} in {list}: {error}")]
    Pattern {
        list: String,
        pattern: String,
        error: String,
    },
}

/// A number as written in the rules: lkp treats integer and float thresholds
/// differently (an integer threshold also asks for a large enough difference).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i64),
    Float(f64),
}

/// By hand rather than `untagged`, whose error names no type ("data did not
/// match any variant of untagged enum Number").
impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Number;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Number, E> {
                Ok(Number::Int(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Number, E> {
                i64::try_from(v)
                    .map(Number::Int)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Number, E> {
                Ok(Number::Float(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// A TOML error on one line, the key first ("`min_runs`: invalid type: …"
/// rather than the message, a line break and "in `min_runs`").
fn toml_error(e: toml::de::Error) -> RulesError {
    let text = e.to_string();
    let text = text.trim();
    RulesError::Toml(match text.rsplit_once("\nin ") {
        Some((why, key)) => format!("{key}: {why}"),
        None => text.to_string(),
    })
}

impl Number {
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectionSpec {
    pub min_runs: usize,
    pub min_ratio_perf: f64,
    pub min_ratio_other: f64,
    pub max_ratio: f64,
    pub perf_profile_threshold: Number,
    pub absolute_change: Vec<String>,
    pub sort_key_components: BTreeMap<String, usize>,
    pub failure: Vec<String>,
    pub pass: Vec<String>,
    pub not_failure_substrings: Vec<String>,
    pub failure_sibling_exempt: String,
    pub incomplete_run_stats: String,
    pub denylist: Vec<String>,
    pub allowlist: Vec<String>,
    pub report_allowlist: Vec<String>,
    pub perf_metric_patterns: Vec<String>,
    pub perf_metric_prefixes: Vec<String>,
    pub thresholds: Vec<(String, Number)>,
    pub fallback_rules: Vec<(String, String, Number)>,
    pub perf_tests: Vec<String>,
    pub functional_tests: Vec<String>,
}

/// What a fallback rule checks when no threshold matched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FallbackTest {
    MaxGreater(f64),
    DeltaGreater(f64),
}

/// Compiled selection rules.
#[derive(Debug, Clone)]
pub struct SelectionRules {
    pub spec: SelectionSpec,
    absolute_change: Regex,
    failure: Regex,
    pass: Regex,
    pub failure_sibling_exempt: Regex,
    pub incomplete_run_stats: Regex,
    denylist: Regex,
    allowlist: Regex,
    report_allowlist: Regex,
    perf_metric: Regex,
    thresholds: RegexSet,
    fallback: RegexSet,
    fallback_tests: Vec<FallbackTest>,
    tests: HashSet<String>,
}

fn compile(list: &str, p: &str) -> Result<Regex, RulesError> {
    Regex::new(p).map_err(|e| RulesError::Pattern {
        list: list.to_string(),
        pattern: p.to_string(),
        error: e.to_string(),
    })
}

/// One regex that matches when any of `patterns` does.
fn any_of(
    list: &str,
    patterns: &[String],
    prefix: &str,
    suffix: &str,
) -> Result<Regex, RulesError> {
    for p in patterns {
        compile(list, p)?;
    }
    if patterns.is_empty() {
        return compile(list, "[^\\s\\S]");
    }
    let joined: Vec<String> = patterns.iter().map(|p| format!("(?:{p})")).collect();
    compile(list, &format!("{prefix}(?:{}){suffix}", joined.join("|")))
}

fn set_of<'a>(
    list: &str,
    patterns: impl Iterator<Item = &'a String>,
) -> Result<RegexSet, RulesError> {
    let anchored: Vec<String> = patterns.map(|p| format!("^(?:{p})$")).collect();
    RegexSet::new(&anchored).map_err(|e| RulesError::Pattern {
        list: list.to_string(),
        pattern: anchored.join(" | "),
        error: e.to_string(),
    })
}

/// Overlay `over` onto `base`, key by key (tables merge, everything else replaces).
pub fn merge_toml(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_toml(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

impl SelectionRules {
    pub fn default_rules() -> Self {
        Self::with_overrides(None).expect("embedded selection rules are valid")
    }

    pub fn with_overrides(over: Option<&toml::Table>) -> Result<Self, RulesError> {
        let mut table: toml::Table = toml::from_str(DEFAULT_SELECTION).map_err(toml_error)?;
        if let Some(o) = over {
            merge_toml(&mut table, o);
        }
        let spec: SelectionSpec = toml::Value::Table(table).try_into().map_err(toml_error)?;
        Self::compile(spec)
    }

    pub fn compile(spec: SelectionSpec) -> Result<Self, RulesError> {
        let perf_tests: Vec<String> = spec
            .perf_tests
            .iter()
            .filter(|t| !spec.functional_tests.contains(t))
            .map(|t| regex::escape(&format!("{t}.")))
            .collect();
        let mut perf_prefixes = spec.perf_metric_prefixes.clone();
        perf_prefixes.extend(perf_tests);
        let patterns = any_of("perf_metric_patterns", &spec.perf_metric_patterns, "", "")?;
        let prefixes = any_of("perf_metric_prefixes", &perf_prefixes, "^", "")?;
        let perf_metric = compile(
            "perf_metric",
            &format!("(?:{})|(?:{})", patterns.as_str(), prefixes.as_str()),
        )?;
        let mut fallback_tests = Vec::new();
        for (p, test, v) in &spec.fallback_rules {
            fallback_tests.push(match test.as_str() {
                "max_gt" => FallbackTest::MaxGreater(v.as_f64()),
                "delta_gt" => FallbackTest::DeltaGreater(v.as_f64()),
                other => {
                    return Err(RulesError::Pattern {
                        list: "fallback_rules".into(),
                        pattern: p.clone(),
                        error: format!("unknown test {other:?} (max_gt or delta_gt)"),
                    })
                }
            });
        }
        let fallback =
            RegexSet::new(spec.fallback_rules.iter().map(|(p, _, _)| p)).map_err(|e| {
                RulesError::Pattern {
                    list: "fallback_rules".into(),
                    pattern: String::new(),
                    error: e.to_string(),
                }
            })?;
        Ok(SelectionRules {
            absolute_change: any_of("absolute_change", &spec.absolute_change, "", "")?,
            failure: any_of("failure", &spec.failure, "^", "")?,
            pass: any_of("pass", &spec.pass, "^", "")?,
            failure_sibling_exempt: compile(
                "failure_sibling_exempt",
                &spec.failure_sibling_exempt,
            )?,
            incomplete_run_stats: compile("incomplete_run_stats", &spec.incomplete_run_stats)?,
            denylist: any_of("denylist", &spec.denylist, "", "")?,
            allowlist: any_of("allowlist", &spec.allowlist, "", "")?,
            report_allowlist: any_of("report_allowlist", &spec.report_allowlist, "", "")?,
            perf_metric,
            thresholds: set_of("thresholds", spec.thresholds.iter().map(|(p, _)| p))?,
            fallback,
            fallback_tests,
            tests: spec
                .perf_tests
                .iter()
                .chain(&spec.functional_tests)
                .cloned()
                .collect(),
            spec,
        })
    }

    /// A failure or pass stat ("function stat" in lkp).
    pub fn is_failure_stat(&self, name: &str) -> bool {
        if self
            .spec
            .not_failure_substrings
            .iter()
            .any(|s| name.contains(s.as_str()))
        {
            return false;
        }
        self.failure.is_match(name) || self.pass.is_match(name)
    }

    pub fn is_absolute_change(&self, name: &str) -> bool {
        self.absolute_change.is_match(name)
    }

    /// Shown by default: not denied, or allowed again.
    pub fn is_reportable(&self, name: &str) -> bool {
        !self.denylist.is_match(name)
            || self.allowlist.is_match(name)
            || self.report_allowlist.is_match(name)
    }

    pub fn is_perf_metric(&self, name: &str) -> bool {
        self.perf_metric.is_match(name)
    }

    pub fn is_test(&self, base: &str) -> bool {
        self.tests.contains(base)
    }

    /// lkp's `reasonable_perf_change?`.
    pub fn reasonable_change(&self, name: &str, delta: f64, max: f64) -> bool {
        if let Some(i) = self.thresholds.matches(name).iter().next() {
            let v = self.spec.thresholds[i].1;
            if max < v.as_f64() {
                return false;
            }
            if let Number::Int(iv) = v {
                // Ruby's Integer division.
                if delta < (iv / 2) as f64 {
                    return false;
                }
            }
            return true;
        }
        match self.fallback.matches(name).iter().next() {
            Some(i) => match self.fallback_tests[i] {
                FallbackTest::MaxGreater(v) => max > v,
                FallbackTest::DeltaGreater(v) => delta > v,
            },
            None => true,
        }
    }

    /// The part of the name rows are sorted by.
    pub fn sort_key<'a>(&self, name: &'a str, base: &str) -> &'a str {
        match self.spec.sort_key_components.get(base) {
            Some(&n) => {
                let mut end = name.len();
                let mut seen = 0;
                for (i, c) in name.char_indices() {
                    if c == '.' {
                        seen += 1;
                        if seen == n {
                            end = i;
                            break;
                        }
                    }
                }
                &name[..end]
            }
            None => name,
        }
    }
}

/// Text before the first dot: the monitor or test a stat comes from.
pub fn stat_base(name: &str) -> &str {
    name.split_once('.').map_or(name, |(b, _)| b)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Higher,
    Lower,
    None,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionEntry {
    pub pattern: String,
    pub direction: Direction,
    #[serde(default)]
    pub priority: i32,
    #[serde(default)]
    pub why: Option<String>,
}

#[derive(Debug, Deserialize)]
struct DirectionFile {
    entry: Vec<DirectionEntry>,
}

/// Which way is better for each metric.
#[derive(Debug, Clone)]
pub struct DirectionTable {
    pub entries: Vec<DirectionEntry>,
    set: RegexSet,
}

impl DirectionTable {
    pub fn default_table() -> Self {
        Self::with_overrides(&[]).expect("embedded direction table is valid")
    }

    /// `extra` entries (from config) are consulted before the defaults.
    pub fn with_overrides(extra: &[DirectionEntry]) -> Result<Self, RulesError> {
        let file: DirectionFile = toml::from_str(DEFAULT_DIRECTION).map_err(toml_error)?;
        let mut entries = extra.to_vec();
        entries.extend(file.entry);
        for e in &entries {
            compile("direction", &e.pattern)?;
        }
        let set = set_of("direction", entries.iter().map(|e| &e.pattern))?;
        Ok(DirectionTable { entries, set })
    }

    pub fn lookup(&self, metric: &str) -> Option<&DirectionEntry> {
        self.set
            .matches(metric)
            .iter()
            .next()
            .map(|i| &self.entries[i])
    }

    pub fn direction(&self, metric: &str) -> Direction {
        self.lookup(metric).map_or(Direction::None, |e| e.direction)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_stats() {
        let r = SelectionRules::default_rules();
        for (name, want) in [
            ("dmesg.RIP:kmem_cache_alloc", true),
            ("kmsg.foo", true),
            ("ltp.syscalls.fail", true),
            ("ltp.syscalls.pass", true),
            ("fio.time.elapsed_time", false),
            ("dmesg.timestamp:last", false),
            ("fio.write_iops", false),
            ("notdmesg.x", false),
        ] {
            assert_eq!(r.is_failure_stat(name), want, "{name}");
        }
    }

    #[test]
    fn reportable_and_perf() {
        let r = SelectionRules::default_rules();
        assert!(r.is_reportable("meminfo.Mapped"));
        assert!(!r.is_reportable("interrupts.CAL:Function_call_interrupts"));
        assert!(!r.is_reportable("slabinfo.kmalloc-256.num_objs"));
        assert!(r.is_reportable("fio.write_iops"));
        assert!(r.is_perf_metric("fio.write_iops"));
        assert!(r.is_perf_metric("perf-stat.branch-instructions"));
        assert!(r.is_perf_metric("vmstat.system.cs"));
        assert!(r.is_perf_metric("fio.time.elapsed_time"));
        assert!(!r.is_perf_metric("meminfo.Active"));
        assert!(!r.is_perf_metric("ltp.foo"));
    }

    #[test]
    fn thresholds_in_order() {
        let r = SelectionRules::default_rules();
        // .*.time.involuntary_context_switches: 1000 -> max>=1000, delta>=500
        assert!(r.reasonable_change("fio.time.involuntary_context_switches", 1582.0, 90260.0));
        assert!(!r.reasonable_change("fio.time.involuntary_context_switches", 400.0, 90260.0));
        assert!(!r.reasonable_change("vmstat.system.cs", 1000.0, 99.0));
        // fallback: proc-vmstat needs max > 1000
        assert!(!r.reasonable_change("proc-vmstat.numa_pages_migrated", 5.0, 1000.0));
        assert!(r.reasonable_change("proc-vmstat.numa_pages_migrated", 5.0, 1001.0));
        assert!(r.reasonable_change("fio.write_iops", 1.0, 2.0));
    }

    #[test]
    fn sort_keys() {
        let r = SelectionRules::default_rules();
        assert_eq!(
            r.sort_key("perf-profile.self.cycles-pp.memcpy", "perf-profile"),
            "perf-profile.self"
        );
        assert_eq!(r.sort_key("vmstat.system.cs", "vmstat"), "vmstat.system.cs");
    }

    #[test]
    fn directions() {
        let t = DirectionTable::default_table();
        assert_eq!(t.direction("fio.write_iops"), Direction::Higher);
        assert_eq!(t.direction("fio.latency_2ms%"), Direction::None);
        assert_eq!(t.direction("fio.latency_750us%"), Direction::None);
        assert_eq!(t.direction("fio.write_clat_mean_us"), Direction::Lower);
        assert_eq!(t.direction("aim7.jobs-per-min"), Direction::Higher);
        assert_eq!(t.direction("aim7.time.elapsed_time"), Direction::None);
        assert_eq!(
            t.direction("will-it-scale.per_thread_ops"),
            Direction::Higher
        );
        assert_eq!(
            t.direction("kbuild.buildtime_per_iteration"),
            Direction::Lower
        );
        assert_eq!(t.direction("pts.aobench.0.seconds"), Direction::Lower);
        assert_eq!(t.direction("vm-scalability.throughput"), Direction::Higher);
        assert_eq!(t.direction("meminfo.Mapped"), Direction::None);
        assert_eq!(t.direction("fsmark.app_overhead"), Direction::Lower);
    }
}
