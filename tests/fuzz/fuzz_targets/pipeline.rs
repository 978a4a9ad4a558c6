//! A person's mail in a report's thread, the whole way: ingestion (parse,
//! thread match, sender), DKIM, the reading, the policy, follow-up mails and
//! the store's transaction, against one real sled state with a reported case
//! (made once per run in a scratch directory). The first byte picks the
//! sender: the commit's author, a maintainer, an operator, a stranger, the
//! robot, perfbot itself. Never a panic; the store takes every mail.
#![no_main]
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use perfbot::config::Config;
use perfbot::flows::ingest::Ingestor;
use perfbot::flows::report::{prepare, queue};
use perfbot::model::case::{CaseState, Cause};
use perfbot::model::OutboxState;
use perfbot::store::{Created, Store};

const SENDERS: [&str; 6] = [
    "Dave Chinner <dchinner@xfs.example>",
    "Maint <maint@kernel.example>",
    "Ops <ops@ci.example>",
    "Someone <someone@else.example>",
    "kernel test robot <oliver.sang@intel.com>",
    "perfbot <perfbot@ci.example>",
];

struct Env {
    config: &'static Config,
    store: &'static Store,
    /// The report's Message-ID, which every fuzzed mail answers.
    parent: String,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let dir = std::env::temp_dir().join(format!("perfbot-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let text = format!(
            "[bot]\nstate_dir = {state:?}\nemail = \"perfbot@ci.example\"\n\
             message_id_domain = \"perfbot.ci.example\"\n\
             [report]\ntemplates_dir = {tpl:?}\ncc = [\"oe-lkp@lists.linux.dev\"]\n\
             [outbound]\ntransport = \"file\"\noutbox_dir = {outbox:?}\n\
             [trust]\noperators = [\"ops@ci.example\"]\nmaintainers = [\"maint@kernel.example\"]\n\
             [acks]\nenabled = true\n",
            state = dir.join("state"),
            tpl = root.join("templates"),
            outbox = dir.join("outbox"),
        );
        let cfg_path = dir.join("config.toml");
        std::fs::write(&cfg_path, text).unwrap();
        let config: &'static Config = Box::leak(Box::new(Config::load(Some(&cfg_path)).unwrap()));
        let store: &'static Store = Box::leak(Box::new(Store::open(&config.state_dir()).unwrap()));
        let now = chrono::Utc::now();
        let example = root.join("examples/seed002-xfs-fio-falloc-2022.json");
        let p = prepare(config, &example, None, false, now).unwrap();
        let case = match queue(config, store, &p, now).unwrap() {
            Created::New(c) | Created::Existing(c) => c,
        };
        // Sent, as delivery records it: the case is reported.
        for mut e in store.case_outbox(&case.id).unwrap() {
            e.state = OutboxState::Sent;
            e.sent_at = Some(now);
            let advance = Some((CaseState::Queued, CaseState::Reported));
            let cause = Cause::System {
                what: "fuzz".into(),
            };
            store.outbox_transition(&e, advance, cause, "sent").unwrap();
        }
        Env {
            config,
            store,
            parent: case.message_id.to_string(),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Env {
        config,
        store,
        parent,
    } = env();
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    // Every mail is new: a Message-ID seen before is dropped before reading.
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let from = SENDERS[pick as usize % SENDERS.len()];
    let mut raw = format!(
        "From: {from}\r\nSubject: Re: [xfs] 0b02c8c0d7: fio.write_iops -9.0% regression\r\n\
         Message-ID: <fuzz{n}@fuzz.example>\r\nIn-Reply-To: <{parent}>\r\n"
    )
    .into_bytes();
    raw.extend_from_slice(rest);
    let mut ing = Ingestor::new(config, store).unwrap();
    ing.ingest(&raw, "fuzz").unwrap();
});
