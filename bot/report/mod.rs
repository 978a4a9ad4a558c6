//! Report e-mails: the lkp table, ASCII plots, the view model and its templates.

pub mod build;
pub mod numfmt;
pub mod plot;
pub mod queue;
pub mod render;
pub mod table;
