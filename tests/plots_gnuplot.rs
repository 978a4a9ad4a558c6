//! perfbot's bisect plots against gnuplot itself: the same samples, given to
//! gnuplot 5.4 with the commands lkp's `mmplot` sends, must come out cell for
//! cell the same as `PlotStyle::Gnuplot54` draws them. CI installs Debian's
//! `gnuplot-nox`; without a gnuplot on the PATH the test says so and fails
//! unless `PERFBOT_SKIP_GNUPLOT=1` allows skipping it.

use perfbot::report::plot::{read, Plot, PlotStyle, YRange};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use std::io::Write;
use std::process::{Command, Stdio};

fn gnuplot_available() -> bool {
    match Command::new("gnuplot").arg("--version").output() {
        Ok(o) if o.status.success() => true,
        _ => {
            if std::env::var("PERFBOT_SKIP_GNUPLOT").as_deref() == Ok("1") {
                eprintln!("gnuplot not found: skipped (PERFBOT_SKIP_GNUPLOT=1)");
                false
            } else {
                panic!("gnuplot not found: install gnuplot-nox, or set PERFBOT_SKIP_GNUPLOT=1");
            }
        }
    }
}

/// What lkp's `mmplot` sends gnuplot (through the Ruby gnuplot gem).
fn gnuplot_rows(title: &str, good: &[f64], bad: &[f64]) -> Vec<String> {
    gnuplot_rows_in(title, good, bad, None)
}

/// The same on a y range given (`set yrange [low:high]`).
fn gnuplot_rows_in(
    title: &str,
    good: &[f64],
    bad: &[f64],
    range: Option<(f64, f64)>,
) -> Vec<String> {
    let mut script = String::new();
    script.push_str("set terminal dumb nofeed size 80,20\nset notitle\n");
    script.push_str(&format!(
        "set title \"{title}\"\nset noxtics\nset ytics nomirror\n"
    ));
    if let Some((low, high)) = range {
        script.push_str(&format!("set yrange [{low:?}:{high:?}]\n"));
    }
    let mut plots = Vec::new();
    if !bad.is_empty() {
        plots.push("'-' with points pt 15 lt 0 notitle");
    }
    if !good.is_empty() {
        plots.push("'-' with linespoints pt -22 lt 0 notitle");
    }
    script.push_str(&format!("plot {}\n", plots.join(", ")));
    for series in [bad, good] {
        if series.is_empty() {
            continue;
        }
        for (i, v) in series.iter().enumerate() {
            // Ruby's Float#to_s: the shortest text that reads back the same.
            script.push_str(&format!("{} {v:?}\n", i + 1));
        }
        script.push_str("e\n");
    }
    let mut child = Command::new("gnuplot")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run gnuplot");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().expect("gnuplot output");
    assert!(out.status.success(), "gnuplot failed on:\n{script}");
    let text = String::from_utf8(out.stdout).unwrap();
    let text = text.strip_prefix('\u{c}').unwrap_or(&text);
    text.split('\n').map(str::to_string).collect()
}

fn series() -> impl Strategy<Value = (Vec<f64>, Vec<f64>)> {
    // A level and a spread, then samples around the level: flat runs, steps,
    // and noise, from a few samples to more than there are columns.
    (
        prop_oneof![
            Just(1.0),
            Just(250.0),
            Just(17_000.0),
            Just(1.6e8),
            Just(0.25)
        ],
        prop_oneof![Just(0.0), Just(0.05), Just(0.1), Just(0.5)],
        1usize..90,
        0usize..40,
        any::<u64>(),
    )
        .prop_map(|(level, spread, ng, nb, seed)| {
            let mut s = seed | 1;
            let mut next = move || {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s % 10_000) as f64 / 10_000.0
            };
            let good: Vec<f64> = (0..ng)
                .map(|_| level * (1.0 + spread * (next() - 0.5)))
                .collect();
            let shift = 1.0 - spread * 2.0 * next();
            let bad: Vec<f64> = (0..nb)
                .map(|_| level * shift * (1.0 + spread * (next() - 0.5)))
                .collect();
            (good, bad)
        })
}

#[test]
fn plots_match_gnuplot_cell_for_cell() {
    if !gnuplot_available() {
        return;
    }
    let mut runner = TestRunner::new(Config {
        cases: 200,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&series(), |(good, bad)| {
            let title = "fio.write_bw_MBps";
            let ours = Plot {
                title,
                good: &good,
                bad: &bad,
                style: PlotStyle::Gnuplot54,
                range: None,
            }
            .rows();
            let theirs = gnuplot_rows(title, &good, &bad);
            if ours != theirs {
                let mut diff = String::new();
                for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
                    let mark = if a == b { ' ' } else { '!' };
                    diff.push_str(&format!(
                        "{mark}{k:2} ours   |{a}|\n{mark}{k:2} gnuplot|{b}|\n"
                    ));
                }
                eprintln!(
                    "{} rows against {}\n{diff}good {:?}\nbad {:?}",
                    ours.len(),
                    theirs.len(),
                    good,
                    bad
                );
                prop_assert!(false, "the plot differs from gnuplot's (above)");
            }
            Ok(())
        })
        .unwrap();
}

/// gnuplot's own plots of random samples read back: every plot the reader
/// calls exact must draw again cell for cell, and at least 50 of these 60
/// must be exact (53 today). Random noise is harder than the robot's plots:
/// lines cross and hide samples under one another, and the one-sample-at-a-
/// time search can stop a few cells short.
#[test]
fn gnuplots_own_plots_read_back_exactly() {
    if !gnuplot_available() {
        return;
    }
    let mut runner = TestRunner::deterministic();
    let (mut exact, mut total) = (0, 0);
    for _ in 0..60 {
        let (good, bad) = series().new_tree(&mut runner).unwrap().current();
        if good.len() + bad.len() < 2 {
            continue;
        }
        let theirs = gnuplot_rows("m", &good, &bad);
        let rows: Vec<&str> = theirs.iter().map(String::as_str).collect();
        let back = read(&rows, PlotStyle::Gnuplot54).unwrap();
        total += 1;
        if back.exact {
            exact += 1;
            let again = Plot {
                title: "m",
                good: &back.good,
                bad: &back.bad,
                style: PlotStyle::Gnuplot54,
                range: back.range,
            }
            .rows();
            assert_eq!(again, theirs);
        } else {
            eprintln!("not exact: good {good:?} bad {bad:?}");
        }
    }
    eprintln!("{exact} of {total} read back exactly");
    assert!(exact >= 50, "{exact} of {total} read back exactly");
}

/// A y range given that leaves samples out (a plot read back keeps the
/// range it showed; an input may give any): gnuplot draws no point outside
/// it, stops a line at the frame where it leaves (`set clip one`) and draws
/// no line between two samples outside. perfbot must draw the same, cell for
/// cell, and never below or above the frame.
#[test]
fn samples_outside_a_range_given_are_clipped_as_gnuplot_clips_them() {
    if !gnuplot_available() {
        return;
    }
    let mut runner = TestRunner::new(Config {
        cases: 600,
        failure_persistence: None,
        ..Config::default()
    });
    // The range cuts a band out of the samples' spread: a part of them
    // falls below it, a part above.
    let cases = (series(), 0.05f64..0.45, 0.55f64..0.95);
    runner
        .run(&cases, |((good, bad), lo, hi)| {
            let all: Vec<f64> = good.iter().chain(&bad).copied().collect();
            let (min, max) = all
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                    (a.min(v), b.max(v))
                });
            if max.partial_cmp(&min) != Some(std::cmp::Ordering::Greater) {
                return Ok(());
            }
            let (low, high) = (min + (max - min) * lo, min + (max - min) * hi);
            let ours = Plot {
                title: "m",
                good: &good,
                bad: &bad,
                style: PlotStyle::Gnuplot54,
                range: Some(YRange {
                    low,
                    high,
                    step: None,
                }),
            }
            .rows();
            let theirs = gnuplot_rows_in("m", &good, &bad, Some((low, high)));
            prop_assert_eq!(
                &ours,
                &theirs,
                "good {:?} bad {:?} range {} {}",
                good,
                bad,
                low,
                high
            );
            Ok(())
        })
        .unwrap();
}
