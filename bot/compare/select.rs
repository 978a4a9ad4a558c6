//! Which stats changed: lkp's `_get_changed_stats`, rule for rule.
//!
//! The decision uses medians and ranges of (lightly trimmed) samples; the table
//! then shows means and standard deviations. That asymmetry is lkp's and is kept.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeSet;

use super::matrix::{Matrix, Sample, Series};
use super::rules::{stat_base, Number, SelectionRules};

/// Options of one selection (lkp's ncompare defaults unless said otherwise).
#[derive(Debug, Clone, Default)]
pub struct SelectOptions {
    /// Show every stat lkp's deny list would hide (`ncompare -m`).
    pub more: bool,
    /// A float perf-profile threshold (`ncompare -p`); `None` keeps the rules'.
    pub perf_profile_threshold: Option<f64>,
}

/// Sorted, trimmed samples with min, median and max (lkp's `StatSummary`).
#[derive(Debug, Clone)]
struct Summary {
    min: f64,
    median: Sample,
    max: f64,
}

impl Summary {
    fn new(samples: &[Sample], max_margin: usize) -> Option<Summary> {
        let mut sorted: Vec<Sample> = samples.to_vec();
        sorted.sort_by(|a, b| a.value.total_cmp(&b.value));
        // lkp drops the -1 placeholders ("no value") at the front.
        let start = sorted.iter().take_while(|s| s.value == -1.0).count();
        let sorted = &sorted[start..];
        let margin = (sorted.len() >> 5).min(max_margin);
        if sorted.len() <= 2 * margin {
            return None;
        }
        let kept = &sorted[margin..sorted.len() - margin];
        Some(Summary {
            min: kept[0].value,
            median: kept[kept.len() / 2],
            max: kept[kept.len() - 1].value,
        })
    }
}

fn padded(series: Option<&Series>, runs: usize) -> Option<Cow<'_, [Sample]>> {
    match series {
        Some(Series::Numbers(v)) if v.len() >= runs => Some(Cow::Borrowed(v)),
        Some(Series::Numbers(v)) => {
            let mut v = v.clone();
            v.resize(runs, Sample::int(0));
            Some(Cow::Owned(v))
        }
        Some(Series::Text) => None,
        None => Some(Cow::Owned(vec![Sample::int(0); runs])),
    }
}

/// One stat on both sides: its key, its series in the compared commit
/// (`a`) and in the base (`b`), and the two matrices they come from.
struct Pair<'a> {
    k: &'a str,
    a_series: Option<&'a Series>,
    b_series: Option<&'a Series>,
    a: &'a Matrix,
    b: &'a Matrix,
}

/// Is `p.k` a changed stat of `a` (the compared commit) against `b` (the
/// base)? lkp's conditions in its order: a stat worth comparing, whose
/// trimmed samples moved apart, that the deny list lets through, by enough
/// to show.
fn changed(p: &Pair, incomplete: bool, rules: &SelectionRules, opts: &SelectOptions) -> bool {
    // The cheap numeric checks run before the deny-list regexes, since most
    // stats do not change.
    let Some(failure) = comparable(p, incomplete, rules) else {
        return false;
    };
    let Some((summary_a, summary_b)) =
        summaries(p.a_series, p.b_series, p.a.runs(), p.b.runs(), failure)
    else {
        return false;
    };
    let k = p.k;
    let is_perf_profile = k.starts_with("perf-profile.");
    let perf_threshold = is_perf_profile
        .then(|| perf_profile_threshold(rules, opts, &summary_a))
        .flatten();
    moved(&summary_a, &summary_b, perf_threshold, failure)
        && (opts.more || rules.is_reportable(k))
        // Is the change large enough to show?
        && (is_perf_profile || large_enough(k, &summary_a, &summary_b, rules))
}

/// Whether the stat is worth comparing at all, and if so whether it is a
/// failure stat: not text, a stat an incomplete run still counts, failure
/// stats with their sibling, enough runs, and a monitor the base had.
fn comparable(p: &Pair, incomplete: bool, rules: &SelectionRules) -> Option<bool> {
    let (k, b) = (p.k, p.b);
    if matches!(p.a_series, Some(Series::Text)) {
        return None;
    }
    if incomplete && !rules.incomplete_run_stats.is_match(k) {
        return None;
    }
    let failure = rules.is_failure_stat(k);
    if failure {
        if !rules.failure_sibling_exempt.is_match(k) && lacks_its_sibling(k, b) {
            return None;
        }
    } else if p.a.runs() < rules.spec.min_runs && b.runs() < rules.spec.min_runs {
        return None;
    }
    // Newly added monitors have nothing to compare in the base.
    if p.b_series.is_none() && !failure {
        let base = stat_base(k);
        let monitored = (base == "lock_stat" || base == "perf-profile")
            && b.stats.keys().any(|bk| stat_base(bk) == base);
        if !monitored {
            return None;
        }
    }
    Some(failure)
}

/// Both sides' samples, padded to their matrix's runs and trimmed: lkp
/// trims a failure stat not at all, and a base of three runs or fewer by
/// at most one sample.
fn summaries(
    a_series: Option<&Series>,
    b_series: Option<&Series>,
    runs_a: usize,
    runs_b: usize,
    failure: bool,
) -> Option<(Summary, Summary)> {
    let max_margin = if failure { 0 } else { 3 };
    let b_k = padded(b_series, runs_b)?;
    let summary_b = Summary::new(&b_k, max_margin)?;
    let max_margin = if b_k.len() <= 3 && max_margin > 1 {
        1
    } else {
        max_margin
    };
    let a_k = padded(a_series, runs_a)?;
    let summary_a = Summary::new(&a_k, max_margin)?;
    Some((summary_a, summary_b))
}

/// Whether the samples moved apart: a perf-profile stat past its threshold
/// on either side, a failure stat whose maximum changed, any other stat
/// whose median left the other side's range both ways.
fn moved(a: &Summary, b: &Summary, perf_threshold: Option<f64>, failure: bool) -> bool {
    let (ma, mb) = (a.median.value, b.median.value);
    if let Some(t) = perf_threshold {
        ma > t || mb > t
    } else if failure {
        a.max != b.max
    } else {
        (b.min > ma && mb > a.max) || (a.min > mb && ma > b.max)
    }
}

/// A test's `.error`/`.warn`/`.fail` stat without its `.pass` in the base, or
/// a `.pass` without any of them: a failure count with nothing to weigh it
/// against.
fn lacks_its_sibling(k: &str, b: &Matrix) -> bool {
    let stem = k.rsplit_once('.').map_or(k, |(s, _)| s);
    let is_fail = ["error", "warn", "fail"]
        .iter()
        .any(|s| k.ends_with(&format!(".{s}")));
    if is_fail && !b.stats.contains_key(&format!("{stem}.pass")) {
        return true;
    }
    k.ends_with(".pass")
        && !["error", "warn", "fail"]
            .iter()
            .any(|s| b.stats.contains_key(&format!("{stem}.{s}")))
}

/// Whether a change is large enough to show: the medians' ratio past the
/// thresholds (a lower one for performance metrics), and a change the
/// stat's own rules call reasonable.
fn large_enough(k: &str, a: &Summary, b: &Summary, rules: &SelectionRules) -> bool {
    let spec = &rules.spec;
    let max = a.max.max(b.max);
    let (ma, mb) = (a.median.value, b.median.value);
    let (high, low) = if ma > mb { (ma, mb) } else { (mb, ma) };
    let delta = high - low;
    let ratio = if low > 0.0 {
        (high / low).min(spec.max_ratio)
    } else {
        spec.max_ratio
    };
    if ratio <= spec.min_ratio_perf {
        return false;
    }
    if ratio <= spec.min_ratio_other && !rules.is_perf_metric(k) {
        return false;
    }
    rules.reasonable_change(k, delta, max)
}

/// The threshold that applies to a perf-profile stat, if any: lkp compares it
/// only when the threshold and the median are of the same Ruby class.
fn perf_profile_threshold(
    rules: &SelectionRules,
    opts: &SelectOptions,
    a: &Summary,
) -> Option<f64> {
    match opts.perf_profile_threshold {
        Some(f) => (!a.median.integer).then_some(f),
        None => match rules.spec.perf_profile_threshold {
            Number::Int(i) => a.median.integer.then_some(i as f64),
            Number::Float(f) => (!a.median.integer).then_some(f),
        },
    }
}

fn changed_in(
    a: &Matrix,
    b: &Matrix,
    incomplete: bool,
    rules: &SelectionRules,
    opts: &SelectOptions,
    out: &mut BTreeSet<String>,
) {
    // Both maps are sorted: walk them together instead of looking keys up.
    let mut ai = a.stats.iter().peekable();
    let mut bi = b.stats.iter().peekable();
    loop {
        let order = match (ai.peek(), bi.peek()) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((ka, _)), Some((kb, _))) => ka.cmp(kb),
        };
        let (k, sa, sb) = match order {
            Ordering::Less => ai.next().map(|(k, sa)| (k, Some(sa), None)),
            Ordering::Greater => bi.next().map(|(k, sb)| (k, None, Some(sb))),
            Ordering::Equal => ai
                .next()
                .zip(bi.next())
                .map(|((k, sa), (_, sb))| (k, Some(sa), Some(sb))),
        }
        .expect("peeked");
        let pair = Pair {
            k,
            a_series: sa,
            b_series: sb,
            a,
            b,
        };
        if !out.contains(k) && changed(&pair, incomplete, rules, opts) {
            out.insert(k.clone());
        }
    }
}

/// Stats that changed between `base` and any of `others` (lkp's union over columns).
pub fn changed_stats(
    base: &Matrix,
    others: &[&Matrix],
    rules: &SelectionRules,
    opts: &SelectOptions,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for a in others {
        let incomplete = a.has_incomplete_runs() || base.has_incomplete_runs();
        changed_in(a, base, incomplete, rules, opts, &mut out);
        if incomplete {
            // First pass only looked at failure stats; now the complete runs.
            let (ca, cb) = (a.complete(), base.complete());
            if ca.runs() > 0 && cb.runs() > 0 {
                changed_in(&ca, &cb, false, rules, opts, &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::matrix::INCOMPLETE_RUN;

    fn m(stats: &[(&str, &[f64])]) -> Matrix {
        let mut m = Matrix::from_f64(stats.iter().map(|(k, v)| (k.to_string(), v.to_vec())));
        m.fill_missing_zeros();
        m
    }

    #[test]
    fn non_overlapping_medians_select() {
        let rules = SelectionRules::default_rules();
        let base = m(&[(
            "fio.write_iops",
            &[41000.0, 41200.0, 40800.0, 41100.0, 40900.0],
        )]);
        let head = m(&[(
            "fio.write_iops",
            &[37300.0, 37400.0, 37200.0, 37350.0, 37250.0],
        )]);
        let got = changed_stats(&base, &[&head], &rules, &SelectOptions::default());
        assert!(got.contains("fio.write_iops"));
    }

    #[test]
    fn overlapping_ranges_do_not_select() {
        let rules = SelectionRules::default_rules();
        let base = m(&[(
            "fio.write_clat_mean_us",
            &[2100.0, 3500.0, 2900.0, 1800.0, 3300.0],
        )]);
        let head = m(&[(
            "fio.write_clat_mean_us",
            &[2500.0, 3900.0, 3100.0, 2000.0, 3700.0],
        )]);
        assert!(changed_stats(&base, &[&head], &rules, &SelectOptions::default()).is_empty());
    }

    #[test]
    fn too_few_runs() {
        let rules = SelectionRules::default_rules();
        let base = m(&[("fio.write_iops", &[41000.0, 41200.0])]);
        let head = m(&[("fio.write_iops", &[30000.0, 30100.0])]);
        assert!(changed_stats(&base, &[&head], &rules, &SelectOptions::default()).is_empty());
    }

    #[test]
    fn failure_stat_changes_on_max() {
        let rules = SelectionRules::default_rules();
        let base = m(&[("fio.write_iops", &[1.0, 1.0, 1.0])]);
        let head = m(&[
            ("fio.write_iops", &[1.0, 1.0, 1.0]),
            ("dmesg.RIP:foo", &[1.0, 0.0, 1.0]),
        ]);
        let got = changed_stats(&base, &[&head], &rules, &SelectOptions::default());
        assert!(got.contains("dmesg.RIP:foo"), "{got:?}");
    }

    /// lkp's rules, one row each: the base's and the head's stats, and
    /// what is selected.
    #[test]
    fn selection_rules_table() {
        type Stats<'a> = &'a [(&'a str, &'a [f64])];
        let iops_base: &[f64] = &[100.0, 101.0, 99.0];
        let iops_head: &[f64] = &[80.0, 81.0, 79.0];
        let table: &[(&str, Stats, Stats, &[&str])] = &[
            (
                "a moved metric",
                &[("fio.write_iops", iops_base)],
                &[("fio.write_iops", iops_head)],
                &["fio.write_iops"],
            ),
            (
                "a .fail with its .pass in the base",
                &[
                    ("ltp.x.pass", &[1.0, 1.0, 1.0]),
                    ("ltp.x.fail", &[0.0, 0.0, 0.0]),
                ],
                &[
                    ("ltp.x.pass", &[1.0, 1.0, 1.0]),
                    ("ltp.x.fail", &[0.0, 1.0, 0.0]),
                ],
                &["ltp.x.fail"],
            ),
            (
                "a .fail without its .pass in the base: nothing to weigh it by",
                &[("ltp.x.fail", &[0.0, 0.0, 0.0])],
                &[("ltp.x.fail", &[0.0, 1.0, 0.0])],
                &[],
            ),
            (
                "dmesg is exempt from the sibling rule",
                &[("fio.write_iops", iops_base)],
                &[
                    ("fio.write_iops", iops_base),
                    ("dmesg.BUG:x", &[0.0, 1.0, 0.0]),
                ],
                &["dmesg.BUG:x"],
            ),
            (
                "a stat new in the head, not a failure: a new monitor, nothing to compare",
                &[("fio.write_iops", iops_base)],
                &[("fio.write_iops", iops_base), ("vmstat.new", iops_head)],
                &[],
            ),
            (
                "a new perf-profile stat when the base had perf-profile",
                &[
                    ("fio.write_iops", iops_base),
                    ("perf-profile.self.a", &[1.0, 1.0, 1.0]),
                ],
                &[
                    ("fio.write_iops", iops_base),
                    ("perf-profile.self.a", &[1.0, 1.0, 1.0]),
                    ("perf-profile.self.b", &[9.0, 9.0, 9.0]),
                ],
                &["perf-profile.self.b"],
            ),
            (
                "two runs a side are too few",
                &[("fio.write_iops", &[100.0, 101.0])],
                &[("fio.write_iops", &[80.0, 81.0])],
                &[],
            ),
            (
                "a stat some runs lack counts 0 for them",
                &[
                    ("fio.write_iops", iops_base),
                    ("vmstat.x", &[50.0, 50.0, 50.0]),
                ],
                &[("fio.write_iops", iops_base), ("vmstat.x", &[10.0])],
                &["vmstat.x"],
            ),
            (
                "an incomplete run: its failure stats, then the complete runs only",
                &[
                    ("fio.write_iops", &[100.0, 101.0, 99.0, 100.0]),
                    ("dmesg.BUG:x", &[0.0, 0.0, 0.0, 0.0]),
                ],
                &[
                    ("fio.write_iops", &[100.0, 101.0, 99.0, 5.0]),
                    ("dmesg.BUG:x", &[0.0, 0.0, 0.0, 1.0]),
                    (INCOMPLETE_RUN, &[0.0, 0.0, 0.0, 1.0]),
                ],
                // The flag is a last_state stat itself; the iops' fall was
                // the incomplete run's only.
                &["dmesg.BUG:x", INCOMPLETE_RUN],
            ),
        ];
        let rules = SelectionRules::default_rules();
        for (what, base, head, want) in table {
            let got = changed_stats(&m(base), &[&m(head)], &rules, &SelectOptions::default());
            let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
            assert_eq!(got, want, "{what}");
        }
    }
}
