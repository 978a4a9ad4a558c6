//! A reply as ingestion reads it: the mail parsed, the replier's own words
//! found, and the reading (rules and the built-in model) for two speakers;
//! also the bytes read as plain text. Never a panic; libFuzzer's `-timeout`
//! catches inputs that read slowly.
#![no_main]
use libfuzzer_sys::fuzz_target;
use perfbot::flows::ingest::parse::{parse, Limits};
use perfbot::reply::understand::{self, quote::own_words, rules::Rules, Context, Speaker};

fuzz_target!(|data: &[u8]| {
    let rules = Rules::builtin();
    let model = understand::model::builtin();
    if let Ok(m) = parse(data, &Limits::default()) {
        let words = own_words(&m.text);
        for speaker in [Speaker::Author, Speaker::Other] {
            let ctx = Context {
                speaker,
                patch_attached: !m.patches.is_empty(),
                ..Context::default()
            };
            let _ = understand::read(&m.text, &words, ctx, rules, model);
        }
    }
    if let Ok(s) = std::str::from_utf8(data) {
        let words = own_words(s);
        let _ = understand::read(s, &words, Context::default(), rules, model);
    }
});
