//! perfbot's table and plots against lkp-tests' own output (golden files from
//! `lkp ncompare` and gnuplot's dumb terminal).

use std::path::Path;

use perfbot::compare::case_file::CaseFile;
use perfbot::compare::matrix::{Matrix, Series};
use perfbot::compare::rules::SelectionRules;
use perfbot::report::plot::{Plot, PlotStyle};

fn fixtures() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/conformance"
    ))
}

/// Rows where lkp's Ruby prints a number that is not correctly rounded and
/// perfbot prints the correctly rounded one (lkp-table-spec §3.4): (case,
/// metric, lkp's text, perfbot's text, why). Every other byte is lkp's.
const ROUNDING_FIXES: &[(&str, &str, &str, &str, &str)] = &[(
    "fio_two_commits",
    "mpstat.cpu.all.sys%",
    "+1.4",
    "+1.3",
    "13.5 - 12.15 (compensated means) = 1.34999999999999964; Ruby's dtoa takes it for the tie 1.35 and rounds half to even",
)];

/// `perfbot compare` prints each case's `perfbot.txt`, and that is lkp's
/// `output.txt` except for the listed rounding fixes.
#[test]
fn every_conformance_case_matches_lkp_but_for_correct_rounding() {
    let rules = SelectionRules::default_rules();
    let mut n = 0;
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let case = CaseFile::load(&dir.join("case.json")).unwrap();
        let got = case.table(&rules, &Default::default()).render();
        let ours = std::fs::read_to_string(dir.join("perfbot.txt")).unwrap();
        assert_eq!(got, ours, "case {name}");
        let lkp = std::fs::read_to_string(dir.join("output.txt")).unwrap();
        let (ours, lkp): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), lkp.lines().collect());
        assert_eq!(ours.len(), lkp.len(), "case {name}: line count");
        let mut fixed = 0;
        for (o, l) in ours.iter().zip(&lkp) {
            if o == l {
                continue;
            }
            let fix = ROUNDING_FIXES
                .iter()
                .find(|f| f.0 == name && o.ends_with(f.1) && o.replacen(f.3, f.2, 1) == *l);
            assert!(
                fix.is_some(),
                "case {name}: an unlisted difference\n lkp:     {l}\n perfbot: {o}"
            );
            fixed += 1;
        }
        let listed = ROUNDING_FIXES.iter().filter(|f| f.0 == name).count();
        assert_eq!(
            fixed, listed,
            "case {name}: a listed rounding fix no longer differs"
        );
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
                style: PlotStyle::Gnuplot54,
                range: None,
            }
            .render_dumb(),
        );
    }
    let want = std::fs::read_to_string(dir.join("mmplot.txt")).unwrap();
    assert_eq!(got, want);
}

/// Three columns and failure stats: the header widths of lkp's 3-commit output
/// (spec §2) and the failure block before the perf block.
#[test]
fn three_columns_with_failure_stats() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, v: serde_json::Value| {
        std::fs::write(dir.path().join(name), v.to_string()).unwrap()
    };
    let src = |c: &str| {
        serde_json::json!([
            format!("/r/{c}/0"),
            format!("/r/{c}/1"),
            format!("/r/{c}/2"),
            format!("/r/{c}/3")
        ])
    };
    write(
        "a.json",
        serde_json::json!({
        "will-it-scale.224.processes": [22450504, 22450505, 22450503, 22450506],
        "mpstat.cpu.all.usr%": [2.32, 2.31, 2.33, 2.32],
        "stats_source": src("a")}),
    );
    write(
        "b.json",
        serde_json::json!({
        "will-it-scale.224.processes": [20210544, 20210543, 20210545, 20210544],
        "mpstat.cpu.all.usr%": [2.08, 2.07, 2.09, 2.08],
        "dmesg.RIP:kmem_cache_alloc": [1, 0, 1],
        "stats_source": src("b")}),
    );
    write(
        "c.json",
        serde_json::json!({
        "will-it-scale.224.processes": [22480000, 22480001, 22479999, 22480000],
        "mpstat.cpu.all.usr%": [2.32, 2.31, 2.33, 2.32],
        "stats_source": src("c")}),
    );
    write(
        "case.json",
        serde_json::json!({
        "common_axes": {"tbox_group": "lkp-x", "testcase": "will-it-scale"},
        "compare_axis_key": "commit",
        "columns": [
            {"commit": "4f3d2c1b0a9e8d7c6b5a", "matrix": "a.json"},
            {"commit": "a1b2c3d4e5f60718293a4b5c6d7e8f", "matrix": "b.json"},
            {"commit": "fedcba9876543210fedcba9876543210", "matrix": "c.json"}]}),
    );
    let case = CaseFile::load(&dir.path().join("case.json")).unwrap();
    let out = case
        .table(&SelectionRules::default_rules(), &Default::default())
        .render();
    let want = "\
=========================================================================================
tbox_group/testcase:
  lkp-x/will-it-scale

commit: 
  4f3d2c1b0a9e8d7c6b5a
  a1b2c3d4e5f60718293a4b5c6d7e8f
  fedcba9876543210fedcba9876543210

4f3d2c1b0a9e8d7c a1b2c3d4e5f60718293a4b5c6d7 fedcba9876543210fedcba98765 
---------------- --------------------------- --------------------------- 
       fail:runs  %reproduction    fail:runs  %reproduction    fail:runs
           |             |             |             |             |    
           :4           50%           2:4            0%            :4     dmesg.RIP:kmem_cache_alloc
         %stddev     %change         %stddev     %change         %stddev
             \\          |                \\          |                \\  
  22450504           -10.0%   20210544            +0.1%   22480000        will-it-scale.224.processes
      2.32            -0.2        2.08            +0.0        2.32        mpstat.cpu.all.usr%

";
    assert_eq!(out, want);
}
