//! Regression or improvement, and which metric a report leads with.

use super::rules::{Direction, DirectionTable};
use crate::model::table::{Cells, Change, Row};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Regression,
    Improvement,
    Undefined,
}

impl Verdict {
    pub fn of(direction: Direction, change: f64) -> Verdict {
        match direction {
            Direction::None => Verdict::Undefined,
            Direction::Higher if change < 0.0 => Verdict::Regression,
            Direction::Lower if change > 0.0 => Verdict::Regression,
            _ => Verdict::Improvement,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::Undefined => "undefined",
        }
    }
}

/// A report's lead metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    pub metric: String,
    pub change: Change,
    pub verdict: Verdict,
}

/// What the rows support: a headline, or the reasons there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    pub headline: Option<Headline>,
    /// Why metrics that might look like headlines are not (one line each).
    pub not_reportable: Vec<String>,
}

/// The first change of a two-column perf row.
fn first_change(row: &Row) -> Option<&Change> {
    match &row.cells {
        Cells::Perf { changes, .. } => changes.first(),
        Cells::Failure { .. } => None,
    }
}

/// The base (first column's) mean of a perf row.
fn base_mean(row: &Row) -> Option<f64> {
    match &row.cells {
        Cells::Perf { cells, .. } => cells.first().map(|c| c.mean),
        Cells::Failure { .. } => None,
    }
}

/// Pick the headline: among directional metrics that changed by at least
/// `min_change_percent`, the highest-priority ones, and of those the largest change.
pub fn analyse(rows: &[Row], directions: &DirectionTable, min_change_percent: f64) -> Analysis {
    let mut best: Option<(f64, i32, &Row, &Change, Direction)> = None;
    let mut not_reportable = Vec::new();
    for row in rows {
        let Some(change) = first_change(row) else {
            continue;
        };
        let entry = directions.lookup(&row.name);
        let text = format!(
            "{} {}{}",
            row.name,
            change.number_text(),
            if change.absolute { "" } else { "%" }
        );
        let Some(entry) = entry else { continue };
        if !change.absolute && base_mean(row).is_some_and(|b| b <= 0.0) {
            // A percent of nothing (or of a negative number) says nothing
            // about better or worse: "616766.7% regression" from a base of -3.
            not_reportable.push(format!(
                "{text}: its base is {}, so a percent change says nothing",
                base_mean(row).unwrap_or_default()
            ));
            continue;
        }
        if entry.direction == Direction::None {
            let why = entry.why.clone().unwrap_or_else(|| "no direction".into());
            not_reportable.push(format!("{text}: {why}"));
            continue;
        }
        let magnitude = change.value.abs();
        if magnitude < min_change_percent {
            let verdict = Verdict::of(entry.direction, change.value);
            not_reportable.push(format!(
                "{text} ({}) is below the {min_change_percent}% reporting threshold",
                verdict.word()
            ));
            continue;
        }
        // The direction table's priority ranks KPIs first (a benchmark's
        // throughput before its latencies); then the larger change, compared
        // at the precision the report prints; then the name.
        let better = match &best {
            None => true,
            Some((m, p, r, _, _)) => {
                let (a, b) = ((magnitude * 10.0).round(), (m * 10.0).round());
                entry.priority > *p
                    || (entry.priority == *p && (a > b || (a == b && row.name < r.name)))
            }
        };
        if better {
            best = Some((magnitude, entry.priority, row, change, entry.direction));
        }
    }
    Analysis {
        headline: best.map(|(_, _, row, change, direction)| Headline {
            metric: row.name.clone(),
            change: change.clone(),
            verdict: Verdict::of(direction, change.value),
        }),
        not_reportable,
    }
}

/// A forced headline: the named metric, whatever its direction.
pub fn forced(rows: &[Row], directions: &DirectionTable, metric: &str) -> Option<Headline> {
    let row = rows.iter().find(|r| r.name == metric)?;
    let change = first_change(row)?;
    Some(Headline {
        metric: metric.to_string(),
        change: change.clone(),
        verdict: Verdict::of(directions.direction(metric), change.value),
    })
}
