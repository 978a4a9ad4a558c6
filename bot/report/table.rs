//! The `%stddev / %change` comparison table, byte for byte as lkp prints it.

use std::collections::HashMap;

use super::numfmt::{fixed, fixed_signed, general_signed, right, truncated};
use crate::compare::rules::{stat_base, SelectionRules};

const ABS_WIDTH: usize = 10;
const REL_WIDTH: usize = 10;
const ERR_WIDTH: usize = 6;
const FIRST_WIDTH: usize = ABS_WIDTH + ERR_WIDTH;
const TITLE_WIDTH: usize = FIRST_WIDTH + REL_WIDTH + 1;

/// The change of one column against the base column.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Percent, or an absolute difference when `absolute`.
    pub value: f64,
    pub absolute: bool,
    /// The change exactly as another tool printed it (pre-aggregated input), shown
    /// instead of `value` so that a re-rendered table says what the original said.
    pub printed: Option<String>,
}

impl Change {
    /// The number as the table prints it (`+7.0`, `-9.1`, `+1e+105`).
    pub fn number_text(&self) -> String {
        if let Some(p) = &self.printed {
            return p.trim_end_matches('%').to_string();
        }
        if self.value.abs() < 100_000.0 {
            fixed_signed(self.value, 1)
        } else {
            general_signed(self.value, 2)
        }
    }
}

/// One perf value cell: a mean and its spread.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfCell {
    pub mean: f64,
    /// What lkp compares against 2 to decide whether to print `±N%`: the relative
    /// standard deviation in percent (or, lkp's quirk, the raw value when the mean
    /// is 0; -1 when there was a single sample).
    pub spread: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Cells {
    Perf {
        cells: Vec<PerfCell>,
        changes: Vec<Change>,
    },
    Failure {
        fails: Vec<u64>,
        runs: Vec<usize>,
        /// Reproduction-rate change in percentage points.
        changes: Vec<f64>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: String,
    pub cells: Cells,
}

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

    /// The row's text, without the trailing newline.
    pub fn render(&self) -> String {
        let mut out = String::new();
        match &self.cells {
            Cells::Perf { cells, changes } => {
                for (i, cell) in cells.iter().enumerate() {
                    if i > 0 {
                        let c = &changes[i - 1];
                        out.push_str(&right(&c.number_text(), REL_WIDTH));
                        out.push_str(if c.absolute { "  " } else { "% " });
                    }
                    out.push_str(&right(&mean_text(cell.mean), ABS_WIDTH));
                    if cell.spread > 2.0 {
                        out.push_str(&format!(" ±{:>3}%", cell.spread.trunc() as i64));
                    } else {
                        out.push_str(&" ".repeat(ERR_WIDTH));
                    }
                }
            }
            Cells::Failure {
                fails,
                runs,
                changes,
            } => {
                for (i, f) in fails.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&right(&fixed(changes[i - 1], 0), REL_WIDTH));
                        out.push_str("% ");
                    }
                    if *f == 0 {
                        out.push_str(&" ".repeat(ABS_WIDTH + 1));
                    } else {
                        out.push_str(&right(&f.to_string(), ABS_WIDTH + 1));
                    }
                    out.push_str(&format!(":{:<4}", runs[i]));
                }
            }
        }
        out.push_str("  ");
        out.push_str(&self.name);
        out
    }
}

/// A mean as the table prints it: `%10.2f` below 1000, `%10.4g` above 1e8,
/// else `%10d` (truncated).
pub fn mean_text(v: f64) -> String {
    if v.abs() < 1000.0 {
        fixed(v, 2)
    } else if v.abs() > 100_000_000.0 {
        super::numfmt::general(v, 4)
    } else {
        truncated(v)
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

/// One comparison group: header and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The job's parameters (`keys.join('/')` over `values.join('/')`).
    pub params: Vec<(String, String)>,
    /// Name of the compared axis (`commit`).
    pub axis: String,
    /// Lines under `commit: ` (full SHAs, or `sha10 ("subject")` in e-mails).
    pub commit_lines: Vec<String>,
    /// Column titles (full SHAs, truncated to 16 and 27 characters).
    pub column_ids: Vec<String>,
    pub rows: Vec<Row>,
}

impl Table {
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str(&"=".repeat(89));
        out.push('\n');
        let keys: Vec<&str> = self.params.iter().map(|(k, _)| k.as_str()).collect();
        let values: Vec<&str> = self.params.iter().map(|(_, v)| v.as_str()).collect();
        out.push_str(&format!("{}:\n  {}\n\n", keys.join("/"), values.join("/")));
        out.push_str(&format!("{}: \n", self.axis));
        for l in &self.commit_lines {
            out.push_str(&format!("  {l}\n"));
        }
        out.push('\n');
        let n = self.column_ids.len().saturating_sub(1);
        for (i, id) in self.column_ids.iter().enumerate() {
            let (w, take) = if i == 0 {
                (FIRST_WIDTH, FIRST_WIDTH)
            } else {
                (TITLE_WIDTH, TITLE_WIDTH)
            };
            let id: String = id.chars().take(take).collect();
            out.push_str(&format!("{id:>w$} "));
        }
        out.push('\n');
        out.push_str(&format!("{} ", "-".repeat(FIRST_WIDTH)));
        for _ in 0..n {
            out.push_str(&format!("{} ", "-".repeat(TITLE_WIDTH)));
        }
        out.push('\n');
        let (failures, perf): (Vec<&Row>, Vec<&Row>) =
            self.rows.iter().partition(|r| r.is_failure());
        if !failures.is_empty() {
            out.push_str(&format!(
                "       fail:runs{}\n",
                "  %reproduction    fail:runs".repeat(n)
            ));
            out.push_str(&format!(
                "           |    {}\n",
                "         |             |    ".repeat(n)
            ));
            for r in failures {
                out.push_str(&r.render());
                out.push('\n');
            }
        }
        if !perf.is_empty() {
            out.push_str(&format!(
                "         %stddev{}\n",
                "     %change         %stddev".repeat(n)
            ));
            out.push_str(&format!(
                "             \\  {}\n",
                "        |                \\  ".repeat(n)
            ));
            for r in perf {
                out.push_str(&r.render());
                out.push('\n');
            }
        }
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perf(name: &str, a: (f64, f64), b: (f64, f64), change: f64, absolute: bool) -> Row {
        Row {
            name: name.into(),
            cells: Cells::Perf {
                cells: vec![
                    PerfCell {
                        mean: a.0,
                        spread: a.1,
                    },
                    PerfCell {
                        mean: b.0,
                        spread: b.1,
                    },
                ],
                changes: vec![Change {
                    value: change,
                    absolute,
                    printed: None,
                }],
            },
        }
    }

    #[test]
    fn perf_rows_render_like_lkp() {
        assert_eq!(
            perf("fio.latency_2ms%", (46.56, 3.5), (53.61, 1.0), 7.05, true).render(),
            "     46.56 ±  3%      +7.0       53.61        fio.latency_2ms%"
        );
        assert_eq!(
            perf(
                "proc-vmstat.numa_pages_migrated",
                (0.0, -1.0),
                (1045.0, 0.0),
                1.045e105,
                false
            )
            .render(),
            "      0.00         +1e+105%       1045        proc-vmstat.numa_pages_migrated"
        );
        assert_eq!(
            perf(
                "perf-stat.branch-instructions",
                (2.256e11, 0.1),
                (2.227e11, 0.1),
                -1.3,
                false
            )
            .render(),
            " 2.256e+11            -1.3%  2.227e+11        perf-stat.branch-instructions"
        );
    }

    #[test]
    fn failure_rows_render_like_lkp() {
        let r = Row {
            name: "dmesg.RIP:kmem_cache_alloc".into(),
            cells: Cells::Failure {
                fails: vec![0, 1],
                runs: vec![4, 4],
                changes: vec![25.0],
            },
        };
        assert_eq!(
            r.render(),
            "           :4           25%           1:4     dmesg.RIP:kmem_cache_alloc"
        );
    }
}
