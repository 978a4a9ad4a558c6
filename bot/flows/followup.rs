//! Mail perfbot sends about an existing case (acks, reminders, escalations, an
//! operator's reply): always in the case's thread, with a `Re:` subject.

use std::time::SystemTime;

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::mail::message::{self, dedup_recipients, BuildError, Envelope};
use crate::model::case::Case;
use crate::model::ids::bare_address;
use crate::model::MessageId;
use crate::model::{OutboxEntry, OutboxKind};

/// What to say, to whom, under which message of the thread.
#[derive(Debug, Clone)]
pub struct FollowUp<'a> {
    /// `ack`, `reminder`, `escalation`, `note`.
    pub kind: OutboxKind,
    pub body: &'a str,
    /// The message answered; the report itself when `None`.
    pub parent: Option<&'a MessageId>,
    /// Recipients; the report's To and Cc when both are empty.
    pub to: Vec<String>,
    pub cc: Vec<String>,
}

/// `Re: <subject>`, without piling up `Re: Re:`.
pub fn re_subject(subject: &str) -> String {
    let s = subject.trim();
    if s.len() >= 3 && s[..3].eq_ignore_ascii_case("re:") {
        s.to_string()
    } else {
        format!("Re: {s}")
    }
}

/// The thread's References for an answer to `parent`: the report's own
/// references, the report, then the parent (RFC 5322 §3.6.4, shortened to the
/// thread's root and the parent, which is what threading readers use).
pub fn references(case: &Case, parent: Option<&MessageId>) -> Vec<MessageId> {
    let mut refs = case.references.clone();
    refs.push(case.message_id.clone());
    if let Some(p) = parent {
        if !refs.contains(p) {
            refs.push(p.clone());
        }
    }
    refs
}

/// The follow-up's Message-ID depends only on the case, the kind, the parent and
/// the text: the same follow-up queued twice is the same mail.
pub fn followup_id(config: &Config, case: &Case, f: &FollowUp) -> MessageId {
    let mut h = Sha256::new();
    for part in [
        case.key.as_str(),
        f.kind.as_str(),
        f.parent.map(MessageId::as_str).unwrap_or(""),
        f.body,
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    let hex: String = h
        .finalize()
        .iter()
        .take(10)
        .map(|b| format!("{b:02x}"))
        .collect();
    MessageId::parse(&format!(
        "perfbot.{}.{}.{hex}@{}",
        f.kind, case.id, config.file.bot.message_id_domain
    ))
    .expect("perfbot makes valid ids")
}

/// Build the mail and its outbox entry (state queued).
pub fn prepare_followup(
    config: &Config,
    case: &Case,
    f: &FollowUp,
    now: DateTime<Utc>,
) -> Result<(OutboxEntry, Vec<u8>), BuildError> {
    let bot = &config.file.bot;
    let (to, cc) = if f.to.is_empty() && f.cc.is_empty() {
        dedup_recipients(&case.to, &case.cc)
    } else {
        dedup_recipients(&f.to, &f.cc)
    };
    let id = followup_id(config, case, f);
    let env = Envelope {
        attachments: Vec::new(),
        from: bot.sender(),
        to: to.clone(),
        cc: cc.clone(),
        subject: re_subject(&case.subject),
        message_id: id.clone(),
        in_reply_to: Some(f.parent.unwrap_or(&case.message_id).clone()),
        references: references(case, f.parent),
        date: SystemTime::from(now),
        charset: crate::model::Charset::Utf8,
        extra: if f.kind == OutboxKind::Note {
            // Written by a human operator: an ordinary mail.
            vec![("X-Perfbot-Case".into(), case.id.to_string())]
        } else {
            // RFC 3834: other robots must not answer it.
            vec![
                ("X-Perfbot-Case".into(), case.id.to_string()),
                ("Auto-Submitted".into(), "auto-replied".into()),
            ]
        },
    };
    let raw = message::build(&env, f.body)?;
    let entry = OutboxEntry::queued(
        id,
        case.id.clone(),
        f.kind,
        env.subject.clone(),
        to.iter().chain(&cc).map(|a| bare_address(a)).collect(),
        now,
    );
    Ok((entry, raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects() {
        assert_eq!(re_subject("[xfs] abc: fio"), "Re: [xfs] abc: fio");
        assert_eq!(re_subject("RE: x"), "RE: x");
        assert_eq!(re_subject("Re: x"), "Re: x");
    }
}
