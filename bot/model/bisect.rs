//! Bisect samples: what the report plots and the dashboard draws again.

/// The samples of one metric along a bisection: good and bad commits.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BisectSeries {
    pub metric: String,
    pub good: Vec<f64>,
    pub bad: Vec<f64>,
}

/// How the robot's gnuplot drew its plots.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, Default,
)]
pub enum PlotStyle {
    /// Reports up to 2019: the frame and its tics (`+-+`) behind the samples.
    #[serde(rename = "lkp-2019")]
    Lkp2019,
    /// Reports of 2020–2021: the frame in front of the samples (a sample on
    /// the frame is hidden), tics (`|-+`) behind them, a blank row between
    /// title and frame.
    #[default]
    #[serde(rename = "lkp-2020")]
    Lkp2020,
    /// gnuplot 5.4 as Debian 12 ships it: as `lkp-2020`, with the title on
    /// the row right above the frame.
    #[serde(rename = "gnuplot-5.4")]
    Gnuplot54,
}

impl PlotStyle {
    pub const ALL: [PlotStyle; 3] = [PlotStyle::Lkp2019, PlotStyle::Lkp2020, PlotStyle::Gnuplot54];

    pub fn name(self) -> &'static str {
        match self {
            PlotStyle::Lkp2019 => "lkp-2019",
            PlotStyle::Lkp2020 => "lkp-2020",
            PlotStyle::Gnuplot54 => "gnuplot-5.4",
        }
    }

    pub(crate) fn title_row(self) -> usize {
        match self {
            PlotStyle::Lkp2019 | PlotStyle::Lkp2020 => 1,
            PlotStyle::Gnuplot54 => 2,
        }
    }

    /// Whether lines are rounded onto cells by adding ½ and truncating
    /// (gnuplot before 5.4) rather than to nearest.
    pub(crate) fn truncated_lines(self) -> bool {
        self != PlotStyle::Gnuplot54
    }

    pub(crate) fn samples_over_frame(self) -> bool {
        self == PlotStyle::Lkp2019
    }
}
