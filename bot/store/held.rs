//! Replies held for a case that does not exist yet (see `Held`).

use sled::Transactional;

use super::{decode_all, encode, Abort, Store, StoreError};
use crate::model::Held;

impl Store {
    /// Hold a reply, once: `false` when it is held already.
    pub fn hold(&self, h: &Held, raw: &[u8]) -> Result<bool, StoreError> {
        let key = h.message_id.as_bytes();
        if self.held.contains_key(key)? {
            return Ok(false);
        }
        let result = (&self.held, &self.held_raw).transaction(|(held, held_raw)| {
            held.insert(key, encode(h))?;
            held_raw.insert(key, raw)?;
            Ok::<(), sled::transaction::ConflictableTransactionError<Abort>>(())
        });
        self.committed(result)?;
        Ok(true)
    }

    /// Every held reply, oldest first.
    pub fn held(&self) -> Result<Vec<Held>, StoreError> {
        let mut v: Vec<Held> = decode_all("held", self.held.iter())?;
        v.sort_by_key(|h| h.time);
        Ok(v)
    }

    pub fn held_count(&self) -> usize {
        self.held.len()
    }

    /// A held reply's bytes (`None`: not held any more).
    pub fn held_raw(&self, message_id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .held_raw
            .get(message_id.as_bytes())?
            .map(|r| r.to_vec()))
    }

    /// Forget a held reply (after it was read again, or expired). The record
    /// goes first: a crash in between leaves bytes nothing points to, never a
    /// record without its bytes.
    pub fn drop_held(&self, message_id: &str) -> Result<(), StoreError> {
        self.held.remove(message_id.as_bytes())?;
        self.held_raw.remove(message_id.as_bytes())?;
        Ok(())
    }
}
