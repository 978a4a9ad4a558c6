//! Bisect samples: what the report plots and the dashboard draws again.

/// The samples of one metric along a bisection: good and bad commits.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BisectSeries {
    pub metric: String,
    pub good: Vec<f64>,
    pub bad: Vec<f64>,
}
