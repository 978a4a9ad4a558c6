//! The messages of a case's thread, how perfbot recognised who sent each and
//! how it was matched to the case, and the messages kept in quarantine.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::ids::MessageId;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SenderKind {
    /// perfbot's own mail, back from a list or an archive.
    Own,
    /// Automatic mail, with the reason it was recognised.
    Bot(String),
    Person,
}

impl SenderKind {
    pub fn as_str(&self) -> &'static str {
        self.sender().as_str()
    }

    /// Without the reason.
    pub fn sender(&self) -> Sender {
        match self {
            SenderKind::Own => Sender::Own,
            SenderKind::Bot(_) => Sender::Bot,
            SenderKind::Person => Sender::Person,
        }
    }
}

/// Who sent a thread message, as recorded (`ThreadEntry::sender`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sender {
    Person,
    Bot,
    Own,
}

impl Sender {
    pub fn as_str(self) -> &'static str {
        match self {
            Sender::Own => "own",
            Sender::Bot => "bot",
            Sender::Person => "person",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatchedBy {
    InReplyTo,
    References,
    Subject,
    /// A revert of the case's commit, posted anywhere.
    Revert,
    /// A patch whose `Closes:`/`Link:` trailer points at the report.
    Trailer,
    /// A tracked robot's later report of the same commit and headline metric.
    SameRegression,
    /// A reply without threading headers, by the report it quotes.
    Quote,
}

impl MatchedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchedBy::InReplyTo => "in-reply-to",
            MatchedBy::References => "references",
            MatchedBy::Subject => "subject",
            MatchedBy::Revert => "revert",
            MatchedBy::Trailer => "trailer",
            MatchedBy::SameRegression => "same-regression",
            MatchedBy::Quote => "quote",
        }
    }
}

/// One message of a case's thread, as the timeline shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadEntry {
    pub message_id: MessageId,
    pub from: String,
    pub from_name: String,
    pub date: Option<DateTime<Utc>>,
    pub received: DateTime<Utc>,
    pub subject: String,
    /// The sender's own words (quotes, signature and footers removed).
    pub text: String,
    pub sender: Sender,
    /// Why it is not a person, for bots.
    #[serde(default)]
    pub sender_note: String,
    pub matched_by: MatchedBy,
    /// The message it answers, if known.
    #[serde(default)]
    pub in_reply_to: Option<MessageId>,
    /// Where it was read from (`imap://…/INBOX uid 42`, `mbox FILE`, …).
    pub source: String,
    /// A limit that cut it, if any.
    #[serde(default)]
    pub limited: Option<String>,
    /// Patches attached to it, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<String>,
    /// What the reply was understood to say (set by `reply`), if anything.
    #[serde(default)]
    pub understanding: Option<Reading>,
    /// Its place in the case's thread (the record's key), once recorded.
    #[serde(default)]
    pub seq: u64,
}

impl ThreadEntry {
    /// When the message was written: its Date, unless that lies after its
    /// arrival (a clock or a forger in the future).
    pub fn written(&self) -> DateTime<Utc> {
        self.date.map_or(self.received, |d| d.min(self.received))
    }
}

#[cfg(test)]
impl ThreadEntry {
    /// A person's reply `text` under `id`, received now, for tests of what
    /// reads threads.
    pub fn sample(id: &str, from: &str, text: &str) -> ThreadEntry {
        ThreadEntry {
            message_id: MessageId::parse(id).expect("a valid id"),
            from: from.into(),
            from_name: String::new(),
            date: None,
            received: Utc::now(),
            subject: "Re: x".into(),
            text: text.into(),
            sender: Sender::Person,
            sender_note: String::new(),
            matched_by: MatchedBy::InReplyTo,
            in_reply_to: None,
            source: "test".into(),
            limited: None,
            patches: Vec::new(),
            understanding: None,
            seq: 0,
        }
    }
}

/// The start of a quarantined message's hash: what `quarantine list` and
/// the digest show, and enough for `quarantine show`, `retry` and `drop`.
pub fn short_hash(hash: &str) -> &str {
    hash.get(..16).unwrap_or(hash)
}

/// A message that could not be read, kept with the reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quarantined {
    /// SHA-256 of the raw bytes (also the name of the file that holds them).
    pub hash: String,
    pub reason: String,
    pub source: String,
    pub size: usize,
    pub message_id: Option<String>,
    pub time: DateTime<Utc>,
    /// The case whose thread it was found to belong to before it could not
    /// be read: a reply that may decide the case. None when nothing
    /// matched, and for messages quarantined before perfbot kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<super::case::CaseId>,
}

impl Quarantined {
    /// How many of the messages `all` belong to each case: replies that
    /// could not be read, and may decide it (the lists count them; `remind`
    /// chases no such case).
    pub fn by_case(all: &[Quarantined]) -> std::collections::HashMap<&super::case::CaseId, usize> {
        let mut out = std::collections::HashMap::new();
        for case in all.iter().filter_map(|q| q.case.as_ref()) {
            *out.entry(case).or_insert(0) += 1;
        }
        out
    }
}

#[cfg(test)]
impl Quarantined {
    /// A message `message_id`, its hash `hash` repeated to 64 digits,
    /// quarantined at `time` for `reason`, matched to `case` or not: for
    /// tests of what shows the quarantine.
    pub fn sample(
        hash: &str,
        message_id: &str,
        reason: &str,
        time: DateTime<Utc>,
        case: Option<&super::case::CaseId>,
    ) -> Quarantined {
        Quarantined {
            hash: hash.repeat(64 / hash.len().max(1)),
            reason: reason.into(),
            source: "imap".into(),
            size: 9,
            message_id: Some(message_id.into()),
            time,
            case: case.cloned(),
        }
    }
}

/// A source perfbot reads mail from, as its cursor and its unreadable
/// records name it (`public-inbox:/srv/lkml/0.git`): one spelling, made and
/// read here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailSource {
    /// A maildir, by its path as given.
    Maildir(String),
    /// An mbox file, by its path as given.
    Mbox(String),
    /// An IMAP mailbox: `user@host:port/mailbox`.
    Imap(String),
    /// A public-inbox repository, by its canonical path.
    PublicInbox(String),
}

impl MailSource {
    const PREFIXES: [&'static str; 4] = ["maildir:", "mbox:", "imap://", "public-inbox:"];

    /// The key its cursor and its records are stored under.
    pub fn key(&self) -> String {
        let (prefix, name) = match self {
            MailSource::Maildir(n) => (Self::PREFIXES[0], n),
            MailSource::Mbox(n) => (Self::PREFIXES[1], n),
            MailSource::Imap(n) => (Self::PREFIXES[2], n),
            MailSource::PublicInbox(n) => (Self::PREFIXES[3], n),
        };
        format!("{prefix}{name}")
    }

    /// The source a stored key names.
    pub fn from_key(key: &str) -> Option<MailSource> {
        let kinds = [
            MailSource::Maildir,
            MailSource::Mbox,
            MailSource::Imap,
            MailSource::PublicInbox,
        ];
        Self::PREFIXES
            .iter()
            .zip(kinds)
            .find_map(|(p, kind)| key.strip_prefix(p).map(|n| kind(n.to_string())))
    }

    /// Where a message of it is, in its own words: a maildir's file (its
    /// path moves when it is marked read), an mbox's byte, an IMAP
    /// mailbox's UID, an archive's commit and object.
    pub fn place(&self, at: &str, object: Option<&str>) -> String {
        match self {
            MailSource::Maildir(dir) => format!("{dir}: file {at}"),
            MailSource::Mbox(file) => format!("{file}: the message at {at}"),
            MailSource::Imap(_) => format!("{} {at}", self.key()),
            MailSource::PublicInbox(repo) => format!(
                "{repo} commit {at}{}",
                object
                    .filter(|o| *o != at)
                    .map(|o| format!(" object {o}"))
                    .unwrap_or_default()
            ),
        }
    }
}

/// A message an archive holds that could not be taken out of it: its object
/// is missing (a partial clone), damaged, not what its id says, not a blob,
/// or too big to read. There are no bytes to keep, so where it is and why is
/// kept instead, and every later read of the archive tries it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unreadable {
    /// The repository, as its cursor names it (`public-inbox:/path/0.git`).
    pub repository: String,
    /// The commit that holds the message.
    pub commit: String,
    /// The object that failed (the blob `m`, or the commit itself).
    pub object: Option<String>,
    pub reason: String,
    pub first_seen: DateTime<Utc>,
    pub last_tried: DateTime<Utc>,
    /// How many reads have failed on it.
    pub tries: u32,
}

impl Unreadable {
    /// A first failure to read a message of the source keyed `key`
    /// (`MailSource::key`), now.
    pub fn first(key: &str, commit: &str, object: Option<String>, reason: String) -> Self {
        let now = Utc::now();
        Unreadable {
            repository: key.to_string(),
            commit: commit.to_string(),
            object,
            reason,
            first_seen: now,
            last_tried: now,
            tries: 1,
        }
    }

    /// Where the message is, in its source's words (the stored key as it
    /// is, for a key no source of this version makes).
    pub fn place(&self) -> String {
        match MailSource::from_key(&self.repository) {
            Some(s) => s.place(&self.commit, self.object.as_deref()),
            None => format!("{} {}", self.repository, self.commit),
        }
    }
}

/// A reply about no case, kept until the message it answers joins a case's
/// thread (`flows/ingest/early.rs`): how it was read, and when. Saved with
/// its bytes, so that it outlives the run that read it (a `perfbot ingest`
/// from cron, a restarted daemon, an archive read list by list over days).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlyReply {
    /// Its bytes are an mbox message as stored (mboxrd quoting in place).
    pub stored: bool,
    pub source: String,
    pub kept: DateTime<Utc>,
}

impl EarlyReply {
    /// A reply kept now, read from `source`.
    pub fn now(stored: bool, source: &str) -> EarlyReply {
        EarlyReply {
            stored,
            source: source.to_string(),
            kept: Utc::now(),
        }
    }
}

/// A reply that matched no case when it arrived but may answer a report not
/// read yet (an archive or a mailbox out of order): kept, and read again
/// when a case for one of the messages it answers appears.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Held {
    pub message_id: String,
    /// The messages it answers (In-Reply-To and References).
    pub answers: Vec<String>,
    pub subject: String,
    pub source: String,
    pub size: usize,
    pub time: DateTime<Utc>,
}

/// A reply an operator labelled: by settling its case by hand to a state
/// that says what the reply meant, or directly (`labels set`, with no
/// state). Kept as a labelled example for the reader
/// (`perfbot labels export`, then `train-intents` and `eval-replies`), and
/// compared with what perfbot had read (the digest's agreement line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperatorLabel {
    pub message_id: String,
    pub case_id: String,
    /// The intent the operator's decision gives the reply (`not-a-regression`).
    pub label: String,
    /// What perfbot had read in it, if it had read it.
    pub perfbot: Option<String>,
    /// The state the operator set, and who, why and when.
    pub state: String,
    pub by: String,
    pub reason: String,
    pub time: DateTime<Utc>,
    /// The reply, as the thread keeps it (its own words).
    pub from: String,
    pub subject: String,
    pub date: Option<DateTime<Utc>>,
    pub text: String,
    /// The role perfbot gave its sender.
    pub role: Option<String>,
    /// `regression` or `improvement`: the case's report.
    pub report_kind: String,
    /// How this reply was found to be the one the decision labels.
    #[serde(default)]
    pub chosen: Chosen,
}

/// How the reply an operator's decision labels was found. Labelling the
/// wrong reply teaches the reader the wrong thing, and a thread's decision
/// is often followed by thanks or more talk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Chosen {
    /// The operator named it (`cases set --reply`, the dashboard's choice).
    Named,
    /// The reply whose reading carried the decided intent most strongly.
    Strongest,
    /// No reply's reading carried it: the thread's last reply by a person
    /// (and what labels recorded before the choice was made).
    #[default]
    Last,
}

impl Chosen {
    pub fn as_str(self) -> &'static str {
        match self {
            Chosen::Named => "named",
            Chosen::Strongest => "strongest",
            Chosen::Last => "last",
        }
    }
}

/// What a person's reply was read to say and what it did, as the thread
/// keeps it (the timeline, the dashboard, operators' labels). Intents and
/// roles are their names here: this layer knows no reader.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    pub intent: String,
    pub confidence: f64,
    pub evidence: String,
    /// Other intents it also carries, strongest first.
    #[serde(default)]
    pub secondary: Vec<SecondaryReading>,
    /// The sender's role (after verification).
    pub role: String,
    /// What it did to the case, in a line.
    pub effect: String,
    /// The DKIM check, when made.
    #[serde(default)]
    pub dkim: Option<String>,
    /// What was deliberately not done.
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecondaryReading {
    pub intent: String,
    pub confidence: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each source's key reads back as that source, and places a message
    /// in the source's words; a key of no known source is shown as stored.
    #[test]
    fn an_unreadable_message_is_placed_in_its_sources_words() {
        let table = [
            (
                MailSource::Maildir("/srv/md".into()),
                "1.a.host",
                Some("/srv/md/new/1.a.host"),
                "/srv/md: file 1.a.host",
            ),
            (
                MailSource::Mbox("/srv/lkml.mbox".into()),
                "byte 4096",
                None,
                "/srv/lkml.mbox: the message at byte 4096",
            ),
            (
                MailSource::Imap("bot@mail:993/INBOX".into()),
                "uid 7",
                None,
                "imap://bot@mail:993/INBOX uid 7",
            ),
            (
                MailSource::PublicInbox("/m/lkml/0.git".into()),
                "abc",
                Some("def"),
                "/m/lkml/0.git commit abc object def",
            ),
            (
                MailSource::PublicInbox("/m/lkml/0.git".into()),
                "abc",
                Some("abc"),
                "/m/lkml/0.git commit abc",
            ),
        ];
        for (source, at, object, want) in table {
            assert_eq!(MailSource::from_key(&source.key()), Some(source.clone()));
            let u = Unreadable::first(&source.key(), at, object.map(str::to_string), "r".into());
            assert_eq!(u.place(), want);
        }
        let old = Unreadable::first("nntp://news/x", "byte 0", None, "r".into());
        assert_eq!(old.place(), "nntp://news/x byte 0");
        assert_eq!(MailSource::from_key("nntp://news/x"), None);
    }
}
