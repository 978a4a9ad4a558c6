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
    /// Reports of 2014 (gnuplot 4): a 79-column canvas printed without
    /// trailing blanks, one-cell tics (`++`), the good samples as `*` drawn
    /// over their dotted line.
    #[serde(rename = "lkp-2014")]
    Lkp2014,
    /// Reports up to 2019: the good samples behind the frame and its tics
    /// (`+-+`), the bad samples (`O`) in front of them.
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
    pub const ALL: [PlotStyle; 4] = [
        PlotStyle::Lkp2014,
        PlotStyle::Lkp2019,
        PlotStyle::Lkp2020,
        PlotStyle::Gnuplot54,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PlotStyle::Lkp2014 => "lkp-2014",
            PlotStyle::Lkp2019 => "lkp-2019",
            PlotStyle::Lkp2020 => "lkp-2020",
            PlotStyle::Gnuplot54 => "gnuplot-5.4",
        }
    }

    pub(crate) fn title_row(self) -> usize {
        match self {
            PlotStyle::Lkp2014 | PlotStyle::Lkp2019 | PlotStyle::Lkp2020 => 1,
            PlotStyle::Gnuplot54 => 2,
        }
    }

    /// Whether lines are rounded onto cells by adding ½ and truncating
    /// (gnuplot before 5.4) rather than to nearest.
    pub(crate) fn truncated_lines(self) -> bool {
        self != PlotStyle::Gnuplot54
    }

    /// Whether the bad samples (`O`) are drawn over the frame and its tics
    /// (the robot's gnuplot up to 2019); the good samples' line is always
    /// behind the frame.
    pub(crate) fn bad_over_frame(self) -> bool {
        matches!(self, PlotStyle::Lkp2014 | PlotStyle::Lkp2019)
    }

    /// The frame's right column: gnuplot 4's canvas was a column narrower.
    pub(crate) fn right_col(self) -> usize {
        if self == PlotStyle::Lkp2014 {
            78
        } else {
            76
        }
    }

    /// Columns between the widest tic label's start and the frame.
    pub(crate) fn label_gap(self) -> usize {
        if self == PlotStyle::Lkp2014 {
            4
        } else {
            2
        }
    }

    /// How far a tic reaches into the frame (`++` or `+-+`).
    pub(crate) fn tic_len(self) -> i64 {
        if self == PlotStyle::Lkp2014 {
            1
        } else {
            2
        }
    }

    /// gnuplot 4 drew a good sample's point (`*`) over its line; later
    /// ones draw the line (`+` at its ends) over the points.
    pub(crate) fn points_over_line(self) -> bool {
        self == PlotStyle::Lkp2014
    }

    /// The character of a good sample's point.
    pub(crate) fn good_point(self) -> u8 {
        if self.points_over_line() {
            b'*'
        } else {
            b'+'
        }
    }

    /// gnuplot 4 printed rows without their trailing blanks.
    pub(crate) fn trims_rows(self) -> bool {
        self == PlotStyle::Lkp2014
    }
}
