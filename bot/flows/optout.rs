//! Who never gets mail: the addresses of `outbound.optout` and those added
//! with `perfbot optout add`, read in one place for reports and delivery.

use crate::config::Config;
use crate::model::ids::OptOuts;
use crate::store::{Store, StoreError};

/// Every opted-out address, the config's and the database's.
pub fn all(config: &Config, store: &Store) -> Result<OptOuts, StoreError> {
    let stored = store.optouts()?.into_iter().map(|o| o.address);
    Ok(OptOuts::new(
        config.optout_addresses().into_iter().chain(stored),
    ))
}
