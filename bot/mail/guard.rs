//! Guard rails on outgoing mail: emergency stop, rate limits, retry backoff,
//! opt-outs and the staging redirect. Pure decisions; `deliver` applies them.

use chrono::{DateTime, Duration, Utc};

use crate::config::Config;
use crate::model::ids::OptOuts;
use crate::model::Address;

/// Why nothing may be sent right now, if so.
pub fn stop_reason(config: &Config) -> Option<String> {
    if config.file.outbound.emergency_stop {
        return Some("outbound.emergency_stop is set in the config".into());
    }
    let f = config.stop_file();
    f.exists()
        .then(|| format!("stop file {} exists (remove it to resume)", f.display()))
}

/// How many more mails the hourly and daily limits allow at `now`, given when
/// the earlier ones left; and when the next one will be allowed if none is.
pub fn budget(
    sent: &[DateTime<Utc>],
    now: DateTime<Utc>,
    per_hour: u32,
    per_day: u32,
) -> (usize, Option<DateTime<Utc>>) {
    let mut allowed = usize::MAX;
    let mut next = None;
    for (limit, window) in [(per_hour, Duration::hours(1)), (per_day, Duration::days(1))] {
        if limit == 0 {
            continue;
        }
        let mut inside: Vec<DateTime<Utc>> = sent
            .iter()
            .copied()
            .filter(|t| *t > now - window && *t <= now)
            .collect();
        let left = (limit as usize).saturating_sub(inside.len());
        allowed = allowed.min(left);
        if left == 0 {
            inside.sort();
            // The window frees a slot when its oldest mail ages out.
            let free = inside[inside.len() - limit as usize] + window;
            next = Some(next.map_or(free, |n: DateTime<Utc>| n.max(free)));
        }
    }
    (allowed, next)
}

/// Delay before attempt `attempts + 1`: base, 2·base, 4·base, … capped.
pub fn backoff(attempts: u32, base_secs: u64, max_secs: u64) -> Duration {
    let shift = attempts.saturating_sub(1).min(30);
    let secs = base_secs.saturating_mul(1u64 << shift).min(max_secs);
    Duration::seconds(secs as i64)
}

/// The envelope for a mail: its recipients without opted-out addresses, or the
/// redirect address alone. The second list is who was left out, and why.
pub fn envelope(
    recipients: &[String],
    optouts: &OptOuts,
    redirect: Option<&Address>,
) -> (Vec<Address>, Vec<(String, &'static str)>) {
    let mut to = Vec::new();
    let mut dropped = Vec::new();
    for r in recipients {
        match Address::parse(r) {
            None => dropped.push((r.clone(), "not a valid address")),
            Some(a) if optouts.contains(&a) => dropped.push((r.clone(), "opted out")),
            Some(a) if !to.contains(&a) => to.push(a),
            Some(_) => {}
        }
    }
    match redirect {
        Some(r) if !to.is_empty() => (vec![r.clone()], dropped),
        _ => (to, dropped),
    }
}

/// A header line put in front of a redirected mail (folded, one address a line).
pub fn redirect_header(redirect: &Address, original: &[Address]) -> Vec<u8> {
    let mut h = format!("X-Perfbot-Redirected: to {redirect}; would have gone to");
    for a in original {
        h.push_str("\r\n ");
        h.push_str(a.as_str());
    }
    h.push_str("\r\n");
    h.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn budgets() {
        let now = t("2026-01-01T12:00:00Z");
        let sent = [
            t("2026-01-01T11:10:00Z"),
            t("2026-01-01T11:30:00Z"),
            t("2026-01-01T09:00:00Z"),
        ];
        // (per_hour, per_day) -> (allowed, next free)
        let cases: [(u32, u32, usize, Option<&str>); 5] = [
            (0, 0, usize::MAX, None),
            (5, 0, 3, None),
            (2, 0, 0, Some("2026-01-01T12:10:00Z")),
            (10, 3, 0, Some("2026-01-02T09:00:00Z")),
            (3, 10, 1, None),
        ];
        for (h, d, allowed, next) in cases {
            let (a, n) = budget(&sent, now, h, d);
            assert_eq!(a, allowed, "limits {h}/{d}");
            assert_eq!(n, next.map(t), "limits {h}/{d}");
        }
    }

    #[test]
    fn backoffs() {
        let secs: Vec<i64> = (1..=6).map(|a| backoff(a, 60, 600).num_seconds()).collect();
        assert_eq!(secs, [60, 120, 240, 480, 600, 600]);
        assert_eq!(backoff(200, 60, 3600).num_seconds(), 3600);
    }

    #[test]
    fn envelopes() {
        let rs: Vec<String> = ["a@x.org", "B@x.org", "bad", "a@x.org"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let out = crate::model::ids::OptOuts::new([Address::parse("b@x.org").unwrap()]);
        let (to, dropped) = envelope(&rs, &out, None);
        assert_eq!(to, [Address::parse("a@x.org").unwrap()]);
        assert_eq!(dropped.len(), 2);
        let staging = Address::parse("staging@x.org").unwrap();
        let (to, _) = envelope(&rs, &out, Some(&staging));
        assert_eq!(to, std::slice::from_ref(&staging));
        // Everyone opted out: nothing to send, not even to staging.
        let (to, _) = envelope(&rs[1..2], &out, Some(&staging));
        assert!(to.is_empty());
        let h = String::from_utf8(redirect_header(
            &staging,
            &[Address::parse("b@x.org").unwrap()],
        ))
        .unwrap();
        assert_eq!(
            h,
            "X-Perfbot-Redirected: to staging@x.org; would have gone to\r\n b@x.org\r\n"
        );
    }
}
