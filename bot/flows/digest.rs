//! The digest flow: read the records from the store, render the digest with its
//! template, queue it as a mail to the operators.

use chrono::{DateTime, Utc};

pub use crate::digest::{build, parse_since, view, Digest, Thresholds, MAX_DAYS};
use crate::mail::message::BuildError;
use crate::store::{Store, StoreError};
use crate::templates::TemplateError;

#[derive(Debug, thiserror::Error)]
pub enum DigestError {
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error(transparent)]
    Mail(#[from] BuildError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Read everything the digest needs from the store.
pub fn from_store(
    store: &Store,
    now: DateTime<Utc>,
    since: DateTime<Utc>,
    t: Thresholds,
) -> Result<Digest, StoreError> {
    let mut d = build(
        &store.case_records()?,
        &store.outbox_entries()?,
        now,
        since,
        t,
    );
    let a = crate::flows::learn::agreement(&store.labels()?, since);
    d.settled_by_humans = a.settled;
    d.agreed_with_humans = a.agreed;
    d.unread = crate::digest::Unread::new(&store.quarantined()?, store.unreadable(None)?.len());
    Ok(d)
}

/// Render the digest as text (`templates/digest.hbs` or the built-in copy).
pub fn render_text(config: &crate::config::Config, d: &Digest) -> Result<String, TemplateError> {
    let v = crate::digest::View {
        signature: Some(&config.file.report.signature),
        ..view(d)
    };
    config.render_template(&config.file.digest.template, &v)
}

/// Where the daemon keeps when it last queued the digest on its schedule
/// (RFC 3339, in the store's meta).
pub const LAST_SCHEDULED: &str = "last_digest";

/// Why a digest mail is queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occasion {
    /// `digest --send`: the schedule is left as it is.
    ByHand,
    /// The daemon's schedule: the digest and the time it was due are
    /// recorded together (`LAST_SCHEDULED`).
    Scheduled,
}

/// When the daemon last queued the digest on its schedule.
pub fn last_scheduled(store: &Store) -> Result<Option<DateTime<Utc>>, StoreError> {
    Ok(store
        .meta_get(LAST_SCHEDULED)?
        .and_then(|v| DateTime::parse_from_rfc3339(&v).ok())
        .map(|t| t.with_timezone(&Utc)))
}

/// Queue the digest as a mail to the operators (or `digest.to`). Returns the
/// Message-ID, or `None` when nobody is configured to get it.
pub fn queue_mail(
    config: &crate::config::Config,
    store: &Store,
    d: &Digest,
    occasion: Occasion,
) -> Result<Option<crate::model::MessageId>, DigestError> {
    use crate::mail::message::{build as build_mail, Envelope};
    let to = config.digest_to();
    if to.is_empty() {
        return Ok(None);
    }
    let body = render_text(config, d)?;
    let bot = &config.file.bot;
    let id = crate::model::MessageId::parse(&format!(
        "perfbot.digest.{}@{}",
        d.generated.format("%Y%m%d%H%M%S"),
        bot.message_id_domain
    ))
    .expect("valid id");
    let subject = subject(d);
    let env = Envelope {
        from: bot.sender(),
        to: to.clone(),
        cc: Vec::new(),
        subject: subject.clone(),
        message_id: id.clone(),
        in_reply_to: None,
        references: Vec::new(),
        date: std::time::SystemTime::from(d.generated),
        charset: crate::model::Charset::Utf8,
        extra: vec![("Auto-Submitted".into(), "auto-generated".into())],
        attachments: Vec::new(),
    };
    let raw = build_mail(&env, &body)?;
    let entry = crate::model::OutboxEntry::queued(
        id.clone(),
        crate::model::case::CaseId::system(),
        crate::model::OutboxKind::Digest,
        subject,
        to.iter()
            .map(|a| crate::model::ids::bare_address(a))
            .collect(),
        d.generated,
    );
    let when = d.generated.to_rfc3339();
    let note = (occasion == Occasion::Scheduled).then_some((LAST_SCHEDULED, when.as_str()));
    store.queue_system_mail_noting(&entry, &raw, note)?;
    Ok(Some(id))
}

/// The digest mail's Subject: the day and what waits on whom.
fn subject(d: &Digest) -> String {
    let humans = d.needs_human.len();
    format!(
        "[perfbot] digest {}: {humans} {}, {} overdue, {} closed",
        d.generated.format("%Y-%m-%d"),
        if humans == 1 {
            "needs a human"
        } else {
            "need a human"
        },
        d.overdue.len(),
        d.recently_closed.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A digest queued on the schedule records when, with the mail; one
    /// queued by hand leaves the schedule as it is.
    #[test]
    fn only_the_scheduled_digest_moves_the_schedule() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("state")).unwrap();
        let config = crate::config::Config::parse(
            "[digest]\nto = [\"ops@example.test\"]\n",
            "test",
            tmp.path().to_path_buf(),
        )
        .unwrap();
        let t = crate::digest::Thresholds {
            awaiting_days: 14,
            no_reply_days: 7,
        };
        let at = |s: i64| chrono::DateTime::from_timestamp(1_780_000_000 + s, 0).unwrap();
        let d = crate::digest::build(&[], &[], at(0), at(0), t);
        let id = queue_mail(&config, &store, &d, Occasion::ByHand).unwrap();
        assert!(id.is_some());
        assert_eq!(last_scheduled(&store).unwrap(), None);
        // Due in the same second: the same mail, queued once, and noted.
        let again = queue_mail(&config, &store, &d, Occasion::Scheduled).unwrap();
        assert_eq!(again, id);
        assert_eq!(last_scheduled(&store).unwrap(), Some(at(0)));
        assert_eq!(store.outbox_entries().unwrap().len(), 1);
        let d = crate::digest::build(&[], &[], at(60), at(60), t);
        let id = queue_mail(&config, &store, &d, Occasion::Scheduled).unwrap();
        assert_eq!(last_scheduled(&store).unwrap(), Some(at(60)));
        assert_eq!(
            store.outbox_entry(id.as_ref().unwrap()).unwrap().subject,
            subject(&d)
        );
    }

    /// Sections stand apart by one blank line, the signature too, and the
    /// Subject's verb agrees with its count.
    #[test]
    fn the_text_digest_is_laid_out_in_sections() {
        let config = crate::config::Config::load(None).unwrap();
        let now = chrono::Utc::now();
        let t = crate::digest::Thresholds {
            awaiting_days: 14,
            no_reply_days: 7,
        };
        let cases: Vec<_> = ["aaaaaaaaaaaa", "bbbbbbbbbbbb"]
            .iter()
            .map(|id| {
                let c = crate::model::case::Case::sample(
                    id,
                    crate::model::case::CaseState::NeedsHuman,
                    now,
                );
                (c, vec![], vec![])
            })
            .collect();
        let d = crate::digest::build(&cases[..1], &[], now, now, t);
        let text = render_text(&config, &d).unwrap();
        assert!(!text.contains("\n\n\n"), "{text}");
        assert!(
            text.contains("\n\n== Overdue (0)\n\n== Closed recently (0)\n\n-- \n"),
            "{text}"
        );
        assert!(subject(&d).ends_with(": 1 needs a human, 0 overdue, 0 closed"));
        let d = crate::digest::build(&cases, &[], now, now, t);
        assert!(subject(&d).ends_with(": 2 need a human, 0 overdue, 0 closed"));
        let d = crate::digest::build(&[], &[], now, now, t);
        assert!(subject(&d).ends_with(": 0 need a human, 0 overdue, 0 closed"));
    }

    /// The text digest has a section for the reports read at a glance only,
    /// and none when there are none.
    #[test]
    fn the_text_digest_lists_reports_read_at_a_glance() {
        let config = crate::config::Config::load(None).unwrap();
        let now = chrono::Utc::now();
        let mut c = crate::model::case::Case::sample(
            "aaaaaaaaaaaa",
            crate::model::case::CaseState::Reported,
            now,
        );
        let t = crate::digest::Thresholds {
            awaiting_days: 14,
            no_reply_days: 7,
        };
        let text = |c: &crate::model::case::Case| {
            let d = crate::digest::build(&[(c.clone(), vec![], vec![])], &[], now, now, t);
            render_text(&config, &d).unwrap()
        };
        assert!(!text(&c).contains("read at a glance"), "{}", text(&c));
        c.unread = Some("no text part".into());
        let shown = text(&c);
        assert!(
            shown.contains("== Reports read at a glance only (1)")
                && shown.contains("* aaaaaaaaaaaa [xfs] aaaaaaaaaaaa: fio.write_iops -9% regression: no text part"),
            "{shown}"
        );
    }

    /// A followed report with one reply, a day old, and no subsystem: the
    /// counts agree with their nouns, and the case is grouped under
    /// "(none)", not "-".
    #[test]
    fn the_text_digest_counts_in_words() {
        use crate::model::case::{Case, CaseState};
        let config = crate::config::Config::load(None).unwrap();
        let now = chrono::Utc::now();
        let mut c = Case::sample(
            "aaaaaaaaaaaa",
            CaseState::Reported,
            now - chrono::Duration::days(1),
        );
        c.adopted = true;
        c.subsystem = None;
        let mut reply = crate::model::ThreadEntry::sample("r@x", "dev@x", "Looking.");
        reply.date = Some(c.created + chrono::Duration::hours(50));
        let t = crate::digest::Thresholds {
            awaiting_days: 14,
            no_reply_days: 7,
        };
        let since = now - chrono::Duration::days(7);
        let d = crate::digest::build(&[(c.clone(), vec![], vec![reply])], &[], now, since, t);
        let text = render_text(&config, &d).unwrap();
        assert!(text.contains("Open by subsystem: (none) 1\n"), "{text}");
        assert!(text.contains("\n(none):\n* aaaaaaaaaaaa "), "{text}");
        assert!(
            text.contains(": reported, 1 reply, first after 2 d"),
            "{text}"
        );
        let d = crate::digest::build(&[(c, vec![], vec![])], &[], now, since, t);
        let text = render_text(&config, &d).unwrap();
        assert!(text.contains("regression (1 day)\n"), "{text}");
    }

    /// The text digest says whom the open cases wait on, with the counts in
    /// words, and has no such section when nothing waits on anyone.
    #[test]
    fn the_text_digest_says_whom_cases_wait_on() {
        use crate::model::case::{Case, CaseState};
        let config = crate::config::Config::load(None).unwrap();
        let now = chrono::Utc::now();
        let reported = |id: &str, days: i64| {
            let mut c = Case::sample(id, CaseState::Reported, now - chrono::Duration::days(days));
            c.to = vec!["Dave <dave@example.org>".into()];
            (c, vec![], vec![])
        };
        let t = crate::digest::Thresholds {
            awaiting_days: 14,
            no_reply_days: 7,
        };
        let text = |records: &[crate::model::case::CaseRecord]| {
            let d = crate::digest::build(records, &[], now, now, t);
            render_text(&config, &d).unwrap()
        };
        let shown = text(&[reported("aaaaaaaaaaaa", 0), reported("bbbbbbbbbbbb", 1)]);
        let want = "\n\n== Waiting on (1 person, 2 open cases)\n\
            * Dave <dave@example.org>:\n\
            \x20 bbbbbbbbbbbb reported for 1 day: [xfs] bbbbbbbbbbbb: fio.write_iops -9% regression\n\
            \x20 aaaaaaaaaaaa reported for less than a day: [xfs] aaaaaaaaaaaa: fio.write_iops -9% regression\n\
            \n== Closed recently (0)";
        assert!(shown.contains(want), "{shown}");
        // A person many cases wait on: their longest waits, and how to
        // list the rest; past the people shown, how many more.
        let mut records: Vec<_> = (0..4).map(|i| reported(&format!("{i:012x}"), i)).collect();
        records.extend((0..crate::digest::SHOWN_PEOPLE).map(|i| {
            let (mut c, e, t) = reported(&format!("{:012x}", 100 + i), 0);
            c.to = vec![format!("dev{i}@example.org")];
            (c, e, t)
        }));
        let shown = text(&records);
        let want = "\n* Dave <dave@example.org> (4 cases):\n\
            \x20 000000000003 reported for 3 days: [xfs] 000000000003: fio.write_iops -9% regression\n\
            \x20 000000000002 reported for 2 days: [xfs] 000000000002: fio.write_iops -9% regression\n\
            \x20 000000000001 reported for 1 day: [xfs] 000000000001: fio.write_iops -9% regression\n\
            \x20 and 1 more: perfbot cases list --waits-on dave@example.org\n\
            * dev0@example.org:\n";
        assert!(shown.contains(want), "{shown}");
        assert!(
            shown.contains("\nAnd 1 more person.\n\n== Closed"),
            "{shown}"
        );
        assert!(
            shown.contains("== Waiting on (21 people, 24 open cases)"),
            "{shown}"
        );
        let (mut closed, _, _) = reported("cccccccccccc", 3);
        closed.state = CaseState::WontFix;
        let shown = text(&[(closed, vec![], vec![])]);
        assert!(!shown.contains("Waiting on"), "{shown}");
        assert!(!shown.contains("\n\n\n"), "{shown}");
    }

    /// Mail kept but not read: the newest quarantined messages by hash,
    /// when and why, how many more, and the archive messages not read; no
    /// section when all was read.
    #[test]
    fn the_text_digest_names_mail_it_could_not_read() {
        use chrono::TimeZone;
        let config = crate::config::Config::load(None).unwrap();
        let now = chrono::Utc::now();
        let t = crate::digest::Thresholds {
            awaiting_days: 14,
            no_reply_days: 7,
        };
        let quarantined = |i: u32| crate::model::Quarantined {
            hash: format!("{i:02}{}", "ab".repeat(31)),
            reason: format!("reason {i}"),
            source: "stdin".into(),
            size: 12,
            message_id: i.is_multiple_of(2).then(|| format!("m{i}@x")),
            time: chrono::Utc.with_ymd_and_hms(2026, 11, 1, 0, i, 0).unwrap(),
            // The second was matched to a case before it could not be read.
            case: (i == 2).then(|| crate::model::case::CaseId::parse("0123456789ab").unwrap()),
        };
        let text = |q: &[crate::model::Quarantined], unreadable: usize| {
            let mut d = crate::digest::build(&[], &[], now, now, t);
            d.unread = crate::digest::Unread::new(q, unreadable);
            render_text(&config, &d).unwrap()
        };
        let shown = text(&[], 0);
        assert!(!shown.contains("could not be read"), "{shown}");
        let shown = text(&[quarantined(1), quarantined(2)], 0);
        let want = "\n\n== Mail that could not be read (2): `perfbot quarantine list` shows it, \
            `perfbot quarantine retry` (or a restart of `perfbot run`) reads it again\n\
            * 2026-11-01 00:02 UTC 02ababababababab <m2@x>, a reply in case 0123456789ab: reason 2\n\
            * 2026-11-01 00:01 UTC 01ababababababab (no Message-ID): reason 1\n\n== ";
        assert!(shown.contains(want), "{shown}");
        let many: Vec<_> = (0..12).map(quarantined).collect();
        let shown = text(&many, 3);
        assert!(
            shown.contains("== Mail that could not be read (15)"),
            "{shown}"
        );
        assert_eq!(
            shown.matches("\n* 2026-11-01 ").count(),
            crate::digest::SHOWN_UNREAD,
            "{shown}"
        );
        assert!(
            shown.contains(
                ": reason 2\nAnd 2 more.\n\
                3 messages of mailboxes or archives could not be read (`perfbot quarantine list` says where and why).\n\n"
            ),
            "{shown}"
        );
        assert!(!shown.contains("\n\n\n"), "{shown}");
    }
}
