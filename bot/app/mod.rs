//! The top: the command line (`cli`, a file per subcommand), the daemon
//! (`daemon`), the dashboard (`web`), how cases are shown (`view`),
//! benchmarks (`bench`), the reply evaluation (`eval`) and retraining the
//! reader on the operators' labels, measured first (`retrain`).

pub(crate) mod bench;
pub mod cli;
pub(crate) mod daemon;
pub mod eval;
pub mod retrain;
pub(crate) mod view;
pub mod web;
