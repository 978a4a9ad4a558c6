//! Property tests of the statistics, number formats and table rows.

use perfbot::compare::matrix::Matrix;
use perfbot::compare::rules::SelectionRules;
use perfbot::compare::{compare_columns, mean, stddev, Column, SelectOptions};
use perfbot::report::numfmt::{fixed_signed, general};
use perfbot::report::table::{mean_text, sort_rows};
use proptest::prelude::*;

fn samples() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-1e9f64..1e9, 1..40)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn mean_lies_between_min_and_max(v in samples()) {
        let m = mean(&v);
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let slack = (hi.abs() + lo.abs()) * 1e-12;
        prop_assert!(m >= lo - slack && m <= hi + slack);
    }

    #[test]
    fn stddev_is_nonnegative_and_shift_invariant(v in samples(), shift in -1e6f64..1e6) {
        let s = stddev(&v);
        prop_assert!(s >= 0.0);
        let shifted: Vec<f64> = v.iter().map(|x| x + shift).collect();
        let s2 = stddev(&shifted);
        let scale = v.iter().map(|x| x.abs()).fold(0.0, f64::max) + shift.abs() + 1.0;
        prop_assert!((s - s2).abs() <= scale * 1e-6, "{s} vs {s2}");
    }

    #[test]
    fn stddev_of_a_constant_is_zero(x in -1e9f64..1e9, n in 1usize..20) {
        // Exactly 0 in real arithmetic; lkp's float arithmetic leaves rounding noise.
        prop_assert!(stddev(&vec![x; n]) <= x.abs() * 1e-12);
    }

    #[test]
    fn general_format_round_trips_to_its_precision(v in -1e300f64..1e300, p in 1usize..8) {
        let s = general(v, p);
        let back: f64 = s.parse().unwrap();
        let tol = v.abs() * 10f64.powi(1 - p as i32) + f64::MIN_POSITIVE;
        prop_assert!((back - v).abs() <= tol, "{v} %.{p}g = {s}");
        let digits = s.trim_start_matches('-').split('e').next().unwrap().chars().filter(|c| c.is_ascii_digit()).count();
        prop_assert!(digits <= p.max(1) + 4, "{s}"); // leading zeros of 0.000ddd count too
    }

    #[test]
    fn signed_format_always_has_a_sign(v in -1e6f64..1e6) {
        let s = fixed_signed(v, 1);
        prop_assert!(s.starts_with('+') || s.starts_with('-'));
    }

    #[test]
    fn mean_cells_fit_ten_columns(v in -99_999_999.0f64..1e15) {
        // Means below 1e8 print as integers (at most 9 characters here), larger
        // ones as %.4g: every cell fits lkp's 10-column field.
        prop_assert!(mean_text(v).len() <= 10, "{}", mean_text(v));
    }

    /// Any two matrices compare without panicking, and every row has the
    /// table's fixed layout: 16 + 28 columns, two spaces, the name.
    #[test]
    fn rows_have_the_fixed_layout(
        base in prop::collection::vec(prop::collection::vec(0.0f64..1e6, 3..6), 1..8),
        factor in prop::collection::vec(0.5f64..2.0, 8),
    ) {
        static RULES: std::sync::OnceLock<SelectionRules> = std::sync::OnceLock::new();
        let rules = RULES.get_or_init(SelectionRules::default_rules);
        let names: Vec<String> = (0..base.len()).map(|i| format!("will-it-scale.m{i}")).collect();
        let b = Matrix::from_f64(names.iter().cloned().zip(base.iter().cloned()));
        let h = Matrix::from_f64(names.iter().cloned().zip(base.iter().enumerate().map(|(i, v)| v.iter().map(|x| x * factor[i]).collect())));
        let cols = [Column::new("a", b), Column::new("b", h)];
        let mut rows = compare_columns(&cols, rules, &SelectOptions::default());
        sort_rows(&mut rows, rules, true);
        for r in &rows {
            let text = r.render();
            let prefix = text.len() - r.name.len();
            // ± is two bytes in UTF-8: count characters.
            let chars = text[..prefix].chars().count();
            prop_assert!(chars >= 16 + 28 + 2, "{text}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Hostile input files are errors, never panics.
    #[test]
    fn arbitrary_text_never_panics_the_parsers(text in ".{0,300}") {
        let p = std::path::Path::new("fuzz.json");
        let _ = Matrix::parse(&text, p);
        let _ = perfbot::input::LoadedInput::parse(&text, p);
    }

    #[test]
    fn arbitrary_json_matrices_never_panic(values in prop::collection::vec(prop_oneof![
        Just(serde_json::json!(null)),
        Just(serde_json::json!("text")),
        Just(serde_json::json!([])),
        Just(serde_json::json!([1, "x"])),
        Just(serde_json::json!({"nested": 1})),
        (-1e300f64..1e300).prop_map(|f| serde_json::json!([f, f])),
        any::<i64>().prop_map(|i| serde_json::json!([i])),
    ], 0..6)) {
        let mut obj = serde_json::Map::new();
        for (i, v) in values.into_iter().enumerate() {
            obj.insert(format!("fio.m{i}"), v);
        }
        let text = serde_json::Value::Object(obj).to_string();
        if let Ok(m) = Matrix::parse(&text, std::path::Path::new("m.json")) {
            static RULES: std::sync::OnceLock<SelectionRules> = std::sync::OnceLock::new();
            let rules = RULES.get_or_init(SelectionRules::default_rules);
            let cols = [Column::new("a", m.clone()), Column::new("b", m)];
            for r in compare_columns(&cols, rules, &SelectOptions::default()) {
                let _ = r.render();
            }
        }
    }
}

/// The body of the 2014 report of the fixtures (after its flattened part's
/// marker): a mail of the oldest era to damage.
fn body_2014() -> String {
    let text = include_str!(
        "fixtures/reports/2014-06-26_mempolicy_5507231dd04_vm-scalability.without-note.txt"
    );
    let at = text.find("part:]\n").unwrap() + "part:]\n".len();
    text[at..].to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// A damaged 2014 mail (a line dropped, cut short or replaced, at any
    /// place) is read or refused at a line, never a panic; and what it
    /// refuses names a line of the body.
    #[test]
    fn damaged_2014_mails_never_panic_the_report_parser(
        line in 0usize..160,
        cut in 0usize..200,
        how in 0u8..3,
        junk in "[ ~%+*O.|0-9a-z-]{0,90}",
    ) {
        let body = body_2014();
        let mut lines: Vec<String> = body.lines().map(str::to_string).collect();
        let n = line % lines.len();
        match how {
            0 => { lines.remove(n); }
            1 => {
                let l = &mut lines[n];
                let at = (0..=cut.min(l.len())).rev().find(|&i| l.is_char_boundary(i)).unwrap_or(0);
                l.truncate(at);
            }
            _ => lines[n] = junk,
        }
        let headers = perfbot::report::parse::Headers {
            subject: "[mempolicy] 5507231dd04: -18.2% vm-scalability.migrate_mbps".into(),
            to: vec!["Naoya Horiguchi <n-horiguchi@ah.jp.nec.com>".into()],
            message_id: "<53ABABDE.1010704@intel.com>".into(),
            ..Default::default()
        };
        if let Err(e) = perfbot::report::parse::parse(&headers, &lines.join("\n")) {
            prop_assert!(e.line <= lines.len() + 1, "{e}");
        }
    }
}
