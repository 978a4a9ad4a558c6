//! The noise gate: is a headline change more than the runs' own scatter?
//! From the raw samples of base and head, a percentile bootstrap gives a
//! confidence interval of the change (resampling each side with
//! replacement), and Hedges' g its size in pooled standard deviations. A
//! change whose interval reaches zero, or stays under the reporting
//! threshold, is held for a human with the reason, never mailed on its own.
//! Seeded: the same samples give the same interval on every run.

use serde::Serialize;

/// The bootstrap's settings (`[noise]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bootstrap {
    pub resamples: usize,
    /// Two-sided confidence level (0.95).
    pub level: f64,
    pub seed: u64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap {
            resamples: 1000,
            level: 0.95,
            seed: 0x5eed,
        }
    }
}

/// A change's confidence interval (percent, or absolute for `%` metrics).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    pub level: f64,
    /// Hedges' g: the difference of the means in pooled standard deviations
    /// (small-sample corrected); infinite when neither side varies.
    pub effect: f64,
}

impl Interval {
    /// `[-9.8%, -8.1%]` (`[+0.2, +0.5]` for an absolute change).
    pub fn describe(&self, absolute: bool) -> String {
        let unit = if absolute { "" } else { "%" };
        format!(
            "{:.0}% interval [{:+.1}{unit}, {:+.1}{unit}], effect size {:.1}",
            self.level * 100.0,
            self.low,
            self.high,
            self.effect
        )
    }
}

/// splitmix64: a fast, well-mixed, seedable generator (reproducibility is
/// the point here, not cryptography).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Indices for resampling: four 16-bit draws from each 64-bit word, scaled
/// to `0..n` by multiply-shift (for the handful of runs a test has, the bias
/// of 16 bits is below 1e-3 and the same on every run).
struct Picks {
    rng: SplitMix,
    word: u64,
    left: u32,
}

impl Picks {
    fn new(seed: u64) -> Picks {
        Picks {
            rng: SplitMix(seed),
            word: 0,
            left: 0,
        }
    }

    fn below(&mut self, n: usize) -> usize {
        if self.left == 0 {
            self.word = self.rng.next();
            self.left = 4;
        }
        let draw = self.word & 0xFFFF;
        self.word >>= 16;
        self.left -= 1;
        ((draw as usize) * n) >> 16
    }
}

/// The mean of `v` resampled with replacement.
fn resampled_mean(v: &[f64], rng: &mut Picks) -> f64 {
    let mut sum = 0.0;
    for _ in 0..v.len() {
        sum += v[rng.below(v.len())];
    }
    sum / v.len() as f64
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn variance(v: &[f64], m: f64) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64
}

fn change(b: f64, h: f64, absolute: bool) -> f64 {
    if absolute {
        h - b
    } else if b == 0.0 {
        f64::INFINITY.copysign(h)
    } else {
        100.0 * (h - b) / b
    }
}

/// The interval of the change from `base` to `head`. `None` with fewer than
/// two samples on a side or a non-finite sample: there is no scatter to
/// judge by.
pub fn interval(base: &[f64], head: &[f64], absolute: bool, b: Bootstrap) -> Option<Interval> {
    if base.len() < 2 || head.len() < 2 || !base.iter().chain(head).all(|x| x.is_finite()) {
        return None;
    }
    let mut rng = Picks::new(b.seed);
    let mut changes = Vec::with_capacity(b.resamples);
    for _ in 0..b.resamples.max(1) {
        let mb = resampled_mean(base, &mut rng);
        let mh = resampled_mean(head, &mut rng);
        changes.push(change(mb, mh, absolute));
    }
    // The two percentiles by selection, not a sort (20,000 metrics × 1,000
    // resamples: a sort each would be a third of the time).
    let tail = (1.0 - b.level) / 2.0;
    let last = changes.len() - 1;
    let lo = (last as f64 * tail).round() as usize;
    let hi = (last as f64 * (1.0 - tail)).round() as usize;
    let low = *changes.select_nth_unstable_by(lo, f64::total_cmp).1;
    let high = *changes.select_nth_unstable_by(hi, f64::total_cmp).1;
    let (mb, mh) = (mean(base), mean(head));
    let (n1, n2) = (base.len() as f64, head.len() as f64);
    let pooled = (((n1 - 1.0) * variance(base, mb) + (n2 - 1.0) * variance(head, mh))
        / (n1 + n2 - 2.0))
        .sqrt();
    let correction = 1.0 - 3.0 / (4.0 * (n1 + n2) - 9.0);
    let effect = if pooled > 0.0 {
        (mh - mb) / pooled * correction
    } else if mh == mb {
        0.0
    } else {
        f64::INFINITY.copysign(mh - mb)
    };
    Some(Interval {
        low,
        high,
        level: b.level,
        effect,
    })
}

/// Why a headline with this interval should not go out on its own: its
/// interval reaches zero, or its end nearest zero is under the reporting
/// threshold (`min_change` percent, or absolute for `%` metrics).
pub fn hold_reason(i: &Interval, absolute: bool, min_change: f64) -> Option<String> {
    if i.low <= 0.0 && i.high >= 0.0 {
        return Some(format!(
            "the change is within the runs' scatter: its {} reaches zero",
            i.describe(absolute)
        ));
    }
    let nearest = i.low.abs().min(i.high.abs());
    (nearest < min_change).then(|| {
        format!(
            "the change may be under the reporting threshold ({min_change}{}): {}",
            if absolute { "" } else { "%" },
            i.describe(absolute)
        )
    })
}

/// Where a fix leaves the headline metric, against the base the regression
/// was measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Back {
    /// Back within the runs' scatter (or under the reporting threshold).
    Within,
    /// Clearly better than the base.
    Better,
    /// Still changed the way the regression went.
    Still,
}

/// One side of the check: raw samples, or a summary (mean and its standard
/// deviation in percent) where the input had no samples.
#[derive(Debug, Clone, PartialEq)]
pub enum Side {
    Samples(Vec<f64>),
    Summary { mean: f64, stddev_percent: f64 },
}

impl Side {
    /// The mean of the side.
    pub fn mean(&self) -> f64 {
        match self {
            Side::Samples(v) => mean(v),
            Side::Summary { mean, .. } => *mean,
        }
    }
    /// Its standard deviation in percent of the mean.
    pub fn stddev_percent(&self) -> f64 {
        match self {
            Side::Samples(v) => {
                let m = mean(v);
                if m == 0.0 {
                    0.0
                } else {
                    100.0 * variance(v, m).sqrt() / m.abs()
                }
            }
            Side::Summary { stddev_percent, .. } => *stddev_percent,
        }
    }
}

/// The figures of a fix's check.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FixCheck {
    pub base_mean: f64,
    pub fix_mean: f64,
    /// From the base to the fix (percent, or absolute for `%` metrics).
    pub change: f64,
    pub interval: Option<Interval>,
    pub back: Back,
}

impl FixCheck {
    /// `base 41000, with the fix 40950 (-0.1%, 95% interval [...]): back within the noise`
    pub fn describe(&self, absolute: bool) -> String {
        let unit = if absolute { "" } else { "%" };
        let interval = self
            .interval
            .map(|i| format!(", {}", i.describe(absolute)))
            .unwrap_or_default();
        let verdict = match self.back {
            Back::Within => "back within the noise",
            Back::Better => "better than the base",
            Back::Still => "still regressed",
        };
        format!(
            "base {}, with the fix {} ({:+.1}{unit}{interval}): {verdict}",
            short(self.base_mean),
            short(self.fix_mean),
            self.change
        )
    }
}

fn short(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.4}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// Did a fix bring the metric back? `regressed_up`: the regression raised
/// the metric (a latency), so "still" means still up. With raw samples on
/// both sides the bootstrap interval decides, as the noise gate does; from
/// summaries, a change within twice the base's standard deviation (or under
/// `min_change`) is within the noise. `None`: no finite figures.
pub fn fix_check(
    base: &Side,
    fix: &Side,
    regressed_up: bool,
    absolute: bool,
    min_change: f64,
    b: Bootstrap,
) -> Option<FixCheck> {
    let (mb, mf) = (base.mean(), fix.mean());
    if !mb.is_finite() || !mf.is_finite() {
        return None;
    }
    let delta = change(mb, mf, absolute);
    let interval = match (base, fix) {
        (Side::Samples(x), Side::Samples(y)) => interval(x, y, absolute, b),
        _ => None,
    };
    let within = match &interval {
        Some(i) => hold_reason(i, absolute, min_change).is_some(),
        None => {
            let sd = base.stddev_percent();
            let noise = if absolute {
                2.0 * sd * mb.abs() / 100.0
            } else {
                2.0 * sd
            };
            delta.abs() <= noise.max(min_change)
        }
    };
    let back = if within {
        Back::Within
    } else if (delta > 0.0) == regressed_up {
        Back::Still
    } else {
        Back::Better
    };
    Some(FixCheck {
        base_mean: mb,
        fix_mean: mf,
        change: delta,
        interval,
        back,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clear_changes_pass_and_noisy_ones_are_held() {
        let b = Bootstrap::default();
        // (base, head, absolute, held?)
        let table: [(&[f64], &[f64], bool, bool); 5] = [
            (
                &[41000., 41200., 40800., 41100., 40900.],
                &[37300., 37200., 37400., 37350., 37250.],
                false,
                false,
            ),
            (
                &[100., 130., 70., 110., 90.],
                &[104., 125., 80., 115., 96.],
                false,
                true,
            ),
            // Clear but small: under a 1% threshold.
            (
                &[1000., 1001., 999., 1000., 1000.],
                &[1005., 1006., 1004., 1005., 1005.],
                false,
                true,
            ),
            (
                &[12.1, 12.3, 12.0, 12.2, 12.15],
                &[13.5, 13.6, 13.4, 13.55, 13.45],
                true,
                false,
            ),
            (&[5., 5., 5.], &[5., 5., 5.], false, true),
        ];
        for (base, head, absolute, held) in table {
            let i = interval(base, head, absolute, b).unwrap();
            assert!(i.low <= i.high);
            assert_eq!(
                hold_reason(&i, absolute, 1.0).is_some(),
                held,
                "{base:?} → {head:?}: {i:?}"
            );
        }
    }

    #[test]
    fn the_interval_is_seeded_and_needs_scatter() {
        let (x, y) = ([1.0, 2.0, 3.0], [2.0, 3.0, 4.5]);
        let b = Bootstrap::default();
        assert_eq!(interval(&x, &y, false, b), interval(&x, &y, false, b));
        let other = Bootstrap { seed: 7, ..b };
        assert_ne!(interval(&x, &y, false, b), interval(&x, &y, false, other));
        assert_eq!(interval(&[1.0], &y, false, b), None);
        assert_eq!(interval(&x, &[f64::NAN, 1.0], false, b), None);
    }

    #[test]
    fn a_fix_is_back_better_or_still_regressed() {
        let b = Bootstrap::default();
        let base = [41000., 41200., 40800., 41100., 40900.];
        // (fix samples, the regression raised the metric, want)
        let table: [(&[f64], bool, Back); 4] = [
            (
                &[40950., 41150., 40850., 41050., 40900.],
                false,
                Back::Within,
            ),
            (
                &[37300., 37200., 37400., 37350., 37250.],
                false,
                Back::Still,
            ),
            (
                &[45300., 45200., 45400., 45350., 45250.],
                false,
                Back::Better,
            ),
            (&[45300., 45200., 45400., 45350., 45250.], true, Back::Still),
        ];
        for (fix, up, want) in table {
            let (x, y) = (Side::Samples(base.to_vec()), Side::Samples(fix.to_vec()));
            let c = fix_check(&x, &y, up, false, 1.0, b).unwrap();
            assert_eq!(c.back, want, "{fix:?}: {}", c.describe(false));
        }
        // Summaries: twice the base's scatter is the noise.
        let s = |mean| Side::Summary {
            mean,
            stddev_percent: 2.0,
        };
        for (fix, want) in [
            (10300.0, Back::Within),
            (9000.0, Back::Still),
            (11000.0, Back::Better),
        ] {
            let c = fix_check(&s(10000.0), &s(fix), false, false, 1.0, b).unwrap();
            assert_eq!(c.back, want, "{fix}");
        }
        assert_eq!(fix_check(&s(f64::NAN), &s(1.0), false, false, 1.0, b), None);
    }
}
