//! Replies operators settled, kept as labelled examples (see `OperatorLabel`).

use super::{decode_all, encode, Store, StoreError};
use crate::model::OperatorLabel;

impl Store {
    /// Record (or, settled again, replace) the label of a reply. Flushed: a
    /// human's decision is not lost to a crash.
    pub fn record_label(&self, l: &OperatorLabel) -> Result<(), StoreError> {
        self.labels.insert(l.message_id.as_bytes(), encode(l))?;
        self.flush()?;
        Ok(())
    }

    /// Every label, oldest first.
    pub fn labels(&self) -> Result<Vec<OperatorLabel>, StoreError> {
        let mut v: Vec<OperatorLabel> = decode_all("labels", self.labels.iter())?;
        v.sort_by_key(|l| l.time);
        Ok(v)
    }
}
