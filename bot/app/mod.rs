//! The top: the command line (`cli`, a file per subcommand), the daemon
//! (`daemon`), the dashboard (`web`), how cases are shown (`view`),
//! benchmarks (`bench`) and the reply evaluation (`eval`).

pub mod bench;
pub mod cli;
pub mod daemon;
pub mod eval;
pub mod view;
pub mod web;
