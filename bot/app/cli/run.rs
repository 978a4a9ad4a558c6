//! `perfbot run`: start the daemon on the state directory it alone holds.

use anyhow::anyhow;

use super::{lock_wait, runtime, Failure};
use crate::config::Config;
use crate::store::{DaemonLock, Store, StoreError};

pub fn run(config: Config) -> Result<(), Failure> {
    let dir = config.state_dir();
    let _lock = DaemonLock::acquire(&dir).map_err(|e| match e {
        StoreError::Locked { path } => {
            anyhow!("another perfbot run holds {path}: only one daemon per state directory")
        }
        e => e.into(),
    })?;
    // A command that had the database when the daemon started finishes first.
    let store = Store::open_waiting_unless(&dir, lock_wait(&config), || false)?;
    let config = std::sync::Arc::new(config);
    runtime()?.block_on(crate::app::daemon::run(config, store))?;
    Ok(())
}
