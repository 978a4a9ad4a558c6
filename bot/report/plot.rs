//! ASCII bisect plots as lkp's `mmplot` has gnuplot's dumb terminal draw them
//! (80×20 characters): the bad samples as `O` points, the good samples as a
//! dotted line whose ends are `+`, no x tics, y tics on the left only.
//!
//! Drawing is cell for cell what gnuplot does, so that a plot read back from
//! a real report (see [`read`]) renders identical: tic steps and outward
//! autoscaling, `%h` labels, the axis-to-cell rounding, the dumb terminal's
//! pens (`.` for flat runs, `:` for steep ones, `+` at both ends and along a
//! diagonal) and what is drawn in front of what. The robot's gnuplot changed
//! over the years; [`PlotStyle`] names what each one did.

pub use crate::model::bisect::PlotStyle;

const WIDTH: usize = 80;
const HEIGHT: usize = 20;
/// The frame's rows for a titled 80×20 plot (its right column is the
/// style's: [`PlotStyle::right_col`]).
const TOP_ROW: usize = 3;
const BOTTOM_ROW: usize = 17;

/// One plot: a metric's good and bad samples, each series at x = 1, 2, …
#[derive(Debug, Clone)]
pub struct Plot<'a> {
    pub title: &'a str,
    pub good: &'a [f64],
    pub bad: &'a [f64],
    pub style: PlotStyle,
    /// The y axis as given; `None` autoscales as gnuplot does (out to tics).
    pub range: Option<YRange>,
}

/// A y axis given rather than autoscaled: gnuplot picks the tic step from
/// the samples' own spread, so a plot read back keeps the step it showed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct YRange {
    pub low: f64,
    pub high: f64,
    /// The tic step, when it is not the one the range itself would get.
    pub step: Option<f64>,
}

/// gnuplot's tic step for a range: about 20 tics a decade, on 1/2/5 steps.
fn tic_step(range: f64) -> f64 {
    let guide = 20.0;
    let power = 10f64.powf(range.log10().floor());
    let xnorm = range / power;
    let posns = guide / xnorm;
    let tics = if posns > 40.0 {
        0.05
    } else if posns > 20.0 {
        0.1
    } else if posns > 10.0 {
        0.2
    } else if posns > 4.0 {
        0.5
    } else if posns > 2.0 {
        1.0
    } else if posns > 0.5 {
        2.0
    } else {
        xnorm.ceil()
    };
    tics * power
}

/// A tic label as gnuplot's `% h` prints it on a plain-text terminal.
fn tic_label(v: f64) -> String {
    let s = super::numfmt::general(v, 6);
    if s.starts_with('-') {
        s
    } else {
        format!(" {s}")
    }
}

/// The y axis: its range, tics and the cells they fall on.
#[derive(Debug, Clone)]
struct YAxis {
    min: f64,
    max: f64,
    step: f64,
    /// (value, label) of every tic inside the range.
    tics: Vec<(f64, String)>,
}

impl YAxis {
    fn new(samples: impl Iterator<Item = f64>, range: Option<YRange>) -> YAxis {
        let (min, max, step) = match range {
            Some(YRange { low, high, step }) if low < high => {
                (low, high, step.unwrap_or_else(|| tic_step(high - low)))
            }
            _ => {
                let (mut lo, mut hi) = samples
                    .filter(|v| v.is_finite())
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                        (a.min(v), b.max(v))
                    });
                if lo > hi {
                    (lo, hi) = (-10.0, 10.0);
                } else if lo == hi {
                    // gnuplot widens an empty range by 1% each way (to ±1 at 0).
                    (lo, hi) = if lo == 0.0 {
                        (-1.0, 1.0)
                    } else {
                        (lo - lo.abs() * 0.01, hi + hi.abs() * 0.01)
                    };
                }
                let step = tic_step(hi - lo);
                ((lo / step).floor() * step, (hi / step).ceil() * step, step)
            }
        };
        // gnuplot steps from the multiple of `step` below the range by adding
        // `step` (the sum's rounding decides which row a tic falls on), and
        // keeps the tics within a hundredth of a step of the range.
        const SIGNIF: f64 = 0.01;
        let mut tics = Vec::new();
        let mut tic = step * (min / step).floor();

        let end = step * (max / step).ceil() + SIGNIF * step;
        let (lowest, highest) = (min - step * SIGNIF, max + step * SIGNIF);
        while tic <= end && tics.len() <= 1000 {
            if tic > highest {
                break;
            }
            if tic >= lowest {
                let v = if tic.abs() < step * SIGNIF { 0.0 } else { tic };
                tics.push((tic, tic_label(v)));
            }
            tic += step;
        }
        YAxis {
            min,
            max,
            step,
            tics,
        }
    }

    /// The canvas row of a value (gnuplot's `map_y`, then top-down rows).
    /// The canvas row of a value. gnuplot's `map_y` casts the terminal y
    /// to an integer (toward zero): the same as flooring inside the frame,
    /// and what a line clipped at the frame is computed from below it.
    fn row(&self, v: f64) -> i64 {
        let lower = (HEIGHT - 1 - BOTTOM_ROW) as f64;
        let scale = (BOTTOM_ROW - TOP_ROW) as f64 / (self.max - self.min);
        let y = (lower + (v - self.min) * scale + 0.5) as i64;
        (HEIGHT - 1) as i64 - y
    }

    fn label_width(&self) -> usize {
        self.tics.iter().map(|(_, l)| l.len()).max().unwrap_or(1)
    }
}

/// The x axis: samples at 1…n between the frame's sides, no tics.
#[derive(Debug, Clone, Copy)]
struct XAxis {
    min: f64,
    max: f64,
    left: usize,
    right: usize,
}

impl XAxis {
    fn new(n: usize, left: usize, right: usize) -> XAxis {
        let (min, max) = if n <= 1 {
            (0.99, 1.01)
        } else {
            (1.0, n as f64)
        };
        XAxis {
            min,
            max,
            left,
            right,
        }
    }

    /// The canvas column of sample `x` (1-based): gnuplot's `map_x`.
    fn col(&self, x: usize) -> i64 {
        let scale = (self.right - self.left) as f64 / (self.max - self.min);
        (self.left as f64 + (x as f64 - self.min) * scale + 0.5).floor() as i64
    }
}

struct Canvas {
    cells: Vec<u8>,
    /// How a line's cells are rounded off its true course: gnuplot 5.4
    /// rounds to nearest; the robot's older gnuplot added ½ and truncated
    /// toward zero, which differs on falling lines.
    truncate: bool,
}

impl Canvas {
    fn new(truncate: bool) -> Self {
        Canvas {
            cells: vec![b' '; WIDTH * HEIGHT],
            truncate,
        }
    }

    fn set(&mut self, col: i64, row: i64, c: u8) {
        if (0..WIDTH as i64).contains(&col) && (0..HEIGHT as i64).contains(&row) {
            self.cells[row as usize * WIDTH + col as usize] = c;
        }
    }

    fn text(&mut self, col: usize, row: usize, s: &str) {
        let bytes = s.as_bytes();
        // The dumb terminal moves text that would run off the right edge.
        let col = if col + bytes.len() > WIDTH - 1 {
            (WIDTH - 1).saturating_sub(bytes.len())
        } else {
            col
        };
        for (i, &c) in bytes.iter().enumerate() {
            if col + i < WIDTH - 1 {
                self.set((col + i) as i64, row as i64, c);
            }
        }
    }

    /// The dumb terminal's vector: `flat`/`steep` inside, `end` at both ends;
    /// a diagonal is drawn with `end` all along.
    fn vector(&mut self, from: (i64, i64), to: (i64, i64), flat: u8, steep: u8, end: u8) {
        let truncate = self.truncate;
        trace(truncate, from, to, [flat, steep, end], |c, r, ch| {
            self.set(c, r, ch)
        });
    }

    fn rows(self) -> Vec<String> {
        self.cells
            .chunks(WIDTH)
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect()
    }
}

/// The cells a vector sets, in order: `[flat, steep, end]` pens.
fn trace(
    truncate: bool,
    (x0, y0): (i64, i64),
    (x1, y1): (i64, i64),
    [flat, steep, end]: [u8; 3],
    mut set: impl FnMut(i64, i64, u8),
) {
    let offset = |v: f64| {
        if truncate {
            (v + 0.5) as i64
        } else {
            v.round() as i64
        }
    };
    // The terminal's y runs up: rows are turned over for the arithmetic
    // (truncating rounds a falling line differently from a rising one).
    let top = (HEIGHT - 1) as i64;
    let (y0, y1) = (top - y0, top - y1);
    let mut set = |c: i64, y: i64, ch: u8| set(c, top - y, ch);
    let (dx, dy) = (x1 - x0, y1 - y0);
    // Only the steps that land on the canvas are walked: a sample far off
    // the axis (a range given in the input) costs nothing.
    let visible = |from: i64, sign: i64, len: i64, size: i64| -> std::ops::Range<i64> {
        let (a, b) = if sign >= 0 {
            (-from, size - 1 - from)
        } else {
            (from - (size - 1), from)
        };
        a.max(1)..(b + 1).min(len).max(a.max(1))
    };
    if dy.abs() > dx.abs() {
        set(x0, y0, end);
        for d in visible(y0, dy.signum(), dy.abs(), HEIGHT as i64) {
            let x = x0 + offset(dx as f64 * d as f64 / dy.abs() as f64);
            set(x, y0 + d * dy.signum(), steep);
        }
        set(x1, y1, end);
    } else if dx.abs() > dy.abs() {
        set(x0, y0, end);
        for d in visible(x0, dx.signum(), dx.abs(), WIDTH as i64) {
            let y = y0 + offset(dy as f64 * d as f64 / dx.abs() as f64);
            set(x0 + d * dx.signum(), y, flat);
        }
        set(x1, y1, end);
    } else {
        let along = visible(x0, dx.signum(), dx.abs() + 1, WIDTH as i64);
        if x0 >= 0 && x0 < WIDTH as i64 {
            set(x0, y0, end);
        }
        for d in along {
            set(x0 + d * dx.signum(), y0 + d * dy.signum(), end);
        }
    }
}

impl Plot<'_> {
    /// The plot's 20 rows of 80 characters.
    pub fn rows(&self) -> Vec<String> {
        self.canvas().rows()
    }

    fn canvas(&self) -> Canvas {
        let y = YAxis::new(self.good.iter().chain(self.bad).copied(), self.range);
        self.canvas_on(&y)
    }

    /// The drawing on a y axis already worked out (the reader draws many
    /// plots on one axis).
    fn canvas_on(&self, y: &YAxis) -> Canvas {
        let style = self.style;
        let left = y.label_width() + style.label_gap();
        let right = style.right_col();
        let x = XAxis::new(self.good.len().max(self.bad.len()), left, right);
        let good = self
            .good
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(i, v)| (x.col(i + 1), *v))
            .collect();
        let layers = Layers {
            plot: self,
            y,
            x,
            left,
            right,
            good,
        };
        let mut c = Canvas::new(style.truncated_lines());
        layers.labels(&mut c);
        // What is drawn in front of what, by the robot's gnuplot:
        match style {
            // gnuplot 4: the good samples' line, the frame and its tics over
            // it, then every point.
            PlotStyle::Lkp2014 => {
                layers.line(&mut c);
                layers.frame(&mut c);
                layers.tics(&mut c);
                layers.bad(&mut c);
                layers.points(&mut c);
            }
            // 2019: the good samples' points, their line over them (where
            // it passes over a point, the line shows), the frame and its
            // tics, then the bad samples.
            PlotStyle::Lkp2019 => {
                layers.points(&mut c);
                layers.line(&mut c);
                layers.frame(&mut c);
                layers.tics(&mut c);
                layers.bad(&mut c);
            }
            // From 2020: the tics, every sample, then the frame.
            PlotStyle::Lkp2020 | PlotStyle::Gnuplot54 => {
                layers.tics(&mut c);
                layers.bad(&mut c);
                layers.points(&mut c);
                layers.line(&mut c);
                layers.frame(&mut c);
            }
        }
        c
    }

    /// The plot as the report prints it: 20 rows, no newline after the last
    /// (gnuplot's `nofeed`), so that the next plot's first row joins it.
    pub fn text(&self) -> String {
        let mut rows = self.rows();
        if self.style.trims_rows() {
            for r in &mut rows {
                r.truncate(r.trim_end().len());
            }
        }
        rows.join("\n")
    }

    /// gnuplot's own output: a form feed, then the rows.
    pub fn render_dumb(&self) -> String {
        format!("\u{c}{}", self.text())
    }
}

/// What a plot draws, one layer at a time, on its worked-out axes.
struct Layers<'p> {
    plot: &'p Plot<'p>,
    y: &'p YAxis,
    x: XAxis,
    left: usize,
    right: usize,
    /// The good samples that can be drawn: (column, value).
    good: Vec<(i64, f64)>,
}

impl Layers<'_> {
    /// The title, centred over the frame, and the tic labels, right-aligned
    /// a blank column left of it.
    fn labels(&self, c: &mut Canvas) {
        let title = self.plot.title;
        let centre = (self.left + self.right) / 2;
        c.text(
            centre.saturating_sub(title.len() / 2),
            self.plot.style.title_row(),
            title,
        );
        for (v, label) in &self.y.tics {
            let row = self.y.row(*v);
            if (0..HEIGHT as i64).contains(&row) {
                c.text(
                    (self.left - 1).saturating_sub(label.len()),
                    row as usize,
                    label,
                );
            }
        }
    }

    fn frame(&self, c: &mut Canvas) {
        let (l, r) = (self.left as i64, self.right as i64);
        let (t, b) = (TOP_ROW as i64, BOTTOM_ROW as i64);
        c.vector((l, b), (r, b), b'-', b'|', b'+');
        c.vector((r, b), (r, t), b'-', b'|', b'+');
        c.vector((r, t), (l, t), b'-', b'|', b'+');
        c.vector((l, t), (l, b), b'-', b'|', b'+');
    }

    fn tics(&self, c: &mut Canvas) {
        let l = self.left as i64;
        for (v, _) in &self.y.tics {
            let row = self.y.row(*v);
            c.vector(
                (l, row),
                (l + self.plot.style.tic_len(), row),
                b'-',
                b'|',
                b'+',
            );
        }
    }

    /// A sample outside a range given is not drawn, and a line to it stops
    /// at the frame (gnuplot's `set clip one`); a line between two such
    /// samples is not drawn at all.
    fn inside(&self, v: f64) -> bool {
        v >= self.y.min && v <= self.y.max
    }

    fn bad(&self, c: &mut Canvas) {
        for (i, v) in self.plot.bad.iter().enumerate() {
            if v.is_finite() && self.inside(*v) {
                c.set(self.x.col(i + 1), self.y.row(*v), b'O');
            }
        }
    }

    fn points(&self, c: &mut Canvas) {
        for &(col, v) in &self.good {
            if self.inside(v) {
                c.set(col, self.y.row(v), self.plot.style.good_point());
            }
        }
    }

    /// The good samples' line, clipped at the frame.
    fn line(&self, c: &mut Canvas) {
        let y = self.y;
        for w in self.good.windows(2) {
            let ((c0, v0), (c1, v1)) = (w[0], w[1]);
            let (p0, p1) = ((c0, y.row(v0)), (c1, y.row(v1)));
            let (from, to) = match (self.inside(v0), self.inside(v1)) {
                (true, true) => (p0, p1),
                (false, false) => continue,
                (true, false) => (p0, self.cut(v1, p0, p1)),
                (false, true) => (self.cut(v0, p0, p1), p1),
            };
            c.vector(from, to, b'.', b':', b'+');
        }
    }

    /// Where the line from `a` to `b` crosses the frame, as gnuplot's
    /// `clip_line` finds it: on the terminal's integer cells, the crossing's
    /// column cast toward zero. `v_out` is the value outside the frame.
    fn cut(&self, v_out: f64, (ca, ra): (i64, i64), (cb, rb): (i64, i64)) -> (i64, i64) {
        let edge = if v_out < self.y.min {
            BOTTOM_ROW
        } else {
            TOP_ROW
        } as i64;
        // gnuplot's y runs up from the canvas' bottom row.
        let top = (HEIGHT - 1) as i64;
        let (ya, yb, ye) = (top - ra, top - rb, top - edge);
        let col = (cb as f64 + (ye - yb) as f64 * (cb - ca) as f64 / (yb - ya) as f64) as i64;
        // A crossing past the frame's left side (the first sample sits on
        // it) is taken on that side.
        (col.max(self.left as i64), edge)
    }
}

/// A plot's title: lkp names a plot by its metric with every character
/// gnuplot cannot take as a plain title made `_` (`fio.latency_750us_`).
pub fn title_of(metric: &str) -> String {
    metric
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.:+=-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The legend under a report's plots.
pub const LEGEND: &str = "[*] bisect-good sample\n[O] bisect-bad  sample\n";

/// The legend as the robot of 2014 printed it, indented by a tab.
pub const LEGEND_2014: &str = "\t[*] bisect-good sample\n\t[O] bisect-bad  sample\n";

impl PlotStyle {
    /// The legend under plots of this style.
    pub fn legend(self) -> &'static str {
        if self == PlotStyle::Lkp2014 {
            LEGEND_2014
        } else {
            LEGEND
        }
    }
}

/// A plot read back from a report.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadPlot {
    pub title: String,
    pub good: Vec<f64>,
    pub bad: Vec<f64>,
    /// The y axis, when autoscaling the samples read would not give it.
    pub range: Option<YRange>,
    /// Whether rendering the samples gives back the rows read, cell for cell.
    pub exact: bool,
}

/// Why rows could not be read as a plot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plot row {row}: {message}")]
pub struct PlotError {
    /// 0-based row of the plot.
    pub row: usize,
    pub message: String,
}

fn plot_err(row: usize, message: impl Into<String>) -> PlotError {
    PlotError {
        row,
        message: message.into(),
    }
}

/// Read one plot's 20 rows back into samples that draw it again.
///
/// Cells only give samples to the row, and a sample under the frame or under
/// another sample is not seen at all, so the reader searches: it starts from
/// what the cells show and moves one sample at a time to the row that makes
/// the drawing closest to the original, for every sample count the columns
/// allow. Samples come back as the shortest number that falls on their row.
pub fn read(rows: &[&str], style: PlotStyle) -> Result<ReadPlot, PlotError> {
    read_with(rows, style, &[])
}

/// [`read`], trying the sample counts in `hints` first (the plots of one
/// bisection mostly share theirs).
pub fn read_with(rows: &[&str], style: PlotStyle, hints: &[usize]) -> Result<ReadPlot, PlotError> {
    let grid = grid_of(rows)?;
    let title = rows[style.title_row()].trim().to_string();
    let frame = Frame::find(&grid, style)?;
    let seen = SampleCells::of(&grid, style, &frame);
    let reading = Reading {
        grid: &grid,
        target: &grid.concat(),
        title: &title,
        style,
        range: frame.range,
    };
    let mut plot = best_fit(reading, &frame, &seen, &seen.counts_to_try(&frame, hints))
        .ok_or_else(|| plot_err(TOP_ROW, "no sample count fits the columns"))?;
    // Keep the range only when the samples would not autoscale to it.
    let auto = YAxis::new(plot.good.iter().chain(&plot.bad).copied(), None);
    let (lo, hi, step) = (frame.range.low, frame.range.high, frame.step);
    if auto.min == lo && auto.max == hi && step.is_none_or(|s| (auto.step - s).abs() <= s * 1e-9) {
        plot.range = None;
    }
    Ok(plot)
}

/// A plot's rows as cells, each row padded to the full width.
fn grid_of(rows: &[&str]) -> Result<Vec<Vec<u8>>, PlotError> {
    if rows.len() != HEIGHT {
        return Err(plot_err(
            0,
            format!("a plot has {HEIGHT} rows, not {}", rows.len()),
        ));
    }
    if rows.iter().any(|r| r.len() > WIDTH || !r.is_ascii()) {
        return Err(plot_err(0, "plot rows are ASCII of at most 80 characters"));
    }
    Ok(rows
        .iter()
        .map(|r| {
            let mut b = r.as_bytes().to_vec();
            b.resize(WIDTH, b' ');
            b
        })
        .collect())
}

/// Where a plot's frame sits and the y axis its labels give.
struct Frame {
    left: usize,
    right: usize,
    /// The y range labelled on the frame, with the step when it is not the
    /// one the range itself would get.
    range: YRange,
    /// The step between the top two labels, as read.
    step: Option<f64>,
    y: YAxis,
}

impl Frame {
    fn find(grid: &[Vec<u8>], style: PlotStyle) -> Result<Frame, PlotError> {
        let top = &grid[TOP_ROW];
        let right = style.right_col();
        let left = frame_left(top, style)
            .filter(|&l| l < right)
            .ok_or_else(|| plot_err(TOP_ROW, "no frame"))?;
        // A corner is `+`, unless a sample was drawn over it.
        let corner = |c: u8| c == b'+' || (style.bad_over_frame() && b"O*".contains(&c));
        if !corner(top[right]) || !corner(grid[BOTTOM_ROW][left]) {
            return Err(plot_err(TOP_ROW, "the frame is not where gnuplot puts it"));
        }
        let (lo, hi, step) = labels(grid, left)?;
        let range = YRange {
            low: lo,
            high: hi,
            step: step.filter(|s| (s - tic_step(hi - lo)).abs() > s * 1e-9),
        };
        let y = YAxis::new(std::iter::empty(), Some(range));
        if y.label_width() + style.label_gap() != left {
            return Err(plot_err(TOP_ROW, "the labels do not match the frame"));
        }
        Ok(Frame {
            left,
            right,
            range,
            step,
            y,
        })
    }

    /// Whether a column is inside the frame, where samples are drawn.
    fn inside(&self, style: PlotStyle, col: usize) -> bool {
        if style.bad_over_frame() {
            (self.left..=self.right).contains(&col)
        } else {
            (self.left + 1..self.right).contains(&col)
        }
    }
}

/// The frame's left column, read from its top row.
fn frame_left(top: &[u8], style: PlotStyle) -> Option<usize> {
    if style.points_over_line() {
        // gnuplot 4 drew samples over the frame's corner: the frame is the
        // column after the top label and its blank.
        let start = top.iter().position(|&c| c != b' ');
        let end = start.and_then(|s| top[s..].iter().position(|&c| c == b' ').map(|e| s + e));
        end.map(|e| e + 1)
    } else {
        // The frame's corner: the first `+` after a blank (a label's
        // exponent has a `+` too, and a sample may sit on the frame's top).
        top.windows(2).position(|w| w == b" +").map(|p| p + 1)
    }
}

/// The range: the labels on the frame's top and bottom rows; the step: the
/// top two labels'.
fn labels(grid: &[Vec<u8>], left: usize) -> Result<(f64, f64, Option<f64>), PlotError> {
    let label = |row: usize| -> Option<f64> {
        std::str::from_utf8(&grid[row][..left.saturating_sub(1)])
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let (lo, hi) = match (label(BOTTOM_ROW), label(TOP_ROW)) {
        (Some(lo), Some(hi)) if lo < hi => (lo, hi),
        _ => {
            return Err(plot_err(
                TOP_ROW,
                "the y range is not labelled on the frame",
            ))
        }
    };
    let step = (TOP_ROW + 1..=BOTTOM_ROW)
        .find_map(label)
        .map(|next| hi - next)
        .filter(|s| *s > 0.0);
    Ok((lo, hi, step))
}

/// The columns of the cells that show a sample.
struct SampleCells {
    /// `O`: always a sample.
    bad: Vec<i64>,
    /// `+` (not a tic's or the line's) or, for gnuplot 4, `*`.
    good: Vec<i64>,
}

impl SampleCells {
    fn of(grid: &[Vec<u8>], style: PlotStyle, frame: &Frame) -> SampleCells {
        let (left, right) = (frame.left, frame.right);
        let y = &frame.y;
        let tic_rows: Vec<usize> = y.tics.iter().map(|(v, _)| y.row(*v) as usize).collect();
        let mut seen = SampleCells {
            bad: Vec::new(),
            good: Vec::new(),
        };
        for (r, row) in grid.iter().enumerate().take(BOTTOM_ROW + 1).skip(TOP_ROW) {
            for (col, &ch) in row.iter().enumerate() {
                if !frame.inside(style, col) {
                    continue;
                }
                let is_tic = col as i64 == left as i64 + style.tic_len() && tic_rows.contains(&r);
                // A `+` between two others on a diagonal is the line's, not a sample.
                let at = |dc: i64, dr: i64| {
                    grid.get((r as i64 + dr) as usize)
                        .and_then(|row| row.get((col as i64 + dc) as usize))
                        == Some(&b'+')
                };
                let diagonal = (at(-1, -1) && at(1, 1)) || (at(-1, 1) && at(1, -1));
                match ch {
                    b'O' => seen.bad.push(col as i64),
                    // gnuplot 4's points are drawn last: every `*` is a sample.
                    b'*' if style.points_over_line() => seen.good.push(col as i64),
                    b'+' if !style.points_over_line()
                        && !is_tic
                        && !diagonal
                        && col != left
                        && col != right =>
                    {
                        seen.good.push(col as i64)
                    }
                    _ => {}
                }
            }
        }
        seen
    }

    /// The sample counts to try, in order: the hints, then the counts the
    /// columns allow, fewest first (past the frame's width every count
    /// fits, so only the first few are tried).
    fn counts_to_try(&self, frame: &Frame, hints: &[usize]) -> Vec<usize> {
        // Per count: the cells that would fall between samples, the `O`s
        // among them (a `+` may be the line's, an `O` is always a sample).
        let misses: Vec<(usize, usize, usize)> = (1..=400usize)
            .map(|n| {
                let x = XAxis::new(n, frame.left, frame.right);
                let cols: Vec<i64> = (1..=n).map(|i| x.col(i)).collect();
                let off = |seen: &[i64]| seen.iter().filter(|c| !cols.contains(c)).count();
                (off(&self.bad), off(&self.good), n)
            })
            .collect();
        let mut by_all: Vec<(usize, usize)> = misses.iter().map(|&(b, g, n)| (b + g, n)).collect();
        by_all.sort();
        // The fewest samples that put every `O` on a sample: a line's `+`s
        // between samples make the first list miss the right count.
        let by_bad = misses
            .iter()
            .filter(|&&(b, _, _)| b == 0 && self.bad.len() >= 2)
            .map(|&(_, _, n)| n)
            .take(4);
        let mut counts: Vec<usize> = Vec::new();
        for n in hints
            .iter()
            .copied()
            .filter(|n| (1..=400).contains(n))
            .chain(by_all.into_iter().map(|(_, n)| n).take(8))
            .chain(by_bad)
        {
            if !counts.contains(&n) {
                counts.push(n);
            }
        }
        counts
    }
}

/// The plot that draws closest to the mail's over the sample counts tried,
/// stopping at the first that draws it exactly.
fn best_fit(
    reading: Reading<'_>,
    frame: &Frame,
    seen: &SampleCells,
    counts: &[usize],
) -> Option<ReadPlot> {
    let mut best: Option<(usize, ReadPlot)> = None;
    for &n in counts {
        let x = XAxis::new(n, frame.left, frame.right);
        let cols: Vec<i64> = (1..=n).map(|i| x.col(i)).collect();
        let last = |seen: &[i64]| -> usize {
            seen.iter()
                .filter_map(|c| cols.iter().rposition(|k| k == c))
                .max()
                .map_or(0, |i| i + 1)
        };
        // A series may end on the right side of the frame, hidden.
        let (nb, ng) = (last(&seen.bad), last(&seen.good));
        let mut tried = Vec::new();
        for pair in [(nb, n), (n, ng), (nb, ng), (n, n)] {
            if pair.0.max(pair.1) != n || pair == (0, 0) || tried.contains(&pair) {
                continue;
            }
            tried.push(pair);
            let (score, plot) = fit(reading, &cols, pair.0, pair.1);
            tracing::debug!(title = %reading.title, n, ?pair, score, "plot read with this sample count");
            if best.as_ref().is_none_or(|(s, _)| score < *s) {
                best = Some((score, plot));
            }
            if score == 0 {
                return best.map(|(_, plot)| plot);
            }
        }
    }
    best.map(|(_, plot)| plot)
}

/// The rows of the good samples whose dotted line best explains the cells:
/// each segment's cells count against the mail's (one less for each that
/// matches, one more for each that does not; none where the frame covers
/// them), and the cheapest path through the samples' rows is taken.
fn good_line(
    grid: &[Vec<u8>],
    style: PlotStyle,
    cols: &[i64],
    ng: usize,
    tic_rows: &[usize],
) -> Vec<usize> {
    let rows: Vec<usize> = (TOP_ROW..=BOTTOM_ROW).collect();
    let left = cols[0];
    // The frame is drawn over the line in every style.
    let hidden = |c: i64, r: i64| {
        c <= left || c >= style.right_col() as i64 || r <= TOP_ROW as i64 || r >= BOTTOM_ROW as i64
    };
    // What a tic draws at a cell (`+` at its ends, `-` between): a line's
    // pen that shows the same there explains nothing.
    let tic = |c: i64, r: i64| -> Option<u8> {
        let end = left + style.tic_len();
        if !(tic_rows.contains(&(r as usize)) && (left..=end).contains(&c)) {
            return None;
        }
        Some(if c == left || c == end { b'+' } else { b'-' })
    };
    let segment = |c0: i64, r0: usize, c1: i64, r1: usize| -> i64 {
        let mut cost = 0;
        trace(
            style.truncated_lines(),
            (c0, r0 as i64),
            (c1, r1 as i64),
            [b'.', b':', b'+'],
            |c, r, ch| {
                if hidden(c, r) {
                    return;
                }
                let shown = grid
                    .get(r as usize)
                    .and_then(|row| row.get(c as usize))
                    .copied();
                cost += match shown == Some(ch) {
                    true if tic(c, r) == Some(ch) => 0,
                    true => -1,
                    false => 1,
                };
            },
        );
        cost
    };
    let mut best: Vec<i64> = vec![0; rows.len()];
    let mut from: Vec<Vec<usize>> = Vec::with_capacity(ng);
    from.push(vec![0; rows.len()]);
    for i in 1..ng {
        let mut next = vec![i64::MAX; rows.len()];
        let mut back = vec![0; rows.len()];
        for (k1, &r1) in rows.iter().enumerate() {
            for (k0, &r0) in rows.iter().enumerate() {
                let c = best[k0] + segment(cols[i - 1], r0, cols[i], r1);
                if c < next[k1] {
                    next[k1] = c;
                    back[k1] = k0;
                }
            }
        }
        best = next;
        from.push(back);
    }
    let mut k = (0..rows.len()).min_by_key(|&k| best[k]).unwrap_or(0);
    let mut out = vec![0; ng];
    for i in (0..ng).rev() {
        out[i] = rows[k];
        k = from[i][k];
    }
    out
}

/// What a plot is read against: the mail's cells (as rows and as one run),
/// its title, style and y axis.
#[derive(Clone, Copy)]
struct Reading<'a> {
    grid: &'a [Vec<u8>],
    target: &'a [u8],
    title: &'a str,
    style: PlotStyle,
    range: YRange,
}

/// Samples for `nb` bad and `ng` good points at `cols`, searched row by row;
/// returns the cells that still differ and the plot.
fn fit(reading: Reading<'_>, cols: &[i64], nb: usize, ng: usize) -> (usize, ReadPlot) {
    let Reading {
        grid,
        target,
        title,
        style,
        range,
    } = reading;
    let (lo, hi) = (range.low, range.high);
    let span = (BOTTOM_ROW - TOP_ROW) as f64;
    let value = |row: usize| lo + (BOTTOM_ROW - row) as f64 * (hi - lo) / span;
    let column = |col: i64, want: &[u8]| -> Option<usize> {
        (TOP_ROW..=BOTTOM_ROW).find(|&r| want.contains(&grid[r][col as usize]))
    };
    // Start from what the cells show; a hidden sample takes its neighbour's row.
    let guess = |n: usize, want: &[u8]| -> Vec<usize> {
        let mut rows: Vec<Option<usize>> = (0..n).map(|i| column(cols[i], want)).collect();
        let known = rows.iter().flatten().copied().next().unwrap_or(BOTTOM_ROW);
        let mut prev = known;
        for r in rows.iter_mut() {
            prev = *r.get_or_insert(prev);
        }
        rows.into_iter().map(|r| r.unwrap_or(known)).collect()
    };
    let axis = YAxis::new(std::iter::empty(), Some(range));
    let tic_rows: Vec<usize> = axis
        .tics
        .iter()
        .map(|(v, _)| axis.row(*v) as usize)
        .collect();
    let mut bad = guess(nb, b"O");
    let mut good = if ng > 1 && !style.points_over_line() {
        good_line(grid, style, cols, ng, &tic_rows)
    } else {
        guess(ng, &[style.good_point()])
    };
    let render = |bad: &[usize], good: &[usize]| -> usize {
        let b: Vec<f64> = bad.iter().map(|&r| value(r)).collect();
        let g: Vec<f64> = good.iter().map(|&r| value(r)).collect();
        Plot {
            title,
            good: &g,
            bad: &b,
            style,
            range: Some(range),
        }
        .canvas_on(&axis)
        .cells
        .iter()
        .zip(target)
        .filter(|(a, b)| a != b)
        .count()
    };
    let score = polish(&mut bad, &mut good, render);
    let shortest = |row: usize| -> f64 {
        let v = value(row);
        (1..17)
            .filter_map(|d| format!("{v:.*e}", d - 1).parse::<f64>().ok())
            .find(|&s| axis.row(s) == row as i64)
            .unwrap_or(v)
    };
    (
        score,
        ReadPlot {
            title: title.to_string(),
            good: good.iter().map(|&r| shortest(r)).collect(),
            bad: bad.iter().map(|&r| shortest(r)).collect(),
            range: Some(range),
            exact: score == 0,
        },
    )
}

/// Moves one sample at a time to the row that draws closest to the mail's,
/// while that helps; returns the cells that still differ. Polishing only
/// pays when the start is close: a wrong sample count is left for the next
/// count to beat.
fn polish(
    bad: &mut [usize],
    good: &mut [usize],
    render: impl Fn(&[usize], &[usize]) -> usize,
) -> usize {
    let mut score = render(bad, good);
    for _pass in 0..4 {
        if score == 0 || score > 40 {
            break;
        }
        let before = score;
        for series in 0..2 {
            let len = if series == 0 { bad.len() } else { good.len() };
            for i in 0..len {
                for r in TOP_ROW..=BOTTOM_ROW {
                    let s = if series == 0 { &mut *bad } else { &mut *good };
                    let old = s[i];
                    if old == r {
                        continue;
                    }
                    s[i] = r;
                    let new = render(bad, good);
                    if new < score {
                        score = new;
                    } else {
                        let s = if series == 0 { &mut *bad } else { &mut *good };
                        s[i] = old;
                    }
                }
            }
        }
        if score >= before {
            break;
        }
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tic_steps_like_gnuplot() {
        assert_eq!(tic_step(4000.0), 500.0);
        assert_eq!(tic_step(14300.0), 2000.0);
    }

    fn plot<'a>(good: &'a [f64], bad: &'a [f64], style: PlotStyle) -> Plot<'a> {
        Plot {
            title: "m",
            good,
            bad,
            style,
            range: None,
        }
    }

    #[test]
    fn flat_and_empty_series_do_not_panic() {
        for style in PlotStyle::ALL {
            for (g, b) in [(&[1.0, 1.0][..], &[1.0][..]), (&[], &[]), (&[0.0], &[])] {
                let rows = plot(g, b, style).rows();
                assert_eq!(rows.len(), 20);
                assert!(rows.iter().all(|l| l.len() == 80));
            }
        }
    }

    #[test]
    fn read_gives_back_what_was_drawn() {
        let good: Vec<f64> = (0..35).map(|i| 17400.0 - (i % 7) as f64 * 90.0).collect();
        let bad: Vec<f64> = (0..20).map(|i| 14500.0 + (i % 3) as f64 * 300.0).collect();
        for style in PlotStyle::ALL {
            let rows = plot(&good, &bad, style).rows();
            let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
            let read = read(&rows, style).unwrap();
            assert!(read.exact, "{style:?}");
            let again = Plot {
                title: "m",
                good: &read.good,
                bad: &read.bad,
                style,
                range: read.range,
            }
            .rows();
            assert_eq!(again, rows);
        }
    }

    #[test]
    fn rows_that_are_not_a_plot_are_an_error() {
        let rows = vec![""; 20];
        assert!(read(&rows, PlotStyle::Lkp2020).is_err());
        assert!(read(&rows[..3], PlotStyle::Lkp2020).is_err());
    }
}

#[cfg(test)]
mod lkp2014 {
    use super::*;

    #[test]
    fn the_2014_plots_read_back_exactly() {
        let text = include_str!(
            "../../tests/fixtures/reports/2014-06-26_mempolicy_5507231dd04_vm-scalability.txt"
        );
        let lines: Vec<&str> = text.lines().collect();
        let legend = lines.iter().position(|l| *l == "Legend:").unwrap();
        for k in 0..2 {
            let start = legend + 4 + 19 * k;
            // The excerpt's editorial note stands where the second plot's
            // last (blank) row was.
            let mut rows = lines[start..start + 19].to_vec();
            rows.push("");
            let rows = &rows[..];
            let read = read(rows, PlotStyle::Lkp2014).unwrap();
            let again = Plot {
                title: &read.title,
                good: &read.good,
                bad: &read.bad,
                style: PlotStyle::Lkp2014,
                range: read.range,
            }
            .text();
            let want = rows.join("\n");
            assert_eq!(again, want, "{:?} {:?}", read.good, read.bad);
            assert!(read.exact);
        }
    }
}
