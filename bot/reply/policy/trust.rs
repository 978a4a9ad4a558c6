//! Who is speaking, as far as deciding a case goes: the commit's author or
//! committer, a maintainer (from a MAINTAINERS file or a list), an operator of
//! perfbot, someone else, or a robot. The policy says which roles may move a
//! case by prose and which by `#perfbot` command.

use std::collections::HashSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::case::Case;
use crate::model::Address;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Author,
    Committer,
    Maintainer,
    /// Someone who posted a patch in the case's thread (a fix, a revert, a
    /// test patch): their words may move the case to a state that closes
    /// nothing (awaiting a fix or a revert), like the trusted roles'.
    Contributor,
    Operator,
    Other,
    Bot,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Author => "author",
            Role::Committer => "committer",
            Role::Maintainer => "maintainer",
            Role::Contributor => "contributor",
            Role::Operator => "operator",
            Role::Other => "other",
            Role::Bot => "bot",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        [
            Role::Author,
            Role::Committer,
            Role::Maintainer,
            Role::Contributor,
            Role::Operator,
            Role::Other,
            Role::Bot,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the DKIM check said about a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A valid signature by a domain aligned with the From domain: the mail
    /// comes from that domain.
    Aligned(String),
    /// Valid signatures, none by the From domain (a list or a forwarder
    /// re-signed it, or someone signed a forged From with their own key): no
    /// evidence about the author, like an unsigned mail.
    Unaligned(String),
    /// Signed, and no signature verifies (the reason).
    Fail(String),
    /// Not signed (or keys could not be fetched): no evidence either way.
    Unsigned(String),
    /// An aligned signature that verifies but does not cover the mail's
    /// threading headers (the domain, the headers left out): the words are
    /// the sender's, but the thread they answer could have been changed, so
    /// it is no evidence for a decision on this case.
    Uncovered(String),
}

impl Verdict {
    /// For the timeline and logs.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Aligned(d) => format!("pass ({d})"),
            Verdict::Unaligned(d) => format!("pass by {d}, not the From domain: unverified"),
            Verdict::Fail(w) => format!("fail: {w}"),
            Verdict::Unsigned(w) => format!("none: {w}"),
            Verdict::Uncovered(w) => {
                format!("pass ({w} not signed): the thread it answers is unverified")
            }
        }
    }

    /// The sender is who the From header says (an aligned pass).
    pub fn verified(&self) -> bool {
        matches!(self, Verdict::Aligned(_))
    }
}

/// The trust policy, validated from `[trust]`.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub operators: Vec<Address>,
    pub maintainers: HashSet<Address>,
    /// Roles whose prose may move a case.
    pub free_text: Vec<Role>,
    /// Roles whose `#perfbot` commands are obeyed.
    pub commands: Vec<Role>,
    /// Decisions below this confidence go to a human.
    pub min_confidence: f64,
    /// Moves that close nothing (awaiting a fix or revert) may follow anyone.
    pub anyone_moves_open: bool,
}

impl Policy {
    pub fn may_decide_by_text(&self, r: Role) -> bool {
        self.free_text.contains(&r)
    }
    pub fn may_command(&self, r: Role) -> bool {
        self.commands.contains(&r)
    }
}

/// Maintainers' addresses from a kernel MAINTAINERS file (`M:` lines).
pub fn maintainers_from_file(text: &str) -> HashSet<Address> {
    text.lines()
        .filter_map(|l| l.strip_prefix("M:"))
        .filter_map(|m| Address::parse(m.trim()))
        .collect()
}

/// The role of `from` for `case`; a robot is always `Bot`. The strongest role
/// wins: operator, author, committer, maintainer, contributor.
pub fn role(from: Option<&Address>, is_bot: bool, case: &Case, p: &Policy) -> Role {
    if is_bot {
        return Role::Bot;
    }
    let Some(from) = from else {
        return Role::Other;
    };
    let is = |a: &Option<String>| {
        a.as_deref()
            .and_then(Address::parse)
            .is_some_and(|a| &a == from)
    };
    if p.operators.contains(from) {
        Role::Operator
    } else if is(&case.author) {
        Role::Author
    } else if is(&case.committer) {
        Role::Committer
    } else if p.maintainers.contains(from) || cc_person(case, from) {
        Role::Maintainer
    } else if case
        .contributors
        .iter()
        .filter_map(|c| Address::parse(c))
        .any(|a| &a == from)
    {
        Role::Contributor
    } else {
        Role::Other
    }
}

/// The report was copied to `from` by name: the robot copies the
/// maintainers and reviewers of the code (get_maintainer.pl), so they speak
/// for it as a MAINTAINERS file would say.
fn cc_person(case: &Case, from: &Address) -> bool {
    case.cc
        .iter()
        .chain(&case.to)
        .filter_map(|c| Address::parse(c))
        .any(|a| &a == from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maintainers_file() {
        let m = maintainers_from_file(
            "XFS FILESYSTEM\nM:\tCarlos Maiolino <cem@kernel.org>\nL:\tlinux-xfs@vger.kernel.org\nS:\tSupported\nF:\tfs/xfs/\n\nMM\nM:\tAndrew Morton <akpm@linux-foundation.org>\n",
        );
        assert!(m.contains(&Address::parse("cem@kernel.org").unwrap()));
        assert!(m.contains(&Address::parse("akpm@linux-foundation.org").unwrap()));
        assert!(!m.contains(&Address::parse("linux-xfs@vger.kernel.org").unwrap()));
    }
}
