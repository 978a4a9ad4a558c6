//! The jobs perfbot does, each from its input to what it records: the report
//! pipeline (`report`), reading mail (`ingest`), what a person's reply does
//! (`reply`), sending what is due (`delivery`), mail in a case's thread
//! (`followup`), the digest and the reminders.

pub mod delivery;
pub mod digest;
pub mod followup;
pub mod ingest;
pub mod optout;
pub mod remind;
pub mod reply;
pub mod report;
