//! Reading a kernel test robot report back into a report input: the mail's
//! headers and its text become the typed `ReportInput` `perfbot report`
//! takes (commits, tree or patch, tests with their pre-aggregated rows,
//! headline, recipients, date) with the layout the mail was written in, in
//! its `style`. Pure: the caller decodes the mail.
//!
//! The robot's mails changed over the years (see `Layout`); the reader
//! accepts all of them and says which one it saw. Each section has its own
//! reader (`sections`, `rows`, `plots`); this module finds the sections and
//! puts their values together. Nothing of the body is kept as text except
//! the human preface, note and remarks: what cannot be read as data is an
//! error naming the line.

pub mod glance;
mod plots;
mod rows;
mod sections;

use super::plot::{PlotStyle, ReadPlot};
use crate::input::{
    AggregatedRow, Align, AttachmentSpec, Commit, HeadlineChoice, OtherTest, Patch, Person,
    Recipients, ReportInput, ReproduceAt, StillOn, Style, Test, Tree,
};
use sections::{Extra, Origin};
use serde_json::{Map, Value};

pub use crate::model::layout::Layout;

impl ParseError {
    /// The mail is not a performance report at all (rather than one that
    /// could not be read).
    pub fn not_a_report(&self) -> bool {
        self.line == 0
    }
}

/// What the mail's headers say, decoded by the caller.
#[derive(Debug, Clone, Default)]
pub struct Headers {
    pub subject: String,
    pub from_name: String,
    pub from_email: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    /// RFC 3339.
    pub date: Option<String>,
    pub message_id: String,
    pub in_reply_to: Option<String>,
    /// The References header, oldest first, each `<id>`.
    pub references: Vec<String>,
    /// File names of the mail's attachments, in order.
    pub attachments: Vec<String>,
    /// The text was `format=flowed` (and is given unflowed): it cannot carry
    /// a space at a line's end.
    pub flowed: bool,
}

/// A report read back.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ParsedReport {
    pub layout: Layout,
    /// The report input (the schema of README's "Report input format"),
    /// its `style.layout` the layout read.
    pub input: ReportInput,
    /// Who the mail names in `Reported-by:` (name, address).
    pub reported_by: Option<(String, String)>,
    /// The URL the materials link starts with (before the Message-ID).
    pub materials_base: Option<String>,
    /// The URL the `Closes:`/`Link:` tag starts with (before the Message-ID).
    pub archive_base: Option<String>,
    /// The disclaimer paragraph, when the mail has one.
    pub disclaimer: Option<String>,
    /// The lines after the `-- ` signature separator.
    pub signature: Option<String>,
    /// The indented "To reproduce:" instructions, when the mail has them;
    /// empty when it has neither them nor the materials' link.
    pub reproduce: Option<String>,
    /// The name after the last "Thanks,".
    pub signoff: Option<String>,
}

/// Why a mail could not be read as a report.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ParseError {
    /// 1-based line of the body (0: the mail as a whole).
    pub line: usize,
    pub message: String,
}

/// The line is the decoded text's, not the file's (headers, transfer
/// encodings and an archive's note lie between), so the message says so.
impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => f.write_str(&self.message),
            n => write!(f, "line {n} of its text: {}", self.message),
        }
    }
}

fn err(line: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line: line + 1,
        message: message.into(),
    }
}

const RULE: &str =
    "=========================================================================================";

/// The line above the rows the robot once appended after its signature.
const APPENDIX: &str = "<below more details following above table FYI>";

/// The robot's sentence of 2014.
const SENTENCE_2014: &str = "FYI, we noticed the below changes on";

/// The parameter a 2014 test case's path gives its parameters' values
/// under (`300s-migrate`): the mail does not name them one by one.
pub const PATH_PARAMS: &str = "path_params";

/// Read a report mail's body (decoded text) with its headers.
pub fn parse(h: &Headers, body: &str) -> Result<ParsedReport, ParseError> {
    let text = body.replace("\r\n", "\n");
    let lines: Vec<&str> = text.lines().collect();
    Reader { lines: &lines }.parse(h)
}

struct Reader<'a> {
    lines: &'a [&'a str],
}

/// One comparison group of the details.
struct Group {
    axes: Vec<(String, String)>,
    base_sha: String,
    base_subject: String,
    rows: Vec<AggregatedRow>,
    /// `lkp-skl-fpga01: 104 threads …` above the group (not for the first).
    machine: Option<(String, String)>,
    /// The bisect plots under the table, and how they were drawn.
    plots: Vec<ReadPlot>,
    plot_style: Option<PlotStyle>,
}

impl Group {
    /// The value of one of the table's parameters (empty if it has none).
    fn axis(&self, k: &str) -> String {
        self.axes
            .iter()
            .find(|(a, _)| a == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }
}

/// The sections of a mail of 2016 on, read (`Reader::sections`).
struct Sections {
    preface: Option<String>,
    note: Option<String>,
    commit: sections::CommitBlock,
    still: Vec<StillOn>,
    block: sections::TestBlock,
    extras: Vec<Extra>,
    materials_base: Option<String>,
    reproduce: Option<String>,
    appendix: Vec<AggregatedRow>,
    groups: Vec<Group>,
    read: StyleSigns,
}

/// What the mail's layout and style are told by (`Reader::style`).
struct StyleSigns {
    /// The robot's sentence is of 2023 on ("…, we noticed" is older).
    modern: bool,
    /// The test block lists kconfig lines.
    config_lines: bool,
    headline: sections::Headline,
    align: Option<Align>,
    box_width: Option<usize>,
    tags: sections::Tags,
    ending: sections::Ending,
    /// How the first test with bisect plots drew them.
    plot_style: Option<PlotStyle>,
}

impl<'a> Reader<'a> {
    fn find(&self, from: usize, pred: impl Fn(&str) -> bool) -> Option<usize> {
        (from..self.lines.len()).find(|&i| pred(self.lines[i]))
    }

    fn parse(&self, h: &Headers) -> Result<ParsedReport, ParseError> {
        let (anchor, sentence) = self.opening()?;
        if self.lines[sentence] == SENTENCE_2014 {
            return self.parse_2014(h, sentence);
        }
        let r = self.sections(h, anchor, sentence)?;
        let first = r
            .groups
            .first()
            .ok_or_else(|| err(self.lines.len().saturating_sub(1), "no comparison table"))?;
        let base = Commit {
            sha: first.base_sha.clone(),
            subject: first.base_subject.clone(),
            ..Commit::default()
        };
        let (tests, in_addition_only) = tests_of(&r.groups, &r.block, &r.extras, r.appendix)?;
        let (layout, style) = self.style(h, sentence, &r.read);
        let (tree, patch) = origin_of(h, r.commit.origin, &r.commit.subject);
        let input = ReportInput {
            date: h.date.clone(),
            commit: commit_of(h, r.commit.sha, r.commit.subject),
            base,
            tree,
            patch,
            still_regression_on: r.still,
            in_addition_only,
            tests,
            recipients: recipients_of(h),
            headline: Some(HeadlineChoice {
                metric: r.read.headline.metric,
                kind: Some(r.read.headline.kind),
            }),
            preface: r.preface,
            note: r.note,
            attachments: attachments_of(h),
            trailer: r.read.ending.trailer,
            unread: Vec::new(),
            style,
        };
        Ok(ParsedReport {
            layout,
            input,
            reported_by: r.read.tags.reported_by,
            materials_base: r.materials_base,
            archive_base: r.read.tags.archive_base,
            disclaimer: r.read.ending.disclaimer,
            signature: r.read.ending.signature,
            reproduce: r.reproduce,
            signoff: r.read.ending.signoff,
        })
    }

    /// Every section of a mail of 2016 on, its robot's sentence at
    /// `sentence` and its greeting (or the sentence) at `anchor`.
    fn sections(
        &self,
        h: &Headers,
        anchor: usize,
        sentence: usize,
    ) -> Result<Sections, ParseError> {
        let lines = self.lines;
        // A human note between the greeting and the robot's sentence.
        let note = if lines[anchor] == "Hello," {
            sections::trimmed_block(&lines[anchor + 1..sentence])
        } else {
            None
        };
        let headline = sections::headline(lines, sentence)?;
        let tree = sections::tree_name(&h.subject).unwrap_or_default();
        let commit = sections::commit_block(lines, sentence, &tree)?;
        let test_start = self
            .find(commit.at, |l| {
                l.starts_with("testcase: ") || l.starts_with("in testcase: ")
            })
            .ok_or_else(|| err(commit.at, "no \"testcase:\" line"))?;
        let (still, align) = sections::tips(lines, commit.at, test_start)?;
        let block = sections::test_block(lines, test_start)?;
        let (extras, box_width) = self.in_addition(block.end)?;
        let materials_base = sections::materials_base(lines, &h.message_id);
        let appendix = self.appendix(sentence)?;
        // The details: one group per test.
        let groups = self.groups(&block)?;
        Ok(Sections {
            preface: sections::trimmed_block(&lines[..anchor]),
            note,
            commit,
            still,
            reproduce: sections::reproduce(lines, materials_base.is_some()),
            materials_base,
            extras,
            appendix,
            read: StyleSigns {
                modern: !lines[sentence].starts_with("FYI, we noticed"),
                config_lines: block.kconfig.is_some(),
                headline,
                align,
                box_width,
                tags: sections::tags(lines, &h.message_id),
                ending: sections::ending(lines),
                plot_style: groups.iter().find_map(|g| g.plot_style),
            },
            groups,
            block,
        })
    }

    /// The layout the mail was written in, and the style that renders it
    /// back as it was.
    fn style(&self, h: &Headers, sentence: usize, r: &StyleSigns) -> (Layout, Style) {
        let lines = self.lines;
        let (headline, tags) = (&r.headline, &r.tags);
        let layout = self.layout(
            h,
            r.modern,
            headline,
            r.config_lines,
            tags.link,
            r.ending.footer,
        );
        let rule = "-".repeat(98) + ">";
        let details_rule = self
            .find(sentence, |l| l.starts_with("Details are as below"))
            .is_none_or(|d| lines.get(d + 1).is_none_or(|l| *l == rule));
        let style = Style {
            layout: Some(layout),
            still_regression_align: r.align,
            in_addition_width: r.box_width,
            tags: !(headline.kind == "regression" && tags.reported_by.is_none()),
            details_rule,
            reproduce_at: self.reproduce_at(sentence),
            // A `Closes:` tag in a mail of the `Link:` era (May 2023).
            archive_tag: (layout == Layout::Lkp2023Apr && !tags.link && tags.closes)
                .then_some(crate::input::ArchiveTag::Closes),
            remarks: sections::remarks(lines, sentence),
            plot_style: r.plot_style.filter(|s| *s != layout.plot_style()),
            ..Style::default()
        };
        (layout, style)
    }

    /// 2014's `test case: <tbox>/<testcase>/<parameters>` line at `tc`, as
    /// a test without its table: the path's parameters are one value
    /// (`PATH_PARAMS`), and the machine is named only by its tbox.
    fn test_case_2014(&self, tc: usize) -> Result<Test, ParseError> {
        let mut path = self.lines[tc]["test case: ".len()..].splitn(3, '/');
        let (tbox, testcase, rest) = match (path.next(), path.next(), path.next()) {
            (Some(t), Some(c), rest) if !t.is_empty() && !c.is_empty() => (t, c, rest),
            _ => return Err(err(tc, "a test case is `<tbox>/<testcase>/<parameters>`")),
        };
        let mut params = Map::new();
        if let Some(rest) = rest {
            params.insert(PATH_PARAMS.into(), Value::String(rest.into()));
        }
        Ok(Test {
            testcase: testcase.into(),
            description: None,
            url: None,
            machine: Some(tbox.into()),
            tbox_group: tbox.into(),
            params,
            kconfig: None,
            compiler: None,
            rootfs: None,
            samples: None,
            aggregated: None,
            bisect: None,
            keep_order: true,
            appendix: Vec::new(),
            headline: None,
        })
    }

    /// 2014's table under its test case: the base commit's digits over the
    /// columns and their rules, then the rows up to a blank line. Returns the
    /// base commit, the rows and the line after them.
    fn table_2014(&self, tc: usize) -> Result<(&'a str, Vec<AggregatedRow>, usize), ParseError> {
        let lines = self.lines;
        let rule_at = self
            .find(tc + 1, |l| l.starts_with("---------------"))
            .ok_or_else(|| {
                err(
                    tc,
                    "no column rule `---------------  ----…` under the test case",
                )
            })?;
        let base_sha = lines[rule_at - 1]
            .split_whitespace()
            .next()
            .filter(|s| s.len() >= 7 && s.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| {
                err(
                    rule_at - 1,
                    "the columns are titled by their commits' digits",
                )
            })?;
        let mut table = Vec::new();
        let mut j = rule_at + 1;
        while j < lines.len() && !lines[j].trim().is_empty() {
            // A failure count prints as in later tables (perfbot writes one so).
            let row = rows::row_2014(lines[j]).or_else(|| rows::failure_row(lines[j]));
            table.push(row.ok_or_else(|| {
                err(
                    j,
                    "a row is `<mean> ~ N%  <change>%  <mean> ~ N%  TOTAL <metric>`",
                )
            })?);
            j += 1;
        }
        if table.is_empty() {
            return Err(err(rule_at, "the table has no rows"));
        }
        Ok((base_sha, table, j))
    }

    /// The greeting (`Hello,`, `Greeting,`, or 2014's sentence itself) and
    /// the robot's sentence.
    fn opening(&self) -> Result<(usize, usize), ParseError> {
        let anchor = self
            .find(0, |l| {
                l == "Hello," || l == "Greeting," || l.starts_with("FYI, we noticed")
            })
            .ok_or_else(|| {
                ParseError {
                    line: 0,
                    message: "not a kernel test robot report: no \"Hello,\", \"Greeting,\" or \"FYI, we noticed\" line".into(),
                }
            })?;
        let sentence = self
            .find(anchor, |l| {
                // `kernel test robot noticed …`, or another sender's name
                // (perfbot's own reports say `perfbot noticed …`).
                l.starts_with("FYI, we noticed")
                    || (l.contains(" noticed a") && !l.starts_with('>') && !l.starts_with('|'))
            })
            // The robot's build and boot reports say "noticed the following …".
            .ok_or_else(|| ParseError {
                line: 0,
                message: "not a performance report (no \"noticed a N% regression/improvement\")"
                    .into(),
            })?;
        Ok((anchor, sentence))
    }

    /// "In addition to that": the other tests' machines and headlines, and
    /// the width their box is padded to, when the block comes before the
    /// rule that opens the details.
    fn in_addition(
        &self,
        from: usize,
    ) -> Result<(Vec<sections::Extra>, Option<usize>), ParseError> {
        let lines = self.lines;
        match self.find(from, |l| l.starts_with("In addition to that")) {
            Some(a) if a < self.find(from, |l| l == RULE).unwrap_or(lines.len()) => Ok((
                sections::extras(lines, a)?,
                sections::padded_box_width(&lines[a..]),
            )),
            _ => Ok((Vec::new(), None)),
        }
    }

    /// Which of the robot's layouts the mail is in: from the sentence's
    /// wording (`modern`), the headline's sign and kind, whether the test
    /// block lists kconfig lines, the tags, the footer, and the date.
    fn layout(
        &self,
        h: &Headers,
        modern: bool,
        headline: &sections::Headline,
        config_lines: bool,
        link: bool,
        footer: bool,
    ) -> Layout {
        let lines = self.lines;
        let signed = headline.change.starts_with('-');
        let before_2024_11 = Layout::before_blank_sign(h.date.as_deref());
        // The first "Hello," mails asked for one tag, in the older words.
        let one_tag = lines.contains(&"If you fix the issue, kindly add following tag");
        match (modern, config_lines) {
            (true, false) if link || one_tag => Layout::Lkp2023Apr,
            (true, true) if signed || (headline.kind != "regression" && before_2024_11) => {
                Layout::Lkp2024
            }
            (true, true) => Layout::with_config_lines(h.date.as_deref()),
            (true, false) => Layout::without_config_lines(h.date.as_deref()),
            (false, _) if footer => Layout::Lkp2021,
            (false, _) if lines.contains(&"-- ") && link => Layout::Lkp2022Nov,
            (false, _) if lines.contains(&"-- ") => Layout::Lkp2022,
            (false, _) => Layout::Lkp2018,
        }
    }

    /// "To reproduce:" after the first table: the block's place of late 2022.
    fn reproduce_at(&self, sentence: usize) -> ReproduceAt {
        let first_table = self.find(sentence, |l| l.starts_with("=========="));
        let reproduce_line = self.find(sentence, |l| l == "To reproduce:");
        match (first_table, reproduce_line) {
            (Some(t), Some(r)) if r > t => ReproduceAt::End,
            _ => ReproduceAt::Details,
        }
    }

    /// Rows after the signature, under the robot's line saying so.
    fn appendix(&self, from: usize) -> Result<Vec<AggregatedRow>, ParseError> {
        let Some(a) = self.find(from, |l| l == APPENDIX) else {
            return Ok(Vec::new());
        };
        self.lines
            .iter()
            .enumerate()
            .skip(a + 1)
            .filter(|(_, row)| !row.is_empty())
            .map(|(j, row)| rows::perf_row(row).ok_or_else(|| err(j, "cannot read this row")))
            .collect()
    }

    /// A mail of 2014, from its sentence at `fyi`: the tree and commit, the
    /// test's path, the `~` table, the plots.
    fn parse_2014(&self, h: &Headers, fyi: usize) -> Result<ParsedReport, ParseError> {
        let lines = self.lines;
        // `Hi <Name>,` above the sentence; anything before it is a preface.
        let hi = (0..fyi).rev().find(|&i| {
            lines[i] == "Hi," || (lines[i].starts_with("Hi ") && lines[i].ends_with(','))
        });
        let preface = sections::trimmed_block(&lines[..hi.unwrap_or(fyi)]);
        let c = self
            .find(fyi, |l| l.starts_with("commit "))
            .ok_or_else(|| err(fyi, "no `commit <sha> (\"<subject>\")` line"))?;
        let (sha, subject) = sections::commit_line(lines[c])
            .ok_or_else(|| err(c, "a commit line is `commit <40 hex> (\"<subject>\")`"))?;
        let tree = (c > fyi + 1)
            .then(|| lines[c - 1].rsplit_once(' '))
            .flatten()
            .map(|(url, branch)| Tree {
                name: None,
                url: url.into(),
                branch: branch.into(),
            });
        let tc = self
            .find(c, |l| l.starts_with("test case: "))
            .ok_or_else(|| err(c, "no `test case: <tbox>/<testcase>/<parameters>` line"))?;
        let mut test = self.test_case_2014(tc)?;
        let (base_sha, table, j) = self.table_2014(tc)?;
        let (metric, kind) = headline_2014(&h.subject, &table);
        // The plots, between the table's legend and the plots' own.
        let (read, plot_style) = plots::plots_2014(lines, j);
        let bisect = (!read.is_empty()).then(|| plots::bisect_of(&table, &read));
        test.aggregated = Some(table);
        test.bisect = bisect;
        let input = ReportInput {
            date: h.date.clone(),
            commit: commit_of(h, sha, subject),
            base: Commit {
                sha: base_sha.into(),
                ..Commit::default()
            },
            tree,
            tests: vec![test],
            recipients: recipients_of(h),
            headline: Some(HeadlineChoice {
                metric,
                kind: Some(kind),
            }),
            preface,
            attachments: attachments_of(h),
            style: Style {
                layout: Some(Layout::Lkp2014),
                plot_style: plot_style.filter(|s| *s != Layout::Lkp2014.plot_style()),
                ..Style::default()
            },
            ..ReportInput::default()
        };
        let ending = sections::ending(lines);
        Ok(ParsedReport {
            layout: Layout::Lkp2014,
            input,
            reported_by: None,
            materials_base: None,
            archive_base: None,
            disclaimer: ending.disclaimer,
            signature: None,
            reproduce: None,
            signoff: ending.signoff,
        })
    }

    /// Every comparison group of the details; the first is the test of
    /// `block`.
    fn groups(&self, block: &sections::TestBlock) -> Result<Vec<Group>, ParseError> {
        let lines = self.lines;
        let mut out: Vec<Group> = Vec::new();
        let mut i = 0;
        let mut pending_machine: Option<(String, String)> = None;
        while i < lines.len() {
            let l = lines[i];
            if l.starts_with("***************") {
                if let Some(m) = lines.get(i + 1).and_then(|m| m.split_once(": ")) {
                    pending_machine = Some((m.0.to_string(), m.1.to_string()));
                }
                i += 1;
                continue;
            }
            if l != RULE {
                i += 1;
                continue;
            }
            let first = out.is_empty().then_some(block);
            let axes = self.axes(i, first)?;
            let (base_sha, base_subject, header) = self.base_commit(i + 3)?;
            let (rows, j) = self.table_rows(header)?;
            let (plots, plot_style) = plots::plots_after(lines, j);
            out.push(Group {
                axes,
                base_sha,
                base_subject,
                rows,
                machine: pending_machine.take(),
                plots,
                plot_style,
            });
            i = j;
        }
        Ok(out)
    }

    /// A table's parameters under its rule at `rule`: `a/b/c:`, then the
    /// values `x/y/z`; for the first test, its block says what some of the
    /// values are.
    fn axes(
        &self,
        rule: usize,
        block: Option<&sections::TestBlock>,
    ) -> Result<Vec<(String, String)>, ParseError> {
        let lines = self.lines;
        let keys = lines
            .get(rule + 1)
            .and_then(|k| k.strip_suffix(':'))
            .ok_or_else(|| {
                err(
                    rule + 1,
                    "a table starts with the parameter names, `a/b/c:`",
                )
            })?;
        // The values are indented by two spaces; a value may begin with a
        // space of its own.
        let values = lines
            .get(rule + 2)
            .map(|v| v.strip_prefix("  ").unwrap_or_else(|| v.trim_start()))
            .ok_or_else(|| err(rule + 2, "the parameter values are missing"))?;
        let keys: Vec<&str> = keys.split('/').collect();
        let known = |k: &str| -> Option<String> {
            let b = block?;
            match k {
                "kconfig" => b.kconfig.clone(),
                "compiler" => b.compiler.clone(),
                _ => b.params.get(k).map(crate::compare::case_file::axis_text),
            }
        };
        Ok(split_axes(&keys, values, known))
    }

    /// The `commit:` block from `from` on: the base's sha (its column
    /// header's digits) and subject, and the line of the column rule.
    fn base_commit(&self, from: usize) -> Result<(String, String, usize), ParseError> {
        let lines = self.lines;
        let c = (from..lines.len())
            .find(|&j| lines[j].starts_with("commit:"))
            .ok_or_else(|| err(from, "no \"commit:\" line in the table"))?;
        let base_line = lines
            .get(c + 1)
            .map(|l| l.trim())
            .ok_or_else(|| err(c + 1, "no base commit line"))?;
        // `<sha> ("<subject>")`, or a bare release tag (`v6.16-rc4`).
        let base_subject = match base_line.split_once(" (\"") {
            Some((_, rest)) => rest.strip_suffix("\")").unwrap_or(rest),
            None if base_line.starts_with('v') && !base_line.contains(' ') => "",
            None => return Err(err(c + 1, "a commit line is `<sha> (\"<subject>\")`")),
        };
        // The column header: the base's 16 digits.
        let header = (c + 1..lines.len())
            .find(|&j| lines[j].starts_with("----------------"))
            .ok_or_else(|| err(c, "no column rule `---------------- …`"))?;
        let base_sha = lines[header - 1]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string();
        Ok((base_sha, base_subject.to_string(), header))
    }

    /// The rows under the column rule at `header`, `%stddev` and `fail:runs`
    /// blocks alike, to the blank line that ends the table; returns them
    /// and that line.
    fn table_rows(&self, header: usize) -> Result<(Vec<AggregatedRow>, usize), ParseError> {
        let lines = self.lines;
        let mut rows = Vec::new();
        let mut j = header + 1;
        let mut failures = false;
        while j < lines.len() {
            let row = lines[j];
            let t = row.trim();
            if t.starts_with("%stddev") {
                failures = false;
            } else if t.starts_with("fail:runs") {
                failures = true;
            } else if t.starts_with('\\') || t.starts_with('|') {
            } else if t.is_empty() {
                // A blank line ends the table unless another block follows.
                let next = lines.get(j + 1).map(|n| n.trim()).unwrap_or("");
                if !(next.starts_with("%stddev") || next.starts_with("fail:runs")) {
                    break;
                }
            } else if failures {
                rows.push(
                    rows::failure_row(row).ok_or_else(|| err(j, "cannot read this failure row"))?,
                );
            } else {
                rows.push(rows::perf_row(row).ok_or_else(|| err(j, "cannot read this table row"))?);
            }
            j += 1;
        }
        Ok((rows, j))
    }
}

/// The values `x/y/z` of the parameters `keys`. A value may hold a slash
/// itself: one known to be `known(key)` takes as many parts as it has, and
/// the parts left over go to the last key whose value is not known.
fn split_axes(
    keys: &[&str],
    values: &str,
    known: impl Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let parts: Vec<&str> = values.split('/').collect();
    let mut extra = parts.len().saturating_sub(keys.len());
    let mut widths = vec![1; keys.len()];
    for (w, k) in widths.iter_mut().zip(keys) {
        let slashes = known(k).map_or(0, |v| v.matches('/').count());
        if slashes > 0 && slashes <= extra {
            *w += slashes;
            extra -= slashes;
        }
    }
    let unknown = keys.iter().rposition(|k| known(k).is_none());
    if let Some(w) = unknown
        .or(keys.len().checked_sub(1))
        .map(|i| &mut widths[i])
    {
        *w += extra;
    }
    let mut at = 0;
    keys.iter()
        .zip(widths)
        .map(|(k, w)| {
            let end = (at + w).min(parts.len());
            let v = parts[at.min(end)..end].join("/");
            at = end;
            (k.to_string(), v)
        })
        .collect()
}

/// Test `n`'s machine: the first test's own line; the others' from the
/// `***` line above their table, else from the "In addition" box (none where
/// it has no machine row, 2026), else (the same machine) the first test's.
fn machine_of(
    n: usize,
    g: &Group,
    block: &sections::TestBlock,
    extras: &[Extra],
    testcase: &str,
) -> Option<String> {
    let first_machine = Some(block.machine.clone().unwrap_or_default());
    if n == 0 {
        first_machine
    } else if let Some(m) = &g.machine {
        Some(m.1.clone())
    } else if let Some(e) = extras.iter().find(|e| e.testcase == testcase) {
        (!e.machine.is_empty()).then(|| e.machine.clone())
    } else {
        first_machine
    }
}

/// A later test's headline, from its line in the "In addition" box. Tests
/// of one testcase on one machine are boxed in table order: the first line
/// not yet given a table (`with_table` notes which are).
fn boxed_headline(
    extras: &[Extra],
    with_table: &mut [bool],
    testcase: &str,
    machine: Option<&str>,
) -> Option<HeadlineChoice> {
    let same = |e: &Extra| {
        e.testcase == testcase && machine.map_or(e.machine.is_empty(), |m| e.machine == m)
    };
    let unused = (0..extras.len()).find(|&k| !with_table[k] && same(&extras[k]));
    let k = unused.or_else(|| extras.iter().position(same))?;
    with_table[k] = true;
    let e = &extras[k];
    // A box line without a change names no headline.
    Some(HeadlineChoice {
        metric: e.metric.clone(),
        kind: (!e.metric.is_empty()).then(|| e.kind.clone()),
    })
}

/// The tests of the details, one per group, and the tests the "In
/// addition" box names without a table in the mail. The first test's block
/// gives its machine, description and parameters in job order.
fn tests_of(
    groups: &[Group],
    block: &sections::TestBlock,
    extras: &[Extra],
    mut appendix: Vec<AggregatedRow>,
) -> Result<(Vec<Test>, Vec<OtherTest>), ParseError> {
    let mut tests = Vec::new();
    let mut with_table = vec![false; extras.len()];
    for (n, g) in groups.iter().enumerate() {
        let testcase = g.axis("testcase");
        let machine = machine_of(n, g, block, extras, &testcase);
        if g.rows.is_empty() {
            return Err(err(0, format!("the table of test {} has no rows", n + 1)));
        }
        let headline = if n > 0 {
            boxed_headline(extras, &mut with_table, &testcase, machine.as_deref())
        } else {
            None
        };
        tests.push(Test {
            testcase,
            description: block.description.clone().filter(|_| n == 0),
            url: block.url.clone().filter(|_| n == 0),
            machine,
            tbox_group: g.axis("tbox_group"),
            params: params_of(g, (n == 0).then_some(&block.params)),
            kconfig: Some(g.axis("kconfig")),
            compiler: Some(g.axis("compiler")),
            rootfs: Some(g.axis("rootfs")),
            samples: None,
            aggregated: Some(g.rows.clone()),
            bisect: (!g.plots.is_empty()).then(|| plots::bisect_of(&g.rows, &g.plots)),
            keep_order: true,
            // The rows after the signature belong to the first test.
            appendix: std::mem::take(&mut appendix),
            headline,
        });
    }
    let table_less = extras
        .iter()
        .zip(&with_table)
        .filter(|(_, t)| !**t)
        .map(|(e, _)| OtherTest {
            testcase: e.testcase.clone(),
            metric: e.metric.clone(),
            change: e.change.clone(),
            kind: e.kind.clone(),
            machine: (!e.machine.is_empty()).then(|| e.machine.clone()),
            params: e.params.clone(),
        })
        .collect();
    Ok((tests, table_less))
}

/// A test's parameters: the first test's in job order (its parameters
/// block, `job`), then any other axis the table shows; the others' in the
/// table's (sorted) order.
fn params_of(g: &Group, job: Option<&Map<String, Value>>) -> Map<String, Value> {
    let mut p = job.cloned().unwrap_or_default();
    for (k, v) in &g.axes {
        let standard = matches!(
            k.as_str(),
            "compiler" | "kconfig" | "rootfs" | "tbox_group" | "testcase"
        );
        if standard && !job.is_some_and(|j| j.contains_key(k)) {
            continue;
        }
        if !p.contains_key(k) {
            p.insert(k.clone(), Value::String(v.clone()));
        }
    }
    p
}

/// The tree, or the patch under test with its thread: the report answers
/// the patch's Message-ID (its In-Reply-To, else the patch link's last
/// part) and carries the rest of its References.
fn origin_of(h: &Headers, origin: Origin, commit_subject: &str) -> (Option<Tree>, Option<Patch>) {
    match origin {
        Origin::Tree(t) => (Some(t), None),
        Origin::Unnamed => (None, None),
        Origin::Patch(p) => {
            let references = h
                .references
                .iter()
                .filter(|r| Some(*r) != h.in_reply_to.as_ref())
                .cloned()
                .collect();
            // No Message-ID to answer: left empty, which `report` refuses
            // by name (`$.patch.message_id`).
            let message_id = match (&h.in_reply_to, &p.link) {
                (Some(id), _) => id.clone(),
                (None, Some(link)) => {
                    let id = link.trim_end_matches('/').rsplit('/').next().unwrap_or("");
                    format!("<{id}>")
                }
                (None, None) => String::new(),
            };
            let patch = Patch {
                url: p.url,
                base: p.base,
                link: p.link,
                subject: p.subject.unwrap_or_else(|| commit_subject.into()),
                message_id,
                references,
            };
            (None, Some(patch))
        }
    }
}

/// The commit, with its author: the person the report is addressed to.
fn commit_of(h: &Headers, sha: String, subject: String) -> Commit {
    let author =
        h.to.first()
            .and_then(|a| sections::split_mailbox(a))
            .map(|(name, email)| Person { name, email });
    Commit {
        sha,
        subject,
        author,
        committer: None,
    }
}

/// The mail's own recipients, exactly.
fn recipients_of(h: &Headers) -> Recipients {
    Recipients {
        to: h.to.clone(),
        cc: h.cc.clone(),
        exact: true,
    }
}

/// The mail's attachments, by name (they shape the text; the files are
/// saved only on request).
fn attachments_of(h: &Headers) -> Vec<AttachmentSpec> {
    h.attachments
        .iter()
        .cloned()
        .map(AttachmentSpec::Name)
        .collect()
}

/// The headline of 2014: the Subject's `<change> <metric>`, else the first
/// row; a metric of no known direction is a "change", as the mail says.
fn headline_2014(subject: &str, rows: &[AggregatedRow]) -> (String, String) {
    let metric = subject
        .split(": ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().nth(1))
        .filter(|m| rows.iter().any(|r| r.metric == *m))
        .unwrap_or(&rows[0].metric)
        .to_string();
    let change = rows
        .iter()
        .find(|r| r.metric == metric)
        .and_then(|r| r.change.as_deref())
        .unwrap_or("");
    let kind = kind_2014(&metric, change);
    (metric, kind.to_string())
}

/// The kind of a 2014 headline, which the mail never names: its change as
/// printed (`-18.2%`; none is 0) read by the metric's direction (`change`
/// for a metric without one).
pub(super) fn kind_2014(metric: &str, change: &str) -> &'static str {
    use crate::compare::headline::Verdict;
    use crate::compare::rules::DirectionTable;
    static DIRECTIONS: std::sync::LazyLock<DirectionTable> =
        std::sync::LazyLock::new(DirectionTable::default_table);
    let change = change.trim_end_matches('%').parse::<f64>().unwrap_or(0.0);
    match Verdict::of(DIRECTIONS.direction(metric), change) {
        Verdict::Undefined => "change",
        v => v.word(),
    }
}

#[cfg(test)]
mod tests {
    use super::split_axes;

    #[test]
    fn axes_with_slashes_in_their_values() {
        type Known = &'static [(&'static str, &'static str)];
        let cases: &[(&str, &str, Known, &[&str])] = &[
            ("a/b/c", "x/y/z", &[], &["x", "y", "z"]),
            // Too few values: the last keys have none.
            ("a/b/c", "x/y", &[], &["x", "y", ""]),
            // A slash too many and nothing known: the rest to the last key.
            ("a/b/c", "x/y/z/w", &[], &["x", "y", "z/w"]),
            // A known value takes its own parts.
            ("a/b/c", "x/y/z/w", &[("a", "x/y")], &["x/y", "z", "w"]),
            (
                "a/b/c/d",
                "//4k/x/y/z",
                &[("a", "/"), ("b", "4k")],
                &["/", "4k", "x", "y/z"],
            ),
            // The rest to the last key whose value is not known.
            ("a/b/c", "x/y/z/w", &[("c", "w")], &["x", "y/z", "w"]),
            // A known value that does not fit is not forced in.
            ("a/b", "x/y", &[("a", "x/y")], &["x", "y"]),
        ];
        for (keys, values, known, want) in cases {
            let keys: Vec<&str> = keys.split('/').collect();
            let got = split_axes(&keys, values, |k| {
                known
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            });
            let got: Vec<&str> = got.iter().map(|(_, v)| v.as_str()).collect();
            assert_eq!(&got, want, "{keys:?} {values}");
        }
    }
}
