//! How cases are shown: stable JSON for scripts and text for people.

use serde::Serialize;

use crate::digest::UnreadMessage;
use crate::model::case::{Case, CaseId, CaseState, Cause, Event, Question, ReportKind};
use crate::model::{MessageId, OutboxEntry, OutboxKind, Quarantined, Sender, ThreadEntry};

/// Whose mail a line of a case's timeline is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// perfbot's own outbox.
    Perfbot,
    Person,
    /// Automatic mail: recorded, never acted on.
    Bot,
    /// perfbot's own mail, back from a list: recorded, never acted on.
    Own,
}

impl From<Sender> for Origin {
    fn from(s: Sender) -> Origin {
        match s {
            Sender::Person => Origin::Person,
            Sender::Bot => Origin::Bot,
            Sender::Own => Origin::Own,
        }
    }
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Perfbot => "perfbot",
            Origin::Person => "person",
            Origin::Bot => "bot",
            Origin::Own => "own",
        }
    }
}

/// One line of a case's thread timeline: perfbot's mail and everyone else's.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TimelineItem {
    pub time: chrono::DateTime<chrono::Utc>,
    pub message_id: String,
    pub from: String,
    pub sender: Origin,
    pub subject: String,
    /// The sender's own words (replies) or the mail's kind and state (ours).
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub understanding: Option<crate::model::Reading>,
    /// A size limit cut the message: what was not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limited: Option<String>,
    /// Patches attached to it, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<String>,
}

/// The thread in time order: perfbot's outbox mail and the recorded replies.
/// What became of one of perfbot's mails, and why when it did not go: the
/// server's last words, or what holds it.
fn delivery_words(e: &OutboxEntry) -> String {
    use crate::model::OutboxState;
    let why = match e.state {
        OutboxState::Held => e.held_because.as_deref(),
        OutboxState::Failed | OutboxState::Dead | OutboxState::Queued => e.last_error.as_deref(),
        OutboxState::Sent | OutboxState::Sending => None,
    };
    let mut words = match why {
        Some(why) => format!("{} ({}: {why})", e.kind, e.state.as_str()),
        None => format!("{} ({})", e.kind, e.state.as_str()),
    };
    if e.fate_unknown {
        words.push_str("; the server may have taken it before it fell silent");
    }
    words
}

pub fn timeline(outbox: &[OutboxEntry], thread: &[ThreadEntry]) -> Vec<TimelineItem> {
    let mut items: Vec<TimelineItem> = outbox
        .iter()
        .map(|e| TimelineItem {
            time: e.sent_at.unwrap_or(e.queued_at),
            message_id: e.message_id.to_string(),
            from: "perfbot".into(),
            sender: Origin::Perfbot,
            subject: e.subject.clone(),
            text: delivery_words(e),
            understanding: None,
            limited: None,
            patches: Vec::new(),
        })
        .chain(thread.iter().map(|t| TimelineItem {
            time: t.date.unwrap_or(t.received),
            message_id: t.message_id.to_string(),
            from: crate::model::ids::display_mailbox(&t.from_name, &t.from),
            sender: t.sender.into(),
            subject: t.subject.clone(),
            text: t.text.clone(),
            understanding: t.understanding.clone(),
            limited: t.limited.clone(),
            patches: t.patches.clone(),
        }))
        .collect();
    // The report leads: a reply cannot come before it, even where the
    // report's Date was given (a backfilled or adopted report, sent late).
    let report = outbox
        .iter()
        .find(|e| e.kind == OutboxKind::Report)
        .map(|e| e.message_id.to_string());
    items.sort_by_key(|i| (Some(&i.message_id) != report.as_ref(), i.time));
    items
}

/// Which cases a list shows: the dashboard's filter and `cases list`'s
/// options, checked once into typed values.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct CaseFilter {
    pub state: Option<CaseState>,
    pub subsystem: Option<String>,
    /// Created at most this many days ago.
    pub age_days: Option<i64>,
    /// In needs-human, or keeping its decision beside an open question to
    /// the robot's people (which needs a human as much).
    pub needs_human: bool,
    /// Part of a list address in To or Cc, lowercased.
    pub list: Option<String>,
    /// Created in this year.
    pub year: Option<i32>,
    /// Part of whom the case waits on (`model::case::waits_on`: an
    /// address, a name as the report or their own mail gives it,
    /// "operators"), lowercased.
    pub waits_on: Option<String>,
}

impl CaseFilter {
    pub fn admits(&self, c: &Case, now: chrono::DateTime<chrono::Utc>) -> bool {
        self.state.is_none_or(|s| c.state == s)
            && self
                .subsystem
                .as_deref()
                .is_none_or(|s| c.subsystem.as_deref() == Some(s))
            && self
                .age_days
                .is_none_or(|d| now - c.created <= chrono::Duration::days(d))
            && (!self.needs_human || c.state == CaseState::NeedsHuman || c.question.is_some())
            && self.list.as_deref().is_none_or(|l| {
                c.to.iter()
                    .chain(&c.cc)
                    .any(|a| a.to_ascii_lowercase().contains(l))
            })
            && self
                .year
                .is_none_or(|y| chrono::Datelike::year(&c.created) == y)
    }

    /// Whether whom the case waits on, by its history `events` and its
    /// `thread`, is what the filter names (always, when it names nobody):
    /// as the report's To or Cc spells them, or as their own mail does
    /// (the name the digest shows).
    pub fn admits_waiting(&self, c: &Case, events: &[Event], thread: &[ThreadEntry]) -> bool {
        use crate::model::case::{waits_on, waits_on_named};
        self.waits_on.as_deref().is_none_or(|w| {
            let names = |on: Option<String>| on.is_some_and(|on| on.to_lowercase().contains(w));
            names(waits_on(c, events)) || names(waits_on_named(c, events, thread))
        })
    }

    /// The cases of `all` the filter admits at `now`. A case's history
    /// and thread (`history`) are read only when the filter asks whom it
    /// waits on.
    pub fn select<E>(
        &self,
        all: Vec<Case>,
        now: chrono::DateTime<chrono::Utc>,
        history: impl Fn(&CaseId) -> Result<(Vec<Event>, Vec<ThreadEntry>), E>,
    ) -> Result<Vec<Case>, E> {
        let mut out = Vec::new();
        for c in all.into_iter().filter(|c| self.admits(c, now)) {
            let admitted = self.waits_on.is_none() || {
                let (events, thread) = history(&c.id)?;
                self.admits_waiting(&c, &events, &thread)
            };
            if admitted {
                out.push(c);
            }
        }
        Ok(out)
    }

    /// Nothing left out.
    pub fn is_empty(&self) -> bool {
        *self == CaseFilter::default()
    }
}

/// The order a list of cases is shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseOrder {
    /// The first reported first (as the store keeps them).
    Oldest,
    /// The last reported first.
    Newest,
    /// The last changed first.
    Updated,
    /// By state, in `CaseState::ALL`'s order; the first reported first
    /// within one.
    State,
}

impl CaseOrder {
    pub const ALL: [CaseOrder; 4] = [
        CaseOrder::Oldest,
        CaseOrder::Newest,
        CaseOrder::Updated,
        CaseOrder::State,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CaseOrder::Oldest => "oldest",
            CaseOrder::Newest => "newest",
            CaseOrder::Updated => "updated",
            CaseOrder::State => "state",
        }
    }

    pub fn parse(s: &str) -> Option<CaseOrder> {
        CaseOrder::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// Every order's name, for a message saying what is taken.
    pub fn names() -> String {
        CaseOrder::ALL.map(CaseOrder::as_str).join(", ")
    }

    /// Put `cases` in this order (ties by id, so a page never shifts).
    pub fn sort(self, cases: &mut [Case]) {
        let rank = |s: CaseState| CaseState::ALL.iter().position(|x| *x == s);
        match self {
            CaseOrder::Oldest => cases.sort_by(|a, b| (a.created, &a.id).cmp(&(b.created, &b.id))),
            CaseOrder::Newest => cases.sort_by(|a, b| (b.created, &b.id).cmp(&(a.created, &a.id))),
            CaseOrder::Updated => cases.sort_by(|a, b| (b.updated, &b.id).cmp(&(a.updated, &a.id))),
            CaseOrder::State => cases.sort_by(|a, b| {
                (rank(a.state), a.created, &a.id).cmp(&(rank(b.state), b.created, &b.id))
            }),
        }
    }
}

/// One case in `cases list --json` and `/api/cases` (a stable, documented
/// shape: its fields in this order).
#[derive(Debug, Serialize)]
pub struct CaseSummary<'a> {
    pub id: &'a CaseId,
    pub state: CaseState,
    pub subject: &'a str,
    pub message_id: &'a MessageId,
    pub commit: &'a str,
    pub headline_metric: &'a str,
    pub headline_change: &'a str,
    pub verdict: &'a ReportKind,
    pub testcase: &'a str,
    pub created: String,
    pub updated: String,
    /// A question asked of the robot's people, not answered yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<&'a Question>,
    /// Whom an open case waits on, as `model::case::waits_on_named` names
    /// them. None when not asked (`From<&Case>`), or for a closed case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waits_on: Option<String>,
    /// Replies of the case that could not be read (in the quarantine; one
    /// may decide the case). Left out when none, or not asked.
    #[serde(skip_serializing_if = "is_zero")]
    pub unread: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl<'a> CaseSummary<'a> {
    /// The summaries of `list` as lists show them: each naming whom its
    /// case waits on by its history (`history`: events and thread, read
    /// only for a case that can wait on anyone), and how many of its
    /// replies are among the `quarantined`.
    pub fn listed<E>(
        list: &'a [Case],
        history: impl Fn(&CaseId) -> Result<(Vec<Event>, Vec<ThreadEntry>), E>,
        quarantined: &[Quarantined],
    ) -> Result<Vec<CaseSummary<'a>>, E> {
        let unread = Quarantined::by_case(quarantined);
        list.iter()
            .map(|c| {
                let mut s = CaseSummary::from(c);
                if crate::model::case::may_wait(c) {
                    let (events, thread) = history(&c.id)?;
                    s.waits_on = crate::model::case::waits_on_named(c, &events, &thread);
                }
                s.unread = unread.get(&c.id).copied().unwrap_or(0);
                Ok(s)
            })
            .collect()
    }
}

impl<'a> From<&'a Case> for CaseSummary<'a> {
    fn from(c: &'a Case) -> CaseSummary<'a> {
        CaseSummary {
            id: &c.id,
            state: c.state,
            subject: &c.subject,
            message_id: &c.message_id,
            commit: &c.commit,
            headline_metric: &c.headline_metric,
            headline_change: &c.headline_change,
            verdict: &c.verdict,
            testcase: &c.testcase,
            created: c.created.to_rfc3339(),
            updated: c.updated.to_rfc3339(),
            question: c.question.as_ref(),
            waits_on: None,
            unread: 0,
        }
    }
}

/// One case in `cases show --json`: the summary, its thread and history.
#[derive(Debug, Serialize)]
pub struct CaseDetail<'a> {
    #[serde(flatten)]
    pub summary: CaseSummary<'a>,
    pub thread: &'a [TimelineItem],
    pub to: &'a [String],
    pub cc: &'a [String],
    pub commit_subject: &'a str,
    pub subsystem: Option<&'a str>,
    pub events: &'a [Event],
    /// Replies found to belong to the case that could not be read: in the
    /// quarantine, and perhaps a decision.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub quarantined: &'a [UnreadMessage],
}

impl<'a> CaseDetail<'a> {
    /// `waits_on` as `model::case::waits_on_named` names them;
    /// `quarantined`, the case's (`of_case`).
    pub fn new(
        c: &'a Case,
        events: &'a [Event],
        thread: &'a [TimelineItem],
        waits_on: Option<String>,
        quarantined: &'a [UnreadMessage],
    ) -> CaseDetail<'a> {
        CaseDetail {
            summary: CaseSummary {
                waits_on,
                unread: quarantined.len(),
                ..c.into()
            },
            thread,
            to: &c.to,
            cc: &c.cc,
            commit_subject: &c.commit_subject,
            subsystem: c.subsystem.as_deref(),
            events,
            quarantined,
        }
    }
}

/// One line of `cases list`'s text: id, state, subject, whom the case
/// waits on (or that a question to the robot's people is open), and its
/// replies that could not be read.
pub fn list_line(s: &CaseSummary) -> String {
    let mut tail = match (s.question, &s.waits_on) {
        (Some(_), _) => "  [a question to the robot's people is open]".to_string(),
        (None, Some(who)) => format!("  [waits on {who}]"),
        (None, None) => String::new(),
    };
    match s.unread {
        0 => {}
        1 => tail.push_str("  [a reply could not be read]"),
        n => tail.push_str(&format!("  [{n} replies could not be read]")),
    }
    format!("{}  {:<16}  {}{tail}\n", s.id, s.state, s.subject)
}

/// The quarantined messages found to belong to case `id`: replies that
/// could not be read, and may carry a decision. As the digest gives them.
pub fn of_case(all: &[Quarantined], id: &CaseId) -> Vec<UnreadMessage> {
    all.iter()
        .filter(|q| q.case.as_ref() == Some(id))
        .map(UnreadMessage::of)
        .collect()
}

/// Why an event happened, on one line (the dashboard's history).
pub fn cause_line(c: &Cause) -> String {
    match c {
        Cause::Message {
            message_id,
            from,
            quote,
        } if !quote.is_empty() => format!("<{message_id}> from {from}: \"{quote}\""),
        Cause::Message {
            message_id, from, ..
        } => format!("<{message_id}> from {from}"),
        other => cause_text(other),
    }
}

fn cause_text(c: &Cause) -> String {
    match c {
        Cause::Report { input } => format!("report from {input}"),
        Cause::Cli { user, reason } => format!("{user} (command line): {reason}"),
        Cause::Dashboard { user, reason } => format!("{user} (dashboard): {reason}"),
        Cause::Message {
            message_id,
            from,
            quote,
        } => {
            let q: String = quote.lines().map(|l| format!("\n      > {l}")).collect();
            format!("mail <{message_id}> from {from}{q}")
        }
        Cause::System { what } => what.clone(),
    }
}

/// `cases show`'s text; `waits_on` as `model::case::waits_on_named` names
/// them; `quarantined`, the case's replies that could not be read.
pub fn show_text(
    c: &Case,
    events: &[Event],
    timeline: &[TimelineItem],
    waits_on: Option<&str>,
    quarantined: &[UnreadMessage],
) -> String {
    let mut out = case_head(c);
    if let Some(who) = waits_on {
        out.push_str(&format!("waits on:   {who}\n"));
    }
    for q in quarantined {
        let id = q.message_id.as_deref().unwrap_or("no Message-ID");
        let hash = crate::model::thread::short_hash(&q.hash);
        out.push_str(&format!(
            "not read:   <{id}> (quarantined {hash}, `perfbot quarantine retry`): {}\n",
            q.reason
        ));
    }
    if !timeline.is_empty() {
        out.push_str("thread:\n");
        for t in timeline {
            out.push_str(&thread_item(t));
        }
    }
    out.push_str("history:\n");
    for e in events {
        out.push_str(&history_line(e));
    }
    out
}

/// The case's own lines, above its thread and history.
fn case_head(c: &Case) -> String {
    let mut out = String::new();
    out.push_str(&format!("case {}  [{}]\n", c.id, c.state));
    out.push_str(&format!("subject:    {}\n", c.subject));
    out.push_str(&format!("message-id: <{}>\n", c.message_id));
    out.push_str(&format!(
        "commit:     {} (\"{}\")\n",
        c.commit, c.commit_subject
    ));
    out.push_str(&format!(
        "headline:   {} {} {}\n",
        c.headline_metric, c.headline_change, c.verdict
    ));
    if let Some(why) = &c.unread {
        // The case follows the thread, but its table was never read.
        out.push_str(&format!(
            "read:       at a glance only (Subject, sentence, headers): {why}\n"
        ));
    }
    out.push_str(&format!("to:         {}\n", c.to.join(", ")));
    out.push_str(&format!("cc:         {}\n", c.cc.join(", ")));
    if !c.robot_people.is_empty() {
        // Whose replies are read as the robot's (operators'), not as a
        // maintainer's: worth seeing when a reading looks odd.
        out.push_str(&format!("robot's:    {}\n", c.robot_people.join(", ")));
    }
    if let Some(q) = &c.question {
        out.push_str(&format!(
            "question:   {} asked the robot's people, not answered yet ({}, <{}>):\n            \"{}\"\n",
            q.from,
            q.asked.format("%Y-%m-%d"),
            q.message_id,
            q.quote
        ));
    }
    out
}

/// One mail of the case's thread: when, from whom, how it was read, and
/// the first lines of a person's words.
fn thread_item(t: &TimelineItem) -> String {
    let mut out = format!(
        "  {}  {}  <{}>\n      {}\n",
        crate::model::shown_minute(t.time),
        t.from,
        t.message_id,
        t.subject
    );
    if let Some(u) = &t.understanding {
        out.push_str(&format!(
            "      understood: {} ({})\n",
            u.intent, u.confidence
        ));
    }
    if let Some(cut) = &t.limited {
        out.push_str(&format!("      (read in part: {cut})\n"));
    }
    if !t.patches.is_empty() {
        out.push_str(&format!("      (attached: {})\n", t.patches.join(", ")));
    }
    if t.sender != Origin::Perfbot {
        for l in t.text.lines().take(12) {
            out.push_str(&format!("      | {l}\n"));
        }
        if t.sender != Origin::Person {
            out.push_str(&format!(
                "      ({} mail: recorded, not acted on)\n",
                t.sender.as_str()
            ));
        }
    } else {
        out.push_str(&format!("      {}\n", t.text));
    }
    out
}

/// One event of the case's history: its move and why.
fn history_line(e: &Event) -> String {
    let change = match e.old {
        Some(o) if o != e.new => format!("{o} -> {}", e.new),
        Some(_) => format!("{} (unchanged)", e.new),
        None => format!("-> {}", e.new),
    };
    format!(
        "  {}  {:<32} {}: {}\n",
        crate::model::shown_time(e.time),
        change,
        e.note,
        cause_text(&e.cause)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cause reads on one line with who and why: an operator's reason
    /// on the dashboard as much as at the command line.
    #[test]
    fn every_cause_has_its_line() {
        let id = MessageId::parse("r@x").unwrap();
        let table = [
            (
                Cause::Message {
                    message_id: id.clone(),
                    from: "a@x".into(),
                    quote: "Not a regression.".into(),
                },
                "<r@x> from a@x: \"Not a regression.\"",
            ),
            (
                Cause::Message {
                    message_id: id,
                    from: "a@x".into(),
                    quote: String::new(),
                },
                "<r@x> from a@x",
            ),
            (
                Cause::Cli {
                    user: "bob".into(),
                    reason: "seen".into(),
                },
                "bob (command line): seen",
            ),
            (
                Cause::Dashboard {
                    user: "alice".into(),
                    reason: "too noisy".into(),
                },
                "alice (dashboard): too noisy",
            ),
            (
                Cause::Report {
                    input: "x.json".into(),
                },
                "report from x.json",
            ),
            (Cause::system("reminder"), "reminder"),
        ];
        for (cause, want) in table {
            assert_eq!(cause_line(&cause), want, "{cause:?}");
        }
    }

    /// The report leads its thread even where its Date was given and a
    /// reply is dated before it was sent (a backfilled report); the rest
    /// follow in time order.
    #[test]
    fn a_mail_that_did_not_go_says_why() {
        use crate::model::OutboxState;
        let e = |state, error: Option<&str>, held: Option<&str>, unknown| {
            let mut e = OutboxEntry::queued(
                MessageId::parse("r@p").unwrap(),
                CaseId::system(),
                OutboxKind::Report,
                "s".into(),
                Vec::new(),
                chrono::Utc::now(),
            );
            e.state = state;
            e.last_error = error.map(str::to_string);
            e.held_because = held.map(str::to_string);
            e.fate_unknown = unknown;
            e
        };
        for (entry, want) in [
            (e(OutboxState::Sent, None, None, false), "report (sent)"),
            (e(OutboxState::Queued, None, None, false), "report (queued)"),
            (
                e(OutboxState::Failed, Some("temporary failure: refused"), None, false),
                "report (failed: temporary failure: refused)",
            ),
            (
                e(OutboxState::Failed, Some("temporary failure: the server went silent"), None, true),
                "report (failed: temporary failure: the server went silent); the server may have taken it before it fell silent",
            ),
            (
                e(OutboxState::Dead, Some("permanent failure: 550"), None, false),
                "report (dead: permanent failure: 550)",
            ),
            (
                e(OutboxState::Held, None, Some("within the noise"), false),
                "report (held: within the noise)",
            ),
            (e(OutboxState::Held, None, None, false), "report (held)"),
        ] {
            assert_eq!(delivery_words(&entry), want);
        }
    }

    #[test]
    fn the_report_leads_its_thread() {
        let at = |d: &str| chrono::DateTime::parse_from_rfc3339(d).unwrap().to_utc();
        let ours = |id: &str, kind: OutboxKind, sent: &str| {
            let mut e = OutboxEntry::queued(
                MessageId::parse(id).unwrap(),
                CaseId::system(),
                kind,
                "s".into(),
                Vec::new(),
                at(sent),
            );
            e.sent_at = Some(at(sent));
            e
        };
        let reply = |id: &str, date: &str| {
            let mut t = ThreadEntry::sample(id, "a@x", "words");
            t.date = Some(at(date));
            t
        };
        let outbox = [
            ours("ping@p", OutboxKind::Reminder, "2026-12-10T00:00:00Z"),
            ours("report@p", OutboxKind::Report, "2026-12-01T00:00:00Z"),
        ];
        let thread = [
            reply("late@x", "2026-12-11T00:00:00Z"),
            reply("early@x", "2022-04-14T01:00:00Z"),
        ];
        let order: Vec<String> = timeline(&outbox, &thread)
            .into_iter()
            .map(|i| i.message_id)
            .collect();
        assert_eq!(order, ["report@p", "early@x", "ping@p", "late@x"]);
    }

    /// Each part of a filter leaves out the cases it does not name; all
    /// parts must hold.
    #[test]
    fn a_case_filter_admits_what_it_names() {
        let at = |d: &str| chrono::DateTime::parse_from_rfc3339(d).unwrap().to_utc();
        let now = at("2026-12-04T00:00:00Z");
        let mut c = Case::sample(
            "aaaaaaaaaaaa",
            CaseState::AwaitingFix,
            at("2026-11-30T00:00:00Z"),
        );
        c.cc = vec!["Linux-MM <linux-mm@kvack.org>".into()];
        c.subsystem = Some("mm".into());
        let f = CaseFilter::default;
        let with = |edit: fn(&mut CaseFilter)| {
            let mut f = f();
            edit(&mut f);
            f
        };
        let table = [
            (f(), true),
            (with(|f| f.state = Some(CaseState::AwaitingFix)), true),
            (with(|f| f.state = Some(CaseState::Fixed)), false),
            (with(|f| f.subsystem = Some("mm".into())), true),
            (with(|f| f.subsystem = Some("xfs".into())), false),
            (with(|f| f.age_days = Some(4)), true),
            (with(|f| f.age_days = Some(3)), false),
            (with(|f| f.list = Some("linux-mm".into())), true),
            (with(|f| f.list = Some("linux-xfs".into())), false),
            (with(|f| f.year = Some(2026)), true),
            (with(|f| f.year = Some(2025)), false),
            (with(|f| f.needs_human = true), false),
            (
                with(|f| {
                    f.year = Some(2026);
                    f.subsystem = Some("xfs".into());
                }),
                false,
            ),
        ];
        for (filter, want) in table {
            assert_eq!(filter.admits(&c, now), want, "{filter:?}");
        }
        // A question to the robot's people needs a human as much.
        c.question = Some(Question::sample("Could you retest?", now));
        assert!(with(|f| f.needs_human = true).admits(&c, now));
    }

    /// Whom a case waits on is read from its history, and only when the
    /// filter asks: the words that put it in its state, else its author.
    #[test]
    fn a_case_filter_selects_whom_cases_wait_on() {
        let now = chrono::Utc::now();
        let mut promised = Case::sample("aaaaaaaaaaaa", CaseState::AwaitingRevert, now);
        promised.to = vec!["Dave <dave@x>".into()];
        let mut unanswered = Case::sample("bbbbbbbbbbbb", CaseState::Reported, now);
        unanswered.to = vec!["Dave <dave@x>".into()];
        let closed = Case::sample("cccccccccccc", CaseState::Fixed, now);
        let revert = Event {
            time: now,
            cause: Cause::Message {
                message_id: MessageId::parse("r@x").unwrap(),
                from: "Eric <eric@x>".into(),
                quote: "I'll revert it.".into(),
            },
            old: Some(CaseState::Reported),
            new: CaseState::AwaitingRevert,
            note: String::new(),
        };
        // Dave's own mail in the unanswered case's thread names him fully.
        let mut named = ThreadEntry::sample("d@x", "dave@x", "words");
        named.from_name = "David Chinner".into();
        let history = |id: &CaseId| -> Result<_, ()> {
            Ok(if *id == promised.id {
                (vec![revert.clone()], vec![])
            } else if *id == unanswered.id {
                (vec![], vec![named.clone()])
            } else {
                (vec![], vec![])
            })
        };
        let all = || vec![promised.clone(), unanswered.clone(), closed.clone()];
        let table: &[(Option<&str>, &[&str])] = &[
            (None, &["aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"]),
            (Some("eric@x"), &["aaaaaaaaaaaa"]),
            (Some("dave"), &["bbbbbbbbbbbb"]),
            (Some("dave <"), &["bbbbbbbbbbbb"]),
            (Some("david chinner"), &["bbbbbbbbbbbb"]),
            (Some("nobody"), &[]),
        ];
        for (who, want) in table {
            let filter = CaseFilter {
                waits_on: who.map(str::to_string),
                ..CaseFilter::default()
            };
            let got = filter.select(all(), now, history).unwrap();
            let got: Vec<&str> = got.iter().map(|c| c.id.as_str()).collect();
            assert_eq!(&got, want, "waits on {who:?}");
        }
        // Histories are read only when the filter needs them.
        let unread = |_: &CaseId| -> Result<(Vec<Event>, Vec<ThreadEntry>), ()> { Err(()) };
        assert_eq!(
            CaseFilter::default()
                .select(all(), now, unread)
                .unwrap()
                .len(),
            3
        );
    }

    /// Each order puts the same cases where it says, ties by id.
    #[test]
    fn case_orders_sort_as_they_say() {
        use chrono::TimeZone;
        let at = |d: u32| chrono::Utc.with_ymd_and_hms(2026, 1, d, 0, 0, 0).unwrap();
        let case = |id: &str, state, created, updated| {
            let mut c = Case::sample(id, state, at(created));
            c.updated = at(updated);
            c
        };
        let cases = [
            case("aaaaaaaaaaaa", CaseState::Fixed, 1, 9),
            case("bbbbbbbbbbbb", CaseState::Reported, 3, 4),
            case("cccccccccccc", CaseState::Reported, 2, 5),
            case("dddddddddddd", CaseState::Reported, 2, 2),
        ];
        let table = [
            (CaseOrder::Oldest, "a c d b"),
            // The exact reverse, ties too.
            (CaseOrder::Newest, "b d c a"),
            (CaseOrder::Updated, "a c b d"),
            (CaseOrder::State, "c d b a"),
        ];
        for (order, want) in table {
            let mut got = cases.to_vec();
            order.sort(&mut got);
            let got: Vec<&str> = got.iter().map(|c| &c.id.as_str()[..1]).collect();
            assert_eq!(got.join(" "), want, "{order:?}");
            assert_eq!(CaseOrder::parse(order.as_str()), Some(order));
        }
        assert_eq!(CaseOrder::parse("bogus"), None);
    }

    /// `cases list --json` keeps its documented shape and order.
    #[test]
    fn a_case_summary_keeps_its_fields() {
        let c = Case::sample("aaaaaaaaaaaa", CaseState::Reported, chrono::Utc::now());
        let v = serde_json::to_value(CaseSummary::from(&c)).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "id",
                "state",
                "subject",
                "message_id",
                "commit",
                "headline_metric",
                "headline_change",
                "verdict",
                "testcase",
                "created",
                "updated"
            ]
        );
        let detail = CaseDetail::new(&c, &[], &[], None, &[]);
        let v = serde_json::to_value(detail).unwrap();
        assert_eq!(v["id"], "aaaaaaaaaaaa");
        assert_eq!(v["to"], serde_json::json!(c.to));
    }

    /// `cases list` (text and JSON) says whom each open case waits on, and
    /// reads no history for a closed case; and how many of each case's
    /// replies could not be read.
    #[test]
    fn the_case_list_says_whom_each_case_waits_on() {
        let now = chrono::Utc::now();
        let mut open = Case::sample("aaaaaaaaaaaa", CaseState::Reported, now);
        open.to = vec!["goralbaris <goralbaris@gmail.com>".into()];
        let mut asked = Case::sample("bbbbbbbbbbbb", CaseState::Investigating, now);
        asked.question = Some(Question::sample("Could you retest?", now));
        let closed = Case::sample("cccccccccccc", CaseState::Fixed, now);
        let list = [open, asked, closed];
        let named = ThreadEntry {
            from_name: "Baris Goral".into(),
            ..ThreadEntry::sample("r@x", "goralbaris@gmail.com", "words")
        };
        let history = |id: &CaseId| match id.as_str() {
            "cccccccccccc" => Err(format!("read the history of closed case {id}")),
            _ => Ok((vec![], vec![named.clone()])),
        };
        let q = |hash: &str, case: &str| {
            let case = CaseId::parse(case).unwrap();
            Quarantined::sample(hash, &format!("{hash}@x"), "parts", now, Some(&case))
        };
        let unread = [
            q("ab", "aaaaaaaaaaaa"),
            q("cd", "cccccccccccc"),
            q("ef", "cccccccccccc"),
        ];
        let rows = CaseSummary::listed(&list, history, &unread).unwrap();
        let got: Vec<String> = rows.iter().map(list_line).collect();
        let s = |i: usize| &list[i].subject;
        assert_eq!(
            got,
            [
                format!("aaaaaaaaaaaa  reported          {}  [waits on Baris Goral <goralbaris@gmail.com>]  [a reply could not be read]\n", s(0)),
                format!("bbbbbbbbbbbb  investigating     {}  [a question to the robot's people is open]\n", s(1)),
                format!("cccccccccccc  fixed             {}  [2 replies could not be read]\n", s(2)),
            ]
        );
        let v = serde_json::to_value(&rows).unwrap();
        assert_eq!(v[0]["waits_on"], "Baris Goral <goralbaris@gmail.com>");
        assert!(v[2].get("waits_on").is_none(), "{v}");
        assert_eq!((&v[0]["unread"], &v[2]["unread"]), (&1.into(), &2.into()));
        assert!(v[1].get("unread").is_none(), "{v}");
    }

    /// `cases show` (text and JSON) says whom a case waits on as it is
    /// given them (`model::case::waits_on_named`).
    #[test]
    fn show_says_whom_a_case_waits_on() {
        let now = chrono::Utc::now();
        let c = Case::sample("aaaaaaaaaaaa", CaseState::Reported, now);
        let who = Some("Baris Goral <goralbaris@gmail.com>");
        let text = show_text(&c, &[], &[], who, &[]);
        assert!(
            text.contains("\nwaits on:   Baris Goral <goralbaris@gmail.com>\n"),
            "{text}"
        );
        assert!(!show_text(&c, &[], &[], None, &[]).contains("waits on:"));
        let detail = CaseDetail::new(&c, &[], &[], who.map(str::to_string), &[]);
        let v = serde_json::to_value(detail).unwrap();
        assert_eq!(v["waits_on"], "Baris Goral <goralbaris@gmail.com>");
        assert!(v.get("quarantined").is_none(), "{v}");
    }

    /// A reply of the case that could not be read is named with the case,
    /// and the quarantine's other messages are not.
    #[test]
    fn show_names_the_cases_replies_that_could_not_be_read() {
        let now = chrono::Utc::now();
        let c = Case::sample("aaaaaaaaaaaa", CaseState::Reported, now);
        let q = |hash: &str, case: Option<&str>| {
            let case = case.map(|c| CaseId::parse(c).unwrap());
            let why = "more than 200 MIME parts";
            Quarantined::sample(hash, &format!("{hash}@x"), why, now, case.as_ref())
        };
        let all = vec![
            q("ab", Some("aaaaaaaaaaaa")),
            q("cd", Some("bbbbbbbbbbbb")),
            q("ef", None),
        ];
        let mine = of_case(&all, &c.id);
        assert_eq!(mine.len(), 1);
        let text = show_text(&c, &[], &[], None, &mine);
        let want = "\nnot read:   <ab@x> (quarantined abababababababab, `perfbot quarantine retry`): more than 200 MIME parts\n";
        assert!(text.contains(want), "{text}");
        let v = serde_json::to_value(CaseDetail::new(&c, &[], &[], None, &mine)).unwrap();
        assert_eq!(v["quarantined"][0]["message_id"], "ab@x");
        assert_eq!(v["unread"], 1, "as the list counts them");
    }
}
