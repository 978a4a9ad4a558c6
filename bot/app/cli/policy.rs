//! `perfbot policy check`: what the list policies would do with reports.

use std::path::PathBuf;

use chrono::Utc;
use clap::Subcommand;

use super::Failure;
use crate::config::Config;
use crate::flows::report::prepare;

#[derive(Subcommand, Debug)]
pub enum PolicyCmd {
    /// Check the policy file; with report inputs, say what would be sent
    /// where and why (nothing is recorded or sent)
    Check {
        /// Report inputs (JSON, as `perfbot report` takes them)
        inputs: Vec<PathBuf>,
    },
}

pub fn run(config: &Config, c: PolicyCmd) -> Result<(), Failure> {
    let PolicyCmd::Check { inputs } = c;
    match &config.lists {
        None => println!("no lists.policy_file: reports go where their inputs say"),
        Some(p) => {
            let policies = crate::model::counted(p.lists.len(), "list policy", "list policies");
            println!("{policies} (checked):");
            for l in &p.lists {
                println!("  {}", l.describe());
            }
        }
    }
    let now = Utc::now();
    for input in &inputs {
        let p = prepare(config, input, None, false, now).map_err(super::report::queue_failure)?;
        println!("{}:", input.display());
        println!("  Subject: {}", p.envelope.subject);
        println!("  To: {}", p.envelope.to.join(", "));
        if p.envelope.cc.is_empty() {
            println!("  Cc: (nobody)");
        } else {
            println!("  Cc: {}", p.envelope.cc.join(", "));
        }
        // A policy that holds the report says why once, on the held line.
        if let Some(line) = p
            .policy
            .as_ref()
            .filter(|l| p.held_because.as_ref() != Some(*l))
        {
            println!("  {line}");
        }
        match (&p.held_because, p.not_before) {
            (Some(why), _) => println!("  held, not sent: {why}"),
            (None, Some(t)) => println!("  sent after {}", crate::model::shown_minute(t)),
            (None, None) => println!("  sent at once"),
        }
        if let Some(why) = &p.regzbot {
            println!("  handed to regzbot: {why}");
        }
    }
    Ok(())
}
