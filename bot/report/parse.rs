//! Reading a kernel test robot report back into a report input: the mail's
//! headers and its text become the structured input `perfbot report` takes
//! (commits, tree or patch, tests with their pre-aggregated rows, headline,
//! recipients, date) plus the layout the mail was written in. Pure: the
//! caller decodes the mail.
//!
//! The robot's mails changed over the years (see `Layout`); the reader
//! accepts all of them and says which one it saw. Nothing of the body is
//! kept as text except the human preface: what cannot be read as data is an
//! error naming the line.

use super::plot::{self, PlotStyle, ReadPlot};
use crate::model::spacing::{Remark, Section};
use serde_json::{json, Map, Value};

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
    /// The report input (the schema of README's "Report input format").
    pub input: Value,
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
#[error("line {line}: {message}")]
pub struct ParseError {
    /// 1-based line of the body (0: the mail as a whole).
    pub line: usize,
    pub message: String,
}

fn err(line: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line: line + 1,
        message: message.into(),
    }
}

const RULE: &str =
    "=========================================================================================";

/// Read a report mail's body (decoded text) with its headers.
pub fn parse(h: &Headers, body: &str) -> Result<ParsedReport, ParseError> {
    let text = body.replace("\r\n", "\n");
    let lines: Vec<&str> = text.lines().collect();
    let mut r = Reader { lines: &lines };
    r.parse(h)
}

struct Reader<'a> {
    lines: &'a [&'a str],
}

/// One comparison group of the details.
struct Group {
    axes: Vec<(String, String)>,
    base_sha: String,
    base_subject: String,
    rows: Vec<Value>,
    /// `lkp-skl-fpga01: 104 threads …` above the group (not for the first).
    machine: Option<(String, String)>,
    /// The bisect plots under the table, and how they were drawn.
    plots: Vec<ReadPlot>,
    plot_style: Option<PlotStyle>,
}

/// A test of the "In addition to that" table.
struct Extra {
    testcase: String,
    metric: String,
    /// The change as printed (`-23.9%`, `127.0%`).
    change: String,
    kind: String,
    machine: String,
    params: Vec<String>,
}

impl<'a> Reader<'a> {
    fn find(&self, from: usize, pred: impl Fn(&str) -> bool) -> Option<usize> {
        (from..self.lines.len()).find(|&i| pred(self.lines[i]))
    }

    fn parse(&mut self, h: &Headers) -> Result<ParsedReport, ParseError> {
        let lines = self.lines;
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
        let preface = trimmed_block(&lines[..anchor]);
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
        if lines[sentence] == SENTENCE_2014 {
            return self.parse_2014(h, sentence);
        }
        let modern = !lines[sentence].starts_with("FYI, we noticed");
        // A human note between the greeting and the robot's sentence.
        let note = if lines[anchor] == "Hello," {
            trimmed_block(&lines[anchor + 1..sentence])
        } else {
            None
        };
        let remarks = remarks_in(lines, sentence);
        // Rows after the signature, under the robot's line saying so.
        let appendix = match self.find(sentence, |l| l == APPENDIX) {
            Some(a) => {
                let mut rows = Vec::new();
                for (j, row) in lines.iter().enumerate().skip(a + 1) {
                    if row.is_empty() {
                        continue;
                    }
                    rows.push(perf_row(row).ok_or_else(|| err(j, "cannot read this row"))?);
                }
                rows
            }
            None => Vec::new(),
        };
        let mut words = lines[sentence].to_string();
        if !words.ends_with(':') && sentence + 1 < lines.len() {
            words.push(' ');
            words.push_str(lines[sentence + 1].trim());
        }
        let (change, kind, metric) = match headline_words(&words) {
            Some(h) => h,
            // The robot's build and boot reports say "noticed the following …".
            None if !(words.contains("% regression") || words.contains("% improvement")) => {
                return Err(ParseError {
                    line: 0,
                    message:
                        "not a performance report (no \"noticed a N% regression/improvement\")"
                            .into(),
                })
            }
            None => {
                return Err(err(
                    sentence,
                    format!("cannot read the headline in {words:?}"),
                ))
            }
        };

        // commit: <sha> ("subject"), then the tree or the patch.
        let c = self
            .find(sentence, |l| {
                l.starts_with("commit: ") || l.starts_with("commit ")
            })
            .ok_or_else(|| err(sentence, "no \"commit:\" line"))?;
        let (sha, subject) = commit_line(lines[c])
            .ok_or_else(|| err(c, "a commit line is `commit: <40 hex> (\"<subject>\")`"))?;
        let mut tree: Option<Value> = None;
        let mut patch = Map::new();
        let mut i = c + 1;
        while i < lines.len() && !lines[i].trim().is_empty() {
            let l = lines[i];
            if let Some(v) = l.strip_prefix("url: ") {
                patch.insert("url".into(), json!(v));
            } else if let Some(v) = l.strip_prefix("base: ") {
                patch.insert("base".into(), json!(v));
            } else if let Some(v) = l.strip_prefix("patch link: ") {
                patch.insert("link".into(), json!(v));
            } else if let Some(v) = l.strip_prefix("patch subject: ") {
                patch.insert("subject".into(), json!(v));
            } else if let Some((url, branch)) = l.rsplit_once(' ') {
                let name = tree_name(&h.subject).unwrap_or_default();
                tree = Some(json!({"name": name, "url": url, "branch": branch}));
            }
            i += 1;
        }
        // [still regression on linus/master <sha>]
        let mut still = Vec::new();
        // Refs of different lengths are padded: before them (right-aligned)
        // or after them (left-aligned); the robot has done both.
        let mut align = None;
        let test_start = self
            .find(c, |l| {
                l.starts_with("testcase: ") || l.starts_with("in testcase: ")
            })
            .ok_or_else(|| err(c, "no \"testcase:\" line"))?;
        for (n, l) in lines.iter().enumerate().take(test_start).skip(c) {
            let (rest, failed) = match (
                l.strip_prefix("[still regression on"),
                l.strip_prefix("[test failed on"),
            ) {
                (Some(r), _) => (r, false),
                (_, Some(r)) => (r, true),
                _ => continue,
            };
            let padded_before = rest.starts_with("  ");
            let rest = rest.trim().trim_end_matches(']');
            if padded_before {
                align = Some("right");
            } else if rest.contains("  ") {
                align = Some("left");
            }
            let (r, s) = rest
                .rsplit_once(' ')
                .ok_or_else(|| err(n, "a still-regression line names a ref and a commit"))?;
            if failed {
                still.push(json!({"ref": r.trim(), "sha": s, "failed": true}));
            } else {
                still.push(json!({"ref": r.trim(), "sha": s}));
            }
        }

        // The test block.
        let mut test = Map::new();
        let mut params = Map::new();
        let mut description = None;
        let mut url = None;
        let mut i = test_start;
        while i < lines.len() {
            let l = lines[i];
            if let Some(v) = l
                .strip_prefix("testcase: ")
                .or_else(|| l.strip_prefix("in testcase: "))
            {
                test.insert("testcase".into(), json!(v));
            } else if let Some(v) = l.strip_prefix("config: ") {
                test.insert("kconfig".into(), json!(v));
            } else if let Some(v) = l.strip_prefix("compiler: ") {
                test.insert("compiler".into(), json!(v));
            } else if let Some(v) = l
                .strip_prefix("test machine: ")
                .or_else(|| l.strip_prefix("on test machine: "))
            {
                test.insert("machine".into(), json!(v));
            } else if l == "parameters:" || l == "with following parameters:" {
                i += 1;
                while i < lines.len() && lines[i].is_empty() {
                    i += 1;
                }
                while i < lines.len() && lines[i].starts_with('\t') {
                    let (k, v) = lines[i][1..]
                        .split_once(": ")
                        .or_else(|| lines[i][1..].split_once(':'))
                        .ok_or_else(|| err(i, "a parameter line is `\\t<key>: <value>`"))?;
                    params.insert(k.to_string(), json!(v));
                    i += 1;
                }
                continue;
            } else if let Some(v) = l.strip_prefix("test-description: ") {
                description = Some(v.to_string());
            } else if let Some(v) = l.strip_prefix("test-url: ") {
                url = Some(v.to_string());
            } else if l.starts_with("In addition to that")
                || l.starts_with("If you fix")
                || l.starts_with("Details are as below")
                || l.starts_with("the above")
            {
                break;
            }
            i += 1;
        }

        // "In addition to that": the other tests' machines and headlines.
        let (extras, box_width) = match self.find(i, |l| l.starts_with("In addition to that")) {
            Some(a) if a < self.find(i, |l| l == RULE).unwrap_or(lines.len()) => {
                (self.extras(a)?, padded_box_width(&lines[a..]))
            }
            _ => (Vec::new(), None),
        };

        // Tags.
        let mut reported_by = None;
        let mut archive_base = None;
        for l in lines.iter() {
            let t = l.trim_start_matches("| ");
            if let Some(v) = t.strip_prefix("Reported-by: ") {
                if reported_by.is_none() {
                    reported_by = split_mailbox(v);
                }
            } else if let Some(v) = t
                .strip_prefix("Closes: ")
                .or_else(|| t.strip_prefix("Link: "))
            {
                if archive_base.is_none() {
                    let id = h.message_id.trim_matches(['<', '>']);
                    archive_base = v
                        .strip_suffix(id)
                        .map(|b| b.trim_end_matches('/').to_string());
                }
            }
        }
        let materials_base = self
            .find(0, |l| {
                l.starts_with("The kernel config and materials to reproduce")
            })
            .and_then(|m| lines.get(m + 1))
            .and_then(|u| {
                u.strip_suffix(h.message_id.trim_matches(['<', '>']))
                    .map(|b| b.trim_end_matches('/').to_string())
            });
        let disclaimer_at = self.find(0, |l| l == "Disclaimer:");
        let disclaimer = self.disclaimer();

        // The signature: after `-- ` (2022 on), or the 2021 footer after a
        // `---` below the disclaimer (`0DAY/LKP+ Test Infrastructure …`).
        let footer_at = disclaimer_at
            .and_then(|d| self.find(d + 1, |l| l == "---"))
            .filter(|&f| lines.get(f + 1).is_some_and(|l| !l.is_empty()));
        let signature = self.find(0, |l| l == "-- ").or(footer_at).map(|d| {
            let end = self.find(d + 1, |l| l.is_empty()).unwrap_or(lines.len());
            lines[d + 1..end].join("\n")
        });
        let reproduce = self.find(0, |l| l == "To reproduce:").and_then(|d| {
            let mut end = d + 1;
            while end < lines.len() && (lines[end].is_empty() || lines[end].starts_with(' ')) {
                end += 1;
            }
            trimmed_block(&lines[d + 1..end])
        });
        // A mail with neither the materials' link nor "To reproduce:" has
        // an empty reproduce text (which prints no block).
        let reproduce = match (&reproduce, &materials_base) {
            (None, None) => Some(String::new()),
            _ => reproduce,
        };

        let signoff = self.signoff();

        // The details: one group per test.
        let groups = self.groups()?;
        let first = groups
            .first()
            .ok_or_else(|| err(lines.len().saturating_sub(1), "no comparison table"))?;

        let mut tests = Vec::new();
        let mut with_table = vec![false; extras.len()];
        for (n, g) in groups.iter().enumerate() {
            let axis = |k: &str| {
                g.axes
                    .iter()
                    .find(|(a, _)| a == k)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            let mut t = Map::new();
            let testcase = axis("testcase");
            t.insert("testcase".into(), json!(testcase));
            if n == 0 {
                if let Some(d) = &description {
                    t.insert("description".into(), json!(d));
                }
                if let Some(u) = &url {
                    t.insert("url".into(), json!(u));
                }
            }
            // The machine: the first test's own line; the others' from the
            // `***` line above their table, else from the "In addition" box,
            // else (the same machine) the first test's.
            let first_machine = test.get("machine").cloned().unwrap_or(json!(""));
            let machine = if n == 0 {
                first_machine
            } else if let Some(m) = &g.machine {
                json!(m.1)
            } else if let Some(e) = extras.iter().find(|e| e.testcase == testcase) {
                // No machine row in the box (2026): the test names none.
                if e.machine.is_empty() {
                    Value::Null
                } else {
                    json!(e.machine)
                }
            } else {
                first_machine
            };
            if !machine.is_null() {
                t.insert("machine".into(), machine);
            }
            t.insert("tbox_group".into(), json!(axis("tbox_group")));
            // Parameters: the first test's in job order (its parameters
            // block), then any other axis the table shows; the others' in
            // the table's (sorted) order.
            let mut p = if n == 0 { params.clone() } else { Map::new() };
            for (k, v) in &g.axes {
                let standard = matches!(
                    k.as_str(),
                    "compiler" | "kconfig" | "rootfs" | "tbox_group" | "testcase"
                );
                if standard && !(n == 0 && params.contains_key(k)) {
                    continue;
                }
                if !p.contains_key(k) {
                    p.insert(k.clone(), json!(v));
                }
            }
            t.insert("params".into(), Value::Object(p));
            t.insert("kconfig".into(), json!(axis("kconfig")));
            t.insert("compiler".into(), json!(axis("compiler")));
            t.insert("rootfs".into(), json!(axis("rootfs")));
            if g.rows.is_empty() {
                return Err(err(0, format!("the table of test {} has no rows", n + 1)));
            }
            t.insert("aggregated".into(), Value::Array(g.rows.clone()));
            t.insert("keep_order".into(), json!(true));
            if !g.plots.is_empty() {
                t.insert("bisect".into(), bisect_of(g));
            }
            if n == 0 && !appendix.is_empty() {
                t.insert("appendix".into(), json!(appendix));
            }
            if n > 0 {
                // Tests of one testcase on one machine are boxed in table
                // order: the first one not yet given a table.
                let same = |e: &Extra| {
                    e.testcase == testcase
                        && t.get("machine")
                            .map_or(e.machine.is_empty(), |m| e.machine == *m)
                };
                let unused = (0..extras.len()).find(|&k| !with_table[k] && same(&extras[k]));
                if let Some(k) = unused.or_else(|| extras.iter().position(same)) {
                    let e = &extras[k];
                    // A box line without a change names no headline.
                    let headline = if e.metric.is_empty() {
                        json!({"metric": ""})
                    } else {
                        json!({"metric": e.metric, "kind": e.kind})
                    };
                    t.insert("headline".into(), headline);
                    with_table[k] = true;
                }
            }
            tests.push(Value::Object(t));
        }
        // Tests the box names whose tables the mail does not give.
        let table_less: Vec<Value> = extras
            .iter()
            .zip(&with_table)
            .filter(|(_, t)| !**t)
            .map(|(e, _)| {
                let mut o = json!({"testcase": e.testcase, "metric": e.metric,
                       "change": e.change, "kind": e.kind, "params": e.params});
                if !e.machine.is_empty() {
                    o["machine"] = json!(e.machine);
                }
                o
            })
            .collect();

        let signed = change.starts_with('-');
        let before_2024_11 = Layout::before_blank_sign(h.date.as_deref());
        let link_tag = lines.iter().any(|l| l.starts_with("| Link: "));
        // The first "Hello," mails asked for one tag, in the older words.
        let one_tag = lines.contains(&"If you fix the issue, kindly add following tag");
        let layout = match (modern, test.contains_key("kconfig")) {
            (true, false) if link_tag || one_tag => Layout::Lkp2023Apr,
            (true, true) if signed || (kind != "regression" && before_2024_11) => Layout::Lkp2024,
            (true, true) => Layout::with_config_lines(h.date.as_deref()),
            (true, false) => Layout::without_config_lines(h.date.as_deref()),
            (false, _) if footer_at.is_some() => Layout::Lkp2021,
            (false, _) if lines.contains(&"-- ") && link_tag => Layout::Lkp2022Nov,
            (false, _) if lines.contains(&"-- ") => Layout::Lkp2022,
            (false, _) => Layout::Lkp2018,
        };

        let mut input = dated_commit(h, &sha, &subject);
        input.insert(
            "base".into(),
            json!({"sha": first.base_sha, "subject": first.base_subject}),
        );
        if !patch.is_empty() {
            patch.entry("subject").or_insert_with(|| json!(subject));
            let thread: Vec<&String> = h
                .references
                .iter()
                .filter(|r| Some(*r) != h.in_reply_to.as_ref())
                .collect();
            if !thread.is_empty() {
                patch.insert("references".into(), json!(thread));
            }
            if let Some(id) = &h.in_reply_to {
                patch.insert("message_id".into(), json!(id));
            } else if let Some(link) = patch.get("link").and_then(Value::as_str) {
                let id = link.trim_end_matches('/').rsplit('/').next().unwrap_or("");
                patch.insert("message_id".into(), json!(format!("<{id}>")));
            }
            input.insert("patch".into(), Value::Object(patch));
        } else if let Some(t) = tree {
            input.insert("tree".into(), t);
        }
        if !still.is_empty() {
            input.insert("still_regression_on".into(), Value::Array(still));
        }
        if let Some(a) = align {
            input.insert("still_regression_align".into(), json!(a));
        }
        if let Some(w) = box_width {
            input.insert("in_addition_width".into(), json!(w));
        }
        input.insert(
            "recipients".into(),
            json!({"to": h.to, "cc": h.cc, "exact": true}),
        );
        input.insert("headline".into(), json!({"metric": metric, "kind": kind}));
        if let Some(p) = preface {
            input.insert("preface".into(), json!(p));
        }
        if let Some(n) = note {
            input.insert("note".into(), json!(n));
        }
        if !remarks.is_empty() {
            input.insert("remarks".into(), Value::Array(remarks));
        }
        // Lines after the signature that are not the robot's (a
        // `#regzbot introduced:` line added by hand): kept as they are.
        if let Some(t) = self.trailer() {
            input.insert("trailer".into(), json!(t));
        }
        // "To reproduce:" after the first table: the block's place of late 2022.
        let first_table = self.find(sentence, |l| l.starts_with("=========="));
        let reproduce_at = self.find(sentence, |l| l == "To reproduce:");
        if let (Some(t), Some(r)) = (first_table, reproduce_at) {
            if r > t {
                input.insert("reproduce_at".into(), json!("end"));
            }
        }
        let rule = "-".repeat(98) + ">";
        if let Some(d) = self.find(sentence, |l| l.starts_with("Details are as below")) {
            if lines.get(d + 1).is_some_and(|l| *l != rule) {
                input.insert("details_rule".into(), json!(false));
            }
        }
        // A `Closes:` tag in a mail of the `Link:` era (May 2023).
        if layout == Layout::Lkp2023Apr
            && !link_tag
            && lines.iter().any(|l| l.starts_with("| Closes: "))
        {
            input.insert("archive_tag".into(), json!("Closes"));
        }
        if kind == "regression" && reported_by.is_none() {
            input.insert("tags".into(), json!(false));
        }
        input.insert("tests".into(), Value::Array(tests));
        if let Some(style) = groups.iter().find_map(|g| g.plot_style) {
            if style != PlotStyle::default() {
                input.insert("plot_style".into(), json!(style));
            }
        }
        if !table_less.is_empty() {
            input.insert("in_addition_only".into(), Value::Array(table_less));
        }
        if !h.attachments.is_empty() {
            input.insert("attachments".into(), json!(h.attachments));
        }
        Ok(ParsedReport {
            layout,
            input: styled(input, layout),
            reported_by,
            materials_base,
            archive_base,
            disclaimer,
            signature,
            reproduce,
            signoff,
        })
    }

    /// What follows the signature (from the blank line that ends it), when
    /// something does and it is not the robot's appendix of rows.
    fn trailer(&self) -> Option<String> {
        let lines = &self.lines;
        let d = self.find(0, |l| l == "-- ")?;
        let end = self.find(d + 1, |l| l.is_empty())?;
        let rest = &lines[end..];
        if rest.iter().all(|l| l.is_empty()) || rest.contains(&APPENDIX) {
            return None;
        }
        let last = rest.iter().rposition(|l| !l.is_empty())?;
        Some(rest[..=last].join("\n"))
    }

    /// The disclaimer paragraph, when the mail has one.
    fn disclaimer(&self) -> Option<String> {
        let d = self.find(0, |l| l == "Disclaimer:")?;
        let end = self
            .find(d + 1, |l| l.is_empty())
            .unwrap_or(self.lines.len());
        Some(self.lines[d + 1..end].join("\n"))
    }

    /// The name after the last "Thanks,".
    fn signoff(&self) -> Option<String> {
        let lines = self.lines;
        (0..lines.len())
            .rev()
            .find(|&i| lines[i] == "Thanks,")
            .and_then(|i| lines.get(i + 1))
            .filter(|n| !n.is_empty())
            .map(|n| n.to_string())
    }

    /// A mail of 2014, from its sentence at `fyi`: the tree and commit, the
    /// test's path, the `~` table, the plots.
    fn parse_2014(&self, h: &Headers, fyi: usize) -> Result<ParsedReport, ParseError> {
        let lines = self.lines;
        // `Hi <Name>,` above the sentence; anything before it is a preface.
        let hi = (0..fyi).rev().find(|&i| {
            lines[i] == "Hi," || (lines[i].starts_with("Hi ") && lines[i].ends_with(','))
        });
        let preface = trimmed_block(&lines[..hi.unwrap_or(fyi)]);
        let c = self
            .find(fyi, |l| l.starts_with("commit "))
            .ok_or_else(|| err(fyi, "no `commit <sha> (\"<subject>\")` line"))?;
        let (sha, subject) = commit_line(lines[c])
            .ok_or_else(|| err(c, "a commit line is `commit <40 hex> (\"<subject>\")`"))?;
        let tree = (c > fyi + 1)
            .then(|| lines[c - 1].rsplit_once(' '))
            .flatten()
            .map(|(url, branch)| json!({"url": url, "branch": branch}));
        let tc = self
            .find(c, |l| l.starts_with("test case: "))
            .ok_or_else(|| err(c, "no `test case: <tbox>/<testcase>/<parameters>` line"))?;
        let mut path = lines[tc]["test case: ".len()..].splitn(3, '/');
        let (tbox, testcase, rest) = match (path.next(), path.next(), path.next()) {
            (Some(t), Some(c), rest) if !t.is_empty() && !c.is_empty() => (t, c, rest),
            _ => return Err(err(tc, "a test case is `<tbox>/<testcase>/<parameters>`")),
        };
        // The table: two commit titles, their rules, the rows.
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
        let mut rows = Vec::new();
        let mut j = rule_at + 1;
        while j < lines.len() && !lines[j].trim().is_empty() {
            rows.push(row_2014(lines[j]).ok_or_else(|| {
                err(
                    j,
                    "a row is `<mean> ~ N%  <change>%  <mean> ~ N%  TOTAL <metric>`",
                )
            })?);
            j += 1;
        }
        if rows.is_empty() {
            return Err(err(rule_at, "the table has no rows"));
        }
        // The headline: the subject's `<change> <metric>`, else the first row.
        let metric = h
            .subject
            .split(": ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().nth(1))
            .filter(|m| rows.iter().any(|r| r["metric"] == *m))
            .or_else(|| rows[0]["metric"].as_str())
            .unwrap_or_default()
            .to_string();
        let change = rows
            .iter()
            .find(|r| r["metric"] == metric.as_str())
            .and_then(|r| r["change"].as_str())
            .and_then(|c| c.trim_end_matches('%').parse::<f64>().ok())
            .unwrap_or(0.0);
        let directions = crate::compare::rules::DirectionTable::default_table();
        // A metric of no known direction is a "change", as the mail says.
        let kind =
            match crate::compare::headline::Verdict::of(directions.direction(&metric), change) {
                crate::compare::headline::Verdict::Undefined => "change",
                v => v.word(),
            };
        // The plots, between the table's legend and the plots' own.
        let (plots, plot_style) = plots_2014(lines, j);
        let group = Group {
            axes: Vec::new(),
            base_sha: base_sha.to_string(),
            base_subject: String::new(),
            rows,
            machine: None,
            plots,
            plot_style,
        };
        let mut test = json!({
            "testcase": testcase,
            // The mail names the machine only by its tbox.
            "machine": tbox,
            "tbox_group": tbox,
            "aggregated": group.rows,
            "keep_order": true,
        });
        if let Some(rest) = rest {
            test["params"] = json!({ PATH_PARAMS: rest });
        }
        if !group.plots.is_empty() {
            test["bisect"] = bisect_of(&group);
        }
        let mut input = dated_commit(h, &sha, &subject);
        input.insert("base".into(), json!({"sha": base_sha, "subject": ""}));
        if let Some(t) = tree {
            input.insert("tree".into(), t);
        }
        input.insert(
            "recipients".into(),
            json!({"to": h.to, "cc": h.cc, "exact": true}),
        );
        input.insert("headline".into(), json!({"metric": metric, "kind": kind}));
        if let Some(p) = preface {
            input.insert("preface".into(), json!(p));
        }
        input.insert("tests".into(), json!([test]));
        if let Some(style) = plot_style {
            input.insert("plot_style".into(), json!(style));
        }
        if !h.attachments.is_empty() {
            input.insert("attachments".into(), json!(h.attachments));
        }
        Ok(ParsedReport {
            layout: Layout::Lkp2014,
            input: styled(input, Layout::Lkp2014),
            reported_by: None,
            materials_base: None,
            archive_base: None,
            disclaimer: self.disclaimer(),
            signature: None,
            reproduce: None,
            signoff: self.signoff(),
        })
    }

    /// The boxed table of other tests, from its first line.
    fn extras(&self, from: usize) -> Result<Vec<Extra>, ParseError> {
        let mut out = Vec::new();
        let mut i = from + 1;
        let mut seen_box = false;
        while i < self.lines.len() {
            let l = self.lines[i];
            if l.starts_with('+') {
                seen_box = true;
            } else if let Some(rest) = l.strip_prefix("| testcase: change | ") {
                let cell = rest.trim_end_matches('|').trim();
                // The robot has left a test's change out (`stress-ng:`).
                let empty = cell.strip_suffix(':').map(|t| (t, ""));
                let (testcase, what) = cell.split_once(": ").or(empty).ok_or_else(|| {
                    err(
                        i,
                        "a testcase cell is `<testcase>: <metric> <change> <kind>`",
                    )
                })?;
                let words: Vec<&str> = what.split_whitespace().collect();
                out.push(Extra {
                    testcase: testcase.to_string(),
                    metric: words.first().unwrap_or(&"").to_string(),
                    change: words.get(1).unwrap_or(&"").to_string(),
                    kind: words.last().unwrap_or(&"").to_string(),
                    machine: String::new(),
                    params: Vec::new(),
                });
            } else if let Some(rest) = l.strip_prefix("| test machine     | ") {
                if let Some(e) = out.last_mut() {
                    e.machine = rest.trim_end_matches('|').trim_end().to_string();
                }
            } else if let Some(rest) = l
                .strip_prefix("| test parameters  | ")
                .or_else(|| l.strip_prefix("|                  | "))
            {
                if let Some(e) = out.last_mut() {
                    e.params
                        .push(rest.trim_end_matches('|').trim_end().to_string());
                }
            } else if seen_box && !l.starts_with('|') {
                break;
            }
            i += 1;
        }
        Ok(out)
    }

    /// Every comparison group of the details.
    fn groups(&mut self) -> Result<Vec<Group>, ParseError> {
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
            // keys/keys: then values/values.
            let keys = lines
                .get(i + 1)
                .and_then(|k| k.strip_suffix(':'))
                .ok_or_else(|| err(i + 1, "a table starts with the parameter names, `a/b/c:`"))?;
            let values = lines
                .get(i + 2)
                .map(|v| v.trim_start())
                .ok_or_else(|| err(i + 2, "the parameter values are missing"))?;
            let keys: Vec<&str> = keys.split('/').collect();
            let mut vals: Vec<&str> = values.splitn(keys.len(), '/').collect();
            if vals.len() != keys.len() {
                // A value with a slash in it: give the rest to the last key.
                vals.resize(keys.len(), "");
            }
            let axes: Vec<(String, String)> = keys
                .iter()
                .zip(&vals)
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            // commit: then the commit lines.
            let c = (i + 3..lines.len())
                .find(|&j| lines[j].starts_with("commit:"))
                .ok_or_else(|| err(i + 3, "no \"commit:\" line in the table"))?;
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
                        failure_row(row).ok_or_else(|| err(j, "cannot read this failure row"))?,
                    );
                } else {
                    rows.push(perf_row(row).ok_or_else(|| err(j, "cannot read this table row"))?);
                }
                j += 1;
            }
            let (plots, plot_style) = plots_after(lines, j);
            out.push(Group {
                axes,
                base_sha,
                base_subject: base_subject.to_string(),
                rows,
                machine: pending_machine.take(),
                plots,
                plot_style,
            });
            i = j;
        }
        Ok(out)
    }
}

/// The robot's sentence of 2014.
const SENTENCE_2014: &str = "FYI, we noticed the below changes on";

/// The parameter a 2014 test case's path gives its parameters' values
/// under (`300s-migrate`): the mail does not name them one by one.
pub const PATH_PARAMS: &str = "path_params";

/// `      347258 ~ 0%     -18.2%     284195 ~ 0%  TOTAL vm-scalability.migrate_mbps`;
/// a mean may be blank (`       ~ 1%      -3.6%            ~ 1%  TOTAL …`),
/// a spread missing, a change `+Inf%`.
fn row_2014(row: &str) -> Option<Value> {
    let mut tokens = row.split_whitespace().peekable();
    let side = |tokens: &mut std::iter::Peekable<std::str::SplitWhitespace<'_>>| -> Option<Value> {
        let mean = match tokens.peek() {
            Some(t) if t.starts_with('~') => None,
            _ => Some(number(tokens.next()?)?),
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
            (Some(m), None) => json!(m),
            (m, Some(s)) => json!({"mean": m, "stddev_percent": s}),
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
    if tokens.next()? != "TOTAL" {
        return None;
    }
    let metric = tokens.next()?;
    if tokens.next().is_some() {
        return None;
    }
    Some(json!({"metric": metric, "base": base, "head": head, "change": change}))
}

/// The 2014 plots after the table that ends at line `from`: below the
/// table's legend, 20 rows each (gnuplot's `nofeed` shares a line between
/// one plot's last row and the next one's first), up to the plots' legend.
fn plots_2014(lines: &[&str], from: usize) -> (Vec<ReadPlot>, Option<PlotStyle>) {
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
fn plots_after(lines: &[&str], from: usize) -> (Vec<ReadPlot>, Option<PlotStyle>) {
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
fn bisect_of(g: &Group) -> Value {
    let metric_of = |title: &str| -> String {
        g.rows
            .iter()
            .filter_map(|r| r["metric"].as_str())
            .find(|m| plot::title_of(m) == title)
            .unwrap_or(title)
            .to_string()
    };
    let (mut good, mut bad, mut ranges) = (Map::new(), Map::new(), Map::new());
    let mut titles = Map::new();
    let mut order = Vec::new();
    for p in &g.plots {
        // A plot drawn without a title names no metric: each is kept under
        // a name of its own, or a run of them would be read as one plot.
        let m = if p.title.trim().is_empty() {
            let m = format!("untitled-plot-{}", titles.len() + 1);
            titles.insert(m.clone(), json!(""));
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
            let v = match r.step {
                Some(s) => json!([r.low, r.high, s]),
                None => json!([r.low, r.high]),
            };
            ranges.insert(m.clone(), v);
        }
        order.push(m);
    }
    let mut points = Vec::new();
    if !good.is_empty() {
        points.push(json!({"verdict": "good", "values": good}));
    }
    if !bad.is_empty() {
        points.push(json!({"verdict": "bad", "values": bad}));
    }
    let mut b = Map::new();
    b.insert("points".into(), Value::Array(points));
    b.insert("plot".into(), json!(order));
    if !titles.is_empty() {
        b.insert("titles".into(), Value::Object(titles));
    }
    if !ranges.is_empty() {
        b.insert("ranges".into(), Value::Object(ranges));
    }
    Value::Object(b)
}

/// What the reader records of a mail's presentation, apart from its
/// content: the input's `style` (with the layout it was read in).
const STYLE: &[&str] = &[
    "still_regression_align",
    "in_addition_width",
    "tags",
    "details_rule",
    "reproduce_at",
    "archive_tag",
    "spacing",
    "remarks",
    "plot_style",
    "subject_template",
];

/// `input` with its presentation moved into `style`.
fn styled(mut input: Map<String, Value>, layout: Layout) -> Value {
    let mut style = Map::new();
    style.insert("layout".into(), json!(layout));
    for k in STYLE {
        if let Some(v) = input.remove(*k) {
            style.insert((*k).into(), v);
        }
    }
    input.insert("style".into(), Value::Object(style));
    Value::Object(input)
}

/// The "In addition" box's width (its `+---+---+` rule, in characters) where
/// the robot padded it wider than its widest cell; `lines` start at the
/// "In addition" line.
fn padded_box_width(lines: &[&str]) -> Option<usize> {
    let start = lines.iter().position(|l| l.starts_with("+-"))?;
    let rows: Vec<&str> = lines[start..]
        .iter()
        .take_while(|l| l.starts_with('+') || l.starts_with('|'))
        .copied()
        .collect();
    let width = rows[0].chars().count();
    // A row is `| <16> | <cell> |`: the cell starts at column 21.
    let widest = rows
        .iter()
        .filter(|r| r.starts_with('|'))
        .filter_map(|r| {
            r.chars()
                .skip(21)
                .collect::<String>()
                .strip_suffix('|')
                .map(|c| c.trim_end().chars().count())
        })
        .max()?;
    (width > widest + 23).then_some(width)
}

/// Lines without the blank ones around them; `None` when nothing is left.
fn trimmed_block(lines: &[&str]) -> Option<String> {
    let start = lines.iter().position(|l| !l.trim().is_empty())?;
    let end = lines.iter().rposition(|l| !l.trim().is_empty())?;
    Some(lines[start..=end].join("\n"))
}

/// `… noticed a -42.3% regression of stress-ng.utime.ops_per_sec on:` →
/// ("-42.3%", "regression", metric).
fn headline_words(s: &str) -> Option<(String, String, String)> {
    let after = s.split_once(" noticed a")?.1;
    let after = after.strip_prefix('n').unwrap_or(after).trim_start();
    let mut w = after.split_whitespace();
    let change = w.next()?.to_string();
    let kind = w.next()?.to_string();
    if w.next()? != "of" {
        return None;
    }
    let metric = w.next()?.to_string();
    change.ends_with('%').then_some((change, kind, metric))
}

/// `commit: <sha> ("subject")`.
fn commit_line(l: &str) -> Option<(String, String)> {
    let rest = l
        .strip_prefix("commit: ")
        .or_else(|| l.strip_prefix("commit "))?;
    let (sha, subject) = rest.split_once(" (\"")?;
    let subject = subject.strip_suffix("\")")?;
    (sha.len() >= 12 && sha.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| (sha.to_string(), subject.to_string()))
}

/// The input's first fields: the mail's date, and the commit with its
/// author, the person the report is addressed to.
fn dated_commit(h: &Headers, sha: &str, subject: &str) -> Map<String, Value> {
    let mut commit = json!({"sha": sha, "subject": subject});
    if let Some((name, email)) = h.to.first().and_then(|a| split_mailbox(a)) {
        commit["author"] = json!({"name": name, "email": email});
    }
    let mut input = Map::new();
    if let Some(d) = &h.date {
        input.insert("date".into(), json!(d));
    }
    input.insert("commit".into(), commit);
    input
}

/// `[linus:master] [jbd2] …` → `linus`.
fn tree_name(subject: &str) -> Option<String> {
    let inner = subject.strip_prefix('[')?.split_once(']')?.0;
    let (name, _) = inner.split_once(':')?;
    Some(name.to_string())
}

/// `kernel test robot <oliver.sang@intel.com>` → (name, address).
fn split_mailbox(s: &str) -> Option<(String, String)> {
    let s = s.trim();
    match s.rsplit_once('<') {
        Some((name, rest)) => {
            let email = rest.trim_end_matches('>').trim().to_string();
            Some((name.trim().trim_matches('"').to_string(), email))
        }
        None if s.contains('@') => Some((String::new(), s.to_string())),
        None => None,
    }
}

/// A number as the table prints it (`20608395`, `0.01`, `3.348e+08`).
fn number(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// One side of a perf row: the mean and, after it, an optional `± N%`.
fn side<'t>(tokens: &mut std::iter::Peekable<impl Iterator<Item = &'t str>>) -> Option<Value> {
    let mean = number(tokens.next()?)?;
    if tokens.peek() == Some(&"±") || tokens.peek().is_some_and(|t| t.starts_with('±')) {
        let t = tokens.next()?;
        let pct = if t == "±" {
            tokens.next()?
        } else {
            &t['±'.len_utf8()..]
        };
        let pct = number(pct.trim_end_matches('%'))?;
        return Some(json!({"mean": mean, "stddev_percent": pct}));
    }
    Some(json!(mean))
}

/// The line above the rows the robot once appended after its signature.
const APPENDIX: &str = "<below more details following above table FYI>";

/// `      0.01 ±  5%     +20.0%       0.01 ±  8%  perf-sched.…`.
fn perf_row(row: &str) -> Option<Value> {
    let mut tokens = row.split_whitespace().peekable();
    let base = side(&mut tokens)?;
    let change = tokens.next()?.to_string();
    if !(change.starts_with('+') || change.starts_with('-')) {
        return None;
    }
    let head = side(&mut tokens)?;
    let metric = tokens.next()?.to_string();
    let mut row_json = json!({"metric": metric, "base": base, "head": head, "change": change});
    if let Some(note) = annotation(row, &metric, tokens.next())? {
        row_json["annotation"] = note.into();
    }
    Some(row_json)
}

/// What an operator wrote after a row's metric by hand (`   <-------- (a)`),
/// verbatim with its leading spaces: `Some(None)` when nothing follows,
/// `None` when what follows is no such mark (not a row, then).
fn annotation(row: &str, metric: &str, next: Option<&str>) -> Option<Option<String>> {
    let Some(next) = next else {
        return Some(None);
    };
    if !next.starts_with("<-") && !next.starts_with("<=") {
        return None;
    }
    let end = row.rfind(metric)? + metric.len();
    Some(Some(row[end..].trim_end().to_string()))
}

/// The operators' remarks in the two places the robot's mails have them:
/// between its sentence and `commit:`, and between the last of its lines
/// above `Details are as below:` (parameters, test description, box, tags)
/// and that line. Each comes back as `{"before", "text", "blank_after"}`;
/// text that would be taken for a section of the report is not a remark.
fn remarks_in(lines: &[&str], sentence: usize) -> Vec<Value> {
    let block = |from: usize, to: usize, before: Section| -> Option<Value> {
        let body = &lines[from..to];
        let first = body.iter().position(|l| !l.is_empty())?;
        let last = body.iter().rposition(|l| !l.is_empty())?;
        let r = Remark {
            before,
            text: body[first..=last].join("\n"),
            blank_after: u8::try_from(body.len() - 1 - last).ok()?,
        };
        r.problem().is_none().then(|| json!(r))
    };
    let mut out = Vec::new();
    // The sentence may run onto a second line (it ends with `:`).
    let end = if lines[sentence].ends_with(':') {
        sentence + 1
    } else {
        sentence + 2
    };
    if let Some(c) = (end..lines.len()).find(|&i| lines[i].starts_with("commit: ")) {
        out.extend(block(end.min(c), c, Section::Commit));
    }
    // How the robot's own lines above "Details are as below" begin: its
    // parameters, test description, box and tags.
    const ROBOTS: &[&str] = &[
        "\t",
        "|",
        "+",
        "test-description:",
        "test-url:",
        "Reported-by:",
        "Link:",
        "Closes:",
        "parameters:",
        "with following parameters:",
        "If you fix",
        "the same patch",
        "In addition to that",
    ];
    let robots = |l: &str| ROBOTS.iter().any(|p| l.starts_with(p));
    if let Some(d) = (end..lines.len()).find(|&i| lines[i].starts_with("Details are as below")) {
        if let Some(last) = (end..d).rev().find(|&i| robots(lines[i])) {
            out.extend(block(last + 1, d, Section::Details));
        }
    }
    out
}

/// `          1:4          -25%            :4     dmesg.WARNING:…`.
fn failure_row(row: &str) -> Option<Value> {
    let mut tokens = row.split_whitespace();
    let base = tokens.next()?;
    let change = tokens.next()?;
    let head = tokens.next()?;
    let metric = tokens.next()?;
    let note = annotation(row, metric, tokens.next())?;
    // The table prints the integer part of a sum of samples, blank for an
    // exact 0. A printed `0` is a sum between 0 and 1 (a fractional
    // perf-profile stat lkp files as a failure); it is read back as 0.5, a
    // value that prints the same.
    let count = |t: &str| -> Option<Value> {
        let (fails, runs) = t.split_once(':')?;
        let runs: u64 = runs.parse().ok()?;
        Some(match fails {
            "" => json!({"fails": 0, "runs": runs}),
            "0" => json!({"fails": 0.5, "runs": runs}),
            n => json!({"fails": n.parse::<u64>().ok()?, "runs": runs}),
        })
    };
    let mut row_json =
        json!({"metric": metric, "base": count(base)?, "head": count(head)?, "change": change});
    if let Some(note) = note {
        row_json["annotation"] = note.into();
    }
    Some(row_json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_as_printed() {
        let r = perf_row("      0.01 ±  5%     +20.0%       0.01 ±  8%  perf-sched.x").unwrap();
        assert_eq!(
            r,
            json!({"metric": "perf-sched.x", "base": {"mean": 0.01, "stddev_percent": 5.0},
                   "head": {"mean": 0.01, "stddev_percent": 8.0}, "change": "+20.0%"})
        );
        let r = perf_row(" 3.348e+08            -3.3%  3.237e+08        perf-stat.i.branch-misses")
            .unwrap();
        assert_eq!(r["base"], json!(3.348e8));
        let r = perf_row("      0.17 ±141%      +0.4        0.61        perf-profile.x").unwrap();
        assert_eq!(r["base"]["stddev_percent"], json!(141.0));
        let f =
            failure_row("          1:4          -25%            :4     dmesg.WARNING:at").unwrap();
        assert_eq!(f["base"], json!({"fails": 1, "runs": 4}));
        assert_eq!(f["head"], json!({"fails": 0, "runs": 4}));
        let f =
            failure_row("          0:4           -1%           2:4     perf-profile.x.error_entry")
                .unwrap();
        assert_eq!(f["base"], json!({"fails": 0.5, "runs": 4}));
        assert_eq!(f["head"], json!({"fails": 2, "runs": 4}));
    }

    #[test]
    fn rows_of_2014_are_read_as_printed() {
        let r = row_2014(
            "      347258 ~ 0%     -18.2%     284195 ~ 0%  TOTAL vm-scalability.migrate_mbps",
        )
        .unwrap();
        assert_eq!(r["base"], json!({"mean": 347258.0, "stddev_percent": 0.0}));
        assert_eq!(r["change"], "-18.2%");
        let r = row_2014("          61 ~32%    +363.8%        286 ~10%  TOTAL numa-vmstat.node0.x")
            .unwrap();
        assert_eq!(r["head"], json!({"mean": 286.0, "stddev_percent": 10.0}));
        let r =
            row_2014("        0.00           +Inf%       0.94 ~ 7%  TOTAL perf-profile.x").unwrap();
        assert_eq!((&r["base"], &r["change"]), (&json!(0.0), &json!("+Inf%")));
        let r = row_2014("             ~ 1%      -3.6%            ~ 1%  TOTAL turbostat.Cor_W")
            .unwrap();
        assert_eq!(r["base"], json!({"mean": null, "stddev_percent": 1.0}));
        // Not a 2014 row: no `TOTAL`, or no change.
        assert!(
            row_2014("      347258 ~ 0%     -18.2%     284195 ~ 0%  vm-scalability.x").is_none()
        );
        assert!(row_2014("      347258 ~ 0%     284195 ~ 0%  TOTAL vm-scalability.x").is_none());
    }

    #[test]
    fn commit_lines() {
        let sha = "51d74c18a9c61e7ee33bc90b522b51dbd4bd1ac1";
        for (line, want) in [
            (
                format!("commit: {sha} (\"mm: memcg: make stats flushing threshold per-memcg\")"),
                Some((sha, "mm: memcg: make stats flushing threshold per-memcg")),
            ),
            // 2014: no colon.
            (format!("commit {sha} (\"x\")"), Some((sha, "x"))),
            (format!("commit: {sha} (\"\")"), Some((sha, ""))),
            // Too short, not hex, no subject, an unclosed one.
            ("commit: 51d74c18a9 (\"x\")".into(), None),
            ("commit: 51d74c18a9c61e7zz (\"x\")".into(), None),
            (format!("commit: {sha}"), None),
            (format!("commit: {sha} (\"x"), None),
        ] {
            let got = commit_line(&line);
            let want = want.map(|(a, b)| (a.to_string(), b.to_string()));
            assert_eq!(got, want, "{line}");
        }
    }

    #[test]
    fn tree_names_and_mailboxes() {
        for (subject, want) in [
            ("[linus:master] [jbd2]  6a3afb6ac6: fsmark…", Some("linus")),
            ("[tip:sched/core] [sched] 1234: x", Some("tip")),
            (
                "[xfs]  490d451fa5:  aim7.jobs-per-min -20.0% regression",
                None,
            ),
            ("no brackets", None),
        ] {
            assert_eq!(tree_name(subject).as_deref(), want, "{subject}");
        }
        for (mailbox, want) in [
            (
                "kernel test robot <oliver.sang@intel.com>",
                Some(("kernel test robot", "oliver.sang@intel.com")),
            ),
            (
                "\"Sang, Oliver\" <oliver.sang@intel.com>",
                Some(("Sang, Oliver", "oliver.sang@intel.com")),
            ),
            ("lkp@intel.com", Some(("", "lkp@intel.com"))),
            ("nobody", None),
        ] {
            let want = want.map(|(a, b)| (a.to_string(), b.to_string()));
            assert_eq!(split_mailbox(mailbox), want, "{mailbox}");
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

    #[test]
    fn padded_in_addition_boxes() {
        let boxed = |pad: usize| -> Vec<String> {
            let cell = "will-it-scale: will-it-scale.per_thread_ops -30.0% regression";
            let w = cell.len() + pad;
            vec![
                "In addition to that, the commit also has significant impact on the following tests:".into(),
                String::new(),
                format!("+{}+{}+", "-".repeat(18), "-".repeat(w + 2)),
                format!("| {:<16} | {cell:<w$} |", "testcase: change"),
                format!("| {:<16} | {:<w$} |", "test machine", "104 threads"),
                format!("+{}+{}+", "-".repeat(18), "-".repeat(w + 2)),
            ]
        };
        // `| ` + 16 + ` | ` + cell + ` |`: 23 around the widest cell.
        let natural = "will-it-scale: will-it-scale.per_thread_ops -30.0% regression".len() + 23;
        for (pad, want) in [(0, None), (4, Some(natural + 4)), (1, Some(natural + 1))] {
            let lines = boxed(pad);
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            assert_eq!(padded_box_width(&lines), want, "pad {pad}");
        }
        assert_eq!(padded_box_width(&["In addition to that", "no box"]), None);
    }

    #[test]
    fn headline_sentences_of_every_era() {
        assert_eq!(
            headline_words(
                "kernel test robot noticed a -42.3% regression of stress-ng.utime.ops_per_sec on:"
            ),
            Some((
                "-42.3%".into(),
                "regression".into(),
                "stress-ng.utime.ops_per_sec".into()
            ))
        );
        assert_eq!(
            headline_words("FYI, we noticed a 993.0% improvement of fio.write_iops due to commit:"),
            Some((
                "993.0%".into(),
                "improvement".into(),
                "fio.write_iops".into()
            ))
        );
        assert_eq!(headline_words("FYI, we noticed the below changes on"), None);
    }
}
