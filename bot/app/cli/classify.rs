//! `perfbot classify`: what a reply means, as perfbot reads it.

use std::path::PathBuf;

use clap::Args;

use super::{read_input, Failure};
use crate::config::Config;
use crate::reply::policy::trust::Role;
use crate::reply::understand::{self, quote::own_words, Basis, Intent, Secondary};

/// `classify --json`: a reply's reading.
#[derive(Debug, serde::Serialize)]
struct Reading<'a> {
    intent: Intent,
    confidence: f64,
    evidence: &'a str,
    /// Other intents it carries, strongest first.
    secondary: &'a [Secondary],
    tags: Vec<String>,
    /// The rule that read it (none for the fallback).
    rule: Option<String>,
    basis: &'a Basis,
}

#[derive(Args, Debug)]
pub struct ClassifyArgs {
    /// A raw RFC 5322 message or plain text; - (the default) for standard input
    #[arg(default_value = "-")]
    pub file: PathBuf,
    /// As JSON, for scripts
    #[arg(long)]
    pub json: bool,
    /// Also print the replier's own words, as the classifier read them
    #[arg(long)]
    pub words: bool,
    /// Who sent it: author, committer, maintainer, contributor, operator, other
    /// (the labelling guide's robot-operator and other-developer too)
    #[arg(long, default_value = "other", value_parser = role)]
    pub role: Role,
    /// The report was an improvement (not a regression)
    #[arg(long)]
    pub improvement: bool,
    /// The phrase rules alone, without the learned model
    #[arg(long)]
    pub rules_only: bool,
}

/// A role as perfbot names it, or as the labelling guide does
/// (`robot-operator`, `other-developer`), which is how labels give it.
fn role(s: &str) -> Result<Role, String> {
    match s {
        "robot-operator" | "other-developer" => Ok(crate::app::eval::role_of(s)),
        _ => Role::parse(s)
            .filter(|r| *r != Role::Bot)
            .ok_or_else(|| {
                format!("{s:?}: author, committer, maintainer, contributor, operator or other (or robot-operator, other-developer)")
            }),
    }
}

pub fn run(config: &Config, a: ClassifyArgs) -> Result<(), Failure> {
    let raw = read_input(&a.file)?;
    let ctx = understand::Context {
        speaker: crate::flows::reply::speaker(a.role),
        improvement: a.improvement,
        patch_subject: false,
        patch_attached: false,
    };
    let (body, ctx) = match crate::flows::ingest::parse::parse(&raw, &Default::default()) {
        Ok(m) => {
            let ctx = understand::Context {
                patch_subject: crate::model::subject::posts_a_patch(&m.head.subject),
                patch_attached: !m.patches.is_empty(),
                ..ctx
            };
            (m.text, ctx)
        }
        Err(_) => (crate::flows::ingest::parse::body_text(&raw), ctx),
    };
    let own = own_words(&body);
    let model = if a.rules_only {
        None
    } else {
        config.intent_model()
    };
    let u = understand::read(&body, &own, ctx, config.intent_rules(), model);
    if a.words {
        eprintln!("--- own words\n{own}\n---");
    }
    if a.json {
        let v = Reading {
            intent: u.intent,
            confidence: u.confidence,
            evidence: &u.evidence,
            secondary: &u.secondary,
            tags: u.tags(),
            rule: (u.basis != Basis::Fallback).then(|| u.basis.name()),
            basis: &u.basis,
        };
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let evidence = if u.evidence.is_empty() {
            "(no words of its own)"
        } else {
            &u.evidence
        };
        println!("{} ({:.2}): {evidence}", u.intent, u.confidence);
        for s in &u.secondary {
            println!("  also {} ({:.2})", s.intent, s.confidence);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// `--role` takes perfbot's names and the labelling guide's.
    #[test]
    fn roles() {
        use super::{role, Role};
        for (s, want) in [
            ("author", Ok(Role::Author)),
            ("operator", Ok(Role::Operator)),
            ("robot-operator", Ok(Role::Operator)),
            ("other-developer", Ok(Role::Other)),
            ("contributor", Ok(Role::Contributor)),
            ("bot", Err(())),
            ("maintainers", Err(())),
        ] {
            assert_eq!(role(s).map_err(|_| ()), want, "{s}");
        }
    }
}
