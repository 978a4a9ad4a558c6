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
    #[error("intent rule {id}: unknown intent {intent:?} (one of {})", crate::reply::Intent::ALL.map(|i| i.as_str()).join(", "))]
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
    /// `text` (already with ASCII boundaries), compiled on first use.
    fn new(text: String) -> Pattern {
        Pattern {
            text,
            compiled: std::sync::OnceLock::new(),
        }
    }

    pub fn regex(&self) -> &Regex {
        self.compiled
            .get_or_init(|| Regex::new(&self.text).expect("checked when the rules were loaded"))
    }
}

/// `pattern` with its word boundaries (`\b`, `\B`) made ASCII ones.
///
/// Why: a Unicode word boundary stops the regex crate's fast automata at the
/// first non-ASCII byte of a text, and the slow engine then runs every
/// pattern of the set. A reply whose sentences each carry an accent, a
/// replacement character or a CJK name took 30 ms to read instead of 1 (found
/// by fuzzing). The rules' words are English (and ASCII); an accented letter
/// next to one of them counts as a non-word character, which is what a
/// boundary between an English word and anything else should say anyway.
pub fn ascii_boundaries(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('b') => out.push_str("(?-u:\\b)"),
            Some('B') => out.push_str("(?-u:\\B)"),
            Some(n) => {
                out.push('\\');
                out.push(n);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The first of `patterns` that does not compile alone, named with its rule
/// (what a set's error cannot say).
fn culprit(id: &str, patterns: &[String]) -> Option<RuleError> {
    patterns.iter().find_map(|p| {
        Regex::new(&ascii_boundaries(p))
            .err()
            .map(|e| RuleError::Pattern {
                id: id.to_string(),
                pattern: p.clone(),
                why: e.to_string(),
            })
    })
}

/// A set of `patterns`. Compiling the set checks every pattern in it, so each
/// is compiled alone only to name a bad one (half the start-up time).
fn compile(id: &str, patterns: &[String]) -> Result<RegexSet, RuleError> {
    RegexSet::new(patterns.iter().map(|p| ascii_boundaries(p))).map_err(|e| {
        culprit(id, patterns).unwrap_or_else(|| RuleError::Pattern {
            id: id.to_string(),
            pattern: patterns.join(" | "),
            why: e.to_string(),
        })
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
        for s in &specs {
            let intent = Intent::parse(&s.intent).ok_or_else(|| RuleError::Intent {
                id: s.id.clone(),
                intent: s.intent.clone(),
            })?;
            if !(0.0..=1.0).contains(&s.weight) {
                return Err(RuleError::Weight {
                    id: s.id.clone(),
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
            // Rewritten once: the set and the rule's own patterns are the same text.
            let texts: Vec<String> = s.patterns.iter().map(|p| ascii_boundaries(p)).collect();
            let start = all.len();
            all.extend(texts.iter().cloned());
            rules.push(Rule {
                each: texts.into_iter().map(Pattern::new).collect(),
                patterns: start..all.len(),
                unless: if s.unless.is_empty() {
                    None
                } else {
                    Some(compile(&s.id, &s.unless)?)
                },
                id: s.id.clone(),
                intent,
                weight: s.weight,
                in_question: s.in_question,
                tags: s.tags.clone(),
                vetoes,
                max_chars: s.max_chars,
            });
        }
        let any = RegexSet::new(&all).map_err(|e| {
            specs
                .iter()
                .find_map(|s| culprit(&s.id, &s.patterns))
                .unwrap_or_else(|| RuleError::Pattern {
                    id: "(all)".into(),
                    pattern: format!("{} patterns", all.len()),
                    why: e.to_string(),
                })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: &str, patterns: &[&str], unless: &[&str]) -> RuleSpec {
        RuleSpec {
            id: id.into(),
            intent: "not-a-regression".into(),
            weight: 0.9,
            patterns: patterns.iter().map(|p| p.to_string()).collect(),
            unless: unless.iter().map(|p| p.to_string()).collect(),
            in_question: false,
            tags: Vec::new(),
            vetoes: Vec::new(),
            max_chars: None,
        }
    }

    #[test]
    fn word_boundaries_become_ascii_ones() {
        for (pattern, want) in [
            (r"\bnot a regression\b", r"(?-u:\b)not a regression(?-u:\b)"),
            (r"\Bfoo", r"(?-u:\B)foo"),
            (r"\\b", r"\\b"),
            (r"\d+\s\w*", r"\d+\s\w*"),
            (r"r[ée]gression\b", r"r[ée]gression(?-u:\b)"),
            ("trailing \\", "trailing \\"),
        ] {
            assert_eq!(ascii_boundaries(pattern), want, "{pattern}");
        }
    }

    #[test]
    fn a_bad_pattern_is_named_with_its_rule() {
        for (extra, id, pattern) in [
            (
                spec("mine", &["fine", "(unclosed"], &[]),
                "mine",
                "(unclosed",
            ),
            (spec("mine", &["fine"], &["[z-a]"]), "mine", "[z-a]"),
        ] {
            match Rules::with_overrides(&[extra]) {
                Err(RuleError::Pattern {
                    id: i, pattern: p, ..
                }) => {
                    assert_eq!((i.as_str(), p.as_str()), (id, pattern))
                }
                Err(e) => panic!("{e}"),
                Ok(_) => panic!("{pattern} compiled"),
            }
        }
    }

    #[test]
    fn boundaries_are_ascii_ones() {
        let rules = Rules::with_overrides(&[spec("nar", &[r"\bnot a regression\b"], &[])]).unwrap();
        let rule = rules.rules.iter().find(|r| r.id == "nar").unwrap();
        let set = rules.any.patterns()[rule.patterns.clone()].to_vec();
        let set = RegexSet::new(set).unwrap();
        for (text, hit) in [
            ("this is not a regression.", true),
            ("this is not a regression…", true),
            ("c'est « not a regression »", true),
            // The cost of ASCII boundaries: an accented letter is not a word
            // character (no English phrase of the rules ends in one).
            ("this is not a regressioné", true),
            ("this is not a regressions", false),
        ] {
            // The rule's pattern alone and as the set holds it read alike.
            assert_eq!(rule.each[0].regex().is_match(text), hit, "{text}");
            assert_eq!(set.is_match(text), hit, "{text}");
        }
    }
}
