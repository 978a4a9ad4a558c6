//! Replies operators settled, kept as labelled examples (see `OperatorLabel`),
//! and the `#perfbot ignore` rules people gave (see `IgnoreRule`).

use super::{decode_all, encode, Store, StoreError};
use crate::model::ignore::IgnoreRule;
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

    /// Drop a reply's label (an operator's undo); whether there was one.
    /// Flushed.
    pub fn drop_label(&self, message_id: &str) -> Result<bool, StoreError> {
        let had = self.labels.remove(message_id.as_bytes())?.is_some();
        self.flush()?;
        Ok(had)
    }

    /// Every `#perfbot ignore` rule, oldest first.
    pub fn ignores(&self) -> Result<Vec<IgnoreRule>, StoreError> {
        let mut v: Vec<IgnoreRule> = decode_all("ignores", self.ignores.iter())?;
        v.sort_by_key(|r| r.at);
        Ok(v)
    }

    /// Drop a rule (an operator's undo); whether there was one. Flushed.
    pub fn drop_ignore(&self, key: &str) -> Result<bool, StoreError> {
        let had = self.ignores.remove(key.as_bytes())?.is_some();
        self.flush()?;
        Ok(had)
    }
}
