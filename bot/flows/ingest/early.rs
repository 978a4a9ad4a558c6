//! Replies read before the message they answer: a list's moderation queue
//! held the parent back, or an archive was read list by list. Kept in
//! memory, up to a number of bytes (the oldest go first), and read again
//! when the message they answer joins a case's thread — else such a reply would
//! be about no case for good.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, RandomState};

/// One reply about no case, as it was read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Early {
    pub raw: Vec<u8>,
    /// `raw` is an mbox message as stored (mboxrd quoting in place).
    pub stored: bool,
    pub source: String,
    /// The Message-ID it answers, hashed: a string would cost an
    /// allocation for every reply of a busy list. Two ids with one hash
    /// only give back a reply that then matches nothing.
    parent: u64,
}

/// The replies kept, oldest first, and by the Message-ID each answers.
#[derive(Debug, Default)]
pub(crate) struct EarlyReplies {
    cap: usize,
    bytes: usize,
    next: u64,
    mails: BTreeMap<u64, Early>,
    by_id: HashMap<u64, Vec<u64>>,
    hasher: RandomState,
}

impl EarlyReplies {
    /// Keep at most `cap` bytes of replies (0: none).
    pub fn new(cap: usize) -> EarlyReplies {
        EarlyReplies {
            cap,
            ..EarlyReplies::default()
        }
    }

    /// Keep a reply to `parent`, dropping the oldest kept to make room.
    /// One bigger than the whole room is not kept.
    pub fn keep(&mut self, raw: &[u8], stored: bool, parent: &str, source: &str) {
        if raw.len() > self.cap {
            return;
        }
        while self.bytes + raw.len() > self.cap {
            let Some((&oldest, _)) = self.mails.first_key_value() else {
                break;
            };
            self.take(oldest);
        }
        let seq = self.next;
        self.next += 1;
        let parent = self.hasher.hash_one(parent);
        self.by_id.entry(parent).or_default().push(seq);
        self.bytes += raw.len();
        self.mails.insert(
            seq,
            Early {
                raw: raw.to_vec(),
                stored,
                source: source.to_string(),
                parent,
            },
        );
    }

    /// The replies to `id`, oldest first; no longer kept.
    pub fn answering(&mut self, id: &str) -> Vec<Early> {
        let Some(seqs) = self.by_id.get(&self.hasher.hash_one(id)).cloned() else {
            return Vec::new();
        };
        seqs.into_iter().filter_map(|s| self.take(s)).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.mails.is_empty()
    }

    fn take(&mut self, seq: u64) -> Option<Early> {
        let e = self.mails.remove(&seq)?;
        self.bytes -= e.raw.len();
        if let Some(v) = self.by_id.get_mut(&e.parent) {
            v.retain(|s| *s != seq);
            if v.is_empty() {
                self.by_id.remove(&e.parent);
            }
        }
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Replies kept in a room of `cap` bytes, `(bytes, parent)` in reading
    /// order; then, for each parent asked for in turn, the replies given
    /// back (by their index in the input).
    #[test]
    fn kept_and_given_back() {
        type Check = (
            usize,
            &'static [(usize, &'static str)],
            &'static [(&'static str, &'static [usize])],
        );
        let table: &[Check] = &[
            // One reply, given back once.
            (
                100,
                &[(10, "p@x")],
                &[("r@x", &[]), ("p@x", &[0]), ("p@x", &[])],
            ),
            // Two replies to one parent, oldest first.
            (
                100,
                &[(10, "p@x"), (10, "q@x"), (10, "p@x")],
                &[("p@x", &[0, 2]), ("q@x", &[1])],
            ),
            // No room: the oldest goes.
            (
                25,
                &[(10, "a@x"), (10, "b@x"), (10, "c@x")],
                &[("a@x", &[]), ("b@x", &[1]), ("c@x", &[2])],
            ),
            // Bigger than the room: not kept, and nothing made room for it.
            (
                25,
                &[(10, "a@x"), (26, "b@x")],
                &[("b@x", &[]), ("a@x", &[0])],
            ),
            // No room at all.
            (0, &[(1, "a@x")], &[("a@x", &[])]),
        ];
        for (cap, kept, asked) in table {
            let mut e = EarlyReplies::new(*cap);
            for (i, (bytes, parent)) in kept.iter().enumerate() {
                e.keep(&vec![b'x'; *bytes], false, parent, &format!("m{i}"));
            }
            for (id, want) in *asked {
                let got: Vec<usize> = e
                    .answering(id)
                    .iter()
                    .map(|m| m.source[1..].parse().unwrap())
                    .collect();
                assert_eq!(&got, want, "cap {cap}, {kept:?}: asked for {id}");
            }
            assert!(e.bytes <= *cap);
        }
    }

    /// What is given back is gone, and the room it took is free again.
    #[test]
    fn given_back_frees_its_room() {
        let mut e = EarlyReplies::new(20);
        e.keep(&[0; 20], true, "a@x", "m");
        assert_eq!(e.answering("a@x").len(), 1);
        assert!(e.is_empty() && e.by_id.is_empty() && e.bytes == 0);
        e.keep(&[0; 20], false, "c@x", "n");
        assert_eq!(e.answering("c@x")[0].source, "n");
    }
}
