//! `perfbot labels`: the replies operators settled, as labelled examples.

use std::path::PathBuf;

use clap::Subcommand;

use super::{open_store, who, Failure};
use crate::config::Config;
use crate::flows::learn::SettleError;
use crate::reply::understand::Intent;

#[derive(Subcommand, Debug)]
pub enum LabelsCmd {
    /// List the replies operators settled, with what perfbot had read
    List {
        #[arg(long)]
        json: bool,
    },
    /// Write them as a corpus folder (labels.jsonl and one .eml each) for
    /// `train-intents` and `eval-replies`
    Export { dir: PathBuf },
    /// Label one reply as an intent, without moving its case (a question
    /// perfbot read as a decision, thanks read as an investigation…)
    Set {
        #[arg(value_name = "MESSAGE-ID")]
        message_id: String,
        #[arg(value_parser = intent)]
        intent: Intent,
        #[arg(long)]
        reason: String,
    },
    /// Forget a reply's label
    Drop {
        #[arg(value_name = "MESSAGE-ID")]
        message_id: String,
    },
}

fn intent(s: &str) -> Result<Intent, String> {
    Intent::parse(s).ok_or_else(|| {
        let all: Vec<&str> = Intent::ALL.iter().map(|i| i.as_str()).collect();
        format!("unknown intent {s:?} (one of {})", all.join(", "))
    })
}

pub fn run(config: &Config, c: LabelsCmd) -> Result<(), Failure> {
    let store = open_store(config)?;
    match c {
        LabelsCmd::List { json } => {
            let labels = store.labels()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&labels)?);
            } else if labels.is_empty() {
                println!("no reply settled by an operator yet");
            } else {
                for l in &labels {
                    let read = l.perfbot.as_deref().unwrap_or("-");
                    let mark = if read == l.label { "=" } else { "≠" };
                    println!(
                        "{}  case {}  {} {mark} perfbot {read}  <{}>  by {}: {}",
                        l.time.format("%Y-%m-%d %H:%M"),
                        l.case_id,
                        l.label,
                        l.message_id,
                        l.by,
                        l.reason
                    );
                }
            }
        }
        LabelsCmd::Set {
            message_id,
            intent,
            reason,
        } => {
            let l = crate::flows::learn::label_reply(
                &store,
                &message_id,
                None,
                intent,
                &who(),
                &reason,
            )
            .map_err(|e| match e {
                SettleError::Store(e) => Failure::from(e),
                e => Failure::usage(e),
            })?;
            let read = l.perfbot.as_deref().unwrap_or("nothing");
            eprintln!(
                "learned: <{}> is {} (case {}; perfbot had read {read})",
                l.message_id, l.label, l.case_id
            );
        }
        LabelsCmd::Drop { message_id } => {
            let id = crate::model::MessageId::parse(&message_id).ok_or_else(|| {
                Failure::usage(anyhow::anyhow!("{message_id:?} is not a Message-ID"))
            })?;
            if !store.drop_label(id.as_str())? {
                return Err(Failure::usage(anyhow::anyhow!("no label for <{id}>")));
            }
            eprintln!("label of <{id}> dropped");
        }
        LabelsCmd::Export { dir } => {
            let n = crate::flows::learn::export(&store, &dir)
                .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
            eprintln!(
                "{n} labelled replies written to {}; retrain with `perfbot train-intents <shipped labels.jsonl…> {}`",
                dir.display(),
                dir.join("labels.jsonl").display()
            );
        }
    }
    Ok(())
}
