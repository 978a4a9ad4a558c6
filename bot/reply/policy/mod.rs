//! What one reply does, decided in one pure function: who is speaking (role,
//! and whether the mail is verified), what that does to the case (the state
//! machine in `effect`), and which mails follow (an escalation to the
//! operators, an ack, one answer to bad commands) — as data. `handle` renders
//! and records the plan in one write.
//!
//! The guards against backscatter live here: at most one answer to the sender
//! per incoming mail, a cap per sender and hour, no answer to senders who may
//! not command, and none to a mail that only echoes perfbot's own automatic
//! mail back.

use serde_json::{json, Value};

pub mod effect;
pub mod trust;

use effect::{decide, Effect};
pub use trust::Verdict;
use trust::{Policy, Role};

use crate::model::case::{Case, CaseState};
use crate::model::ignore::Scope;
use crate::model::Address;
use crate::reply::understand::command::{Command, Parsed, USAGE};
use crate::reply::understand::{Basis, Fact, Intent, Understanding};

/// The mail kinds perfbot sends on its own in answer to a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FollowUpKind {
    /// To the operators: a human is needed.
    Escalation,
    /// To the sender: a settled decision is acknowledged.
    Ack,
    /// To the sender: their `#perfbot` line(s) could not be followed.
    CommandError,
}

impl FollowUpKind {
    /// Its outbox record's kind.
    pub fn outbox(self) -> crate::model::OutboxKind {
        match self {
            FollowUpKind::Escalation => crate::model::OutboxKind::Escalation,
            FollowUpKind::Ack => crate::model::OutboxKind::Ack,
            FollowUpKind::CommandError => crate::model::OutboxKind::CommandError,
        }
    }

    /// The outbox `kind` and the template name.
    pub fn as_str(self) -> &'static str {
        match self {
            FollowUpKind::Escalation => "escalation",
            FollowUpKind::Ack => "ack",
            FollowUpKind::CommandError => "command-error",
        }
    }
}

/// A mail to send, before rendering.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub kind: FollowUpKind,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    /// The template's data (the template name comes from the config by kind).
    pub data: Value,
    /// The case event's note.
    pub note: String,
}

/// How a reply relates to perfbot's own automatic mail it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Echo {
    /// Not an answer to perfbot's automatic mail, or one with a person's words.
    #[default]
    No,
    /// Answers perfbot's automatic mail with nothing but that mail's own text.
    NoHumanWords,
    /// Contains the text of perfbot's command-error answer as its own words.
    OurErrorText,
}

/// Everything the decision depends on, gathered by `handle`.
#[derive(Debug, Clone)]
pub struct Facts<'a> {
    pub case: &'a Case,
    /// The sender's address (From), if readable.
    pub from: Option<Address>,
    pub from_name: &'a str,
    /// The role the From address has for this case (before verification).
    pub role: Role,
    /// The DKIM check, when enabled.
    pub dkim: Option<Verdict>,
    /// Decisions need an aligned DKIM pass (`trust.require_dkim`).
    pub require_verified: bool,
    pub understanding: &'a Understanding,
    /// A fact seen on the list (a revert or a closing patch) rather than words.
    pub fact: bool,
    /// The `#perfbot` lines of the sender's own words, `dup` targets checked.
    pub commands: &'a [(String, Parsed)],
    /// A size limit cut the message (what was cut).
    pub limited: Option<&'a str>,
    pub echo: Echo,
    /// An ack went out for this case before.
    pub acked_before: bool,
    /// Automatic answers perfbot queued to this sender in the last hour.
    pub answers_last_hour: usize,
    pub max_answers_per_hour: usize,
    /// Who gets escalations.
    pub escalation_to: Vec<String>,
    /// The case's escalation mail of the last `escalation.per_case_hours`,
    /// if one was queued: a new need joins it instead of mailing again.
    pub recent_escalation: Option<&'a str>,
    /// Decisions that may be acked.
    pub ack_intents: &'a [Intent],
    pub acks_enabled: bool,
    pub reply_date: Option<String>,
    pub thread_url: String,
    pub signature: &'a str,
    /// The sender's own words (for the escalation's quote).
    pub words: &'a str,
    pub message_id: &'a str,
    pub from_header: &'a str,
}

/// What to do with one reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The role the sender was given (after verification).
    pub role: Role,
    pub effect: Effect,
    pub followups: Vec<Planned>,
    /// Things decided not to do, for the log and the timeline.
    pub notes: Vec<String>,
    /// An obeyed `#perfbot ignore`: the metric or testcase, and where.
    pub ignore: Option<(String, Scope)>,
}

/// Most command errors listed in one answer.
const MAX_ERRORS_LISTED: usize = 10;

pub fn plan(f: &Facts, policy: &Policy) -> Plan {
    let mut notes = Vec::new();
    // A mail that only echoes perfbot's own automatic mail is not a person
    // speaking: recorded, never acted on, never answered.
    if f.echo != Echo::No {
        let why = match f.echo {
            Echo::OurErrorText => "it repeats perfbot's own command-error text",
            _ => "it answers perfbot's automatic mail with none of a person's words",
        };
        return Plan {
            role: f.role,
            effect: Effect::none(format!("not acted on: {why}")),
            followups: Vec::new(),
            notes: vec![format!("not acted on and not answered: {why}")],
            ignore: None,
        };
    }
    let mut role = f.role;
    if let Some(Verdict::Fail(_)) = &f.dkim {
        // The sender may not be who they say.
        if role != Role::Other {
            notes.push(format!("DKIM failed: {role} treated as other"));
        }
        role = Role::Other;
    }
    let u = f.understanding;
    // A command the checks refused (`dup` of no case, or of itself) is
    // answered as an error below, and does nothing to the case.
    let refused = matches!(u.basis, Basis::Command { .. })
        && f.commands
            .iter()
            .any(|(line, p)| *line == u.evidence && p.is_err());
    let mut effect = if refused {
        Effect::none(format!("not acted on: {:?} was refused", u.evidence))
    } else if f.fact {
        fact_effect(f.case.state, u, policy)
    } else {
        decide(f.case.state, u, role, policy)
    };
    let ignore = if refused {
        None
    } else {
        ignore_rule(f, role, policy)
    };
    if let Some((what, scope)) = &ignore {
        if !crate::model::ignore::names(what, f.case) {
            // A rule for another metric or test of the series: kept for the
            // reports to come; this case is not what it names.
            effect = Effect::none(format!(
                "ignore rule recorded: {what} in {scope} (this case's headline is {}, test {})",
                f.case.headline_metric, f.case.testcase
            ));
        }
    }
    if !f.fact && effect.decided {
        let verified = f.dkim.as_ref().is_some_and(Verdict::verified);
        if f.require_verified && !verified {
            let how = f
                .dkim
                .as_ref()
                .map_or("not checked".to_string(), Verdict::describe);
            effect = Effect::human(format!(
                "{} by an unverified sender (DKIM {how}; trust.require_dkim): \"{}\"",
                u.intent, u.evidence
            ));
        } else if let Some(cut) = f.limited {
            effect = Effect::human(format!(
                "{} in a reply perfbot could read only in part ({cut}): \"{}\"",
                u.intent, u.evidence
            ));
        }
    }
    if effect.state.is_none() && effect.escalate.is_none() && u.evidence.is_empty() {
        if let Some(cut) = f.limited {
            // Nothing could be read of a person's reply: never silently.
            effect = Effect::human(format!("a reply perfbot could not read ({cut})"));
        }
    }

    let mut followups = Vec::new();
    // Answers to the sender: at most one per incoming mail, a bounded number
    // per sender and hour, never to robots (which never get here).
    let may_answer = f.from.is_some() && f.answers_last_hour < f.max_answers_per_hour;
    let mut answered = false;

    let errors: Vec<(&str, String)> = f
        .commands
        .iter()
        .filter_map(|(line, p)| match p {
            Err(e) => Some((line.as_str(), e.to_string())),
            Ok(_) => None,
        })
        .collect();
    if !f.commands.is_empty() && !policy.may_command(role) {
        notes.push(format!(
            "#perfbot commands from {role} are neither obeyed nor answered (trust.commands)"
        ));
    } else if !errors.is_empty() {
        if may_answer {
            let listed: Vec<Value> = errors
                .iter()
                .take(MAX_ERRORS_LISTED)
                .map(|(line, e)| json!({"line": line, "error": e}))
                .collect();
            let more = errors.len().saturating_sub(MAX_ERRORS_LISTED);
            followups.push(Planned {
                kind: FollowUpKind::CommandError,
                to: vec![f.from.as_ref().expect("checked").to_string()],
                cc: Vec::new(),
                data: json!({
                    "line": errors[0].0, "error": errors[0].1,
                    "errors": listed, "more": more, "plural": errors.len() > 1,
                    "usage": USAGE, "signature": f.signature,
                }),
                note: format!(
                    "command error{} answered: {}",
                    if errors.len() > 1 { "s" } else { "" },
                    errors[0].1
                ),
            });
            answered = true;
        } else {
            notes.push(format!(
                "{} bad #perfbot line(s) not answered: {} answers to this sender in the last hour (the cap)",
                errors.len(),
                f.answers_last_hour
            ));
        }
    }

    if let Some(reason) = &effect.escalate {
        if f.escalation_to.is_empty() {
            notes.push(
                "a human is needed, but no operators are configured (trust.operators)".into(),
            );
        } else if let Some(earlier) = f.recent_escalation {
            // One mail per case and period: a thread that many people post
            // to must not flood the operators (nor use up the budget); the
            // case waits on a human and the digest lists it.
            notes.push(format!(
                "a human is needed ({reason}); no second mail: the operators were mailed about this case in <{earlier}> (escalation.per_case_hours), the digest lists it"
            ));
        } else {
            followups.push(Planned {
                kind: FollowUpKind::Escalation,
                to: f.escalation_to.clone(),
                cc: Vec::new(),
                data: json!({
                    "case_id": f.case.id, "subject": f.case.subject,
                    "state": effect.state.unwrap_or(f.case.state),
                    "thread_url": f.thread_url, "reason": reason,
                    "from": f.from_header, "message_id": f.message_id,
                    "quoted": f.words.lines().take(40).collect::<Vec<_>>(),
                    "signature": f.signature,
                }),
                note: format!("escalated to the operators: {reason}"),
            });
        }
    }

    if f.acks_enabled
        && effect.decided
        && !f.fact
        && f.ack_intents.contains(&u.intent)
        && !f.acked_before
        && !answered
        && may_answer
    {
        let addr = f.from.as_ref().expect("checked");
        let first = f
            .from_name
            .split([' ', ','])
            .find(|w| !w.is_empty())
            .unwrap_or("there")
            .to_string();
        let outcome: CaseState = effect.state.unwrap_or(f.case.state);
        let mut cc = f.case.cc.clone();
        cc.retain(|c| Address::parse(c).as_ref() != Some(addr));
        followups.push(Planned {
            kind: FollowUpKind::Ack,
            to: vec![addr.to_string()],
            cc,
            data: json!({
                "first_name": first, "evidence": u.evidence,
                "reply_date": f.reply_date.clone().unwrap_or_default(),
                "outcome": outcome.as_str().replace('-', " "),
                "closing": outcome.is_closed(),
                "signature": f.signature,
            }),
            note: "ack queued".into(),
        });
    }
    Plan {
        role,
        effect,
        followups,
        notes,
        ignore,
    }
}

/// The rule of an obeyed `#perfbot ignore` (a sender who may command; the
/// scope was checked against the case when the commands were read).
fn ignore_rule(f: &Facts, role: Role, policy: &Policy) -> Option<(String, Scope)> {
    let Some(Command::Ignore { what, scope }) = f.understanding.command() else {
        return None;
    };
    let verified = f.dkim.as_ref().is_some_and(Verdict::verified);
    if !policy.may_command(role) || f.fact || (f.require_verified && !verified) {
        return None;
    }
    Scope::of(*scope, f.case).map(|s| (what.clone(), s))
}

/// A revert or a patch closing the report, seen on the list: a fact, whoever
/// posted it; it still must not contradict an earlier decision.
fn fact_effect(state: CaseState, u: &Understanding, policy: &Policy) -> Effect {
    if matches!(
        state,
        CaseState::NotARegression | CaseState::WontFix | CaseState::Duplicate
    ) {
        return Effect::human(format!("{} on a case closed as {state}", u.evidence));
    }
    let to = if u.basis
        == (Basis::Fact {
            fact: Fact::RevertPosted,
        }) {
        CaseState::Reverted
    } else {
        CaseState::AwaitingFix
    };
    let mut e = decide(state, u, Role::Operator, policy);
    if e.state.is_some() && e.escalate.is_none() {
        e.state = Some(to);
    }
    e
}

/// The words every command-error answer carries (the built-in template's
/// first sentence): a mail repeating them is an echo, never answered.
pub const ERROR_MARKER: &str = "perfbot could not follow";

/// Lines of a reply that a person wrote, as opposed to text of perfbot's own
/// mail (`ours`) repeated back. Short lines ("Hi,", "--") say nothing.
pub fn echo_of(words: &str, ours: &[String], error_marker: &str) -> Echo {
    let norm = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let our_lines: std::collections::HashSet<String> = ours
        .iter()
        .flat_map(|b| b.lines().map(norm))
        .filter(|l| l.len() >= 8)
        .collect();
    let mut human = false;
    for l in words.lines() {
        let n = norm(l);
        if !error_marker.is_empty() && n.contains(error_marker) {
            return Echo::OurErrorText;
        }
        if n.len() >= 8 && !our_lines.contains(&n) {
            human = true;
        }
    }
    if ours.is_empty() || human {
        Echo::No
    } else {
        Echo::NoHumanWords
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes() {
        let ours = vec!["Hi,\n\nperfbot could not follow this command:\n\n> #perfbot x\n\nunknown command \"x\"\n".to_string()];
        assert_eq!(
            echo_of(
                "Hi,\nunknown command \"x\"\n",
                &ours,
                "perfbot could not follow"
            ),
            Echo::NoHumanWords
        );
        assert_eq!(
            echo_of(
                "perfbot could not follow this command:",
                &ours,
                "perfbot could not follow"
            ),
            Echo::OurErrorText
        );
        assert_eq!(
            echo_of(
                "Sorry, I meant #perfbot invalid.",
                &ours,
                "perfbot could not follow"
            ),
            Echo::No
        );
        assert_eq!(echo_of("anything", &[], ""), Echo::No);
    }
}
