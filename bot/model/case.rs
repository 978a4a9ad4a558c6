//! Cases: one reported change each, with a state and an event history.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::ids::MessageId;

/// Short, stable id of a case: the first 12 hex digits of its key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CaseId(String);

impl CaseId {
    pub fn from_key(key: &str) -> CaseId {
        CaseId(key.chars().take(12).collect())
    }
    pub fn parse(s: &str) -> Option<CaseId> {
        let s = s.trim().to_ascii_lowercase();
        (s.len() == 12 && s.chars().all(|c| c.is_ascii_hexdigit())).then_some(CaseId(s))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id under which perfbot files mail that is about no case (digests).
    pub fn system() -> CaseId {
        CaseId("000000000000".into())
    }
}

impl fmt::Display for CaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseState {
    Queued,
    Reported,
    Investigating,
    AwaitingRevert,
    AwaitingFix,
    NeedsHuman,
    NotARegression,
    Reverted,
    Fixed,
    WontFix,
    Duplicate,
    Stale,
    Reopened,
}

impl CaseState {
    pub const ALL: [CaseState; 13] = [
        CaseState::Queued,
        CaseState::Reported,
        CaseState::Investigating,
        CaseState::AwaitingRevert,
        CaseState::AwaitingFix,
        CaseState::NeedsHuman,
        CaseState::NotARegression,
        CaseState::Reverted,
        CaseState::Fixed,
        CaseState::WontFix,
        CaseState::Duplicate,
        CaseState::Stale,
        CaseState::Reopened,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CaseState::Queued => "queued",
            CaseState::Reported => "reported",
            CaseState::Investigating => "investigating",
            CaseState::AwaitingRevert => "awaiting-revert",
            CaseState::AwaitingFix => "awaiting-fix",
            CaseState::NeedsHuman => "needs-human",
            CaseState::NotARegression => "not-a-regression",
            CaseState::Reverted => "reverted",
            CaseState::Fixed => "fixed",
            CaseState::WontFix => "wont-fix",
            CaseState::Duplicate => "duplicate",
            CaseState::Stale => "stale",
            CaseState::Reopened => "reopened",
        }
    }

    pub fn parse(s: &str) -> Option<CaseState> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }

    pub fn is_closed(self) -> bool {
        matches!(
            self,
            CaseState::NotARegression
                | CaseState::Reverted
                | CaseState::Fixed
                | CaseState::WontFix
                | CaseState::Duplicate
                | CaseState::Stale
        )
    }
}

impl fmt::Display for CaseState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`: a width given (`{:<16}` in `cases list`) is honoured.
        f.pad(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    pub id: CaseId,
    /// Full hex key (tree, commit, test, parameters, machine, headline).
    pub key: String,
    pub state: CaseState,
    pub subject: String,
    pub message_id: MessageId,
    pub commit: String,
    pub commit_subject: String,
    pub testcase: String,
    pub headline_metric: String,
    pub headline_change: String,
    /// What the report said the change is (`regression`, `improvement`).
    pub verdict: ReportKind,
    pub subsystem: Option<String>,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    /// The report's own References (the patch thread it answers), oldest first.
    #[serde(default)]
    pub references: Vec<MessageId>,
    /// The commit's author and committer (who may decide by free text).
    #[serde(default)]
    pub author: Option<String>,
    #[serde(default)]
    pub committer: Option<String>,
    /// Bisect samples, for plots.
    #[serde(default)]
    pub bisect: Vec<super::bisect::BisectSeries>,
    /// Opened from another robot's report seen on a list (`[track]`), not
    /// from a report perfbot sent: never sent again, reminded only when
    /// `track.remind` says so.
    #[serde(default)]
    pub adopted: bool,
    /// The base commit the report compared against (for matching a
    /// follow-up comparison of a fix).
    #[serde(default)]
    pub base: String,
    /// The headline metric's samples on the base, where the input had raw
    /// samples: what a fix must come back to.
    #[serde(default)]
    pub baseline: Vec<f64>,
    /// A follow-up comparison showed the fix brought the metric back.
    #[serde(default)]
    pub verified: Option<Verified>,
    /// Who posted a patch in the thread (addresses): they speak for the
    /// fix they posted (see `Role::Contributor`).
    #[serde(default)]
    pub contributors: Vec<String>,
    /// Who moved the case into its present state, when a mail did (its
    /// From): theirs to overturn while it closes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_by: Option<String>,
    /// The mail whose words moved the case into its present state, or
    /// said so again since (`store::thread`'s `newest_word`), and when it
    /// was written: a reply written before it but read after it (archives
    /// read list by list, a late delivery) does not move the case back.
    /// Such a reply that sends the case to a human leaves this mail (and
    /// `moved_by`) as they were: it is still the newest word.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_by_mail: Option<MovedByMail>,
    /// A question asked of the robot's people while the case held a
    /// decision, not answered yet: the decision stands, and a human owes
    /// the answer. Answered by the robot's people writing in the thread, or
    /// by a human settling the case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<Question>,
    /// Who speaks for the robot whose report an adopted case is: the
    /// report's sender and the people the robot copies on its reports
    /// (`reply::policy::people`). Their replies are read as its operators'.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub robot_people: Vec<String>,
    /// Why an adopted report was read at a glance only (its Subject, its
    /// sentence, its headers): its body could not be read in full. The case
    /// follows the report's thread without its table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread: Option<String>,
    pub created: DateTime<Utc>,
    pub updated: DateTime<Utc>,
}

/// The mail that moved a case, and when it was written
/// (`ThreadEntry::written`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MovedByMail {
    pub message_id: MessageId,
    pub written: DateTime<Utc>,
    /// The message it answers (`In-Reply-To`): written before it, whatever
    /// the Dates say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<MessageId>,
    /// The state it moved the case from.
    pub from: CaseState,
    /// Who moved the case into `from`, when a mail did (its From): a reply
    /// read late is weighed against `from` as that mover left it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_by: Option<String>,
    /// What the mail said, when it moved the case to a human where an
    /// older decision read before it would have left the case settled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsettled: Option<Unsettled>,
}

/// What a mail that sent its case to a human said, where an older decision
/// read before it would have left the case settled: such a decision, read
/// after it (an archive read list by list, a late delivery), takes the case
/// as reading them in order would have (`reply::policy`'s `overtaken`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unsettled {
    /// A question for the robot's people: beside a decision, it stays open
    /// (`Case::question`).
    Asked(Question),
    /// A decision its sender may not make alone, or read unsurely: beside
    /// the same decision, it is that decision said again.
    Meant(CaseState),
}

/// What a report called its change: a regression, an improvement, or the
/// word an input forced for a metric without a direction (`change`). Kept
/// as its word, as reports and the database always spelled it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum ReportKind {
    Regression,
    Improvement,
    Other(String),
}

impl ReportKind {
    pub fn parse(word: &str) -> ReportKind {
        match word {
            "regression" => ReportKind::Regression,
            "improvement" => ReportKind::Improvement,
            w => ReportKind::Other(w.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            ReportKind::Regression => "regression",
            ReportKind::Improvement => "improvement",
            ReportKind::Other(w) => w,
        }
    }
}

impl From<String> for ReportKind {
    fn from(s: String) -> Self {
        ReportKind::parse(&s)
    }
}

impl From<ReportKind> for String {
    fn from(k: ReportKind) -> Self {
        k.as_str().to_string()
    }
}

impl fmt::Display for ReportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A fix's closure checked by numbers: a later comparison of a commit with
/// the fix showed the headline metric back within its noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verified {
    pub at: DateTime<Utc>,
    /// The follow-up comparison input.
    pub input: String,
    /// The commit tested (with the fix).
    pub commit: String,
    /// The figures, for people.
    pub figures: String,
}

/// A question for the robot's people, asked in the thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub message_id: MessageId,
    /// Who asked (the From header).
    pub from: String,
    /// The question, in the sender's words.
    pub quote: String,
    /// When it was asked (the mail's arrival).
    pub asked: DateTime<Utc>,
}

impl Question {
    /// A question from `a@x` asked at `asked` (`<q@x>`), for tests.
    #[cfg(test)]
    pub fn sample(quote: &str, asked: DateTime<Utc>) -> Question {
        Question {
            message_id: MessageId::parse("q@x").expect("valid id"),
            from: "a@x".into(),
            quote: quote.into(),
            asked,
        }
    }
}

/// Why something happened to a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Cause {
    /// A report was created from an input file.
    Report { input: String },
    /// A human at the command line.
    Cli { user: String, reason: String },
    /// An operator on the dashboard (who they said they are; the token
    /// proved they may).
    Dashboard { user: String, reason: String },
    /// A mail in the thread, with the words that decided.
    Message {
        message_id: MessageId,
        from: String,
        quote: String,
    },
    /// perfbot itself (delivery, schedule).
    System { what: String },
}

impl Cause {
    /// perfbot itself did it, for `what` reason.
    pub fn system(what: impl Into<String>) -> Cause {
        Cause::System { what: what.into() }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub time: DateTime<Utc>,
    pub cause: Cause,
    pub old: Option<CaseState>,
    pub new: CaseState,
    pub note: String,
}

impl Case {
    /// A case in `state` with nothing known of it but its id, key and
    /// report's Message-ID, made `at`: what `eval-replies` judges replies
    /// against, and the ground of `sample`.
    pub fn blank(
        id: CaseId,
        key: String,
        message_id: MessageId,
        state: CaseState,
        at: DateTime<Utc>,
    ) -> Case {
        Case {
            id,
            key,
            state,
            subject: String::new(),
            message_id,
            commit: String::new(),
            commit_subject: String::new(),
            testcase: String::new(),
            headline_metric: String::new(),
            headline_change: String::new(),
            verdict: ReportKind::Regression,
            subsystem: None,
            to: vec![],
            cc: vec![],
            references: vec![],
            author: None,
            committer: None,
            bisect: vec![],
            adopted: false,
            base: String::new(),
            baseline: Vec::new(),
            verified: None,
            contributors: Vec::new(),
            moved_by: None,
            moved_by_mail: None,
            question: None,
            robot_people: Vec::new(),
            unread: None,
            created: at,
            updated: at,
        }
    }

    /// A reported xfs fio case, for tests of what reads cases.
    #[cfg(test)]
    pub fn sample(id: &str, state: CaseState, created: DateTime<Utc>) -> Case {
        let message_id = MessageId::parse(&format!("{id}@perfbot")).expect("valid id");
        let case_id = CaseId::parse(id).expect("12 hex digits");
        Case {
            subject: format!("[xfs] {id}: fio.write_iops -9% regression"),
            commit: "0b02c8c0d75a738c98c35f02efb36217c170d78c".into(),
            commit_subject: "xfs: x".into(),
            testcase: "fio-basic".into(),
            headline_metric: "fio.write_iops".into(),
            headline_change: "-9.0%".into(),
            subsystem: Some("xfs".into()),
            ..Case::blank(case_id, id.repeat(5), message_id, state, created)
        }
    }
}

/// The event that last moved a case into `state` (not a note while in it).
pub fn entered(events: &[Event], state: CaseState) -> Option<&Event> {
    events
        .iter()
        .rev()
        .find(|e| e.new == state && e.old != Some(state))
}

/// The mail whose words put the case in `state` (its Message-ID and
/// sender), when a mail did rather than a human or perfbot itself.
pub fn put_by(events: &[Event], state: CaseState) -> Option<(&MessageId, &str)> {
    match &entered(events, state)?.cause {
        Cause::Message {
            message_id, from, ..
        } => Some((message_id, from.as_str())),
        _ => None,
    }
}

/// Whom an open case waits on, in words: the robot's people while a
/// question to them is open; the operators when it needs a human; whoever
/// put it in its state by their words (their fix, revert or look into it),
/// else the commit's author (the report's first To). None for a case
/// closed, stale, or not sent yet. A speaker the report addressed is named
/// as its To or Cc names them.
pub fn waits_on(c: &Case, events: &[Event]) -> Option<String> {
    if c.question.is_some() {
        return Some("the robot's people (a question to them is open)".into());
    }
    let author = || c.to.first().cloned();
    let speaker = || put_by(events, c.state).map(|(_, from)| addressed_as(c, from));
    match c.state {
        CaseState::NeedsHuman => Some("perfbot's operators".into()),
        CaseState::AwaitingFix | CaseState::AwaitingRevert | CaseState::Investigating => {
            speaker().or_else(author)
        }
        CaseState::Reported | CaseState::Reopened => author(),
        _ => None,
    }
}

/// Whether a case can wait on anyone (`waits_on` can name someone): so a
/// list need not read the history of a closed case.
pub fn may_wait(c: &Case) -> bool {
    use CaseState::*;
    c.question.is_some()
        || matches!(
            c.state,
            NeedsHuman | AwaitingFix | AwaitingRevert | Investigating | Reported | Reopened
        )
}

/// `from` as the report's To or Cc wrote it (`Name <addr>`) when it is
/// there, else as it is.
fn addressed_as(c: &Case, from: &str) -> String {
    let bare = super::ids::bare_address(from);
    c.to.iter()
        .chain(&c.cc)
        .find(|a| super::ids::bare_address(a) == bare)
        .cloned()
        .unwrap_or_else(|| from.to_string())
}

/// Whom an open case waits on (`waits_on`), named as their own mail in
/// `thread` names them: `Baris Goral <…>` where the report had only
/// `goralbaris <…>`. What the digest, `cases show` and the case page say.
pub fn waits_on_named(
    c: &Case,
    events: &[Event],
    thread: &[super::thread::ThreadEntry],
) -> Option<String> {
    waits_on(c, events).map(|who| named_in(who, thread))
}

/// `who` with the name their latest named mail in `thread` gave
/// (`Dave Chinner <david@fromorbit.com>`): a person's mail, not a robot's
/// from the same address; anyone without one as they are.
fn named_in(who: String, thread: &[super::thread::ThreadEntry]) -> String {
    let address = super::ids::bare_address(&who);
    let own = thread.iter().rev().find(|m| {
        m.sender == super::Sender::Person
            && !m.from_name.trim().is_empty()
            && m.from.eq_ignore_ascii_case(&address)
    });
    match own {
        Some(m) => super::ids::mailbox(&m.from_name, &m.from),
        None => who,
    }
}

/// A case with its history and its thread: what the digest and the
/// reminders look at.
pub type CaseRecord = (Case, Vec<Event>, Vec<super::thread::ThreadEntry>);

#[cfg(test)]
mod tests {
    use super::ReportKind;
    use super::*;

    /// Whom each state waits on: the words that put it there, else the
    /// author; the operators, the robot's people, or nobody.
    #[test]
    fn an_open_case_waits_on_someone() {
        let now = chrono::Utc::now();
        let said = |from: &str, new: CaseState| Event {
            time: now,
            cause: Cause::Message {
                message_id: MessageId::parse("r@x").unwrap(),
                from: from.into(),
                quote: "words".into(),
            },
            old: Some(CaseState::Reported),
            new,
            note: String::new(),
        };
        let by_hand = |new: CaseState| Event {
            cause: Cause::Cli {
                user: "ops".into(),
                reason: "seen".into(),
            },
            ..said("", new)
        };
        let author = "Dave <dave@x>";
        let table: &[(CaseState, Vec<Event>, Option<&str>)] = &[
            (CaseState::Reported, vec![], Some(author)),
            (CaseState::Reopened, vec![], Some(author)),
            (
                CaseState::AwaitingFix,
                vec![said("eric@x", CaseState::AwaitingFix)],
                Some("eric@x"),
            ),
            (
                CaseState::AwaitingRevert,
                vec![by_hand(CaseState::AwaitingRevert)],
                Some(author),
            ),
            (
                CaseState::Investigating,
                vec![said("jan@x", CaseState::Investigating)],
                Some("jan@x"),
            ),
            // Someone the report was sent to, as its To or Cc names them.
            (
                CaseState::AwaitingFix,
                vec![said("Ted@X", CaseState::AwaitingFix)],
                Some("Ted Tso <ted@x>"),
            ),
            (CaseState::NeedsHuman, vec![], Some("perfbot's operators")),
            (CaseState::Queued, vec![], None),
            (CaseState::Fixed, vec![], None),
            (CaseState::Stale, vec![], None),
        ];
        for (state, events, want) in table {
            let mut c = Case::sample("aaaaaaaaaaaa", *state, now);
            c.to = vec![author.into()];
            c.cc = vec!["list@x".into(), "Ted Tso <ted@x>".into()];
            assert_eq!(waits_on(&c, events).as_deref(), *want, "{state}");
        }
        let mut c = Case::sample("aaaaaaaaaaaa", CaseState::AwaitingFix, now);
        c.question = Some(Question::sample("Could you retest?", now));
        assert_eq!(
            waits_on(&c, &[]).as_deref(),
            Some("the robot's people (a question to them is open)")
        );
    }

    /// `may_wait` is false only where `waits_on` names nobody, whatever
    /// the history: a list may skip reading that case's history.
    #[test]
    fn a_case_that_may_not_wait_waits_on_nobody() {
        let now = chrono::Utc::now();
        let said = |new: CaseState| Event {
            time: now,
            cause: Cause::Message {
                message_id: MessageId::parse("r@x").unwrap(),
                from: "eric@x".into(),
                quote: "words".into(),
            },
            old: Some(CaseState::Reported),
            new,
            note: String::new(),
        };
        for state in CaseState::ALL {
            let mut c = Case::sample("aaaaaaaaaaaa", state, now);
            c.to = vec!["dave@x".into()];
            let named = waits_on(&c, &[]).is_some() || waits_on(&c, &[said(state)]).is_some();
            assert_eq!(may_wait(&c), named, "{state}");
            c.question = Some(Question::sample("Could you retest?", now));
            assert!(may_wait(&c) && waits_on(&c, &[]).is_some(), "{state}");
        }
    }

    #[test]
    fn report_kinds_keep_their_words() {
        for (word, kind) in [
            ("regression", ReportKind::Regression),
            ("improvement", ReportKind::Improvement),
            ("change", ReportKind::Other("change".into())),
        ] {
            let json = format!("\"{word}\"");
            assert_eq!(serde_json::from_str::<ReportKind>(&json).unwrap(), kind);
            assert_eq!(serde_json::to_string(&kind).unwrap(), json);
        }
    }

    /// Whom a case waits on is named as their own mail names them, where
    /// they wrote in the thread; a robot's mail from the address does not
    /// count, and without their named mail the report's spelling stays.
    #[test]
    fn waits_on_names_a_person_as_their_own_mail_does() {
        use crate::model::thread::{Sender, ThreadEntry};
        let now = chrono::Utc::now();
        let mut c = Case::sample("aaaaaaaaaaaa", CaseState::Reported, now);
        c.to = vec!["goralbaris <goralbaris@gmail.com>".into()];
        let mail = |name: &str, from: &str, sender: Sender| ThreadEntry {
            from_name: name.into(),
            sender,
            ..ThreadEntry::sample("r@x", from, "words")
        };
        let report = "goralbaris <goralbaris@gmail.com>";
        let named = "Baris Goral <GoralBaris@gmail.com>";
        for (thread, want) in [
            (vec![], report),
            (
                vec![mail("Baris Goral", "GoralBaris@gmail.com", Sender::Person)],
                named,
            ),
            (
                vec![mail("Baris Goral", "goralbaris@gmail.com", Sender::Bot)],
                report,
            ),
            (
                vec![mail("", "goralbaris@gmail.com", Sender::Person)],
                report,
            ),
            (vec![mail("Ann", "ann@example.org", Sender::Person)], report),
            // Their latest named mail, a later one without a name aside.
            (
                vec![
                    mail("Baris Goral", "GoralBaris@gmail.com", Sender::Person),
                    mail("", "goralbaris@gmail.com", Sender::Person),
                ],
                named,
            ),
        ] {
            assert_eq!(
                waits_on_named(&c, &[], &thread).as_deref(),
                Some(want),
                "{thread:?}"
            );
        }
    }
}
