//! What a robot report says of itself at a glance, for a report whose body
//! cannot be read in full (a layout not seen before, a copy cut short): the
//! Subject's `<sha>: <metric> <change> <kind>` (or 2014's `<sha>: <change>
//! <metric>`), else the body's "noticed a <change> <kind> of <metric>"
//! sentence and its `commit:` line. Enough to follow the report's thread as a
//! case; never a table.

use std::sync::LazyLock;

use regex::Regex;

use super::sections::{commit_line, headline_words, split_mailbox};
use crate::model::quote_marks::is_quote;

/// The headline and commit a report names outside its table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glance {
    /// The commit, as long as the mail gives it (ten digits in a Subject).
    pub commit: Option<String>,
    /// The commit's subject, when the body's `commit:` line was read.
    pub commit_subject: Option<String>,
    pub metric: String,
    /// As printed: `-42.3%`, `12.8%`.
    pub change: String,
    /// `regression` or `improvement` (empty when the mail does not say;
    /// `change` for a 2014 Subject whose metric has no direction, as the
    /// full reading has it).
    pub kind: String,
}

/// `[fs] 140402bab8: stress-ng.splice.ops_per_sec -100.0% regression`.
static SUBJECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b([0-9a-f]{7,40}):\s+(\S+)\s+([-+\x{2212}]?[0-9][0-9.]*%)\s+(regression|improvement)\b",
    )
    .expect("a valid pattern")
});

/// 2014: `[mempolicy] 5507231dd04: -18.2% vm-scalability.migrate_mbps`.
static SUBJECT_2014: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b([0-9a-f]{7,40}):\s+([-+\x{2212}]?[0-9][0-9.]*%)\s+(\S*\.\S+)")
        .expect("a valid pattern")
});

/// The Subject's headline (whitespace folded: a long Subject is folded
/// over two lines).
pub fn of_subject(subject: &str) -> Option<Glance> {
    let s = subject.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(c) = SUBJECT.captures(&s) {
        return Some(Glance {
            commit: Some(c[1].to_ascii_lowercase()),
            commit_subject: None,
            metric: c[2].to_string(),
            change: c[3].replace('\u{2212}', "-"),
            kind: c[4].to_ascii_lowercase(),
        });
    }
    let c = SUBJECT_2014.captures(&s)?;
    let change = c[2].replace('\u{2212}', "-");
    let metric = c[3].trim_end_matches([',', ';', ':', '.']).to_string();
    // As the full reading has it: a rise of a latency is a regression.
    let kind = super::kind_2014(&metric, &change).to_string();
    Some(Glance {
        commit: Some(c[1].to_ascii_lowercase()),
        commit_subject: None,
        metric,
        change,
        kind,
    })
}

/// The body's sentence and the first `commit:` line after it.
pub fn of_body(body: &str) -> Option<Glance> {
    let lines: Vec<&str> = body.lines().map(str::trim_end).collect();
    let (at, h) = lines.iter().enumerate().find_map(|(i, l)| {
        // The sentence may run onto the next line.
        let joined = match lines.get(i + 1) {
            Some(next) if !l.ends_with(':') => format!("{l} {}", next.trim()),
            _ => l.to_string(),
        };
        headline_words(&joined).map(|h| (i, h))
    })?;
    let commit = lines[at..]
        .iter()
        .take(12)
        .find_map(|l| commit_line(l.trim()));
    let metric = h.metric.trim_end_matches([':', ',', '.']).to_string();
    // A sentence too damaged to name its metric or its change names no
    // headline.
    if metric.is_empty() || !h.change.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Glance {
        commit: commit.as_ref().map(|(sha, _)| sha.to_ascii_lowercase()),
        commit_subject: commit.map(|(_, s)| s),
        metric,
        change: h.change,
        kind: h.kind.to_ascii_lowercase(),
    })
}

/// What the mail says of itself: the body's sentence (with its commit line)
/// where it can be read, else the Subject's; the Subject's commit when the
/// body names none.
pub fn glance(subject: &str, body: Option<&str>) -> Option<Glance> {
    let from_subject = of_subject(subject);
    match body.and_then(of_body) {
        Some(mut g) => {
            if g.commit.is_none() {
                g.commit = from_subject.and_then(|s| s.commit);
            }
            Some(g)
        }
        None => from_subject,
    }
}

/// The address the report is addressed to first: the commit's author, as the
/// robot addresses its reports (the full reader takes it so too).
pub fn addressee(to: &[String]) -> Option<String> {
    to.first()
        .and_then(|a| split_mailbox(a))
        .map(|(_, email)| email)
        .filter(|e| e.contains('@'))
}

/// What the robot's automatic mail carries in every era and a person's
/// mail does not: its signature (2014–2026, reports and build reports
/// alike) and the disclaimer under its figures. Lower case.
const TEMPLATE: &[&str] = &[
    "0-day ci kernel test service",
    "0day/lkp+ test infrastructure",
    "0-day kernel test infrastructure",
    "github.com/intel/lkp-tests",
    "results have been estimated based on internal intel analysis",
];

/// Whether what a robot mail says itself (`body` with its quotes left
/// out, its signature kept) is the robot's template: a report's headline
/// sentence, or the robot's signature or disclaimer. A mail from the
/// robot's address without any of them was typed by one of its people
/// ("please ignore the invalid report").
pub fn robot_template(body: &str) -> bool {
    let own: String = body
        .lines()
        .filter(|l| !is_quote(l))
        .collect::<Vec<_>>()
        .join("\n");
    let lower = own.to_lowercase();
    TEMPLATE.iter().any(|m| lower.contains(m)) || of_body(&own).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(commit: Option<&str>, metric: &str, change: &str, kind: &str) -> Option<Glance> {
        Some(Glance {
            commit: commit.map(str::to_string),
            commit_subject: None,
            metric: metric.into(),
            change: change.into(),
            kind: kind.into(),
        })
    }

    #[test]
    fn the_robots_template_table() {
        for (body, want) in [
            // Signatures and the disclaimer of each era.
            ("Thanks,\nOliver Sang\n\n-- \n0-DAY CI Kernel Test Service\nhttps://github.com/intel/lkp-tests/wiki\n", true),
            ("Disclaimer:\nResults.\n---\n0DAY/LKP+ Test Infrastructure   Open Source Technology Center\n", true),
            ("---\n0-DAY kernel test infrastructure                Open Source Technology Center\nhttps://lists.01.org/pipermail/kbuild-all                   Intel Corporation\n", true),
            ("Disclaimer:\nResults have been estimated based on internal Intel analysis and are provided\n\nThanks,\nJet\n", true),
            // A report's headline sentence alone.
            ("FYI, we noticed a -7.6% regression of netperf.Throughput_total_tps due to commit:\n", true),
            // Typed by one of the robot's people.
            ("Hi,\n\nSorry for bringing you inconvenience. We retested the commit and\ncouldn't reproduce the regression, please ignore the invalid report.\n\nBest Regards,\nRong Chen\n", false),
            ("The test is unstable, we can't reproduce the issue.\n_______________________________________________\nLinux-nvdimm mailing list -- linux-nvdimm@lists.01.org\n", false),
            // The robot's words quoted in a person's reply are not theirs.
            ("> FYI, we noticed a -7.6% regression of netperf.Throughput_total_tps due to commit:\n> -- \n> 0-DAY CI Kernel Test Service\n\nPlease ignore it.\n", false),
            // … however the replier's client marks the quote (Supercite's tag).
            ("kr> > FYI, we noticed a -43.3% regression of fio.read_iops due to commit:\nkr> \n\nWe recompiled the kernels and the regression still exists.\n", false),
            ("", false),
        ] {
            assert_eq!(robot_template(body), want, "{body:?}");
        }
    }

    #[test]
    fn subjects() {
        for (subject, want) in [
            (
                "[fs] 140402bab8: stress-ng.splice.ops_per_sec -100.0% regression",
                g(Some("140402bab8"), "stress-ng.splice.ops_per_sec", "-100.0%", "regression"),
            ),
            (
                "[linus:master] [sched]  436f3eed5c:\n stress-ng.schedpolicy.ops_per_sec 50.3% improvement",
                g(Some("436f3eed5c"), "stress-ng.schedpolicy.ops_per_sec", "50.3%", "improvement"),
            ),
            (
                "2463a604a8:  netperf.Throughput_tps 12.8% improvement",
                g(Some("2463a604a8"), "netperf.Throughput_tps", "12.8%", "improvement"),
            ),
            (
                "[mempolicy] 5507231dd04: -18.2% vm-scalability.migrate_mbps",
                g(Some("5507231dd04"), "vm-scalability.migrate_mbps", "-18.2%", "change"),
            ),
            // The kind by the metric's direction, as the full reading has
            // it (a rise of a latency is a regression); a `%` is the
            // metric's own.
            (
                "[xfs] b027d4c97b9: +7.1% fio.write_clat_mean_us",
                g(Some("b027d4c97b9"), "fio.write_clat_mean_us", "+7.1%", "regression"),
            ),
            (
                "[xfs] b027d4c97b9: +7.1% fio.latency_2ms%",
                g(Some("b027d4c97b9"), "fio.latency_2ms%", "+7.1%", "change"),
            ),
            (
                "[x86] 0123456789: fio.read_iops \u{2212}4.0% regression",
                g(Some("0123456789"), "fio.read_iops", "-4.0%", "regression"),
            ),
            ("Re: [PATCH v2 3/5] mm: memcg: make stats flushing threshold per-memcg", None),
            ("[linux-next:master] BUILD REGRESSION 0123456789abcdef", None),
            ("", None),
        ] {
            assert_eq!(of_subject(subject), want, "{subject:?}");
        }
    }

    #[test]
    fn bodies() {
        let sentence = "Hello,\n\nkernel test robot noticed a -5.2% regression of will-it-scale.per_process_ops on:\n\n\ncommit: 0123456789abcdef0123 (\"mm: do a thing\")\nhttps://git.kernel.org/cgit/linux/kernel/git/torvalds/linux.git master\n";
        let folded = "FYI, we noticed a 22.5% improvement of\nfio.write_iops due to commit:\n\ncommit: 0123456789abcdef0123 (\"xfs: go\")\n";
        for (body, want) in [
            (
                sentence,
                Some(Glance {
                    commit: Some("0123456789abcdef0123".into()),
                    commit_subject: Some("mm: do a thing".into()),
                    metric: "will-it-scale.per_process_ops".into(),
                    change: "-5.2%".into(),
                    kind: "regression".into(),
                }),
            ),
            (
                folded,
                Some(Glance {
                    commit: Some("0123456789abcdef0123".into()),
                    commit_subject: Some("xfs: go".into()),
                    metric: "fio.write_iops".into(),
                    change: "22.5%".into(),
                    kind: "improvement".into(),
                }),
            ),
            (
                "kernel test robot noticed a -3% regression of hackbench.throughput on:\n",
                g(None, "hackbench.throughput", "-3%", "regression"),
            ),
            (
                "kernel test robot noticed the following build errors:\n",
                None,
            ),
            ("", None),
        ] {
            assert_eq!(of_body(body), want, "{body:?}");
        }
    }

    #[test]
    fn the_body_is_read_first_and_the_subject_gives_the_commit_it_lacks() {
        let subject = "[mm] 0123456789: will-it-scale.per_process_ops -5.2% regression";
        let body =
            "kernel test robot noticed a -5.2% regression of will-it-scale.per_process_ops on:\n";
        assert_eq!(
            glance(subject, Some(body)),
            g(
                Some("0123456789"),
                "will-it-scale.per_process_ops",
                "-5.2%",
                "regression"
            )
        );
        assert_eq!(glance(subject, None), of_subject(subject));
        assert_eq!(glance("Re: [PATCH] x", Some("no sentence")), None);
    }

    proptest::proptest! {
        /// Any Subject and body: no panic, and a glance always names a
        /// metric and a change printed as a percentage.
        #[test]
        fn any_mail_is_glanced_at_safely(
            subject in "(\\PC|[0-9a-f:% .-]){0,120}",
            body in "(\\PC|\n| noticed a | regression of |commit: |[0-9a-f%.-]){0,400}",
        ) {
            if let Some(g) = glance(&subject, Some(&body)) {
                proptest::prop_assert!(!g.metric.is_empty());
                proptest::prop_assert!(g.change.ends_with('%'));
            }
        }

        /// The robot's template quoted by anyone is never theirs: a body
        /// whose every line is quoted carries no template of its own.
        #[test]
        fn a_quoted_template_is_not_the_senders(
            body in "(\\PC|\n| noticed a | regression of |0-DAY CI Kernel Test Service|lkp-tests){0,400}",
            mark in proptest::sample::select(vec!["> ", ">", "|> ", "kr> ", " DC>> "]),
        ) {
            let quoted: String = body.lines().map(|l| format!("{mark}{l}\n")).collect();
            proptest::prop_assert!(!robot_template(&quoted));
            // And reading any body ends.
            let _ = robot_template(&body);
        }
    }
}
