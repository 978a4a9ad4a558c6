//! Verified closure. A case closed because a fix or a revert was posted
//! (`fixed`, `reverted`) is "fix unverified" until a later comparison input
//! for a commit with the fix is given to `perfbot report`: matched to the
//! case by its test, its headline metric and the commit it compares against
//! (the case's own base, or the regressing commit itself), it says whether
//! the metric is back within its noise. Back (or better): the case is
//! "fixed (verified)" with the figures. Still regressed: the case reopens
//! with the new numbers. Either way no report mail goes out for it.

use crate::compare::noise::{fix_check, Back, FixCheck, Side};
use crate::config::Config;
use crate::input::{AggValue, LoadedInput, TestData};
use crate::model::case::{Case, CaseState, Cause, Verified};
use crate::store::{Store, StoreError};

/// A follow-up comparison matched to a case, and what it shows.
#[derive(Debug, Clone)]
pub struct Verification {
    pub case: Case,
    /// The input file.
    pub input: String,
    /// The commit tested (with the fix).
    pub commit: String,
    pub check: FixCheck,
    /// The figures, for people.
    pub figures: String,
}

impl Verification {
    pub fn verified(&self) -> bool {
        self.check.back != Back::Still
    }
}

/// Two commit ids name the same commit (one abbreviates the other).
fn same_commit(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    a.len() >= 7 && b.len() >= 7 && (a.starts_with(&b) || b.starts_with(&a))
}

/// Both sides of `metric` in the input's first test: its raw samples (as
/// the noise gate reads them), or an aggregated row's means and standard
/// deviations.
fn sides(loaded: &LoadedInput, metric: &str) -> Option<(Side, Side)> {
    if let Some((b, h)) = crate::flows::report::samples(loaded, metric) {
        return Some((Side::Samples(b), Side::Samples(h)));
    }
    let Some(TestData::Aggregated(rows)) = loaded.data.first() else {
        return None;
    };
    let r = rows.iter().find(|r| r.metric == metric)?;
    let summary = |v: &AggValue| match v {
        AggValue::Mean(mean) => Some(Side::Summary {
            mean: *mean,
            stddev_percent: 0.0,
        }),
        AggValue::Full {
            mean,
            stddev_percent,
            ..
        } => Some(Side::Summary {
            mean: *mean,
            stddev_percent: stddev_percent.unwrap_or(0.0),
        }),
        AggValue::Failures { .. } => None,
    };
    Some((summary(&r.base)?, summary(&r.head)?))
}

/// The change the case's report printed (`-9.0%`, `−9.0%`, `+1.5`).
fn reported_change(c: &Case) -> Option<f64> {
    c.headline_change
        .trim()
        .trim_end_matches('%')
        .replace('\u{2212}', "-")
        .parse()
        .ok()
}

/// The base the regression was measured from, where the case kept no
/// samples (aggregated inputs, adopted reports): the regressing commit's
/// figures in the follow-up, taken back by the case's headline `change`,
/// with their scatter.
fn original_base(regressed: &Side, change: f64, absolute: bool) -> Option<Side> {
    let mean = regressed.mean();
    let base = if absolute {
        mean - change
    } else {
        mean / (1.0 + change / 100.0)
    };
    base.is_finite().then_some(Side::Summary {
        mean: base,
        stddev_percent: regressed.stddev_percent(),
    })
}

/// The case a follow-up comparison verifies, if it is one: a closed case
/// awaiting verification with the input's test and headline metric, whose
/// regressing commit the input compares a later commit against.
pub fn find(
    config: &Config,
    store: &Store,
    loaded: &LoadedInput,
) -> Result<Option<Verification>, StoreError> {
    let i = &loaded.input;
    let Some(test) = i.tests.first() else {
        return Ok(None);
    };
    // Only a comparison from the regressing commit itself is about its
    // regression: many reports share a base (a release), and a new
    // regression on it is no verification of an older fix.
    let mut cases: Vec<Case> = store
        .cases()?
        .into_iter()
        .filter(|c| matches!(c.state, CaseState::Fixed | CaseState::Reverted))
        .filter(|c| c.verified.is_none() && c.testcase == test.testcase)
        .filter(|c| same_commit(&c.commit, &i.base.sha))
        .filter(|c| !same_commit(&c.commit, &i.commit.sha))
        .collect();
    cases.sort_by_key(|c| std::cmp::Reverse(c.updated));
    for c in cases {
        let metric = &c.headline_metric;
        let absolute = config.selection.is_absolute_change(metric);
        let Some((regressed, fix)) = sides(loaded, metric) else {
            continue;
        };
        let base = if c.baseline.is_empty() {
            reported_change(&c).and_then(|ch| original_base(&regressed, ch, absolute))
        } else {
            Some(Side::Samples(c.baseline.clone()))
        };
        let Some(base) = base else {
            continue;
        };
        let up = !c.headline_change.trim_start().starts_with('-');
        let min = config.report_setup().report.min_change_percent;
        let Some(check) = fix_check(
            &base,
            &fix,
            up,
            absolute,
            min,
            config.file.noise.bootstrap(),
        ) else {
            continue;
        };
        let figures = format!("{metric}: {}", check.describe(absolute));
        return Ok(Some(Verification {
            input: loaded.path.display().to_string(),
            commit: i.commit.sha.chars().take(12).collect(),
            check,
            figures,
            case: c,
        }));
    }
    Ok(None)
}

/// Record what a verification shows: verified, or the case reopened with
/// the new numbers. `None`: the case moved meanwhile (nothing written).
pub fn record(store: &Store, v: &Verification) -> Result<Option<Case>, StoreError> {
    if v.verified() {
        let rec = Verified {
            at: chrono::Utc::now(),
            input: v.input.clone(),
            commit: v.commit.clone(),
            figures: v.figures.clone(),
        };
        return store.record_verified(&v.case.id, v.case.state, &rec);
    }
    let c = store.set_state(
        &v.case.id,
        CaseState::Reopened,
        Cause::system(format!("follow-up comparison {}", v.input)),
        &format!(
            "the fix did not bring it back: with {}, {}",
            v.commit, v.figures
        ),
    )?;
    Ok(Some(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without kept samples, the case's base is the regressing commit's
    /// figures taken back by the reported change.
    #[test]
    fn the_original_base_from_the_reported_change() {
        let mut c = Case::sample("0123456789ab", CaseState::Fixed, chrono::Utc::now());
        let regressed = Side::Summary {
            mean: 9100.0,
            stddev_percent: 1.0,
        };
        for (change, absolute, want) in [
            ("-9.0%", false, Some(10000.0)),
            ("\u{2212}9.0%", false, Some(10000.0)),
            ("+1.5", true, Some(9098.5)),
            ("n/a", false, None),
        ] {
            c.headline_change = change.into();
            let got = reported_change(&c)
                .and_then(|ch| original_base(&regressed, ch, absolute))
                .map(|s| s.mean());
            match (got, want) {
                (Some(g), Some(w)) => assert!((g - w).abs() < 1e-6, "{change}: {g}"),
                (g, w) => assert_eq!(g, w, "{change}"),
            }
        }
    }

    /// A case that kept no samples (an aggregated input, an adopted robot
    /// report) is verified by a follow-up of aggregated rows: its base is
    /// the regressing commit's mean taken back by the reported change,
    /// with that mean's scatter. Back to it: verified; still down: not.
    #[test]
    fn an_aggregated_follow_up_verifies_a_case_without_samples() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("state")).unwrap();
        let config = Config::load(None).unwrap();
        let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/seed004-f2fs-aim7-improvement.json");
        let mut c = Case::sample("0123456789ab", CaseState::Fixed, chrono::Utc::now());
        c.testcase = "aim7".into();
        c.headline_metric = "aim7.jobs-per-min".into();
        c.headline_change = "-47.8%".into();
        store.adopt_case(&c, Cause::system("test")).unwrap();
        // The regressing commit measured again (2085 jobs a minute), and a
        // commit with the fix: `fixed` jobs a minute.
        let follow_up = |base_sha: &str, fixed: f64| {
            let mut v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&example).unwrap()).unwrap();
            v["base"]["sha"] = base_sha.into();
            v["commit"]["sha"] = "fedcba9876543210fedcba9876543210fedcba98".into();
            v["tests"][0]["aggregated"] = serde_json::json!([{
                "metric": "aim7.jobs-per-min",
                "base": {"mean": 2085.0, "stddev_percent": 1.0},
                "head": {"mean": fixed, "stddev_percent": 1.0},
            }]);
            v["tests"][0].as_object_mut().unwrap().remove("bisect");
            LoadedInput::parse(&v.to_string(), &example).unwrap()
        };
        let found = |base_sha: &str, fixed: f64| {
            find(&config, &store, &follow_up(base_sha, fixed)).unwrap()
        };
        let back = found(&c.commit, 3990.0).expect("matched by test, metric and commit");
        assert!(back.verified(), "{}", back.figures);
        assert!(
            back.figures.starts_with("aim7.jobs-per-min: "),
            "{}",
            back.figures
        );
        let still = found(&c.commit[..12], 2100.0).expect("an abbreviated id matches");
        assert!(!still.verified(), "{}", still.figures);
        // A comparison from another commit is no follow-up of this case.
        assert!(found("1111111111111111111111111111111111111111", 3990.0).is_none());
    }
}
