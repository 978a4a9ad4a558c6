//! Review: a case left open (reported, investigating) whose thread has gone
//! quiet after a reply that may carry a decision perfbot did not act on goes
//! to a human, once.
//!
//! A reply read as an investigation can still carry a decision as its second
//! reading ("won't fix" at 0.3 under "investigating" at 0.5). Read one at a
//! time, such replies are too many to send to a human as they arrive: most
//! threads go on and settle. A thread that stopped there has nobody left to
//! settle it, and the case would stay open on words that may have decided it
//! (and, after `reminders.stale_days`, close as stale). So when the thread has
//! been quiet for `review.quiet_days` and one of its replies, from someone who
//! may decide by their words, carries a decision at `review.min_signal` or
//! more, the case goes to a human with those words. Nobody in the thread is
//! mailed; the digest and the dashboard list the case, and the operator's
//! settlement labels the reply (`flows::learn`).

use chrono::{DateTime, Duration, Utc};

use crate::config::{Config, ReviewSection};
use crate::flows::learn::carried;
use crate::model::case::{Case, CaseRecord, CaseState, Cause};
use crate::model::{MessageId, Sender, ThreadEntry};
use crate::reply::policy::trust::{Policy, Role};
use crate::reply::understand::Intent;
use crate::store::{Store, StoreError};

/// The cause every review move carries (`Cause::System`): a human's later
/// settlement, or this, marks where a case was last looked at.
pub const REVIEW: &str = "review";

/// A case to hand to a human, and the reply that may have decided it.
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    pub case: Case,
    pub message_id: MessageId,
    /// The replier, as the thread names them.
    pub from: String,
    /// What perfbot read, and the decision the reading also carries.
    pub read_as: String,
    pub evidence: String,
    pub decision: Intent,
    pub signal: f64,
    /// Days since the thread's last message.
    pub quiet_days: i64,
}

impl Review {
    /// The case event's note, for the digest and the timeline: with the
    /// reply's Message-ID, which `cases set --reply` takes to label it.
    pub fn note(&self) -> String {
        let reading = if self.read_as == self.decision.as_str() {
            format!("read as {} at {:.2}, unsettled", self.decision, self.signal)
        } else {
            format!(
                "read as {}; it may be {}, {:.2}",
                self.read_as, self.decision, self.signal
            )
        };
        format!(
            "perhaps decided: {} wrote \"{}\" in <{}> ({reading}); \
             the thread has been quiet for {} days",
            self.from, self.evidence, self.message_id, self.quiet_days
        )
    }
}

/// The decision a reply of `role` may have made without settling it: the
/// strongest decisive intent of its reading, as the reading or a second
/// reading, at `min` or more — from someone whose words may settle the case
/// (`may_settle`). `secondary` is the reading's other intents with their
/// confidence. `eval-replies` replays threads with the same test.
pub fn unsettled_decision(
    role: Role,
    policy: &Policy,
    read: &str,
    confidence: f64,
    secondary: &[(&str, f64)],
    min: f64,
) -> Option<(Intent, f64)> {
    if !may_settle(role, policy) {
        return None;
    }
    Intent::ALL
        .iter()
        .filter(|i| i.is_decisive())
        .map(|&i| (i, carried(i, read, confidence, secondary.iter().copied())))
        .filter(|(_, s)| *s >= min)
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// Whose words may settle a case for the review: those the policy lets
/// decide by free text, but the robot's own people, whose "fixed" and
/// "reverted" are test statuses.
fn may_settle(role: Role, policy: &Policy) -> bool {
    role != Role::Operator && policy.may_decide_by_text(role)
}

/// The reviews due at `now`: open cases whose thread went quiet for
/// `review.quiet_days` after words that may decide them, each with the
/// reply whose decision comes through the strongest.
pub fn due(
    records: &[CaseRecord],
    now: DateTime<Utc>,
    policy: &Policy,
    r: &ReviewSection,
) -> Vec<Review> {
    let mut out = Vec::new();
    for (c, events, thread) in records {
        if !matches!(c.state, CaseState::Reported | CaseState::Investigating) {
            continue;
        }
        let Some(last) = thread.iter().map(ThreadEntry::written).max() else {
            continue;
        };
        let quiet = now - last;
        if quiet < Duration::days(r.quiet_days) {
            continue;
        }
        let since = looked_at(events);
        let Some((e, u, decision, signal)) =
            strongest_unsettled(thread, since, policy, r.min_signal)
        else {
            continue;
        };
        out.push(Review {
            case: c.clone(),
            message_id: e.message_id.clone(),
            from: crate::model::ids::display_mailbox(&e.from_name, &e.from),
            read_as: u.intent.clone(),
            evidence: u.evidence.clone(),
            decision,
            signal,
            quiet_days: quiet.num_days(),
        });
    }
    out
}

/// When a human (or an earlier review) last looked at the case: the replies
/// before it are theirs, so a case set back to investigating stays there.
fn looked_at(events: &[crate::model::case::Event]) -> Option<DateTime<Utc>> {
    events
        .iter()
        .filter(|e| match &e.cause {
            Cause::Cli { .. } | Cause::Dashboard { .. } => true,
            Cause::System { what } => what == REVIEW,
            _ => false,
        })
        .map(|e| e.time)
        .max()
}

/// Of the people's replies after `since`, the one whose unsettled decision
/// comes through the strongest: the reply, its reading, the decision and
/// its signal.
fn strongest_unsettled<'a>(
    thread: &'a [ThreadEntry],
    since: Option<DateTime<Utc>>,
    policy: &Policy,
    min_signal: f64,
) -> Option<(&'a ThreadEntry, &'a crate::model::Reading, Intent, f64)> {
    thread
        .iter()
        .filter(|e| e.sender == Sender::Person && since.is_none_or(|t| e.received > t))
        .filter_map(|e| {
            let u = e.understanding.as_ref()?;
            let role = Role::parse(&u.role)?;
            let secondary: Vec<(&str, f64)> = u
                .secondary
                .iter()
                .map(|s| (s.intent.as_str(), s.confidence))
                .collect();
            let (d, s) = unsettled_decision(
                role,
                policy,
                &u.intent,
                u.confidence,
                &secondary,
                min_signal,
            )?;
            Some((e, u, d, s))
        })
        .max_by(|a, b| a.3.total_cmp(&b.3))
}

/// Hand the cases due for review to a human. Returns a line per case (what
/// was done, or would be with `dry_run`).
pub fn run(
    config: &Config,
    store: &Store,
    now: DateTime<Utc>,
    dry_run: bool,
) -> Result<Vec<String>, StoreError> {
    if !config.file.review.enabled {
        return Ok(Vec::new());
    }
    let records = store.case_records()?;
    let mut lines = Vec::new();
    for review in due(&records, now, &config.reply.trust, &config.file.review) {
        if let Some(line) = apply(store, &review, dry_run)? {
            lines.push(line);
        }
    }
    Ok(lines)
}

/// `run` for one case (a replayed thread's): the review it got, if any.
pub fn run_case(
    config: &Config,
    store: &Store,
    case: &crate::model::case::CaseId,
    now: DateTime<Utc>,
) -> Result<Option<Review>, StoreError> {
    if !config.file.review.enabled {
        return Ok(None);
    }
    let c = store.case(case)?;
    let record = (c, store.events(case)?, store.thread(case)?);
    let due = due(&[record], now, &config.reply.trust, &config.file.review);
    for review in due {
        if apply(store, &review, false)?.is_some() {
            return Ok(Some(review));
        }
    }
    Ok(None)
}

/// Move the case to a human, unless a reply moved it since it was read.
fn apply(store: &Store, review: &Review, dry_run: bool) -> Result<Option<String>, StoreError> {
    let note = review.note();
    if !dry_run {
        let cause = Cause::system(REVIEW);
        let moved = store.set_state_if(&review.case, CaseState::NeedsHuman, cause, &note)?;
        if moved.is_none() {
            return Ok(None);
        }
    }
    Ok(Some(format!(
        "case {}: needs a human: {note}",
        review.case.id
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::case::Event;
    use crate::model::thread::SecondaryReading;
    use crate::model::Reading;

    /// A reply of `role`, read as `intent` with one second reading, written
    /// `days` ago.
    fn reply(role: &str, intent: &str, second: (&str, f64), days: i64) -> ThreadEntry {
        let now = Utc::now();
        let mut e = ThreadEntry::sample("r@x", "dave@x.org", "words");
        e.received = now - Duration::days(days);
        e.date = Some(e.received);
        e.understanding = Some(Reading {
            intent: intent.into(),
            confidence: 0.6,
            evidence: "Let me look at the profile.".into(),
            secondary: vec![SecondaryReading {
                intent: second.0.into(),
                confidence: second.1,
            }],
            role: role.into(),
            effect: String::new(),
            dkim: None,
            notes: Vec::new(),
        });
        e
    }

    /// Who may decide as the default config says.
    fn policy() -> Policy {
        Config::load(None).unwrap().reply.trust
    }

    fn set_by_hand(days: i64) -> Event {
        Event {
            time: Utc::now() - Duration::days(days),
            cause: Cause::Cli {
                user: "ops".into(),
                reason: "looked".into(),
            },
            old: Some(CaseState::NeedsHuman),
            new: CaseState::Investigating,
            note: String::new(),
        }
    }

    /// Which cases go to a human, and with which decision.
    #[test]
    fn quiet_open_cases_with_an_unsettled_decision_go_to_a_human() {
        let wont = ("wont-fix", 0.3);
        /// What, the case's state, its thread and events, the decision due.
        type Row = (
            &'static str,
            CaseState,
            Vec<ThreadEntry>,
            Vec<Event>,
            Option<Intent>,
        );
        let table: Vec<Row> = vec![
            (
                "the author's second reading, quiet for 20 days",
                CaseState::Investigating,
                vec![reply("author", "investigating", wont, 20)],
                vec![],
                Some(Intent::WontFix),
            ),
            (
                "the reading itself decisive (unsettled, then set back by no one)",
                CaseState::Reported,
                vec![reply("maintainer", "not-a-regression", ("other", 0.3), 30)],
                vec![],
                Some(Intent::NotARegression),
            ),
            (
                "quiet for only 5 days",
                CaseState::Investigating,
                vec![reply("author", "investigating", wont, 5)],
                vec![],
                None,
            ),
            (
                "a weak second reading",
                CaseState::Investigating,
                vec![reply("author", "investigating", ("wont-fix", 0.15), 20)],
                vec![],
                None,
            ),
            (
                "a second reading that decides nothing",
                CaseState::Investigating,
                vec![reply("author", "investigating", ("question", 0.4), 20)],
                vec![],
                None,
            ),
            (
                "someone who may not decide",
                CaseState::Investigating,
                vec![reply("other", "investigating", wont, 20)],
                vec![],
                None,
            ),
            (
                "the robot's people: a test status",
                CaseState::Investigating,
                vec![reply("operator", "other", ("fix-posted", 0.5), 20)],
                vec![],
                None,
            ),
            (
                "a case already decided",
                CaseState::AwaitingFix,
                vec![reply("author", "fix-posted", wont, 20)],
                vec![],
                None,
            ),
            (
                "a human looked after the reply",
                CaseState::Investigating,
                vec![reply("author", "investigating", wont, 20)],
                vec![set_by_hand(10)],
                None,
            ),
            (
                "a human looked before the reply",
                CaseState::Investigating,
                vec![reply("author", "investigating", wont, 20)],
                vec![set_by_hand(25)],
                Some(Intent::WontFix),
            ),
            (
                "a later message keeps the thread alive",
                CaseState::Investigating,
                vec![
                    reply("author", "investigating", wont, 20),
                    reply("other", "thanks-only", ("other", 0.1), 2),
                ],
                vec![],
                None,
            ),
        ];
        let r = ReviewSection::default();
        for (what, state, thread, events, want) in table {
            let c = Case::sample("aaaaaaaaaaaa", state, Utc::now() - Duration::days(40));
            let due = due(&[(c, events, thread)], Utc::now(), &policy(), &r);
            assert_eq!(due.first().map(|d| d.decision), want, "{what}");
            assert!(due.len() <= 1, "{what}");
        }
    }

    /// The note says what perfbot read and the decision it may be, or that
    /// the reading itself was a decision left unsettled.
    #[test]
    fn the_note_says_what_was_read() {
        let now = Utc::now();
        let c = Case::sample("aaaaaaaaaaaa", CaseState::Investigating, now);
        let note = |e: ThreadEntry| {
            // A minute on: the reply is whole days and a minute old.
            let at = Utc::now() + Duration::minutes(1);
            let due = due(
                &[(c.clone(), vec![], vec![e])],
                at,
                &policy(),
                &Default::default(),
            );
            due[0].note()
        };
        let second = note(reply("author", "investigating", ("wont-fix", 0.3), 20));
        assert_eq!(
            second,
            "perhaps decided: dave@x.org wrote \"Let me look at the profile.\" in <r@x> \
             (read as investigating; it may be wont-fix, 0.30); the thread has been quiet for 20 days"
        );
        let itself = note(reply("maintainer", "not-a-regression", ("other", 0.3), 30));
        assert!(
            itself.contains("(read as not-a-regression at 0.60, unsettled)"),
            "{itself}"
        );
    }

    /// A Date in the future does not hide a thread's age, nor an old Date
    /// its arrival: a message counts from the earlier of the two.
    #[test]
    fn a_message_is_as_old_as_the_earlier_of_its_date_and_arrival() {
        let mut e = reply("author", "investigating", ("wont-fix", 0.3), 20);
        e.date = Some(Utc::now() + Duration::days(365));
        assert_eq!(e.written(), e.received);
        e.date = Some(e.received - Duration::days(1000));
        assert_eq!(e.written(), e.date.unwrap());
    }

    #[test]
    fn the_strongest_decisive_reading_counts() {
        /// The reading, its confidence, its second readings, what counts.
        type Row<'a> = (&'a str, f64, &'a [(&'a str, f64)], Option<(Intent, f64)>);
        let table: &[Row] = &[
            (
                "investigating",
                0.5,
                &[("wont-fix", 0.2)],
                Some((Intent::WontFix, 0.2)),
            ),
            (
                "investigating",
                0.5,
                &[("wont-fix", 0.25), ("fix-posted", 0.3)],
                Some((Intent::FixPosted, 0.3)),
            ),
            (
                "not-a-regression",
                0.45,
                &[],
                Some((Intent::NotARegression, 0.45)),
            ),
            ("investigating", 0.8, &[("question", 0.5)], None),
            ("investigating", 0.8, &[("duplicate", 0.19)], None),
        ];
        for (read, conf, secondary, want) in table {
            assert_eq!(
                unsettled_decision(Role::Author, &policy(), read, *conf, secondary, 0.2),
                *want,
                "{read} {secondary:?}"
            );
        }
    }
}
