//! The thread-status digest: what needs a human (and why, in whose words), what
//! is overdue, what was closed recently and on whose word; counts per state
//! and subsystem. A pure model built from case records; `flows::digest` reads
//! them from the store and renders or mails it, the dashboard shows it.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::model::case::{entered, waits_on_named, Case, CaseRecord, CaseState, Cause, Event};
use crate::model::ThreadEntry;
use crate::model::{counted, OutboxEntry, OutboxState, Sender};

/// Thresholds, from `[digest]` and `[reminders]`.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    /// awaiting-revert / awaiting-fix for longer than this is overdue.
    pub awaiting_days: i64,
    /// A report with no reply for longer than this is overdue.
    pub no_reply_days: i64,
}

/// Where the digest counts and groups a case whose commit names no
/// subsystem (a one-line listing shows "-").
pub const NO_SUBSYSTEM: &str = "(none)";

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CaseLine {
    pub id: String,
    pub state: CaseState,
    pub subject: String,
    pub commit: String,
    pub subsystem: String,
    pub headline: String,
    pub age_days: i64,
}

impl CaseLine {
    pub fn new(c: &Case, now: DateTime<Utc>) -> CaseLine {
        CaseLine {
            id: c.id.to_string(),
            state: c.state,
            subject: c.subject.clone(),
            commit: c.commit.chars().take(12).collect(),
            subsystem: c.subsystem.clone().unwrap_or_else(|| "-".into()),
            headline: format!("{} {}", c.headline_metric, c.headline_change),
            age_days: (now - c.created).num_days(),
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NeedsHuman {
    pub case: CaseLine,
    pub reason: String,
    /// The words that raised it (a question, a contested decision), if a mail did.
    pub quote: Option<String>,
    pub from: Option<String>,
    pub message_id: Option<String>,
    pub since: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DeadMail {
    pub case_id: String,
    pub message_id: String,
    pub kind: String,
    pub subject: String,
    pub error: String,
}

/// Mail perfbot kept but could not read: its quarantine and the messages
/// of archives it could not take out of them. A reply that decides a case
/// may be among them, so the digest shows them to the operators.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Unread {
    /// Newest first.
    pub quarantined: Vec<UnreadMessage>,
    /// Messages of archives not read out of them (missing or damaged
    /// objects); every run tries them again.
    pub unreadable: usize,
}

/// One quarantined message, as `quarantine list` names it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UnreadMessage {
    /// SHA-256 of its bytes, as `quarantine list --json` gives it.
    pub hash: String,
    pub time: DateTime<Utc>,
    pub message_id: Option<String>,
    pub reason: String,
    /// The case whose reply it was found to be (`Quarantined::case`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
}

impl UnreadMessage {
    pub fn of(q: &crate::model::Quarantined) -> UnreadMessage {
        UnreadMessage {
            hash: q.hash.clone(),
            time: q.time,
            message_id: q.message_id.clone(),
            reason: q.reason.clone(),
            case: q.case.as_ref().map(|c| c.to_string()),
        }
    }
}

impl Unread {
    pub fn new(quarantined: &[crate::model::Quarantined], unreadable: usize) -> Unread {
        let mut q: Vec<UnreadMessage> = quarantined.iter().map(UnreadMessage::of).collect();
        q.sort_by_key(|m| std::cmp::Reverse(m.time));
        Unread {
            quarantined: q,
            unreadable,
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Overdue {
    pub case: CaseLine,
    pub why: String,
    pub days: i64,
    /// Whom the case waits on, named as their own mail names them
    /// (`model::case::waits_on_named`, as under "Waiting on").
    pub waits_on: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Closed {
    pub case: CaseLine,
    pub when: DateTime<Utc>,
    /// Who decided: the replier's address, or the operator at the command line.
    pub who: String,
    pub evidence: String,
    pub message_id: Option<String>,
    /// For a fix or a revert: whether a follow-up comparison verified it.
    pub fix: Option<FixStatus>,
}

/// Whether numbers back a closure by a fix or a revert.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum FixStatus {
    Verified,
    Unverified,
}

impl FixStatus {
    /// `None` for closures that are not a fix or a revert.
    pub fn of(c: &Case) -> Option<FixStatus> {
        match c.state {
            CaseState::Fixed | CaseState::Reverted if c.verified.is_some() => {
                Some(FixStatus::Verified)
            }
            CaseState::Fixed | CaseState::Reverted => Some(FixStatus::Unverified),
            _ => None,
        }
    }
}

/// A fix whose closure a follow-up comparison verified, with the figures.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct VerifiedFix {
    pub case: CaseLine,
    pub figures: String,
    pub when: DateTime<Utc>,
}

/// An open case someone outside perfbot is to act on, and for how long.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Waiting {
    pub case: CaseLine,
    /// Days since the case entered its state.
    pub days: i64,
}

/// The open cases that wait on one person: the report's author, or whoever's
/// words put a case in its state. Their longest wait first.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WaitingOn {
    /// As the mails named them; `Name <addr>` when any of them had a name.
    pub who: String,
    /// Their bare address, lower-cased (the dashboard's `?waits_on=`).
    pub address: String,
    pub cases: Vec<Waiting>,
}

/// Whom the open cases wait on, person by person (one person under every
/// spelling of their address): the most cases first, then the longest wait.
/// Cases that wait on perfbot's own people (a decision to take, a question
/// to answer) are under "Needs a human" instead.
pub fn waiting_on(records: &[CaseRecord], now: DateTime<Utc>) -> Vec<WaitingOn> {
    let mut by_address: BTreeMap<String, WaitingOn> = BTreeMap::new();
    for (c, events, thread) in records {
        if c.state.is_closed() || c.state == CaseState::NeedsHuman || c.question.is_some() {
            continue;
        }
        let Some(who) = waits_on_named(c, events, thread) else {
            continue;
        };
        let since = entered(events, c.state).map_or(c.created, |e| e.time);
        let address = crate::model::ids::bare_address(&who);
        let w = by_address
            .entry(address.clone())
            .or_insert_with(|| WaitingOn {
                who: who.clone(),
                address,
                cases: Vec::new(),
            });
        if who.contains('<') && !w.who.contains('<') {
            w.who = who;
        }
        w.cases.push(Waiting {
            case: CaseLine::new(c, now),
            days: (now - since).num_days(),
        });
    }
    let mut people: Vec<WaitingOn> = by_address.into_values().collect();
    for p in &mut people {
        p.cases.sort_by_key(|w| std::cmp::Reverse(w.days));
    }
    let longest = |p: &WaitingOn| p.cases.first().map_or(0, |w| w.days);
    people.sort_by_key(|p| std::cmp::Reverse((p.cases.len(), longest(p))));
    people
}

/// How many people the digest names under "Waiting on", and how many of
/// each one's cases: a robot's reports mostly go unanswered, and a digest
/// that lists every one of them is not read (`cases list --waits-on` and the
/// dashboard's `?waits_on=` list them all).
pub const SHOWN_PEOPLE: usize = 20;
pub const SHOWN_CASES: usize = 3;
/// Quarantined messages the digest names; `quarantine list` has them all.
pub const SHOWN_UNREAD: usize = 10;

/// A person's entry as the digest shows it: their longest waits, and how
/// many more there are.
#[derive(Debug, Serialize)]
pub struct WaitingShown<'a> {
    pub who: &'a str,
    pub address: &'a str,
    pub count: usize,
    pub cases: &'a [Waiting],
    pub more: usize,
}

impl<'a> WaitingShown<'a> {
    fn of(w: &'a WaitingOn) -> WaitingShown<'a> {
        WaitingShown {
            who: &w.who,
            address: &w.address,
            count: w.cases.len(),
            cases: &w.cases[..w.cases.len().min(SHOWN_CASES)],
            more: w.cases.len().saturating_sub(SHOWN_CASES),
        }
    }
}

/// A robot report perfbot follows (adopted, `[track]`) and how its thread went.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Followed {
    pub case: CaseLine,
    /// People's messages in the thread.
    pub replies: usize,
    /// From the report to the first person's reply (by the mails' dates).
    pub first_reply_hours: Option<i64>,
    /// The same, as people read it ("5 h", "6 d": `hours_text`).
    pub first_reply: Option<String>,
    /// The words of the last reply that moved the case, and whose.
    pub evidence: Option<String>,
    pub who: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Digest {
    pub generated: DateTime<Utc>,
    pub since: DateTime<Utc>,
    pub total: usize,
    pub by_state: BTreeMap<String, usize>,
    /// subsystem → open cases.
    pub by_subsystem: BTreeMap<String, usize>,
    pub needs_human: Vec<NeedsHuman>,
    pub dead_mail: Vec<DeadMail>,
    pub overdue: Vec<Overdue>,
    pub recently_closed: Vec<Closed>,
    /// Robot reports of the period perfbot follows, by subsystem.
    pub followed: BTreeMap<String, Vec<Followed>>,
    /// Of those, the ones nobody answered.
    pub unanswered: Vec<CaseLine>,
    /// Replies operators settled in the period, and how many of them
    /// perfbot had read the same way.
    pub settled_by_humans: usize,
    pub agreed_with_humans: usize,
    /// Fixes verified by a follow-up comparison in the period.
    pub verified_fixes: Vec<VerifiedFix>,
    /// Every case closed by a fix or a revert that no comparison has
    /// verified yet.
    pub unverified_fixes: Vec<CaseLine>,
    /// Open cases whose report was read at a glance only (its body in a
    /// layout perfbot does not read, or cut short): followed, without a
    /// table; the operators' to look at.
    pub read_at_a_glance: Vec<ReadAtAGlance>,
    /// Whom the open cases wait on (`waiting_on`).
    pub waiting_on: Vec<WaitingOn>,
    /// Mail kept but not read (from the store: `flows::digest::from_store`).
    pub unread: Unread,
}

/// An open case whose report was read at a glance only, and why.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReadAtAGlance {
    pub case: CaseLine,
    pub why: String,
}

/// Who moved a case, their words and their mail's Message-ID. A mail's
/// sender is named as that mail of `thread` names them (`Dave Chinner
/// <david@fromorbit.com>`), as "Waiting on" names people.
fn cause_parts(c: &Cause, thread: &[ThreadEntry]) -> (String, Option<String>, Option<String>) {
    match c {
        Cause::Message {
            message_id,
            from,
            quote,
        } => (
            thread
                .iter()
                .find(|m| m.message_id == *message_id && !m.from_name.trim().is_empty())
                .map_or_else(
                    || from.clone(),
                    |m| crate::model::ids::mailbox(&m.from_name, &m.from),
                ),
            (!quote.is_empty()).then(|| quote.clone()),
            Some(message_id.to_string()),
        ),
        Cause::Dashboard { user, reason } => {
            (format!("{user} (dashboard)"), Some(reason.clone()), None)
        }
        Cause::Cli { user, reason } => {
            (format!("{user} (command line)"), Some(reason.clone()), None)
        }
        Cause::System { what } => (what.clone(), None, None),
        Cause::Report { input } => (format!("report {input}"), None, None),
    }
}

/// Build the digest. `records` gives each case with its events and thread.
pub fn build(
    records: &[CaseRecord],
    outbox: &[OutboxEntry],
    now: DateTime<Utc>,
    since: DateTime<Utc>,
    t: Thresholds,
) -> Digest {
    let mut d = Digest {
        generated: now,
        since,
        total: records.len(),
        by_state: BTreeMap::new(),
        by_subsystem: BTreeMap::new(),
        needs_human: Vec::new(),
        dead_mail: Vec::new(),
        overdue: Vec::new(),
        recently_closed: Vec::new(),
        followed: BTreeMap::new(),
        unanswered: Vec::new(),
        settled_by_humans: 0,
        agreed_with_humans: 0,
        verified_fixes: Vec::new(),
        unverified_fixes: Vec::new(),
        read_at_a_glance: Vec::new(),
        waiting_on: waiting_on(records, now),
        unread: Unread::default(),
    };
    for (c, events, thread) in records {
        d.add_case(c, events, thread, t);
    }
    for e in outbox.iter().filter(|e| e.state == OutboxState::Dead) {
        d.dead_mail.push(DeadMail {
            case_id: e.case_id.to_string(),
            message_id: e.message_id.to_string(),
            kind: e.kind.to_string(),
            subject: e.subject.clone(),
            error: e.last_error.clone().unwrap_or_default(),
        });
    }
    d.needs_human.sort_by_key(|n| n.since);
    d.overdue.sort_by_key(|o| std::cmp::Reverse(o.days));
    d.recently_closed.sort_by_key(|c| std::cmp::Reverse(c.when));
    d
}

impl Digest {
    /// Count one case and put it in every section it belongs to.
    fn add_case(&mut self, c: &Case, events: &[Event], thread: &[ThreadEntry], t: Thresholds) {
        let (now, since) = (self.generated, self.since);
        // Where the case is counted and grouped by subsystem.
        let subsystem = c.subsystem.as_deref().unwrap_or(NO_SUBSYSTEM);
        *self
            .by_state
            .entry(c.state.as_str().to_string())
            .or_default() += 1;
        if !c.state.is_closed() {
            *self.by_subsystem.entry(subsystem.to_string()).or_default() += 1;
        }
        let line = CaseLine::new(c, now);
        if let Some(why) = c.unread.as_ref().filter(|_| !c.state.is_closed()) {
            self.read_at_a_glance.push(ReadAtAGlance {
                case: line.clone(),
                why: why.clone(),
            });
        }
        match (FixStatus::of(c), &c.verified) {
            (Some(FixStatus::Verified), Some(v)) if v.at >= since => {
                self.verified_fixes.push(VerifiedFix {
                    case: line.clone(),
                    figures: v.figures.clone(),
                    when: v.at,
                })
            }
            (Some(FixStatus::Unverified), _) => self.unverified_fixes.push(line.clone()),
            _ => {}
        }
        if c.adopted && c.created >= since {
            let f = followed(c, events, thread, &line);
            if f.replies == 0 {
                self.unanswered.push(line.clone());
            }
            self.followed
                .entry(subsystem.to_string())
                .or_default()
                .push(f);
        }
        if let Some(q) = c
            .question
            .as_ref()
            .filter(|_| c.state != CaseState::NeedsHuman)
        {
            self.needs_human.push(NeedsHuman {
                case: line.clone(),
                reason: format!(
                    "a question for the robot's people, not answered yet; the case stays {}",
                    c.state
                ),
                quote: Some(q.quote.clone()),
                from: Some(q.from.clone()),
                message_id: Some(q.message_id.to_string()),
                since: q.asked,
            });
        }
        self.add_by_state(c, events, thread, line, t);
    }

    /// The section a case's state puts it in: with a human, overdue, or
    /// closed in the period.
    fn add_by_state(
        &mut self,
        c: &Case,
        events: &[Event],
        thread: &[ThreadEntry],
        line: CaseLine,
        t: Thresholds,
    ) {
        // The event that put the case in its state (none for a case never moved).
        let moved = entered(events, c.state);
        let since_state = moved.map_or(c.created, |e| e.time);
        match c.state {
            CaseState::NeedsHuman => {
                self.needs_human
                    .push(NeedsHuman::new(line, moved, thread, since_state))
            }
            s if s.is_closed() => {
                if let Some(e) = moved.filter(|e| e.time >= self.since) {
                    self.recently_closed.push(Closed::new(c, line, e, thread));
                }
            }
            _ => {
                let waited = self.generated - since_state;
                self.overdue
                    .extend(Overdue::of(c, events, thread, line, waited, t));
            }
        }
    }
}

impl NeedsHuman {
    /// A case in needs-human since `since`, put there by `moved` (a mail
    /// of `thread`, or an operator).
    fn new(
        case: CaseLine,
        moved: Option<&Event>,
        thread: &[ThreadEntry],
        since: DateTime<Utc>,
    ) -> NeedsHuman {
        let (who, quote, mid) = moved
            .map(|e| cause_parts(&e.cause, thread))
            .unwrap_or_default();
        NeedsHuman {
            case,
            reason: moved.map(|e| e.note.clone()).unwrap_or_default(),
            quote,
            from: (!who.is_empty()).then_some(who),
            message_id: mid,
            since,
        }
    }
}

impl Overdue {
    /// An open case that has `waited` in its state too long: a revert or
    /// fix not seen for `awaiting_days`, a report nobody answered for
    /// `no_reply_days`. None for any other case.
    fn of(
        c: &Case,
        events: &[Event],
        thread: &[ThreadEntry],
        case: CaseLine,
        waited: Duration,
        t: Thresholds,
    ) -> Option<Overdue> {
        let days = waited.num_days();
        let answered = || thread.iter().any(|m| m.sender == Sender::Person);
        let why = match c.state {
            CaseState::AwaitingRevert | CaseState::AwaitingFix
                if waited > Duration::days(t.awaiting_days) =>
            {
                format!("{} for {}", c.state, counted(days, "day", "days"))
            }
            CaseState::Reported | CaseState::Reopened
                if !answered() && waited > Duration::days(t.no_reply_days) =>
            {
                format!("no reply for {}", counted(days, "day", "days"))
            }
            _ => return None,
        };
        Some(Overdue {
            case,
            why,
            days,
            waits_on: waits_on_named(c, events, thread),
        })
    }
}

impl Closed {
    /// A case closed by `e` (a mail of `thread`, or an operator).
    fn new(c: &Case, case: CaseLine, e: &Event, thread: &[ThreadEntry]) -> Closed {
        let (who, quote, message_id) = cause_parts(&e.cause, thread);
        Closed {
            case,
            when: e.time,
            who,
            evidence: quote.unwrap_or_else(|| e.note.clone()),
            message_id,
            fix: FixStatus::of(c),
        }
    }
}

/// How a case's thread went: replies, the first one's delay, the words of
/// the last reply that moved the case (the digest's followed reports and the
/// dashboard's case list).
pub fn followed(
    c: &Case,
    events: &[Event],
    thread: &[crate::model::ThreadEntry],
    line: &CaseLine,
) -> Followed {
    let people: Vec<&crate::model::ThreadEntry> = thread
        .iter()
        .filter(|m| m.sender == Sender::Person)
        .collect();
    let first = people.iter().map(|m| m.date.unwrap_or(m.received)).min();
    let moved = events
        .iter()
        .rev()
        .find(|e| e.old != Some(e.new) && matches!(e.cause, Cause::Message { .. }));
    let (who, quote, _) = moved
        .map(|e| cause_parts(&e.cause, thread))
        .unwrap_or_default();
    let first_reply_hours = first.map(|f| (f - c.created).num_hours().max(0));
    Followed {
        case: line.clone(),
        replies: people.len(),
        first_reply_hours,
        first_reply: first_reply_hours.map(hours_text),
        evidence: quote,
        who: (!who.is_empty()).then_some(who),
    }
}

/// A delay in hours as people read it: `5 h` up to two days, then `3 d`.
pub fn hours_text(h: i64) -> String {
    if h < 48 {
        format!("{h} h")
    } else {
        format!("{} d", h / 24)
    }
}

/// `7d`, `36h`, `2w` → a duration.
pub fn parse_since(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (n, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit())?);
    let n: i64 = n.parse().ok()?;
    let d = match unit {
        "h" => Duration::try_hours(n),
        "d" => Duration::try_days(n),
        "w" => Duration::try_weeks(n),
        _ => None,
    }?;
    // Nothing perfbot keeps is older than its first report; a century is
    // "everything" and keeps date arithmetic far from overflowing.
    (d <= Duration::days(MAX_DAYS)).then_some(d)
}

/// The longest look back (or ahead) any period may have, in days.
pub const MAX_DAYS: i64 = 36_500;

/// The digest as template data (`templates/digest.hbs`, the dashboard's
/// page): its sections, its times formatted, each section's size counted.
#[derive(Debug, Serialize)]
pub struct View<'a> {
    pub generated: String,
    pub since: String,
    pub total: usize,
    pub by_state: &'a BTreeMap<String, usize>,
    pub by_subsystem: &'a BTreeMap<String, usize>,
    pub needs_human: &'a [NeedsHuman],
    pub dead_mail: &'a [DeadMail],
    pub overdue: &'a [Overdue],
    pub recently_closed: &'a [Closed],
    pub followed: &'a BTreeMap<String, Vec<Followed>>,
    pub unanswered: &'a [CaseLine],
    pub settled_by_humans: usize,
    pub agreed_with_humans: usize,
    pub verified_fixes: &'a [VerifiedFix],
    pub unverified_fixes: &'a [CaseLine],
    pub read_at_a_glance: &'a [ReadAtAGlance],
    /// The people the most cases wait on (`SHOWN_PEOPLE` of them), each with
    /// their longest waits (`SHOWN_CASES`).
    pub waiting_on: Vec<WaitingShown<'a>>,
    /// People left out of `waiting_on`.
    pub n_waiting_more_people: usize,
    /// Mail kept but not read: the newest quarantined messages.
    pub unread: UnreadView<'a>,
    pub n_needs_human: usize,
    pub n_dead_mail: usize,
    pub n_overdue: usize,
    pub n_closed: usize,
    pub n_followed: usize,
    pub n_unanswered: usize,
    pub n_verified: usize,
    pub n_unverified: usize,
    pub n_glanced: usize,
    /// People open cases wait on, and those cases.
    pub n_waiting_people: usize,
    pub n_waiting: usize,
    /// The mail's signature (the mail only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<&'a str>,
}

/// Mail kept but not read, as the digest shows it: the newest quarantined
/// messages (`SHOWN_UNREAD`), how many more, and the archive messages.
#[derive(Debug, Serialize)]
pub struct UnreadView<'a> {
    pub quarantined: Vec<UnreadShown<'a>>,
    /// Quarantined messages left out of `quarantined`.
    pub more: usize,
    pub unreadable: usize,
    /// Quarantined and archive messages not read, together.
    pub total: usize,
}

impl UnreadView<'_> {
    fn of(u: &Unread) -> UnreadView<'_> {
        UnreadView {
            quarantined: u
                .quarantined
                .iter()
                .take(SHOWN_UNREAD)
                .map(UnreadShown::of)
                .collect(),
            more: u.quarantined.len().saturating_sub(SHOWN_UNREAD),
            unreadable: u.unreadable,
            total: u.quarantined.len() + u.unreadable,
        }
    }
}

/// A quarantined message as the digest shows it.
#[derive(Debug, Serialize)]
pub struct UnreadShown<'a> {
    /// When it was quarantined, as the digest writes times.
    pub at: String,
    /// The start of its hash: enough for `quarantine retry` and `drop`.
    pub hash: &'a str,
    pub message_id: Option<&'a str>,
    pub reason: &'a str,
    /// The case it was found to answer, if any: a reply that may decide it.
    pub case: Option<&'a str>,
}

impl UnreadShown<'_> {
    /// `m` as the digest and the case page show it.
    pub fn of(m: &UnreadMessage) -> UnreadShown<'_> {
        UnreadShown {
            at: crate::model::shown_minute(m.time),
            hash: crate::model::thread::short_hash(&m.hash),
            message_id: m.message_id.as_deref(),
            reason: &m.reason,
            case: m.case.as_deref(),
        }
    }
}

pub fn view(d: &Digest) -> View<'_> {
    View {
        generated: crate::model::shown_minute(d.generated),
        since: crate::model::shown_minute(d.since),
        total: d.total,
        by_state: &d.by_state,
        by_subsystem: &d.by_subsystem,
        needs_human: &d.needs_human,
        dead_mail: &d.dead_mail,
        overdue: &d.overdue,
        recently_closed: &d.recently_closed,
        followed: &d.followed,
        unanswered: &d.unanswered,
        settled_by_humans: d.settled_by_humans,
        agreed_with_humans: d.agreed_with_humans,
        verified_fixes: &d.verified_fixes,
        unverified_fixes: &d.unverified_fixes,
        read_at_a_glance: &d.read_at_a_glance,
        waiting_on: d
            .waiting_on
            .iter()
            .take(SHOWN_PEOPLE)
            .map(WaitingShown::of)
            .collect(),
        n_waiting_more_people: d.waiting_on.len().saturating_sub(SHOWN_PEOPLE),
        unread: UnreadView::of(&d.unread),
        n_needs_human: d.needs_human.len(),
        n_dead_mail: d.dead_mail.len(),
        n_overdue: d.overdue.len(),
        n_closed: d.recently_closed.len(),
        n_followed: d.followed.values().map(Vec::len).sum(),
        n_unanswered: d.unanswered.len(),
        n_verified: d.verified_fixes.len(),
        n_unverified: d.unverified_fixes.len(),
        n_glanced: d.read_at_a_glance.len(),
        n_waiting_people: d.waiting_on.len(),
        n_waiting: d.waiting_on.iter().map(|p| p.cases.len()).sum(),
        signature: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MessageId;

    fn case(id: &str, state: CaseState, created: DateTime<Utc>) -> Case {
        let mut c = Case::sample(id, state, created);
        c.to = vec!["Author <author@example.org>".into()];
        c
    }

    fn ev(t: DateTime<Utc>, old: CaseState, new: CaseState, cause: Cause, note: &str) -> Event {
        Event {
            time: t,
            cause,
            old: Some(old),
            new,
            note: note.into(),
        }
    }

    #[test]
    fn sections() {
        let now = Utc::now();
        let d30 = now - Duration::days(30);
        let msg = |q: &str| Cause::Message {
            message_id: MessageId::parse("r@x").unwrap(),
            from: "david@fromorbit.com".into(),
            quote: q.into(),
        };
        // The promise's mail, which names its sender.
        let mut dave = ThreadEntry::sample("r@x", "david@fromorbit.com", "I'll revert");
        dave.from_name = "Dave Chinner".into();
        let records = vec![
            (
                case("aaaaaaaaaaaa", CaseState::NeedsHuman, d30),
                vec![ev(
                    now - Duration::days(1),
                    CaseState::Reported,
                    CaseState::NeedsHuman,
                    msg("where do I find the test?"),
                    "question from other",
                )],
                vec![dave.clone()],
            ),
            (
                case("bbbbbbbbbbbb", CaseState::AwaitingRevert, d30),
                vec![ev(
                    d30,
                    CaseState::Reported,
                    CaseState::AwaitingRevert,
                    msg("I'll revert"),
                    "will-revert",
                )],
                vec![dave.clone()],
            ),
            (
                case("cccccccccccc", CaseState::Reported, d30),
                vec![],
                vec![],
            ),
            (
                case("dddddddddddd", CaseState::NotARegression, d30),
                vec![ev(
                    now - Duration::days(2),
                    CaseState::Reported,
                    CaseState::NotARegression,
                    msg("This is not a regression."),
                    "not-a-regression",
                )],
                vec![],
            ),
            (
                case("eeeeeeeeeeee", CaseState::WontFix, d30),
                vec![ev(
                    now - Duration::days(20),
                    CaseState::Reported,
                    CaseState::WontFix,
                    msg("acceptable"),
                    "wont-fix",
                )],
                vec![],
            ),
        ];
        let d = build(
            &records,
            &[],
            now,
            now - Duration::days(7),
            Thresholds {
                awaiting_days: 14,
                no_reply_days: 7,
            },
        );
        assert_eq!(d.total, 5);
        assert_eq!(d.needs_human.len(), 1);
        assert_eq!(
            d.needs_human[0].quote.as_deref(),
            Some("where do I find the test?")
        );
        // Named as their mail names them; without the mail, its address.
        let named = "Dave Chinner <david@fromorbit.com>";
        assert_eq!(d.needs_human[0].from.as_deref(), Some(named));
        assert_eq!(d.overdue.len(), 2);
        // Each says whom it waits on: who promised the revert, as their
        // mail names them; the author for a report nobody answered.
        let waits: Vec<(&str, Option<&str>)> = d
            .overdue
            .iter()
            .map(|o| (o.why.as_str(), o.waits_on.as_deref()))
            .collect();
        let author = Some("Author <author@example.org>");
        assert_eq!(
            waits,
            [
                (
                    "awaiting-revert for 30 days",
                    Some("Dave Chinner <david@fromorbit.com>")
                ),
                ("no reply for 30 days", author),
            ]
        );
        assert_eq!(
            d.recently_closed.len(),
            1,
            "the wont-fix is older than a week"
        );
        assert_eq!(d.recently_closed[0].evidence, "This is not a regression.");
        assert_eq!(d.recently_closed[0].who, "david@fromorbit.com");
        assert_eq!(d.by_subsystem["xfs"], 3);
    }

    /// An open case whose report was read at a glance only is listed with
    /// the reason, for the operators; a closed one is not.
    #[test]
    fn reports_read_at_a_glance_are_listed_while_open() {
        let now = Utc::now();
        let d30 = now - Duration::days(30);
        let why = "00-report.eml: line 8: no \"testcase:\" line";
        let mut open = case("aaaaaaaaaaaa", CaseState::Investigating, d30);
        open.unread = Some(why.into());
        let mut closed = case("bbbbbbbbbbbb", CaseState::NotARegression, d30);
        closed.unread = Some(why.into());
        let records = vec![(open, vec![], vec![]), (closed, vec![], vec![])];
        let t = Thresholds {
            awaiting_days: 14,
            no_reply_days: 7,
        };
        let d = build(&records, &[], now, now - Duration::days(7), t);
        assert_eq!(d.read_at_a_glance.len(), 1);
        assert_eq!(d.read_at_a_glance[0].case.id, "aaaaaaaaaaaa");
        assert_eq!(d.read_at_a_glance[0].why, why);
        assert_eq!(view(&d).n_glanced, 1);
    }

    /// A question asked of the robot's people in a case that holds a
    /// decision is listed for a human with the decision it leaves standing;
    /// in a case already with a human it is not listed twice.
    #[test]
    fn an_open_question_is_listed_beside_its_decision() {
        let now = Utc::now();
        let d30 = now - Duration::days(30);
        let question = |mid: &str| crate::model::case::Question {
            message_id: MessageId::parse(mid).unwrap(),
            from: "Alexey <legion@kernel.org>".into(),
            quote: "Do you have a place where I can see if the patch was tested?".into(),
            asked: now - Duration::days(2),
        };
        let mut waiting = case("aaaaaaaaaaaa", CaseState::AwaitingFix, d30);
        waiting.question = Some(question("q1@x"));
        let mut human = case("bbbbbbbbbbbb", CaseState::NeedsHuman, d30);
        human.question = Some(question("q2@x"));
        let records = vec![(waiting, vec![], vec![]), (human, vec![], vec![])];
        let t = Thresholds {
            awaiting_days: 60,
            no_reply_days: 7,
        };
        let d = build(&records, &[], now, now - Duration::days(7), t);
        assert_eq!(d.needs_human.len(), 2, "{:?}", d.needs_human);
        let n = d
            .needs_human
            .iter()
            .find(|n| n.case.id == "aaaaaaaaaaaa")
            .unwrap();
        assert_eq!(n.case.state, CaseState::AwaitingFix);
        assert!(
            n.reason.contains("the case stays awaiting-fix"),
            "{}",
            n.reason
        );
        assert_eq!(n.message_id.as_deref(), Some("q1@x"));
        assert_eq!(n.since, now - Duration::days(2));
    }

    /// The templates' data holds every section of the digest, under the
    /// digest's own names (a section added to `Digest` and not to `View`
    /// would be missing from every template), with times in words.
    #[test]
    fn the_view_holds_every_section() {
        let now = Utc::now();
        let t = Thresholds {
            awaiting_days: 14,
            no_reply_days: 7,
        };
        let d = build(&[], &[], now, now - Duration::days(7), t);
        let digest = serde_json::to_value(&d).unwrap();
        let view = serde_json::to_value(view(&d)).unwrap();
        for key in digest.as_object().unwrap().keys() {
            assert!(view.get(key).is_some(), "{key} is not in the view");
        }
        assert!(view["generated"].as_str().unwrap().ends_with(" UTC"));
        assert_eq!(view["n_closed"], 0);
        assert!(view.get("signature").is_none());
    }

    #[test]
    fn since() {
        assert_eq!(parse_since("7d"), Some(Duration::days(7)));
        assert_eq!(parse_since("36h"), Some(Duration::hours(36)));
        assert_eq!(parse_since("2w"), Some(Duration::weeks(2)));
        assert_eq!(parse_since("99999999999999d"), None);
        assert_eq!(parse_since("9999999999999999999999d"), None);
        assert_eq!(parse_since("7"), None);
        assert_eq!(parse_since("d"), None);
    }

    #[test]
    fn followed_robot_reports_by_subsystem_and_the_unanswered() {
        let now = Utc::now();
        let created = now - Duration::days(3);
        let mut answered = case("aaaaaaaaaaaa", CaseState::NotARegression, created);
        answered.adopted = true;
        let mut silent = case("bbbbbbbbbbbb", CaseState::Reported, created);
        silent.adopted = true;
        let ours = case("cccccccccccc", CaseState::Reported, created);
        let reply = crate::model::ThreadEntry {
            from_name: "Dave".into(),
            date: Some(created + Duration::hours(5)),
            received: now,
            seq: 1,
            ..crate::model::ThreadEntry::sample(
                "r@x",
                "david@fromorbit.com",
                "This is not a regression.",
            )
        };
        let closing = Event {
            time: created + Duration::hours(5),
            cause: Cause::Message {
                message_id: MessageId::parse("r@x").unwrap(),
                from: "david@fromorbit.com".into(),
                quote: "This is not a regression.".into(),
            },
            old: Some(CaseState::Reported),
            new: CaseState::NotARegression,
            note: "not-a-regression".into(),
        };
        let records = vec![
            (answered, vec![closing], vec![reply]),
            (silent, vec![], vec![]),
            (ours, vec![], vec![]),
        ];
        let t = Thresholds {
            awaiting_days: 14,
            no_reply_days: 7,
        };
        let d = build(&records, &[], now, now - Duration::days(7), t);
        // Perfbot's own report is not among the followed ones.
        let followed: Vec<&Followed> = d.followed.values().flatten().collect();
        assert_eq!(followed.len(), 2);
        let a = followed
            .iter()
            .find(|f| f.case.id == "aaaaaaaaaaaa")
            .unwrap();
        assert_eq!((a.replies, a.first_reply_hours), (1, Some(5)));
        assert_eq!(a.evidence.as_deref(), Some("This is not a regression."));
        // Named as the mail that moved it names its sender.
        assert_eq!(a.who.as_deref(), Some("Dave <david@fromorbit.com>"));
        assert_eq!(d.followed.keys().collect::<Vec<_>>(), ["xfs"]);
        assert_eq!(
            d.unanswered
                .iter()
                .map(|c| c.id.as_str())
                .collect::<Vec<_>>(),
            ["bbbbbbbbbbbb"]
        );
        // Older than the period: not listed.
        let d = build(&records, &[], now, now - Duration::days(1), t);
        assert!(d.followed.is_empty() && d.unanswered.is_empty());
    }

    /// Each open case is listed once under whom it waits on: one person
    /// under every spelling of their address, named from their mails, the
    /// most cases first and each person's longest wait first. Closed cases,
    /// cases with a human, open questions and unsent reports are not.
    #[test]
    fn open_cases_are_listed_under_whom_they_wait_on() {
        let now = Utc::now();
        let said = |from: &str, new: CaseState, days: i64| {
            let cause = Cause::Message {
                message_id: MessageId::parse("r@x").unwrap(),
                from: from.into(),
                quote: "words".into(),
            };
            ev(
                now - Duration::days(days),
                CaseState::Reported,
                new,
                cause,
                "",
            )
        };
        let ago = |days: i64| now - Duration::days(days);
        let mut dev_mail = ThreadEntry::sample("m@x", "dev@example.net", "I'll look.");
        dev_mail.from_name = "Dev Eloper".into();
        let mut asked = case("ffffffffffff", CaseState::Reported, ago(9));
        asked.question = Some(crate::model::case::Question {
            message_id: MessageId::parse("q@x").unwrap(),
            from: "dev@example.net".into(),
            quote: "Where is the test?".into(),
            asked: ago(1),
        });
        let records = vec![
            (
                case("aaaaaaaaaaaa", CaseState::Reported, ago(10)),
                vec![],
                vec![],
            ),
            (
                case("bbbbbbbbbbbb", CaseState::AwaitingFix, ago(20)),
                vec![said("AUTHOR@example.org", CaseState::AwaitingFix, 3)],
                vec![],
            ),
            (
                // The report spelt them "dev"; their own mails name them.
                Case {
                    cc: vec!["dev <dev@example.net>".into()],
                    ..case("cccccccccccc", CaseState::Investigating, ago(30))
                },
                vec![said("dev@example.net", CaseState::Investigating, 12)],
                vec![dev_mail],
            ),
            (
                case("dddddddddddd", CaseState::NotARegression, ago(9)),
                vec![],
                vec![],
            ),
            (
                case("eeeeeeeeeeee", CaseState::NeedsHuman, ago(9)),
                vec![],
                vec![],
            ),
            (asked, vec![], vec![]),
            (
                case("111111111111", CaseState::Queued, ago(9)),
                vec![],
                vec![],
            ),
        ];
        // (who, address, [(case, days)]) per person.
        type Person = (String, String, Vec<(String, i64)>);
        let got: Vec<Person> = waiting_on(&records, now)
            .into_iter()
            .map(|p| {
                let cases = p.cases.into_iter().map(|w| (w.case.id, w.days)).collect();
                (p.who, p.address, cases)
            })
            .collect();
        let want = [
            (
                "Author <author@example.org>",
                "author@example.org",
                vec![("aaaaaaaaaaaa", 10), ("bbbbbbbbbbbb", 3)],
            ),
            (
                "Dev Eloper <dev@example.net>",
                "dev@example.net",
                vec![("cccccccccccc", 12)],
            ),
        ]
        .map(|(who, address, cases)| {
            let cases = cases
                .into_iter()
                .map(|(id, d)| (id.to_string(), d))
                .collect();
            (who.to_string(), address.to_string(), cases)
        });
        assert_eq!(got, want);
        let d = build(
            &records,
            &[],
            now,
            ago(7),
            Thresholds {
                awaiting_days: 14,
                no_reply_days: 7,
            },
        );
        let v = view(&d);
        assert_eq!((v.n_waiting_people, v.n_waiting), (2, 3));
    }
}
