//! Replies about no case, kept until the message they answer joins a case's
//! thread (see `EarlyReply`), by their number in the order they were kept.

use super::{decode, encode, Store, StoreError};
use crate::model::EarlyReply;

/// One kept reply as saved: its number, how it was read, its bytes.
pub type SavedEarly = (u64, EarlyReply, Vec<u8>);

/// One kept reply to save, borrowed from where it is kept.
pub type ToSave<'a> = (u64, &'a EarlyReply, &'a [u8]);

impl Store {
    /// Every kept reply, in the order they were kept. Bytes that no record
    /// names (a crash while one was let go) are forgotten here.
    pub fn early_replies(&self) -> Result<Vec<SavedEarly>, StoreError> {
        let mut out = Vec::new();
        for kv in self.early.iter() {
            let (k, v) = kv?;
            let seq = seq_of(&k)?;
            let meta: EarlyReply = decode("early", &k, &v)?;
            // Bytes are written before their record: a record without them
            // is damage, not a crash.
            let raw = self.early_raw.get(&k)?.ok_or_else(|| StoreError::Record {
                tree: "early",
                key: seq.to_string(),
                why: "its bytes are not in early_raw".into(),
            })?;
            out.push((seq, meta, raw.to_vec()));
        }
        if self.early_raw.len() > out.len() {
            for k in self.early_raw.iter().keys() {
                let k = k?;
                if !self.early.contains_key(&k)? {
                    self.early_raw.remove(&k)?;
                }
            }
        }
        Ok(out)
    }

    /// How many replies are kept, and their bytes (for `quarantine list`).
    pub fn early_count(&self) -> Result<(usize, u64), StoreError> {
        let mut bytes = 0;
        for v in self.early_raw.iter().values() {
            bytes += v?.len() as u64;
        }
        Ok((self.early.len(), bytes))
    }

    /// Write what changed since the last save: the replies kept since, and
    /// those let go of that were saved. A reply's bytes go in before its
    /// record and out after it; sled keeps writes in order through a crash,
    /// so that one never leaves a record without its bytes. One write at a
    /// time, not a batch: a batch would hold a second copy of up to
    /// `early_replies_bytes`. Made durable by the next `flush`.
    pub fn save_early(&self, added: &[ToSave], removed: &[u64]) -> Result<(), StoreError> {
        for (seq, meta, raw) in added {
            self.early_raw.insert(seq.to_be_bytes(), *raw)?;
            self.early.insert(seq.to_be_bytes(), encode(meta))?;
        }
        for seq in removed {
            self.early.remove(seq.to_be_bytes())?;
            self.early_raw.remove(seq.to_be_bytes())?;
        }
        Ok(())
    }
}

fn seq_of(k: &[u8]) -> Result<u64, StoreError> {
    let b: [u8; 8] = k.try_into().map_err(|_| StoreError::Record {
        tree: "early",
        key: String::from_utf8_lossy(k).into_owned(),
        why: "not an 8-byte number".into(),
    })?;
    Ok(u64::from_be_bytes(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(source: &str) -> EarlyReply {
        EarlyReply::now(false, source)
    }

    /// Saves in turn, then what a new opening of the database finds.
    #[test]
    fn saved_and_found_again() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (meta("a"), meta("b"), meta("c"));
        {
            let store = Store::open(dir.path()).unwrap();
            store
                .save_early(&[(1, &a, b"one"), (2, &b, b"two")], &[])
                .unwrap();
            store.save_early(&[(3, &c, b"three")], &[1]).unwrap();
            store.flush().unwrap();
        }
        let store = Store::open(dir.path()).unwrap();
        let got: Vec<(u64, String, Vec<u8>)> = store
            .early_replies()
            .unwrap()
            .into_iter()
            .map(|(s, m, r)| (s, m.source, r))
            .collect();
        assert_eq!(
            got,
            vec![
                (2, "b".into(), b"two".to_vec()),
                (3, "c".into(), b"three".to_vec())
            ]
        );
    }

    /// Bytes without a record (a crash while letting one go) are forgotten;
    /// a record without its bytes is damage, named.
    #[test]
    fn bytes_without_a_record_and_the_reverse() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store.save_early(&[(7, &meta("x"), b"x")], &[]).unwrap();
        store
            .early_raw
            .insert(9u64.to_be_bytes(), &b"left"[..])
            .unwrap();
        assert_eq!(store.early_replies().unwrap().len(), 1);
        assert_eq!(store.early_raw.len(), 1);
        store.early_raw.remove(7u64.to_be_bytes()).unwrap();
        let e = store.early_replies().unwrap_err().to_string();
        assert!(e.contains("early") && e.contains("not in early_raw"), "{e}");
    }
}
