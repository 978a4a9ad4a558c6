//! What an operator hands perfbot: two lkp `matrix.json` files compared
//! and the table rendered (`perfbot compare`), and a report input read,
//! checked and rendered into a mail (`perfbot report --print`). Never a
//! panic; bad input is an error.
#![no_main]
use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use perfbot::compare::case_file::CaseFile;
use perfbot::compare::matrix::Matrix;
use perfbot::compare::{Column, SelectOptions};
use perfbot::config::Config;
use perfbot::input::LoadedInput;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Made once: loading it compiles the selection rules' expressions.
    static CONFIG: OnceLock<Config> = OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let mut c = Config::load(None).expect("the embedded config");
        c.file.report.templates_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../templates");
        c
    });
    // Two matrices, split at the first NUL (none: the same one twice).
    let (a, b) = text.split_once('\0').unwrap_or((text, text));
    if let (Ok(a), Ok(b)) = (
        Matrix::parse(a, Path::new("base.json")),
        Matrix::parse(b, Path::new("head.json")),
    ) {
        // As `perfbot compare base.json head.json` tables them.
        let case = CaseFile {
            path: "base.json".into(),
            common_axes: Vec::new(),
            axis: "commit".into(),
            columns: vec![Column::new("base", a), Column::new("head", b)],
        };
        let table = case.table(&config.selection, &SelectOptions::default());
        let _ = table.render();
    }
    // A report input, its files looked for in a folder that holds none.
    if let Ok(loaded) = LoadedInput::parse(text, Path::new("/nonexistent/input.json")) {
        let now = chrono::Utc::now();
        let _ = perfbot::flows::report::prepare_loaded(config, &loaded, None, true, now);
    }
});
