//! From a loaded input to a report: tables, headline, plots and the view model
//! the templates render.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::plot::{Plot, PlotStyle, YRange};
use super::settings::Setup;
use super::table::{sort_rows_with, Cells, Change, PerfCell, Row, Table};
use super::view::{sha10, CommitView, Finish, HeadlineView, ReportView, TestView};
use crate::compare::case_file::axis_text;
use crate::compare::headline::{analyse, forced, Analysis, Headline};
use crate::compare::rules::SelectionRules;
use crate::compare::{compare_columns, percent_change, Column, SelectOptions};
use crate::input::{LoadedInput, ReproduceAt, Test, TestData};
pub use crate::model::bisect::BisectSeries;
use crate::model::layout::Layout;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The comparison supports no report; the reasons are for the operator.
    #[error("no reportable regression or improvement in {file}:\n{}", reasons.join("\n"))]
    NothingToReport { file: String, reasons: Vec<String> },
    #[error(
        "{file}: $.headline.metric: {metric:?} is not among the changed metrics of the first test"
    )]
    UnknownHeadline { file: String, metric: String },
    #[error("{0}")]
    Template(String),
}

/// The rows of one test, sorted.
pub fn test_rows(rules: &SelectionRules, data: &TestData, hoist: bool) -> Vec<Row> {
    let aggregated = matches!(data, TestData::Aggregated(_));
    let mut rows = match data {
        TestData::Raw { base, head } => {
            let cols = [
                Column::new("base", base.clone()),
                Column::new("head", head.clone()),
            ];
            compare_columns(&cols, rules, &SelectOptions::default())
        }
        TestData::Aggregated(agg) => agg
            .iter()
            .map(|r| {
                if let (Some((bf, br)), Some((hf, hr))) = (r.base.failures(), r.head.failures()) {
                    // lkp: the reproduction rate's change, in points.
                    let computed = 100.0 * (hf / hr as f64 - bf / br as f64);
                    let change = r
                        .change
                        .as_deref()
                        .and_then(|c| c.trim_end_matches('%').parse::<f64>().ok())
                        .unwrap_or(computed);
                    return Row {
                        name: r.metric.clone(),
                        cells: Cells::Failure {
                            fails: vec![bf, hf],
                            runs: vec![br as usize, hr as usize],
                            changes: vec![change],
                        },
                    };
                }
                let absolute = rules.is_absolute_change(&r.metric);
                let (b, h) = (r.base.mean(), r.head.mean());
                // The printed change orders rows; rows it cannot tell apart keep
                // the input order (see `sort_rows_with`).
                let value = match r
                    .change
                    .as_deref()
                    .and_then(|c| c.trim_end_matches('%').parse::<f64>().ok())
                {
                    Some(p) => p,
                    None if absolute => h - b,
                    None => percent_change(b, h),
                };
                Row {
                    name: r.metric.clone(),
                    cells: Cells::Perf {
                        cells: vec![
                            PerfCell {
                                mean: b,
                                spread: printed_spread(r.base.stddev_percent()),
                            },
                            PerfCell {
                                mean: h,
                                spread: printed_spread(r.head.stddev_percent()),
                            },
                        ],
                        changes: vec![Change {
                            value,
                            absolute,
                            printed: r.change.clone(),
                            exact: None,
                        }],
                    },
                }
            })
            .collect(),
    };
    sort_rows_with(&mut rows, rules, hoist, !aggregated);
    rows
}

/// `rows` in the order of the pre-aggregated rows they came from.
fn in_given_order(rows: &mut [Row], given: &[crate::input::AggregatedRow]) {
    let pos: std::collections::HashMap<&str, usize> = given
        .iter()
        .enumerate()
        .map(|(n, r)| (r.metric.as_str(), n))
        .collect();
    rows.sort_by_key(|r| pos.get(r.name.as_str()).copied());
}

/// The rows the tests print after the signature, one per line, in the order
/// given.
fn appendix(setup: &Setup, tests: &[Test], modern: bool) -> Option<String> {
    let mut out = String::new();
    for t in tests.iter().filter(|t| !t.appendix.is_empty()) {
        let mut rows = test_rows(
            setup.selection,
            &TestData::Aggregated(t.appendix.clone()),
            !modern,
        );
        in_given_order(&mut rows, &t.appendix);
        for r in rows {
            out.push_str(&r.render());
            out.push('\n');
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Pre-aggregated spreads are mostly transcribed from printed tables, where
/// `± 2%` stands for a value in (2, 3): any value of 2 or more is shown (as its
/// integer part), smaller ones are not.
fn printed_spread(sd: Option<f64>) -> f64 {
    match sd {
        Some(v) if v >= 2.0 => v.trunc() + 0.5,
        Some(v) => v,
        None => -1.0,
    }
}

/// A built report, before it becomes an e-mail.
#[derive(Debug, Clone)]
pub struct Report {
    pub case_key: String,
    pub view: ReportView,
    pub analysis: Analysis,
    pub headline: Headline,
    /// Bisect samples per plotted metric (for the dashboard's SVG plots).
    pub bisect: Vec<BisectSeries>,
}

/// `xfs` from `xfs: don't retry …`; `None` when the subject has no prefix.
pub fn subsystem(subject: &str) -> Option<String> {
    let s = subject
        .strip_prefix('[')
        .and_then(|r| r.split_once(']').map(|(_, rest)| rest.trim_start()))
        .unwrap_or(subject);
    let (prefix, _) = s.split_once(':')?;
    let prefix = prefix.trim();
    (!prefix.is_empty() && prefix.len() <= 40 && !prefix.contains(char::is_whitespace))
        .then(|| prefix.to_string())
}

/// The job's axes as the table's params line shows them: parameters plus the
/// result-root axes, sorted by name.
fn axes(t: &Test) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = t
        .params
        .iter()
        .map(|(k, v)| (k.clone(), axis_text(v)))
        .collect();
    for (k, val) in [
        ("compiler", t.compiler.as_ref()),
        ("kconfig", t.kconfig.as_ref()),
        ("rootfs", t.rootfs.as_ref()),
        ("tbox_group", Some(&t.tbox_group)),
        ("testcase", Some(&t.testcase)),
    ] {
        let Some(val) = val else { continue };
        if !v.iter().any(|(x, _)| x == k) {
            v.push((k.to_string(), val.clone()));
        }
    }
    crate::compare::case_file::sort_axes(&mut v);
    v
}

/// The "In addition" box: per test its change, machine (a row only where
/// the test names one) and parameters; as wide as its widest cell, or
/// `at_least` characters in all where the robot padded it wider.
pub fn in_addition_table(
    blocks: &[(String, Option<String>, Vec<String>)],
    at_least: Option<usize>,
) -> String {
    let left = 16;
    // `| ` + 16 + ` | ` + cell + ` |`.
    let frame = left + 7;
    let width = blocks
        .iter()
        .flat_map(|(c, m, p)| std::iter::once(c).chain(m).chain(p.iter()))
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0)
        .max(at_least.map_or(0, |w| w.saturating_sub(frame)));
    let rule = format!("+{}+{}+\n", "-".repeat(left + 2), "-".repeat(width + 2));
    let line = |l: &str, r: &str| format!("| {l:<left$} | {r:<width$} |\n");
    let mut out = rule.clone();
    for (i, (change, machine, params)) in blocks.iter().enumerate() {
        if i > 0 {
            out.push_str(&rule);
        }
        out.push_str(&line("testcase: change", change));
        if let Some(machine) = machine {
            out.push_str(&line("test machine", machine));
        }
        for (j, p) in params.iter().enumerate() {
            out.push_str(&line(if j == 0 { "test parameters" } else { "" }, p));
        }
    }
    out.push_str(&rule);
    out
}

fn bisect_series(t: &Test, metric: &str) -> Option<(Vec<f64>, Vec<f64>)> {
    let b = t.bisect.as_ref()?;
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    for p in &b.points {
        let Some(v) = p.values.get(metric) else {
            continue;
        };
        let vals: Vec<f64> = match v {
            Value::Array(a) => a.iter().filter_map(Value::as_f64).collect(),
            other => other.as_f64().into_iter().collect(),
        };
        match p.verdict {
            crate::input::BisectVerdict::Good => good.extend(vals),
            crate::input::BisectVerdict::Bad => bad.extend(vals),
        }
    }
    (!good.is_empty() || !bad.is_empty()).then_some((good, bad))
}

fn plots_for(t: &Test, headline: Option<&str>, style: PlotStyle) -> String {
    let Some(b) = &t.bisect else {
        return String::new();
    };
    // The headline first, unless the list places it.
    let mut metrics: Vec<&str> = headline
        .filter(|h| !b.plot.iter().any(|m| m == h))
        .into_iter()
        .collect();
    for m in &b.plot {
        if !metrics.contains(&m.as_str()) {
            metrics.push(m);
        }
    }
    let mut out = String::new();
    for m in metrics {
        if let Some((good, bad)) = bisect_series(t, m) {
            let title = b
                .titles
                .get(m)
                .cloned()
                .unwrap_or_else(|| super::plot::title_of(m));
            // Plots follow one another without a newline (gnuplot's
            // `nofeed`): one's last row and the next's first share a line.
            out.push_str(
                &Plot {
                    title: &title,
                    good: &good,
                    bad: &bad,
                    style,
                    range: b.ranges.get(m).map(|r| YRange {
                        low: r[0],
                        high: r[1],
                        step: r.get(2).copied(),
                    }),
                }
                .text(),
            );
        }
    }
    if !out.is_empty() {
        out.push('\n');
        out.push_str(style.legend());
    }
    out
}

/// What the robot of 2014 printed under its table.
const TABLE_LEGEND_2014: &str = "Legend:\n\t~XX%    - stddev percent\n\t[+-]XX% - change percent\n";

/// A stable key for "the same reported change": tree or patch, commit, test and
/// parameters, machine, headline metric.
pub fn case_key(input: &LoadedInput, headline: &str) -> String {
    let i = &input.input;
    let t = &i.tests[0];
    let mut h = Sha256::new();
    let origin = match (&i.tree, &i.patch) {
        (Some(tr), _) => format!("tree {} {}", tr.url, tr.branch),
        (_, Some(p)) => format!("patch {}", p.message_id),
        _ => String::new(),
    };
    for part in [
        origin,
        i.commit.sha.to_ascii_lowercase(),
        t.testcase.clone(),
        t.tbox_group.clone(),
        headline.to_string(),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for (k, v) in axes(t) {
        h.update(k.as_bytes());
        h.update(b"=");
        h.update(v.as_bytes());
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The headline of the first test: the analysis's, or the one the input
/// names (forced, or checked to be reportable); it must be of a kind
/// `report.kinds` reports.
fn choose_headline(
    setup: &Setup,
    input: &LoadedInput,
    rows: &[Row],
    force: bool,
) -> Result<(Analysis, Headline), ReportError> {
    let r = setup.report;
    let file = input.path.display().to_string();
    let analysis = analyse(rows, setup.directions, r.min_change_percent);
    let chosen = match (&input.input.headline, force) {
        (Some(choice), true) => Some(forced(rows, setup.directions, &choice.metric).ok_or_else(
            || ReportError::UnknownHeadline {
                file: file.clone(),
                metric: choice.metric.clone(),
            },
        )?),
        (Some(choice), false) => {
            // A named headline must itself be reportable.
            let named: Vec<Row> = rows
                .iter()
                .filter(|row| row.name == choice.metric)
                .cloned()
                .collect();
            analyse(&named, setup.directions, r.min_change_percent).headline
        }
        (None, _) => analysis.headline.clone(),
    };
    match chosen {
        Some(h) if force || r.kinds.iter().any(|k| k.word() == h.verdict.word()) => {
            Ok((analysis, h))
        }
        Some(h) => Err(ReportError::NothingToReport {
            file,
            reasons: vec![format!(
                "{} is a {}; report.kinds = {:?}",
                h.metric,
                h.verdict.word(),
                r.kinds.iter().map(|k| k.word()).collect::<Vec<_>>()
            )],
        }),
        None => {
            let mut reasons = analysis.not_reportable.clone();
            if reasons.is_empty() {
                reasons.push(
                    "no metric with a known direction changed (see bot/rules/direction.toml)"
                        .into(),
                );
            }
            reasons.push(
                "use --force with \"headline\": {\"metric\": …} in the input to report anyway"
                    .into(),
            );
            Err(ReportError::NothingToReport { file, reasons })
        }
    }
}

/// The body below the headline: each test's table (the first, then the
/// others under a `***` separator) with its plots; the "In addition to that"
/// lines of the other tests; the bisect samples for the dashboard.
#[derive(Default)]
struct Details {
    text: String,
    in_addition: Vec<(String, Option<String>, Vec<String>)>,
    bisect: Vec<BisectSeries>,
}

/// The table's two commit lines, base first: the abbreviated sha and the
/// subject (the base's may have none). The robot's tables named a patch by
/// its subject without the `[PATCH v3 4/4] ` prefix until 2026.
fn commit_lines(i: &crate::input::ReportInput, layout: Layout) -> Vec<String> {
    let subject = |s: &str| -> String {
        match s.strip_prefix('[').and_then(|r| r.split_once("] ")) {
            Some((_, rest)) if layout.drops_patch_prefix() => rest.to_string(),
            _ => s.to_string(),
        }
    };
    let base = if i.base.subject.is_empty() {
        sha10(&i.base.sha)
    } else {
        format!("{} (\"{}\")", sha10(&i.base.sha), subject(&i.base.subject))
    };
    vec![
        base,
        format!(
            "{} (\"{}\")",
            sha10(&i.commit.sha),
            subject(&i.commit.subject)
        ),
    ]
}

/// The headline of a test after the first: the metric its "In addition"
/// line names (none for a line without a change), else its own biggest
/// change.
fn other_headline(setup: &Setup, t: &Test, rows: &[Row]) -> Option<Headline> {
    match &t.headline {
        Some(m) => (!m.metric.is_empty())
            .then(|| forced(rows, setup.directions, &m.metric))
            .flatten(),
        None => analyse(rows, setup.directions, setup.report.min_change_percent).headline,
    }
}

impl Details {
    fn build(
        setup: &Setup,
        input: &LoadedInput,
        all_rows: &[Vec<Row>],
        headline: &Headline,
        layout: Layout,
    ) -> Details {
        let i = &input.input;
        let commit_lines = commit_lines(i, layout);
        let mut d = Details::default();
        for (n, (t, rows)) in i.tests.iter().zip(all_rows).enumerate() {
            let test_headline = if n == 0 {
                Some(headline.clone())
            } else {
                other_headline(setup, t, rows)
            };
            if n > 0 {
                d.separator(t, test_headline.as_ref(), layout, i.date.as_deref());
            }
            let table = Table {
                params: axes(t),
                axis: "commit".into(),
                commit_lines: commit_lines.clone(),
                column_ids: vec![i.base.sha.clone(), i.commit.sha.clone()],
                rows: rows.clone(),
            };
            if layout.has_2014_table() {
                d.text.push_str(&table.render_2014());
                d.text.push('\n');
                d.text.push_str(TABLE_LEGEND_2014);
            } else {
                d.text.push_str(&table.render());
            }
            // The robot ends the tables of the other tests with a blank line.
            if n > 0 && layout.is_robot() {
                d.text.push('\n');
            }
            d.add_bisect(t, test_headline.as_ref());
            let plots = plots_for(
                t,
                test_headline.as_ref().map(|h| h.metric.as_str()),
                i.style.plot_style.unwrap_or(layout.plot_style()),
            );
            if !plots.is_empty() {
                d.text.push('\n');
                d.text.push_str(&plots);
            }
        }
        d
    }

    /// The `***` line and machine of another test; its "In addition" line.
    fn separator(
        &mut self,
        t: &Test,
        headline: Option<&Headline>,
        layout: Layout,
        date: Option<&str>,
    ) {
        self.text.push('\n');
        self.text.push_str(&"*".repeat(99));
        self.text.push('\n');
        // The robot of 2026 leaves the line blank for a test without a machine.
        if let Some(m) = &t.machine {
            self.text.push_str(&format!("{}: {m}", t.tbox_group));
        }
        self.text.push('\n');
        let mut params: Vec<String> = t
            .params
            .iter()
            .map(|(k, v)| format!("{k}={}", axis_text(v)))
            .collect();
        params.sort();
        // A test whose headline is named empty is boxed by its testcase
        // alone (`| testcase: change | stress-ng: |`, as the robot did at
        // times); one with no headline at all is left out of the box.
        let Some(h) = headline else {
            if t.headline.as_ref().is_some_and(|c| c.metric.is_empty()) {
                self.in_addition
                    .push((format!("{}:", t.testcase), t.machine.clone(), params));
            }
            return;
        };
        let hv = HeadlineView::new(h, t.headline.as_ref().and_then(|c| c.kind.as_deref()));
        let change = layout.box_change(date).write(
            &hv.change_signed,
            &hv.change_classic,
            &hv.change_magnitude,
        );
        self.in_addition.push((
            format!("{}: {} {} {}", t.testcase, h.metric, change, hv.verdict),
            t.machine.clone(),
            params,
        ));
    }

    /// The bisect samples of the headline and the plotted metrics, once each.
    fn add_bisect(&mut self, t: &Test, headline: Option<&Headline>) {
        let Some(b) = &t.bisect else {
            return;
        };
        let mut metrics: Vec<&str> = headline.iter().map(|h| h.metric.as_str()).collect();
        metrics.extend(b.plot.iter().map(String::as_str));
        for m in metrics {
            if self.bisect.iter().any(|s| s.metric == m) {
                continue;
            }
            if let Some((good, bad)) = bisect_series(t, m) {
                self.bisect.push(BisectSeries {
                    metric: m.to_string(),
                    good,
                    bad,
                });
            }
        }
    }
}

/// `[still regression on <ref> <sha>]` lines, the refs padded to one width:
/// aligned left as the robot's layouts do (unless the input says otherwise),
/// right in perfbot's own.
fn still_regression_lines(i: &crate::input::ReportInput, layout: Layout) -> Vec<String> {
    let left = match i.style.still_regression_align {
        Some(a) => a == crate::input::Align::Left,
        None => layout.is_robot(),
    };
    let w = i
        .still_regression_on
        .iter()
        .map(|s| s.reference.chars().count())
        .max()
        .unwrap_or(0);
    i.still_regression_on
        .iter()
        .map(|s| {
            let what = if s.failed {
                "test failed on"
            } else {
                "still regression on"
            };
            if left {
                format!("[{what} {:<w$} {}]", s.reference, s.sha)
            } else {
                format!("[{what} {:>w$} {}]", s.reference, s.sha)
            }
        })
        .collect()
}

/// Each test's table rows; aggregated rows stay in the order given when the
/// test says so.
fn rows_of_tests(setup: &Setup, input: &LoadedInput, modern: bool) -> Vec<Vec<Row>> {
    input
        .data
        .iter()
        .zip(&input.input.tests)
        .map(|(d, t)| {
            let mut rows = test_rows(setup.selection, d, !modern);
            if t.keep_order {
                if let (Some(agg), TestData::Aggregated(_)) = (&t.aggregated, d) {
                    in_given_order(&mut rows, agg);
                }
            }
            rows
        })
        .collect()
}

/// "In addition to that…": the other tests' changes found in the details,
/// then those the input gives without data; none when there are none.
fn in_addition(
    mut blocks: Vec<(String, Option<String>, Vec<String>)>,
    i: &crate::input::ReportInput,
) -> Option<String> {
    blocks.extend(i.in_addition_only.iter().map(|o| {
        (
            format!("{}: {} {} {}", o.testcase, o.metric, o.change, o.kind),
            o.machine.clone(),
            o.params.clone(),
        )
    }));
    (!blocks.is_empty()).then(|| in_addition_table(&blocks, i.style.in_addition_width))
}

/// Build the report of `input` with template `template` (for its row order).
pub fn build(
    setup: &Setup,
    input: &LoadedInput,
    template: &str,
    force: bool,
) -> Result<Report, ReportError> {
    // A template of the operator's own is written as perfbot's classic.
    let layout = Layout::of_template(template).unwrap_or(Layout::Classic);
    let mut all_rows = rows_of_tests(setup, input, layout.is_modern());
    let (analysis, headline) = choose_headline(setup, input, &all_rows[0], force)?;
    if setup.report.headline_first {
        put_first(&mut all_rows[0], &headline.metric);
    }
    let key = case_key(input, &headline.metric);
    let message_id = format!("perfbot.{}@{}", &key[..16], setup.bot.message_id_domain);
    let details = Details::build(setup, input, &all_rows, &headline, layout);
    let in_addition = in_addition(details.in_addition, &input.input);
    let view = view(
        setup,
        input,
        layout,
        &headline,
        details.text,
        in_addition,
        message_id,
    );
    Ok(Report {
        case_key: key,
        view,
        analysis,
        headline,
        bisect: details.bisect,
    })
}

/// `rows` with `metric`'s row moved to the top, where it has one.
fn put_first(rows: &mut Vec<Row>, metric: &str) {
    if let Some(pos) = rows.iter().position(|row| row.name == metric) {
        let row = rows.remove(pos);
        rows.insert(0, row);
    }
}

/// The view the templates render: the built tables (`details`,
/// `in_addition`) and the headline, with the input's commits, test and
/// style and the configuration's robot and sign-off.
fn view(
    setup: &Setup,
    input: &LoadedInput,
    layout: Layout,
    headline: &Headline,
    details: String,
    in_addition: Option<String>,
    message_id: String,
) -> ReportView {
    let i = &input.input;
    let r = setup.report;
    let headline = HeadlineView::new(
        headline,
        i.headline.as_ref().and_then(|h| h.kind.as_deref()),
    );
    let archive = r.archive_url.trim_end_matches('/');
    let reproduce = !r.reproduce.is_empty();
    ReportView {
        robot_name: setup.bot.name.clone(),
        robot_email: setup.bot.email.clone(),
        reported_by: setup.bot.reported_by(),
        ask_tags: i.style.tags && headline.is_regression,
        details_rule: i.style.details_rule,
        reproduce_first: reproduce && i.style.reproduce_at == ReproduceAt::Details,
        reproduce_last: reproduce
            && i.style.reproduce_at == ReproduceAt::End
            && r.materials_url.is_empty(),
        preface: i.preface.clone(),
        note: i.note.clone(),
        attachments: i.attachments.iter().map(|a| a.name().to_string()).collect(),
        finish: finish(setup, i, layout.is_modern()),
        headline,
        commit: CommitView::new(&i.commit),
        commit_sha10: sha10(&i.commit.sha),
        commit_sha11: i.commit.sha.chars().take(11).collect(),
        addressee: i
            .commit
            .author
            .as_ref()
            .and_then(|a| Some(a.name.split_whitespace().next()?.to_string())),
        base: CommitView::new(&i.base),
        tree: i.tree.clone(),
        patch: i.patch.clone(),
        subsystem: subsystem(&i.commit.subject),
        still_regression_on: still_regression_lines(i, layout),
        test: TestView::new(&i.tests[0]),
        in_addition,
        details,
        closes_url: format!("{archive}/{message_id}"),
        archive_tag: i.style.archive_tag,
        materials_url: (!r.materials_url.is_empty())
            .then(|| format!("{}/{}", r.materials_url.trim_end_matches('/'), message_id)),
        message_id,
        disclaimer: r.disclaimer.clone(),
        signoff: r.signoff.clone(),
        signature: r.signature.clone(),
        reproduce: r.reproduce.clone(),
    }
}

/// What the renderer applies around the template's text, from the input.
fn finish(setup: &Setup, i: &crate::input::ReportInput, modern: bool) -> Finish {
    Finish {
        spacing: i.style.spacing.clone(),
        remarks: i.style.remarks.clone(),
        row_notes: i
            .tests
            .iter()
            .filter_map(|t| t.aggregated.as_ref())
            .flatten()
            .filter_map(|r| Some((r.metric.clone(), r.annotation.clone()?)))
            .collect(),
        trailer: i.trailer.clone(),
        appendix: appendix(setup, &i.tests, modern),
        subject_template: i.style.subject_template.clone(),
    }
}
