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

/// `perfbot compare` prints each case's table byte for byte as lkp's
/// `output.txt`. The means and changes are computed exactly from the samples'
/// decimals, so a tie rounds as lkp's Ruby rounds it (`12.15 → 13.50` is
/// `+1.4`, not the `+1.3` a binary difference, 1.3499999…, would give): no
/// row needs an exception.
#[test]
fn every_conformance_case_matches_lkp() {
    let rules = SelectionRules::default_rules();
    let mut n = 0;
    for entry in std::fs::read_dir(fixtures()).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let case = CaseFile::load(&dir.join("case.json")).unwrap();
        let got = case.table(&rules, &Default::default()).render();
        let lkp = std::fs::read_to_string(dir.join("output.txt")).unwrap();
        assert_eq!(got, lkp, "case {name}");
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

/// A case file that cannot be read says where: its path and the JSON path
/// of the field, and what was expected there.
#[test]
fn a_bad_case_file_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.json"),
        r#"{"x.y": [1, 2, 3], "stats_source": ["/r/a/0", "/r/a/1", "/r/a/2"]}"#,
    )
    .unwrap();
    let good = serde_json::json!({
        "common_axes": {"testcase": "t"},
        "columns": [{"commit": "aaa", "matrix": "a.json"}, {"commit": "bbb", "matrix": "a.json"}]});
    type Edit = fn(&mut serde_json::Value);
    let table: [(Edit, &str); 7] = [
        (|_| {}, ""),
        (
            |v| v["common_axes"] = "t".into(),
            "$.common_axes: must be an object",
        ),
        (
            |v| v["compare_axis_key"] = "".into(),
            "$.compare_axis_key: must be a non-empty string",
        ),
        (
            |v| v["columns"].as_array_mut().unwrap().truncate(1),
            "$.columns: at least two columns",
        ),
        (
            |v| v["columns"][1]["commit"] = "".into(),
            "$.columns[1]: missing \"commit\"",
        ),
        (
            |v| v["columns"][0]["matrix"] = 3.into(),
            "$.columns[0].matrix: missing: a matrix.json path",
        ),
        (|v| v["columns"][1]["matrix"] = "b.json".into(), "b.json"),
    ];
    for (edit, want) in table {
        let mut v = good.clone();
        edit(&mut v);
        let path = dir.path().join("case.json");
        std::fs::write(&path, v.to_string()).unwrap();
        match CaseFile::load(&path) {
            Ok(_) => assert_eq!(want, "", "{v}"),
            Err(e) => {
                let e = e.to_string();
                assert!(!want.is_empty() && e.contains(want), "{v}: {e}");
                assert!(e.contains("case.json") || e.contains("b.json"), "{e}");
            }
        }
    }
}
