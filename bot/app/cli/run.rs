//! `perfbot run`: start the daemon on the state directory it alone holds.

use anyhow::anyhow;

use super::{lock_wait, runtime, Failure};
use crate::config::Config;
use crate::store::{DaemonLock, Store, StoreError};

pub fn run(config: Config) -> Result<(), Failure> {
    // A transport or mail source that cannot work as configured stops the
    // start (exit 2): a daemon with delivery or ingestion off looks alive.
    // (A server that is down is no such error: it is retried.) The transport
    // is made once, here, and handed to the daemon; the SMTP pool is made
    // and dropped (on a refusal below too) with the runtime entered, which
    // it needs.
    let rt = runtime()?;
    let _entered = rt.enter();
    let transport =
        crate::flows::delivery::Transport::from_config(&config).map_err(Failure::usage)?;
    if config.file.inbound.source == crate::config::InboundSource::Imap {
        crate::flows::ingest::imap_source::account(&config).map_err(Failure::usage)?;
    }
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
    rt.block_on(crate::app::daemon::run(config, store, transport))?;
    Ok(())
}
