//! One reader per section of a robot mail, each over the body's lines: the
//! headline, the commit block, the tips, the test block, the "In addition"
//! box, the tags, the signature, the operators' remarks. A reader returns
//! typed values, or an error naming the line it could not read.

use super::{err, ParseError};
use crate::input::{Align, StillOn, Tree};
use crate::model::spacing::{Remark, Section};
use serde_json::{Map, Value};

/// The robot's sentence: `… noticed a -42.3% regression of <metric> on:`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Headline {
    /// As printed: `-42.3%`, `993.0%`.
    pub change: String,
    /// `regression`, `improvement`, `change`.
    pub kind: String,
    pub metric: String,
}

/// `… noticed a -42.3% regression of stress-ng.utime.ops_per_sec on:`.
pub(super) fn headline_words(s: &str) -> Option<Headline> {
    let after = s.split_once(" noticed a")?.1;
    let after = after.strip_prefix('n').unwrap_or(after).trim_start();
    let mut w = after.split_whitespace();
    let change = w.next()?.to_string();
    let kind = w.next()?.to_string();
    if w.next()? != "of" {
        return None;
    }
    let metric = w.next()?.to_string();
    change.ends_with('%').then_some(Headline {
        change,
        kind,
        metric,
    })
}

/// The sentence at line `at`, which may run onto the next line.
pub(super) fn headline(lines: &[&str], at: usize) -> Result<Headline, ParseError> {
    let mut words = lines[at].to_string();
    if !words.ends_with(':') && at + 1 < lines.len() {
        words.push(' ');
        words.push_str(lines[at + 1].trim());
    }
    match headline_words(&words) {
        Some(h) => Ok(h),
        // The robot's build and boot reports say "noticed the following …".
        None if !(words.contains("% regression") || words.contains("% improvement")) => {
            Err(ParseError {
                line: 0,
                message: "not a performance report (no \"noticed a N% regression/improvement\")"
                    .into(),
            })
        }
        None => Err(err(at, format!("cannot read the headline in {words:?}"))),
    }
}

/// `commit: <sha> ("subject")`.
pub(super) fn commit_line(l: &str) -> Option<(String, String)> {
    let rest = l
        .strip_prefix("commit: ")
        .or_else(|| l.strip_prefix("commit "))?;
    let (sha, subject) = rest.split_once(" (\"")?;
    let subject = subject.strip_suffix("\")")?;
    (sha.len() >= 12 && sha.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| (sha.to_string(), subject.to_string()))
}

/// The lines of a patch under test, below its commit line.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct PatchLines {
    pub url: Option<String>,
    pub base: Option<String>,
    pub link: Option<String>,
    pub subject: Option<String>,
}

impl PatchLines {
    fn is_empty(&self) -> bool {
        *self == PatchLines::default()
    }
}

/// Where the commit comes from: a tree's branch, or a patch under test.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Origin {
    Tree(Tree),
    Patch(PatchLines),
    Unnamed,
}

/// `commit: <sha> ("<subject>")` and the lines under it up to a blank one.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CommitBlock {
    /// The commit line's index.
    pub at: usize,
    pub sha: String,
    pub subject: String,
    pub origin: Origin,
}

/// The commit block, the first after line `from`; `tree` names the tree
/// (from the Subject's `[name:branch]`).
pub(super) fn commit_block(
    lines: &[&str],
    from: usize,
    tree: &str,
) -> Result<CommitBlock, ParseError> {
    let at = (from..lines.len())
        .find(|&i| lines[i].starts_with("commit: ") || lines[i].starts_with("commit "))
        .ok_or_else(|| err(from, "no \"commit:\" line"))?;
    let (sha, subject) = commit_line(lines[at])
        .ok_or_else(|| err(at, "a commit line is `commit: <40 hex> (\"<subject>\")`"))?;
    let mut found_tree = None;
    let mut patch = PatchLines::default();
    for l in lines[at + 1..].iter().take_while(|l| !l.trim().is_empty()) {
        if let Some(v) = l.strip_prefix("url: ") {
            patch.url = Some(v.into());
        } else if let Some(v) = l.strip_prefix("base: ") {
            patch.base = Some(v.into());
        } else if let Some(v) = l.strip_prefix("patch link: ") {
            patch.link = Some(v.into());
        } else if let Some(v) = l.strip_prefix("patch subject: ") {
            patch.subject = Some(v.into());
        } else if let Some((url, branch)) = l.rsplit_once(' ') {
            found_tree = Some(Tree {
                name: Some(tree.into()),
                url: url.into(),
                branch: branch.into(),
            });
        }
    }
    let origin = match found_tree {
        _ if !patch.is_empty() => Origin::Patch(patch),
        Some(t) => Origin::Tree(t),
        None => Origin::Unnamed,
    };
    Ok(CommitBlock {
        at,
        sha,
        subject,
        origin,
    })
}

/// `[still regression on linus/master <sha>]` and `[test failed on …]`
/// lines in `lines[from..to]`, and how their refs were padded: before them
/// (right-aligned) or after them (left-aligned); the robot has done both.
pub(super) fn tips(
    lines: &[&str],
    from: usize,
    to: usize,
) -> Result<(Vec<StillOn>, Option<Align>), ParseError> {
    let mut still = Vec::new();
    let mut align = None;
    for (n, l) in lines.iter().enumerate().take(to).skip(from) {
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
            align = Some(Align::Right);
        } else if rest.contains("  ") {
            align = Some(Align::Left);
        }
        let (r, s) = rest
            .rsplit_once(' ')
            .ok_or_else(|| err(n, "a still-regression line names a ref and a commit"))?;
        still.push(StillOn {
            reference: r.trim().into(),
            sha: s.into(),
            failed,
        });
    }
    Ok((still, align))
}

/// The first test's block: `testcase:`, `config:`, `compiler:`, `test
/// machine:`, its parameters and description.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct TestBlock {
    pub kconfig: Option<String>,
    pub compiler: Option<String>,
    pub machine: Option<String>,
    /// In job order.
    pub params: Map<String, Value>,
    pub description: Option<String>,
    pub url: Option<String>,
    /// The line that ends it ("In addition to that", "Details are as below", …).
    pub end: usize,
}

/// The test block from its `testcase:` line at `from`.
pub(super) fn test_block(lines: &[&str], from: usize) -> Result<TestBlock, ParseError> {
    let mut t = TestBlock::default();
    let mut i = from;
    while i < lines.len() {
        let l = lines[i];
        if let Some(v) = l.strip_prefix("config: ") {
            t.kconfig = Some(v.into());
        } else if let Some(v) = l.strip_prefix("compiler: ") {
            t.compiler = Some(v.into());
        } else if let Some(v) = l
            .strip_prefix("test machine: ")
            .or_else(|| l.strip_prefix("on test machine: "))
        {
            t.machine = Some(v.into());
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
                t.params.insert(k.into(), Value::String(v.into()));
                i += 1;
            }
            continue;
        } else if let Some(v) = l.strip_prefix("test-description: ") {
            t.description = Some(v.into());
        } else if let Some(v) = l.strip_prefix("test-url: ") {
            t.url = Some(v.into());
        } else if l.starts_with("In addition to that")
            || l.starts_with("If you fix")
            || l.starts_with("Details are as below")
            || l.starts_with("the above")
        {
            break;
        }
        i += 1;
    }
    t.end = i;
    Ok(t)
}

/// A test of the "In addition to that" box.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Extra {
    pub testcase: String,
    pub metric: String,
    /// The change as printed (`-23.9%`, `127.0%`).
    pub change: String,
    pub kind: String,
    /// Empty where the box has no machine row.
    pub machine: String,
    pub params: Vec<String>,
}

/// The boxed table of other tests, from its "In addition" line at `from`.
pub(super) fn extras(lines: &[&str], from: usize) -> Result<Vec<Extra>, ParseError> {
    let mut out: Vec<Extra> = Vec::new();
    let mut seen_box = false;
    for (i, l) in lines.iter().enumerate().skip(from + 1) {
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
                testcase: testcase.into(),
                metric: words.first().unwrap_or(&"").to_string(),
                change: words.get(1).unwrap_or(&"").to_string(),
                kind: words.last().unwrap_or(&"").to_string(),
                ..Extra::default()
            });
        } else if let Some(rest) = l.strip_prefix("| test machine     | ") {
            if let Some(e) = out.last_mut() {
                e.machine = rest.trim_end_matches('|').trim_end().into();
            }
        } else if let Some(rest) = l
            .strip_prefix("| test parameters  | ")
            .or_else(|| l.strip_prefix("|                  | "))
        {
            if let Some(e) = out.last_mut() {
                e.params.push(rest.trim_end_matches('|').trim_end().into());
            }
        } else if seen_box && !l.starts_with('|') {
            break;
        }
    }
    Ok(out)
}

/// The "In addition" box's width (its `+---+---+` rule, in characters) where
/// the robot padded it wider than its widest cell; `lines` start at the
/// "In addition" line.
pub(super) fn padded_box_width(lines: &[&str]) -> Option<usize> {
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

/// The tags the robot asks a fix to carry.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Tags {
    /// Who `Reported-by:` names (name, address).
    pub reported_by: Option<(String, String)>,
    /// The URL the `Closes:`/`Link:` tag starts with (before the Message-ID).
    pub archive_base: Option<String>,
    /// The tag is `| Link:` (until May 2023), not `| Closes:`.
    pub link: bool,
    pub closes: bool,
}

/// The tags anywhere in the mail (the first of each); `message_id` is the
/// mail's, which the archive link ends with.
pub(super) fn tags(lines: &[&str], message_id: &str) -> Tags {
    let id = message_id.trim_matches(['<', '>']);
    let mut t = Tags {
        link: lines.iter().any(|l| l.starts_with("| Link: ")),
        closes: lines.iter().any(|l| l.starts_with("| Closes: ")),
        ..Tags::default()
    };
    for l in lines {
        let l = l.trim_start_matches("| ");
        if let Some(v) = l.strip_prefix("Reported-by: ") {
            if t.reported_by.is_none() {
                t.reported_by = split_mailbox(v);
            }
        } else if let Some(v) = l
            .strip_prefix("Closes: ")
            .or_else(|| l.strip_prefix("Link: "))
        {
            if t.archive_base.is_none() {
                t.archive_base = v.strip_suffix(id).map(|b| b.trim_end_matches('/').into());
            }
        }
    }
    t
}

/// `kernel test robot <oliver.sang@intel.com>` → (name, address).
pub(super) fn split_mailbox(s: &str) -> Option<(String, String)> {
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

/// `[linus:master] [jbd2] …` → `linus`.
pub(super) fn tree_name(subject: &str) -> Option<String> {
    let inner = subject.strip_prefix('[')?.split_once(']')?.0;
    let (name, _) = inner.split_once(':')?;
    Some(name.to_string())
}

/// The end of the mail: the disclaimer, the signature and what follows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Ending {
    pub disclaimer: Option<String>,
    /// The lines after `-- ` (2022 on), or the 2021 footer after a `---`
    /// below the disclaimer (`0DAY/LKP+ Test Infrastructure …`).
    pub signature: Option<String>,
    /// The mail has the 2021 footer (a `---` line below the disclaimer).
    pub footer: bool,
    /// The name after the last "Thanks,".
    pub signoff: Option<String>,
    /// Text after the signature that is not the robot's (a `#regzbot
    /// introduced:` line added by hand).
    pub trailer: Option<String>,
}

/// The mail's ending.
pub(super) fn ending(lines: &[&str]) -> Ending {
    let find =
        |from: usize, pred: &dyn Fn(&str) -> bool| (from..lines.len()).find(|&i| pred(lines[i]));
    let disclaimer_at = find(0, &|l| l == "Disclaimer:");
    let disclaimer = disclaimer_at.map(|d| {
        let end = find(d + 1, &|l| l.is_empty()).unwrap_or(lines.len());
        lines[d + 1..end].join("\n")
    });
    let footer_at = disclaimer_at
        .and_then(|d| find(d + 1, &|l| l == "---"))
        .filter(|&f| lines.get(f + 1).is_some_and(|l| !l.is_empty()));
    let dashes = find(0, &|l| l == "-- ");
    let signature = dashes.or(footer_at).map(|d| {
        let end = find(d + 1, &|l| l.is_empty()).unwrap_or(lines.len());
        lines[d + 1..end].join("\n")
    });
    let signoff = (0..lines.len())
        .rev()
        .find(|&i| lines[i] == "Thanks,")
        .and_then(|i| lines.get(i + 1))
        .filter(|n| !n.is_empty())
        .map(|n| n.to_string());
    let trailer = dashes.and_then(|d| {
        let end = find(d + 1, &|l| l.is_empty())?;
        let rest = &lines[end..];
        if rest.iter().all(|l| l.is_empty()) || rest.contains(&super::APPENDIX) {
            return None;
        }
        let last = rest.iter().rposition(|l| !l.is_empty())?;
        Some(rest[..=last].join("\n"))
    });
    Ending {
        disclaimer,
        signature,
        footer: footer_at.is_some(),
        signoff,
        trailer,
    }
}

/// The URL the materials' link starts with (before the Message-ID).
pub(super) fn materials_base(lines: &[&str], message_id: &str) -> Option<String> {
    let m = lines
        .iter()
        .position(|l| l.starts_with("The kernel config and materials to reproduce"))?;
    lines
        .get(m + 1)?
        .strip_suffix(message_id.trim_matches(['<', '>']))
        .map(|b| b.trim_end_matches('/').to_string())
}

/// The indented "To reproduce:" instructions; empty when the mail has
/// neither them nor the materials' link (which prints no block).
pub(super) fn reproduce(lines: &[&str], has_materials: bool) -> Option<String> {
    let found = lines
        .iter()
        .position(|l| *l == "To reproduce:")
        .and_then(|d| {
            let mut end = d + 1;
            while end < lines.len() && (lines[end].is_empty() || lines[end].starts_with(' ')) {
                end += 1;
            }
            trimmed_block(&lines[d + 1..end])
        });
    match found {
        None if !has_materials => Some(String::new()),
        r => r,
    }
}

/// Lines without the blank ones around them; `None` when nothing is left.
pub(super) fn trimmed_block(lines: &[&str]) -> Option<String> {
    let start = lines.iter().position(|l| !l.trim().is_empty())?;
    let end = lines.iter().rposition(|l| !l.trim().is_empty())?;
    Some(lines[start..=end].join("\n"))
}

/// The operators' remarks in the two places the robot's mails have them:
/// between its sentence and `commit:`, and between the last of its lines
/// above `Details are as below:` (parameters, test description, box, tags)
/// and that line. Text that would be taken for a section of the report is
/// not a remark.
pub(super) fn remarks(lines: &[&str], sentence: usize) -> Vec<Remark> {
    let block = |from: usize, to: usize, before: Section| -> Option<Remark> {
        let body = &lines[from..to];
        let first = body.iter().position(|l| !l.is_empty())?;
        let last = body.iter().rposition(|l| !l.is_empty())?;
        let r = Remark {
            before,
            text: body[first..=last].join("\n"),
            blank_after: u8::try_from(body.len() - 1 - last).ok()?,
        };
        r.problem().is_none().then_some(r)
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

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "51d74c18a9c61e7ee33bc90b522b51dbd4bd1ac1";

    #[test]
    fn commit_lines() {
        for (line, want) in [
            (
                format!("commit: {SHA} (\"mm: memcg: make stats flushing threshold per-memcg\")"),
                Some((SHA, "mm: memcg: make stats flushing threshold per-memcg")),
            ),
            // 2014: no colon.
            (format!("commit {SHA} (\"x\")"), Some((SHA, "x"))),
            (format!("commit: {SHA} (\"\")"), Some((SHA, ""))),
            // Too short, not hex, no subject, an unclosed one.
            ("commit: 51d74c18a9 (\"x\")".into(), None),
            ("commit: 51d74c18a9c61e7zz (\"x\")".into(), None),
            (format!("commit: {SHA}"), None),
            (format!("commit: {SHA} (\"x"), None),
        ] {
            let got = commit_line(&line);
            let want = want.map(|(a, b)| (a.to_string(), b.to_string()));
            assert_eq!(got, want, "{line}");
        }
    }

    #[test]
    fn commit_blocks() {
        let commit = format!("commit: {SHA} (\"x: y\")");
        let tree = |url: &str, branch: &str| {
            Origin::Tree(Tree {
                name: Some("linus".into()),
                url: url.into(),
                branch: branch.into(),
            })
        };
        // (lines, Ok((commit line, origin)) or Err(error line))
        type Case<'a> = (Vec<&'a str>, Result<(usize, Origin), usize>);
        let cases: Vec<Case> = vec![
            (
                vec![
                    "",
                    &commit,
                    "https://git.kernel.org/cgit/linux/kernel/git/torvalds/linux.git master",
                    "",
                ],
                Ok((
                    1,
                    tree(
                        "https://git.kernel.org/cgit/linux/kernel/git/torvalds/linux.git",
                        "master",
                    ),
                )),
            ),
            (
                vec![
                    &commit,
                    "url: https://github.com/intel-lab-lkp/linux/commits/x",
                    "base: https://git.kernel.org/x.git master",
                    "patch link: https://lore.kernel.org/all/20230101.1-1@x.org/",
                    "patch subject: [PATCH v2] x: y",
                ],
                Ok((
                    0,
                    Origin::Patch(PatchLines {
                        url: Some("https://github.com/intel-lab-lkp/linux/commits/x".into()),
                        base: Some("https://git.kernel.org/x.git master".into()),
                        link: Some("https://lore.kernel.org/all/20230101.1-1@x.org/".into()),
                        subject: Some("[PATCH v2] x: y".into()),
                    }),
                )),
            ),
            // A patch's lines win over a tree-like line among them.
            (
                vec![&commit, "url: u", "git://x y"],
                Ok((
                    0,
                    Origin::Patch(PatchLines {
                        url: Some("u".into()),
                        ..PatchLines::default()
                    }),
                )),
            ),
            (vec![&commit, ""], Ok((0, Origin::Unnamed))),
            // No commit line; one that cannot be read (its line, 1-based).
            (vec!["testcase: x"], Err(1)),
            (vec!["", "commit: 1234 (\"x\")"], Err(2)),
        ];
        for (lines, want) in cases {
            let got = commit_block(&lines, 0, "linus")
                .map(|c| (c.at, c.origin))
                .map_err(|e| e.line);
            assert_eq!(got, want, "{lines:?}");
        }
        let c = commit_block(&[commit.as_str()], 0, "").unwrap();
        assert_eq!((c.sha.as_str(), c.subject.as_str()), (SHA, "x: y"));
    }

    #[test]
    fn tips_and_their_alignment() {
        let still = |r: &str, s: &str, failed: bool| StillOn {
            reference: r.into(),
            sha: s.into(),
            failed,
        };
        // (lines, Ok((tips, alignment)) or Err(error line))
        type Case<'a> = (Vec<&'a str>, Result<(Vec<StillOn>, Option<Align>), usize>);
        let cases: Vec<Case> = vec![
            (
                vec!["[still regression on linus/master 1234567890ab]"],
                Ok((vec![still("linus/master", "1234567890ab", false)], None)),
            ),
            (
                vec![
                    "[still regression on      linus/master 1234567890ab]",
                    "[still regression on linux-next/master abcdef123456]",
                ],
                Ok((
                    vec![
                        still("linus/master", "1234567890ab", false),
                        still("linux-next/master", "abcdef123456", false),
                    ],
                    Some(Align::Right),
                )),
            ),
            (
                vec![
                    "[still regression on linus/master      1234567890ab]",
                    "[test failed on linux-next/master abcdef123456]",
                ],
                Ok((
                    vec![
                        still("linus/master", "1234567890ab", false),
                        still("linux-next/master", "abcdef123456", true),
                    ],
                    Some(Align::Left),
                )),
            ),
            (vec!["other text", ""], Ok((Vec::new(), None))),
            (vec!["", "[still regression on nothing]"], Err(2)),
        ];
        for (lines, want) in cases {
            let got = tips(&lines, 0, lines.len()).map_err(|e| e.line);
            assert_eq!(got, want, "{lines:?}");
        }
    }

    #[test]
    fn test_blocks() {
        let params = |kv: &[(&str, &str)]| -> Map<String, Value> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
                .collect()
        };
        let cases: Vec<(Vec<&str>, Result<TestBlock, usize>)> = vec![
            (
                vec![
                    "testcase: will-it-scale",
                    "config: x86_64-rhel-9.4",
                    "compiler: gcc-12",
                    "test machine: 104 threads 2 sockets",
                    "parameters:",
                    "",
                    "\tnr_task: 100%",
                    "\tmode: process",
                    "\ttest: ",
                    "",
                    "test-description: Will It Scale takes a testcase",
                    "test-url: https://github.com/antonblanchard/will-it-scale",
                    "",
                    "In addition to that, the commit also has significant impact",
                ],
                Ok(TestBlock {
                    kconfig: Some("x86_64-rhel-9.4".into()),
                    compiler: Some("gcc-12".into()),
                    machine: Some("104 threads 2 sockets".into()),
                    params: params(&[("nr_task", "100%"), ("mode", "process"), ("test", "")]),
                    description: Some("Will It Scale takes a testcase".into()),
                    url: Some("https://github.com/antonblanchard/will-it-scale".into()),
                    end: 13,
                }),
            ),
            // The words of 2018: `in testcase:`, `on test machine:`, `with
            // following parameters:`; a parameter without a space.
            (
                vec![
                    "in testcase: aim7",
                    "on test machine: 40 threads",
                    "with following parameters:",
                    "",
                    "\tdisk:1BRD_48G",
                    "Details are as below:",
                ],
                Ok(TestBlock {
                    machine: Some("40 threads".into()),
                    params: params(&[("disk", "1BRD_48G")]),
                    end: 5,
                    ..TestBlock::default()
                }),
            ),
            (vec!["testcase: x", "parameters:", "\tno separator"], Err(3)),
        ];
        for (lines, want) in cases {
            assert_eq!(test_block(&lines, 0).map_err(|e| e.line), want, "{lines:?}");
        }
    }

    #[test]
    fn in_addition_boxes() {
        let lines = [
            "In addition to that, the commit also has significant impact on the following tests:",
            "",
            "+------------------+--------------------------------------------+",
            "| testcase: change | stress-ng: stress-ng.x.ops_per_sec -9.9% regression |",
            "| test machine     | 64 threads                                 |",
            "| test parameters  | cpufreq_governor=performance               |",
            "|                  | nr_threads=100%                            |",
            "| testcase: change | stress-ng:                                 |",
            "+------------------+--------------------------------------------+",
            "",
            "Details are as below:",
        ];
        let got = extras(&lines, 0).unwrap();
        assert_eq!(
            got,
            vec![
                Extra {
                    testcase: "stress-ng".into(),
                    metric: "stress-ng.x.ops_per_sec".into(),
                    change: "-9.9%".into(),
                    kind: "regression".into(),
                    machine: "64 threads".into(),
                    params: vec![
                        "cpufreq_governor=performance".into(),
                        "nr_threads=100%".into()
                    ],
                },
                // A test whose change the robot left out.
                Extra {
                    testcase: "stress-ng".into(),
                    ..Extra::default()
                },
            ]
        );
        let bad = [
            "In addition",
            "+---+",
            "| testcase: change | no colon here |",
        ];
        assert_eq!(extras(&bad, 0).map_err(|e| e.line), Err(3));
    }

    #[test]
    fn tags_and_their_archive() {
        let id = "<202401011234.abcd-lkp@intel.com>";
        let cases: Vec<(Vec<&str>, Tags)> = vec![
            (
                vec![
                    "| Reported-by: kernel test robot <oliver.sang@intel.com>",
                    "| Closes: https://lore.kernel.org/oe-lkp/202401011234.abcd-lkp@intel.com",
                ],
                Tags {
                    reported_by: Some(("kernel test robot".into(), "oliver.sang@intel.com".into())),
                    archive_base: Some("https://lore.kernel.org/oe-lkp".into()),
                    link: false,
                    closes: true,
                },
            ),
            // 2022: no `| `, a `Link:`; the archive of another mail is not this one's.
            (
                vec![
                    "Reported-by: kernel test robot <yujie.liu@intel.com>",
                    "| Link: https://lore.kernel.org/r/other@intel.com",
                ],
                Tags {
                    reported_by: Some(("kernel test robot".into(), "yujie.liu@intel.com".into())),
                    archive_base: None,
                    link: true,
                    closes: false,
                },
            ),
            (vec!["no tags"], Tags::default()),
        ];
        for (lines, want) in cases {
            assert_eq!(tags(&lines, id), want, "{lines:?}");
        }
    }

    #[test]
    fn endings() {
        let cases: Vec<(Vec<&str>, Ending)> = vec![
            (
                vec![
                    "Disclaimer:",
                    "Results have been estimated.",
                    "",
                    "-- ",
                    "0-DAY CI Kernel Test Service",
                    "https://github.com/intel/lkp-tests/wiki",
                    "",
                    "#regzbot introduced: 1234567890ab",
                ],
                Ending {
                    disclaimer: Some("Results have been estimated.".into()),
                    signature: Some(
                        "0-DAY CI Kernel Test Service\nhttps://github.com/intel/lkp-tests/wiki"
                            .into(),
                    ),
                    footer: false,
                    signoff: None,
                    trailer: Some("\n#regzbot introduced: 1234567890ab".into()),
                },
            ),
            // 2021: the footer under a `---` below the disclaimer.
            (
                vec![
                    "Thanks,",
                    "Oliver Sang",
                    "",
                    "Disclaimer:",
                    "Results.",
                    "---",
                    "0DAY/LKP+ Test Infrastructure",
                ],
                Ending {
                    disclaimer: Some("Results.\n---\n0DAY/LKP+ Test Infrastructure".into()),
                    signature: Some("0DAY/LKP+ Test Infrastructure".into()),
                    footer: true,
                    signoff: Some("Oliver Sang".into()),
                    trailer: None,
                },
            ),
            (vec!["Thanks,", ""], Ending::default()),
        ];
        for (lines, want) in cases {
            assert_eq!(ending(&lines), want, "{lines:?}");
        }
    }

    #[test]
    fn reproduce_blocks() {
        let block = [
            "To reproduce:",
            "",
            "        git clone https://github.com/intel/lkp-tests.git",
            "        cd lkp-tests",
            "",
            "Details",
        ];
        let text = "        git clone https://github.com/intel/lkp-tests.git\n        cd lkp-tests";
        for (lines, materials, want) in [
            (&block[..], true, Some(text)),
            (&block[..], false, Some(text)),
            // Neither the block nor the materials' link: an empty block.
            (&block[5..], false, Some("")),
            (&block[5..], true, None),
        ] {
            assert_eq!(reproduce(lines, materials).as_deref(), want, "{lines:?}");
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
        let h = |change: &str, kind: &str, metric: &str| Headline {
            change: change.into(),
            kind: kind.into(),
            metric: metric.into(),
        };
        for (sentence, want) in [
            (
                "kernel test robot noticed a -42.3% regression of stress-ng.utime.ops_per_sec on:",
                Some(h("-42.3%", "regression", "stress-ng.utime.ops_per_sec")),
            ),
            (
                "FYI, we noticed a 993.0% improvement of fio.write_iops due to commit:",
                Some(h("993.0%", "improvement", "fio.write_iops")),
            ),
            (
                "kernel test robot noticed an 8.5% improvement of x.y on:",
                Some(h("8.5%", "improvement", "x.y")),
            ),
            ("FYI, we noticed the below changes on", None),
        ] {
            assert_eq!(headline_words(sentence), want, "{sentence}");
        }
        // Run onto a second line; a build report; a sentence not read.
        let two = [
            "kernel test robot noticed a -5.7% regression of",
            "  x.y on:",
        ];
        assert_eq!(headline(&two, 0), Ok(h("-5.7%", "regression", "x.y")));
        let build = ["kernel test robot noticed the following build errors:"];
        assert!(headline(&build, 0).unwrap_err().not_a_report());
        let odd = ["kernel test robot noticed a 5% regression in x"];
        assert_eq!(headline(&odd, 0).map_err(|e| e.line), Err(1));
    }
}
