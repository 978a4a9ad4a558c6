//! Which case a message belongs to: by In-Reply-To, then References, then the
//! commit id and metric in a reply's subject (`Re: [xfs] b027d4c97b: fio…`);
//! a reply with no threading headers at all, by the report it quotes.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use super::parse::Head;
use crate::model::case::{Case, CaseId};
use crate::model::subject::{strip_reply_prefix, topic};
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
    /// Reports by their subject's `topic`: (headline metric, change, case).
    by_topic: HashMap<String, Vec<(String, String, CaseId)>>,
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
        let t = topic(&c.subject);
        if !t.is_empty() && !c.headline_metric.is_empty() {
            let list = self.by_topic.entry(t).or_default();
            list.retain(|(_, _, id)| id != &c.id);
            list.push((
                c.headline_metric.clone(),
                c.headline_change.clone(),
                c.id.clone(),
            ));
        }
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

    /// Whether some report's subject has the topic of `subject`.
    pub fn has_topic(&self, subject: &str) -> bool {
        self.by_topic.contains_key(&topic(subject))
    }

    /// The one report a message quotes: the message's subject has the
    /// report's topic, and its text names the report's headline metric and
    /// the size of its change (the headline sentence, "noticed a -25.8%
    /// regression of will-it-scale.per_thread_ops", quoted or not). For a
    /// reply whose mailer dropped both threading headers: a report that is a
    /// reply to a patch shares its Subject with the whole patch thread, so the
    /// subject alone cannot tell.
    pub fn quoted_report(&self, subject: &str, text: &str) -> Option<CaseId> {
        let list = self.by_topic.get(&topic(subject))?;
        let mut hits = list
            .iter()
            .filter(|(metric, change, _)| names_metric(text, metric) && names_change(text, change));
        let first = hits.next()?;
        hits.next().is_none().then(|| first.2.clone())
    }

    /// Cases whose commit has this subject line.
    pub fn by_commit_subject(&self, subject: &str) -> Vec<CaseId> {
        self.by_commit_subject
            .get(subject.trim())
            .cloned()
            .unwrap_or_default()
    }
}

/// Whether `text` names `metric` as a whole (not a part of a longer
/// metric's name; a full stop may end the sentence).
fn names_metric(text: &str, metric: &str) -> bool {
    let part = |c: char| c.is_alphanumeric() || "_-/".contains(c);
    text.match_indices(metric).any(|(at, _)| {
        let mut after = text[at + metric.len()..].chars();
        let longer = match after.next() {
            Some('.') => after.next().is_some_and(part),
            next => next.is_some_and(part),
        };
        let before = text[..at].chars().next_back();
        !longer && !before.is_some_and(|c| part(c) || c == '.')
    })
}

/// Whether `text` names the size of `change` ("-25.8%": "25.8%"), with any
/// sign; a report without a change needs none.
fn names_change(text: &str, change: &str) -> bool {
    let size = change.trim_start_matches(['-', '+', '\u{2212}']);
    size.is_empty()
        || text.match_indices(size).any(|(at, _)| {
            !text[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_digit() || c == '.')
        })
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

    /// A reply that answers nothing, by the report it quotes: the report's
    /// topic, and its headline metric and change named in the text.
    #[test]
    fn quoted_reports() {
        use crate::model::case::CaseState;
        let now = chrono::Utc::now();
        let report = |id: &str, subject: &str, metric: &str, change: &str| {
            let mut c = Case::sample(id, CaseState::Reported, now);
            c.subject = subject.into();
            c.headline_metric = metric.into();
            c.headline_change = change.into();
            c
        };
        let patch = "Re: [PATCH v2 3/5] mm: memcg: make stats flushing threshold per-memcg";
        let cases = [
            report(
                "0a0a0a0a0a0a",
                patch,
                "will-it-scale.per_thread_ops",
                "-25.8%",
            ),
            report(
                "0b0b0b0b0b0b",
                patch,
                "will-it-scale.per_process_ops",
                "-30.2%",
            ),
            report("0c0c0c0c0c0c", "Re: [PATCH] x: y", "fio.read_iops", ""),
            report("0d0d0d0d0d0d", "Re: [PATCH] twice", "a.b", "-1.5%"),
            report("0e0e0e0e0e0e", "Re: [PATCH] twice", "a.b", "+1.5%"),
        ];
        let idx = SubjectIndex::new(&cases);
        let headline =
            "> kernel test robot noticed a -25.8% regression of will-it-scale.per_thread_ops on:";
        // (subject, text, the case found)
        let table: &[(&str, &str, Option<&str>)] = &[
            (patch, headline, Some("0a0a0a0a0a0a")),
            // Whatever the mailer did to the subject.
            (
                "[cgroups] RE:  re: [PATCH v2 3/5] mm: memcg: make stats flushing threshold\n per-memcg",
                headline,
                Some("0a0a0a0a0a0a"),
            ),
            // Quoted deeper, or the sign typed otherwise.
            (
                patch,
                "> > noticed a \u{2212}30.2% regression of will-it-scale.per_process_ops",
                Some("0b0b0b0b0b0b"),
            ),
            (patch, "I see a 25.8% drop in will-it-scale.per_thread_ops.", Some("0a0a0a0a0a0a")),
            // Another size, or another metric that starts alike.
            (patch, "> noticed a -125.8% regression of will-it-scale.per_thread_ops", None),
            (patch, "> noticed a -25.8% regression of will-it-scale.per_thread_ops_x", None),
            (patch, "> noticed a -25.8% regression of x-will-it-scale.per_thread_ops", None),
            // The patch thread's other mail: the metric or the size unnamed.
            (patch, "Looks good to me.", None),
            (patch, "> 25.8%", None),
            // Another topic.
            ("Re: [PATCH v3 3/5] mm: memcg: make stats flushing threshold per-memcg", headline, None),
            ("Re: [x86] abc: will-it-scale.per_thread_ops -25.8% regression", headline, None),
            // A report without a change needs its metric alone.
            ("Re: [PATCH] x: y", "> of fio.read_iops on:", Some("0c0c0c0c0c0c")),
            // Two reports alike but for the sign: no guess.
            ("Re: [PATCH] twice", "> a.b 1.5%", None),
        ];
        for &(subject, text, want) in table {
            let got = idx.quoted_report(subject, text);
            assert_eq!(got.as_ref().map(|c| c.as_str()), want, "{subject} / {text}");
            assert!(idx.has_topic(subject) || want.is_none(), "{subject}");
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
