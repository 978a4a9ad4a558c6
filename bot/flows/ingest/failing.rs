//! A follower's failure that lasts (a full disk, a maildir made
//! unreadable, an IMAP server down), said now and then rather than every
//! round.

use std::time::{Duration, Instant};

/// A follower's failure that comes back every round (a full disk, a
/// maildir made unreadable) is logged when it starts, when its words
/// change, and once every `QUIET` while it lasts, with how many rounds
/// failed: not every round.
pub(crate) struct Failing {
    /// What fails, as the log names it (`maildir`, the IMAP mailbox).
    what: String,
    /// The error's words, when it was last logged, rounds since.
    now: Option<(String, Instant, u64)>,
}

/// How often a lasting failure is said again.
const QUIET: Duration = Duration::from_secs(600);

impl Failing {
    pub fn new(what: &str) -> Failing {
        Failing {
            what: what.to_string(),
            now: None,
        }
    }

    /// This round failed with `why`: whether it is said (and said so).
    pub fn again(&mut self, why: &str, at: Instant) -> bool {
        let say = match &mut self.now {
            Some((last, when, rounds)) if last == why => {
                *rounds += 1;
                if at.duration_since(*when) < QUIET {
                    return false;
                }
                tracing::warn!(source = %self.what, error = %why, rounds = *rounds, "still failing");
                true
            }
            _ => {
                tracing::warn!(source = %self.what, error = %why, "failing");
                true
            }
        };
        self.now = Some((why.to_string(), at, 0));
        say
    }

    /// A round went well: a failure that lasted is said to be over.
    pub fn ended(&mut self) {
        if let Some((why, _, _)) = self.now.take() {
            tracing::warn!(source = %self.what, was = %why, "read again");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failure that lasts is said when it starts, when its words change,
    /// and every ten minutes, not every round.
    #[test]
    fn a_lasting_failure_is_said_now_and_then() {
        let t0 = Instant::now();
        let at = |secs: u64| t0 + Duration::from_secs(secs);
        let mut f = Failing::new("maildir");
        let said: Vec<bool> = [
            ("full", 0),
            ("full", 2),
            ("full", 4),
            ("gone", 6),
            ("gone", 8),
            ("gone", 606),
            ("gone", 608),
        ]
        .iter()
        .map(|&(why, secs)| f.again(why, at(secs)))
        .collect();
        assert_eq!(said, [true, false, false, true, false, true, false]);
        f.ended();
        assert!(f.now.is_none());
        assert!(f.again("gone", at(610)), "a new failure after a good round");
    }
}
