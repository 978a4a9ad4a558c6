//! lkp's order of the rows of a comparison table.

use std::collections::HashMap;

use super::rules::{stat_base, SelectionRules};
use crate::model::table::{Cells, Row};

impl Row {
    pub fn is_failure(&self) -> bool {
        matches!(self.cells, Cells::Failure { .. })
    }

    fn sort_changes(&self) -> Vec<f64> {
        match &self.cells {
            Cells::Perf { changes, .. } => changes.iter().map(|c| c.value).collect(),
            Cells::Failure { changes, .. } => changes.clone(),
        }
    }
}

/// lkp's row order: bases with fewer rows first (the tests' own metrics first of
/// all when `hoist_tests`), then by name (perf-profile by kind), then by change.
/// Exact ties are ordered by name.
pub fn sort_rows(rows: &mut [Row], rules: &SelectionRules, hoist_tests: bool) {
    sort_rows_with(rows, rules, hoist_tests, true)
}

/// As [`sort_rows`]; with `tie_by_name` false, exact ties keep their input order
/// (pre-aggregated rows come in the order of the tool that computed them, which
/// knew more digits than it printed).
pub fn sort_rows_with(
    rows: &mut [Row],
    rules: &SelectionRules,
    hoist_tests: bool,
    tie_by_name: bool,
) {
    let mut count: HashMap<&str, i64> = HashMap::new();
    for r in rows.iter() {
        let base = stat_base(&r.name);
        let e = count
            .entry(base)
            .or_insert(if r.is_failure() { -10_000 } else { 0 });
        *e += 1;
    }
    if hoist_tests {
        for (base, c) in count.iter_mut() {
            if *c > 0 && rules.is_test(base) {
                *c = 0;
            }
        }
    }
    let mut keyed: Vec<(i64, String, Vec<f64>, usize)> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let base = stat_base(&r.name);
            (
                count[base],
                rules.sort_key(&r.name, base).to_string(),
                r.sort_changes(),
                i,
            )
        })
        .collect();
    keyed.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| a.1.cmp(&b.1))
            .then_with(|| {
                for (x, y) in a.2.iter().zip(&b.2) {
                    let o = x.total_cmp(y);
                    if o.is_ne() {
                        return o;
                    }
                }
                a.2.len().cmp(&b.2.len())
            })
            // Ruby's sort_by is not stable; perfbot breaks exact ties by name.
            .then_with(|| {
                if tie_by_name {
                    rows[a.3].name.cmp(&rows[b.3].name)
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .then_with(|| a.3.cmp(&b.3))
    });
    let order: Vec<usize> = keyed.into_iter().map(|k| k.3).collect();
    let sorted: Vec<Row> = order.iter().map(|&i| rows[i].clone()).collect();
    rows.clone_from_slice(&sorted);
}
