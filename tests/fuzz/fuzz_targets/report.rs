//! A robot report mail read back into a report input (`parse-report`, and
//! what ingestion does with a tracked robot's mail: read in full, else at a
//! glance from its Subject, sentence and headers). Never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = perfbot::flows::robot::parse_report(data, "fuzz.eml");
    if let Ok(h) = perfbot::flows::robot::read_headers(data, "fuzz.eml") {
        let body = perfbot::flows::robot::read_mail(data, "fuzz.eml")
            .ok()
            .map(|(_, body)| body);
        let _ = perfbot::report::parse::glance::glance(&h.subject, body.as_deref());
    }
});
