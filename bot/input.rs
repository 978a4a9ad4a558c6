//! The report input format (`perfbot report INPUT.json`), documented in README.md.
//!
//! Everything an e-mail needs comes from here: the commits, the tree or patch,
//! one or more tests with their samples (raw, lkp matrices, or pre-aggregated),
//! optional bisect samples and the recipients. Errors name the file and the
//! JSON path of the offending field.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::compare::matrix::Matrix;
use crate::model::error::InputError;

/// The most an input file (report input, matrix, case file) may weigh: a
/// 20,000-metric lkp matrix of 10 runs is under 10 MB.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Read an input file: a regular file of at most `MAX_INPUT_BYTES`, as UTF-8.
/// `/dev/zero`, a FIFO or a directory is refused instead of read without end.
pub fn read_input(path: &Path) -> Result<String, InputError> {
    crate::fsutil::utf8(read_bytes(path)?).map_err(|why| InputError::general(path, why))
}

/// Read a file given as input (a report input, a mail): a regular file of at
/// most `MAX_INPUT_BYTES`, as bytes. What is no regular file is refused
/// before a byte is read.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, InputError> {
    use crate::fsutil::Bounded;
    crate::fsutil::read_regular(path, MAX_INPUT_BYTES).map_err(|e| match e {
        Bounded::Io(e) => InputError::io(path, e),
        Bounded::Over(Some(len)) => InputError::general(
            path,
            format!("{len} bytes, over the limit of {MAX_INPUT_BYTES} for an input file"),
        ),
        e => InputError::general(path, e.to_string()),
    })
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Person {
    pub name: String,
    pub email: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Commit {
    pub sha: String,
    pub subject: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Person>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committer: Option<Person>,
}

/// A commit in a git tree: `[<name>:<branch>]` in modern subjects.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Tree {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub url: String,
    pub branch: String,
}

/// A patch under review, tested on top of a base.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Patch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `<tree url> <sha or branch>` (some of the robot's reports leave it out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    pub subject: String,
    /// The patch's own Message-ID: the report replies to it.
    pub message_id: String,
    /// The patch's own References (the thread it was posted in, oldest
    /// first): the report's References carry them, and a later version of a
    /// series posted in the same thread finds the earlier case through them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<String>,
}

/// A test named in the "In addition to that" box only: its headline as
/// printed, its machine and its parameters (`key=value`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OtherTest {
    pub testcase: String,
    pub metric: String,
    /// The change as the box prints it (`-23.9%`, `127.0%`).
    pub change: String,
    pub kind: String,
    /// Absent where the box has no machine row (the robot of 2026).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    #[serde(default)]
    pub params: Vec<String>,
}

/// Left or right, for text padded to a width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Align {
    Left,
    Right,
}

/// The trailer that links a fix to the report's archived copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum ArchiveTag {
    /// `Link:` (the robot until May 2023).
    Link,
    /// `Closes:` (from May 2023).
    Closes,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReproduceAt {
    #[default]
    Details,
    End,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StillOn {
    #[serde(rename = "ref")]
    pub reference: String,
    pub sha: String,
    /// The tip failed the test instead (`[test failed on …]`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub failed: bool,
}

/// An attachment of a report: a name only, or a file to send under a name.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged, expecting = "a file name, or {\"name\", \"path\"}")]
pub enum AttachmentSpec {
    Name(String),
    File(AttachedFile),
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AttachedFile {
    pub name: String,
    pub path: PathBuf,
}

/// Whether `name` can name an attached file: not empty, not `.` or `..`,
/// no folder separator, quote, `;`, NUL or control character (nothing a mail
/// reader could take for a path or a second header parameter).
pub fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '"', ';', '\0'])
        && !name.chars().any(char::is_control)
}

impl AttachmentSpec {
    pub fn name(&self) -> &str {
        match self {
            AttachmentSpec::Name(n) => n,
            AttachmentSpec::File(f) => &f.name,
        }
    }
}

/// The largest file a report attaches (the robot's kernel configs are
/// about 200 kB; list servers refuse mails of a few MB).
pub const MAX_ATTACHMENT: u64 = 4 << 20;

/// One pre-aggregated value: a mean, or a mean with its spread and run count;
/// or, for a failure stat (`dmesg.*`, …), the sum of its samples over the
/// runs (`1:4` in a printed table: it occurred in one of four runs). The sum
/// is fractional for the few perf-profile stats lkp's failure patterns catch
/// (`…cycles-pp.error_entry`); the table prints its integer part, and nothing
/// at all only when it is exactly 0 (`0:4` against `:4`).
///
/// The robot of 2014 left some means blank (`       ~ 1%  TOTAL
/// turbostat.Cor_W`): `{"mean": null, "stddev_percent": 1}`, kept as a NaN
/// mean, with the change as printed.
#[derive(Debug, Clone, PartialEq)]
pub enum AggValue {
    Mean(f64),
    Full {
        mean: f64,
        stddev_percent: Option<f64>,
        runs: Option<u32>,
    },
    Failures {
        fails: f64,
        runs: u32,
    },
}

/// The object form of an `AggValue`, strict about its fields (`"stddev": 5`
/// is a typo for `stddev_percent`, not something to ignore).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct AggFull {
    /// `None` when left out, `Some(None)` when `null` (a blank mean).
    #[serde(default, deserialize_with = "present")]
    mean: Option<Option<f64>>,
    #[serde(default)]
    stddev_percent: Option<f64>,
    #[serde(default)]
    runs: Option<u32>,
    #[serde(default)]
    fails: Option<f64>,
}

impl<'de> Deserialize<'de> for AggValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = AggValue;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a mean (a number), {\"mean\", \"stddev_percent\", \"runs\"} or {\"fails\", \"runs\"}",
                )
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<AggValue, E> {
                Ok(AggValue::Mean(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<AggValue, E> {
                Ok(AggValue::Mean(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<AggValue, E> {
                Ok(AggValue::Mean(v as f64))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<AggValue, A::Error> {
                use serde::de::Error;
                let f = AggFull::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                match (f.mean, f.fails) {
                    (Some(mean), None) => Ok(AggValue::Full {
                        mean: mean.unwrap_or(f64::NAN),
                        stddev_percent: f.stddev_percent,
                        runs: f.runs,
                    }),
                    (None, Some(fails)) if f.stddev_percent.is_none() => {
                        let runs = f
                            .runs
                            .ok_or_else(|| A::Error::custom("\"fails\" needs \"runs\""))?;
                        if !(fails.is_finite() && fails >= 0.0) || runs == 0 {
                            return Err(A::Error::custom(
                                "\"fails\" is a sum of samples (0 or more), and \"runs\" at least 1",
                            ));
                        }
                        Ok(AggValue::Failures { fails, runs })
                    }
                    (None, None) => Err(A::Error::missing_field("mean")),
                    _ => Err(A::Error::custom(
                        "either a mean (with stddev_percent) or a failure count (fails, runs)",
                    )),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for AggValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            AggValue::Mean(m) => s.serialize_f64(*m),
            AggValue::Full {
                mean,
                stddev_percent,
                runs,
            } => {
                let mut m = s.serialize_map(None)?;
                // A blank mean is `null`.
                m.serialize_entry("mean", &Some(*mean).filter(|v| !v.is_nan()))?;
                if let Some(p) = stddev_percent {
                    m.serialize_entry("stddev_percent", p)?;
                }
                if let Some(r) = runs {
                    m.serialize_entry("runs", r)?;
                }
                m.end()
            }
            AggValue::Failures { fails, runs } => {
                let mut m = s.serialize_map(Some(2))?;
                // A whole count is written as one (`1`, not `1.0`).
                if fails.fract() == 0.0 && *fails < 1e15 {
                    m.serialize_entry("fails", &(*fails as u64))?;
                } else {
                    m.serialize_entry("fails", fails)?;
                }
                m.serialize_entry("runs", runs)?;
                m.end()
            }
        }
    }
}

/// A field that may be `null`: present (as `Some(None)`) rather than left out.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<f64>>, D::Error> {
    Option::<f64>::deserialize(d).map(Some)
}

impl AggValue {
    /// A mean the table leaves blank (`"mean": null`).
    pub fn is_blank(&self) -> bool {
        matches!(self, AggValue::Full { mean, .. } if mean.is_nan())
    }

    pub fn mean(&self) -> f64 {
        match self {
            AggValue::Mean(m) | AggValue::Full { mean: m, .. } => *m,
            AggValue::Failures { fails, runs } => *fails / *runs as f64,
        }
    }
    pub fn stddev_percent(&self) -> Option<f64> {
        match self {
            AggValue::Mean(_) | AggValue::Failures { .. } => None,
            AggValue::Full { stddev_percent, .. } => *stddev_percent,
        }
    }
    /// (fails, runs) of a failure stat.
    pub fn failures(&self) -> Option<(f64, u32)> {
        match self {
            AggValue::Failures { fails, runs } => Some((*fails, *runs)),
            _ => None,
        }
    }
}

/// One pre-aggregated row, as another tool computed it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AggregatedRow {
    pub metric: String,
    pub base: AggValue,
    pub head: AggValue,
    /// The change as the other tool printed it (`-9.0%`, `+7.1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    /// What an operator wrote after the row by hand (`   <-------- (a)`),
    /// printed after it as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation: Option<String>,
}

/// Samples of one commit: inline (metric → samples) or the path of an lkp matrix.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum SampleSource {
    Path(String),
    Inline(serde_json::Map<String, Value>),
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawSamples {
    pub base: SampleSource,
    pub head: SampleSource,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BisectVerdict {
    Good,
    Bad,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BisectPoint {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    pub verdict: BisectVerdict,
    /// metric → samples measured at this point.
    pub values: serde_json::Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Bisect {
    pub points: Vec<BisectPoint>,
    /// Metrics to plot besides the headline. When the list names the
    /// headline too, the plots follow the list's order.
    #[serde(default)]
    pub plot: Vec<String>,
    /// A plot's y axis as `[low, high]` or `[low, high, tic step]`, by
    /// metric, where it is not what autoscaling the samples gives (a plot
    /// read back from a report).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub ranges: std::collections::BTreeMap<String, Vec<f64>>,
    /// A plot's title, by metric, where it is not the metric's own: the
    /// robot drew some plots with a blank title, read back as
    /// `untitled-plot-N` with the title `""`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub titles: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Test {
    pub testcase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `56 threads Intel(R) Xeon(R) CPU E5-2695 v3 @ 2.30GHz with 256G memory`.
    /// Required of the first test; another test may leave it out, as the
    /// robot of 2026 does (no machine under its `***` line nor in the box).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    pub tbox_group: String,
    /// Job parameters in job order.
    #[serde(default)]
    pub params: serde_json::Map<String, Value>,
    /// The job's kernel config, compiler and root file system: the table's
    /// parameter line names them. The robot of 2014 named none of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kconfig: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rootfs: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<RawSamples>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregated: Option<Vec<AggregatedRow>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bisect: Option<Bisect>,
    /// Pre-aggregated rows in the order given (a table read from a report
    /// keeps the robot's order) instead of lkp's.
    #[serde(default, skip_serializing_if = "is_false")]
    pub keep_order: bool,
    /// Rows the mail prints after its signature, in the order given, under
    /// `<below more details following above table FYI>` (the robot of 2024
    /// once kept its table to the test's own metrics and appended the rest).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub appendix: Vec<AggregatedRow>,
    /// The metric this test leads with in "In addition to that" (else the
    /// analysis picks it, as for the first test), and its word.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<HeadlineChoice>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Recipients {
    /// Defaults to the commit author.
    #[serde(default)]
    pub to: Vec<String>,
    #[serde(default)]
    pub cc: Vec<String>,
    /// The recipients of a mail read back, exactly as it had them: neither
    /// `report.cc` nor the self-copy is added, and an address in To and Cc
    /// stays in both (`parse-report` sets it).
    #[serde(default)]
    pub exact: bool,
}

/// Name the headline explicitly (used with `--force`, or to pick among equals).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HeadlineChoice {
    pub metric: String,
    /// The word to use when the metric has no direction (only with `--force`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// One line of a robot's mail that perfbot does not write back.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UnreadLine {
    /// Its line in the mail's body, from 1.
    pub line: usize,
    pub text: String,
}

/// How a report is presented, apart from what it says: the layout, and the
/// robot's small variations a read mail records (its blank lines, its
/// operators' remarks, its Subject's shape, its plots' drawing), so that the
/// rest of the input stays about content.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Style {
    /// The layout the report was read in (`parse-report` names it): the
    /// template `report` uses unless `--template` says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<crate::model::layout::Layout>,
    /// How the refs of `still_regression_on` line up (the layout's way if
    /// not given: perfbot right-aligns, the robot mostly left-aligns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub still_regression_align: Option<Align>,
    /// The "In addition" box's width in characters, where the robot padded
    /// it wider than its widest cell (a parsed report records it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_addition_width: Option<usize>,
    /// Whether a regression asks for `Reported-by:`/`Closes:` tags (the
    /// default). The robot's operators left them out of a report they had
    /// found to be code alignment rather than the commit's doing.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub tags: bool,
    /// Whether "Details are as below:" is followed by its `---->` rule (the
    /// default; some hand-sent mails of 2023 leave it out).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub details_rule: bool,
    /// Where the "To reproduce:" block goes: before the tables (the
    /// default) or after them (`"end"`, as the robot put it in two mails of
    /// late 2022).
    #[serde(default, skip_serializing_if = "is_default")]
    pub reproduce_at: ReproduceAt,
    /// The trailer of the archive link, where it is not the layout's own
    /// (`"Closes"` in a mail of May 2023 that otherwise reads as the
    /// `Link:` era's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive_tag: Option<ArchiveTag>,
    /// Blank lines before sections where the mail differs from its layout
    /// (`{"top": 2, "tags": 3}`); a parsed robot report records them.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub spacing: crate::model::spacing::Spacing,
    /// Human text placed before a section (`{"before": "details", "text":
    /// …, "blank_after": 2}`), where the robot's operators annotated a report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remarks: Vec<crate::model::spacing::Remark>,
    /// How the bisect plots are drawn (`lkp-2014`, `lkp-2019`, `lkp-2020`,
    /// `gnuplot-5.4`); if not given, as the layout draws them
    /// (`Layout::plot_style`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plot_style: Option<crate::model::bisect::PlotStyle>,
    /// The Subject's shape where a read mail's differs from its layout's
    /// (`parse-report` records it): a subject template over the report's
    /// values, e.g. `[{{subsystem}}]  {{commit_sha10}}:  {{headline.metric}}
    /// {{headline.change_signed}} {{headline.verdict}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject_template: Option<String>,
}

impl Default for Style {
    fn default() -> Style {
        Style {
            still_regression_align: None,
            in_addition_width: None,
            tags: true,
            details_rule: true,
            reproduce_at: ReproduceAt::default(),
            archive_tag: None,
            spacing: Default::default(),
            remarks: Vec::new(),
            plot_style: None,
            layout: None,
            subject_template: None,
        }
    }
}

/// A report's input: what `perfbot report` reads, and what `parse-report`
/// reads back from a robot mail. (`Default` is an empty report, for
/// building one field by field.)
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReportInput {
    /// The report's Date (RFC 3339); the time of queueing when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    pub commit: Commit,
    pub base: Commit,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<Tree>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<Patch>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub still_regression_on: Vec<StillOn>,
    /// Other tests named in the "In addition to that" box without a table
    /// of their own in the mail (the robot sometimes leaves it out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_addition_only: Vec<OtherTest>,
    pub tests: Vec<Test>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub recipients: Recipients,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<HeadlineChoice>,
    /// A human preface placed before the greeting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preface: Option<String>,
    /// A human note placed after the greeting, before the robot's sentence
    /// (the 2023+ robot puts its operators' remarks there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The files attached after the text (`job.yaml`, `reproduce`, the
    /// kernel config): `{"name", "path"}` sends the file (a path relative to
    /// the input), a bare name (what `parse-report` records of the robot's)
    /// only shapes the text, which then starts at the greeting.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentSpec>,
    /// Text after the signature that is not the robot's (a `#regzbot
    /// introduced:` line an operator added), printed after it as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trailer: Option<String>,
    /// Lines of a robot's mail that `parse-report` read but perfbot does not
    /// write back (a remark in a place the reader does not know): kept here
    /// so that nothing of the mail is dropped unsaid, never printed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<UnreadLine>,
    /// How the report is presented, apart from what it says (see `Style`).
    #[serde(default)]
    pub style: Style,
}

/// The most blank lines `spacing` may ask for before a section.
const MAX_BLANKS: u8 = 9;

/// The samples of one test, resolved and validated.
#[derive(Debug, Clone)]
pub enum TestData {
    Raw { base: Matrix, head: Matrix },
    Aggregated(Vec<AggregatedRow>),
}

/// An input file, parsed and validated, with its samples loaded.
#[derive(Debug, Clone)]
pub struct LoadedInput {
    pub path: PathBuf,
    pub input: ReportInput,
    pub data: Vec<TestData>,
    /// The attachments to send: (name, contents), in the input's order.
    pub files: Vec<(String, Vec<u8>)>,
}

fn is_sha(s: &str) -> bool {
    (7..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// A release tag: `v6.16-rc4`, `v5.15`.
fn is_tag(s: &str) -> bool {
    s.len() <= 40
        && s.strip_prefix('v').is_some_and(|r| {
            r.starts_with(|c: char| c.is_ascii_digit())
                && r.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
        })
}

fn has_line_break(s: &str) -> bool {
    s.contains(['\r', '\n'])
}

/// Longest single-line values: names and words (a branch, a testcase), subjects
/// (the RFC 5322 line limit is 998), URLs, a test's description (a longer
/// line goes out encoded).
const MAX_NAME: usize = 200;
const MAX_SUBJECT: usize = 500;
const MAX_URL: usize = 2000;
const MAX_DESCRIPTION: usize = 64 << 10;

/// A single line of at most `max` characters, or an error at `at`.
fn one_line(p: &Path, at: &str, v: &str, max: usize) -> Result<(), InputError> {
    if has_line_break(v) || v.contains(char::is_control) {
        return Err(InputError::field(
            p,
            at,
            "must be one line (no line breaks or control characters)",
        ));
    }
    let n = v.chars().count();
    if n > max {
        return Err(InputError::field(
            p,
            at,
            &format!("{n} characters, over the limit of {max}"),
        ));
    }
    Ok(())
}

/// One mailbox (`addr`, `Name <addr>`, `"Last, First" <addr>`), as mail headers take it.
fn mailbox_ok(s: &str) -> bool {
    !has_line_break(s) && s.trim().parse::<lettre::message::Mailbox>().is_ok()
}

impl LoadedInput {
    pub fn load(path: &Path) -> Result<LoadedInput, InputError> {
        let text = crate::input::read_input(path)?;
        Self::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<LoadedInput, InputError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let input: ReportInput = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
            let inner = e.inner();
            if inner.is_syntax() || inner.is_eof() {
                InputError::json(path, inner)
            } else {
                let p = e.path().to_string();
                let at = if p == "." {
                    "$".to_string()
                } else {
                    format!("$.{p}")
                };
                let msg = inner.to_string();
                let msg = msg
                    .rfind(" at line ")
                    .map_or(msg.clone(), |i| msg[..i].to_string());
                InputError::field(path, &at, &msg)
            }
        })?;
        // One JSON object per file: anything after it is a mistake.
        de.end().map_err(|e| InputError::json(path, &e))?;
        Self::from_input(input, path)
    }

    /// An input already in typed form (a report read back from a mail),
    /// checked and loaded as a file's would be; `path` names it in errors
    /// and is where its attachments and matrices are found.
    pub fn from_input(input: ReportInput, path: &Path) -> Result<LoadedInput, InputError> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let data = input
            .tests
            .iter()
            .enumerate()
            .map(|(i, t)| load_test(t, i, dir, path))
            .collect::<Result<Vec<_>, _>>()?;
        let files = load_attachments(&input.attachments, dir, path)?;
        let loaded = LoadedInput {
            path: path.to_path_buf(),
            input,
            data,
            files,
        };
        loaded.validate()?;
        Ok(loaded)
    }

    /// Everything serde cannot check: single lines, sizes, ids, addresses,
    /// combinations; each error names the file and the field.
    fn validate(&self) -> Result<(), InputError> {
        self.validate_commits()?;
        self.validate_origin()?;
        self.validate_recipients()?;
        for (n, t) in self.input.tests.iter().enumerate() {
            self.validate_test(n, t)?;
        }
        if let Some(t) = &self.input.trailer {
            if t.len() > 4096 || t.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
                return Err(InputError::field(
                    &self.path,
                    "$.trailer",
                    "text of at most 4096 bytes, no control characters but line breaks and tabs",
                ));
            }
        }
        if self.input.style.in_addition_width.is_some_and(|w| w > 998) {
            return Err(InputError::field(
                &self.path,
                "$.style.in_addition_width",
                "at most 998 characters (a mail's line)",
            ));
        }
        if let Some(t) = &self.input.style.subject_template {
            let bad = |why: String| InputError::field(&self.path, "$.style.subject_template", &why);
            if t.contains(['\r', '\n']) || t.len() > 998 {
                return Err(bad("one line of at most 998 bytes".into()));
            }
            crate::templates::plain()
                .register_template_string("subject", t)
                .map_err(|e| bad(format!("not a subject template: {e}")))?;
        }
        Ok(())
    }

    /// The commit and its base: ids, subjects, people.
    fn validate_commits(&self) -> Result<(), InputError> {
        let p = &self.path;
        let i = &self.input;
        for (at, c) in [("$.commit", &i.commit), ("$.base", &i.base)] {
            // A base may be a release tag (`v6.16-rc4`), as the robot compares
            // against one at times.
            let tag = at == "$.base" && is_tag(&c.sha);
            if !is_sha(&c.sha) && !tag {
                return Err(InputError::field(
                    p,
                    &format!("{at}.sha"),
                    "not a commit id (7 to 64 hex digits)",
                ));
            }
            one_line(p, &format!("{at}.subject"), &c.subject, MAX_SUBJECT)?;
            for (who, person) in [("author", &c.author), ("committer", &c.committer)] {
                if let Some(person) = person {
                    one_line(p, &format!("{at}.{who}.name"), &person.name, MAX_NAME)?;
                    if crate::model::Address::parse(&person.email).is_none()
                        || person.email.contains(['<', '>'])
                    {
                        return Err(InputError::field(
                            p,
                            &format!("{at}.{who}.email"),
                            "not an e-mail address",
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Where the commit is: a tree or a patch (exactly one); where else it
    /// still regresses; and the style's spacing and remarks and the
    /// attachments' names.
    fn validate_origin(&self) -> Result<(), InputError> {
        self.validate_style()?;
        self.validate_tree()?;
        self.validate_attachments()?;
        self.validate_patch()?;
        self.validate_tips()
    }

    fn validate_style(&self) -> Result<(), InputError> {
        let p = &self.path;
        let i = &self.input;
        // A layout's spacing, not a way to pad a mail with blank pages.
        if let Some((s, n)) = i.style.spacing.iter().find(|(_, n)| **n > MAX_BLANKS) {
            let name = serde_json::to_value(s).unwrap_or_default();
            return Err(InputError::field(
                p,
                &format!("$.style.spacing.{}", name.as_str().unwrap_or("?")),
                &format!("{n} blank lines: at most {MAX_BLANKS}"),
            ));
        }
        for (n, r) in i.style.remarks.iter().enumerate() {
            if let Some(why) = r.problem() {
                return Err(InputError::field(
                    p,
                    &format!("$.style.remarks[{n}].text"),
                    why,
                ));
            }
            if r.blank_after > MAX_BLANKS {
                return Err(InputError::field(
                    p,
                    &format!("$.style.remarks[{n}].blank_after"),
                    &format!("{} blank lines: at most {MAX_BLANKS}", r.blank_after),
                ));
            }
        }
        Ok(())
    }

    /// Either a tree or a patch, and the tree's names one line each.
    fn validate_tree(&self) -> Result<(), InputError> {
        let p = &self.path;
        let i = &self.input;
        if i.tree.is_none() && i.patch.is_none() {
            return Err(InputError::field(
                p,
                "$",
                "give either \"tree\" (url, branch) or \"patch\"",
            ));
        }
        if i.tree.is_some() && i.patch.is_some() {
            return Err(InputError::field(
                p,
                "$.patch",
                "give either \"tree\" or \"patch\", not both",
            ));
        }
        if let Some(t) = &i.tree {
            if let Some(name) = &t.name {
                one_line(p, "$.tree.name", name, MAX_NAME)?;
            }
            one_line(p, "$.tree.branch", &t.branch, MAX_NAME)?;
            one_line(p, "$.tree.url", &t.url, MAX_URL)?;
        }
        Ok(())
    }

    fn validate_attachments(&self) -> Result<(), InputError> {
        let p = &self.path;
        let i = &self.input;
        for (n, a) in i.attachments.iter().enumerate() {
            let at = match a {
                AttachmentSpec::Name(_) => format!("$.attachments[{n}]"),
                AttachmentSpec::File(_) => format!("$.attachments[{n}].name"),
            };
            let name = a.name();
            one_line(p, &at, name, MAX_NAME)?;
            if !is_plain_file_name(name) {
                return Err(InputError::field(
                    p,
                    &at,
                    "a file name (no folders, quotes or ;)",
                ));
            }
        }
        Ok(())
    }

    fn validate_patch(&self) -> Result<(), InputError> {
        let p = &self.path;
        let i = &self.input;
        if let Some(patch) = &i.patch {
            one_line(p, "$.patch.subject", &patch.subject, MAX_SUBJECT)?;
            for (f, v) in [
                ("url", &patch.url),
                ("link", &patch.link),
                ("base", &patch.base),
            ] {
                if let Some(v) = v {
                    one_line(p, &format!("$.patch.{f}"), v, MAX_URL)?;
                }
            }
            if crate::model::MessageId::parse(&patch.message_id).is_none() {
                return Err(InputError::field(
                    p,
                    "$.patch.message_id",
                    "not a Message-ID",
                ));
            }
        }
        Ok(())
    }

    /// The trees the regression is still on (`still_regression_on`).
    fn validate_tips(&self) -> Result<(), InputError> {
        let p = &self.path;
        let i = &self.input;
        for (n, s) in i.still_regression_on.iter().enumerate() {
            one_line(
                p,
                &format!("$.still_regression_on[{n}].ref"),
                &s.reference,
                MAX_NAME,
            )?;
            one_line(
                p,
                &format!("$.still_regression_on[{n}].sha"),
                &s.sha,
                MAX_NAME,
            )?;
        }
        Ok(())
    }

    /// At least one test and one recipient; each a single address.
    fn validate_recipients(&self) -> Result<(), InputError> {
        let p = &self.path;
        let i = &self.input;
        if i.tests.is_empty() {
            return Err(InputError::field(
                p,
                "$.tests",
                "at least one test is needed",
            ));
        }
        if i.recipients.to.is_empty() && i.commit.author.is_none() {
            return Err(InputError::field(
                p,
                "$.recipients.to",
                "no recipient: give recipients.to or commit.author",
            ));
        }
        for (k, list) in [("to", &i.recipients.to), ("cc", &i.recipients.cc)] {
            for (n, a) in list.iter().enumerate() {
                if !mailbox_ok(a) {
                    return Err(InputError::field(
                        p,
                        &format!("$.recipients.{k}[{n}]"),
                        "not one e-mail address (quote a name with a comma: \"\\\"Last, First\\\" <a@b>\")",
                    ));
                }
            }
        }
        Ok(())
    }

    /// A test's one-line fields, parameters and bisect samples.
    fn validate_test(&self, n: usize, t: &Test) -> Result<(), InputError> {
        let p = &self.path;
        let at = format!("$.tests[{n}]");
        if n == 0 && t.machine.is_none() {
            return Err(InputError::field(p, &format!("{at}.machine"), "missing"));
        }
        let fields = [
            ("testcase", Some(&t.testcase)),
            ("machine", t.machine.as_ref()),
            ("tbox_group", Some(&t.tbox_group)),
            ("kconfig", t.kconfig.as_ref()),
            ("compiler", t.compiler.as_ref()),
            ("rootfs", t.rootfs.as_ref()),
        ];
        for (f, v) in fields {
            let Some(v) = v else { continue };
            if v.trim().is_empty() {
                return Err(InputError::field(
                    p,
                    &format!("{at}.{f}"),
                    "must be a non-empty single line",
                ));
            }
            one_line(p, &format!("{at}.{f}"), v, MAX_SUBJECT)?;
        }
        // The robot prints both on one line (`test-description: …`), and
        // a line more would be read back as something else.
        if let Some(v) = &t.description {
            one_line(p, &format!("{at}.description"), v, MAX_DESCRIPTION)?;
        }
        if let Some(v) = &t.url {
            one_line(p, &format!("{at}.url"), v, MAX_URL)?;
        }
        for (k, v) in &t.params {
            let key_at = format!("{at}.params.{}", crate::compare::matrix::json_key(k));
            one_line(p, &key_at, k, MAX_NAME)?;
            if k.trim().is_empty() {
                return Err(InputError::field(p, &key_at, "an empty parameter name"));
            }
            if matches!(v, Value::Object(_) | Value::Array(_))
                || has_line_break(&crate::compare::case_file::axis_text(v))
                || crate::compare::case_file::axis_text(v).chars().count() > MAX_URL
            {
                return Err(InputError::field(
                    p,
                    &format!("{at}.params.{k}"),
                    "must be a single-line value",
                ));
            }
        }
        if let Some(b) = &t.bisect {
            validate_bisect(p, &at, b)?;
        }
        Ok(())
    }
}

/// Bisect samples: at least one point, each value a finite number or a
/// non-empty list of them.
fn validate_bisect(p: &Path, at: &str, b: &Bisect) -> Result<(), InputError> {
    if b.points.is_empty() {
        return Err(InputError::field(
            p,
            &format!("{at}.bisect.points"),
            "empty: give the bisect samples or drop \"bisect\"",
        ));
    }
    for (j, pt) in b.points.iter().enumerate() {
        for (m, v) in &pt.values {
            let ok = match v {
                Value::Array(a) => {
                    !a.is_empty() && a.iter().all(|x| x.as_f64().is_some_and(f64::is_finite))
                }
                Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
                _ => false,
            };
            if !ok {
                return Err(InputError::field(
                    p,
                    &format!(
                        "{at}.bisect.points[{j}].values.{}",
                        crate::compare::matrix::json_key(m)
                    ),
                    "must be a number or a non-empty list of numbers",
                ));
            }
        }
    }
    for (m, t) in &b.titles {
        if t.contains('\n') || t.len() > 80 {
            return Err(InputError::field(
                p,
                &format!("{at}.bisect.titles.{}", crate::compare::matrix::json_key(m)),
                "must be one line of at most 80 characters",
            ));
        }
    }
    for (m, r) in &b.ranges {
        let ok = match r[..] {
            [lo, hi] => lo.is_finite() && hi.is_finite() && lo < hi,
            [lo, hi, step] => {
                lo.is_finite() && hi.is_finite() && lo < hi && step > 0.0 && step <= hi - lo
            }
            _ => false,
        };
        if !ok {
            return Err(InputError::field(
                p,
                &format!("{at}.bisect.ranges.{}", crate::compare::matrix::json_key(m)),
                "must be [low, high] or [low, high, tic step], low below high",
            ));
        }
    }
    Ok(())
}

fn load_source(
    src: &SampleSource,
    dir: &Path,
    file: &Path,
    at: &str,
) -> Result<Matrix, InputError> {
    let m = match src {
        SampleSource::Path(p) => {
            Matrix::load(&dir.join(p)).map_err(|e| InputError::field(file, at, &e.to_string()))?
        }
        SampleSource::Inline(map) => {
            // Inline samples are written for perfbot: text there is a mistake
            // (lkp matrices may carry text stats, which lkp skips).
            for (k, v) in map {
                let text = match v {
                    Value::String(t) => Some(t.as_str()),
                    Value::Array(a) => a.iter().find_map(Value::as_str),
                    _ => None,
                };
                if let Some(t) = text {
                    return Err(InputError::field(
                        file,
                        &format!("{at}.{}", crate::compare::matrix::json_key(k)),
                        &format!("a sample must be a number, not the text {t:?}"),
                    ));
                }
            }
            Matrix::from_json(&Value::Object(map.clone()), file, at)?
        }
    };
    if m.stats.is_empty() {
        return Err(InputError::field(file, at, "no samples"));
    }
    Ok(m)
}

/// Pre-aggregated rows: finite values, both sides of one kind, each metric
/// once, changes as numbers. `at` names the list (`$.tests[0].aggregated`).
fn check_rows(file: &Path, at: &str, rows: &[AggregatedRow]) -> Result<(), InputError> {
    // Seen metrics: one lookup a row, not a scan of the rows before it
    // (a 200,000-row table is read in linear time).
    let mut seen = std::collections::HashSet::with_capacity(rows.len());
    for (j, r) in rows.iter().enumerate() {
        let rat = format!("{at}[{j}]");
        for (side, v) in [("base", &r.base), ("head", &r.head)] {
            let max = crate::compare::matrix::MAX_SAMPLE;
            if v.is_blank() && r.change.is_none() {
                return Err(InputError::field(
                    file,
                    &format!("{rat}.change"),
                    "a row with a blank mean (\"mean\": null) needs its change as printed",
                ));
            }
            if !(v.mean().is_finite() || v.is_blank())
                || v.mean().abs() > max
                || v.stddev_percent()
                    .is_some_and(|s| !s.is_finite() || !(0.0..=max).contains(&s))
            {
                return Err(InputError::field(
                    file,
                    &format!("{rat}.{side}"),
                    "mean and stddev_percent must be numbers within ±1e100 (stddev_percent >= 0)",
                ));
            }
        }
        if r.base.failures().is_some() != r.head.failures().is_some() {
            return Err(InputError::field(
                file,
                &rat,
                "base and head are both failure counts ({\"fails\", \"runs\"}) or both means",
            ));
        }
        if let Some(note) = &r.annotation {
            if note.len() > 200 || note.chars().any(char::is_control) || note.trim().is_empty() {
                return Err(InputError::field(
                    file,
                    &format!("{rat}.annotation"),
                    "one line of at most 200 bytes",
                ));
            }
        }
        if !seen.insert(r.metric.as_str()) {
            return Err(InputError::field(
                file,
                &format!("{rat}.metric"),
                &format!("{:?} is listed twice", r.metric),
            ));
        }
        if r.metric.is_empty() || r.metric.contains(char::is_whitespace) {
            return Err(InputError::field(
                file,
                &format!("{rat}.metric"),
                "a metric name has no spaces",
            ));
        }
        if let Some(c) = &r.change {
            // The robot of 2014 printed a change from 0 as `+Inf%`.
            let num = c.trim_end_matches('%');
            let infinite = matches!(num, "+Inf" | "-Inf");
            if !infinite && num.parse::<f64>().map_or(true, |v| !v.is_finite()) {
                return Err(InputError::field(
                    file,
                    &format!("{rat}.change"),
                    "not a number such as \"-9.0%\", \"+7.1\" or \"+Inf%\"",
                ));
            }
        }
    }
    Ok(())
}

/// The most attachments one report may carry, and their bytes together.
pub const MAX_ATTACHMENTS: usize = 32;
pub const MAX_ATTACHMENT_BYTES: u64 = 16 << 20;

/// The files of `{"name", "path"}` attachments, read now so that a missing
/// or oversized file is an input error, not a half-sent report. Only regular
/// files inside the input's folder are read (no path, `..` or symlink
/// leading out of it, no device, FIFO or `/proc` file), each at most
/// `MAX_ATTACHMENT` bytes, all of them at most `MAX_ATTACHMENT_BYTES`.
fn load_attachments(
    specs: &[AttachmentSpec],
    dir: &Path,
    file: &Path,
) -> Result<Vec<(String, Vec<u8>)>, InputError> {
    if specs.len() > MAX_ATTACHMENTS {
        return Err(InputError::field(
            file,
            "$.attachments",
            &format!("{} attachments, over {MAX_ATTACHMENTS}", specs.len()),
        ));
    }
    if !specs.iter().any(|a| matches!(a, AttachmentSpec::File(_))) {
        return Ok(Vec::new());
    }
    // An input named without a folder (`in.json`) is in the current one.
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let root = dir.canonicalize().map_err(|e| {
        InputError::field(file, "$.attachments", &format!("{}: {e}", dir.display()))
    })?;
    let mut out = Vec::new();
    let mut total = 0u64;
    for (n, a) in specs.iter().enumerate() {
        let AttachmentSpec::File(f) = a else { continue };
        let at = format!("$.attachments[{n}].path");
        let bytes =
            read_attachment(&root, &f.path).map_err(|why| InputError::field(file, &at, &why))?;
        total += bytes.len() as u64;
        if total > MAX_ATTACHMENT_BYTES {
            return Err(InputError::field(
                file,
                &at,
                &format!("the attachments add up to over {MAX_ATTACHMENT_BYTES} bytes"),
            ));
        }
        out.push((f.name.clone(), bytes));
    }
    Ok(out)
}

/// One attachment file, `path` relative to `root` (canonical) or absolute,
/// checked: where it really is (symlinks and `..` resolved) must be inside
/// `root`.
pub(crate) fn read_attachment(root: &Path, path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let shown = path.display();
    let full = root.join(path);
    let real = full.canonicalize().map_err(|e| format!("{shown}: {e}"))?;
    if !real.starts_with(root) {
        return Err(format!(
            "{shown}: leads out of the input's folder (to {}): not read",
            real.display()
        ));
    }
    let meta = std::fs::metadata(&real).map_err(|e| format!("{shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown}: not a regular file: not read"));
    }
    if meta.len() > MAX_ATTACHMENT {
        return Err(format!(
            "{shown}: {} bytes, over {MAX_ATTACHMENT}",
            meta.len()
        ));
    }
    let f = std::fs::File::open(&real).map_err(|e| format!("{shown}: {e}"))?;
    // Checked again as opened (the file may have changed in between).
    let opened = f.metadata().map_err(|e| format!("{shown}: {e}"))?;
    if !opened.is_file() {
        return Err(format!("{shown}: not a regular file: not read"));
    }
    let mut bytes = Vec::new();
    f.take(MAX_ATTACHMENT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: {e}"))?;
    if bytes.len() as u64 > MAX_ATTACHMENT {
        return Err(format!("{shown}: over {MAX_ATTACHMENT} bytes"));
    }
    Ok(bytes)
}

fn load_test(t: &Test, i: usize, dir: &Path, file: &Path) -> Result<TestData, InputError> {
    let at = format!("$.tests[{i}]");
    check_rows(file, &format!("{at}.appendix"), &t.appendix)?;
    match (&t.samples, &t.aggregated) {
        (Some(_), Some(_)) => Err(InputError::field(
            file,
            &at,
            "give either \"samples\" or \"aggregated\", not both",
        )),
        (None, None) => Err(InputError::field(
            file,
            &at,
            "no samples: give \"samples\" (raw) or \"aggregated\"",
        )),
        (Some(s), None) => {
            let base = load_source(&s.base, dir, file, &format!("{at}.samples.base"))?;
            let head = load_source(&s.head, dir, file, &format!("{at}.samples.head"))?;
            if !base.stats.keys().any(|k| head.stats.contains_key(k)) {
                return Err(InputError::field(
                    file,
                    &format!("{at}.samples"),
                    "base and head have no metric in common",
                ));
            }
            Ok(TestData::Raw { base, head })
        }
        (None, Some(rows)) => {
            if rows.is_empty() {
                return Err(InputError::field(
                    file,
                    &format!("{at}.aggregated"),
                    "empty list of rows",
                ));
            }
            check_rows(file, &format!("{at}.aggregated"), rows)?;
            Ok(TestData::Aggregated(rows.clone()))
        }
    }
}

// Loading the comparison inputs of `compare` from disk (the engine parses).

use crate::compare::case_file::{axis_text, CaseFile};
use crate::compare::Column;

impl Matrix {
    /// Load and validate a matrix file.
    pub fn load(path: &Path) -> Result<Matrix, InputError> {
        let text = read_input(path)?;
        Self::parse(&text, path)
    }
}

/// A case file's `common_axes`, sorted by name as `ncompare` prints them,
/// whatever the file's order.
fn common_axes(
    obj: &serde_json::Map<String, Value>,
    path: &Path,
) -> Result<Vec<(String, String)>, InputError> {
    match obj.get("common_axes") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => {
            let mut axes: Vec<(String, String)> =
                m.iter().map(|(k, v)| (k.clone(), axis_text(v))).collect();
            crate::compare::case_file::sort_axes(&mut axes);
            Ok(axes)
        }
        Some(_) => Err(InputError::field(
            path,
            "$.common_axes",
            "must be an object",
        )),
    }
}

/// The axis the columns differ in (`commit` unless the file says).
fn compare_axis(obj: &serde_json::Map<String, Value>, path: &Path) -> Result<String, InputError> {
    match obj.get("compare_axis_key") {
        None => Ok("commit".to_string()),
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(_) => Err(InputError::field(
            path,
            "$.compare_axis_key",
            "must be a non-empty string",
        )),
    }
}

/// One column at `at`: its value of `axis` (or its commit) and its matrix,
/// inline or a path beside the case file.
fn column(c: &Value, at: &str, axis: &str, path: &Path) -> Result<Column, InputError> {
    let id = c
        .get(axis)
        .or_else(|| c.get("commit"))
        .map(axis_text)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| InputError::field(path, at, &format!("missing {axis:?}")))?;
    let matrix = match c.get("matrix") {
        Some(Value::String(p)) => Matrix::load(&path.parent().unwrap_or(Path::new(".")).join(p))?,
        Some(m @ Value::Object(_)) => Matrix::from_json(m, path, &format!("{at}.matrix"))?,
        _ => {
            return Err(InputError::field(
                path,
                &format!("{at}.matrix"),
                "missing: a matrix.json path or an inline matrix",
            ))
        }
    };
    Ok(Column::new(id, matrix))
}

impl CaseFile {
    pub fn load(path: &Path) -> Result<CaseFile, InputError> {
        let text = read_input(path)?;
        let v: Value = serde_json::from_str(&text).map_err(|e| InputError::json(path, &e))?;
        let obj = v
            .as_object()
            .ok_or_else(|| InputError::field(path, "$", "a case file must be a JSON object"))?;
        if !obj.contains_key("columns") && obj.contains_key("tests") && obj.contains_key("commit") {
            return Err(InputError::general(
                path,
                "this is a report input (for `perfbot report`); `compare` takes an lkp-style \
                 case file (common_axes, compare_axis_key, columns), e.g. \
                 tests/fixtures/conformance/fio_two_commits/case.json, or two or more lkp \
                 matrix.json files with --commit for each",
            ));
        }
        let common_axes = common_axes(obj, path)?;
        let axis = compare_axis(obj, path)?;
        let cols = obj
            .get("columns")
            .and_then(Value::as_array)
            .ok_or_else(|| InputError::field(path, "$.columns", "missing: an array of columns"))?;
        if cols.len() < 2 {
            return Err(InputError::field(
                path,
                "$.columns",
                "at least two columns are needed (the base first)",
            ));
        }
        let columns = cols
            .iter()
            .enumerate()
            .map(|(i, c)| column(c, &format!("$.columns[{i}]"), &axis, path))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CaseFile {
            path: path.to_path_buf(),
            common_axes,
            axis,
            columns,
        })
    }

    /// Two or more lkp `matrix.json` files given directly, with their commits.
    pub fn from_matrices(paths: &[PathBuf], commits: &[String]) -> Result<CaseFile, InputError> {
        let first = paths
            .first()
            .map(PathBuf::as_path)
            .unwrap_or(Path::new("-"));
        if paths.len() < 2 {
            return Err(InputError::general(
                first,
                "give at least two matrix files (the base first)",
            ));
        }
        if !commits.is_empty() && commits.len() != paths.len() {
            return Err(InputError::general(
                first,
                format!(
                    "{} matrix files but {} --commit values",
                    paths.len(),
                    commits.len()
                ),
            ));
        }
        // Each file on a thread of its own: reading them is most of the work.
        let matrices: Vec<Result<Matrix, InputError>> = std::thread::scope(|scope| {
            let readers: Vec<_> = paths
                .iter()
                .map(|p| scope.spawn(move || Matrix::load(p)))
                .collect();
            readers
                .into_iter()
                .map(|r| {
                    r.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        let mut columns = Vec::new();
        for (i, (p, m)) in paths.iter().zip(matrices).enumerate() {
            let id = commits
                .get(i)
                .cloned()
                .unwrap_or_else(|| p.display().to_string());
            columns.push(Column::new(id, m?));
        }
        Ok(CaseFile {
            path: first.to_path_buf(),
            common_axes: Vec::new(),
            axis: "commit".into(),
            columns,
        })
    }
}

fn yes() -> bool {
    true
}

// What serialising leaves out: the values an input may omit.
fn is_true(b: &bool) -> bool {
    *b
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The f2fs improvement of 2018: one test of aggregated rows and bisect
    /// samples, a tree, an author.
    fn example() -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/seed004-f2fs-aim7-improvement.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// `edit` applied to the example makes an input that is refused with an
    /// error at the JSON path `at` whose message contains `words`.
    fn check(edit: impl Fn(&mut Value), at: &str, words: &str) -> Result<(), String> {
        let mut v = example();
        edit(&mut v);
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/edited.json");
        match LoadedInput::parse(&v.to_string(), &path) {
            Ok(_) => Err(format!("{at}: accepted")),
            Err(e)
                if e.file == path && e.at.as_deref() == Some(at) && e.message.contains(words) =>
            {
                Ok(())
            }
            Err(e) => Err(format!("{at}, {words:?}: {e}")),
        }
    }

    #[test]
    fn the_example_is_accepted() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/edited.json");
        LoadedInput::parse(&example().to_string(), &path).unwrap();
    }

    /// What serde cannot check is checked once, and each refusal names the
    /// field and what it takes.
    #[test]
    fn bad_fields_are_named_with_what_they_take() {
        type Edit = fn(&mut Value);
        let table: &[(Edit, &str, &str)] = &[
            (|v| v["tests"] = json!([]), "$.tests", "at least one test"),
            (
                |v| {
                    v["commit"].as_object_mut().unwrap().remove("author");
                    v["recipients"]["to"] = json!([]);
                },
                "$.recipients.to",
                "no recipient",
            ),
            (
                |v| v["recipients"]["cc"] = json!(["Last, First <a@b.example>"]),
                "$.recipients.cc[0]",
                "not one e-mail address",
            ),
            (
                |v| v["commit"]["author"]["email"] = json!("<jk@f2fs.example>"),
                "$.commit.author.email",
                "not an e-mail address",
            ),
            (
                |v| v["trailer"] = json!("x".repeat(5000)),
                "$.trailer",
                "at most 4096 bytes",
            ),
            (
                |v| v["trailer"] = json!("ring \u{7} the bell"),
                "$.trailer",
                "no control characters",
            ),
            (
                |v| v["style"]["in_addition_width"] = json!(999),
                "$.style.in_addition_width",
                "at most 998",
            ),
            (
                |v| v["style"]["subject_template"] = json!("{{commit}}\nBcc: x@evil.example"),
                "$.style.subject_template",
                "one line",
            ),
            (
                |v| v["style"]["subject_template"] = json!("{{#if commit}}"),
                "$.style.subject_template",
                "not a subject template",
            ),
            (
                |v| {
                    v["style"]["remarks"] =
                        json!([{"before": "details", "text": "x", "blank_after": 10}])
                },
                "$.style.remarks[0].blank_after",
                "10 blank lines: at most 9",
            ),
            (
                |v| v["tests"][0]["params"][" "] = json!("x"),
                "$.tests[0].params.\" \"",
                "an empty parameter name",
            ),
            (
                |v| v["tests"][0]["description"] = json!("x".repeat(65 << 10)),
                "$.tests[0].description",
                "66560 characters, over the limit of 65536",
            ),
            (
                |v| v["tests"][0]["description"] = json!("one line\nand another"),
                "$.tests[0].description",
                "must be one line",
            ),
            (
                |v| v["tests"][0]["bisect"]["points"] = json!([]),
                "$.tests[0].bisect.points",
                "empty",
            ),
            (
                |v| v["tests"][0]["bisect"]["titles"] = json!({"aim7.jobs-per-min": "a\nb"}),
                "$.tests[0].bisect.titles.\"aim7.jobs-per-min\"",
                "one line of at most 80 characters",
            ),
            (
                |v| v["tests"][0]["bisect"]["ranges"] = json!({"aim7.jobs-per-min": [5, 1]}),
                "$.tests[0].bisect.ranges.\"aim7.jobs-per-min\"",
                "low below high",
            ),
            (
                |v| {
                    let first = v["tests"][0]["aggregated"][0].clone();
                    v["tests"][0]["aggregated"]
                        .as_array_mut()
                        .unwrap()
                        .push(first);
                },
                "$.tests[0].aggregated[165].metric",
                "listed twice",
            ),
            (
                |v| v["tests"][0]["aggregated"][0]["metric"] = json!("aim7 jobs"),
                "$.tests[0].aggregated[0].metric",
                "no spaces",
            ),
            (
                |v| v["tests"][0]["aggregated"][0]["change"] = json!("lots"),
                "$.tests[0].aggregated[0].change",
                "not a number",
            ),
            (
                |v| v["tests"][0]["aggregated"][0]["annotation"] = json!(" "),
                "$.tests[0].aggregated[0].annotation",
                "one line of at most 200 bytes",
            ),
            (
                |v| v["tests"][0]["aggregated"][0]["base"] = json!({"fails": 1, "runs": 3}),
                "$.tests[0].aggregated[0]",
                "both failure counts",
            ),
            (
                |v| v["tests"][0]["samples"] = json!({"base": {"a.b": [1]}, "head": {"a.b": [2]}}),
                "$.tests[0]",
                "not both",
            ),
            (
                |v| {
                    v["tests"][0].as_object_mut().unwrap().remove("aggregated");
                    v["tests"][0]["samples"] =
                        json!({"base": {"a.b": [1, "two"]}, "head": {"a.b": [2]}});
                },
                "$.tests[0].samples.base.\"a.b\"",
                "not the text \"two\"",
            ),
        ];
        let wrong: Vec<String> = table
            .iter()
            .filter_map(|(edit, at, words)| check(edit, at, words).err())
            .collect();
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    /// An input file is read only when it is a regular file of UTF-8 text
    /// under the size limit: a directory or an oversized (sparse) file is
    /// refused before a byte is read, and bad UTF-8 is placed.
    #[test]
    fn an_input_file_is_checked_before_it_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        let refused = |p: &Path| read_input(p).unwrap_err().to_string();
        assert!(refused(tmp.path()).ends_with("not a regular file"));
        let big = tmp.path().join("big.json");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_INPUT_BYTES + 1)
            .unwrap();
        assert!(
            refused(&big).contains("over the limit"),
            "{}",
            refused(&big)
        );
        let latin1 = tmp.path().join("latin1.json");
        std::fs::write(&latin1, b"{\"x\": \"caf\xe9\"}").unwrap();
        assert!(refused(&latin1).ends_with("not UTF-8 text (byte 10 is invalid)"));
        assert!(refused(&tmp.path().join("none.json")).ends_with("no such file"));
    }
}
