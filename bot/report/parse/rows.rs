//! The rows of a comparison table, one reader per kind: a measurement
//! (`0.01 ±  5%  +20.0%  0.01 ±  8%  metric`), a failure count (`1:4  -25%
//! :4  metric`) and the `~` rows of 2014. Each reads one line into an
//! `AggregatedRow`, or says it is no such row (`None`).

use crate::input::{AggValue, AggregatedRow};

/// A number as the table prints it (`20608395`, `0.01`, `3.348e+08`).
pub(super) fn number(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// One side of a perf row: the mean and, after it, an optional `± N%`.
fn side<'t>(tokens: &mut std::iter::Peekable<impl Iterator<Item = &'t str>>) -> Option<AggValue> {
    let mean = number(tokens.next()?)?;
    if tokens.peek() == Some(&"±") || tokens.peek().is_some_and(|t| t.starts_with('±')) {
        let t = tokens.next()?;
        let pct = if t == "±" {
            tokens.next()?
        } else {
            &t['±'.len_utf8()..]
        };
        let pct = number(pct.trim_end_matches('%'))?;
        return Some(AggValue::Full {
            mean,
            stddev_percent: Some(pct),
            runs: None,
        });
    }
    Some(AggValue::Mean(mean))
}

/// `      0.01 ±  5%     +20.0%       0.01 ±  8%  perf-sched.…`.
pub(super) fn perf_row(row: &str) -> Option<AggregatedRow> {
    let mut tokens = row.split_whitespace().peekable();
    let base = side(&mut tokens)?;
    let change = tokens.next()?.to_string();
    if !(change.starts_with('+') || change.starts_with('-')) {
        return None;
    }
    let head = side(&mut tokens)?;
    let metric = tokens.next()?.to_string();
    let annotation = annotation(row, &metric, tokens.next())?;
    Some(AggregatedRow {
        metric,
        base,
        head,
        change: Some(change),
        annotation,
    })
}

/// What an operator wrote after a row's metric by hand (`   <-------- (a)`),
/// verbatim with its leading spaces: `Some(None)` when nothing follows,
/// `None` when what follows is no such mark (not a row, then).
pub(super) fn annotation(row: &str, metric: &str, next: Option<&str>) -> Option<Option<String>> {
    let Some(next) = next else {
        return Some(None);
    };
    if !next.starts_with("<-") && !next.starts_with("<=") {
        return None;
    }
    let end = row.rfind(metric)? + metric.len();
    Some(Some(row[end..].trim_end().to_string()))
}

/// `          1:4          -25%            :4     dmesg.WARNING:…`.
pub(super) fn failure_row(row: &str) -> Option<AggregatedRow> {
    let mut tokens = row.split_whitespace();
    let base = tokens.next()?;
    let change = tokens.next()?;
    let head = tokens.next()?;
    let metric = tokens.next()?;
    let annotation = annotation(row, metric, tokens.next())?;
    // The table prints the integer part of a sum of samples, blank for an
    // exact 0. A printed `0` is a sum between 0 and 1 (a fractional
    // perf-profile stat lkp files as a failure); it is read back as 0.5, a
    // value that prints the same.
    let count = |t: &str| -> Option<AggValue> {
        let (fails, runs) = t.split_once(':')?;
        let runs: u32 = runs.parse().ok()?;
        let fails = match fails {
            "" => 0.0,
            "0" => 0.5,
            n => n.parse::<u64>().ok()? as f64,
        };
        Some(AggValue::Failures { fails, runs })
    };
    Some(AggregatedRow {
        metric: metric.to_string(),
        base: count(base)?,
        head: count(head)?,
        change: Some(change.to_string()),
        annotation,
    })
}

/// `      347258 ~ 0%     -18.2%     284195 ~ 0%  TOTAL vm-scalability.migrate_mbps`;
/// a mean may be blank (`       ~ 1%      -3.6%            ~ 1%  TOTAL …`),
/// a spread missing, a change `+Inf%`.
pub(super) fn row_2014(row: &str) -> Option<AggregatedRow> {
    let (cells, metric) = row.rsplit_once("  TOTAL ")?;
    let cells = cells_2014(cells);
    let mut tokens = cells.iter().copied().peekable();
    let side =
        |tokens: &mut std::iter::Peekable<std::iter::Copied<std::slice::Iter<'_, &str>>>| -> Option<AggValue> {
            let mean = match tokens.peek() {
                Some(t) if t.starts_with('~') => None,
                _ => Some(mean_2014(tokens.next()?)?),
            };
            let spread = match tokens.peek() {
                Some(&"~") => {
                    tokens.next();
                    Some(tokens.next()?)
                }
                Some(t) if t.starts_with('~') => Some(&tokens.next()?[1..]),
                _ => None,
            };
            let spread = spread
                .map(|s| number(s.strip_suffix('%')?))
                .map_or(Some(None), |s| s.map(Some))?;
            Some(match (mean, spread) {
                (Some(m), None) => AggValue::Mean(m),
                // A blank mean is kept as NaN (`"mean": null`).
                (m, Some(s)) => AggValue::Full {
                    mean: m.unwrap_or(f64::NAN),
                    stddev_percent: Some(s),
                    runs: None,
                },
                (None, None) => return None,
            })
        };
    let base = side(&mut tokens)?;
    let change = tokens.next()?;
    let number_ok = change
        .strip_suffix('%')
        .is_some_and(|c| matches!(c, "+Inf" | "-Inf") || number(c).is_some());
    if !(number_ok && (change.starts_with('+') || change.starts_with('-'))) {
        return None;
    }
    let head = side(&mut tokens)?;
    if tokens.next().is_some() || metric.is_empty() || metric.contains(char::is_whitespace) {
        return None;
    }
    Some(AggregatedRow {
        metric: metric.to_string(),
        base,
        head,
        change: Some(change.to_string()),
        annotation: None,
    })
}

/// A mean of a 2014 row. The robot printed whole numbers bare and others
/// with two decimals, so `258.00` is a mean just off 258: it is read back as
/// 258.001, a value that prints the same (258 would print `258`).
fn mean_2014(s: &str) -> Option<f64> {
    let v = number(s)?;
    if s.contains('.') && v.fract() == 0.0 && v != 0.0 && v.abs() < 1000.0 {
        Some(v + 0.001f64.copysign(v))
    } else {
        Some(v)
    }
}

/// The cells of a 2014 row before `TOTAL`. The robot printed them in fixed
/// widths, so a value wider than its column runs into the one before it
/// (`-15.1%434800000000`): a cell ends at a `%` (a spread or a change), and a
/// change starts at a sign after a digit (no mean of 2014 has an exponent).
fn cells_2014(text: &str) -> Vec<&str> {
    let mut cells = Vec::new();
    for token in text.split_whitespace() {
        let mut start = 0;
        let b = token.as_bytes();
        for i in 1..b.len() {
            let after_percent = b[i - 1] == b'%';
            let sign_after_digit = matches!(b[i], b'+' | b'-') && b[i - 1].is_ascii_digit();
            if after_percent || sign_after_digit {
                cells.push(&token[start..i]);
                start = i;
            }
        }
        cells.push(&token[start..]);
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(mean: f64, pct: f64) -> AggValue {
        AggValue::Full {
            mean,
            stddev_percent: Some(pct),
            runs: None,
        }
    }
    fn fails(fails: f64, runs: u32) -> AggValue {
        AggValue::Failures { fails, runs }
    }
    fn row(metric: &str, base: AggValue, change: &str, head: AggValue) -> AggregatedRow {
        AggregatedRow {
            metric: metric.into(),
            base,
            head,
            change: Some(change.into()),
            annotation: None,
        }
    }

    /// Compares rows whose means may be NaN (a blank 2014 mean).
    fn same(a: &Option<AggregatedRow>, b: &Option<AggregatedRow>) -> bool {
        let json = |r: &Option<AggregatedRow>| serde_json::to_string(r).unwrap();
        json(a) == json(b)
    }

    #[test]
    fn perf_rows() {
        use AggValue::Mean;
        let cases: &[(&str, Option<AggregatedRow>)] = &[
            (
                "      0.01 ±  5%     +20.0%       0.01 ±  8%  perf-sched.x",
                Some(row(
                    "perf-sched.x",
                    full(0.01, 5.0),
                    "+20.0%",
                    full(0.01, 8.0),
                )),
            ),
            (
                " 3.348e+08            -3.3%  3.237e+08        perf-stat.i.branch-misses",
                Some(row(
                    "perf-stat.i.branch-misses",
                    Mean(3.348e8),
                    "-3.3%",
                    Mean(3.237e8),
                )),
            ),
            (
                "      0.17 ±141%      +0.4        0.61        perf-profile.x",
                Some(row("perf-profile.x", full(0.17, 141.0), "+0.4", Mean(0.61))),
            ),
            (
                "     27.58            +3.7%      28.59        turbostat.RAMWatt   <-------- (a)",
                Some(AggregatedRow {
                    annotation: Some("   <-------- (a)".into()),
                    ..row("turbostat.RAMWatt", Mean(27.58), "+3.7%", Mean(28.59))
                }),
            ),
            // No sign on the change, words after the metric, no metric.
            ("      0.01      20.0%       0.01  perf-sched.x", None),
            (
                "      0.01     +20.0%       0.01  perf-sched.x and more",
                None,
            ),
            ("      0.01     +20.0%       0.01", None),
        ];
        for (line, want) in cases {
            assert!(same(&perf_row(line), want), "{line}: {:?}", perf_row(line));
        }
    }

    #[test]
    fn failure_rows() {
        let cases: &[(&str, Option<AggregatedRow>)] = &[
            (
                "          1:4          -25%            :4     dmesg.WARNING:at",
                Some(row(
                    "dmesg.WARNING:at",
                    fails(1.0, 4),
                    "-25%",
                    fails(0.0, 4),
                )),
            ),
            // A printed 0 is a sum under 1.
            (
                "          0:4           -1%           2:4     perf-profile.x.error_entry",
                Some(row(
                    "perf-profile.x.error_entry",
                    fails(0.5, 4),
                    "-1%",
                    fails(2.0, 4),
                )),
            ),
            (
                "          1:x          -25%            :4     dmesg.x",
                None,
            ),
            ("          1:4          -25%", None),
        ];
        for (line, want) in cases {
            assert!(
                same(&failure_row(line), want),
                "{line}: {:?}",
                failure_row(line)
            );
        }
    }

    #[test]
    fn rows_of_2014() {
        use AggValue::Mean;
        let cases: &[(&str, Option<AggregatedRow>)] = &[
            (
                "      347258 ~ 0%     -18.2%     284195 ~ 0%  TOTAL vm-scalability.migrate_mbps",
                Some(row(
                    "vm-scalability.migrate_mbps",
                    full(347258.0, 0.0),
                    "-18.2%",
                    full(284195.0, 0.0),
                )),
            ),
            (
                "          61 ~32%    +363.8%        286 ~10%  TOTAL numa-vmstat.node0.x",
                Some(row(
                    "numa-vmstat.node0.x",
                    full(61.0, 32.0),
                    "+363.8%",
                    full(286.0, 10.0),
                )),
            ),
            (
                "        0.00           +Inf%       0.94 ~ 7%  TOTAL perf-profile.x",
                Some(row("perf-profile.x", Mean(0.0), "+Inf%", full(0.94, 7.0))),
            ),
            (
                "             ~ 1%      -3.6%            ~ 1%  TOTAL turbostat.Cor_W",
                Some(row(
                    "turbostat.Cor_W",
                    full(f64::NAN, 1.0),
                    "-3.6%",
                    full(f64::NAN, 1.0),
                )),
            ),
            // A whole number printed with decimals was not quite whole.
            (
                "      258.00         -100.0%       0.00       TOTAL a.b",
                Some(row("a.b", Mean(258.001), "-100.0%", Mean(0.0))),
            ),
            (
                "       -3.00 ~ 5%       +0.0%      -3.00 ~ 5%  TOTAL a.b",
                Some(row("a.b", full(-3.001, 5.0), "+0.0%", full(-3.001, 5.0))),
            ),
            // Values wider than their columns run into the one before.
            (
                "1647000000000          -34.5%1078000000000       TOTAL perf-stat.branch-instructions",
                Some(row(
                    "perf-stat.branch-instructions",
                    Mean(1647000000000.0),
                    "-34.5%",
                    Mean(1078000000000.0),
                )),
            ),
            (
                "         106 ~93%+12345678.9%   13087654 ~186%  TOTAL x.y",
                Some(row("x.y", full(106.0, 93.0), "+12345678.9%", full(13087654.0, 186.0))),
            ),
            (
                "123456789012+1234567.0% 1524157875019 ~ 2%  TOTAL x.y",
                Some(row(
                    "x.y",
                    Mean(123456789012.0),
                    "+1234567.0%",
                    full(1524157875019.0, 2.0),
                )),
            ),
            // No `TOTAL`, or no change.
            (
                "      347258 ~ 0%     -18.2%     284195 ~ 0%  vm-scalability.x",
                None,
            ),
            (
                "      347258 ~ 0%     284195 ~ 0%  TOTAL vm-scalability.x",
                None,
            ),
        ];
        for (line, want) in cases {
            assert!(same(&row_2014(line), want), "{line}: {:?}", row_2014(line));
        }
    }

    #[test]
    fn hand_marks_after_a_rows_metric() {
        let row = "     27.58            +3.7%      28.59        turbostat.RAMWatt   <-------- (a)";
        for (next, want) in [
            (None, Some(None)),
            (Some("<--------"), Some(Some("   <-------- (a)"))),
            (Some("<=== here"), Some(Some("   <-------- (a)"))),
            // Anything else after the metric: not a row.
            (Some("perf-stat.x"), None),
        ] {
            let got = annotation(row, "turbostat.RAMWatt", next);
            assert_eq!(got, want.map(|w| w.map(str::to_string)), "{next:?}");
        }
    }
}
