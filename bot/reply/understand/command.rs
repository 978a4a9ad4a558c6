//! Explicit commands, for humans who want no doubt: `#perfbot invalid`, at the
//! start of a line outside quotes. And the kernel's own trailers in patches
//! posted on the list (`Closes:`, `Link:`, `Reported-by:`, `Fixes:`).

use super::intent::Intent;
use super::quote::is_quote;
use crate::model::ignore::{valid_target, ScopeKind};

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "name", content = "argument")]
pub enum Command {
    Invalid,
    Revert,
    Fixed(String),
    Dup(String),
    WontFix,
    Reopen,
    Escalate,
    /// Do not report this metric or testcase again, in the case's series or
    /// subsystem (`None`: the series if the case is on a patch, else the
    /// subsystem).
    Ignore {
        what: String,
        scope: Option<ScopeKind>,
    },
}

impl Command {
    /// The intent a command stands for.
    pub fn intent(&self) -> Intent {
        match self {
            Command::Invalid => Intent::NotARegression,
            Command::Revert => Intent::WillRevert,
            Command::Fixed(_) => Intent::FixPosted,
            Command::Dup(_) => Intent::Duplicate,
            Command::WontFix => Intent::WontFix,
            Command::Reopen => Intent::Other,
            Command::Escalate => Intent::Question,
            Command::Ignore { .. } => Intent::WontFix,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Command::Invalid => "invalid",
            Command::Revert => "revert",
            Command::Fixed(_) => "fixed",
            Command::Dup(_) => "dup",
            Command::WontFix => "wontfix",
            Command::Reopen => "reopen",
            Command::Escalate => "escalate",
            Command::Ignore { .. } => "ignore",
        }
    }
}

pub const USAGE: &str = "#perfbot invalid | revert | fixed <sha> | dup <case> | wontfix | reopen | escalate | ignore <metric|testcase> [series|subsystem]";

/// What is wrong with a `#perfbot` line (told to its sender as it reads).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("a command is missing: {USAGE}")]
    Missing,
    #[error("#perfbot {verb}: unexpected {extra:?}; usage: {USAGE}")]
    Unexpected { verb: String, extra: String },
    #[error("#perfbot fixed: {0:?} is not a commit id (7 to 40 hex digits)")]
    NotACommit(String),
    #[error("#perfbot fixed: which commit? usage: #perfbot fixed <sha>")]
    FixedWhich,
    #[error("#perfbot dup: of which case? usage: #perfbot dup <case>")]
    DupOfWhich,
    #[error("#perfbot {verb} takes no argument (got {arg:?})")]
    NoArgument { verb: String, arg: String },
    #[error("unknown command {0:?}; usage: {USAGE}")]
    Unknown(String),
    #[error("a case cannot duplicate itself")]
    DupOfItself,
    #[error("#perfbot dup: no case {0:?}")]
    NoSuchCase(String),
    #[error("#perfbot ignore: which metric or testcase? usage: #perfbot ignore <metric|testcase> [series|subsystem]")]
    IgnoreWhat,
    #[error("#perfbot ignore: {0:?} is not a metric or testcase name")]
    NotATarget(String),
    #[error("#perfbot ignore: the scope is series or subsystem, not {0:?}")]
    BadScope(String),
    #[error("#perfbot ignore: this case has no {0} to scope the rule to")]
    NoScope(&'static str),
}

/// A `#perfbot` line: the command, or what was wrong with it.
pub type Parsed = Result<Command, CommandError>;

fn is_sha(s: &str) -> bool {
    (7..=40).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit())
}

pub fn parse_line(line: &str) -> Option<(String, Parsed)> {
    let t = line.trim();
    let rest = t.strip_prefix("#perfbot")?;
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let mut words = rest.split_whitespace();
    let verb = words.next().map(str::to_ascii_lowercase);
    if verb.as_deref() == Some("ignore") {
        return Some((t.to_string(), parse_ignore(words.collect())));
    }
    let arg = words.next();
    let extra = words.next();
    let parsed = match (verb.as_deref(), arg, extra) {
        (None, _, _) => Err(CommandError::Missing),
        (Some(v), _, Some(x)) => Err(CommandError::Unexpected {
            verb: v.to_string(),
            extra: x.to_string(),
        }),
        (Some("invalid"), None, _) => Ok(Command::Invalid),
        (Some("revert"), None, _) => Ok(Command::Revert),
        (Some("wontfix"), None, _) => Ok(Command::WontFix),
        (Some("reopen"), None, _) => Ok(Command::Reopen),
        (Some("escalate"), None, _) => Ok(Command::Escalate),
        (Some("fixed"), Some(sha), _) if is_sha(sha) => {
            Ok(Command::Fixed(sha.to_ascii_lowercase()))
        }
        (Some("fixed"), Some(x), _) => Err(CommandError::NotACommit(x.to_string())),
        (Some("fixed"), None, _) => Err(CommandError::FixedWhich),
        (Some("dup"), Some(c), _) => Ok(Command::Dup(c.to_string())),
        (Some("dup"), None, _) => Err(CommandError::DupOfWhich),
        (Some(v @ ("invalid" | "revert" | "wontfix" | "reopen" | "escalate")), Some(x), _) => {
            Err(CommandError::NoArgument {
                verb: v.to_string(),
                arg: x.to_string(),
            })
        }
        (Some(v), _, _) => Err(CommandError::Unknown(v.to_string())),
    };
    Some((t.to_string(), parsed))
}

/// `#perfbot ignore <metric|testcase> [series|subsystem]`, after the verb.
fn parse_ignore(args: Vec<&str>) -> Parsed {
    let scope = match args.get(1) {
        None => None,
        Some(s) => Some(ScopeKind::parse(s).ok_or_else(|| CommandError::BadScope(s.to_string()))?),
    };
    match args.as_slice() {
        [] => Err(CommandError::IgnoreWhat),
        [what, ..] if !valid_target(what) => Err(CommandError::NotATarget(what.to_string())),
        [what] | [what, _] => Ok(Command::Ignore {
            what: what.to_string(),
            scope,
        }),
        [_, _, x, ..] => Err(CommandError::Unexpected {
            verb: "ignore".into(),
            extra: x.to_string(),
        }),
    }
}

/// Every `#perfbot` line of the replier's own words (quotes are never read).
pub fn commands(own_words: &str) -> Vec<(String, Parsed)> {
    own_words.lines().filter_map(parse_line).collect()
}

/// Kernel trailers in a posted patch.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Trailers {
    /// URLs of `Closes:` and `Link:` lines.
    pub links: Vec<String>,
    pub reported_by_robot: bool,
    /// Commit ids of `Fixes:` lines.
    pub fixes: Vec<String>,
}

pub fn trailers(body: &str, robot_names: &[&str]) -> Trailers {
    let mut t = Trailers::default();
    for line in body.lines() {
        let l = line.trim();
        if is_quote(l) {
            continue;
        }
        if let Some(v) = l
            .strip_prefix("Closes:")
            .or_else(|| l.strip_prefix("Link:"))
        {
            t.links.push(v.trim().to_string());
        } else if let Some(v) = l.strip_prefix("Reported-by:") {
            let v = v.to_ascii_lowercase();
            if robot_names.iter().any(|n| v.contains(n)) {
                t.reported_by_robot = true;
            }
        } else if let Some(v) = l.strip_prefix("Fixes:") {
            if let Some(sha) = v.split_whitespace().next().filter(|s| is_sha(s)) {
                t.fixes.push(sha.to_ascii_lowercase());
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let cases: &[(&str, Option<Result<Command, &str>>)] = &[
            ("#perfbot invalid", Some(Ok(Command::Invalid))),
            ("  #perfbot revert", Some(Ok(Command::Revert))),
            (
                "#perfbot fixed 0123abcd",
                Some(Ok(Command::Fixed("0123abcd".into()))),
            ),
            (
                "#perfbot dup 0123456789ab",
                Some(Ok(Command::Dup("0123456789ab".into()))),
            ),
            ("#perfbot WONTFIX", Some(Ok(Command::WontFix))),
            ("#perfbot fixed", Some(Err("which commit"))),
            ("#perfbot fixed zzz", Some(Err("not a commit id"))),
            ("#perfbot frobnicate", Some(Err("unknown command"))),
            ("#perfbot invalid now", Some(Err("takes no argument"))),
            ("#perfbot", Some(Err("missing"))),
            (
                "#perfbot ignore fio.write_iops",
                Some(Ok(Command::Ignore {
                    what: "fio.write_iops".into(),
                    scope: None,
                })),
            ),
            (
                "#perfbot ignore fio-basic Subsystem",
                Some(Ok(Command::Ignore {
                    what: "fio-basic".into(),
                    scope: Some(ScopeKind::Subsystem),
                })),
            ),
            ("#perfbot ignore", Some(Err("which metric or testcase"))),
            ("#perfbot ignore a;b", Some(Err("not a metric or testcase"))),
            (
                "#perfbot ignore x forever",
                Some(Err("series or subsystem")),
            ),
            ("#perfbot ignore x series now", Some(Err("unexpected"))),
            ("#perfbotinvalid", None),
            ("I said #perfbot invalid", None),
        ];
        for (line, want) in cases {
            let got = parse_line(line).map(|(_, p)| p);
            match (got, want) {
                (None, None) => {}
                (Some(Ok(c)), Some(Ok(w))) => assert_eq!(&c, w, "{line}"),
                (Some(Err(e)), Some(Err(w))) => assert!(e.to_string().contains(w), "{line}: {e}"),
                (g, w) => panic!("{line}: got {g:?}, want {w:?}"),
            }
        }
        // Quoted commands are not the replier's.
        assert!(commands("hello").is_empty());
    }

    #[test]
    fn kernel_trailers() {
        let t = trailers(
            "Fixes: 97769a53f117 (\"mm, bpf: x\")\nReported-by: kernel test robot <oliver.sang@intel.com>\nCloses: https://lore.kernel.org/oe-lkp/202503101254.cfd454df-lkp@intel.com\n> Fixes: deadbeef00\n",
            &["kernel test robot"],
        );
        assert_eq!(t.fixes, ["97769a53f117"]);
        assert!(t.reported_by_robot);
        assert_eq!(
            t.links,
            ["https://lore.kernel.org/oe-lkp/202503101254.cfd454df-lkp@intel.com"]
        );
    }
}
