//! Report e-mails: the lkp table, ASCII plots, the view model and its
//! rendering through the templates. Pure: the pipeline that loads inputs and
//! queues the mail is `flows::report`.

pub mod build;
pub mod numfmt;
pub mod plot;
pub mod render;
pub mod settings;
pub mod table;
