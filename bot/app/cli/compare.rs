//! `perfbot compare`: the %stddev/%change table of a comparison.

use std::path::PathBuf;

use clap::Args;

use super::Failure;
use crate::compare::case_file::CaseFile;
use crate::compare::SelectOptions;
use crate::config::Config;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// A case file, or two or more lkp matrix.json files (the base first)
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The commit of each matrix file, in order (repeated, or one list: a,b)
    #[arg(long = "commit", num_args = 1.., value_delimiter = ',')]
    pub commits: Vec<String>,
    /// Also show stats lkp's deny list hides (`ncompare -m`)
    #[arg(long)]
    pub more: bool,
    /// A perf-profile threshold (`ncompare -p`)
    #[arg(long)]
    pub perf_profile_threshold: Option<f64>,
}

pub fn run(config: &Config, a: CompareArgs) -> Result<(), Failure> {
    let case = if a.files.len() == 1 {
        CaseFile::load(&a.files[0])
    } else {
        CaseFile::from_matrices(&a.files, &a.commits)
    }
    .map_err(Failure::usage)?;
    let opts = SelectOptions {
        more: a.more,
        perf_profile_threshold: a.perf_profile_threshold,
    };
    let table = case.table(&config.selection, &opts);
    print!("{}", table.render());
    // The process ends here: freeing 20,000 series one by one would cost
    // more than the comparison (the OS takes the memory back at once).
    std::mem::forget((case, table));
    Ok(())
}
