//! What a reply does to its case: the case state machine (ARCHITECTURE.md,
//! "Case states"), as one pure
//! function. A decision moves the case only when it is confident, from someone
//! the policy trusts, and consistent with earlier decisions; otherwise the case
//! goes to a human with the reason.

use super::trust::{Policy, Role};
use crate::model::case::{CaseState, Question};
use crate::reply::understand::command::Command;
use crate::reply::understand::{Basis, Intent, Understanding};

/// What to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    /// The case's new state (`None`: unchanged).
    pub state: Option<CaseState>,
    /// Why, in a line (goes into the event).
    pub note: String,
    /// Tell the operators at once (the reason).
    pub escalate: Option<String>,
    /// The decision is settled: an ack may be sent.
    pub decided: bool,
    /// What becomes of a question for the robot's people.
    pub question: Asked,
    /// The decision the reply's words mean, when they send the case to a
    /// human only for who said them or how surely: the same decision,
    /// written before the reply but read after it, stands
    /// (`MovedByMail::unsettled`).
    pub meant: Option<CaseState>,
}

/// A question for the robot's people, as an effect keeps it.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Asked {
    /// No question, or one the case does not keep.
    #[default]
    No,
    /// The reply asks while the case holds a decision: the case keeps its
    /// state and records the open question (`Case::question`) for a human
    /// to answer.
    Beside,
    /// The reply asks while the case holds no decision: the case goes to a
    /// human, and the question goes with the move (`MovedByMail::unsettled`).
    WithTheMove,
    /// A decision written before such a question but read after it: the
    /// case takes the decision, and the question stays open beside it, as
    /// reading them in order would have left it.
    Kept(Box<Question>),
}

impl Effect {
    pub(crate) fn none(note: impl Into<String>) -> Effect {
        Effect {
            state: None,
            note: note.into(),
            escalate: None,
            decided: false,
            question: Asked::No,
            meant: None,
        }
    }
    pub(crate) fn human(why: String) -> Effect {
        Effect {
            state: Some(CaseState::NeedsHuman),
            note: why.clone(),
            escalate: Some(why),
            decided: false,
            question: Asked::No,
            meant: None,
        }
    }
    /// A question for the robot's people in a case that holds a decision:
    /// a human answers it, and the decision stands meanwhile.
    fn asked(why: String, state: CaseState) -> Effect {
        Effect {
            state: None,
            note: format!("{why}; the case stays {state}"),
            escalate: Some(why),
            decided: false,
            question: Asked::Beside,
            meant: None,
        }
    }
}

/// A state that records a decision already made.
pub(crate) fn decided_state(s: CaseState) -> bool {
    matches!(
        s,
        CaseState::NotARegression
            | CaseState::AwaitingRevert
            | CaseState::AwaitingFix
            | CaseState::Reverted
            | CaseState::Fixed
            | CaseState::WontFix
            | CaseState::Duplicate
    )
}

/// Moves that follow from a decision instead of contradicting it.
pub(crate) fn progression(from: CaseState, to: CaseState) -> bool {
    from == to
        || matches!(
            (from, to),
            (CaseState::AwaitingRevert, CaseState::Reverted)
                | (CaseState::AwaitingRevert, CaseState::AwaitingFix)
                | (CaseState::AwaitingRevert, CaseState::Fixed)
                | (CaseState::AwaitingFix, CaseState::AwaitingRevert)
                | (CaseState::AwaitingFix, CaseState::Fixed)
                | (CaseState::AwaitingFix, CaseState::Reverted)
        )
}

/// Where an intent takes a case in `state`.
fn target(u: &Understanding, state: CaseState) -> Option<CaseState> {
    Some(match u.intent {
        Intent::NotARegression => CaseState::NotARegression,
        Intent::WillRevert => CaseState::AwaitingRevert,
        Intent::FixPosted if u.applied => {
            if matches!(state, CaseState::AwaitingFix | CaseState::AwaitingRevert)
                || matches!(u.command(), Some(Command::Fixed(_)))
            {
                CaseState::Fixed
            } else {
                CaseState::AwaitingFix
            }
        }
        Intent::FixPosted => CaseState::AwaitingFix,
        Intent::WontFix => CaseState::WontFix,
        Intent::Duplicate => CaseState::Duplicate,
        _ => return None,
    })
}

/// The reading carries one decision only: no other decisive intent is
/// read in the reply beside it, and nothing is left unsettled.
fn single_minded(u: &Understanding) -> bool {
    !u.unsettled && !second_decision(u)
}

/// Another decisive intent is read in the reply, at `SECOND_DECISION` or
/// more.
fn second_decision(u: &Understanding) -> bool {
    u.secondary
        .iter()
        .any(|s| s.intent.is_decisive() && s.confidence >= SECOND_DECISION)
}

/// A closure only the learned model reads, and not surely (below the
/// policy's confidence), with no other decision in the mail. From someone
/// who may not close the case such words are the thread's talk, mostly an
/// explanation to a colleague: they could not close it if they were a
/// closure, and a human asked to weigh what is probably none is a human
/// the digest wastes. A decision phrase a rule found ("this is not a
/// regression"), a sure closure, or a mail with a second decision in it
/// still goes to a human.
fn unsure_closure(u: &Understanding, to: CaseState, policy: &Policy) -> bool {
    to.is_closed()
        && u.basis == Basis::Model
        && u.confidence < policy.min_confidence
        && !second_decision(u)
}

/// A second decisive reading this likely makes a stranger's words a
/// human's to weigh.
const SECOND_DECISION: f64 = 0.25;

/// Whose words put the case where it stands, as the sender of a new reply
/// sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MovedBy {
    /// This sender's own earlier reply.
    Sender,
    /// Someone whose words the policy lets move only states that close
    /// nothing (a stranger, a contributor): a trusted sender has the last
    /// word over them.
    Untrusted,
    /// Someone else the policy trusts, a command, an operator, or nobody.
    Another,
}

impl MovedBy {
    /// The standing of a mover in `role` (`own`: the new reply's sender).
    pub fn of(own: bool, role: Role, policy: &Policy) -> MovedBy {
        if own {
            MovedBy::Sender
        } else if policy.may_decide_by_text(role) {
            MovedBy::Another
        } else {
            MovedBy::Untrusted
        }
    }
}

/// The reply says again, surely, the decision the case holds, from
/// someone who may decide by their words: it moves nothing, but it is the
/// newest word for that decision (`store::thread::Reply::says_again`).
pub fn says_again(state: CaseState, u: &Understanding, role: Role, policy: &Policy) -> bool {
    decided_state(state)
        && target(u, state) == Some(state)
        && u.confidence >= policy.min_confidence
        && !u.unsettled
        && policy.may_decide_by_text(role)
        && !matches!(u.basis, Basis::Command { .. } | Basis::Fact { .. })
}

/// Decide what a reply does to a case in `state` (which someone else's
/// words, or none, decided).
pub fn decide(state: CaseState, u: &Understanding, role: Role, policy: &Policy) -> Effect {
    decide_in(state, MovedBy::Another, u, role, policy)
}

/// One reply as the state machine weighs it.
struct Reply<'a> {
    u: &'a Understanding,
    role: Role,
    policy: &'a Policy,
    /// A command, or a fact seen on the list: explicit, so no confidence
    /// threshold and no contradiction check applies (who may command still
    /// does).
    by_command: bool,
}

/// Decide, knowing who put the case in its `state`: the sender's own open
/// decision, or a stranger's, is a trusted sender's to overturn.
pub fn decide_in(
    state: CaseState,
    moved_by: MovedBy,
    u: &Understanding,
    role: Role,
    policy: &Policy,
) -> Effect {
    let r = Reply {
        u,
        role,
        policy,
        by_command: matches!(u.basis, Basis::Command { .. } | Basis::Fact { .. }),
    };
    if let Some(e) = before_the_intent(state, &r).or_else(|| undecided(state, &r)) {
        return e;
    }
    let Some(to) = target(u, state) else {
        return Effect::none(u.intent.to_string());
    };
    // Words that agree with where the case already is move nothing, whoever
    // says them and however surely: nothing for a human to weigh.
    if state == to && !r.by_command {
        return Effect::none(format!("{} again, as the case stands", u.intent));
    }
    if let Some(e) = not_theirs_to_decide(to, &r).or_else(|| unsure(to, &r)) {
        return e;
    }
    if let Some(e) = against_an_earlier_decision(state, to, moved_by, &r) {
        return e;
    }
    if state == to {
        return Effect::none(format!("{} again", u.intent));
    }
    Effect {
        state: Some(to),
        note: format!("{} ({role}, confidence {:.2})", u.intent, u.confidence),
        escalate: None,
        decided: true,
        question: Asked::No,
        meant: None,
    }
}

/// What holds whatever the reply means: the robot's own mail, a reopen
/// command, a reversal of a closure, a reply read only in part.
fn before_the_intent(state: CaseState, r: &Reply) -> Option<Effect> {
    let (u, role) = (r.u, r.role);
    if role == Role::Bot {
        return Some(Effect::none("automatic mail: never acted on"));
    }
    if matches!(u.command(), Some(Command::Reopen)) {
        if !r.policy.may_command(role) {
            return Some(Effect::human(format!(
                "#perfbot reopen by {role}, who may not command"
            )));
        }
        return Some(Effect {
            state: Some(CaseState::Reopened),
            note: "reopened by command".into(),
            escalate: None,
            decided: false,
            question: Asked::No,
            meant: None,
        });
    }
    // "Agreed, that's a bug" after the case was closed as no regression (or
    // won't fix, or duplicate): the earlier decision is reversed, and only a
    // human may reopen it.
    if u.confirms
        && matches!(
            state,
            CaseState::NotARegression | CaseState::WontFix | CaseState::Duplicate
        )
    {
        return Some(Effect::human(format!(
            "{role} says the regression is real after it was closed as {state}: \"{}\"",
            u.evidence
        )));
    }
    // A decision read unsurely in the part read is no better a reason than
    // the part unread: the human is told the reply was read in part.
    if u.partial && (!u.intent.is_decisive() || u.unsettled) && !r.by_command {
        return Some(Effect::human(format!(
            "a reply longer than perfbot reads ({} KiB): its decision may be past the part read",
            crate::reply::understand::MAX_WORDS >> 10
        )));
    }
    None
}

/// A reply that decides nothing: a question, an investigation, thanks, and
/// the robot's people's test status.
fn undecided(state: CaseState, r: &Reply) -> Option<Effect> {
    let (u, role) = (r.u, r.role);
    Some(match u.intent {
        // A question goes to a human when it is asked of the robot or its
        // people; one developer asking another is the thread's business, and
        // so is a question the robot's people ask: they are the humans an
        // escalation would reach.
        Intent::Question if r.by_command => Effect::human("escalated by command".to_string()),
        Intent::Question if u.asks_robot && role != Role::Operator => {
            let why = format!("question for the robot from {role}: \"{}\"", u.evidence);
            // A question is not a decision: a fix awaited (or a closure)
            // stays what it is while a human answers.
            if decided_state(state) {
                Effect::asked(why, state)
            } else {
                Effect {
                    question: Asked::WithTheMove,
                    ..Effect::human(why)
                }
            }
        }
        Intent::Question => Effect::none(format!(
            "question from {role}, not asked of the robot: \"{}\"",
            u.evidence
        )),
        Intent::Investigating
            if matches!(
                state,
                CaseState::Reported | CaseState::Reopened | CaseState::Queued
            ) =>
        {
            Effect {
                state: Some(CaseState::Investigating),
                note: format!("{role} is investigating"),
                escalate: None,
                decided: false,
                question: Asked::No,
                meant: None,
            }
        }
        Intent::Investigating => Effect::none(format!("{role} is investigating")),
        Intent::ThanksOnly | Intent::Other => Effect::none(format!("{} from {role}", u.intent)),
        // The robot's people report what their tests did ("we reverted it
        // and the drop is gone", "the patch recovers it"): a status, the
        // labelling guide's "other". A fix or a revert is the developers'
        // to make; an operator who means one has `#perfbot revert`/`fixed`.
        Intent::FixPosted | Intent::WillRevert if role == Role::Operator && !r.by_command => {
            Effect::none(format!(
                "{} from the robot's people: a test status, not their fix or revert",
                u.intent
            ))
        }
        _ => return None,
    })
}

/// A decision from someone who may not make it. States that close nothing
/// (a fix or a revert awaited) may follow anyone's words — a stranger's
/// only where they say nothing else decisive (a mail full of decision words
/// goes to a human); a closure needs a sender the policy trusts.
fn not_theirs_to_decide(to: CaseState, r: &Reply) -> Option<Effect> {
    let (u, role, policy) = (r.u, r.role, r.policy);
    let allowed = if r.by_command {
        policy.may_command(role)
    } else {
        policy.may_decide_by_text(role)
            || (!to.is_closed()
                && (role == Role::Contributor || (policy.anyone_moves_open && single_minded(u))))
    };
    if allowed {
        return None;
    }
    if !r.by_command && unsure_closure(u, to, policy) {
        return Some(Effect::none(format!(
            "{} read with low confidence ({:.2}) from {role}, who may not close the case: \"{}\"",
            u.intent, u.confidence, u.evidence
        )));
    }
    let why = format!(
        "{} by {role}, who may not decide this case by {}: \"{}\"",
        u.intent,
        if r.by_command { "command" } else { "free text" },
        u.evidence
    );
    Some(Effect {
        meant: Some(to),
        ..Effect::human(why)
    })
}

/// A decision in free text read below the policy's confidence.
fn unsure(to: CaseState, r: &Reply) -> Option<Effect> {
    let (u, role, policy) = (r.u, r.role, r.policy);
    if r.by_command || u.confidence >= policy.min_confidence {
        return None;
    }
    // The robot's people are the humans an escalation would reach: their
    // own words read unsurely are theirs to settle by command.
    if role == Role::Operator {
        return Some(Effect::none(format!(
            "{} read with low confidence ({:.2}) from the robot's people: theirs to settle by command",
            u.intent, u.confidence
        )));
    }
    let why = format!(
        "{} read with low confidence ({:.2} < {:.2}): \"{}\"",
        u.intent, u.confidence, policy.min_confidence, u.evidence
    );
    Some(Effect {
        meant: Some(to),
        ..Effect::human(why)
    })
}

/// A decision against the one the case holds. A later decision may
/// overturn an open one of the same sender (a fix was awaited, then the
/// author finds the commit innocent, or keeps it as it is), or of someone
/// who may not close the case (a stranger's patch awaited, then the author
/// says it is no regression); one trusted person's decision against
/// another's, or against a closed case, is a human's to weigh.
fn against_an_earlier_decision(
    state: CaseState,
    to: CaseState,
    moved_by: MovedBy,
    r: &Reply,
) -> Option<Effect> {
    let overturns =
        moved_by != MovedBy::Another && !state.is_closed() && r.policy.may_decide_by_text(r.role);
    if decided_state(state) && !progression(state, to) && !r.by_command && !overturns {
        return Some(Effect::human(format!(
            "{} contradicts the earlier decision ({state}): \"{}\"",
            r.u.intent, r.u.evidence
        )));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reading: `tags` as `classify --json` prints them (`command:fixed`,
    /// `applied`).
    fn u(intent: Intent, confidence: f64, tags: &[&str]) -> Understanding {
        let command = tags.iter().find_map(|t| t.strip_prefix("command:"));
        let basis = match command {
            Some(c) => Basis::Command {
                command: match c {
                    "reopen" => Command::Reopen,
                    "fixed" => Command::Fixed("0123abcd".into()),
                    "invalid" => Command::Invalid,
                    "escalate" => Command::Escalate,
                    other => panic!("no command {other} in this table"),
                },
            },
            None => Basis::Rule { id: "r".into() },
        };
        Understanding {
            intent,
            confidence,
            evidence: "words".into(),
            basis,
            applied: tags.contains(&"applied"),
            asks_robot: tags.contains(&"asks-robot"),
            partial: tags.contains(&"partial"),
            ..Understanding::nothing()
        }
    }

    fn policy() -> Policy {
        Policy {
            free_text: vec![
                Role::Author,
                Role::Committer,
                Role::Maintainer,
                Role::Operator,
            ],
            commands: vec![
                Role::Author,
                Role::Committer,
                Role::Maintainer,
                Role::Operator,
            ],
            min_confidence: 0.6,
            anyone_moves_open: true,
            ..Policy::default()
        }
    }

    /// (state, intent, confidence, tags, role) -> new state, escalated
    type Row = (
        CaseState,
        Intent,
        f64,
        &'static [&'static str],
        Role,
        Option<CaseState>,
        bool,
    );

    #[test]
    fn table() {
        use CaseState as S;
        use Intent as I;
        let cases: &[Row] = &[
            (
                S::Reported,
                I::NotARegression,
                0.9,
                &[],
                Role::Author,
                Some(S::NotARegression),
                false,
            ),
            (
                S::Reported,
                I::WillRevert,
                0.9,
                &[],
                Role::Maintainer,
                Some(S::AwaitingRevert),
                false,
            ),
            (
                S::Reported,
                I::FixPosted,
                0.9,
                &[],
                Role::Author,
                Some(S::AwaitingFix),
                false,
            ),
            (
                S::AwaitingFix,
                I::FixPosted,
                0.8,
                &["applied"],
                Role::Maintainer,
                Some(S::Fixed),
                false,
            ),
            (
                S::Reported,
                I::WontFix,
                0.9,
                &[],
                Role::Maintainer,
                Some(S::WontFix),
                false,
            ),
            (
                S::Reported,
                I::Duplicate,
                0.9,
                &[],
                Role::Author,
                Some(S::Duplicate),
                false,
            ),
            // A question for the robot goes to a human; one developer
            // asking another ("David, any idea?") is the thread's business.
            (
                S::Reported,
                I::Question,
                0.7,
                &["asks-robot"],
                Role::Other,
                Some(S::NeedsHuman),
                true,
            ),
            (
                S::Reported,
                I::Question,
                0.7,
                &[],
                Role::Maintainer,
                None,
                false,
            ),
            // A question for the robot in a case that holds a decision: a
            // human answers it, and the decision stands.
            (
                S::AwaitingFix,
                I::Question,
                0.7,
                &["asks-robot"],
                Role::Author,
                None,
                true,
            ),
            (
                S::NotARegression,
                I::Question,
                0.7,
                &["asks-robot"],
                Role::Maintainer,
                None,
                true,
            ),
            // Escalated by command: a human, whatever the case holds.
            (
                S::AwaitingFix,
                I::Question,
                0.7,
                &["command:escalate"],
                Role::Author,
                Some(S::NeedsHuman),
                true,
            ),
            // A reply read only in part: its decision may be past the cut.
            (
                S::Reported,
                I::Investigating,
                0.7,
                &["partial"],
                Role::Author,
                Some(S::NeedsHuman),
                true,
            ),
            // A fix or revert awaited closes nothing: anyone's words move it
            // (a closure from the same sender goes to a human, below).
            (
                S::Reported,
                I::FixPosted,
                0.8,
                &[],
                Role::Other,
                Some(S::AwaitingFix),
                false,
            ),
            (
                S::Reported,
                I::Investigating,
                0.6,
                &[],
                Role::Other,
                Some(S::Investigating),
                false,
            ),
            (
                S::AwaitingFix,
                I::Investigating,
                0.6,
                &[],
                Role::Other,
                None,
                false,
            ),
            (
                S::Reported,
                I::ThanksOnly,
                0.6,
                &[],
                Role::Author,
                None,
                false,
            ),
            // untrusted, unsure, contradicting: a human decides
            (
                S::Reported,
                I::NotARegression,
                0.9,
                &[],
                Role::Other,
                Some(S::NeedsHuman),
                true,
            ),
            (
                S::Reported,
                I::NotARegression,
                0.5,
                &[],
                Role::Author,
                Some(S::NeedsHuman),
                true,
            ),
            (
                S::AwaitingRevert,
                I::NotARegression,
                0.9,
                &[],
                Role::Author,
                Some(S::NeedsHuman),
                true,
            ),
            (
                S::AwaitingRevert,
                I::FixPosted,
                0.9,
                &[],
                Role::Author,
                Some(S::AwaitingFix),
                false,
            ),
            // robots never move anything
            (
                S::Reported,
                I::NotARegression,
                1.0,
                &[],
                Role::Bot,
                None,
                false,
            ),
            // commands
            (
                S::NotARegression,
                I::Other,
                1.0,
                &["command:reopen"],
                Role::Maintainer,
                Some(S::Reopened),
                false,
            ),
            (
                S::Reported,
                I::FixPosted,
                1.0,
                &["command:fixed", "applied"],
                Role::Author,
                Some(S::Fixed),
                false,
            ),
            (
                S::AwaitingRevert,
                I::NotARegression,
                1.0,
                &["command:invalid"],
                Role::Operator,
                Some(S::NotARegression),
                false,
            ),
            // The robot's people's "reverted" or "fixed" is a test status,
            // sure or unsure: nothing moves, nobody is asked; their command
            // and their retraction still act.
            (
                S::Reported,
                I::WillRevert,
                0.9,
                &[],
                Role::Operator,
                None,
                false,
            ),
            (
                S::Reported,
                I::FixPosted,
                0.5,
                &[],
                Role::Operator,
                None,
                false,
            ),
            (
                S::Reported,
                I::FixPosted,
                1.0,
                &["command:fixed", "applied"],
                Role::Operator,
                Some(S::Fixed),
                false,
            ),
            (
                S::Reported,
                I::NotARegression,
                0.9,
                &[],
                Role::Operator,
                Some(S::NotARegression),
                false,
            ),
            // Their retraction read unsurely is not put before them as a
            // human's question: they settle it by command. Anyone else's
            // goes to a human.
            (
                S::Reported,
                I::NotARegression,
                0.4,
                &[],
                Role::Operator,
                None,
                false,
            ),
            (
                S::Reported,
                I::NotARegression,
                0.4,
                &[],
                Role::Author,
                Some(S::NeedsHuman),
                true,
            ),
        ];
        // A later reply that reverses a closing decision.
        let mut real = u(Intent::Investigating, 0.6, &[]);
        real.confirms = true;
        let e = decide(S::NotARegression, &real, Role::Maintainer, &policy());
        assert_eq!(e.state, Some(S::NeedsHuman));
        assert!(e.escalate.unwrap().contains("real"));
        let e = decide(S::Reported, &real, Role::Maintainer, &policy());
        assert_eq!(e.state, Some(S::Investigating));
        for (state, intent, conf, tags, role, want, esc) in cases {
            let e = decide(*state, &u(*intent, *conf, tags), *role, &policy());
            assert_eq!(e.state, *want, "{state} {intent} {role}: {e:?}");
            assert_eq!(e.escalate.is_some(), *esc, "{state} {intent} {role}: {e:?}");
            // Escalated without a move: the question is recorded beside the state.
            assert_eq!(e.question == Asked::Beside, want.is_none() && *esc, "{e:?}");
        }
    }

    /// A decision against the case's state: the same sender may overturn
    /// their own open decision, a trusted sender a stranger's; another
    /// trusted sender's, or a closed case, goes to a human. `(state, who
    /// moved it there, intent, role, state after)`.
    #[test]
    fn overturning_a_decision() {
        use CaseState as S;
        use Intent as I;
        let cases: &[(S, MovedBy, I, Role, S)] = &[
            (
                S::AwaitingFix,
                MovedBy::Sender,
                I::NotARegression,
                Role::Author,
                S::NotARegression,
            ),
            (
                S::AwaitingFix,
                MovedBy::Sender,
                I::WontFix,
                Role::Maintainer,
                S::WontFix,
            ),
            (
                S::AwaitingFix,
                MovedBy::Sender,
                I::WillRevert,
                Role::Author,
                S::AwaitingRevert,
            ),
            (
                S::AwaitingFix,
                MovedBy::Another,
                I::NotARegression,
                Role::Author,
                S::NeedsHuman,
            ),
            // A revert instead of the fix awaited closes nothing either: it
            // follows on, whoever awaited the fix.
            (
                S::AwaitingFix,
                MovedBy::Another,
                I::WillRevert,
                Role::Maintainer,
                S::AwaitingRevert,
            ),
            (
                S::AwaitingRevert,
                MovedBy::Another,
                I::NotARegression,
                Role::Maintainer,
                S::NeedsHuman,
            ),
            // A stranger's own earlier words decide nothing now either.
            (
                S::AwaitingFix,
                MovedBy::Sender,
                I::NotARegression,
                Role::Other,
                S::NeedsHuman,
            ),
            // A closed case is a human's to reopen or re-close.
            (
                S::NotARegression,
                MovedBy::Sender,
                I::WontFix,
                Role::Author,
                S::NeedsHuman,
            ),
            (
                S::WontFix,
                MovedBy::Sender,
                I::WillRevert,
                Role::Author,
                S::NeedsHuman,
            ),
            // A stranger's patch awaited, then the author finds no
            // regression: the author has the last word.
            (
                S::AwaitingFix,
                MovedBy::Untrusted,
                I::NotARegression,
                Role::Author,
                S::NotARegression,
            ),
            // ... but not over a closed case, and a stranger not over a
            // stranger.
            (
                S::WontFix,
                MovedBy::Untrusted,
                I::NotARegression,
                Role::Author,
                S::NeedsHuman,
            ),
            (
                S::AwaitingFix,
                MovedBy::Untrusted,
                I::NotARegression,
                Role::Other,
                S::NeedsHuman,
            ),
        ];
        for &(state, by, intent, role, want) in cases {
            let e = decide_in(state, by, &u(intent, 0.9, &[]), role, &policy());
            assert_eq!(e.state, Some(want), "{state} {by:?} {intent} {role}: {e:?}");
        }
        // Agreeing with where the case is: nothing moves, nobody is asked,
        // from a stranger or at low confidence too.
        for (role, conf) in [(Role::Other, 0.9), (Role::Author, 0.3)] {
            let e = decide(S::WontFix, &u(I::WontFix, conf, &[]), role, &policy());
            assert_eq!(e.state, None, "{role} {conf}: {e:?}");
            assert!(e.escalate.is_none(), "{role} {conf}: {e:?}");
        }
    }

    /// A closure from someone who may not close the case, read by the model
    /// alone and not surely, is their talk: recorded, nobody asked. Found
    /// by a phrase rule, sure, or with a second decision in the same mail,
    /// it is a human's to weigh; and the author's unsure closure still is,
    /// since the author may close the case.
    #[test]
    fn a_strangers_unsure_closure_is_talk() {
        use crate::reply::understand::Secondary;
        let (model, rule) = (true, false);
        let cases = [
            (
                Intent::NotARegression,
                0.45,
                model,
                None,
                Role::Other,
                false,
            ),
            (Intent::WontFix, 0.3, model, None, Role::Contributor, false),
            (Intent::Duplicate, 0.55, model, None, Role::Other, false),
            (Intent::NotARegression, 0.45, rule, None, Role::Other, true),
            (Intent::NotARegression, 0.6, model, None, Role::Other, true),
            (Intent::NotARegression, 0.9, model, None, Role::Other, true),
            (
                Intent::NotARegression,
                0.45,
                model,
                Some(Intent::WillRevert),
                Role::Other,
                true,
            ),
            (
                Intent::NotARegression,
                0.45,
                model,
                None,
                Role::Author,
                true,
            ),
            (Intent::WontFix, 0.45, model, None, Role::Maintainer, true),
        ];
        for (intent, conf, by_model, second, role, asked) in cases {
            let mut r = u(intent, conf, &[]);
            if by_model {
                r.basis = Basis::Model;
            }
            r.secondary = second
                .map(|intent| Secondary {
                    intent,
                    confidence: 0.3,
                })
                .into_iter()
                .collect();
            let e = decide(CaseState::Reported, &r, role, &policy());
            let want = asked.then_some(CaseState::NeedsHuman);
            let case = format!("{intent} {conf} model {by_model} {second:?} {role}");
            assert_eq!(e.state, want, "{case}: {e:?}");
            assert_eq!(e.escalate.is_some(), asked, "{case}: {e:?}");
            assert!(!e.decided, "{case}: {e:?}");
        }
    }

    /// A question the robot's own people ask (of a developer) is theirs to
    /// follow: never escalated to them. Anyone else's question of the robot
    /// is.
    #[test]
    fn the_robots_people_asking_is_not_an_escalation() {
        let q = u(Intent::Question, 0.8, &["asks-robot"]);
        let e = decide(CaseState::Reported, &q, Role::Operator, &policy());
        assert_eq!(e.state, None, "{e:?}");
        assert!(e.escalate.is_none(), "{e:?}");
        let e = decide(CaseState::Reported, &q, Role::Author, &policy());
        assert_eq!(e.state, Some(CaseState::NeedsHuman), "{e:?}");
        // The question goes with the move; beside a decision, it is kept
        // beside it.
        assert_eq!(e.question, Asked::WithTheMove, "{e:?}");
        let e = decide(CaseState::AwaitingFix, &q, Role::Author, &policy());
        assert_eq!((e.state, &e.question), (None, &Asked::Beside), "{e:?}");
    }
}
