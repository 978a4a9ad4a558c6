//! The bisect plots under a table, read back into samples: gnuplot's 80×20
//! ASCII plots (three styles over the years) and the 79-column ones of 2014.

use super::super::plot::{self, PlotStyle, ReadPlot};
use super::RULE;
use crate::input::{AggregatedRow, Bisect, BisectPoint, BisectVerdict};
use serde_json::{json, Map};

/// The 2014 plots after the table that ends at line `from`: below the
/// table's legend, 20 rows each (gnuplot's `nofeed` shares a line between
/// one plot's last row and the next one's first), up to the plots' legend.
pub(super) fn plots_2014(lines: &[&str], from: usize) -> (Vec<ReadPlot>, Option<PlotStyle>) {
    let style = PlotStyle::Lkp2014;
    let Some(table_legend) = (from..lines.len()).find(|&i| lines[i].starts_with("\t[+-]XX%"))
    else {
        return (Vec::new(), None);
    };
    let Some(legend) =
        (table_legend..lines.len()).find(|&i| lines[i].trim() == "[*] bisect-good sample")
    else {
        return (Vec::new(), None);
    };
    // A blank line, then the first plot's rows.
    let region = &lines[(table_legend + 2).min(legend)..legend];
    if region.len() < 20 || !(region.len() - 1).is_multiple_of(19) {
        return (Vec::new(), None);
    }
    let plots: Vec<&[&str]> = (0..(region.len() - 1) / 19)
        .map(|k| &region[19 * k..19 * k + 20])
        .collect();
    let read = read_plots(&plots, style);
    let style = (!read.is_empty()).then_some(style);
    (read, style)
}

/// The plots of one bisection, read; a plot that does not come back exact
/// is read again trying the sample counts of those that do (they mostly
/// share theirs).
fn read_plots(plots: &[&[&str]], style: PlotStyle) -> Vec<ReadPlot> {
    let mut read: Vec<Option<ReadPlot>> = plots.iter().map(|p| plot::read(p, style).ok()).collect();
    let counts: Vec<usize> = read
        .iter()
        .flatten()
        .filter(|r| r.exact)
        .map(|r| r.good.len().max(r.bad.len()))
        .collect();
    for (p, r) in plots.iter().zip(read.iter_mut()) {
        if r.as_ref().is_some_and(|r| !r.exact) && !counts.is_empty() {
            if let Ok(again) = plot::read_with(p, style, &counts) {
                if again.exact {
                    *r = Some(again);
                }
            }
        }
    }
    read.into_iter().flatten().collect()
}

/// The bisect plots that follow a table (from its ending line `from`) up to
/// their legend, read back into samples; none when there are none or they
/// are not gnuplot's 80×20 plots.
pub(super) fn plots_after(lines: &[&str], from: usize) -> (Vec<ReadPlot>, Option<PlotStyle>) {
    let Some(start) = (from..lines.len()).find(|&i| !lines[i].is_empty()) else {
        return (Vec::new(), None);
    };
    let legend = (start..lines.len())
        .take_while(|&i| lines[i] != RULE && !lines[i].starts_with("*****"))
        .find(|&i| lines[i].trim() == "[*] bisect-good sample");
    let Some(legend) = legend else {
        return (Vec::new(), None);
    };
    // gnuplot's `nofeed`: a plot's last row and the next one's first share
    // a line of 160 characters.
    let mut rows: Vec<&str> = Vec::new();
    for l in &lines[start..legend] {
        if !l.is_empty() && l.len().is_multiple_of(80) && l.is_ascii() {
            rows.extend((0..l.len() / 80).map(|k| &l[k * 80..(k + 1) * 80]));
        } else {
            rows.push(l);
        }
    }
    if rows.is_empty() || !rows.len().is_multiple_of(20) {
        return (Vec::new(), None);
    }
    let plots: Vec<&[&str]> = rows.chunks(20).collect();
    let style = if plots
        .iter()
        .any(|p| p[1].trim().is_empty() && !p[2].trim().is_empty())
    {
        PlotStyle::Gnuplot54
    } else if plots.iter().any(|p| {
        // Tics in front of the frame: `+-+` on the frame's left side.
        let left = p[3].find(" +").map_or(0, |p| p + 1);
        p[4..17]
            .iter()
            .any(|r| r.get(left..left + 3) == Some("+-+"))
    }) {
        PlotStyle::Lkp2019
    } else {
        PlotStyle::Lkp2020
    };
    let read = read_plots(&plots, style);
    let style = (!read.is_empty()).then_some(style);
    (read, style)
}

/// A group's plots as bisect samples: one good and one bad point holding
/// every plotted metric's samples, the plots in the mail's order. A title is
/// the metric with `%` and the like made `_`; the table's metric of that
/// title is named when there is one.
pub(super) fn bisect_of(rows: &[AggregatedRow], plots: &[ReadPlot]) -> Bisect {
    let metric_of = |title: &str| -> String {
        rows.iter()
            .map(|r| r.metric.as_str())
            .find(|m| plot::title_of(m) == title)
            .unwrap_or(title)
            .to_string()
    };
    let (mut good, mut bad) = (Map::new(), Map::new());
    let mut b = Bisect {
        points: Vec::new(),
        plot: Vec::new(),
        ranges: Default::default(),
        titles: Default::default(),
    };
    for p in plots {
        // A plot drawn without a title names no metric: each is kept under
        // a name of its own, or a run of them would be read as one plot.
        let m = if p.title.trim().is_empty() {
            let m = format!("untitled-plot-{}", b.titles.len() + 1);
            b.titles.insert(m.clone(), String::new());
            m
        } else {
            metric_of(&p.title)
        };
        if !p.good.is_empty() {
            good.insert(m.clone(), json!(p.good));
        }
        if !p.bad.is_empty() {
            bad.insert(m.clone(), json!(p.bad));
        }
        if let Some(r) = p.range {
            let mut v = vec![r.low, r.high];
            v.extend(r.step);
            b.ranges.insert(m.clone(), v);
        }
        b.plot.push(m);
    }
    for (verdict, values) in [(BisectVerdict::Good, good), (BisectVerdict::Bad, bad)] {
        if !values.is_empty() {
            b.points.push(BisectPoint {
                commit: None,
                verdict,
                values,
            });
        }
    }
    b
}
