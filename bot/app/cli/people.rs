//! `perfbot people`: whose replies perfbot reads as a followed robot's
//! own (its operators'), learnt from the reports it adopted and named in
//! `[track] people`.

use clap::Args;

use super::{open_store, Failure};
use crate::config::Config;
use crate::reply::policy::people::RobotPeople;

#[derive(Args, Debug)]
pub struct PeopleArgs {
    /// As JSON, for scripts
    #[arg(long)]
    pub json: bool,
}

/// One robot, by its mail domain: `people --json`.
#[derive(Debug, serde::Serialize)]
struct Robot {
    domain: String,
    /// Its adopted reports read.
    reports: usize,
    /// Whom they copy as its people (empty with `track.learn_people` off).
    learnt: Vec<String>,
}

#[derive(Debug, serde::Serialize)]
struct People {
    robots: Vec<Robot>,
    /// `[track] people`, on every robot's cases.
    named: Vec<String>,
}

pub fn run(config: &Config, a: PeopleArgs) -> Result<(), Failure> {
    let store = open_store(config)?;
    let t = &config.file.track;
    let learnt = RobotPeople::of_cases(&store.cases()?);
    let people = People {
        robots: learnt
            .robots()
            .into_iter()
            .map(|(domain, reports, people)| Robot {
                domain,
                reports,
                learnt: if t.learn_people {
                    people.iter().map(|p| p.to_string()).collect()
                } else {
                    Vec::new()
                },
            })
            .collect(),
        named: t.people.iter().map(|p| p.to_string()).collect(),
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&people)?);
        return Ok(());
    }
    if people.robots.is_empty() && people.named.is_empty() {
        println!("no robot followed yet (no adopted report) and none named in [track] people");
    }
    for r in &people.robots {
        let who = if r.learnt.is_empty() {
            "nobody yet".to_string()
        } else {
            r.learnt.join(", ")
        };
        println!(
            "{}: {} adopted report(s); the robot's people learnt: {who}",
            r.domain, r.reports
        );
    }
    if !people.named.is_empty() {
        println!("named in [track] people: {}", people.named.join(", "));
    }
    Ok(())
}
