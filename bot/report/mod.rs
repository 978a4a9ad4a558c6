//! Report e-mails: the lkp table, ASCII plots, the view model and its
//! rendering through the templates. Pure: the pipeline that loads inputs and
//! queues the mail is `flows::report`.

pub(crate) mod build;
pub mod numfmt;
pub mod parse;
pub mod plot;
pub(crate) mod render;
pub(crate) mod settings;
pub mod subject;
pub mod table;
pub(crate) mod view;
