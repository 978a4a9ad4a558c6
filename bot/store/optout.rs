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
    /// Returns false when the address was opted out already.
    pub fn optout_add(&self, o: &OptOut) -> Result<bool, StoreError> {
        let old = self.optout.insert(o.address.as_str(), encode(o))?;
        self.flush()?;
        Ok(old.is_none())
    }

    pub fn optout_remove(&self, a: &Address) -> Result<bool, StoreError> {
        let old = self.optout.remove(a.as_str())?;
        self.flush()?;
        Ok(old.is_some())
    }

    pub fn optouts(&self) -> Result<Vec<OptOut>, StoreError> {
        decode_all("optout", self.optout.iter())
    }

    pub fn is_opted_out(&self, a: &Address) -> Result<bool, StoreError> {
        Ok(self.optout.contains_key(a.as_str())?)
    }
}
