//! Comparing the samples of two or more commits: statistics, selection of the
//! changed stats, direction, and the headline of a report.

pub mod case_file;
pub(crate) mod headline;
pub mod matrix;
pub mod noise;
pub(crate) mod order;
pub mod rules;
pub(crate) mod select;

use matrix::{Matrix, Series};
use rules::SelectionRules;
pub use select::SelectOptions;

use rust_decimal::Decimal;

use crate::model::table::{Cells, Change, PerfCell, Row};

/// lkp's `Enumerable#average`: Ruby's sum over the length.
pub fn mean(v: &[f64]) -> f64 {
    ruby_sum(v) / v.len() as f64
}

/// The sum as lkp's Ruby computes it (`Array#sum`): Kahan–Babuska
/// compensated summation, so that 15.96 prints where a plain left-to-right
/// sum would drift to 15.95. Infinities and NaN propagate as in Ruby.
pub fn ruby_sum(v: &[f64]) -> f64 {
    let mut f = 0.0f64;
    let mut c = 0.0f64;
    for &x in v {
        if f.is_nan() {
            continue;
        }
        if x.is_nan() {
            f = x;
            continue;
        }
        if x.is_infinite() {
            f = if f.is_infinite() && x.signum() != f.signum() {
                f64::NAN
            } else {
                x
            };
            continue;
        }
        if f.is_infinite() {
            continue;
        }
        let t = f + x;
        if f.abs() >= x.abs() {
            c += (f - t) + x;
        } else {
            c += (x - t) + f;
        }
        f = t;
    }
    f + c
}

/// Population standard deviation, computed the way lkp does (1/n · Σ(x-μ)²).
pub fn stddev(v: &[f64]) -> f64 {
    let avg = mean(v);
    let mut sum = 0.0;
    for x in v {
        sum += (x - avg).powi(2);
    }
    (1.0 / v.len() as f64 * sum).sqrt()
}

/// Percent change against `base`; a zero base counts as 1e-100 (lkp's guard
/// against dividing by zero, which turns 0 → N into a huge percentage).
pub fn percent_change(base: f64, value: f64) -> f64 {
    // Nothing to nothing is no change (the guard alone would make it -100%).
    if base == 0.0 && value == 0.0 {
        return 0.0;
    }
    let base = if base == 0.0 { 1e-100 } else { base };
    100.0 * (value - base) / base
}

/// The mean of samples as exact decimals: each sample is the decimal its
/// shortest printing says (what the matrix file holds: `12.15`, not the
/// binary 12.1499999…), summed and divided in decimal. `None` for no
/// samples, a non-finite one, or one beyond the decimal range.
pub fn exact_mean(v: &[matrix::Sample]) -> Option<Decimal> {
    if v.is_empty() {
        return None;
    }
    let mut sum = Decimal::ZERO;
    for s in v {
        if !s.value.is_finite() {
            return None;
        }
        let d: Decimal = s.value.to_string().parse().ok()?;
        sum = sum.checked_add(d)?;
    }
    sum.checked_div(Decimal::from(v.len()))
}

/// The change of `head` against `base`, exactly: a difference, or percent
/// (none against a zero base: lkp's 1e-100 guard is a binary matter).
fn exact_change(base: Option<Decimal>, head: Option<Decimal>, absolute: bool) -> Option<Decimal> {
    let (b, h) = (base?, head?);
    if absolute {
        return h.checked_sub(b);
    }
    if b.is_zero() {
        return None;
    }
    h.checked_sub(b)?
        .checked_mul(Decimal::ONE_HUNDRED)?
        .checked_div(b)
}

/// One column of a comparison: a commit (or other axis value) and its samples.
#[derive(Debug, Clone)]
pub struct Column {
    pub id: String,
    pub matrix: Matrix,
}

impl Column {
    pub fn new(id: impl Into<String>, mut matrix: Matrix) -> Self {
        matrix.fill_missing_zeros();
        Column {
            id: id.into(),
            matrix,
        }
    }
}

/// The row of `stat` over all columns (lkp's `calc_stat_change`).
fn row_for(
    stat: &str,
    columns: &[Column],
    complete: &[std::borrow::Cow<'_, Matrix>],
    rules: &SelectionRules,
) -> Row {
    let cells = if rules.is_failure_stat(stat) {
        failure_cells(stat, columns)
    } else {
        perf_cells(stat, complete, rules.is_absolute_change(stat))
    };
    Row {
        name: stat.to_string(),
        cells,
    }
}

/// A failure stat's cells: how many runs failed in each column, and the
/// change of its rate against the base.
fn failure_cells(stat: &str, columns: &[Column]) -> Cells {
    let fails: Vec<f64> = columns
        .iter()
        .map(|c| match c.matrix.stats.get(stat) {
            Some(Series::Numbers(v)) => {
                // lkp sums with Ruby's Array#sum, as it does for means.
                let values: Vec<f64> = v.iter().map(|s| s.value).collect();
                ruby_sum(&values).max(0.0)
            }
            _ => 0.0,
        })
        .collect();
    let runs: Vec<usize> = columns.iter().map(|c| c.matrix.runs()).collect();
    // Each column's rate against its own run count (lkp divides by the
    // previous column's, an off-by-one perfbot does not copy).
    let rate = |i: usize| {
        if runs[i] == 0 {
            0.0
        } else {
            fails[i] / runs[i] as f64
        }
    };
    let changes = (1..columns.len())
        .map(|i| 100.0 * (rate(i) - rate(0)))
        .collect();
    Cells::Failure {
        fails,
        runs,
        changes,
    }
}

/// A performance stat's cells: each column's mean and %stddev, and its
/// change against the base (in percent, or `absolute`ly).
fn perf_cells(stat: &str, complete: &[std::borrow::Cow<'_, Matrix>], absolute: bool) -> Cells {
    fn series<'m>(m: &'m Matrix, stat: &str) -> Option<&'m [matrix::Sample]> {
        match m.stats.get(stat) {
            Some(Series::Numbers(v)) => Some(v),
            _ => None,
        }
    }
    let cells: Vec<PerfCell> = complete
        .iter()
        .map(|m| {
            let values: Vec<f64> =
                series(m, stat).map_or_else(Vec::new, |v| v.iter().map(|s| s.value).collect());
            perf_cell(&values)
        })
        .collect();
    let avg0 = cells[0].mean;
    let exact_means: Vec<Option<Decimal>> = complete
        .iter()
        .map(|m| series(m, stat).and_then(exact_mean))
        .collect();
    let changes = cells[1..]
        .iter()
        .zip(&exact_means[1..])
        .map(|(c, exact)| Change {
            value: if absolute {
                c.mean - avg0
            } else {
                percent_change(avg0, c.mean)
            },
            absolute,
            printed: None,
            exact: exact_change(exact_means[0], *exact, absolute),
        })
        .collect();
    Cells::Perf { cells, changes }
}

/// The mean and %stddev of one column's values (lkp's: 0 for none, a
/// spread of -1 for one, the spread absolute where the mean is 0).
fn perf_cell(values: &[f64]) -> PerfCell {
    let avg = if values.is_empty() { 0.0 } else { mean(values) };
    let sd = if values.len() > 1 {
        stddev(values)
    } else {
        -1.0
    };
    let spread = if avg != 0.0 { 100.0 * sd / avg } else { sd };
    PerfCell { mean: avg, spread }
}

/// Select the changed stats of `columns` (the first is the base) and compute
/// their rows, unsorted.
pub fn compare_columns(
    columns: &[Column],
    rules: &SelectionRules,
    opts: &SelectOptions,
) -> Vec<Row> {
    if columns.len() < 2 {
        return Vec::new();
    }
    let others: Vec<&Matrix> = columns[1..].iter().map(|c| &c.matrix).collect();
    let changed = select::changed_stats(&columns[0].matrix, &others, rules, opts);
    let complete: Vec<_> = columns.iter().map(|c| c.matrix.complete()).collect();
    changed
        .iter()
        .map(|stat| row_for(stat, columns, &complete, rules))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_changes_of_zeros() {
        for (b, v, want) in [(0.0, 0.0, 0.0), (10.0, 0.0, -100.0), (10.0, 15.0, 50.0)] {
            assert_eq!(percent_change(b, v), want, "{b} -> {v}");
        }
        assert!(percent_change(0.0, 5.0) > 1e100);
    }

    #[test]
    fn a_fractional_failure_sum_is_kept_for_the_table() {
        // The robot's failure patterns of 2020 also caught perf-profile's
        // `…error_entry`, whose samples are percentages: the sum is
        // fractional, and lkp printed `0:4` for 0.3 where `:4` means the stat
        // never occurred. Any failure stat with such samples does the same.
        let rules = crate::compare::SelectionRules::default_rules();
        let stat = "kmsg.fractional";
        assert!(rules.is_failure_stat(stat));
        let base = Matrix::from_f64([(stat.to_string(), vec![0.1, 0.1, 0.05, 0.05])]);
        let head = Matrix::from_f64([("other".to_string(), vec![1.0; 4])]);
        let cols = [Column::new("a", base), Column::new("b", head)];
        let row = row_for(stat, &cols, &[], &rules);
        match &row.cells {
            Cells::Failure { fails, runs, .. } => {
                assert!((fails[0] - 0.3).abs() < 1e-12, "{fails:?}");
                assert_eq!(fails[1], 0.0);
                assert_eq!(runs, &vec![4, 4]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn population_stddev() {
        let v = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&v), 5.0);
        assert_eq!(stddev(&v), 2.0);
    }

    #[test]
    fn sums_are_compensated_as_in_ruby() {
        // Ruby: [0.1] * 10).sum == 1.0, while a plain fold gives 0.9999999999999999.
        let tenth = [0.1; 10];
        assert_eq!(tenth.iter().sum::<f64>(), 0.9999999999999999);
        assert_eq!(ruby_sum(&tenth), 1.0);
        // Ruby: [3.0, 1e100, -1e100].sum == 3.0 (a plain fold loses the 3).
        assert_eq!(ruby_sum(&[3.0, 1e100, -1e100]), 3.0);
        // Special values as Ruby: opposite infinities give NaN, NaN sticks.
        assert!(ruby_sum(&[f64::INFINITY, 1.0, f64::NEG_INFINITY]).is_nan());
        assert_eq!(ruby_sum(&[1.0, f64::INFINITY, 2.0]), f64::INFINITY);
        assert!(ruby_sum(&[f64::NAN, f64::INFINITY]).is_nan());
        // Integers (the usual samples) stay exact.
        assert_eq!(ruby_sum(&[41000.0, 41001.0, 40999.0]), 123000.0);
    }
}
