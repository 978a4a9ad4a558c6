//! `perfbot eval-replies` and `perfbot train-intents`: how well real replies
//! are understood, and the learned model's weights.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;

use super::Failure;
use crate::app::eval;
use crate::config::Config;
use crate::reply::understand::{self, model::Train, quote::own_words};

/// How the intent model is trained (defaults: the committed model's).
#[derive(Args, Debug, Clone, Copy)]
pub struct TrainArgs {
    /// L2 penalty per weight
    #[arg(long)]
    pub l2: Option<f64>,
    /// Gradient descent steps
    #[arg(long)]
    pub iterations: Option<usize>,
    /// Features seen in fewer replies are left out
    #[arg(long)]
    pub min_count: Option<usize>,
    /// How much each of the labelling guide's examples (bot/rules/guide.toml)
    /// weighs beside a real reply; 0 trains without them
    #[arg(long)]
    pub guide_weight: Option<f64>,
}

impl TrainArgs {
    fn train(self) -> eval::Training {
        let d = Train::default();
        eval::Training {
            opts: Train {
                l2: self.l2.unwrap_or(d.l2),
                iterations: self.iterations.unwrap_or(d.iterations),
                min_count: self.min_count.unwrap_or(d.min_count),
                ..d
            },
            guide: self.guide_weight.unwrap_or(eval::GUIDE_WEIGHT),
        }
    }
}

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// labels.jsonl files (threads/ or replies-dev/ layout)
    #[arg(required = true)]
    pub labels: Vec<PathBuf>,
    /// As JSON, for scripts
    #[arg(long)]
    pub json: bool,
    /// Thread-grouped cross-validation of the learned model in K folds
    #[arg(long, value_parser = clap::value_parser!(u16).range(2..))]
    pub folds: Option<u16>,
    /// More labelled replies to train the folds' models on (not evaluated)
    #[arg(long = "train-with")]
    pub train_with: Vec<PathBuf>,
    /// With --folds: cross-validate over this many splits of the threads
    /// (the usual one first) and print each split's figures with their mean
    /// and range: how much a figure moves with the split alone
    #[arg(long, requires = "folds", value_parser = clap::value_parser!(u16).range(1..))]
    pub repeats: Option<u16>,
    /// With --folds: deal the threads by this split (0, the usual one; the
    /// seeds --repeats prints), to look at one split's replies and threads
    #[arg(
        long,
        requires = "folds",
        conflicts_with = "repeats",
        default_value_t = 0
    )]
    pub seed: u64,
    #[command(flatten)]
    pub train: TrainArgs,
    /// List every reply, not only the decision replies
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub thresholds: ThresholdArgs,
}

/// Where the model's probabilities become a reading (defaults: perfbot's).
#[derive(Args, Debug, Clone, Copy)]
pub struct ThresholdArgs {
    /// A fix or revert the model reads this surely is decided
    #[arg(long)]
    pub decide: Option<f64>,
    /// Decision probability, summed, that sends an unsettled reply to a human
    #[arg(long)]
    pub signal: Option<f64>,
    /// Under this decision probability the model vetoes a rule's decision
    #[arg(long)]
    pub veto: Option<f64>,
    /// A closure the model reads this surely (in the replier's own claim) is decided
    #[arg(long)]
    pub close: Option<f64>,
}

impl ThresholdArgs {
    fn thresholds(self) -> understand::Thresholds {
        let d = understand::Thresholds::default();
        understand::Thresholds {
            decide: self.decide.unwrap_or(d.decide),
            signal: self.signal.unwrap_or(d.signal),
            veto: self.veto.unwrap_or(d.veto),
            close: self.close.unwrap_or(d.close),
        }
    }
}

#[derive(Args, Debug)]
pub struct TrainIntentsArgs {
    /// labels.jsonl files (threads/ or replies-dev/ layout)
    #[arg(required = true)]
    pub labels: Vec<PathBuf>,
    /// Where to write the weights
    #[arg(long, default_value = "bot/rules/intents.model")]
    pub out: PathBuf,
    #[command(flatten)]
    pub train: TrainArgs,
}

pub fn eval(config: &Config, a: EvalArgs) -> Result<(), Failure> {
    let items = eval::load(&a.labels).map_err(Failure::usage)?;
    if items.is_empty() {
        return Err(Failure::usage(anyhow!("no labelled replies to evaluate")));
    }
    let extra = eval::load_besides(&a.train_with, &items).map_err(Failure::usage)?;
    if let (Some(k), Some(n)) = (a.folds, a.repeats) {
        return repeated(config, &a, &items, &extra, usize::from(k), u64::from(n));
    }
    let reads = match a.folds {
        Some(k) => {
            let split = eval::Split {
                k: usize::from(k),
                seed: a.seed,
            };
            out_of_fold(config, &a, &items, &extra, split)
        }
        None => {
            let (rules, model) = (config.intent_rules(), config.intent_model());
            let t = a.thresholds.thresholds();
            let mut reads = eval::run(&items, &config.reply.trust, &|l, body| {
                let words = own_words(body);
                understand::read_with(body, &words, eval::context_of(l), rules, model, t)
            });
            if let Some(model) = model {
                eval::score_with(&mut reads, &items, rules, model);
            }
            reads
        }
    };
    let s = eval::summarise(&reads);
    let threads = replayed(config, &items, &reads);
    if a.json {
        let v = serde_json::json!({"summary": s, "replies": reads, "threads": threads});
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", eval::render_threads(&threads));
        print!("{}", eval::render(&s, &reads, a.all));
    }
    Ok(())
}

/// Each reply read by a model trained without its fold of `split`, with
/// the arguments' training and thresholds: one split, for `--folds` and
/// for each of `--repeats`.
fn out_of_fold(
    config: &Config,
    a: &EvalArgs,
    items: &[eval::Labelled],
    extra: &[eval::Labelled],
    split: eval::Split,
) -> Vec<eval::Read> {
    eval::cross_validate(
        items,
        extra,
        split,
        &config.reply.trust,
        config.intent_rules(),
        a.train.train(),
        a.thresholds.thresholds(),
    )
}

/// The labelled threads replayed from `reads`, with the review as
/// configured.
fn replayed(
    config: &Config,
    items: &[eval::Labelled],
    reads: &[eval::Read],
) -> Vec<eval::ThreadRead> {
    eval::replay_threads(items, reads, &config.reply.trust, Some(&config.file.review))
}

/// `--folds K --repeats N`: the cross-validation over N splits, each
/// split's figures and their mean and range.
fn repeated(
    config: &Config,
    a: &EvalArgs,
    items: &[eval::Labelled],
    extra: &[eval::Labelled],
    k: usize,
    n: u64,
) -> Result<(), Failure> {
    let splits: Vec<eval::SplitFigures> = (0..n)
        .map(|seed| {
            let reads = out_of_fold(config, a, items, extra, eval::Split { k, seed });
            let threads = replayed(config, items, &reads);
            eval::SplitFigures::of(seed, &eval::summarise(&reads), &threads)
        })
        .collect();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&splits)?);
    } else {
        print!("{}", eval::render_splits(&splits));
    }
    Ok(())
}

pub fn train(config: &Config, a: TrainIntentsArgs) -> Result<(), Failure> {
    let items = eval::load(&a.labels).map_err(Failure::usage)?;
    if items.is_empty() {
        return Err(Failure::usage(anyhow!("no labelled replies to train on")));
    }
    let model = eval::train(&items, config.intent_rules(), a.train.train());
    let bytes = super::write_model(&a.out, &model)?;
    eprintln!("{}: {} ({bytes} bytes)", a.out.display(), model.about);
    Ok(())
}
