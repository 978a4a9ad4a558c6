//! `perfbot ignores`: the `#perfbot ignore` rules people gave, and an
//! operator's undo.

use clap::Subcommand;

use super::{open_store, Failure};
use crate::config::Config;

#[derive(Subcommand, Debug)]
pub enum IgnoresCmd {
    /// List the rules: what, where, by whom, in which mail
    List {
        /// As JSON, for scripts
        #[arg(long)]
        json: bool,
    },
    /// Drop the rules a mail gave (its Message-ID), or only its rule for one
    /// metric or testcase
    Drop {
        /// The Message-ID of the mail that gave the rules, as `ignores list`
        /// shows it (with or without <>)
        message_id: String,
        /// The one metric or testcase to stop ignoring; none: all the mail's rules
        what: Option<String>,
    },
}

pub fn run(config: &Config, c: IgnoresCmd) -> Result<(), Failure> {
    let store = open_store(config)?;
    match c {
        IgnoresCmd::List { json } => {
            let rules = store.ignores()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&rules)?);
            } else if rules.is_empty() {
                println!("no #perfbot ignore rule");
            }
            for r in rules.iter().filter(|_| !json) {
                println!(
                    "{}  case {}  {}",
                    crate::model::shown_minute(r.at),
                    r.case,
                    r.describe()
                );
            }
        }
        IgnoresCmd::Drop { message_id, what } => {
            let id = message_id.trim_matches(['<', '>']);
            let doomed: Vec<_> = store
                .ignores()?
                .into_iter()
                .filter(|r| r.message_id.as_str() == id)
                .filter(|r| what.as_deref().is_none_or(|w| w == r.what))
                .collect();
            if doomed.is_empty() {
                return Err(Failure::usage(anyhow::anyhow!(
                    "no ignore rule from <{id}>{}",
                    what.map(|w| format!(" for {w}")).unwrap_or_default()
                )));
            }
            for r in &doomed {
                store.drop_ignore(&r.key())?;
                eprintln!("dropped: {}", r.describe());
            }
            still_held(&store, &doomed)?;
        }
    }
    Ok(())
}

/// Dropping a rule changes no case it already closed: the reports it held
/// are pointed out, for an operator to send or leave.
fn still_held(
    store: &crate::store::Store,
    dropped: &[crate::model::ignore::IgnoreRule],
) -> Result<(), Failure> {
    let reasons: Vec<String> = dropped
        .iter()
        .map(|r| crate::flows::report::carried_hold(&r.held_reason()))
        .collect();
    for e in store.outbox_entries()? {
        let by_rule = e.held_because.as_ref().is_some_and(|h| reasons.contains(h));
        if e.state == crate::model::OutboxState::Held && by_rule {
            eprintln!(
                "case {} stays wont-fix and its report held: `perfbot outbox approve {}` sends it and follows the case as reported",
                e.case_id, e.message_id
            );
        }
    }
    Ok(())
}
