//! Which case a message belongs to: by In-Reply-To, then References, then the
//! commit id and metric in a reply's subject (`Re: [xfs] b027d4c97b: fio…`).

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use super::parse::Head;
use crate::model::case::{Case, CaseId};
use crate::model::subject::strip_reply_prefix;
pub use crate::model::MatchedBy;
use crate::model::MessageId;

/// A commit id and the metric after it, as in perfbot's subjects; the
/// robot's of 2014 put the change between them (`5507231dd04: -18.2%
/// vm-scalability.migrate_mbps`).
static COMMIT_METRIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b([0-9a-f]{10,40}):\s+(?:[-+\x{2212}]?(?:[0-9.]+|Inf)%\s+)?(\S+)").unwrap()
});

/// Commit id (lower case) and metric named by a reply's subject.
pub fn subject_key(subject: &str) -> Option<(String, String)> {
    let rest = strip_reply_prefix(subject)?;
    let c = COMMIT_METRIC.captures(rest)?;
    let metric = c[2].trim_end_matches([',', ';', ':']).to_string();
    Some((c[1].to_ascii_lowercase(), metric))
}

/// Cases by the first ten digits of their commit, for the subject fallback.
#[derive(Debug, Default, Clone)]
pub struct SubjectIndex {
    by_commit: HashMap<String, Vec<(String, String, CaseId)>>,
    by_commit_subject: HashMap<String, Vec<CaseId>>,
}

impl SubjectIndex {
    pub fn new(cases: &[Case]) -> Self {
        let mut idx = SubjectIndex::default();
        for c in cases {
            idx.add(c);
        }
        idx
    }

    pub fn add(&mut self, c: &Case) {
        if !c.commit_subject.is_empty() {
            let list = self
                .by_commit_subject
                .entry(c.commit_subject.trim().to_string())
                .or_default();
            if !list.contains(&c.id) {
                list.push(c.id.clone());
            }
        }
        if c.commit.len() >= 10 {
            let list = self
                .by_commit
                .entry(c.commit[..10].to_ascii_lowercase())
                .or_default();
            // A case added again (read in full after a glance) is listed once.
            list.retain(|(_, _, id)| id != &c.id);
            list.push((
                c.commit.to_ascii_lowercase(),
                c.headline_metric.clone(),
                c.id.clone(),
            ));
        }
    }

    /// The one case whose commit starts with `commit` and whose headline metric
    /// is `metric`; none when that is ambiguous.
    pub fn find(&self, commit: &str, metric: &str) -> Option<CaseId> {
        if commit.len() < 10 {
            return None;
        }
        let list = self.by_commit.get(&commit[..10])?;
        let mut hits = list
            .iter()
            .filter(|(sha, m, _)| sha.starts_with(commit) && m == metric);
        let first = hits.next()?;
        hits.next().is_none().then(|| first.2.clone())
    }
}

impl SubjectIndex {
    /// Cases of the commit `sha` (a prefix of at least ten digits).
    pub fn by_sha(&self, sha: &str) -> Vec<CaseId> {
        let sha = sha.to_ascii_lowercase();
        if sha.len() < 10 {
            return Vec::new();
        }
        self.by_commit
            .get(&sha[..10])
            .map(|l| {
                l.iter()
                    .filter(|(full, _, _)| full.starts_with(&sha) || sha.starts_with(full.as_str()))
                    .map(|(_, _, id)| id.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Cases whose commit has this subject line.
    pub fn by_commit_subject(&self, subject: &str) -> Vec<CaseId> {
        self.by_commit_subject
            .get(subject.trim())
            .cloned()
            .unwrap_or_default()
    }
}

/// A subject that names a commit and a change the way the robot's reports
/// do (`[xfs]  0b02c8c0d7:  fio.write_iops -9.0% regression`).
static REPORT_SUBJECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b[0-9a-f]{7,40}:\s+\S+\s+[-+\x{2212}]?[0-9.]+%\s+(regression|improvement)")
        .unwrap()
});

/// Whether a subject reads like a robot's performance report (or a reply
/// to one).
pub fn is_report_subject(subject: &str) -> bool {
    REPORT_SUBJECT.is_match(subject)
}

static REVERTS_COMMIT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)this reverts commit ([0-9a-f]{10,40})").unwrap());
static REVERT_SUBJECT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^(?:\[[^\]]*\]\s*)*Revert "(.+)"\s*$"#).unwrap());

/// Cases a revert patch reverts: by "This reverts commit <sha>" in the body,
/// else by `Revert "<commit subject>"`.
pub fn reverted_cases(subject: &str, body: &str, idx: &SubjectIndex) -> Vec<CaseId> {
    let mut out: Vec<CaseId> = REVERTS_COMMIT
        .captures_iter(body)
        .flat_map(|c| idx.by_sha(&c[1]))
        .collect();
    if out.is_empty() {
        if let Some(c) = REVERT_SUBJECT.captures(subject.trim()) {
            out = idx.by_commit_subject(&c[1]);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Message-IDs named by `Closes:`/`Link:` URLs (their last path segment).
pub fn trailer_ids(links: &[String]) -> Vec<MessageId> {
    links
        .iter()
        .filter_map(|l| {
            let l = l.trim().trim_end_matches('/');
            let seg = l.rsplit('/').next()?;
            let seg = seg.replace("%40", "@");
            MessageId::parse(&seg).filter(|m| m.as_str().contains('@'))
        })
        .collect()
}

/// Match a message to a case. `known` answers for Message-IDs of case threads.
pub fn match_case(
    head: &Head,
    known: impl Fn(&MessageId) -> Option<CaseId>,
    subjects: &SubjectIndex,
) -> Option<(CaseId, MatchedBy)> {
    match_ids(
        &head.in_reply_to,
        &head.references,
        &head.subject,
        known,
        subjects,
    )
}

/// `match_case` on the threading headers alone.
pub fn match_ids(
    in_reply_to: &[MessageId],
    references: &[MessageId],
    subject: &str,
    known: impl Fn(&MessageId) -> Option<CaseId>,
    subjects: &SubjectIndex,
) -> Option<(CaseId, MatchedBy)> {
    for id in in_reply_to {
        if let Some(c) = known(id) {
            return Some((c, MatchedBy::InReplyTo));
        }
    }
    // The nearest ancestor first.
    for id in references.iter().rev() {
        if let Some(c) = known(id) {
            return Some((c, MatchedBy::References));
        }
    }
    let (commit, metric) = subject_key(subject)?;
    subjects
        .find(&commit, &metric)
        .map(|c| (c, MatchedBy::Subject))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects() {
        let cases: &[(&str, Option<(&str, &str)>)] = &[
            (
                "Re: [xfs] b027d4c97b: fio.write_iops -19.6% regression",
                Some(("b027d4c97b", "fio.write_iops")),
            ),
            (
                "AW: Re: [lkp-robot] [f2fs]  84b89e5d94:  aim7.jobs-per-min 91.4% improvement",
                Some(("84b89e5d94", "aim7.jobs-per-min")),
            ),
            (
                "Fwd: [linus:master] [mm]  0123456789abcdef: will-it-scale.per_process_ops -5.2% regression",
                Some(("0123456789abcdef", "will-it-scale.per_process_ops")),
            ),
            ("RE[2]: x 0123456789: m", Some(("0123456789", "m"))),
            (
                "Re: [mempolicy] 5507231dd04: -18.2% vm-scalability.migrate_mbps",
                Some(("5507231dd04", "vm-scalability.migrate_mbps")),
            ),
            (
                "Re: [x] 5507231dd04: +Inf% perf-profile.a",
                Some(("5507231dd04", "perf-profile.a")),
            ),
            // Not a reply: a new thread is never matched by its subject.
            ("[xfs] b027d4c97b: fio.write_iops -19.6% regression", None),
            ("Re: [PATCH] xfs: fix the thing", None),
            ("Re: ", None),
        ];
        for (s, want) in cases {
            let got = subject_key(s);
            let want = want.map(|(a, b)| (a.to_string(), b.to_string()));
            assert_eq!(got, want, "{s}");
        }
    }

    /// A case read at a glance (ten digits of its commit), then in full:
    /// listed once, found by either.
    #[test]
    fn a_case_added_again_is_listed_once() {
        use crate::model::case::CaseState;
        let mut c = Case::sample("0a0a0a0a0a0a", CaseState::Reported, chrono::Utc::now());
        c.commit = "0123456789".into();
        c.headline_metric = "fio.write_iops".into();
        let mut idx = SubjectIndex::new(std::slice::from_ref(&c));
        c.commit = "0123456789abcdef0123456789abcdef01234567".into();
        c.commit_subject = "xfs: a thing".into();
        idx.add(&c);
        idx.add(&c);
        assert_eq!(idx.by_sha("0123456789"), vec![c.id.clone()]);
        assert_eq!(
            idx.find("0123456789ab", "fio.write_iops"),
            Some(c.id.clone())
        );
        assert_eq!(idx.by_commit_subject("xfs: a thing"), vec![c.id.clone()]);
    }
}
