//! Addresses that asked never to get mail from perfbot.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{decode_all, encode, Store, StoreError};
use crate::model::Address;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptOut {
    pub address: Address,
    pub added: DateTime<Utc>,
    pub by: String,
    pub reason: String,
}

impl Store {
    /// Record an opt-out; `false`, and the first record kept (its time, who
    /// and why), when the address was opted out already.
    pub fn optout_add(&self, o: &OptOut) -> Result<bool, StoreError> {
        let added = self
            .optout
            .compare_and_swap(o.address.as_str(), None::<&[u8]>, Some(encode(o)))?
            .is_ok();
        if added {
            self.flush()?;
        }
        Ok(added)
    }

    pub fn optout_remove(&self, a: &Address) -> Result<bool, StoreError> {
        let old = self.optout.remove(a.as_str())?;
        self.flush()?;
        Ok(old.is_some())
    }

    pub fn optouts(&self) -> Result<Vec<OptOut>, StoreError> {
        decode_all("optout", self.optout.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Opting out twice keeps the first record: when, by whom, why.
    #[test]
    fn the_first_opt_out_is_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("state")).unwrap();
        let o = |reason: &str| OptOut {
            address: Address::parse("dave@xfs.example").unwrap(),
            added: Utc::now(),
            by: "ops".into(),
            reason: reason.into(),
        };
        let first = o("asked on the list");
        assert!(store.optout_add(&first).unwrap());
        assert!(!store.optout_add(&o("")).unwrap());
        assert_eq!(store.optouts().unwrap(), vec![first.clone()]);
        assert!(store.optout_remove(&first.address).unwrap());
        assert!(store.optout_add(&o("again")).unwrap());
    }
}
