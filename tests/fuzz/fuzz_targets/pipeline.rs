//! A person's mail in a report's thread, the whole way: ingestion (parse,
//! thread match, sender), DKIM, the reading, the policy, follow-up mails and
//! the store's transaction, against one real sled state with a reported case
//! (made once per run in a scratch directory). The first byte picks the
//! sender: the commit's author, a maintainer, an operator, a stranger, the
//! robot, perfbot itself. Never a panic; the store takes every mail; and
//! after each mail the guarantees hold: perfbot's own and other robots' mail
//! move nothing and send nothing, a stranger's words close no case, and one
//! mail gets at most one answer and one escalation; a question for the
//! robot's people is recorded only beside a state the mail left as it was,
//! never from them, and a robot's mail leaves it alone. The review of quiet
//! cases, run after each mail as of a year later, hands only an open case to
//! a human and mails nobody. Every 64th mail finds the case reported again,
//! so that a run does not spend itself on a case closed early.
#![no_main]
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use perfbot::config::Config;
use perfbot::flows::ingest::Ingestor;
use perfbot::flows::report::{prepare, queue};
use perfbot::model::case::{CaseId, CaseState, Cause};
use perfbot::model::{OutboxKind, OutboxState};
use perfbot::store::{Created, Store};

struct Env {
    config: &'static Config,
    store: &'static Store,
    /// The report's Message-ID, which every fuzzed mail answers.
    parent: String,
    case: CaseId,
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
             dkim = true\nrequire_dkim = false\n\
             [trust.dkim_keys]\n\"sel._domainkey.xfs.example\" = \"v=DKIM1; k=ed25519; p={key}\"\n\
             [acks]\nenabled = true\n",
            state = dir.join("state"),
            tpl = root.join("templates"),
            outbox = dir.join("outbox"),
            // RFC 8463's example key: signatures are checked (and fail), and
            // unsigned mail is believed (`require_dkim = false`), so both the
            // DKIM parser and the decisions are reached.
            key = "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",
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
            case: case.id,
        }
    })
}

/// Who the first byte makes the sender, and what they may do.
#[derive(PartialEq)]
enum Standing {
    Trusted,
    Stranger,
    /// perfbot itself or another robot: recorded, never acted on.
    Machine,
}

const SENDERS: [(&str, Standing); 7] = [
    ("Dave Chinner <dchinner@xfs.example>", Standing::Trusted),
    ("Maint <maint@kernel.example>", Standing::Trusted),
    ("Ops <ops@ci.example>", Standing::Trusted),
    ("Someone <someone@else.example>", Standing::Stranger),
    // The author's name alone is not the author.
    ("Dave Chinner <someone@else.example>", Standing::Stranger),
    ("kernel test robot <lkp@intel.com>", Standing::Machine),
    ("perfbot <perfbot@ci.example>", Standing::Machine),
];

/// The fuzzer's header lines may not name another sender: the first header
/// block's `From:` lines are renamed (the body is left as it is).
fn without_from(rest: &[u8]) -> Vec<u8> {
    let end = rest
        .windows(2)
        .position(|w| w == b"\n\n")
        .unwrap_or(rest.len());
    let mut out = rest.to_vec();
    let mut at = 0;
    while at < end {
        if out[at..].len() >= 5 && out[at..at + 5].eq_ignore_ascii_case(b"from:") {
            out[at..at + 5].copy_from_slice(b"X-Fz:");
        }
        at += out[at..end]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(end, |i| i + 1);
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Env {
        config,
        store,
        parent,
        case,
    } = env();
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    // Every mail is new: a Message-ID seen before is dropped before reading.
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let (from, standing) = &SENDERS[pick as usize % SENDERS.len()];
    let mut raw = format!(
        "From: {from}\r\nSubject: Re: [xfs] 0b02c8c0d7: fio.write_iops -9.0% regression\r\n\
         Message-ID: <fuzz{n}@fuzz.example>\r\nIn-Reply-To: <{parent}>\r\n"
    )
    .into_bytes();
    raw.extend_from_slice(&without_from(rest));
    // A case closed early would leave the rest of the run on a closed case:
    // every 64th mail finds it reported again.
    if n % 64 == 0 && store.case(case).unwrap().state != CaseState::Reported {
        let cause = Cause::System {
            what: "fuzz".into(),
        };
        store
            .set_state(case, CaseState::Reported, cause, "reopened by the fuzzer")
            .unwrap();
    }
    let (before, asked_before) = {
        let c = store.case(case).unwrap();
        (c.state, c.question)
    };
    // By Message-ID: the outbox is ordered by time, which two mails can share.
    let queued_before: std::collections::HashSet<_> = store
        .case_outbox(case)
        .unwrap()
        .into_iter()
        .map(|e| e.message_id)
        .collect();
    // One ingestor for the run, as the daemon keeps one (it holds the DKIM
    // checker and the case indexes).
    static ING: OnceLock<Mutex<Ingestor<'static>>> = OnceLock::new();
    let mut ing = ING
        .get_or_init(|| Mutex::new(Ingestor::new(config, store).unwrap()))
        .lock()
        .unwrap();
    ing.ingest(&raw, "fuzz").unwrap();
    let (after, asked_after) = {
        let c = store.case(case).unwrap();
        (c.state, c.question)
    };
    // A question this mail asked is recorded only beside a state it left
    // as it was, and never from the robot's people. A mail whose DKIM
    // signature fails is not theirs, whatever its From says: its sender is
    // a stranger, whose question of the robot a human answers.
    let this_mail = format!("fuzz{n}@fuzz.example");
    if let Some(q) = asked_after
        .as_ref()
        .filter(|q| q.message_id.as_str() == this_mail)
    {
        assert_eq!(before, after, "a question moved the case: {q:?}");
        let thread = store.thread(case).unwrap();
        let reading = thread
            .iter()
            .find(|e| e.message_id.as_str() == this_mail)
            .and_then(|e| e.understanding.as_ref())
            .expect("a question's mail is in the thread, read");
        let forged = reading
            .dkim
            .as_deref()
            .is_some_and(|d| d.starts_with("fail"));
        assert!(
            !from.contains("ops@") || (forged && reading.role == "other"),
            "the robot's people asked themselves: {reading:?}"
        );
    }
    let new: Vec<_> = store
        .case_outbox(case)
        .unwrap()
        .into_iter()
        .filter(|e| !queued_before.contains(&e.message_id))
        .collect();
    let count = |k: &[OutboxKind]| new.iter().filter(|e| k.contains(&e.kind)).count();
    let answers = count(&[OutboxKind::Ack, OutboxKind::CommandError]);
    let escalations = count(&[OutboxKind::Escalation]);
    assert!(answers <= 1, "{answers} answers to one mail");
    assert!(escalations <= 1, "{escalations} escalations of one mail");
    match standing {
        Standing::Machine => {
            assert_eq!(before, after, "a robot's mail moved the case");
            assert_eq!(
                asked_before, asked_after,
                "a robot's mail touched the question"
            );
            assert!(new.is_empty(), "a robot's mail was answered");
        }
        Standing::Stranger => assert!(
            before.is_closed() || !after.is_closed(),
            "a stranger closed the case: {before} -> {after}"
        ),
        Standing::Trusted => {}
    }
    // The review, as the daemon's schedule would run it a year on (every
    // 16th mail for real, else as a dry run): it hands only an open case to
    // a human, and mails nobody.
    let later = chrono::Utc::now() + chrono::Duration::days(365);
    let open = matches!(after, CaseState::Reported | CaseState::Investigating);
    let outbox = store.case_outbox(case).unwrap().len();
    let lines = perfbot::flows::review::run(config, store, later, n % 16 != 0).unwrap();
    assert!(open || lines.is_empty(), "a review of a case in {after}");
    let reviewed = store.case(case).unwrap().state;
    assert!(
        reviewed == after || (n % 16 == 0 && reviewed == CaseState::NeedsHuman),
        "the review moved the case {after} -> {reviewed}"
    );
    assert_eq!(
        store.case_outbox(case).unwrap().len(),
        outbox,
        "the review queued mail"
    );
});
