//! The classifier's phrase rules: data in `bot/rules/intents.toml`, extended
//! or overridden by `[[reply.rule]]` entries in the config.

use regex::{Regex, RegexSet};
use serde::Deserialize;

use super::intent::Intent;

pub const BUILTIN: &str = include_str!("../../rules/intents.toml");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    pub id: String,
    pub intent: String,
    pub weight: f64,
    pub patterns: Vec<String>,
    #[serde(default)]
    pub unless: Vec<String>,
    /// Fires in questions too (a question that carries a decision).
    #[serde(default)]
    pub in_question: bool,
    /// What else a match says (`applied`: the fix is applied, not just posted).
    #[serde(default)]
    pub tags: Vec<RuleTag>,
    /// Intents this rule rules out for the whole reply ("this patch is not a
    /// fix" anywhere means no patch in it is a fix).
    #[serde(default)]
    pub vetoes: Vec<String>,
    /// Fires only in sentences up to this long (a verdict is short; the same
    /// words inside a long explanation describe a detail).
    #[serde(default)]
    pub max_chars: Option<usize>,
}

/// What a rule's match says besides its intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleTag {
    /// The fix is applied (merged, queued), not just posted.
    Applied,
    /// The regression is real after all ("agreed, that's a bug"): after a
    /// closing decision, a reversal.
    Confirms,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    rule: Vec<RuleSpec>,
}

#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("intent rules: {0}")]
    Toml(String),
    #[error("intent rule {id}: unknown intent {intent:?}")]
    Intent { id: String, intent: String },
    #[error("intent rule {id}: weight {weight} is not in 0..=1")]
    Weight { id: String, weight: f64 },
    #[error("intent rule {id}: pattern {pattern:?}: {why}")]
    Pattern {
        id: String,
        pattern: String,
        why: String,
    },
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub id: String,
    pub intent: Intent,
    pub weight: f64,
    /// Where this rule's patterns sit in `Rules::any`: one set holds every
    /// rule's patterns, so a sentence is scanned once, not once per rule
    /// (and the automata are built once: they were most of an ingest's heap).
    pub patterns: std::ops::Range<usize>,
    /// The same patterns one by one, to find where a match is.
    pub each: Vec<Pattern>,
    pub unless: Option<RegexSet>,
    pub in_question: bool,
    pub tags: Vec<RuleTag>,
    pub vetoes: Vec<Intent>,
    pub max_chars: Option<usize>,
}

/// All rules, compiled; `any` holds every rule's patterns, so one pass says
/// which rules a sentence may fire (and skips a sentence that matches none).
#[derive(Debug, Clone)]
pub struct Rules {
    pub rules: Vec<Rule>,
    pub any: RegexSet,
}

/// One pattern of a rule on its own, compiled the first time a sentence needs
/// its position: most never do, and their automata would be a third of an
/// ingest's heap.
#[derive(Debug, Clone)]
pub struct Pattern {
    text: String,
    compiled: std::sync::OnceLock<Regex>,
}

impl Pattern {
    pub fn regex(&self) -> &Regex {
        self.compiled
            .get_or_init(|| Regex::new(&self.text).expect("checked when the rules were loaded"))
    }
}

/// Each pattern alone, checked so that a bad one is named with its rule.
fn compile_each(id: &str, patterns: &[String]) -> Result<Vec<Pattern>, RuleError> {
    patterns
        .iter()
        .map(|p| match Regex::new(p) {
            Ok(_) => Ok(Pattern {
                text: p.clone(),
                compiled: std::sync::OnceLock::new(),
            }),
            Err(e) => Err(RuleError::Pattern {
                id: id.to_string(),
                pattern: p.clone(),
                why: e.to_string(),
            }),
        })
        .collect()
}

fn compile(id: &str, patterns: &[String]) -> Result<RegexSet, RuleError> {
    compile_each(id, patterns)?;
    RegexSet::new(patterns).map_err(|e| RuleError::Pattern {
        id: id.to_string(),
        pattern: patterns.join(" | "),
        why: e.to_string(),
    })
}

impl Rules {
    /// The built-in rules, then `extra`: an extra rule with the id of a built-in
    /// one replaces it, others are added.
    pub fn with_overrides(extra: &[RuleSpec]) -> Result<Rules, RuleError> {
        let file: RuleFile = toml::from_str(BUILTIN).map_err(|e| RuleError::Toml(e.to_string()))?;
        let mut specs = file.rule;
        for e in extra {
            match specs.iter_mut().find(|s| s.id == e.id) {
                Some(s) => *s = e.clone(),
                None => specs.push(e.clone()),
            }
        }
        let mut rules = Vec::new();
        let mut all = Vec::new();
        for s in specs {
            let intent = Intent::parse(&s.intent).ok_or_else(|| RuleError::Intent {
                id: s.id.clone(),
                intent: s.intent.clone(),
            })?;
            if !(0.0..=1.0).contains(&s.weight) {
                return Err(RuleError::Weight {
                    id: s.id,
                    weight: s.weight,
                });
            }
            let vetoes = s
                .vetoes
                .iter()
                .map(|v| {
                    Intent::parse(v).ok_or_else(|| RuleError::Intent {
                        id: s.id.clone(),
                        intent: v.clone(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let start = all.len();
            all.extend(s.patterns.iter().cloned());
            rules.push(Rule {
                each: compile_each(&s.id, &s.patterns)?,
                patterns: start..all.len(),
                unless: if s.unless.is_empty() {
                    None
                } else {
                    Some(compile(&s.id, &s.unless)?)
                },
                id: s.id,
                intent,
                weight: s.weight,
                in_question: s.in_question,
                tags: s.tags,
                vetoes,
                max_chars: s.max_chars,
            });
        }
        let any = RegexSet::new(&all).map_err(|e| RuleError::Pattern {
            id: "(all)".into(),
            pattern: format!("{} patterns", all.len()),
            why: e.to_string(),
        })?;
        Ok(Rules { any, rules })
    }

    pub fn builtin() -> &'static Rules {
        static R: std::sync::LazyLock<Rules> = std::sync::LazyLock::new(|| {
            Rules::with_overrides(&[]).expect("built-in rules compile")
        });
        &R
    }
}
