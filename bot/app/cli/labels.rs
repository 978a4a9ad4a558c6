//! `perfbot labels`: the replies operators settled, as labelled examples.

use std::path::PathBuf;

use clap::Subcommand;

use super::{open_store, Failure};
use crate::config::Config;

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
