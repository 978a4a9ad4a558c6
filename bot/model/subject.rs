//! What a Subject says of its mail: a reply (or forward) to another, or a
//! patch posted. Threading, the patch-series key and the reader's features
//! all ask, so one answer serves them all.

use std::sync::LazyLock;

use regex::Regex;

/// Reply and forward prefixes in the languages kernel developers' mailers
/// write, repeated: `Re: AW: Fwd:`, `RE[2]:`, `回复：`.
static PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\s*(?:(?:re|aw|sv|vs|antw|wg|fw|fwd|tr|r|odp|res|rif|回复|回覆|答复|答覆|转发|轉寄)\s*(?:\[\d+\]|\(\d+\))?\s*[:：]\s*)+",
    )
    .unwrap()
});

/// The subject without its reply/forward prefixes, if it had any.
pub fn strip_reply_prefix(subject: &str) -> Option<&str> {
    let m = PREFIX.find(subject)?;
    (m.end() > 0).then(|| &subject[m.end()..])
}

/// Whether a Subject answers or forwards another mail: a prefix first, or
/// after the list's tags (`[f2fs-dev] Re: …`).
pub fn is_reply(subject: &str) -> bool {
    strip_reply_prefix(without_list_tags(subject)).is_some()
}

/// Whether a Subject posts a patch (`[PATCH …]`, `[PATCH v2 1/3]`), not a
/// reply to one.
pub fn posts_a_patch(subject: &str) -> bool {
    !is_reply(subject) && subject.to_ascii_lowercase().contains("[patch")
}

/// What a thread is about, whatever the mailer did to its Subject: without
/// list tags and reply prefixes (however many and in whatever order), blanks
/// collapsed, in lower case. A reply and the mail it answers share it.
pub fn topic(subject: &str) -> String {
    let mut s = subject;
    loop {
        let t = without_list_tags(s);
        match strip_reply_prefix(t) {
            Some(rest) => s = rest,
            None => break s = t,
        }
    }
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The subject past its leading `[…]` tags that are no patch's.
fn without_list_tags(subject: &str) -> &str {
    let mut s = subject.trim_start();
    while s.starts_with('[') {
        let Some(end) = s.find(']') else { break };
        if s[..end].to_ascii_uppercase().contains("PATCH") {
            break;
        }
        s = s[end + 1..].trim_start();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        // (subject, without its reply prefix, a reply, posts a patch)
        let cases: &[(&str, Option<&str>, bool, bool)] = &[
            (
                "Re: [PATCH] xfs: fix",
                Some("[PATCH] xfs: fix"),
                true,
                false,
            ),
            ("RE: Re: AW: x", Some("x"), true, false),
            ("RE[2]: x", Some("x"), true, false),
            ("SV: x", Some("x"), true, false),
            ("Fwd: x", Some("x"), true, false),
            ("回复: [PATCH] x", Some("[PATCH] x"), true, false),
            ("答复：[PATCH] x", Some("[PATCH] x"), true, false),
            ("[f2fs-dev] Re: [PATCH] x", None, true, false),
            ("[PATCH v2 1/3] xfs: fix", None, false, true),
            ("[f2fs-dev] [PATCH] f2fs: x", None, false, true),
            // A patch's own words that look like a prefix are its title.
            ("[PATCH] fw: add a table", None, false, true),
            ("r8169: fix", None, false, false),
            ("Reverse the order", None, false, false),
            ("", None, false, false),
        ];
        for &(subject, stripped, reply, patch) in cases {
            assert_eq!(strip_reply_prefix(subject), stripped, "{subject}");
            assert_eq!(is_reply(subject), reply, "{subject}");
            assert_eq!(posts_a_patch(subject), patch, "{subject}");
        }
    }

    #[test]
    fn topics() {
        let cases: &[(&str, &str)] = &[
            (
                "Re: [PATCH v2 3/5] mm: memcg: make stats",
                "[patch v2 3/5] mm: memcg: make stats",
            ),
            (
                "[cgroups] RE: Re:  [PATCH v2 3/5]  mm: memcg:\n make stats",
                "[patch v2 3/5] mm: memcg: make stats",
            ),
            ("Re: [f2fs-dev] Re: [PATCH] x", "[patch] x"),
            ("回复: [PATCH] X", "[patch] x"),
            (
                "[xfs]  0b02c8c0d7:  fio.write_iops -9.0% regression",
                "0b02c8c0d7: fio.write_iops -9.0% regression",
            ),
            ("Re: ", ""),
            ("", ""),
        ];
        for &(subject, want) in cases {
            assert_eq!(topic(subject), want, "{subject}");
        }
    }
}
