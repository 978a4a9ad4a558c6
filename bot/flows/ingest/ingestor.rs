//! One message in, recorded at most once: matched to its case (or counted and
//! skipped after a look at its headers), quarantined when unreadable.

use std::collections::HashMap;

use chrono::Utc;
use sha2::{Digest, Sha256};

use super::parse::{header_block, parse, parse_head, Head, Limits, HEADER_CAP};
use super::sender::{classify, Identity};
use super::thread::{match_case, reverted_cases, trailer_ids, SubjectIndex};
use crate::config::Config;
use crate::flows::reply::Handled;
use crate::model::case::{Case, CaseId};
use crate::model::thread::{Quarantined, ThreadEntry};
use crate::model::MatchedBy;
use crate::model::SenderKind;
use crate::model::{Address, EarlyReply, MessageId};
use crate::reply::policy::people::RobotPeople;
use crate::reply::understand::quote::own_words;
use crate::store::{Store, StoreError};

use super::early::EarlyReplies;

/// What happened to the messages of one ingestion run.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stats {
    pub read: usize,
    pub bytes: u64,
    /// Belongs to a case thread (new or not).
    pub matched: usize,
    /// Recorded for the first time.
    pub new: usize,
    /// Seen before (or perfbot's own mail coming back).
    pub duplicates: usize,
    /// About no case.
    pub unmatched: usize,
    pub quarantined: usize,
    /// New thread messages from robots (recorded, never acted on).
    pub bots: usize,
    /// Cut by a limit.
    pub limited: usize,
    /// People's replies understood and applied to their case.
    pub handled: usize,
    /// Other robots' reports opened as cases (`[track]`).
    pub adopted: usize,
    /// Messages an archive holds that could not be read out of it (kept as
    /// `Unreadable`, tried again on the next run).
    pub unreadable: usize,
    /// Replies about no case yet that may answer a later report (`Held`).
    pub held: usize,
    /// Replies read before the message they answer, recorded once it came
    /// (counted as unmatched until then).
    pub late: usize,
}

impl Stats {
    pub fn line(&self) -> String {
        let mut line = format!(
            "read {}, matched {}, new {}, duplicates {}, unmatched {}, quarantined {}",
            self.read, self.matched, self.new, self.duplicates, self.unmatched, self.quarantined
        );
        if self.adopted > 0 {
            line.push_str(&format!(", adopted {}", self.adopted));
        }
        if self.unreadable > 0 {
            line.push_str(&format!(", unreadable {}", self.unreadable));
        }
        if self.held > 0 {
            line.push_str(&format!(", held {}", self.held));
        }
        if self.late > 0 {
            line.push_str(&format!(", read before their parent {}", self.late));
        }
        line
    }

    pub fn add(&mut self, o: &Stats) {
        self.read += o.read;
        self.bytes += o.bytes;
        self.matched += o.matched;
        self.new += o.new;
        self.duplicates += o.duplicates;
        self.unmatched += o.unmatched;
        self.quarantined += o.quarantined;
        self.bots += o.bots;
        self.limited += o.limited;
        self.handled += o.handled;
        self.adopted += o.adopted;
        self.unreadable += o.unreadable;
        self.held += o.held;
        self.late += o.late;
    }
}

/// The fate of one message.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Recorded in a case's thread for the first time.
    New {
        case: CaseId,
        entry: Box<ThreadEntry>,
        sender: SenderKind,
        /// What the reply did (people's replies only).
        handled: Option<Box<Handled>>,
    },
    Duplicate,
    Unmatched,
    /// About no case yet, but it may answer a report not read yet: held.
    Held,
    Quarantined(String),
    /// Another robot's report, opened as a case (`[track]`).
    Adopted {
        case: CaseId,
    },
    /// A whole copy of a report its case had read at a glance only: the
    /// case now has what the full reading says.
    ReadInFull {
        case: CaseId,
    },
}

pub struct Ingestor<'a> {
    pub config: &'a Config,
    pub store: &'a Store,
    known: HashMap<MessageId, CaseId>,
    subjects: SubjectIndex,
    identity: Identity,
    pub(crate) limits: Limits,
    pub stats: Stats,
    /// Bumped by whoever creates cases while this ingestor runs (the daemon's
    /// spool): the indexes are reloaded before the next message.
    pub generation: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    seen_generation: u64,
    /// DKIM verification of people's replies (`trust.dkim`).
    dkim: Option<crate::mail::dkim::Checker>,
    /// `@domain` of every case's report Message-ID: a body that names one (a
    /// `Closes:` trailer) may concern a case although it answers nothing.
    report_domains: Vec<memchr::memmem::Finder<'static>>,
    /// `[track]`'s senders and names, and its lists, as case-insensitive
    /// automata over a message's raw header block (no lower-cased copy per
    /// message). `None`: nothing to look for (or the automaton could not be
    /// built: then every message gets the full check).
    tracked_senders: Option<aho_corasick::AhoCorasick>,
    tracked_lists: Option<aho_corasick::AhoCorasick>,
    /// The recipients of the tracked robots' reports adopted so far: who
    /// the robot copies on them is its people (`people`).
    people: RobotPeople,
    /// Replies about no case, kept while the message they answer may still
    /// come (`inbound.early_replies_bytes`).
    early: EarlyReplies,
    /// Messages that joined a case's thread since the early replies were
    /// last looked at: those answering them are read now.
    joined: Vec<MessageId>,
}

/// A case-insensitive automaton for `patterns`, or `None` without any.
fn header_matcher<'p>(
    what: &str,
    patterns: impl IntoIterator<Item = &'p str>,
) -> Option<aho_corasick::AhoCorasick> {
    let patterns: Vec<&str> = patterns.into_iter().filter(|p| !p.is_empty()).collect();
    if patterns.is_empty() {
        return None;
    }
    aho_corasick::AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(patterns)
        .map_err(|e| tracing::error!(error = %e, "[track] {what}: no quick header check"))
        .ok()
}

/// Who speaks for the robot sending from `robot`: that address first (its
/// people answer from it under their own names; `robot_people` reads the
/// robot from it), then the people `[track]` names and those learnt from
/// its reports.
fn speakers(robot: &Address, learnt: &[Address], named: &[Address]) -> Vec<String> {
    let mut out = vec![robot.to_string()];
    for a in named.iter().chain(learnt) {
        if !out.contains(&a.to_string()) {
            out.push(a.to_string());
        }
    }
    out
}

/// The `@domain` parts of the cases' report Message-IDs, as finders (memchr's
/// SIMD search for one needle beats a multi-pattern automaton here: the
/// needles are few, and their rare bytes let it skip most of the text).
fn report_domains(cases: &[crate::model::case::Case]) -> Vec<memchr::memmem::Finder<'static>> {
    let mut d: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            c.message_id
                .as_str()
                .rsplit_once('@')
                .map(|(_, d)| format!("@{d}"))
        })
        .collect();
    d.sort();
    d.dedup();
    d.into_iter()
        .map(|s| memchr::memmem::Finder::new(s.as_bytes()).into_owned())
        .collect()
}

static REVERTS: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"This reverts commit "));

impl<'a> Ingestor<'a> {
    /// Load the thread index (every Message-ID of every case) and the cases'
    /// commits, so that a message about no case costs one header parse.
    pub fn new(config: &'a Config, store: &'a Store) -> Result<Ingestor<'a>, StoreError> {
        let known: HashMap<MessageId, CaseId> = store.known_message_ids()?.into_iter().collect();
        let i = &config.file.inbound;
        let (early, joined) = early_replies(store, i, &limits_of(i), &known)?;
        let cases = store.cases()?;
        let subjects = SubjectIndex::new(&cases);
        let mut own = vec![];
        own.extend(Address::parse(&config.file.bot.email));
        own.extend(config.file.smtp.envelope_from.clone());
        let mut ing = Ingestor {
            config,
            store,
            known,
            subjects,
            identity: Identity {
                own_addresses: own,
                message_id_domain: config.file.bot.message_id_domain.clone(),
                robots: i.robots.iter().map(|r| r.to_ascii_lowercase()).collect(),
            },
            limits: limits_of(i),
            stats: Stats::default(),
            tracked_senders: header_matcher(
                "senders",
                config
                    .file
                    .track
                    .senders
                    .iter()
                    .map(|a| a.as_str())
                    .chain(config.file.track.names.iter().map(String::as_str)),
            ),
            tracked_lists: header_matcher(
                "lists",
                config.file.track.lists.iter().map(String::as_str),
            ),
            generation: None,
            seen_generation: 0,
            dkim: if config.file.trust.dkim {
                match crate::mail::dkim::Checker::new(&config.file.trust.dkim_keys) {
                    Ok(c) => Some(c),
                    Err(e) => {
                        tracing::error!(error = %e, "DKIM verification unavailable: every sender is treated as unverified");
                        None
                    }
                }
            } else {
                None
            },
            report_domains: report_domains(&cases),
            people: RobotPeople::of_cases(&cases),
            early,
            joined,
        };
        // Kept replies whose parent is in a thread already.
        ing.read_early()?;
        Ok(ing)
    }

    /// Save the replies kept or let go of since the last save (made durable
    /// by the next flush): before a cursor moves past them, or a reading
    /// ends.
    pub fn save_early(&mut self) -> Result<(), StoreError> {
        if let Some((added, removed)) = self.early.changes() {
            self.store.save_early(&added, removed)?;
            self.early.saved();
        }
        Ok(())
    }

    /// What was read made durable, kept replies included: where a cursor
    /// moves, a file is marked read, or a reading ends.
    pub fn checkpoint(&mut self) -> Result<(), StoreError> {
        self.save_early()?;
        self.store.flush()
    }

    /// Reports of the tracked robots seen elsewhere (`replay` reads the
    /// reports it is given first): their recipients count as the adopted
    /// ones' do.
    pub fn learn_people(&mut self, reports: &RobotPeople) {
        self.people.extend(reports);
    }

    /// A case created after this ingestor was: index it too.
    pub fn refresh(&mut self) -> Result<(), StoreError> {
        self.known = self.store.known_message_ids()?.into_iter().collect();
        let cases = self.store.cases()?;
        self.subjects = SubjectIndex::new(&cases);
        self.report_domains = report_domains(&cases);
        self.people.extend(&RobotPeople::of_cases(&cases));
        // A new case may be what held replies were waiting for.
        self.release_held()?;
        Ok(())
    }

    fn quarantine(
        &mut self,
        raw: &[u8],
        source: &str,
        reason: String,
        message_id: Option<&MessageId>,
        case: Option<&CaseId>,
    ) -> Result<Outcome, StoreError> {
        let hash: String = Sha256::digest(raw)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        tracing::warn!(%source, message_id = ?message_id.map(MessageId::as_str), %reason, "message quarantined");
        self.store.quarantine(
            &Quarantined {
                hash,
                reason: reason.clone(),
                source: source.to_string(),
                size: raw.len(),
                message_id: message_id.map(|m| m.to_string()),
                time: Utc::now(),
                case: case.cloned(),
            },
            raw,
        )?;
        self.stats.quarantined += 1;
        Ok(Outcome::Quarantined(reason))
    }

    /// Whether a message could concern a case at all: it answers a known
    /// message or names a case's commit in a reply's subject, or its body
    /// holds what `lookup_body` looks for (a revert, a report's Message-ID).
    fn may_concern(&self, r: &super::parse::Route, raw: &[u8]) -> bool {
        r.ids.iter().any(|id| self.known.contains_key(*id))
            || super::thread::match_ids(
                &[],
                &[],
                &r.subject,
                |id| self.known.get(id).cloned(),
                &self.subjects,
            )
            .is_some()
            || self.body_hint(&r.subject, raw)
    }

    /// A revert (its subject says so; `git revert` writes `Revert "…"` and
    /// "This reverts commit …"), or a body naming a case's report. The body
    /// is searched for "This reverts commit" only when the subject speaks of
    /// a revert: searched in every body, those common words cost a third of
    /// the whole ingestion (measured on the benchmark's mbox).
    fn body_hint(&self, subject: &str, raw: &[u8]) -> bool {
        let revert = subject.contains("Revert \"")
            || (subject
                .as_bytes()
                .windows(6)
                .any(|w| w.eq_ignore_ascii_case(b"revert"))
                && REVERTS.find(raw).is_some());
        revert || self.report_domains.iter().any(|f| f.find(raw).is_some())
    }

    fn lookup(&self, head: &Head) -> Option<(CaseId, MatchedBy)> {
        match_case(head, |id| self.known.get(id).cloned(), &self.subjects)
    }

    /// Messages outside the thread that still concern a case: a revert of its
    /// commit, a patch whose trailer closes the report, or a reply whose
    /// mailer dropped its threading headers but which quotes the report.
    /// Checked only when the raw bytes or the subject hint at it (a cheap
    /// search), so unrelated mail stays cheap.
    fn lookup_body(&self, raw: &[u8], head: &Head) -> Option<(CaseId, MatchedBy)> {
        let revert = head.subject.contains("Revert \"")
            || memchr::memmem::find(raw, b"This reverts commit ").is_some();
        let domain = format!("@{}", self.config.file.bot.message_id_domain);
        let trailer = memchr::memmem::find(raw, domain.as_bytes()).is_some()
            || memchr::memmem::find(raw, b"Closes: ").is_some();
        // Only a message that answers nothing: one whose parent is simply not
        // read yet waits for it (`early`).
        let quoting = head.in_reply_to.is_empty()
            && head.references.is_empty()
            && self.subjects.has_topic(&head.subject);
        if !revert && !trailer && !quoting {
            return None;
        }
        let msg = parse(raw, &self.limits).ok()?;
        if revert {
            let cases = reverted_cases(&head.subject, &msg.text, &self.subjects);
            if cases.len() == 1 {
                return Some((cases[0].clone(), MatchedBy::Revert));
            }
        }
        let t = crate::reply::understand::command::trailers(&msg.text, &[]);
        let by_trailer = trailer_ids(&t.links)
            .iter()
            .find_map(|id| self.known.get(id).cloned())
            .map(|c| (c, MatchedBy::Trailer));
        by_trailer.or_else(|| {
            quoting
                .then(|| self.subjects.quoted_report(&head.subject, &msg.text))
                .flatten()
                .map(|c| (c, MatchedBy::Quote))
        })
    }

    /// Take one raw message from `source` (for logs: a file, a UID, an offset).
    pub fn ingest(&mut self, raw: &[u8], source: &str) -> Result<Outcome, StoreError> {
        let o = match self.route(raw, false, source)? {
            Some(o) => o,
            None => self.ingest_whole(raw, source)?,
        };
        self.read_early()?;
        Ok(o)
    }

    /// One message of an mbox as stored (mboxrd quoting in place): routed as
    /// it is, unquoted only when it is read whole.
    pub fn ingest_stored(&mut self, stored: &[u8], source: &str) -> Result<Outcome, StoreError> {
        let o = match self.route(stored, true, source)? {
            Some(o) => o,
            None => self.ingest_whole(&super::mbox::unquote(stored), source)?,
        };
        self.read_early()?;
        Ok(o)
    }

    /// Read the kept replies that answer a message that joined a case's
    /// thread (and those answering them, in turn). Each was counted as
    /// unmatched when it was read first.
    fn read_early(&mut self) -> Result<(), StoreError> {
        while let Some(id) = self.joined.pop() {
            for e in self.early.answering(id.as_str()) {
                self.stats.unmatched = self.stats.unmatched.saturating_sub(1);
                self.stats.late += 1;
                let source = format!("{} (read before <{id}>, which it answers)", e.meta.source);
                tracing::info!(message_id = %id, source = %e.meta.source, "a reply read before the message it answers: read again");
                self.ingest_whole(&as_read(&e.raw, e.meta.stored), &source)?;
            }
        }
        Ok(())
    }

    /// A first look at the four threading headers: it settles most messages
    /// (about no case) without parsing them. `None`: the message must be read
    /// whole (it may matter, or it has none of those headers).
    fn route(
        &mut self,
        raw: &[u8],
        stored: bool,
        source: &str,
    ) -> Result<Option<Outcome>, StoreError> {
        if let Some(g) = &self.generation {
            let now = g.load(std::sync::atomic::Ordering::Acquire);
            if now != self.seen_generation {
                self.seen_generation = now;
                self.refresh()?;
            }
        }
        self.stats.read += 1;
        self.stats.bytes += raw.len() as u64;
        let Some(r) = super::parse::parse_route(raw, &self.limits) else {
            return Ok(None);
        };
        if self.may_be_tracked(raw) {
            return Ok(None);
        }
        if !self.may_concern(&r, raw) && !self.may_answer_a_later_report(&r.subject) {
            if let Some(parent) = r.parent {
                self.early
                    .keep(raw, EarlyReply::now(stored, source), parent);
            }
            self.stats.unmatched += 1;
            return Ok(Some(Outcome::Unmatched));
        }
        Ok(None)
    }

    /// Could this answer a tracked robot's report that is not read yet (an
    /// archive or a mailbox read out of order)? Its subject says so.
    fn may_answer_a_later_report(&self, subject: &str) -> bool {
        self.config.file.track.enabled() && super::thread::is_report_subject(subject)
    }

    /// Keep a reply about no case yet that may answer a later report, to be
    /// read again when that report's case appears (`release_held`).
    fn hold(&mut self, raw: &[u8], head: &Head, source: &str) -> Result<Outcome, StoreError> {
        let max = self.config.file.inbound.max_held;
        if self.store.held_count() >= max {
            tracing::warn!(message_id = %head.message_id, %source, max,
                "a reply that may answer a later report is not held: inbound.max_held replies are held already");
            self.stats.unmatched += 1;
            return Ok(Outcome::Unmatched);
        }
        let answers = head
            .in_reply_to
            .iter()
            .chain(&head.references)
            .map(|m| m.to_string())
            .collect();
        let held = crate::model::Held {
            message_id: head.message_id.to_string(),
            answers,
            subject: head.subject.clone(),
            source: source.to_string(),
            size: raw.len(),
            time: Utc::now(),
        };
        self.store.hold(&held, raw)?;
        self.stats.held += 1;
        tracing::debug!(message_id = %head.message_id, %source, "held: may answer a report not read yet");
        Ok(Outcome::Held)
    }

    /// Read a quarantined message again (`quarantine retry`: after an
    /// upgrade, or a limit raised). Read now, it leaves the quarantine; still
    /// unreadable, it stays, with the reason it has now.
    pub fn retry_quarantined(&mut self, q: &Quarantined) -> Result<Outcome, StoreError> {
        let raw = self.store.quarantined_raw(q)?;
        let when = crate::model::shown_minute(q.time);
        let source = format!("{} (quarantined since {when})", q.source);
        // Read first, let go after: a crash in between reads it again, and
        // the Message-ID index keeps it single.
        let outcome = self.ingest(&raw, &source)?;
        // Kept for a later parent: saved before it leaves the quarantine.
        self.save_early()?;
        match &outcome {
            Outcome::Quarantined(why) => self.store.requarantine(&q.hash, why)?,
            _ => self.store.release_quarantined(q)?,
        }
        Ok(outcome)
    }

    /// Read again the held replies that answer a message of a case now, and
    /// forget those held longer than `inbound.hold_days`. The number read.
    pub fn release_held(&mut self) -> Result<usize, StoreError> {
        if self.store.held_count() == 0 {
            return Ok(0);
        }
        let days = i64::from(self.config.file.inbound.hold_days);
        let expire = Utc::now() - chrono::Duration::days(days);
        let mut released = 0;
        for h in self.store.held()? {
            let answers_a_case = h
                .answers
                .iter()
                .filter_map(|a| MessageId::parse(a))
                .any(|a| self.known.contains_key(&a));
            if answers_a_case {
                if let Some(raw) = self.store.held_raw(&h.message_id)? {
                    let when = crate::model::shown_minute(h.time);
                    let source = format!("{} (held since {when})", h.source);
                    // Read first, forget after: a crash in between reads it
                    // again, and the Message-ID index keeps it single.
                    self.ingest_whole(&raw, &source)?;
                    released += 1;
                }
                self.store.drop_held(&h.message_id)?;
            } else if h.time < expire {
                tracing::info!(message_id = %h.message_id, subject = %h.subject,
                    "a held reply answered no report in inbound.hold_days: no longer held");
                self.store.drop_held(&h.message_id)?;
            }
        }
        if released > 0 {
            self.store.flush()?;
            tracing::info!(
                released,
                "held replies read now that their report's case exists"
            );
        }
        Ok(released)
    }

    /// A cheap first look: could this be a report of a robot `[track]`
    /// follows (one of its senders in the headers)? Not the subject: reports
    /// answering a patch carry the patch's (`Re: [PATCH …]`).
    fn may_be_tracked(&self, raw: &[u8]) -> bool {
        match &self.tracked_senders {
            Some(m) => m.is_match(header_block(raw, HEADER_CAP)),
            // Nothing tracked; or no automaton: the full check decides.
            None => self.config.file.track.enabled(),
        }
    }

    /// Open a case for a tracked robot's performance report about no case
    /// yet. A report that cannot be read is quarantined with the reason,
    /// never half a case.
    fn adopt(
        &mut self,
        raw: &[u8],
        head: &Head,
        source: &str,
    ) -> Result<Option<Outcome>, StoreError> {
        if !self.sent_by_tracked_robot(raw, head) {
            return Ok(None);
        }
        let mut case = match report_case(raw, head, source) {
            None => return Ok(None),
            Some(Ok(case)) => case,
            Some(Err(why)) => {
                let why = format!("a tracked robot report that could not be read: {why}");
                return self
                    .quarantine(raw, source, why, Some(&head.message_id), None)
                    .map(Some);
            }
        };
        if let Some(refused) = self.dkim_refusal(raw, head) {
            let why = format!("a tracked robot's report {refused}: not adopted");
            return self
                .quarantine(raw, source, why, Some(&head.message_id), None)
                .map(Some);
        }
        // One commit and headline metric, one case: a second report of it (a
        // resend, another robot run) joins the first one's thread.
        if let Some(first) = self.case_of_regression(&case)? {
            return self.join_report(&first, raw, head, source).map(Some);
        }
        if let Some(robot) = &head.from {
            case.robot_people = self.robot_people(robot, &case);
        }
        let id = case.id.clone();
        let cause = crate::model::case::Cause::system(format!(
            "adopted the robot's report <{}>",
            head.message_id
        ));
        self.store.adopt_case(&case, cause)?;
        self.known.insert(head.message_id.clone(), id.clone());
        self.subjects.add(&case);
        self.stats.adopted += 1;
        self.stats.matched += 1;
        tracing::info!(case = %id, message_id = %head.message_id, %source, "robot report adopted");
        Ok(Some(Outcome::Adopted { case: id }))
    }

    /// Whose replies speak for `robot` on this report: its people learnt
    /// from the reports seen so far (this one included, when `[track]
    /// learn_people`) and those `[track] people` names.
    fn robot_people(&mut self, robot: &Address, case: &Case) -> Vec<String> {
        let t = &self.config.file.track;
        self.people
            .observe(robot, case.message_id.as_str(), &case.to, &case.cc);
        let learnt = if t.learn_people {
            self.people.people(robot)
        } else {
            Vec::new()
        };
        speakers(robot, &learnt, &t.people)
    }

    /// Is this mail from a robot `[track]` follows (by its address, the
    /// names narrowing it), sent to a list it follows it on?
    fn sent_by_tracked_robot(&self, raw: &[u8], head: &Head) -> bool {
        let t = &self.config.file.track;
        // By address: a display name is the sender's to choose. Names only
        // narrow a tracked address (one that also sends other mail).
        let from_tracked = t.enabled()
            && head.from.as_ref().is_some_and(|a| t.senders.contains(a))
            && (t.names.is_empty() || t.names.iter().any(|n| n == &head.from_name));
        from_tracked
            && self
                .tracked_lists
                .as_ref()
                .is_none_or(|lists| lists.is_match(header_block(raw, HEADER_CAP)))
    }

    /// Why a tracked robot's report may not be taken (`trust.require_dkim`
    /// and no aligned DKIM pass), if it may not.
    fn dkim_refusal(&self, raw: &[u8], head: &Head) -> Option<String> {
        if !self.config.require_dkim() {
            return None;
        }
        let checker = self.dkim.as_ref()?;
        let domain = head
            .from
            .as_ref()
            .and_then(|a| a.as_str().rsplit_once('@'))
            .map_or("", |(_, d)| d);
        let verdict = checker.check(raw, domain);
        (!verdict.verified()).then(|| {
            format!(
                "without an aligned DKIM pass ({}; trust.require_dkim)",
                verdict.describe()
            )
        })
    }

    /// A report read at a glance, seen again whole (an archive cut short,
    /// then read again): the case takes the full reading. Only the tracked
    /// robot's own copy, under the report's Message-ID, and only one that
    /// reads in full; anything else is a duplicate as before.
    fn read_in_full(
        &mut self,
        raw: &[u8],
        head: &Head,
        source: &str,
        id: &CaseId,
    ) -> Result<bool, StoreError> {
        let case = self.store.case(id)?;
        if case.unread.is_none()
            || case.message_id != head.message_id
            || !self.sent_by_tracked_robot(raw, head)
            || self.dkim_refusal(raw, head).is_some()
        {
            return Ok(false);
        }
        let Ok(p) = crate::flows::robot::parse_report(raw, source) else {
            return Ok(false);
        };
        let Ok(full) = crate::flows::robot::adopted_case(&p, head) else {
            return Ok(false);
        };
        let Some(c) = self.store.record_read_in_full(id, &full, source)? else {
            return Ok(false);
        };
        self.subjects.add(&c);
        tracing::info!(case = %id, message_id = %head.message_id, %source, "a report read at a glance is now read in full");
        Ok(true)
    }

    /// The case already open for the commit and headline metric of `case`
    /// (the oldest, if several): the subject index finds the commit's cases.
    fn case_of_regression(&self, case: &Case) -> Result<Option<CaseId>, StoreError> {
        if case.headline_metric.is_empty() {
            return Ok(None);
        }
        let mut same = Vec::new();
        for id in self.subjects.by_sha(&case.commit) {
            let c = self.store.case(&id)?;
            if c.headline_metric == case.headline_metric {
                same.push(c);
            }
        }
        Ok(same.into_iter().min_by_key(|c| c.created).map(|c| c.id))
    }

    /// A later report of a case's regression: recorded in its thread.
    fn join_report(
        &mut self,
        case: &CaseId,
        raw: &[u8],
        head: &Head,
        source: &str,
    ) -> Result<Outcome, StoreError> {
        let msg = match parse(raw, &self.limits) {
            Ok(m) => m,
            Err(e) => {
                let id = Some(&head.message_id);
                return self.quarantine(raw, source, e.to_string(), id, Some(case));
            }
        };
        let sender = SenderKind::Bot("a tracked robot's report".into());
        let mut entry = thread_entry(head, &msg, &sender, MatchedBy::SameRegression, source);
        let note = "a later report of the same commit and headline metric: joins this case";
        let recorded = self.store.record_thread_message(case, &mut entry, note)?;
        self.known.insert(head.message_id.clone(), case.clone());
        self.stats.matched += 1;
        if !recorded {
            self.stats.duplicates += 1;
            return Ok(Outcome::Duplicate);
        }
        self.stats.new += 1;
        tracing::info!(%case, message_id = %head.message_id, %source, "robot report joined the case of its regression");
        Ok(Outcome::New {
            case: case.clone(),
            entry: Box::new(entry),
            sender,
            handled: None,
        })
    }

    /// Read a message whole: quarantine it, or match it and record it.
    fn ingest_whole(&mut self, raw: &[u8], source: &str) -> Result<Outcome, StoreError> {
        let head = match parse_head(raw, &self.limits) {
            Ok(h) => h,
            Err(e) => return self.quarantine(raw, source, e.to_string(), None, None),
        };
        if let Some(id) = self.known.get(&head.message_id).cloned() {
            self.stats.matched += 1;
            if self.read_in_full(raw, &head, source, &id)? {
                return Ok(Outcome::ReadInFull { case: id });
            }
            self.stats.duplicates += 1;
            return Ok(Outcome::Duplicate);
        }
        let found = match self.lookup(&head) {
            Some(f) => Some(f),
            None => self.lookup_body(raw, &head),
        };
        let Some((case, how)) = found else {
            return self.no_case_thread(raw, &head, source);
        };
        self.stats.matched += 1;
        let msg = match parse(raw, &self.limits) {
            Ok(m) => m,
            Err(e) => {
                let id = head.message_id.clone();
                return self.quarantine(raw, source, e.to_string(), Some(&id), Some(&case));
            }
        };
        if let Some(why) = &msg.limited {
            self.stats.limited += 1;
            tracing::warn!(%source, message_id = %head.message_id, limit = %why, "message limited");
        }
        let sender = self.sender_of(&case, &head, &msg, source)?;
        let mut entry = thread_entry(&head, &msg, &sender, how, source);
        let Kept::Recorded(handled) = self.record(&case, &mut entry, &msg, raw, &sender)? else {
            self.stats.duplicates += 1;
            self.known.insert(head.message_id, case);
            return Ok(Outcome::Duplicate);
        };
        self.known.insert(head.message_id.clone(), case.clone());
        if !self.early.is_empty() {
            self.joined.push(head.message_id.clone());
        }
        if let Some(h) = &handled {
            // Replies to what it queued belong to this case too.
            for id in &h.queued {
                self.known.insert(id.clone(), case.clone());
            }
        }
        self.stats.new += 1;
        if matches!(sender, SenderKind::Bot(_)) {
            self.stats.bots += 1;
        }
        tracing::info!(case = %case, message_id = %head.message_id, sender = sender.as_str(), matched_by = how.as_str(), %source, "thread message recorded");
        Ok(Outcome::New {
            case,
            entry: Box::new(entry),
            sender,
            handled,
        })
    }

    /// A message of no case's thread: a followed robot's report to adopt,
    /// a reply held for a report not read yet, or unmatched.
    fn no_case_thread(
        &mut self,
        raw: &[u8],
        head: &Head,
        source: &str,
    ) -> Result<Outcome, StoreError> {
        if let Some(o) = self.adopt(raw, head, source)? {
            if matches!(o, Outcome::Adopted { .. }) {
                // Replies that came before their report.
                self.release_held()?;
                if !self.early.is_empty() {
                    self.joined.push(head.message_id.clone());
                }
            }
            return Ok(o);
        }
        let answers = !head.in_reply_to.is_empty() || !head.references.is_empty();
        if answers && self.may_answer_a_later_report(&head.subject) {
            return self.hold(raw, head, source);
        }
        if let Some(parent) = head.parent() {
            self.early
                .keep(raw, EarlyReply::now(false, source), parent.as_str());
        }
        self.stats.unmatched += 1;
        Ok(Outcome::Unmatched)
    }

    /// Who sent a message of `case`'s thread: a bot, a person, or the
    /// robot's people typing under its name (read as a person's).
    fn sender_of(
        &self,
        case: &CaseId,
        head: &Head,
        msg: &super::parse::Inbound,
        source: &str,
    ) -> Result<SenderKind, StoreError> {
        let sender = classify(head, &self.identity);
        if matches!(sender, SenderKind::Bot(_))
            && self.typed_by_the_robots_people(case, head, msg)?
        {
            tracing::info!(case = %case, message_id = %head.message_id, %source,
                "mail under the robot's name without its template: read as its people's");
            return Ok(SenderKind::Person);
        }
        Ok(sender)
    }

    /// A mail under the robot's name that one of its people typed by hand
    /// ("please ignore the invalid report"): from an address the case counts
    /// as the robot's (its report's sender, its people), in answer to a
    /// message, without an automatic header, and with none of the robot's
    /// template in its own words (`glance::robot_template`). It is read as
    /// theirs, like their mail under their own names; the robot's own mail
    /// never is.
    fn typed_by_the_robots_people(
        &self,
        case: &CaseId,
        head: &Head,
        msg: &super::parse::Inbound,
    ) -> Result<bool, StoreError> {
        let Some(from) = &head.from else {
            return Ok(false);
        };
        // In answer: an In-Reply-To, or only References as some clients send.
        if head.parent().is_none() || super::sender::automatic(head).is_some() {
            return Ok(false);
        }
        let theirs = self
            .store
            .case(case)?
            .robot_people
            .iter()
            .any(|m| Address::parse(m).as_ref() == Some(from));
        Ok(theirs && !crate::report::parse::glance::robot_template(&msg.text))
    }

    /// Record a matched message in its case's thread. Only a person's mail is
    /// ever acted on; the message and what it does are recorded in one write.
    fn record(
        &mut self,
        case: &CaseId,
        entry: &mut ThreadEntry,
        msg: &super::parse::Inbound,
        raw: &[u8],
        sender: &SenderKind,
    ) -> Result<Kept, StoreError> {
        let who = crate::model::ids::display_mailbox(&entry.from_name, &entry.from);
        let note = match sender {
            SenderKind::Person => format!("reply from {who}"),
            SenderKind::Own => "perfbot's own mail, back from the list".to_string(),
            SenderKind::Bot(why) => format!("automatic mail from {who} ({why}): not acted on"),
        };
        if *sender != SenderKind::Person {
            let recorded = self.store.record_thread_message(case, entry, &note)?;
            return Ok(Kept::new(recorded, None));
        }
        let incoming = crate::flows::reply::Incoming {
            entry,
            body: &msg.text,
            raw,
            note: &note,
        };
        match crate::flows::reply::handle_reply(
            self.config,
            self.store,
            case,
            incoming,
            self.dkim.as_ref(),
        ) {
            Ok(Some(h)) => {
                self.stats.handled += 1;
                Ok(Kept::Recorded(Some(Box::new(h))))
            }
            Ok(None) => Ok(Kept::Already),
            Err(crate::flows::reply::HandleError::Store(e)) => Err(e),
            Err(e) => {
                // Kept, with the reason it could not be acted on.
                tracing::error!(case = %case, message_id = %entry.message_id, error = %e, "reply recorded but not handled");
                let note = format!("{note}; not handled: {e}");
                let recorded = self.store.record_thread_message(case, entry, &note)?;
                Ok(Kept::new(recorded, None))
            }
        }
    }
}

/// What recording a matched message came to.
enum Kept {
    /// It was in the thread already (read twice, or raced).
    Already,
    /// Recorded now; with what the reply did, if it was a person's.
    Recorded(Option<Box<Handled>>),
}

impl Kept {
    fn new(recorded: bool, handled: Option<Box<Handled>>) -> Kept {
        if recorded {
            Kept::Recorded(handled)
        } else {
            Kept::Already
        }
    }
}

/// The thread record of a message, before anything acts on it.
fn thread_entry(
    head: &Head,
    msg: &super::parse::Inbound,
    sender: &SenderKind,
    how: MatchedBy,
    source: &str,
) -> ThreadEntry {
    ThreadEntry {
        message_id: head.message_id.clone(),
        from: head
            .from
            .as_ref()
            .map(|a| a.to_string())
            .unwrap_or_default(),
        from_name: head.from_name.clone(),
        date: head.date,
        received: Utc::now(),
        subject: head.subject.clone(),
        text: own_words(&msg.text),
        sender: sender.sender(),
        sender_note: match sender {
            SenderKind::Bot(why) => why.clone(),
            _ => String::new(),
        },
        matched_by: how,
        // What it answers: References' last id where In-Reply-To is missing.
        in_reply_to: head.parent().cloned(),
        source: source.to_string(),
        limited: msg.limited.clone(),
        patches: msg.patches.clone(),
        understanding: None,
        seq: 0,
    }
}

/// The case a tracked robot's mail opens: `None` when it is none of its
/// performance reports (build errors, boot failures); the case read in full,
/// or at a glance (Subject, sentence, headers; marked `unread` with the
/// reason) where it cannot be read in full; `Err` with the reason when it
/// names no headline anywhere, never a case without one.
fn report_case(raw: &[u8], head: &Head, source: &str) -> Option<Result<Case, String>> {
    let why = match crate::flows::robot::parse_report(raw, source) {
        Ok(p) => match crate::flows::robot::adopted_case(&p, head) {
            Ok(case) => return Some(Ok(case)),
            Err(why) => why,
        },
        // One titled as a performance report that cannot be read (a
        // multipart cut short has no text part, a layout not seen before)
        // is a report all the same.
        Err(e) if e.not_a_report() && !titled_as_a_report(&head.subject) => return None,
        Err(e) => e.to_string(),
    };
    match crate::flows::robot::glanced_case(raw, head, source, &why) {
        Some(case) => {
            tracing::warn!(message_id = %head.message_id, %source, reason = %why,
                "a tracked robot report read at a glance only (Subject, sentence, headers)");
            Some(Ok(case))
        }
        None => Some(Err(why)),
    }
}

/// The limits a message is read under, as `[inbound]` sets them.
fn limits_of(i: &crate::config::InboundSection) -> Limits {
    Limits {
        max_bytes: i.max_message_bytes,
        max_parts: i.max_mime_parts,
        max_references: i.max_references,
        max_text: i.max_text_bytes,
    }
}

/// The replies an earlier run kept, in a room of `early_replies_bytes`:
/// those kept longer than `hold_days`, or whose parent cannot be read
/// again, are let go of. With them, the parents already in a case's thread
/// (a crash came between reading a kept reply into its thread and the save
/// that lets it go): their replies are read at once.
fn early_replies(
    store: &Store,
    i: &crate::config::InboundSection,
    limits: &Limits,
    known: &HashMap<MessageId, CaseId>,
) -> Result<(EarlyReplies, Vec<MessageId>), StoreError> {
    let mut early = EarlyReplies::new(i.early_replies_bytes);
    let mut joined = Vec::new();
    let expire = Utc::now() - chrono::Duration::days(i64::from(i.hold_days));
    for (seq, meta, raw) in store.early_replies()? {
        match parent_of(&raw, meta.stored, limits) {
            Some(parent) if meta.kept >= expire => {
                joined.extend(MessageId::parse(&parent).filter(|p| known.contains_key(p)));
                early.restore(seq, raw, meta, &parent);
            }
            _ => early.forget_saved(seq),
        }
    }
    Ok((early, joined))
}

/// The message a kept reply answers, read from its headers again.
fn parent_of(raw: &[u8], stored: bool, limits: &Limits) -> Option<String> {
    if let Some(r) = super::parse::parse_route(raw, limits) {
        return r.parent.map(str::to_string);
    }
    Some(
        parse_head(&as_read(raw, stored), limits)
            .ok()?
            .parent()?
            .to_string(),
    )
}

/// A kept reply's bytes as a whole reading takes them: unquoted when they
/// are an mbox message as stored (as `ingest_stored` reads one).
fn as_read(raw: &[u8], stored: bool) -> std::borrow::Cow<'_, [u8]> {
    if stored {
        super::mbox::unquote(raw)
    } else {
        raw.into()
    }
}

/// A subject as the robot titles a performance report (not a reply to one:
/// its people answer from its address too).
fn titled_as_a_report(subject: &str) -> bool {
    let t = subject.trim_start();
    let reply = t.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("re:"));
    !reply && super::thread::is_report_subject(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Vec<u8> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/threads/2024-12-27_linux-crypto_e1d3422c95/00-report.eml");
        std::fs::read(p).unwrap()
    }

    /// `[track]` in ingestion: senders match whatever their case, lists must
    /// be among the recipients or the list's own headers, and the quick look
    /// reads only the header block (a body naming the robot is not enough).
    #[test]
    fn tracked_reports_are_found_by_sender_and_list() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("state")).unwrap();
        let raw = report();
        // The body is ISO-8859-1 (`±`): change the bytes, not a lossy copy.
        let from: &[u8] = b"<oliver.sang@intel.com>\nTo:";
        let at = memchr::memmem::find(&raw, from).unwrap();
        let mut shouted = raw.clone();
        shouted[at..at + from.len()].copy_from_slice(b"<Oliver.Sang@INTEL.com>\nTo:");
        let adopted = |senders: &[&str], lists: &[&str], raw: &[u8]| -> bool {
            let mut config = Config::load(None).unwrap();
            config.file.bot.state_dir = tmp.path().join("unused");
            config.file.track.senders = senders.iter().filter_map(|s| Address::parse(s)).collect();
            config.file.track.lists = lists.iter().map(|s| s.to_string()).collect();
            let mut ing = Ingestor::new(&config, &store).unwrap();
            let tracked = ing.may_be_tracked(raw);
            let head = crate::flows::ingest::parse::parse_head(raw, &ing.limits).unwrap();
            let outcome = ing.adopt(raw, &head, "test").unwrap();
            tracked && matches!(outcome, Some(Outcome::Adopted { .. }))
        };
        assert!(!adopted(&[], &[], &raw), "off unless configured");
        assert!(!adopted(&["lkp@intel.com"], &[], &raw), "another sender");
        assert!(
            !adopted(&["oliver.sang@intel.com"], &["linux-mm@kvack.org"], &raw),
            "another list"
        );
        assert!(adopted(
            &["oliver.sang@intel.com"],
            &["LINUX-CRYPTO@vger.kernel.org"],
            &shouted
        ));
        // Only the header block counts: the robot named in a body is not a
        // report from the robot.
        let quoted = b"From: someone@example.org\r\nSubject: Re: x\r\n\r\nkernel test robot <oliver.sang@intel.com> wrote:\r\n";
        let config = {
            let mut c = Config::load(None).unwrap();
            c.file.track.senders = vec![Address::parse("oliver.sang@intel.com").unwrap()];
            c
        };
        let ing = Ingestor::new(&config, &store).unwrap();
        assert!(!ing.may_be_tracked(quoted));
        assert!(ing.may_be_tracked(&shouted));
    }

    /// A crash after a kept reply was read into its thread but before the
    /// save said so leaves it saved: the next run finds its parent in a
    /// thread already, reads it at once (a duplicate now), and lets it go.
    #[test]
    fn a_kept_reply_whose_parent_is_in_a_thread_is_let_go_at_the_next_run() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("state")).unwrap();
        let mut config = Config::load(None).unwrap();
        config.file.bot.state_dir = tmp.path().join("unused");
        config.file.track.senders = vec![Address::parse("oliver.sang@intel.com").unwrap()];
        let raw = report();
        let mut ing = Ingestor::new(&config, &store).unwrap();
        let head = parse_head(&raw, &ing.limits).unwrap();
        assert!(matches!(
            ing.ingest(&raw, "report").unwrap(),
            Outcome::Adopted { .. }
        ));
        let reply = |id: &str, parent: &str| {
            format!("From: Dev <dev@kernel.example>\r\nSubject: [PATCH] crypto: {id}\r\nMessage-ID: <{id}@x>\r\nIn-Reply-To: <{parent}>\r\nDate: Tue, 5 Jun 2018 17:31:14 +1000\r\n\r\nA fix.\r\n").into_bytes()
        };
        let mut ing = Ingestor::new(&config, &store).unwrap();
        assert!(matches!(
            ing.ingest(&reply("k", "p@x"), "k").unwrap(),
            Outcome::Unmatched
        ));
        ing.checkpoint().unwrap();
        // The parent, and with it the kept reply, read; then a crash: no save.
        let mut ing = Ingestor::new(&config, &store).unwrap();
        ing.ingest(&reply("p", head.message_id.as_str()), "p")
            .unwrap();
        assert_eq!(ing.stats.late, 1);
        store.flush().unwrap();
        drop(ing);
        assert_eq!(store.early_count().unwrap().0, 1);
        let mut ing = Ingestor::new(&config, &store).unwrap();
        assert_eq!((ing.stats.late, ing.stats.duplicates), (1, 1));
        ing.checkpoint().unwrap();
        assert_eq!(store.early_count().unwrap(), (0, 0));
    }
}
