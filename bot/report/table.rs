//! The `%stddev / %change` comparison table, byte for byte as lkp prints it.

use super::numfmt::{fixed, fixed_signed, general_signed, right, truncated};
pub use crate::compare::order::{sort_rows, sort_rows_with};
use crate::compare::rules::SelectionRules;
use crate::compare::{case_file::CaseFile, compare_columns, SelectOptions};
pub use crate::model::table::{Cells, Change, PerfCell, Row};

const ABS_WIDTH: usize = 10;
const REL_WIDTH: usize = 10;
const ERR_WIDTH: usize = 6;
const FIRST_WIDTH: usize = ABS_WIDTH + ERR_WIDTH;
const TITLE_WIDTH: usize = FIRST_WIDTH + REL_WIDTH + 1;

impl Change {
    /// The number as the table prints it (`+7.0`, `-9.1`, `+1e+105`).
    pub fn number_text(&self) -> String {
        if let Some(p) = &self.printed {
            return p.trim_end_matches('%').to_string();
        }
        if self.value.abs() < 100_000.0 {
            match self.exact {
                Some(d) => super::numfmt::decimal_signed(d, 1),
                None => fixed_signed(self.value, 1),
            }
        } else {
            general_signed(self.value, 2)
        }
    }
}

impl Row {
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
                        out.push_str(&format!(" ±{:>3}%", truncated(cell.spread)));
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
                    // Ruby's `%11d` of a Float truncates; only an exact 0 is blank.
                    if *f == 0.0 {
                        out.push_str(&" ".repeat(ABS_WIDTH + 1));
                    } else {
                        out.push_str(&right(&truncated(*f), ABS_WIDTH + 1));
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

impl Row {
    /// The row as the robot of 2014 printed it: `~ N%` after every mean
    /// given a spread, every change in percent, `TOTAL` before the name.
    /// (No 2014 failure row is known; those print as later tables do.)
    pub fn render_2014(&self) -> String {
        let Cells::Perf { cells, changes } = &self.cells else {
            return self.render();
        };
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let width = if i == 0 {
                12
            } else {
                let c = &changes[i - 1];
                out.push_str(&right(&format!("{}%", c.number_text()), 11));
                11
            };
            out.push_str(&right(&mean_text_2014(cell.mean), width));
            if cell.spread >= 0.0 {
                out.push_str(&format!(" ~{:>2}%", truncated(cell.spread)));
            } else {
                out.push_str(&" ".repeat(5));
            }
        }
        out.push_str("  TOTAL ");
        out.push_str(&self.name);
        out
    }
}

/// A mean as the robot of 2014 printed it: whole numbers as integers (but
/// 0 as `0.00`), others with two decimals below 1000; blank when not known.
pub fn mean_text_2014(v: f64) -> String {
    if v.is_nan() {
        String::new()
    } else if v == 0.0 {
        fixed(0.0, 2)
    } else if v.fract() == 0.0 || v.abs() >= 1000.0 {
        truncated(v)
    } else {
        fixed(v, 2)
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

impl CaseFile {
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

    /// The table as the robot of 2014 printed it: no parameter or commit
    /// lines, the columns titled by 15 and 25 digits of their commits.
    pub fn render_2014(&self) -> String {
        let width = |i: usize| if i == 0 { 15 } else { 25 };
        let titles: Vec<String> = self
            .column_ids
            .iter()
            .enumerate()
            .map(|(i, id)| id.chars().take(width(i)).collect())
            .collect();
        let rules: Vec<String> = (0..titles.len()).map(|i| "-".repeat(width(i))).collect();
        let mut out = format!("{}\n{}\n", titles.join("  "), rules.join("  "));
        for r in &self.rows {
            out.push_str(&r.render_2014());
            out.push('\n');
        }
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
                    exact: None,
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
    fn rows_of_2014_render_like_the_robot() {
        // A row read back from a mail: its change as printed.
        let row = |name: &str, a: (f64, f64), b: (f64, f64), printed: &str| {
            let mut r = perf(name, a, b, 0.0, false);
            if let Cells::Perf { changes, .. } = &mut r.cells {
                changes[0].printed = Some(printed.into());
            }
            r
        };
        for (r, want) in [
            (
                row("vm-scalability.migrate_mbps", (347258.0, 0.0), (284195.0, 0.0), "-18.2%"),
                "      347258 ~ 0%     -18.2%     284195 ~ 0%  TOTAL vm-scalability.migrate_mbps",
            ),
            (
                row("perf-profile.x", (0.0, -1.0), (0.94, 7.5), "+Inf%"),
                "        0.00           +Inf%       0.94 ~ 7%  TOTAL perf-profile.x",
            ),
            (
                row("perf-profile.y", (69.4, 0.0), (0.0, 0.0), "-100.0%"),
                "       69.40 ~ 0%    -100.0%       0.00 ~ 0%  TOTAL perf-profile.y",
            ),
            (
                row("turbostat.Cor_W", (f64::NAN, 1.0), (f64::NAN, 1.0), "-3.6%"),
                "             ~ 1%      -3.6%            ~ 1%  TOTAL turbostat.Cor_W",
            ),
            (
                row("numa-vmstat.node0.nr_unevictable", (61.0, 32.5), (286.0, 10.5), "+363.8%"),
                "          61 ~32%    +363.8%        286 ~10%  TOTAL numa-vmstat.node0.nr_unevictable",
            ),
        ] {
            assert_eq!(r.render_2014(), want);
        }
    }

    #[test]
    fn failure_rows_render_like_lkp() {
        let r = Row {
            name: "dmesg.RIP:kmem_cache_alloc".into(),
            cells: Cells::Failure {
                fails: vec![0.0, 1.0],
                runs: vec![4, 4],
                changes: vec![25.0],
            },
        };
        assert_eq!(
            r.render(),
            "           :4           25%           1:4     dmesg.RIP:kmem_cache_alloc"
        );
        // A fractional sum prints its integer part; only an exact 0 is blank.
        let r = Row {
            name: "perf-profile.children.cycles-pp.error_entry".into(),
            cells: Cells::Failure {
                fails: vec![0.3, 2.7],
                runs: vec![4, 4],
                changes: vec![-1.0],
            },
        };
        assert_eq!(
            r.render(),
            "          0:4           -1%           2:4     perf-profile.children.cycles-pp.error_entry"
        );
    }
}
