//! Who sent a message, as far as acting on it goes: perfbot itself, another
//! robot (or a bounce), or a person. Only a person's mail may ever trigger
//! anything; the other two are recorded and left alone, so no mail loop can
//! start here.

use super::parse::Head;
use crate::model::Address;
pub use crate::model::SenderKind;

/// What perfbot knows of itself and of other robots.
#[derive(Debug, Clone)]
pub struct Identity {
    pub own_addresses: Vec<Address>,
    pub message_id_domain: String,
    /// Addresses or display-name fragments of known robots (lower case).
    pub robots: Vec<String>,
}

/// Robots that answer on kernel lists (matched against address and name).
pub const KNOWN_ROBOTS: &[&str] = &[
    "lkp@intel.com",
    "kernel test robot",
    "syzbot",
    "syzkaller",
    "patchwork-bot",
    "regzbot",
    "regressions@leemhuis.info",
    "kernelci",
    "linux-next-bot",
    "0-day",
    "intel-gfx-ci",
    "patchwork@",
    "noreply",
    "no-reply",
    "mailer-daemon",
    "postmaster@",
];

pub fn classify(head: &Head, me: &Identity) -> SenderKind {
    let from = head.from.as_ref().map(Address::as_str).unwrap_or("");
    if me.own_addresses.iter().any(|a| a.as_str() == from)
        || head
            .message_id
            .as_str()
            .ends_with(&format!("@{}", me.message_id_domain))
        || head.auto_headers.iter().any(|(n, _)| n == "X-Perfbot-Case")
    {
        return SenderKind::Own;
    }
    if let Some(why) = automatic(head) {
        return SenderKind::Bot(why);
    }
    let name = head.from_name.to_ascii_lowercase();
    for r in KNOWN_ROBOTS
        .iter()
        .copied()
        .chain(me.robots.iter().map(String::as_str))
    {
        if from.contains(r) || (!name.is_empty() && name.contains(r)) {
            return SenderKind::Bot(format!("known robot ({r})"));
        }
    }
    SenderKind::Person
}

/// Why a mail's headers say a program sent it (an auto-reply, a bounce, a
/// delivery report), if they do. A robot's name in From is not such a
/// header: its people type mail under it too.
pub fn automatic(head: &Head) -> Option<String> {
    // Mailing-list software (vger, kvack) stamps `Precedence: bulk` on every
    // post it relays: on a list copy it says nothing of the author.
    let via_list = head.auto_headers.iter().any(|(n, _)| n == "List-Id");
    for (name, value) in &head.auto_headers {
        let v = value.to_ascii_lowercase();
        let bot = match name.as_str() {
            "Auto-Submitted" => v != "no",
            "X-Auto-Response-Suppress" => true,
            "Precedence" if via_list => matches!(v.as_str(), "junk" | "auto_reply"),
            "Precedence" => matches!(v.as_str(), "bulk" | "junk" | "auto_reply"),
            // A bounce has the null reverse path.
            "Return-Path" => v == "<>",
            "X-Patchwork-Bot" => true,
            _ => false,
        };
        if bot {
            return Some(format!("{name}: {value}"));
        }
    }
    if matches!(
        head.content_type.as_str(),
        "multipart/report" | "message/delivery-status"
    ) {
        return Some(format!("a delivery report ({})", head.content_type));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::ingest::parse::{parse_head, Limits};

    fn kind(headers: &str) -> SenderKind {
        let raw = format!("Message-ID: <x@y.org>\r\n{headers}\r\n\r\nbody");
        let me = Identity {
            own_addresses: vec![Address::parse("perfbot@ci.example").unwrap()],
            message_id_domain: "perfbot.ci.example".into(),
            robots: vec!["ci-bot@example.org".into()],
        };
        classify(
            &parse_head(raw.as_bytes(), &Limits::default()).unwrap(),
            &me,
        )
    }

    #[test]
    fn table() {
        let cases: &[(&str, &str)] = &[
            ("From: Dave Chinner <david@fromorbit.com>", "person"),
            ("From: kernel test robot <perfbot@ci.example>", "own"),
            ("From: someone@x.org\r\nX-Perfbot-Case: 0123456789ab", "own"),
            ("From: a@b.org\r\nAuto-Submitted: auto-replied", "bot"),
            ("From: a@b.org\r\nAuto-Submitted: no", "person"),
            ("From: a@b.org\r\nX-Auto-Response-Suppress: All", "bot"),
            ("From: a@b.org\r\nPrecedence: bulk", "bot"),
            ("From: a@b.org\r\nPrecedence: list", "person"),
            // A list copy: the list stamped it bulk, not the author.
            (
                "From: a@b.org\r\nPrecedence: bulk\r\nList-Id: <linux-mm.kvack.org>",
                "person",
            ),
            (
                "From: a@b.org\r\nAuto-Submitted: auto-replied\r\nList-Id: <l.kernel.org>",
                "bot",
            ),
            ("From: syzbot <syzbot+abc@syzkaller.appspotmail.com>", "bot"),
            ("From: kernel test robot <lkp@intel.com>", "bot"),
            (
                "From: \"Regzbot (on behalf of Thorsten Leemhuis)\" <regressions@leemhuis.info>",
                "bot",
            ),
            ("From: Thorsten Leemhuis <regressions@leemhuis.info>", "bot"),
            ("From: MAILER-DAEMON@mx.example.org", "bot"),
            ("From: a@b.org\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=x", "bot"),
            ("From: Someone <ci-bot@example.org>", "bot"),
            ("From: a@b.org\r\nReturn-Path: <>", "bot"),
        ];
        for (h, want) in cases {
            assert_eq!(kind(h).as_str(), *want, "{h}");
        }
    }
}
