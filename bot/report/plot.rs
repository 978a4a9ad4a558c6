//! ASCII bisect plots in the style of gnuplot's dumb terminal (80×20), as lkp's
//! `mmplot` draws them: bad samples as `O`, good samples as `+` joined by dots.

const WIDTH: usize = 80;
const HEIGHT: usize = 20;
const TITLE_ROW: usize = 2;
const TOP_ROW: usize = 3;
const BOTTOM_ROW: usize = 17;
const RIGHT_COL: usize = 76;

/// One plot: a metric's good and bad samples, each at x = 1, 2, …
#[derive(Debug, Clone)]
pub struct Plot<'a> {
    pub title: &'a str,
    pub good: &'a [f64],
    pub bad: &'a [f64],
}

/// gnuplot's tic step for a range: about `guide` tics, on 1/2/5 steps.
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

/// A tic label as gnuplot's `% h` prints it in a plain-text terminal.
fn tic_label(v: f64) -> String {
    let v = if v.abs() < 1e-12 * v.abs().max(1.0) {
        0.0
    } else {
        v
    };
    let s = super::numfmt::general(v, 6);
    if s.starts_with('-') {
        s
    } else {
        format!(" {s}")
    }
}

fn round(v: f64) -> i64 {
    (v + 0.5).floor() as i64
}

struct Canvas {
    cells: Vec<Vec<char>>,
}

impl Canvas {
    fn new() -> Self {
        Canvas {
            cells: vec![vec![' '; WIDTH]; HEIGHT],
        }
    }
    fn set(&mut self, col: i64, row: i64, c: char) {
        if (0..WIDTH as i64).contains(&col) && (0..HEIGHT as i64).contains(&row) {
            self.cells[row as usize][col as usize] = c;
        }
    }
    fn put_str(&mut self, col: usize, row: usize, s: &str) {
        for (i, c) in s.chars().enumerate() {
            self.set((col + i) as i64, row as i64, c);
        }
    }
    /// A dotted line between two cells: `.` where it runs flat, `:` where steep.
    fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64)) {
        let (dx, dy) = (x1 - x0, y1 - y0);
        if dx.abs() >= dy.abs() {
            let steps = dx.abs().max(1);
            for i in 0..=steps {
                let x = x0 + i * dx.signum();
                let y = round(y0 as f64 + dy as f64 * i as f64 / steps as f64);
                self.set(x, y, '.');
            }
        } else {
            let steps = dy.abs();
            for i in 0..=steps {
                let y = y0 + i * dy.signum();
                let x = round(x0 as f64 + dx as f64 * i as f64 / steps as f64);
                self.set(x, y, ':');
            }
        }
    }
}

impl Plot<'_> {
    /// The plot's 20 lines of 80 characters.
    pub fn lines(&self) -> Vec<String> {
        let all: Vec<f64> = self
            .good
            .iter()
            .chain(self.bad)
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        let mut c = Canvas::new();
        let (mut lo, mut hi) = all
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        if all.is_empty() {
            (lo, hi) = (-1.0, 1.0);
        } else if lo == hi {
            // gnuplot widens an empty range by 1% each way (or to ±1 at zero).
            if lo == 0.0 {
                (lo, hi) = (-1.0, 1.0);
            } else {
                (lo, hi) = (lo - lo.abs() * 0.01, hi + hi.abs() * 0.01);
            }
        }
        let step = tic_step(hi - lo);
        let ymin = (lo / step).floor() * step;
        let ymax = (hi / step).ceil() * step;
        let ntics = ((ymax - ymin) / step).round() as i64;
        let labels: Vec<(f64, String)> = (0..=ntics)
            .map(|i| {
                let v = ymin + i as f64 * step;
                (v, tic_label(v))
            })
            .collect();
        let label_width = labels
            .iter()
            .map(|(_, l)| l.chars().count())
            .max()
            .unwrap_or(1);
        let left = label_width + 2;
        let row_of = |y: f64| -> i64 {
            let from_bottom = round((y - ymin) * (BOTTOM_ROW - TOP_ROW) as f64 / (ymax - ymin));
            BOTTOM_ROW as i64 - from_bottom
        };
        let n = self.good.len().max(self.bad.len()).max(1);
        let (xmin, xmax) = if n == 1 {
            (0.99, 1.01)
        } else {
            (1.0, n as f64)
        };
        let col_of = |x: f64| -> i64 {
            left as i64 + round((x - xmin) * (RIGHT_COL - left) as f64 / (xmax - xmin))
        };

        // Tic marks and labels (behind the data).
        for (v, label) in &labels {
            let row = row_of(*v);
            c.set(left as i64 + 1, row, '-');
            c.set(left as i64 + 2, row, '+');
            let start = left - 1 - label.chars().count();
            c.put_str(start, row as usize, label);
        }
        // Title, centred over the plot area.
        let centre = (left + RIGHT_COL) / 2;
        let tlen = self.title.chars().count();
        c.put_str(centre.saturating_sub(tlen / 2), TITLE_ROW, self.title);

        // Bad samples first, then the good line and its points.
        for (i, v) in self.bad.iter().enumerate() {
            c.set(col_of(i as f64 + 1.0), row_of(*v), 'O');
        }
        let good: Vec<(i64, i64)> = self
            .good
            .iter()
            .enumerate()
            .map(|(i, v)| (col_of(i as f64 + 1.0), row_of(*v)))
            .collect();
        for w in good.windows(2) {
            c.line(w[0], w[1]);
        }
        for &(x, y) in &good {
            c.set(x, y, '+');
        }

        // The border is drawn last, in front of the data.
        for col in left..=RIGHT_COL {
            c.set(col as i64, TOP_ROW as i64, '-');
            c.set(col as i64, BOTTOM_ROW as i64, '-');
        }
        for row in TOP_ROW..=BOTTOM_ROW {
            c.set(left as i64, row as i64, '|');
            c.set(RIGHT_COL as i64, row as i64, '|');
        }
        for (col, row) in [
            (left, TOP_ROW),
            (RIGHT_COL, TOP_ROW),
            (left, BOTTOM_ROW),
            (RIGHT_COL, BOTTOM_ROW),
        ] {
            c.set(col as i64, row as i64, '+');
        }
        c.cells
            .into_iter()
            .map(|r| r.into_iter().collect())
            .collect()
    }

    /// gnuplot's own output: a form feed, then the 20 lines.
    pub fn render_dumb(&self) -> String {
        format!("\u{c}{}", self.lines().join("\n"))
    }
}

/// The legend under a report's plots.
pub const LEGEND: &str = "[*] bisect-good sample\n[O] bisect-bad  sample\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tic_steps_like_gnuplot() {
        assert_eq!(tic_step(4000.0), 500.0);
        assert_eq!(tic_step(14300.0), 2000.0);
    }

    #[test]
    fn flat_series_does_not_panic() {
        let p = Plot {
            title: "x",
            good: &[1.0, 1.0],
            bad: &[1.0],
        };
        assert_eq!(p.lines().len(), 20);
        let p = Plot {
            title: "x",
            good: &[],
            bad: &[],
        };
        assert!(p.lines().iter().all(|l| l.chars().count() == 80));
    }
}
