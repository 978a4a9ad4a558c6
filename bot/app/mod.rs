//! The top: the command line (`cli`, a file per subcommand), the daemon
//! (`daemon`), the dashboard (`web`), how cases are shown (`view`),
//! benchmarks (`bench`) and the reply evaluation (`eval`).

pub(crate) mod bench;
pub mod cli;
pub(crate) mod daemon;
pub mod eval;
pub(crate) mod view;
pub mod web;
