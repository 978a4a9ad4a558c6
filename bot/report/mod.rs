//! Report e-mails: the lkp table, ASCII plots, the view model and its templates.

pub mod numfmt;
pub mod plot;
pub mod table;
