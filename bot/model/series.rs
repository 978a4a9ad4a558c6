//! Patch series: what stays the same from one version of a series to the
//! next, so that a report on v2 finds the case of v1.

use super::subject::strip_reply_prefix;

/// A patch subject without its `Re:` and `[PATCH v3 2/5]` prefixes: what
/// stays the same from one version of a series to the next.
pub fn series_key(subject: &str) -> Option<String> {
    let mut s = subject.trim();
    let mut patch = false;
    loop {
        // Reply prefixes come before the patch's tag; after it, "fw: …" is
        // the patch's title, and only a stray "Re:" goes.
        let reply = strip_reply_prefix(s).filter(|_| !patch);
        if let Some(r) = reply.or_else(|| s.strip_prefix("Re:").or_else(|| s.strip_prefix("RE:"))) {
            s = r.trim_start();
        } else if s.starts_with('[') {
            let Some(end) = s.find(']') else { break };
            patch |= s[..end].to_ascii_uppercase().contains("PATCH");
            s = s[end + 1..].trim_start();
        } else {
            break;
        }
    }
    (patch && !s.is_empty()).then(|| s.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::series_key;

    #[test]
    fn versions_of_a_series_share_their_key() {
        for (subject, want) in [
            (
                "Re: [PATCH v3 2/5] xfs: prealloc less",
                Some("xfs: prealloc less"),
            ),
            ("[PATCH 2/5] xfs: prealloc less", Some("xfs: prealloc less")),
            ("Re: [f2fs-dev] [PATCH RFC v2] f2fs: x", Some("f2fs: x")),
            ("[xfs] 0b02c8c0d7: fio.write_iops -9.0% regression", None),
            ("Re: [PATCH]", None),
            // Another mailer's reply prefix; a patch title that looks like one.
            (
                "AW: [PATCH v2] xfs: prealloc less",
                Some("xfs: prealloc less"),
            ),
            (
                "回复: [PATCH v2] xfs: prealloc less",
                Some("xfs: prealloc less"),
            ),
            ("[PATCH] fw: add a table", Some("fw: add a table")),
        ] {
            assert_eq!(series_key(subject).as_deref(), want, "{subject}");
        }
    }

    use proptest::prelude::*;

    proptest::proptest! {
        /// Every version, part, tag and reply of a patch has its series'
        /// key: the subject's own words, lower-cased.
        #[test]
        fn prefixes_never_change_the_key(
            prefixes in proptest::collection::vec(prop_oneof![
                Just("Re: ".to_string()),
                Just("RE: ".to_string()),
                "\\[net-next\\] ",
                (1u8..9, 1u8..9, 1u8..9).prop_map(|(v, i, n)| format!("[PATCH v{v} {i}/{n}] ")),
                Just("[PATCH RFC] ".to_string()),
            ], 0..4),
            // Not itself a prefix: no `Re:` or `[` first.
            words in "[a-qs-zA-QS-Z0-9_.,-][A-Za-z0-9:_.,-]{0,9}( [A-Za-z0-9:_.,-]{1,10}){0,5}",
        ) {
            let subject = format!("{}[PATCH] {words}", prefixes.concat());
            prop_assert_eq!(series_key(&subject), Some(words.to_ascii_lowercase()));
        }
    }
}
