//! Who speaks for a robot perfbot follows (`[track]`).
//!
//! A robot copies its own people on its reports: Intel's copies four or
//! five of its team on nearly every report, whatever the subsystem. They
//! answer in the threads under their own names, with test results, status
//! and now and then a retraction. Placed as maintainers (they are on the
//! report's Cc), their "the regression is gone with the patch" would move a
//! case; placed as strangers, their questions would go to a human. Their
//! standing is the robot's, and the reader learnt the robot's people's
//! words from the labels under that role (operators).
//!
//! They are learnt from the robot's reports themselves, not listed: an
//! address at the robot's own mail domain that the robot copies on at least
//! one report in ten (and on `MIN_REPORTS` at least), and never addresses a
//! report to. A commit author or maintainer at the same company is copied on
//! the reports of their own code only, and is the To of some of them.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::case::Case;
use crate::model::Address;

/// Fewer reports copied to an address say nothing about it.
pub const MIN_REPORTS: usize = 5;
/// The share of the robot's reports its people are copied on, at least.
pub const MIN_SHARE: f64 = 0.1;

/// The recipients of a robot's reports, by the robot's mail domain.
#[derive(Debug, Clone, Default)]
pub struct RobotPeople {
    /// Organisation domain → report Message-ID → its recipients there.
    robots: BTreeMap<String, BTreeMap<String, Recipients>>,
}

/// A report's recipients at the robot's own domain.
#[derive(Debug, Clone, Default)]
struct Recipients {
    to: BTreeSet<Address>,
    cc: BTreeSet<Address>,
}

impl RobotPeople {
    /// A report `robot` sent (`message_id`, with or without its angle
    /// brackets) to `to` and `cc` (mailboxes); a report seen twice counts
    /// once.
    pub fn observe(&mut self, robot: &Address, message_id: &str, to: &[String], cc: &[String]) {
        let Some(org) = organisation(robot) else {
            return;
        };
        let ours = |list: &[String]| -> BTreeSet<Address> {
            list.iter()
                .filter_map(|m| Address::parse(m))
                .filter(|a| organisation(a).as_deref() == Some(org.as_str()))
                .collect()
        };
        self.robots
            .entry(org.clone())
            .or_default()
            .entry(message_id.trim_matches(['<', '>']).to_string())
            .or_insert_with(|| Recipients {
                to: ours(to),
                cc: ours(cc),
            });
    }

    /// What the adopted cases' reports say (each case's first robot person
    /// is the address its report came from).
    pub fn of_cases(cases: &[Case]) -> RobotPeople {
        let mut p = RobotPeople::default();
        for c in cases.iter().filter(|c| c.adopted) {
            if let Some(robot) = c.robot_people.first().and_then(|a| Address::parse(a)) {
                p.observe(&robot, c.message_id.as_str(), &c.to, &c.cc);
            }
        }
        p
    }

    /// Every report of `other` counted here too.
    pub fn extend(&mut self, other: &RobotPeople) {
        for (org, reports) in &other.robots {
            let mine = self.robots.entry(org.clone()).or_default();
            for (id, r) in reports {
                mine.entry(id.clone()).or_insert_with(|| r.clone());
            }
        }
    }

    /// The people of the robot sending from `robot`, as far as its reports
    /// seen so far say (sorted).
    pub fn people(&self, robot: &Address) -> Vec<Address> {
        organisation(robot)
            .and_then(|o| self.robots.get(&o))
            .map(people_of)
            .unwrap_or_default()
    }

    /// Every robot's domain, with how many of its reports were seen and
    /// whom they show as its people.
    pub fn robots(&self) -> Vec<(String, usize, Vec<Address>)> {
        self.robots
            .iter()
            .map(|(org, reports)| (org.clone(), reports.len(), people_of(reports)))
            .collect()
    }
}

/// Whom one robot's reports (by Message-ID) show as its people: copied on
/// enough of them, never addressed (sorted).
fn people_of(reports: &BTreeMap<String, Recipients>) -> Vec<Address> {
    let mut copied: BTreeMap<&Address, usize> = BTreeMap::new();
    let mut addressed: BTreeSet<&Address> = BTreeSet::new();
    for r in reports.values() {
        addressed.extend(&r.to);
        for a in &r.cc {
            *copied.entry(a).or_default() += 1;
        }
    }
    let need = MIN_REPORTS.max((MIN_SHARE * reports.len() as f64).ceil() as usize);
    copied
        .into_iter()
        .filter(|(a, n)| *n >= need && !addressed.contains(a))
        .map(|(a, _)| a.clone())
        .collect()
}

/// The organisation an address's domain belongs to: its registrable part
/// under the Public Suffix List (`linux.intel.com` and `intel.com` are one
/// company's mail; `a.co.uk` and `b.co.uk` are not).
fn organisation(a: &Address) -> Option<String> {
    let (_, domain) = a.as_str().rsplit_once('@')?;
    Some(crate::model::ids::organizational_domain(domain))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> Address {
        Address::parse(s).unwrap()
    }

    /// How many reports of the robot sending from `robot` were seen.
    fn reports_seen(p: &RobotPeople, robot: &str) -> usize {
        let org = organisation(&a(robot));
        p.robots()
            .into_iter()
            .find(|r| Some(&r.0) == org.as_ref())
            .map_or(0, |r| r.1)
    }

    /// `n` reports from the robot, each to `to`, copied to the team, a list
    /// and `extra`.
    fn seen(p: &mut RobotPeople, from: usize, n: usize, to: &str, extra: &[&str]) {
        for i in from..from + n {
            let mut cc = vec![
                "<oe-lkp@lists.linux.dev>".to_string(),
                "<lkp@intel.com>".into(),
                "<ying.huang@intel.com>".into(),
                "Feng Tang <feng.tang@intel.com>".into(),
                "zhengjun.xing@linux.intel.com".into(),
                "Andrew Morton <akpm@linux-foundation.org>".into(),
            ];
            cc.extend(extra.iter().map(|s| s.to_string()));
            p.observe(
                &a("oliver.sang@intel.com"),
                &format!("r{i}@intel.com"),
                &[to.to_string()],
                &cc,
            );
        }
    }

    #[test]
    fn the_team_copied_on_every_report_is_the_robots() {
        let mut p = RobotPeople::default();
        seen(&mut p, 0, 30, "Jan Kara <jack@suse.cz>", &[]);
        // A maintainer at the robot's company, copied on the reports of
        // their code only (4 of 40): not the robot's.
        seen(
            &mut p,
            30,
            4,
            "Dave Chinner <david@fromorbit.com>",
            &["Dave Hansen <dave.hansen@intel.com>"],
        );
        // An author at the robot's company: addressed, so never the robot's,
        // however often copied.
        seen(
            &mut p,
            34,
            6,
            "Dan Williams <dan.j.williams@intel.com>",
            &[],
        );
        seen(
            &mut p,
            40,
            6,
            "Jan Kara <jack@suse.cz>",
            &["<dan.j.williams@intel.com>"],
        );
        let people: Vec<String> = p
            .people(&a("lkp@intel.com"))
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert_eq!(
            people,
            [
                "feng.tang@intel.com",
                "lkp@intel.com",
                "ying.huang@intel.com",
                "zhengjun.xing@linux.intel.com"
            ]
        );
        assert_eq!(reports_seen(&p, "oliver.sang@intel.com"), 46);
        let robots = p.robots();
        assert_eq!(robots.len(), 1);
        assert_eq!(
            (robots[0].0.as_str(), robots[0].1, robots[0].2.len()),
            ("intel.com", 46, 4)
        );
        // Another robot's domain knows nobody.
        assert!(p.people(&a("bot@example.org")).is_empty());
    }

    #[test]
    fn too_few_reports_say_nothing() {
        let mut p = RobotPeople::default();
        seen(&mut p, 0, MIN_REPORTS - 1, "Jan Kara <jack@suse.cz>", &[]);
        assert!(p.people(&a("oliver.sang@intel.com")).is_empty());
        // The same report seen again is not another report.
        seen(&mut p, 0, MIN_REPORTS - 1, "Jan Kara <jack@suse.cz>", &[]);
        assert!(p.people(&a("oliver.sang@intel.com")).is_empty());
        let mut q = RobotPeople::default();
        seen(&mut q, MIN_REPORTS - 1, 1, "Jan Kara <jack@suse.cz>", &[]);
        p.extend(&q);
        assert_eq!(p.people(&a("oliver.sang@intel.com")).len(), 4);
    }

    /// Reports as (message number, To index, Cc indexes) over a small
    /// cast, two of them at another company.
    fn reports() -> impl proptest::strategy::Strategy<Value = Vec<(u8, usize, Vec<usize>)>> {
        use proptest::prelude::*;
        prop::collection::vec(
            (0u8..40, 0usize..8, prop::collection::vec(0usize..8, 0..6)),
            0..60,
        )
    }

    const CAST: [&str; 8] = [
        "a@intel.com",
        "Bea <b@intel.com>",
        "<c@linux.intel.com>",
        "d@intel.com",
        "e@intel.com",
        "f@intel.com",
        "Gil <g@example.org>",
        "h@example.org",
    ];

    fn learnt(rs: &[(u8, usize, Vec<usize>)]) -> RobotPeople {
        let mut p = RobotPeople::default();
        for (id, to, cc) in rs {
            let cc: Vec<String> = cc.iter().map(|i| CAST[*i].to_string()).collect();
            p.observe(
                &a("robot@intel.com"),
                &format!("<r{id}@x>"),
                &[CAST[*to].into()],
                &cc,
            );
        }
        p
    }

    proptest::proptest! {
        /// Whatever the reports, the robot's people are at its company,
        /// never addressed a report, copied on enough of them; the order
        /// the reports come in and reading one twice change nothing.
        #[test]
        fn the_robots_people_hold_their_rule(rs in reports()) {
            let p = learnt(&rs);
            let people = p.people(&a("robot@intel.com"));
            let ids: BTreeSet<u8> = rs.iter().map(|r| r.0).collect();
            for who in &people {
                proptest::prop_assert!(who.as_str().ends_with("intel.com"), "{who}");
                // The first copy of a report is the one counted.
                let mut first: BTreeMap<u8, &(u8, usize, Vec<usize>)> = BTreeMap::new();
                for r in &rs {
                    first.entry(r.0).or_insert(r);
                }
                let is = |i: &usize| Address::parse(CAST[*i]).as_ref() == Some(who);
                proptest::prop_assert!(!first.values().any(|r| is(&r.1)), "{who} was addressed");
                let copied = first.values().filter(|r| r.2.iter().any(is)).count();
                proptest::prop_assert!(copied >= MIN_REPORTS && copied * 10 >= ids.len(), "{who}: {copied} of {}", ids.len());
            }
            let mut once: BTreeMap<u8, (u8, usize, Vec<usize>)> = BTreeMap::new();
            for r in &rs {
                once.entry(r.0).or_insert_with(|| r.clone());
            }
            // In another order, and every report read twice.
            let mut reversed: Vec<_> = once.into_values().collect();
            reversed.reverse();
            let mut again = learnt(&reversed);
            again.extend(&learnt(&reversed));
            proptest::prop_assert_eq!(&again.people(&a("robot@intel.com")), &people);
            proptest::prop_assert_eq!(reports_seen(&p, "robot@intel.com"), ids.len());
        }
    }

    #[test]
    fn organisations() {
        for (addr, org) in [
            ("a@intel.com", Some("intel.com")),
            ("a@linux.intel.com", Some("intel.com")),
            ("a@Mail.Example.ORG", Some("example.org")),
            ("a@mail.example.co.uk", Some("example.co.uk")),
        ] {
            assert_eq!(organisation(&a(addr)).as_deref(), org, "{addr}");
        }
    }
}
