//! Reminders: a polite in-thread ping when a report gets no reply, when a
//! promised revert does not show up, or when a posted fix is not seen
//! applied; at most `max_pings` per case; a case with no activity for long
//! becomes stale. The decision is pure; the pings are
//! queued like any follow-up, so opt-outs, rate limits and the emergency stop
//! apply when they are sent.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::config::{Config, RemindersSection};
use crate::flows::followup::{prepare_followup, FollowUp};
use crate::model::case::{entered, put_by, Case, CaseRecord, CaseState, Cause, Event};
use crate::model::ids::mailbox;
use crate::model::{MessageId, OutboxEntry, OutboxKind, Sender, ThreadEntry};
use crate::store::Store;

/// What a ping chases: whom the case waits on, and for what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chase {
    /// Nobody has answered the report.
    NoReply,
    /// A revert was promised and has not been seen.
    Revert,
    /// A fix was posted and has not been seen applied.
    Fix,
}

impl Chase {
    /// Which ping a case in `state` may get, and after how many days.
    fn of(state: CaseState, answered: bool, r: &RemindersSection) -> Option<(Chase, i64)> {
        Some(match state {
            CaseState::Reported if !answered => (Chase::NoReply, r.no_reply_days),
            CaseState::AwaitingRevert => (Chase::Revert, r.awaiting_revert_days),
            CaseState::AwaitingFix => (Chase::Fix, r.awaiting_fix_days),
            _ => return None,
        })
    }

    /// For people, in `remind`'s lines.
    fn why(self) -> &'static str {
        match self {
            Chase::NoReply => "no reply",
            Chase::Revert => "revert not seen",
            Chase::Fix => "fix not seen applied",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Ping the thread; `nth` counts from 1.
    Ping {
        case: crate::model::case::CaseId,
        chase: Chase,
        nth: u32,
        since: DateTime<Utc>,
        /// The mail whose words the case waits on (the promised revert, the
        /// posted fix) and its sender: the ping answers it, to them.
        promise: Option<(MessageId, String)>,
    },
    /// No activity for too long.
    Stale {
        case: crate::model::case::CaseId,
        days: i64,
    },
}

/// What is due at `now`.
pub fn due(
    records: &[CaseRecord],
    outbox: &[OutboxEntry],
    now: DateTime<Utc>,
    r: &RemindersSection,
) -> Vec<Action> {
    let mut out = Vec::new();
    for (c, events, thread) in records {
        // A question to the robot's people waits on them, not on the
        // developers: no ping, and not stale while it is open.
        if c.question.is_some() {
            continue;
        }
        let pings: Vec<&OutboxEntry> = outbox
            .iter()
            .filter(|o| o.case_id == c.id && o.kind == OutboxKind::Reminder)
            .collect();
        let last_ping = pings.iter().map(|p| p.sent_at.unwrap_or(p.queued_at)).max();
        let action = stale(c, thread, last_ping, now, r)
            .or_else(|| ping(c, events, thread, &pings, last_ping, now, r));
        out.extend(action);
    }
    out
}

/// An open case nothing happened in (no mail, no change, no ping) for
/// `stale_days` goes stale.
fn stale(
    c: &Case,
    thread: &[ThreadEntry],
    last_ping: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    r: &RemindersSection,
) -> Option<Action> {
    let last_activity = thread
        .iter()
        .map(|t| t.received)
        .chain(std::iter::once(c.updated))
        .chain(last_ping)
        .max()
        .unwrap_or(c.updated);
    (r.stale_days > 0
        && !c.state.is_closed()
        && !matches!(c.state, CaseState::Queued | CaseState::NeedsHuman)
        && now - last_activity > Duration::days(r.stale_days))
    .then(|| Action::Stale {
        case: c.id.clone(),
        days: (now - last_activity).num_days(),
    })
}

/// The ping a case is due, if any: what it chases, once the wait for it
/// has passed since the case entered its state, the last ping, or the last
/// mail a person wrote in the thread.
fn ping(
    c: &Case,
    events: &[Event],
    thread: &[ThreadEntry],
    pings: &[&OutboxEntry],
    last_ping: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    r: &RemindersSection,
) -> Option<Action> {
    // A ping that has not left yet (held, failing) would reach the
    // thread together with the next one: one at a time.
    if pings.len() as u32 >= r.max_pings || pings.iter().any(|p| p.state.pending()) {
        return None;
    }
    // The last mail a person wrote in the thread, if any did.
    let last_word = thread
        .iter()
        .filter(|t| t.sender == Sender::Person)
        .map(|t| t.received)
        .max();
    let (chase, wait) = Chase::of(c.state, last_word.is_some(), r)?;
    let since = entered(events, c.state).map_or(c.created, |e| e.time);
    // A thread people still write in is not chased: the wait counts
    // from the last of the state's start, a ping, or a person's mail.
    let from = [Some(since), last_ping, last_word]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(since);
    // Only a mail of the thread: a ping never answers a message it
    // does not hold. It goes to the mail's From, name and all, as a
    // mail client's answer would.
    let promise = put_by(events, c.state)
        .and_then(|(id, _)| thread.iter().find(|t| t.message_id == *id))
        .map(|t| (t.message_id.clone(), mailbox(&t.from_name, &t.from)));
    (now - from > Duration::days(wait)).then(|| Action::Ping {
        case: c.id.clone(),
        chase,
        nth: pings.len() as u32 + 1,
        since,
        promise: promise.filter(|_| chase != Chase::NoReply),
    })
}

/// Run the reminders once: queue the pings, mark stale cases. Returns lines
/// saying what was done (or would be, with `dry_run`).
pub fn run(
    config: &Config,
    store: &Store,
    now: DateTime<Utc>,
    dry_run: bool,
) -> anyhow::Result<Vec<String>> {
    let r = &config.file.reminders;
    let mut records = store.case_records()?;
    // Adopted cases answer another robot's report: not ours to chase,
    // unless `track.remind` says so.
    if !config.file.track.remind {
        records.retain(|(c, _, _)| !c.adopted);
    }
    // A reply of the case that could not be read may be the answer a ping
    // would ask for: neither chased nor made stale; the digest names the
    // mail, and it is read again after an upgrade or a raised limit.
    let quarantined = store.quarantined()?;
    let unread = crate::model::Quarantined::by_case(&quarantined);
    records.retain(|(c, _, _)| !unread.contains_key(&c.id));
    let outbox = store.outbox_entries()?;
    let by_id: std::collections::HashMap<_, _> =
        records.iter().map(|rec| (&rec.0.id, rec)).collect();
    let mut lines = Vec::new();
    for a in due(&records, &outbox, now, r) {
        match a {
            Action::Stale { case, days } => {
                let seen = by_id.get(&case).map(|(c, _, _)| c);
                lines.extend(mark_stale(store, &case, seen, days, dry_run)?);
            }
            Action::Ping {
                case,
                chase,
                nth,
                since,
                promise,
            } => {
                let c = store.case(&case)?;
                // Named as the digest names them: their own mail's name.
                let on = by_id
                    .get(&case)
                    .and_then(|(_, e, t)| crate::model::case::waits_on_named(&c, e, t));
                lines.push(format!(
                    "case {case}: reminder {nth} of {} ({}){}",
                    r.max_pings,
                    chase.why(),
                    on.map(|w| format!(", waits on {w}")).unwrap_or_default()
                ));
                if !dry_run {
                    let mail = ReminderMail {
                        awaiting_revert: chase == Chase::Revert,
                        awaiting_fix: chase == Chase::Fix,
                        decided_on: since.format("%Y-%m-%d").to_string(),
                        reported_on: c.created.format("%Y-%m-%d").to_string(),
                        nth,
                        max: r.max_pings,
                        signature: &config.file.report.signature,
                    };
                    queue_ping(config, store, &c, &mail, promise.as_ref(), now)?;
                }
            }
        }
    }
    Ok(lines)
}

/// Mark a case stale (`seen`: the case as read with the records), unless a
/// reply moved it since it was read. Returns the line saying so, if it was
/// (or would be, with `dry_run`).
fn mark_stale(
    store: &Store,
    case: &crate::model::case::CaseId,
    seen: Option<&crate::model::case::Case>,
    days: i64,
    dry_run: bool,
) -> anyhow::Result<Option<String>> {
    let note = format!(
        "no activity for {}",
        crate::model::counted(days, "day", "days")
    );
    if !dry_run {
        let Some(seen) = seen else {
            return Ok(None);
        };
        let cause = Cause::system("reminders");
        // A reply that moved the case since it was read wins.
        if store
            .set_state_if(seen, CaseState::Stale, cause, &note)?
            .is_none()
        {
            return Ok(None);
        }
    }
    Ok(Some(format!("case {case}: {note}: stale")))
}

/// Queue one reminder in the case's thread: in answer to the promise it
/// waits on, to its sender besides the report's people; else to the
/// report's people, in answer to the report.
fn queue_ping(
    config: &Config,
    store: &Store,
    c: &crate::model::case::Case,
    mail: &ReminderMail<'_>,
    promise: Option<&(MessageId, String)>,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    let r = &config.file.reminders;
    let body = config.render_template(&r.template, mail)?;
    // The ping's place in the series makes it a distinct mail, and tells
    // the thread how many more may come; the shipped template says it
    // above the signature, a template of one's own gets it at the end.
    let place = format!("(reminder {} of {})", mail.nth, r.max_pings);
    let body = if body.contains(&place) {
        body
    } else {
        format!("{body}\n{place}\n")
    };
    // No recipients given: the report's To and Cc (`prepare_followup`).
    let (parent, to, cc) = match promise {
        Some((parent, promiser)) => {
            let to = std::iter::once(promiser.clone()).chain(c.to.clone());
            (Some(parent), to.collect(), c.cc.clone())
        }
        None => (None, Vec::new(), Vec::new()),
    };
    let f = FollowUp {
        kind: OutboxKind::Reminder,
        body: &body,
        parent,
        to,
        cc,
    };
    let (entry, raw) = prepare_followup(config, c, &f, now)?;
    store.queue_followup(
        &entry,
        &raw,
        Cause::system("reminders"),
        &format!("reminder {} queued", mail.nth),
    )?;
    Ok(())
}

/// What the reminder's template is given (`templates/reminder.hbs`).
#[derive(Debug, Serialize)]
struct ReminderMail<'a> {
    /// A revert was promised and not seen.
    awaiting_revert: bool,
    /// A fix was posted and not seen applied (neither: nobody answered).
    awaiting_fix: bool,
    /// When the revert was promised, or the fix posted.
    decided_on: String,
    reported_on: String,
    /// This reminder's place in the series, and the series' length.
    nth: u32,
    max: u32,
    signature: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::case::{Case, CaseId};
    use crate::model::MessageId;
    use crate::model::OutboxState;

    fn case(state: CaseState, created: DateTime<Utc>) -> Case {
        Case::sample("aaaaaaaaaaaa", state, created)
    }

    fn ping((at, state): (DateTime<Utc>, OutboxState)) -> OutboxEntry {
        OutboxEntry {
            message_id: MessageId::parse(&format!("p{}@x", at.timestamp())).unwrap(),
            case_id: CaseId::parse("aaaaaaaaaaaa").unwrap(),
            kind: OutboxKind::Reminder,
            subject: String::new(),
            state,
            recipients: vec![],
            attempts: 1,
            queued_at: at,
            next_attempt_at: at,
            sent_at: (state == OutboxState::Sent).then_some(at),
            last_error: None,
            server_reply: None,
            refused: vec![],
            held_because: None,
            fate_unknown: false,
        }
    }

    /// Reminders on, and a store, in `dir`.
    fn reminding(dir: &std::path::Path) -> (Config, Store) {
        let text = "[reminders]\nenabled = true\n";
        let config = Config::parse(text, "test", dir.to_path_buf()).unwrap();
        (config, Store::open(&dir.join("state")).unwrap())
    }

    /// A case with a reply that could not be read (quarantined with its
    /// case) is neither pinged nor made stale: that reply may be the answer.
    #[test]
    fn a_case_whose_reply_could_not_be_read_is_not_chased() {
        let tmp = tempfile::tempdir().unwrap();
        let (config, store) = reminding(tmp.path());
        let mut c = case(CaseState::Reported, Utc::now());
        c.to = vec!["Author <author@x>".into()];
        store.create_sample(&c);
        let later = |days| Utc::now() + Duration::days(days);
        // Without it, the same case is due a ping, later stale.
        let due = run(&config, &store, later(10), true).unwrap();
        assert_eq!(due.len(), 1, "{due:?}");
        let why = "22 MIME parts, over the limit of 10";
        let q = crate::model::Quarantined::sample("ab", "many@x", why, Utc::now(), Some(&c.id));
        store.quarantine(&q, b"raw\n").unwrap();
        for days in [10, 100] {
            assert_eq!(
                run(&config, &store, later(days), false).unwrap(),
                Vec::<String>::new()
            );
        }
        assert!(pings(&store).is_empty());
        assert_eq!(store.case(&c.id).unwrap().state, CaseState::Reported);
    }

    /// `run` on a real store: a case quiet past `stale_days` is marked
    /// stale once, a dry run only says so, and a stale case is left alone.
    #[test]
    fn a_quiet_case_goes_stale_once() {
        let tmp = tempfile::tempdir().unwrap();
        let (config, store) = reminding(tmp.path());
        let c = case(CaseState::Investigating, Utc::now());
        store.create_sample(&c);
        let later = Utc::now() + Duration::days(100);
        let said = |dry_run| run(&config, &store, later, dry_run).unwrap();
        let stale = vec![format!("case {}: no activity for 100 days: stale", c.id)];
        assert_eq!(said(true), stale);
        assert_eq!(store.case(&c.id).unwrap().state, CaseState::Investigating);
        assert_eq!(said(false), stale);
        assert_eq!(store.case(&c.id).unwrap().state, CaseState::Stale);
        assert_eq!(said(false), Vec::<String>::new());
    }

    /// A case put in `state` by `from`'s mail `id` saying `words`, its
    /// report to an author and a list.
    fn put_there(store: &Store, state: CaseState, id: &str, from: &str, words: &str) -> Case {
        let mut c = case(CaseState::Reported, Utc::now());
        c.to = vec!["Author <author@x>".into()];
        c.cc = vec!["list@x".into()];
        store.create_sample(&c);
        // `Name <addr>`: the mail's From as the store keeps it.
        let (name, address) = match from.split_once(" <") {
            Some((name, rest)) => (name, rest.trim_end_matches('>')),
            None => ("", from),
        };
        let mut mail = crate::model::ThreadEntry::sample(id, address, words);
        mail.from_name = name.into();
        store
            .record_thread_message(&c.id, &mut mail, "reply")
            .unwrap();
        let cause = Cause::Message {
            message_id: mail.message_id.clone(),
            from: address.into(),
            quote: words.into(),
        };
        store.set_state(&c.id, state, cause, "read").unwrap();
        c
    }

    /// The reminders queued, each with its mail.
    fn pings(store: &Store) -> Vec<(OutboxEntry, String)> {
        let outbox = store.outbox_entries().unwrap().into_iter();
        outbox
            .filter(|e| e.kind == OutboxKind::Reminder)
            .map(|e| {
                let raw = store.outbox_raw(&e.message_id).unwrap();
                (e, String::from_utf8(raw).unwrap())
            })
            .collect()
    }

    /// A revert promised and not seen: the ping answers the promise, to
    /// the one who made it besides the report's people.
    #[test]
    fn a_ping_answers_the_promise_it_waits_on() {
        let tmp = tempfile::tempdir().unwrap();
        let (config, store) = reminding(tmp.path());
        let words = "I'll revert it.";
        put_there(
            &store,
            CaseState::AwaitingRevert,
            "promise@x",
            "maint@x",
            words,
        );
        run(&config, &store, Utc::now() + Duration::days(15), false).unwrap();
        let pings = pings(&store);
        assert_eq!(pings.len(), 1);
        let (ping, raw) = &pings[0];
        assert_eq!(ping.recipients, ["maint@x", "author@x", "list@x"]);
        assert!(raw.contains("In-Reply-To: <promise@x>"), "{raw}");
        assert!(raw.contains("To: maint@x, Author <author@x>"), "{raw}");
        assert!(raw.contains("Cc: list@x"), "{raw}");
    }

    /// A fix posted and not seen applied: the ping answers the fix's mail,
    /// to its sender, and says how to close the case.
    #[test]
    fn a_ping_asks_after_the_posted_fix() {
        let tmp = tempfile::tempdir().unwrap();
        let (config, store) = reminding(tmp.path());
        let words = "[PATCH] xfs: fix it";
        // The author, whom the report's To spells `Author <author@x>`.
        let from = "Ann Thor <author@x>";
        let c = put_there(&store, CaseState::AwaitingFix, "fix@x", from, words);
        let said = run(&config, &store, Utc::now() + Duration::days(22), false).unwrap();
        // Named as their own mail names them, as the digest does.
        let line = format!(
            "case {}: reminder 1 of 2 (fix not seen applied), waits on {from}",
            c.id
        );
        assert_eq!(said, [line]);
        let (ping, raw) = &pings(&store)[0];
        // The author is already among the report's people: once.
        assert_eq!(ping.recipients, ["author@x", "list@x"]);
        assert!(raw.contains("In-Reply-To: <fix@x>"), "{raw}");
        assert!(raw.contains("To: \"Ann Thor\" <author@x>\r\n"), "{raw}");
        assert!(raw.contains("a fix for this report was posted"), "{raw}");
        assert!(raw.contains("#perfbot fixed <commit>"), "{raw}");
        assert!(!raw.contains("not a regression"), "{raw}");
    }

    /// The wait for a revert or a fix counts from the thread's last word by
    /// a person: a thread still talking is not chased.
    #[test]
    fn a_thread_people_still_write_in_is_not_chased() {
        let now = Utc::now();
        let r = RemindersSection::default();
        for (state, quiet_days, want) in [
            (CaseState::AwaitingFix, 5, false),
            (CaseState::AwaitingFix, 22, true),
            (CaseState::AwaitingRevert, 10, false),
            (CaseState::AwaitingRevert, 15, true),
        ] {
            let c = case(state, now - Duration::days(40));
            let mut said = crate::model::ThreadEntry::sample("w@x", "dev@x", "v2 soon");
            said.received = now - Duration::days(quiet_days);
            let due = due(&[(c, vec![], vec![said])], &[], now, &r);
            assert_eq!(!due.is_empty(), want, "{state}, quiet {quiet_days} days");
        }
    }

    #[test]
    fn table() {
        let now = Utc::now();
        let r = RemindersSection::default(); // 7 days, 14 for reverts, 21 for fixes, 2 pings, stale 90
        let d = |n| now - Duration::days(n);
        use OutboxState::{Dead, Failed, Held, Queued, Sent};
        // (state, created days ago, pings (days ago, state), a question to
        // the robot's people open) -> expected
        type Pings<'a> = &'a [(i64, OutboxState)];
        let cases: &[(CaseState, i64, Pings, bool, &str)] = &[
            (CaseState::Reported, 3, &[], false, "none"),
            (CaseState::Reported, 8, &[], false, "ping 1"),
            (CaseState::Reported, 20, &[(10, Sent)], false, "ping 2"),
            (CaseState::Reported, 20, &[(3, Sent)], false, "none"),
            (
                CaseState::Reported,
                40,
                &[(30, Sent), (20, Sent)],
                false,
                "none",
            ),
            // The first ping has not left: the second waits for it.
            (CaseState::Reported, 20, &[(10, Queued)], false, "none"),
            (CaseState::Reported, 20, &[(10, Held)], false, "none"),
            (CaseState::Reported, 20, &[(10, Failed)], false, "none"),
            // One an operator dropped counts, and blocks nothing.
            (CaseState::Reported, 20, &[(10, Dead)], false, "ping 2"),
            (CaseState::AwaitingRevert, 10, &[], false, "none"),
            (CaseState::AwaitingRevert, 15, &[], false, "ping 1"),
            (CaseState::Investigating, 30, &[], false, "none"),
            (CaseState::Investigating, 100, &[], false, "stale"),
            (CaseState::NotARegression, 100, &[], false, "none"),
            // Waiting on the robot's people: nobody else is chased.
            (CaseState::AwaitingRevert, 15, &[], true, "none"),
            (CaseState::AwaitingFix, 100, &[], true, "none"),
            (CaseState::AwaitingFix, 20, &[], false, "none"),
            (CaseState::AwaitingFix, 22, &[], false, "ping 1"),
            (CaseState::Fixed, 100, &[], false, "none"),
        ];
        for (state, age, pings, asked, want) in cases {
            let mut c = case(*state, d(*age));
            if *asked {
                c.question = Some(crate::model::case::Question::sample(
                    "Could you run it again?",
                    d(*age),
                ));
            }
            let rec = vec![(c, vec![], vec![])];
            let ob: Vec<OutboxEntry> = pings.iter().map(|(p, s)| ping((d(*p), *s))).collect();
            let got = match due(&rec, &ob, now, &r).first() {
                None => "none".to_string(),
                Some(Action::Ping { nth, .. }) => format!("ping {nth}"),
                Some(Action::Stale { .. }) => "stale".to_string(),
            };
            assert_eq!(
                got, *want,
                "{state} created {age} days ago, pings {pings:?}"
            );
        }
    }
}
