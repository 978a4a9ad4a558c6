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

use serde::Serialize;

pub mod effect;
pub mod people;
pub mod trust;

use effect::{decide, Asked, Effect};
pub use trust::Verdict;
use trust::{Policy, Role};

use crate::model::case::{Case, CaseId, CaseState, MovedByMail, Unsettled};
use crate::model::ignore::Scope;
use crate::model::{Address, MessageId};
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

/// A mail to send, before rendering: to whom, and its template's data.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub to: Vec<String>,
    pub cc: Vec<String>,
    /// The template's data (the template name comes from the config by kind).
    pub data: FollowUpData,
    /// The case event's note.
    pub note: String,
}

impl Planned {
    pub fn kind(&self) -> FollowUpKind {
        match self.data {
            FollowUpData::Escalation(_) => FollowUpKind::Escalation,
            FollowUpData::Ack(_) => FollowUpKind::Ack,
            FollowUpData::CommandError(_) => FollowUpKind::CommandError,
        }
    }
}

/// What each follow-up's template is given (README, "Templates").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum FollowUpData {
    Escalation(EscalationMail),
    Ack(AckMail),
    CommandError(CommandErrorMail),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EscalationMail {
    pub case_id: CaseId,
    pub subject: String,
    pub state: CaseState,
    pub thread_url: String,
    pub reason: String,
    /// The From header of the mail that raised it, and its Message-ID.
    pub from: String,
    pub message_id: String,
    /// The sender's own words, at most 40 lines.
    pub quoted: Vec<String>,
    /// A question to the robot's people, the case's decision left standing.
    pub question: bool,
    pub signature: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AckMail {
    pub first_name: String,
    pub evidence: String,
    pub reply_date: String,
    /// The new state in words (`not a regression`).
    pub outcome: String,
    pub closing: bool,
    pub signature: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommandErrorMail {
    /// The first bad line and its error (templates written for one).
    pub line: String,
    pub error: String,
    pub errors: Vec<CommandErrorLine>,
    /// Bad lines past the ones listed.
    pub more: usize,
    pub plural: bool,
    pub usage: &'static str,
    pub signature: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommandErrorLine {
    pub line: String,
    pub error: String,
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

/// The reply policy, validated once from the config: who may decide (the
/// trust policy), and one section per handler.
#[derive(Debug, Clone, Default)]
pub struct ReplyPolicy {
    pub trust: Policy,
    pub gate: GatePolicy,
    pub answers: AnswerPolicy,
    pub escalation: EscalationPolicy,
    pub acks: AckPolicy,
    /// Where a case's thread is read (`report.archive_url`).
    pub archive_url: String,
    /// Under every mail perfbot writes.
    pub signature: String,
}

/// The gate: when a decision is believed at all.
#[derive(Debug, Clone, Default)]
pub struct GatePolicy {
    /// Decisions need an aligned DKIM pass (`trust.require_dkim`).
    pub require_verified: bool,
}

/// Answers to a sender (command errors, acks).
#[derive(Debug, Clone, Default)]
pub struct AnswerPolicy {
    /// Automatic answers one address gets per hour at most.
    pub max_per_sender_hour: usize,
}

/// Escalations to the operators.
#[derive(Debug, Clone, Default)]
pub struct EscalationPolicy {
    pub to: Vec<String>,
}

/// Acknowledgements of settled decisions.
#[derive(Debug, Clone, Default)]
pub struct AckPolicy {
    pub enabled: bool,
    pub intents: Vec<Intent>,
}

impl ReplyPolicy {
    /// A case's thread in the archive.
    pub fn thread_url(&self, case: &Case) -> String {
        format!(
            "{}/{}",
            self.archive_url.trim_end_matches('/'),
            case.message_id
        )
    }
}

/// Everything the decision depends on: the mail, its case, and what the
/// store says happened before.
#[derive(Debug, Clone)]
pub struct Facts<'a> {
    pub case: &'a Case,
    /// The sender's address (From), if readable.
    pub from: Option<Address>,
    pub from_name: &'a str,
    pub from_header: &'a str,
    pub message_id: &'a str,
    pub reply_date: Option<String>,
    /// The sender's own words (for the escalation's quote).
    pub words: &'a str,
    /// The role the From address has for this case (before verification).
    pub role: Role,
    /// The DKIM check, when enabled.
    pub dkim: Option<Verdict>,
    pub understanding: &'a Understanding,
    /// A fact seen on the list (a revert or a closing patch) rather than words.
    pub fact: bool,
    /// The `#perfbot` lines of the sender's own words, `dup` targets checked.
    pub commands: &'a [(String, Parsed)],
    /// A size limit cut the message (what was cut).
    pub limited: Option<&'a str>,
    pub echo: Echo,
    /// Whose words put the case where it stands.
    pub moved_by: effect::MovedBy,
    /// The mail that put the case where it stands, when it was written
    /// after this one (it answers this one, or this one does not answer it
    /// and is dated before it): this one was read late.
    pub overtaken_by: Option<&'a MovedByMail>,
    /// Whose words put the case in the state that mail moved it from
    /// (`MovedByMail::from_by`), as this sender sees them.
    pub moved_before: effect::MovedBy,
    /// A mail of the robot's people in the thread written after this one,
    /// and read before it (an archive read list by list, a late delivery):
    /// a question this one asks of them is answered there, as reading them
    /// in order would have found it.
    pub answered_by: Option<&'a MessageId>,
    /// The same for the question `overtaken_by` left unsettled
    /// (`Unsettled::Asked`): a decision read beneath it does not keep it
    /// open.
    pub unsettled_answered_by: Option<&'a MessageId>,
    /// An ack went out for this case before.
    pub acked_before: bool,
    /// Automatic answers perfbot queued to this sender in the last hour.
    pub answers_last_hour: usize,
    /// The case's escalation mail of the last `escalation.per_case_hours`,
    /// if one was queued: a new need joins it instead of mailing again.
    pub recent_escalation: Option<&'a str>,
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

/// Decide what one reply does: the handlers in order. The gate may end it
/// (an echo of perfbot's own mail); the effect on the case; then at most one
/// answer to the sender (command errors before an ack), and an escalation.
pub fn plan(f: &Facts, p: &ReplyPolicy) -> Plan {
    let mut notes = Vec::new();
    let role = match gate(f, &mut notes) {
        Ok(role) => role,
        Err(effect) => {
            return Plan {
                role: f.role,
                effect,
                followups: Vec::new(),
                notes,
                ignore: None,
            }
        }
    };
    let (effect, ignore) = effect_of(f, role, p);
    let may_answer = f.from.is_some() && f.answers_last_hour < p.answers.max_per_sender_hour;
    let mut followups = Vec::new();
    let errors = command_errors(f, role, p, may_answer, &mut notes);
    let answered = errors.is_some();
    followups.extend(errors);
    followups.extend(escalate(f, &effect, p, &mut notes));
    if !answered && may_answer {
        followups.extend(ack(f, &effect, p));
    }
    Plan {
        role,
        effect,
        followups,
        notes,
        ignore,
    }
}

/// The gate: a mail that only echoes perfbot's own automatic mail is not a
/// person speaking (recorded, never acted on, never answered: `Err`); a
/// failed DKIM signature makes its sender a stranger.
fn gate(f: &Facts, notes: &mut Vec<String>) -> Result<Role, Effect> {
    if f.echo != Echo::No {
        let why = match f.echo {
            Echo::OurErrorText => "it repeats perfbot's own command-error text",
            _ => "it answers perfbot's automatic mail with none of a person's words",
        };
        notes.push(format!("not acted on and not answered: {why}"));
        return Err(Effect::none(format!("not acted on: {why}")));
    }
    if let Some(Verdict::Fail(_)) = &f.dkim {
        // The sender may not be who they say.
        if f.role != Role::Other {
            notes.push(format!("DKIM failed: {} treated as other", f.role));
        }
        return Ok(Role::Other);
    }
    Ok(f.role)
}

/// What the reply does to the case, and the ignore rule it gives.
fn effect_of(f: &Facts, role: Role, p: &ReplyPolicy) -> (Effect, Option<(String, Scope)>) {
    let u = f.understanding;
    // Decisions need an aligned DKIM pass where `trust.require_dkim` says so.
    let unverified = p.gate.require_verified && !f.dkim.as_ref().is_some_and(Verdict::verified);
    // A command the checks refused (`dup` of no case, or of itself) is
    // answered as an error, and does nothing to the case.
    let refused = matches!(u.basis, Basis::Command { .. })
        && f.commands
            .iter()
            .any(|(line, p)| *line == u.evidence && p.is_err());
    let mut effect = if refused {
        Effect::none(format!("not acted on: {:?} was refused", u.evidence))
    } else {
        weighed(f, f.case.state, f.moved_by, role, p)
    };
    if let Some(e) = overtaken(f, &effect, role, p) {
        effect = e;
    }
    if let Some(e) = answered_before_read(f, &effect) {
        effect = e;
    }
    let ignore = if refused {
        None
    } else {
        ignore_rule(f, role, p, unverified)
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
    let forged = matches!(f.dkim, Some(Verdict::Fail(_)));
    if !f.fact && effect.decided {
        if forged && !p.trust.may_decide_by_text(role) {
            // Anyone's words may await a fix, but not a sender who may not
            // be who they say.
            effect = Effect::human(format!(
                "{} by a sender whose DKIM signature fails: \"{}\"",
                u.intent, u.evidence
            ));
        } else if unverified {
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
    (effect, ignore)
}

/// What the message does to a case in `state` that `moved_by` put there: a
/// fact seen on the list (a revert, a closing patch) as a fact, words as
/// the state machine weighs them.
fn weighed(
    f: &Facts,
    state: CaseState,
    moved_by: effect::MovedBy,
    role: Role,
    p: &ReplyPolicy,
) -> Effect {
    if f.fact {
        fact_effect(state, f.understanding, &p.trust)
    } else {
        effect::decide_in(state, moved_by, f.understanding, role, &p.trust)
    }
}

/// A reply written before the mail that moved the case last, read after it
/// (an archive read list by list, a late delivery): weighed as if read in
/// order. What it would have done to the case before that move (`from`,
/// as `from_by` left it) decides nothing, or leads to where the later mail
/// took the case, or the later mail was its sender's own change of mind, or
/// a trusted sender's word over an open move this sender may not close: the
/// later words stand, and it does nothing. A later mail that sent the case
/// to a human may have left this decision to take it (`beneath_a_human`).
/// Else two decisions disagree, and a human weighs them (a case already
/// with a human stays there). A later reading that decided nothing
/// (investigating) stands over nothing: `overtaken_by` is `None` then, and
/// the reply is weighed as usual. A command is obeyed, and a recorded
/// question kept.
fn overtaken(f: &Facts, effect: &Effect, role: Role, p: &ReplyPolicy) -> Option<Effect> {
    let (u, now) = (f.understanding, f.case.state);
    let newer = f.overtaken_by?;
    if effect.question != Asked::No || matches!(u.basis, Basis::Command { .. }) {
        return None;
    }
    let earlier = weighed(f, newer.from, f.moved_before, role, p);
    let at = format!(
        "written before <{}> ({}), which moved the case to {now}",
        newer.message_id,
        newer.written.format("%Y-%m-%d %H:%M UTC")
    );
    if let Some(e) = beneath_a_human(f, newer, &earlier, &at) {
        return Some(e);
    }
    // The later mail's move stands over what this one would have done: as
    // in order, a sender over their own open decision, and a trusted
    // sender over an open one this sender may make but not close.
    let untrusted = !p.trust.may_decide_by_text(role);
    let stands = |t: CaseState| {
        !effect::decided_state(t)
            || now == CaseState::NeedsHuman
            || effect::progression(t, now)
            || (f.moved_by == effect::MovedBy::Sender && !t.is_closed())
            || (untrusted && f.moved_by == effect::MovedBy::Another && !t.is_closed())
    };
    Some(match earlier.state {
        Some(t) if !stands(t) => Effect::human(format!(
            "{} {at}, read after it: read in order it would have moved the case to {t} first: \"{}\"",
            u.intent, u.evidence
        )),
        _ => Effect::none(format!("not acted on: {} {at}", u.intent)),
    })
}

/// A question for the robot's people, asked beside a decision, that they
/// answered in a mail written after it and read before it: read in order,
/// their mail would have answered it, so no question stays open and no
/// escalation goes out. A question that sends an undecided case to a human
/// still does: in order, the case went to the human before the answer, and
/// an answer leaves it there.
fn answered_before_read(f: &Facts, effect: &Effect) -> Option<Effect> {
    let by = f.answered_by?;
    (effect.question == Asked::Beside).then(|| {
        Effect::none(format!(
            "{}; answered in <{by}>, written after it by the robot's people and read before it",
            effect.note
        ))
    })
}

/// A decision written before a mail that sent the case to a human, read
/// after it, where reading them in order would have left the case settled:
/// that mail asked the robot's people something (the question stays open
/// beside the decision, `Asked::Beside`), or meant the same decision but
/// could not make it alone (said again, it moves nothing). The case takes
/// the decision now. Else a later reply would find nothing to contradict
/// under the human.
fn beneath_a_human(f: &Facts, newer: &MovedByMail, earlier: &Effect, at: &str) -> Option<Effect> {
    let t = earlier
        .state
        .filter(|&t| f.case.state == CaseState::NeedsHuman && effect::decided_state(t))?;
    let (question, why) = match newer.unsettled.as_ref()? {
        Unsettled::Asked(_) if f.unsettled_answered_by.is_some() => (
            Asked::No,
            "its question answered since by the robot's people",
        ),
        Unsettled::Asked(q) => (
            Asked::Kept(Box::new(q.clone())),
            "the question open beside it",
        ),
        Unsettled::Meant(m) if *m == t => (Asked::No, "the later words say it again"),
        Unsettled::Meant(_) => return None,
    };
    Some(Effect {
        state: Some(t),
        note: format!(
            "{} {at}, read after it: read in order the case holds it, {why}",
            earlier.note
        ),
        escalate: None,
        decided: earlier.decided,
        question,
        meant: None,
    })
}

/// The rule of an obeyed `#perfbot ignore` (a sender who may command,
/// verified where that is required; the scope was checked against the case
/// when the commands were read).
fn ignore_rule(
    f: &Facts,
    role: Role,
    p: &ReplyPolicy,
    unverified: bool,
) -> Option<(String, Scope)> {
    let Some(Command::Ignore { what, scope }) = f.understanding.command() else {
        return None;
    };
    if !p.trust.may_command(role) || f.fact || unverified {
        return None;
    }
    Scope::of(*scope, f.case).map(|s| (what.clone(), s))
}

/// One answer listing the sender's bad `#perfbot` lines — never to someone
/// who may not command (whose commands are neither obeyed nor answered),
/// never past the cap per sender and hour.
fn command_errors(
    f: &Facts,
    role: Role,
    p: &ReplyPolicy,
    may_answer: bool,
    notes: &mut Vec<String>,
) -> Option<Planned> {
    let errors: Vec<CommandErrorLine> = f
        .commands
        .iter()
        .filter_map(|(line, parsed)| match parsed {
            Err(e) => Some(CommandErrorLine {
                line: line.clone(),
                error: e.to_string(),
            }),
            Ok(_) => None,
        })
        .collect();
    if !f.commands.is_empty() && !p.trust.may_command(role) {
        notes.push(format!(
            "#perfbot commands from {role} are neither obeyed nor answered (trust.commands)"
        ));
        return None;
    }
    let first = errors.first()?.clone();
    let to = match (&f.from, may_answer) {
        (Some(from), true) => from.to_string(),
        _ => {
            notes.push(format!(
                "{} bad #perfbot line(s) not answered: {} answers to this sender in the last hour (the cap)",
                errors.len(),
                f.answers_last_hour
            ));
            return None;
        }
    };
    let plural = errors.len() > 1;
    let more = errors.len().saturating_sub(MAX_ERRORS_LISTED);
    Some(Planned {
        to: vec![to],
        cc: Vec::new(),
        note: format!(
            "command error{} answered: {}",
            if plural { "s" } else { "" },
            first.error
        ),
        data: FollowUpData::CommandError(CommandErrorMail {
            line: first.line,
            error: first.error,
            errors: errors.into_iter().take(MAX_ERRORS_LISTED).collect(),
            more,
            plural,
            usage: USAGE,
            signature: p.signature.clone(),
        }),
    })
}

/// A mail to the operators when a human is needed: one per case and period
/// (a thread many people post to must not flood them, nor use up the
/// budget); later needs wait in the digest.
fn escalate(
    f: &Facts,
    effect: &Effect,
    p: &ReplyPolicy,
    notes: &mut Vec<String>,
) -> Option<Planned> {
    let reason = effect.escalate.as_ref()?;
    if p.escalation.to.is_empty() {
        notes.push("a human is needed, but no operators are configured (trust.operators)".into());
        return None;
    }
    if let Some(earlier) = f.recent_escalation {
        notes.push(format!(
            "a human is needed ({reason}); no second mail: the operators were mailed about this case in <{earlier}> (escalation.per_case_hours), the digest lists it"
        ));
        return None;
    }
    Some(Planned {
        to: p.escalation.to.clone(),
        cc: Vec::new(),
        note: format!("escalated to the operators: {reason}"),
        data: FollowUpData::Escalation(EscalationMail {
            case_id: f.case.id.clone(),
            subject: f.case.subject.clone(),
            state: effect.state.unwrap_or(f.case.state),
            thread_url: p.thread_url(f.case),
            reason: reason.clone(),
            from: f.from_header.to_string(),
            message_id: f.message_id.to_string(),
            quoted: f.words.lines().take(40).map(str::to_string).collect(),
            question: effect.question == Asked::Beside,
            signature: p.signature.clone(),
        }),
    })
}

/// One acknowledgement per case of a settled decision, in the thread, when
/// acks are on for its intent.
fn ack(f: &Facts, effect: &Effect, p: &ReplyPolicy) -> Option<Planned> {
    let u = f.understanding;
    if !p.acks.enabled
        || !effect.decided
        || f.fact
        || !p.acks.intents.contains(&u.intent)
        || f.acked_before
    {
        return None;
    }
    let addr = f.from.as_ref()?;
    let first = f
        .from_name
        .split([' ', ','])
        .find(|w| !w.is_empty())
        .unwrap_or("there")
        .to_string();
    let outcome: CaseState = effect.state.unwrap_or(f.case.state);
    let mut cc = f.case.cc.clone();
    cc.retain(|c| Address::parse(c).as_ref() != Some(addr));
    Some(Planned {
        to: vec![addr.to_string()],
        cc,
        note: "ack queued".into(),
        data: FollowUpData::Ack(AckMail {
            first_name: first,
            evidence: u.evidence.clone(),
            reply_date: f.reply_date.clone().unwrap_or_default(),
            outcome: outcome.as_str().replace('-', " "),
            closing: outcome.is_closed(),
            signature: p.signature.clone(),
        }),
    })
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
