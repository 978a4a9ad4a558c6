//! perfbot's table and plots against lkp-tests' own output (golden files from
//! `lkp ncompare` and gnuplot's dumb terminal).

use std::path::Path;

use perfbot::compare::case_file::CaseFile;
use perfbot::compare::matrix::{Matrix, Series};
use perfbot::compare::rules::SelectionRules;
use perfbot::report::plot::Plot;

fn fixtures() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/conformance"
    ))
}

#[test]
fn every_conformance_case_matches_byte_for_byte() {
    let rules = SelectionRules::default_rules();
    let mut n = 0;
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let dir = entry.unwrap().path();
        let case = CaseFile::load(&dir.join("case.json")).unwrap();
        let want = std::fs::read_to_string(dir.join("output.txt")).unwrap();
        let got = case.table(&rules, &Default::default()).render();
        assert_eq!(got, want, "case {}", dir.display());
        n += 1;
    }
    assert!(n >= 1);
}

fn samples(m: &Matrix, k: &str) -> Vec<f64> {
    match &m.stats[k] {
        Series::Numbers(v) => v.iter().map(|s| s.value).collect(),
        Series::Text => panic!("text"),
    }
}

#[test]
fn plots_match_gnuplot_dumb_terminal() {
    let dir = fixtures().join("fio_two_commits");
    let base = Matrix::load(&dir.join("base.matrix.json")).unwrap();
    let head = Matrix::load(&dir.join("head.matrix.json")).unwrap();
    let mut got = String::new();
    for metric in ["fio.write_iops", "vmstat.system.cs"] {
        let (good, bad) = (samples(&base, metric), samples(&head, metric));
        got.push_str(
            &Plot {
                title: metric,
                good: &good,
                bad: &bad,
            }
            .render_dumb(),
        );
    }
    let want = std::fs::read_to_string(dir.join("mmplot.txt")).unwrap();
    assert_eq!(got, want);
}
