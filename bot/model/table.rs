//! The rows of a comparison table: what `compare` computes and `report`
//! prints (the printing is `report::table`'s).

/// The change of one column against the base column.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Percent, or an absolute difference when `absolute`.
    pub value: f64,
    pub absolute: bool,
    /// The change exactly as another tool printed it (pre-aggregated input), shown
    /// instead of `value` so that a re-rendered table says what the original said.
    pub printed: Option<String>,
    /// The change computed exactly from the samples' decimal values (what
    /// the matrix files say, not their nearest binary fractions): it is what
    /// is rounded for the table, so that a tie such as 1.35 rounds as a tie.
    /// `None` where a sample has no exact decimal (or the base is zero).
    pub exact: Option<rust_decimal::Decimal>,
}

/// One perf value cell: a mean and its spread.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfCell {
    pub mean: f64,
    /// What lkp compares against 2 to decide whether to print `±N%`: the relative
    /// standard deviation in percent (or, lkp's quirk, the raw value when the mean
    /// is 0; -1 when there was a single sample).
    pub spread: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Cells {
    Perf {
        cells: Vec<PerfCell>,
        changes: Vec<Change>,
    },
    Failure {
        /// Each column's sum of the stat's samples (runs it occurred in, for
        /// a 0/1 stat); printed as its integer part, blank only when 0.
        fails: Vec<f64>,
        runs: Vec<usize>,
        /// Reproduction-rate change in percentage points.
        changes: Vec<f64>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: String,
    pub cells: Cells,
}
