//! `#perfbot ignore <metric|testcase>`: a trusted person's word that a metric
//! or a test is not to be reported again within a patch series or a
//! subsystem. A rule is kept with who gave it, where and when; a later report
//! it covers is recorded with the decision carried over and its mail held.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::case::{Case, CaseId};
use super::ids::MessageId;
use super::series::series_key;

/// Where a rule applies, as the command says it (`series` or `subsystem`),
/// before it is tied to a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeKind {
    Series,
    Subsystem,
}

impl ScopeKind {
    pub fn parse(s: &str) -> Option<ScopeKind> {
        match s.to_ascii_lowercase().as_str() {
            "series" => Some(ScopeKind::Series),
            "subsystem" => Some(ScopeKind::Subsystem),
            _ => None,
        }
    }
}

/// Where a rule applies, tied to what the case says: the series' subject key
/// or the subsystem's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "name")]
pub enum Scope {
    Series(String),
    Subsystem(String),
}

impl Scope {
    /// The scope `kind` names for `case` (none given: the case's series if it
    /// reports a patch, else its subsystem). `None`: the case has no such
    /// scope (no patch series, no subsystem).
    pub fn of(kind: Option<ScopeKind>, case: &Case) -> Option<Scope> {
        let series = || series_key(&case.subject).map(Scope::Series);
        let subsystem = || case.subsystem.clone().map(Scope::Subsystem);
        match kind {
            Some(ScopeKind::Series) => series(),
            Some(ScopeKind::Subsystem) => subsystem(),
            None => series().or_else(subsystem),
        }
    }

    fn covers(&self, case: &Case) -> bool {
        match self {
            Scope::Series(key) => series_key(&case.subject).as_deref() == Some(key.as_str()),
            Scope::Subsystem(name) => case.subsystem.as_deref() == Some(name.as_str()),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Series(key) => write!(f, "series \"{key}\""),
            Scope::Subsystem(name) => write!(f, "subsystem {name}"),
        }
    }
}

/// A metric (`fio.write_iops`) or a testcase (`fio-basic`) as a command may
/// name it: one word of letters, digits and `._-+:/`, at most 200 bytes.
pub fn valid_target(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 200
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-+:/".contains(c))
}

/// One `#perfbot ignore` that was obeyed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IgnoreRule {
    /// The metric or testcase named.
    pub what: String,
    pub scope: Scope,
    /// Who said it (the From header).
    pub by: String,
    /// The mail that said it.
    pub message_id: MessageId,
    /// The case whose thread it was said in.
    pub case: CaseId,
    pub at: DateTime<Utc>,
}

impl IgnoreRule {
    /// The store key: one rule per mail and target.
    pub fn key(&self) -> String {
        format!("{}\0{}", self.message_id, self.what)
    }

    /// The rule names `case`'s headline metric or its testcase, in its scope.
    pub fn covers(&self, case: &Case) -> bool {
        names(&self.what, case) && self.scope.covers(case)
    }

    /// For people: what, where, by whom, in which mail.
    pub fn describe(&self) -> String {
        format!(
            "#perfbot ignore {} ({}) by {} in <{}>",
            self.what, self.scope, self.by, self.message_id
        )
    }

    /// Why a report this rule covers is held: the same words name the rule
    /// when it is dropped, so its held mails can be pointed out.
    pub fn held_reason(&self) -> String {
        format!("ignored: {}", self.describe())
    }
}

/// `what` names the case's headline metric or its testcase.
pub fn names(what: &str, case: &Case) -> bool {
    what == case.headline_metric || what == case.testcase
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(subject: &str, subsystem: Option<&str>) -> Case {
        let mut c = Case::sample(
            "0123456789ab",
            super::super::CaseState::Reported,
            Utc::now(),
        );
        c.subject = subject.into();
        c.subsystem = subsystem.map(str::to_string);
        c
    }

    #[test]
    fn scopes() {
        let patch = case("Re: [PATCH v2 1/2] xfs: prealloc less", Some("xfs"));
        let tree = case(
            "[xfs] 0b02c8c0d7: fio.write_iops -9.0% regression",
            Some("xfs"),
        );
        let bare = case(
            "[linus:master] 0b02c8c0d7: fio.write_iops -9.0% regression",
            None,
        );
        let table: &[(&Case, Option<ScopeKind>, Option<Scope>)] = &[
            (
                &patch,
                None,
                Some(Scope::Series("xfs: prealloc less".into())),
            ),
            (
                &patch,
                Some(ScopeKind::Subsystem),
                Some(Scope::Subsystem("xfs".into())),
            ),
            (&tree, None, Some(Scope::Subsystem("xfs".into()))),
            (&tree, Some(ScopeKind::Series), None),
            (&bare, None, None),
        ];
        for (c, kind, want) in table {
            assert_eq!(&Scope::of(*kind, c), want, "{} {kind:?}", c.subject);
        }
    }

    #[test]
    fn a_rule_covers_its_metric_or_test_in_its_scope() {
        let rule = |what: &str, scope: Scope| IgnoreRule {
            what: what.into(),
            scope,
            by: "Dave <d@x>".into(),
            message_id: MessageId::parse("i@x").unwrap(),
            case: CaseId::parse("0123456789ab").unwrap(),
            at: Utc::now(),
        };
        let v3 = case("Re: [PATCH v3 1/2] xfs: prealloc less", Some("xfs"));
        let other = case("Re: [PATCH] xfs: something else", Some("xfs"));
        let series = Scope::Series("xfs: prealloc less".into());
        let xfs = Scope::Subsystem("xfs".into());
        for (r, c, want) in [
            (rule("fio.write_iops", series.clone()), &v3, true),
            (rule("fio-basic", series.clone()), &v3, true),
            (rule("fio.read_iops", series.clone()), &v3, false),
            (rule("fio.write_iops", series.clone()), &other, false),
            (rule("fio.write_iops", xfs.clone()), &other, true),
            (
                rule("fio.write_iops", Scope::Subsystem("ext4".into())),
                &other,
                false,
            ),
        ] {
            assert_eq!(r.covers(c), want, "{} on {}", r.describe(), c.subject);
        }
    }

    #[test]
    fn targets() {
        for (s, ok) in [
            ("fio.write_iops", true),
            ("will-it-scale.per_process_ops", true),
            ("stress-ng.fallocate.ops_per_sec", true),
            ("", false),
            ("a b", false),
            ("x;rm", false),
        ] {
            assert_eq!(valid_target(s), ok, "{s:?}");
        }
        assert!(!valid_target(&"a".repeat(201)));
    }
}
