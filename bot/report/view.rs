//! The view model the report templates render: the headline, the tested
//! commit, the test and everything else a template may name, as plain typed
//! values. Built by `build`; nothing here computes a table or a headline.

use serde::Serialize;

use super::table::Change;
use crate::compare::case_file::axis_text;
use crate::compare::headline::{Headline, Verdict};
use crate::input::{Patch, Person, Test, Tree};

/// Text of a change for prose: `-9.0%`, `+7.1%` (points of a `%` metric), `+0.4`.
fn change_number(c: &Change) -> String {
    // As the table prints it (`%+.1f`, `%+.2g` past 1e5): never a 100-digit figure.
    c.number_text()
}

fn with_unit(num: String, metric: &str, c: &Change) -> String {
    if c.absolute && !metric.ends_with('%') {
        num
    } else {
        format!("{num}%")
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct HeadlineView {
    pub metric: String,
    /// `regression`, `improvement`, or the forced word.
    pub verdict: String,
    pub is_regression: bool,
    /// `-9.0%`, `+7.1%`
    pub change_signed: String,
    /// `9.0%`: the magnitude (2025+ subjects).
    pub change_magnitude: String,
    /// Regressions signed, improvements as computed (`91.4%`, `-20.0%`).
    pub change_classic: String,
    /// The signed change without a `+` (`-20.0%`, `17.5%`): the robot's
    /// 2023-2024 sentences.
    pub change_robot: String,
    /// The change's bootstrap interval, where raw samples give one (`95%
    /// interval [-9.8%, -8.1%], effect size -4.2`): for templates that show it.
    pub interval: Option<String>,
}

impl HeadlineView {
    pub(super) fn new(h: &Headline, forced_kind: Option<&str>) -> Self {
        let num = change_number(&h.change);
        let signed = with_unit(num.clone(), &h.metric, &h.change);
        let magnitude = with_unit(
            num.trim_start_matches(['+', '-']).to_string(),
            &h.metric,
            &h.change,
        );
        let plain = with_unit(
            num.trim_start_matches('+').to_string(),
            &h.metric,
            &h.change,
        );
        let verdict = match (h.verdict, forced_kind) {
            (Verdict::Undefined, Some(k)) => k.to_string(),
            (Verdict::Undefined, None) => "change".to_string(),
            (v, _) => v.word().to_string(),
        };
        let is_regression = verdict == "regression";
        HeadlineView {
            metric: h.metric.clone(),
            change_classic: if is_regression { signed.clone() } else { plain },
            change_robot: signed.strip_prefix('+').unwrap_or(&signed).to_string(),
            change_signed: signed,
            change_magnitude: magnitude,
            interval: None,
            verdict,
            is_regression,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Param {
    pub key: String,
    pub value: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TestView {
    pub testcase: String,
    pub description: Option<String>,
    pub url: Option<String>,
    pub machine: String,
    pub tbox_group: String,
    pub kconfig: String,
    pub compiler: String,
    pub rootfs: String,
    pub params: Vec<Param>,
    /// `ivb44/vm-scalability/300s-migrate`: the test as the robot of 2014
    /// named it (tbox, testcase, the parameters' values joined by `-`).
    pub case_path: String,
}

impl TestView {
    pub(super) fn new(t: &Test) -> Self {
        TestView {
            testcase: t.testcase.clone(),
            description: t.description.clone(),
            url: t.url.clone(),
            // Validation requires the first test's machine; other tests'
            // views print none where they have none.
            machine: t.machine.clone().unwrap_or_default(),
            tbox_group: t.tbox_group.clone(),
            kconfig: t.kconfig.clone().unwrap_or_default(),
            compiler: t.compiler.clone().unwrap_or_default(),
            rootfs: t.rootfs.clone().unwrap_or_default(),
            case_path: {
                let values: Vec<String> = t.params.values().map(axis_text).collect();
                let mut p = format!("{}/{}", t.tbox_group, t.testcase);
                if !values.is_empty() {
                    p.push('/');
                    p.push_str(&values.join("-"));
                }
                p
            },
            params: t
                .params
                .iter()
                .map(|(k, v)| Param {
                    key: k.clone(),
                    value: axis_text(v),
                })
                .collect(),
        }
    }
}

/// A commit as templates see it.
#[derive(Debug, Clone, Serialize)]
pub struct CommitView {
    pub sha: String,
    pub sha10: String,
    pub subject: String,
    pub author: Option<Person>,
}

impl CommitView {
    pub(super) fn new(c: &crate::input::Commit) -> CommitView {
        CommitView {
            sha: c.sha.clone(),
            sha10: sha10(&c.sha),
            subject: c.subject.clone(),
            author: c.author.clone(),
        }
    }
}

/// What the renderer applies around the template's text: the input's own
/// Subject shape, its spacing and remarks, the operators' row notes, the
/// trailer and the appendix. Templates never see these.
#[derive(Debug, Clone, Default)]
pub struct Finish {
    /// Blank lines before sections, where the input overrides its layout
    /// (applied to the rendered body).
    pub spacing: crate::model::spacing::Spacing,
    /// Human remarks placed before sections (after the spacing is applied).
    pub remarks: Vec<crate::model::spacing::Remark>,
    /// Operators' marks after table rows (metric, what follows it).
    pub row_notes: Vec<(String, String)>,
    /// Text after the signature (see the input's `trailer`).
    pub trailer: Option<String>,
    /// Rows printed after the signature (`tests[].appendix`), placed by the
    /// renderer after whatever the layout ends with.
    pub appendix: Option<String>,
    /// The input's own Subject shape, used instead of the layout's.
    pub subject_template: Option<String>,
}

/// Everything a template may use.
#[derive(Debug, Clone, Serialize)]
pub struct ReportView {
    pub robot_name: String,
    pub robot_email: String,
    pub reported_by: String,
    /// A regression whose input asks for tags: the "kindly add following
    /// tags" block is printed.
    pub ask_tags: bool,
    /// "Details are as below:" is followed by its `---->` rule.
    pub details_rule: bool,
    /// The "To reproduce:" block is printed before the tables, or after
    /// them (where no materials link takes its place).
    pub reproduce_first: bool,
    pub reproduce_last: bool,
    pub preface: Option<String>,
    pub note: Option<String>,
    /// The robot's attachments, by name (the text part then starts at the
    /// greeting, with no blank lines before it).
    pub attachments: Vec<String>,
    /// What the renderer, not the template, applies to the text.
    #[serde(skip)]
    pub finish: Finish,
    pub headline: HeadlineView,
    pub commit: CommitView,
    pub commit_sha10: String,
    /// The 11 digits of the robot's 2014 subjects.
    pub commit_sha11: String,
    /// The first word of the commit author's name: the robot of 2014
    /// greeted the author (`Hi Naoya,`).
    pub addressee: Option<String>,
    pub base: CommitView,
    pub tree: Option<Tree>,
    pub patch: Option<Patch>,
    pub subsystem: Option<String>,
    pub still_regression_on: Vec<String>,
    pub test: TestView,
    /// The "In addition to that" ASCII table, if there are other tests.
    pub in_addition: Option<String>,
    /// All comparison groups with their plots, ready to print.
    pub details: String,
    pub message_id: String,
    pub closes_url: String,
    /// The archive link's trailer where the input names it (`Link`,
    /// `Closes`); the layout's own otherwise.
    pub archive_tag: Option<crate::input::ArchiveTag>,
    pub materials_url: Option<String>,
    pub disclaimer: String,
    pub signoff: String,
    pub signature: String,
    pub reproduce: String,
}

pub(super) fn sha10(s: &str) -> String {
    s.chars().take(10).collect()
}
