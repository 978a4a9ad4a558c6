//! The jobs perfbot does, each from its input to what it records: the report
//! pipeline (`report`), reading mail (`ingest`), what a person's reply does
//! (`reply`), sending what is due (`delivery`), mail in a case's thread
//! (`followup`), the digest, the reminders and the review of cases left open.

pub(crate) mod delivery;
pub(crate) mod digest;
pub(crate) mod followup;
pub mod ingest;
pub mod learn;
pub(crate) mod optout;
pub(crate) mod remind;
pub(crate) mod reply;
pub mod report;
pub mod review;
pub mod robot;
pub mod spool;
pub mod verify;
