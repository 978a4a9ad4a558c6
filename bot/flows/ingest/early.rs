//! Replies read before the message they answer: a list's moderation queue
//! held the parent back, or an archive was read list by list. Kept up to a
//! number of bytes (the oldest go first), and read again when the message
//! they answer joins a case's thread — else such a reply would be about no
//! case for good. Kept in memory and saved in the store at each checkpoint
//! of a reading (`changes`, `saved`), so that they outlive the run that
//! read them.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, RandomState};

use crate::model::EarlyReply;
use crate::store::early::ToSave;

/// One reply about no case, as it was read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Early {
    pub raw: Vec<u8>,
    pub meta: EarlyReply,
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
    /// Numbers from here on were kept since the last save (numbers only
    /// grow: no set to keep up for each reply of a busy list).
    unsaved_from: u64,
    /// Saved, and let go of since.
    removed: Vec<u64>,
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
    pub fn keep(&mut self, raw: &[u8], meta: EarlyReply, parent: &str) {
        if raw.len() <= self.cap {
            self.insert(self.next, raw.to_vec(), meta, parent);
        }
    }

    /// A reply saved by an earlier run, as it was numbered then (a smaller
    /// room now lets the oldest go). Restored before any is kept.
    pub fn restore(&mut self, seq: u64, raw: Vec<u8>, meta: EarlyReply, parent: &str) {
        self.unsaved_from = self.unsaved_from.max(seq + 1);
        if !self.insert(seq, raw, meta, parent) {
            self.removed.push(seq);
        }
    }

    /// A reply saved by an earlier run that is not kept now (too old, or
    /// answering nothing): let go of at the next save.
    pub fn forget_saved(&mut self, seq: u64) {
        self.removed.push(seq);
    }

    fn insert(&mut self, seq: u64, raw: Vec<u8>, meta: EarlyReply, parent: &str) -> bool {
        if raw.len() > self.cap {
            return false;
        }
        while self.bytes + raw.len() > self.cap {
            let Some((&oldest, _)) = self.mails.first_key_value() else {
                break;
            };
            self.take(oldest);
        }
        self.next = self.next.max(seq + 1);
        let parent = self.hasher.hash_one(parent);
        self.by_id.entry(parent).or_default().push(seq);
        self.bytes += raw.len();
        self.mails.insert(seq, Early { raw, meta, parent });
        true
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

    /// What changed since the last save: the replies kept (number, how
    /// read, bytes), and the numbers of saved ones let go of.
    pub fn changes(&self) -> Option<(Vec<ToSave<'_>>, &[u64])> {
        let added: Vec<_> = self
            .mails
            .range(self.unsaved_from..)
            .map(|(s, e)| (*s, &e.meta, e.raw.as_slice()))
            .collect();
        (!added.is_empty() || !self.removed.is_empty()).then_some((added, &self.removed))
    }

    /// The changes were saved.
    pub fn saved(&mut self) {
        self.unsaved_from = self.next;
        self.removed.clear();
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
        if seq < self.unsaved_from {
            self.removed.push(seq);
        }
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(source: &str) -> EarlyReply {
        EarlyReply::now(false, source)
    }

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
                e.keep(&vec![b'x'; *bytes], meta(&format!("m{i}")), parent);
            }
            for (id, want) in *asked {
                let got: Vec<usize> = e
                    .answering(id)
                    .iter()
                    .map(|m| m.meta.source[1..].parse().unwrap())
                    .collect();
                assert_eq!(&got, want, "cap {cap}, {kept:?}: asked for {id}");
            }
            assert!(e.bytes <= *cap);
        }
    }

    /// What each save writes: the replies kept since the last one, and the
    /// saved ones let go of since (given back, or making room); one kept and
    /// let go of between two saves is never written. Replies restored from
    /// an earlier run count as saved. `(room, steps, each save's (kept,
    /// let go))`; a step is `+parent` (keep 10 bytes), `?parent` (give
    /// back), `r` (restore 10 bytes answering r@x as number 7), `!`
    /// (save).
    #[test]
    fn each_save_writes_what_changed() {
        type Check = (
            usize,
            &'static str,
            &'static [(&'static [u64], &'static [u64])],
        );
        let table: &[Check] = &[
            (
                100,
                "+a +b ! ?a ! !",
                &[(&[0, 1], &[]), (&[], &[0]), (&[], &[])],
            ),
            // Kept and given back between saves: nothing to write.
            (100, "+a ?a !", &[(&[], &[])]),
            // Room for two: the third makes room by letting the saved first go.
            (20, "+a +b ! +c !", &[(&[0, 1], &[]), (&[2], &[0])]),
            // Restored: numbered on after it, saved already, let go when answered.
            (100, "r +a ?r !", &[(&[8], &[7])]),
        ];
        for (cap, steps, saves) in table {
            let mut e = EarlyReplies::new(*cap);
            let mut got: Vec<(Vec<u64>, Vec<u64>)> = Vec::new();
            for step in steps.split(' ') {
                let parent = format!("{}@x", &step[1..]);
                match &step[..1] {
                    "+" => e.keep(&[0; 10], meta(step), &parent),
                    "?" => drop(e.answering(&parent)),
                    "r" => e.restore(7, vec![0; 10], meta("r"), "r@x"),
                    _ => {
                        got.push(e.changes().map_or((vec![], vec![]), |(a, r)| {
                            (a.iter().map(|x| x.0).collect(), r.to_vec())
                        }));
                        e.saved();
                    }
                }
            }
            let want: Vec<(Vec<u64>, Vec<u64>)> = saves
                .iter()
                .map(|(a, r)| (a.to_vec(), r.to_vec()))
                .collect();
            assert_eq!(got, want, "room {cap}: {steps}");
        }
    }

    /// What is given back is gone, and the room it took is free again.
    #[test]
    fn given_back_frees_its_room() {
        let mut e = EarlyReplies::new(20);
        e.keep(&[0; 20], meta("m"), "a@x");
        assert_eq!(e.answering("a@x").len(), 1);
        assert!(e.is_empty() && e.by_id.is_empty() && e.bytes == 0);
        e.keep(&[0; 20], meta("n"), "c@x");
        assert_eq!(e.answering("c@x")[0].meta.source, "n");
    }
}
