//! Blank lines around a report's sections. The robot's layouts of one era
//! still vary in how many blank lines come before its greeting, its tags or
//! its disclaimer; a report input may say so per section (`spacing`), and a
//! parsed report records where the mail differs from its layout. Sections
//! are found by the line that opens them, the same way when the robot's mail
//! is measured and when perfbot's body is adjusted. Remarks the robot's
//! operators wrote before a section are placed after the spacing, and taken
//! out before blank lines are measured.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A place in a report body where the number of blank lines before it is
/// part of the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Section {
    /// Before the first line of the body.
    Top,
    /// `Greeting,` / `Hello,`.
    Greeting,
    /// The first line after the greeting (a note of the robot's operators,
    /// or the robot's sentence).
    AfterGreeting,
    /// The robot's sentence (`FYI, we noticed …`, `… noticed a …`).
    Headline,
    /// `commit: …`.
    Commit,
    /// `[still regression on …]`, `[test failed on …]`.
    Tips,
    /// `in testcase: …` / `testcase: …`.
    Testcase,
    /// `In addition to that, …`.
    InAddition,
    /// `If you fix the issue …`.
    Tags,
    /// `Details are as below:`.
    Details,
    /// `To reproduce:` / `The kernel config and materials …`.
    Reproduce,
    /// The first table's `=====` rule.
    Table,
    /// The first `*****` rule (a further test's details).
    Rule,
    /// `Disclaimer:`.
    Disclaimer,
    /// The last `---` line (the 2021–22 0DAY footer).
    Footer,
    /// The last `-- ` line (the signature).
    Signature,
    /// After the last line: trailing blank lines.
    End,
}

impl Section {
    pub const ALL: [Section; 17] = [
        Section::Top,
        Section::Greeting,
        Section::AfterGreeting,
        Section::Headline,
        Section::Commit,
        Section::Tips,
        Section::Testcase,
        Section::InAddition,
        Section::Tags,
        Section::Details,
        Section::Reproduce,
        Section::Table,
        Section::Rule,
        Section::Disclaimer,
        Section::Footer,
        Section::Signature,
        Section::End,
    ];

    /// Does `line` open this section? (`Top`, `AfterGreeting` and `End` are positions.)
    fn opens(self, line: &str) -> bool {
        match self {
            Section::Top | Section::End | Section::AfterGreeting => false,
            Section::Greeting => line == "Greeting," || line == "Hello,",
            Section::Headline => {
                line.starts_with("FYI, we noticed") || line.contains(" noticed a ")
            }
            Section::Commit => line.starts_with("commit: "),
            Section::Tips => {
                line.starts_with("[still regression on") || line.starts_with("[test failed on")
            }
            Section::Testcase => {
                line.starts_with("in testcase: ") || line.starts_with("testcase: ")
            }
            Section::InAddition => line.starts_with("In addition to that"),
            Section::Tags => line.starts_with("If you fix the issue"),
            Section::Details => line.starts_with("Details are as below"),
            Section::Reproduce => {
                line == "To reproduce:" || line.starts_with("The kernel config and materials")
            }
            Section::Table => line.starts_with("=========="),
            Section::Rule => line.starts_with("**********"),
            Section::Disclaimer => line == "Disclaimer:",
            Section::Footer => line == "---",
            Section::Signature => line == "-- ",
        }
    }

    /// The line that opens this section in `lines`: the first one, the last
    /// for the footer and the signature; for `Top` the first line that is
    /// not blank; for `End` one past the last line.
    fn find(self, lines: &[&str]) -> Option<usize> {
        match self {
            Section::Top => lines.iter().position(|l| !l.is_empty()),
            Section::End => Some(lines.len()),
            Section::AfterGreeting => {
                let g = Section::Greeting.find(lines)?;
                lines[g + 1..]
                    .iter()
                    .position(|l| !l.is_empty())
                    .map(|p| g + 1 + p)
            }
            Section::Footer | Section::Signature => lines.iter().rposition(|l| self.opens(l)),
            _ => lines.iter().position(|l| self.opens(l)),
        }
    }
}

/// Per section, how many blank lines come before it.
pub type Spacing = BTreeMap<Section, u8>;

/// The blank lines before each section found in `body`.
pub fn measure(body: &str) -> Spacing {
    let lines: Vec<&str> = body.split('\n').collect();
    let mut out = Spacing::new();
    for s in Section::ALL {
        if let Some(at) = s.find(&lines) {
            let blanks = lines[..at]
                .iter()
                .rev()
                .take_while(|l| l.is_empty())
                .count();
            out.insert(s, u8::try_from(blanks).unwrap_or(u8::MAX));
        }
    }
    out
}

/// `body` with the blank lines before each section of `spacing` set to its
/// count; sections the body does not have are left alone.
pub fn apply(body: &str, spacing: &Spacing) -> String {
    if spacing.is_empty() {
        return body.to_string();
    }
    let mut lines: Vec<&str> = body.split('\n').collect();
    for (&s, &want) in spacing {
        let Some(at) = s.find(&lines) else { continue };
        let have = lines[..at]
            .iter()
            .rev()
            .take_while(|l| l.is_empty())
            .count();
        lines.splice(at - have..at, std::iter::repeat_n("", usize::from(want)));
    }
    lines.join("\n")
}

/// Where `theirs` differs from `ours`: the sections both have whose blank
/// lines differ, with `theirs`'s count.
pub fn differences(theirs: &Spacing, ours: &Spacing) -> Spacing {
    theirs
        .iter()
        .filter(|(s, n)| ours.get(s).is_some_and(|m| m != *n))
        .map(|(s, n)| (*s, *n))
        .collect()
}

/// Human text the robot's operators wrote into a report just before one of
/// its sections ("please be noted there are also other regressions …",
/// "besides below detailed comparison, we also noticed …"): the section's
/// blank lines come before it, `blank_after` blank lines after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remark {
    pub before: Section,
    pub text: String,
    #[serde(default)]
    pub blank_after: u8,
}

impl Remark {
    /// Why this remark cannot be placed: it is empty, or one of its lines
    /// would be taken for a section's opening line.
    pub fn problem(&self) -> Option<&'static str> {
        if self.text.trim().is_empty() {
            return Some("is empty");
        }
        if self.text.starts_with('\n') || self.text.ends_with('\n') {
            return Some("starts or ends with a blank line");
        }
        let opens = |l: &str| Section::ALL.iter().any(|s| s.opens(l));
        if self.text.split('\n').any(opens) {
            return Some("has a line that opens a section of the report");
        }
        None
    }

    fn block(&self) -> Vec<&str> {
        let mut b: Vec<&str> = self.text.split('\n').collect();
        b.extend(std::iter::repeat_n("", usize::from(self.blank_after)));
        b
    }
}

/// `body` with each remark placed before its section's opening line (after
/// the section's blank lines); remarks whose section is missing are left out.
pub fn insert_remarks(body: &str, remarks: &[Remark]) -> String {
    if remarks.is_empty() {
        return body.to_string();
    }
    let mut lines: Vec<&str> = body.split('\n').collect();
    for r in remarks {
        let Some(at) = r.before.find(&lines) else {
            continue;
        };
        lines.splice(at..at, r.block());
    }
    lines.join("\n")
}

/// `body` without the remarks `insert_remarks` would have placed: the
/// inverse, so that blank lines are measured as if there were none.
pub fn remove_remarks(body: &str, remarks: &[Remark]) -> String {
    if remarks.is_empty() {
        return body.to_string();
    }
    let mut lines: Vec<&str> = body.split('\n').collect();
    for r in remarks.iter().rev() {
        let Some(at) = r.before.find(&lines) else {
            continue;
        };
        let block = r.block();
        if at >= block.len() && lines[at - block.len()..at] == block[..] {
            lines.drain(at - block.len()..at);
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remarks_are_placed_before_their_section_and_taken_out_again() {
        let remarks = vec![
            Remark {
                before: Section::Commit,
                text: "(but no obvious diff for x)".into(),
                blank_after: 1,
            },
            Remark {
                before: Section::Disclaimer,
                text: "a note\n\nin two paragraphs".into(),
                blank_after: 2,
            },
        ];
        let with = insert_remarks(BODY, &remarks);
        assert_eq!(
            with,
            "\nGreeting,\n\nFYI, we noticed a -5% regression of x due to commit:\n\n\n(but no obvious diff for x)\n\ncommit: 1234\n\nin testcase: fio\n\na note\n\nin two paragraphs\n\n\nDisclaimer:\nresults\n\n-- \nrobot\n"
        );
        assert_eq!(remove_remarks(&with, &remarks), BODY);
        // A body without them is left as it is.
        assert_eq!(remove_remarks(BODY, &remarks), BODY);
        for (text, why) in [
            ("", "is empty"),
            ("\nx", "starts or ends with a blank line"),
            (
                "see below\ncommit: 1234",
                "has a line that opens a section of the report",
            ),
        ] {
            let r = Remark {
                before: Section::Details,
                text: text.into(),
                blank_after: 0,
            };
            assert_eq!(r.problem(), Some(why), "{text:?}");
        }
    }

    const BODY: &str = "\nGreeting,\n\nFYI, we noticed a -5% regression of x due to commit:\n\n\ncommit: 1234\n\nin testcase: fio\n\nDisclaimer:\nresults\n\n-- \nrobot\n";

    #[test]
    fn measures_the_blank_lines_before_each_section() {
        let s = measure(BODY);
        assert_eq!(s[&Section::Top], 1);
        assert_eq!(s[&Section::Greeting], 1);
        assert_eq!(s[&Section::AfterGreeting], 1);
        assert_eq!(s[&Section::Headline], 1);
        assert_eq!(s[&Section::Commit], 2);
        assert_eq!(s[&Section::Testcase], 1);
        assert_eq!(s[&Section::Disclaimer], 1);
        assert_eq!(s[&Section::Signature], 1);
        // The body ends with a newline: one empty piece after it.
        assert_eq!(s[&Section::End], 1);
        assert!(!s.contains_key(&Section::Tags));
    }

    #[test]
    fn applies_counts_and_round_trips() {
        let want: Spacing = [
            (Section::Top, 0),
            (Section::Commit, 1),
            (Section::Disclaimer, 2),
            (Section::Tags, 3),
        ]
        .into();
        let out = apply(BODY, &want);
        assert_eq!(
            out,
            "Greeting,\n\nFYI, we noticed a -5% regression of x due to commit:\n\ncommit: 1234\n\nin testcase: fio\n\n\nDisclaimer:\nresults\n\n-- \nrobot\n"
        );
        let m = measure(&out);
        assert_eq!(
            (
                m[&Section::Top],
                m[&Section::Commit],
                m[&Section::Disclaimer]
            ),
            (0, 1, 2)
        );
        // Measuring a body and applying its counts to itself changes nothing.
        assert_eq!(apply(BODY, &measure(BODY)), BODY);
        assert_eq!(
            differences(&measure(&out), &measure(BODY)),
            [
                (Section::Top, 0),
                (Section::Greeting, 0),
                (Section::Commit, 1),
                (Section::Disclaimer, 2)
            ]
            .into()
        );
    }

    #[test]
    fn names_are_kebab_case_and_unknown_ones_are_refused() {
        let s: Spacing = serde_json::from_str(r#"{"in-addition": 2, "top": 0}"#).unwrap();
        assert_eq!(s[&Section::InAddition], 2);
        assert!(serde_json::from_str::<Spacing>(r#"{"middle": 1}"#).is_err());
        assert!(serde_json::from_str::<Spacing>(r#"{"top": 300}"#).is_err());
    }
}
