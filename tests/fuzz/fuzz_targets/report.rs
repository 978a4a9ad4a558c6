//! A robot report mail read back into a report input (`parse-report`, and
//! what ingestion does with a tracked robot's mail). Never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = perfbot::flows::robot::parse_report(data, "fuzz.eml");
});
