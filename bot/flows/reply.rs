//! A person's new message in a case thread: gather the facts (who sent it, is
//! it verified, what it says, what perfbot sent before), let `policy` decide,
//! render the follow-ups, and record the message, its reading, the case's move
//! and the follow-ups in one write. Mail from perfbot itself or other robots
//! never gets here.

use chrono::{Duration, Utc};

use crate::config::Config;
use crate::flows::followup::{prepare_followup, FollowUp};
use crate::mail::dkim::Checker;
use crate::model::case::{Case, CaseId, CaseState, Cause, MovedByMail, Question, Unsettled};
use crate::model::ignore::IgnoreRule;
use crate::model::thread::SecondaryReading;
use crate::model::{Address, MessageId};
use crate::model::{OutboxKind, Reading, Sender, ThreadEntry};
use crate::reply::policy::effect::{says_again, Asked, MovedBy};
use crate::reply::policy::trust::{role, Policy as TrustPolicy, Role, Verdict};
use crate::reply::policy::{self, echo_of, Echo, Facts, FollowUpKind, Plan, ERROR_MARKER};
use crate::reply::understand::command::{commands, Command, CommandError, Parsed};
use crate::reply::understand::{read, Basis, Context, Fact, Intent, Speaker, Understanding};
use crate::store::thread::{QuestionChange, QueuedMail, Recorded, Reply};
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum HandleError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Template(#[from] crate::templates::TemplateError),
    #[error("building a follow-up: {0}")]
    Build(#[from] crate::mail::message::BuildError),
    /// Other writers moved the case every time a decision was about to be
    /// recorded: the reply is kept unhandled (the database is fine).
    #[error(
        "case {case} kept moving while the reply was decided ({tries} tries): kept, not acted on"
    )]
    KeptMoving { case: CaseId, tries: usize },
}

/// What handling one reply did.
#[derive(Debug, Clone)]
pub struct Handled {
    pub understanding: Understanding,
    pub role: Role,
    pub effect: crate::reply::policy::effect::Effect,
    /// Follow-ups queued (escalation, ack, command error).
    pub queued: Vec<MessageId>,
    /// What was deliberately not done (unanswered commands, echoes).
    pub notes: Vec<String>,
}

/// Who is speaking, for the reading: the trust role's reader-side name.
pub fn speaker(r: Role) -> Speaker {
    match r {
        Role::Author | Role::Committer => Speaker::Author,
        Role::Maintainer => Speaker::Maintainer,
        Role::Contributor => Speaker::Other,
        Role::Operator => Speaker::Operator,
        Role::Other | Role::Bot => Speaker::Other,
    }
}

/// How a thread message was matched decides what kind of fact it is.
fn fact(entry: &ThreadEntry) -> Option<Understanding> {
    let (intent, fact, evidence) = match entry.matched_by.as_str() {
        "revert" => (
            Intent::WillRevert,
            Fact::RevertPosted,
            "a revert of the commit was posted",
        ),
        "trailer" => (
            Intent::FixPosted,
            Fact::ClosingPatch,
            "a patch that closes the report was posted",
        ),
        _ => return None,
    };
    Some(Understanding {
        intent,
        confidence: 0.95,
        evidence: format!("{evidence}: {}", entry.subject),
        basis: Basis::Fact { fact },
        ..Understanding::nothing()
    })
}

/// `#perfbot dup <case>` names a case that exists and is not this one.
fn check_commands(store: &Store, case: &Case, words: &str) -> Vec<(String, Parsed)> {
    commands(words)
        .into_iter()
        .map(|(line, parsed)| {
            let parsed = match parsed {
                Ok(Command::Dup(other)) => match store.find_case(&other) {
                    Ok(c) if c.id == case.id => Err(CommandError::DupOfItself),
                    Ok(_) => Ok(Command::Dup(other)),
                    Err(_) => Err(CommandError::NoSuchCase(other)),
                },
                Ok(Command::Ignore { what, scope }) => {
                    match crate::model::ignore::Scope::of(scope, case) {
                        Some(_) => Ok(Command::Ignore { what, scope }),
                        None => Err(CommandError::NoScope(match scope {
                            Some(crate::model::ignore::ScopeKind::Subsystem) => "subsystem",
                            Some(crate::model::ignore::ScopeKind::Series) => "patch series",
                            None => "patch series or subsystem",
                        })),
                    }
                }
                p => p,
            };
            (line, parsed)
        })
        .collect()
}

/// Whether the reply only repeats perfbot's own automatic mail it answers, or
/// perfbot's command-error text.
fn echo(store: &Store, entry: &ThreadEntry) -> Result<Echo, StoreError> {
    let mut ours = Vec::new();
    if let Some(parent) = &entry.in_reply_to {
        if let Some(r) = store.message(parent)? {
            if r.our_kind().is_some_and(OutboxKind::automatic) {
                if let Ok(raw) = store.outbox_raw(parent) {
                    ours.push(crate::flows::ingest::parse::body_text(&raw));
                }
            }
        }
    }
    Ok(echo_of(&entry.text, &ours, ERROR_MARKER))
}

/// Automatic answers queued to `to` since `since`.
fn answers_since(
    store: &Store,
    to: &Address,
    since: chrono::DateTime<Utc>,
) -> Result<usize, StoreError> {
    Ok(store
        .outbox_entries()?
        .iter()
        .filter(|e| {
            e.queued_at >= since && e.kind.answer() && e.recipients.iter().any(|r| r == to.as_str())
        })
        .count())
}

/// A person's message as ingestion read it.
pub struct Incoming<'a> {
    /// Its thread entry (the understanding is filled in here).
    pub entry: &'a mut ThreadEntry,
    /// The decoded body text (quotes included).
    pub body: &'a str,
    /// The raw bytes (for the DKIM check).
    pub raw: &'a [u8],
    /// The note of its timeline event.
    pub note: &'a str,
}

/// Handle a person's new message in `case_id`'s thread, and record it. `None`
/// when the message was recorded before (nothing happens twice).
pub fn handle_reply(
    config: &Config,
    store: &Store,
    case_id: &CaseId,
    msg: Incoming,
    dkim: Option<&Checker>,
) -> Result<Option<Handled>, HandleError> {
    let Incoming {
        entry,
        body,
        raw,
        note,
    } = msg;
    let said = Said::of(config, store, case_id, entry, body, raw, dkim)?;
    // The case may move under us only through another writer; decide again
    // against where it is then (bounded: the daemon has one ingest thread).
    const TRIES: usize = 5;
    for _ in 0..TRIES {
        let case = store.case(case_id)?;
        let overtaken = overtaken_by(&case, entry);
        let asks = said.understanding.intent == Intent::Question;
        let seen = Seen::of(
            config,
            store,
            &case,
            entry,
            overtaken,
            asks,
            said.from.as_ref(),
        )?;
        let facts = said.facts(config, &case, entry, overtaken, &seen);
        let plan = policy::plan(&facts, &config.reply);
        let u = &said.understanding;
        let mails = render(config, &case, entry, &plan)?;
        entry.understanding = Some(understanding_record(u, &plan, said.dkim.as_ref()));
        let rule = ignore_rule(entry, &case, &plan);
        let reply = Reply {
            note,
            expect: Some(case.state),
            change: state_change(entry, u, &plan),
            mails: &mails,
            ignore: rule.as_ref(),
            contributor: said.contributor(),
            question: question_change(entry, u, &plan),
            unsettled: unsettled(entry, u, &plan),
            late: plan.effect.state == Some(CaseState::NeedsHuman) && overtaken.is_some(),
            says_again: says_again(case.state, u, plan.role, &config.reply.trust),
        };
        match store.record_reply(case_id, entry, &reply)? {
            Recorded::Duplicate => return Ok(None),
            Recorded::Conflict(now) => {
                tracing::info!(case = %case_id, was = %case.state, %now, "case moved while a reply was read; deciding again");
                continue;
            }
            Recorded::New => {}
        }
        log_outcome(&case, entry, u, &plan);
        return Ok(Some(Handled {
            understanding: said.understanding,
            role: plan.role,
            effect: plan.effect,
            queued: mails.iter().map(|m| m.entry.message_id.clone()).collect(),
            notes: plan.notes,
        }));
    }
    Err(HandleError::KeptMoving {
        case: case_id.clone(),
        tries: TRIES,
    })
}

/// What a message says, whatever state its case is in: read once, before
/// the case is looked at, so a case that moves under a write is decided
/// again without reading the message again.
struct Said {
    /// The sender's address (From), if readable.
    from: Option<Address>,
    /// The DKIM check, when enabled.
    dkim: Option<Verdict>,
    understanding: Understanding,
    /// A fact seen on the list (a revert or a closing patch), not words.
    is_fact: bool,
    /// The message posts a patch (its subject or a diff in it).
    posted_patch: bool,
    echo: Echo,
}

impl Said {
    fn of(
        config: &Config,
        store: &Store,
        case_id: &CaseId,
        entry: &ThreadEntry,
        body: &str,
        raw: &[u8],
        dkim: Option<&Checker>,
    ) -> Result<Said, HandleError> {
        let from = Address::parse(&entry.from);
        let dkim = dkim.map(|c| c.check(raw, domain_of(from.as_ref())));
        let (understanding, is_fact) =
            understand(config, store, case_id, entry, body, from.as_ref())?;
        Ok(Said {
            dkim,
            understanding,
            is_fact,
            posted_patch: posts_a_patch(&entry.subject, &entry.text),
            echo: echo(store, entry)?,
            from,
        })
    }

    /// What the policy decides on: this message against `case` as it is now.
    fn facts<'a>(
        &'a self,
        config: &Config,
        case: &'a Case,
        entry: &'a ThreadEntry,
        overtaken: Option<&'a MovedByMail>,
        seen: &'a Seen,
    ) -> Facts<'a> {
        let from = self.from.as_ref();
        Facts {
            case,
            from: self.from.clone(),
            from_name: &entry.from_name,
            from_header: &entry.from,
            message_id: entry.message_id.as_str(),
            reply_date: entry.date.map(|d| d.format("%a, %d %b %Y").to_string()),
            words: &entry.text,
            role: sender_role(config, case, entry, from, self.posted_patch),
            dkim: self.dkim.clone(),
            understanding: &self.understanding,
            fact: self.is_fact,
            commands: &seen.commands,
            limited: entry.limited.as_deref(),
            echo: self.echo,
            moved_by: seen.moved_by,
            overtaken_by: overtaken,
            moved_before: seen.moved_before,
            answered_by: seen.answered_by.as_ref(),
            unsettled_answered_by: seen.unsettled_answered_by.as_ref(),
            acked_before: seen.acked_before,
            answers_last_hour: seen.answers_last_hour,
            recent_escalation: seen.recent_escalation.as_deref(),
        }
    }

    /// The sender, recorded as a contributor when the message posts a patch.
    fn contributor(&self) -> Option<&str> {
        self.from
            .as_ref()
            .filter(|_| self.posted_patch)
            .map(Address::as_str)
    }
}

/// The mail that moved `case` last, when it was written after `entry`: it
/// answers `entry`, or `entry` does not answer it and is dated before it (a
/// clock set wrong can misdate; an answer comes after what it answers).
/// A later mail that only took the case to investigating decided nothing
/// to stand over: `entry` is read as if in order, and a move it makes
/// (to a human) makes it the case's mover.
fn overtaken_by<'c>(case: &'c Case, entry: &ThreadEntry) -> Option<&'c MovedByMail> {
    if case.state == CaseState::Investigating {
        return None;
    }
    case.moved_by_mail.as_ref().filter(|m| {
        let answers_entry = m.answers.as_ref() == Some(&entry.message_id);
        let answers_mover = entry.in_reply_to.as_ref() == Some(&m.message_id);
        answers_entry || (!answers_mover && entry.written() < m.written)
    })
}

/// Who the sender is to the case; someone unknown who posts a patch in the
/// thread is a contributor.
fn sender_role(
    config: &Config,
    case: &Case,
    entry: &ThreadEntry,
    from: Option<&Address>,
    posted_patch: bool,
) -> Role {
    match role(from, &entry.from_name, false, case, &config.reply.trust) {
        Role::Other if posted_patch => Role::Contributor,
        r => r,
    }
}

/// The case's move, caused by this message and its quoted evidence.
fn state_change(
    entry: &ThreadEntry,
    u: &Understanding,
    plan: &Plan,
) -> Option<(CaseState, Cause, String)> {
    plan.effect.state.map(|new| {
        let cause = Cause::Message {
            message_id: entry.message_id.clone(),
            from: entry.from.clone(),
            quote: u.evidence.clone(),
        };
        (new, cause, plan.effect.note.clone())
    })
}

/// The `#perfbot ignore` rule the message gave, as the store keeps it.
fn ignore_rule(entry: &ThreadEntry, case: &Case, plan: &Plan) -> Option<IgnoreRule> {
    plan.ignore.as_ref().map(|(what, scope)| IgnoreRule {
        what: what.clone(),
        scope: scope.clone(),
        by: entry.from.clone(),
        message_id: entry.message_id.clone(),
        case: case.id.clone(),
        at: Utc::now(),
    })
}

/// The question a mail asks, as the case keeps it.
fn asked(entry: &ThreadEntry, u: &Understanding) -> Question {
    Question {
        message_id: entry.message_id.clone(),
        from: entry.from.clone(),
        quote: u.evidence.clone(),
        asked: entry.received,
    }
}

/// A question for the robot's people is recorded beside the case's
/// decision; the robot's people writing in the thread answer an open one
/// (the store's transaction sees whether one is open).
fn question_change(entry: &ThreadEntry, u: &Understanding, plan: &Plan) -> QuestionChange {
    match &plan.effect.question {
        Asked::Beside => QuestionChange::Ask(asked(entry, u)),
        Asked::WithTheMove => QuestionChange::Keep,
        Asked::Kept(q) => QuestionChange::Ask(q.as_ref().clone()),
        Asked::No if plan.role == Role::Operator => QuestionChange::Answered,
        Asked::No => QuestionChange::Keep,
    }
}

/// What a move to a human leaves unsettled that an older decision read
/// after it may settle: a question for the robot's people, or a decision
/// the sender could not make alone.
fn unsettled(entry: &ThreadEntry, u: &Understanding, plan: &Plan) -> Option<Unsettled> {
    match (&plan.effect.question, plan.effect.meant) {
        (Asked::WithTheMove, _) => Some(Unsettled::Asked(asked(entry, u))),
        (_, Some(m)) => Some(Unsettled::Meant(m)),
        _ => None,
    }
}

/// The mail posts a patch: a `[PATCH` Subject, or a diff in the sender's
/// own words.
fn posts_a_patch(subject: &str, words: &str) -> bool {
    use crate::model::subject::posts_a_patch;
    use crate::reply::understand::features::has_diff;
    posts_a_patch(subject) || has_diff(words)
}

/// The domain of the From address (what a DKIM signature must align with).
fn domain_of(from: Option<&Address>) -> &str {
    from.and_then(|a| a.as_str().rsplit_once('@'))
        .map_or("", |(_, d)| d)
}

/// What the message says: a fact seen on the list (a revert, a closing
/// patch), else the sender's words read in the case's context. The flag
/// says which.
fn understand(
    config: &Config,
    store: &Store,
    case_id: &CaseId,
    entry: &ThreadEntry,
    body: &str,
    from: Option<&Address>,
) -> Result<(Understanding, bool), HandleError> {
    if let Some(u) = fact(entry) {
        return Ok((u, true));
    }
    let case = store.case(case_id)?;
    let ctx = Context {
        speaker: speaker(role(
            from,
            &entry.from_name,
            false,
            &case,
            &config.reply.trust,
        )),
        improvement: case.verdict == crate::model::case::ReportKind::Improvement,
        patch_subject: crate::model::subject::posts_a_patch(&entry.subject),
        patch_attached: !entry.patches.is_empty(),
    };
    let u = read(
        body,
        &entry.text,
        ctx,
        config.intent_rules(),
        config.intent_model(),
    );
    Ok((u, false))
}

/// What the store says that the decision depends on, read afresh each try.
struct Seen {
    /// The sender's `#perfbot` lines, `dup` targets checked.
    commands: Vec<(String, Parsed)>,
    answers_last_hour: usize,
    acked_before: bool,
    /// The case's escalation mail of the last `escalation.per_case_hours`.
    recent_escalation: Option<String>,
    /// Whose reply put the case where it is.
    moved_by: MovedBy,
    /// Whose reply put the case where it was before the last mail moved it,
    /// for a reply written before that mail (else unused, and not looked up).
    moved_before: MovedBy,
    /// For a question: a mail of the robot's people in the thread that was
    /// written after it (`answered_later`).
    answered_by: Option<MessageId>,
    /// For the question the overtaking mail left unsettled: the same.
    unsettled_answered_by: Option<MessageId>,
}

impl Seen {
    fn of(
        config: &Config,
        store: &Store,
        case: &Case,
        entry: &ThreadEntry,
        overtaken: Option<&MovedByMail>,
        asks: bool,
        from: Option<&Address>,
    ) -> Result<Seen, StoreError> {
        let commands = check_commands(store, case, &entry.text);
        let wants_answer = !commands.is_empty() || config.file.acks.enabled;
        let answers_last_hour = match (from, wants_answer) {
            (Some(a), true) => answers_since(store, a, Utc::now() - Duration::hours(1))?,
            _ => 0,
        };
        let outbox = store.case_outbox(&case.id)?;
        let acked_before =
            config.file.acks.enabled && outbox.iter().any(|o| o.kind == OutboxKind::Ack);
        let hours = config.file.escalation.per_case_hours;
        let since = Utc::now() - Duration::hours(i64::from(hours));
        let recent_escalation = outbox
            .iter()
            .filter(|o| hours > 0 && o.kind == OutboxKind::Escalation && o.queued_at > since)
            .max_by_key(|o| o.queued_at)
            .map(|o| o.message_id.to_string());
        let trust = &config.reply.trust;
        let moved_before = match overtaken {
            Some(m) => mover(store, trust, case, m.from_by.as_deref(), from)?,
            None => MovedBy::Another,
        };
        let moved_by = mover(store, trust, case, case.moved_by.as_deref(), from)?;
        let unsettled_question = overtaken.and_then(|m| match &m.unsettled {
            Some(Unsettled::Asked(q)) => Some(&q.message_id),
            _ => None,
        });
        let (answered_by, unsettled_answered_by) = if asks || unsettled_question.is_some() {
            let thread = store.thread(&case.id)?;
            let asked =
                unsettled_question.and_then(|id| thread.iter().find(|e| e.message_id == *id));
            (
                asks.then(|| answered_later(&thread, entry)).flatten(),
                asked.and_then(|q| answered_later(&thread, q)),
            )
        } else {
            (None, None)
        };
        Ok(Seen {
            commands,
            answers_last_hour,
            acked_before,
            recent_escalation,
            moved_by,
            moved_before,
            answered_by,
            unsettled_answered_by,
        })
    }
}

/// A mail of the robot's people (read as their operators') already in the
/// thread that was written after `entry`, or answers it: a question `entry`
/// asks of them, read late, was answered there.
fn answered_later(thread: &[ThreadEntry], entry: &ThreadEntry) -> Option<MessageId> {
    thread
        .iter()
        .filter(|e| e.sender == Sender::Person && e.message_id != entry.message_id)
        .filter(|e| {
            e.understanding
                .as_ref()
                .is_some_and(|u| Role::parse(&u.role) == Some(Role::Operator))
        })
        .find(|e| {
            e.in_reply_to.as_ref() == Some(&entry.message_id) || e.written() > entry.written()
        })
        .map(|e| e.message_id.clone())
}

/// Whose words (`by`, an address) put `case` where it stands, or stood, as
/// the sender `from` sees them: their own (by address or mailmap), someone's
/// the policy lets make only open moves, or another's (a trusted person, a
/// command, nobody).
fn mover(
    store: &Store,
    trust: &TrustPolicy,
    case: &Case,
    by: Option<&str>,
    from: Option<&Address>,
) -> Result<MovedBy, StoreError> {
    let Some(by) = by else {
        return Ok(MovedBy::Another);
    };
    let Some(mover) = Address::parse(by) else {
        return Ok(MovedBy::Another);
    };
    if from.is_some_and(|a| trust.aliases.same(&mover, a)) {
        return Ok(MovedBy::Sender);
    }
    // The mover's name, as their mail gave it (the case keeps the address):
    // only a match by name needs it.
    let name = if trust.same_name {
        store.sender_name(&case.id, by)?
    } else {
        None
    };
    let role = role(
        Some(&mover),
        name.as_deref().unwrap_or(""),
        false,
        case,
        trust,
    );
    Ok(MovedBy::of(false, role, trust))
}

/// The understanding as the thread entry keeps it (timeline, dashboard).
fn understanding_record(u: &Understanding, plan: &Plan, dkim: Option<&Verdict>) -> Reading {
    Reading {
        intent: u.intent.as_str().to_string(),
        confidence: u.confidence,
        evidence: u.evidence.clone(),
        secondary: u
            .secondary
            .iter()
            .map(|s| SecondaryReading {
                intent: s.intent.as_str().to_string(),
                confidence: s.confidence,
            })
            .collect(),
        role: plan.role.as_str().to_string(),
        effect: plan.effect.note.clone(),
        dkim: dkim.map(Verdict::describe),
        notes: plan.notes.clone(),
    }
}

fn log_outcome(case: &Case, entry: &ThreadEntry, u: &Understanding, plan: &Plan) {
    if let Some(new) = plan.effect.state {
        tracing::info!(case = %case.id, message_id = %entry.message_id, from = %entry.from, role = %plan.role,
            intent = %u.intent, confidence = u.confidence, new_state = %new, "case moved");
    }
    for n in &plan.notes {
        tracing::info!(case = %case.id, message_id = %entry.message_id, "{n}");
    }
}

/// Render the planned follow-ups into mails ready to queue.
fn render(
    config: &Config,
    case: &Case,
    entry: &ThreadEntry,
    plan: &Plan,
) -> Result<Vec<QueuedMail>, HandleError> {
    let mut out = Vec::new();
    for p in &plan.followups {
        let template = match p.kind() {
            FollowUpKind::Escalation => &config.file.escalation.template,
            FollowUpKind::Ack => &config.file.acks.template,
            FollowUpKind::CommandError => "command-error",
        };
        let text = config.render_template(template, &p.data)?;
        let f = FollowUp {
            kind: p.kind().outbox(),
            body: &text,
            parent: Some(&entry.message_id),
            to: p.to.clone(),
            cc: p.cc.clone(),
        };
        let (oe, raw) = prepare_followup(config, case, &f, Utc::now())?;
        out.push(QueuedMail {
            entry: oe,
            raw,
            cause: Cause::system(format!("{} for <{}>", p.kind().as_str(), entry.message_id)),
            note: p.note.clone(),
        });
    }
    Ok(out)
}
