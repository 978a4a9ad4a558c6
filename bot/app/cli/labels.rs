//! `perfbot labels`: the replies operators settled, as labelled examples.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{open_store, who, Failure};
use crate::config::Config;
use crate::flows::learn::SettleError;
use crate::reply::understand::Intent;
use crate::store::Store;

#[derive(Subcommand, Debug)]
pub enum LabelsCmd {
    /// List the replies operators settled, with what perfbot had read
    List {
        /// As JSON, for scripts
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
        /// What the reply says, as the labelling guide names it
        #[arg(value_parser = intent)]
        intent: Intent,
        /// Why, in a few words; kept with the label
        #[arg(long, value_parser = super::reason)]
        reason: String,
    },
    /// Forget a reply's label
    Drop {
        #[arg(value_name = "MESSAGE-ID")]
        message_id: String,
    },
    /// Retrain the reader on the shipped labels and the operators', measure
    /// it against the reader of now, and write it only if it makes no more
    /// wrong decisions and sends no more quiet replies to a human than allowed
    /// (exit 3 if refused)
    Retrain(RetrainArgs),
}

#[derive(Args, Debug)]
pub struct RetrainArgs {
    /// Where to write the weights (then point `reply.model` at them)
    #[arg(long)]
    out: PathBuf,
    /// The shipped labels.jsonl files [default: the corpus the committed
    /// model is trained on, from the repository's top]
    #[arg(long)]
    shipped: Vec<PathBuf>,
    /// How much each operator's label weighs beside a shipped one
    #[arg(long, default_value_t = 1.0)]
    weight: f64,
    /// Thread-grouped folds of the measure
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(2..))]
    folds: u16,
    /// Write the weights even when the measure refuses them
    #[arg(long)]
    force: bool,
    /// As JSON, for scripts
    #[arg(long)]
    json: bool,
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
        LabelsCmd::List { json } => list(&store, json),
        LabelsCmd::Set {
            message_id,
            intent,
            reason,
        } => set(&store, &message_id, intent, &reason),
        LabelsCmd::Drop { message_id } => drop_label(&store, &message_id),
        LabelsCmd::Retrain(a) => retrain(config, &store, a),
        LabelsCmd::Export { dir } => export(&store, &dir),
    }
}

/// The replies operators settled, each with what perfbot had read.
fn list(store: &Store, json: bool) -> Result<(), Failure> {
    let labels = store.labels()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&labels)?);
        return Ok(());
    }
    if labels.is_empty() {
        println!("no reply labelled by an operator yet");
    }
    for l in &labels {
        let read = l.perfbot.as_deref().unwrap_or("-");
        let mark = if read == l.label { "=" } else { "≠" };
        println!(
            "{}  case {}  {} {mark} perfbot {read}  <{}>  by {}: {}",
            crate::model::shown_minute(l.time),
            l.case_id,
            l.label,
            l.message_id,
            l.by,
            l.reason
        );
    }
    Ok(())
}

/// Label one reply, its case left as it is.
fn set(store: &Store, message_id: &str, intent: Intent, reason: &str) -> Result<(), Failure> {
    let l = crate::flows::learn::label_reply(store, message_id, None, intent, &who(), reason)
        .map_err(|e| match e {
            SettleError::Store(e) => Failure::from(e),
            e => Failure::usage(e),
        })?;
    let read = l.perfbot.as_deref().unwrap_or("nothing");
    eprintln!(
        "learned: <{}> is {} (case {}; perfbot had read {read})",
        l.message_id, l.label, l.case_id
    );
    Ok(())
}

fn drop_label(store: &Store, message_id: &str) -> Result<(), Failure> {
    let id = super::parse_id(message_id)?;
    if !store.drop_label(id.as_str())? {
        return Err(Failure::usage(anyhow::anyhow!("no label for <{id}>")));
    }
    eprintln!("label of <{id}> dropped");
    Ok(())
}

/// The labelled replies as a labels file and its mails, in `dir`.
fn export(store: &Store, dir: &std::path::Path) -> Result<(), Failure> {
    let n = crate::flows::learn::export(store, dir)
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    eprintln!(
        "{} written to {}; retrain with `perfbot train-intents <shipped labels.jsonl…> {}` (or `perfbot labels retrain`, measured first)",
        crate::model::counted(n, "labelled reply", "labelled replies"),
        dir.display(),
        dir.join("labels.jsonl").display()
    );
    Ok(())
}

/// `labels retrain`: measure, then write the weights if the measure allows.
fn retrain(config: &Config, store: &Store, a: RetrainArgs) -> Result<(), Failure> {
    use crate::app::{eval, retrain};
    let RetrainArgs {
        out,
        shipped,
        weight,
        folds,
        force,
        json,
    } = a;
    if !eval::weighs(weight) {
        return Err(Failure::usage(anyhow::anyhow!(
            "--weight {weight} is not in (0, 100]"
        )));
    }
    // Checked before the measure's seconds, not after.
    super::model_file(&out)?;
    let shipped = if shipped.is_empty() {
        shipped_labels(config)?
    } else {
        shipped
    };
    let shipped = eval::load(&shipped).map_err(Failure::usage)?;
    let operators = retrain::operator_labelled(&store.labels()?, weight)
        .map_err(|e| anyhow::anyhow!("the state database: {e}"))?;
    if operators.is_empty() {
        return Err(Failure::usage(anyhow::anyhow!(
            "no reply labelled by an operator yet (`cases set`, `labels set`): nothing to retrain on"
        )));
    }
    let rules = config.intent_rules();
    let training = eval::Training::default();
    let m = retrain::measure(
        &shipped,
        &operators,
        usize::from(folds),
        &config.reply.trust,
        rules,
        training,
    );
    let refused = retrain::refusals(&m.now, &m.retrained);
    let write = refused.is_empty() || force;
    if write {
        let model = retrain::train(&shipped, &operators, rules, training);
        super::write_model(&out, &model)?;
    }
    if json {
        let v = serde_json::json!({
            "measure": m, "refused": refused,
            "written": write.then(|| out.display().to_string()),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", retrain::render(&m));
    }
    say_written(&out, &refused, write)
}

/// The shipped labels, from the first place that holds them all: here, the
/// config's directory, or the tree perfbot was built from (a copy of the
/// repository), so `labels retrain` works from a deployment's directory.
fn shipped_labels(config: &Config) -> Result<Vec<PathBuf>, Failure> {
    let places = [
        PathBuf::from("."),
        config.base_dir.clone(),
        PathBuf::from(env!("CARGO_MANIFEST_DIR")),
    ];
    places
        .iter()
        .map(|top| {
            crate::app::retrain::SHIPPED
                .iter()
                .map(|f| top.join(f))
                .collect::<Vec<_>>()
        })
        .find(|files| files.iter().all(|f| f.is_file()))
        .ok_or_else(|| {
            let looked: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
            Failure::usage(anyhow::anyhow!(
                "the shipped labels ({}) are in none of {}: name them with --shipped",
                crate::app::retrain::SHIPPED.join(", "),
                looked.join(", ")
            ))
        })
}

/// What became of the retrained weights at `out`: written as the measure
/// allows, written against it (`--force`), or refused (exit 3).
fn say_written(out: &std::path::Path, refused: &[String], write: bool) -> Result<(), Failure> {
    match (refused.is_empty(), write) {
        (true, _) => eprintln!(
            "{} written; to use it: [reply] model = {:?}",
            out.display(),
            out.display().to_string()
        ),
        (false, true) => eprintln!(
            "{} written although the measure refuses it (--force): {}",
            out.display(),
            refused.join("; ")
        ),
        (false, false) => {
            return Err(Failure {
                code: 3,
                error: anyhow::anyhow!(
                "the retrained reader is refused: {}; nothing written (--force writes it anyway)",
                refused.join("; ")
            ),
            })
        }
    }
    Ok(())
}
