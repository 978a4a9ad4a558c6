//! Crash safety, proven: `report`, `ingest` (reply handling included) and
//! `send` over real SMTP are killed with SIGKILL at 100 seeded random instants,
//! and restarted each time. Afterwards the state must equal that of the same
//! work done without a single kill: every case once, every reply recorded once
//! with its effect applied once, every follow-up queued once — and on the wire
//! at most one extra copy per mail that was in flight at a kill.
//!
//! `PERFBOT_CRASH_KILLS` (default 100) and `PERFBOT_CRASH_SEED` change the run.
//! Needs `.ci/mailserver/start-mail.sh`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// Rounds of new work (reports and replies) and kills spread over them.
const ROUNDS: usize = 12;
const REPORTS_PER_ROUND: usize = 2;
const REPLIES_PER_CASE: usize = 6;

/// xorshift64*: seeded, reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn setup(dir: &Path) -> PathBuf {
    let text = format!(
        r#"
[bot]
state_dir = {state:?}
name = "perfbot"
email = "bot@example.test"
message_id_domain = "{domain}"

[report]
templates_dir = {templates:?}
cc = ["list@example.test"]
cc_self = true

[outbound]
transport = "smtp"
outbox_dir = {outbox:?}
stop_file = {stop:?}
max_per_hour = 0
max_per_day = 0
retry_base_secs = 0
max_attempts = 50

[smtp]
url = "smtp://127.0.0.1:{SMTP_PORT}"
ca_file = {ca:?}
timeout_secs = 10

{imap}
[trust]
operators = ["bob@example.test"]
maintainers = ["list@example.test"]

[reply]
max_answers_per_sender_hour = 100000

[acks]
enabled = true
"#,
        state = dir.join("state"),
        domain = id_domain(dir),
        templates = root().join("templates"),
        outbox = dir.join("state/outbox"),
        stop = dir.join("STOP"),
        ca = ca_file(),
        imap = imap_sections(""),
    );
    let p = dir.join("config.toml");
    std::fs::write(&p, text).unwrap();
    p
}

const PW: (&str, &str) = ("PERFBOT_IMAP_PASSWORD", "secret");

/// The report inputs of round `r` (the same in both runs: cases are keyed by
/// their input, so both runs make the same cases).
fn inputs(dir: &Path, r: usize) -> Vec<PathBuf> {
    (0..REPORTS_PER_ROUND)
        .map(|k| {
            let n = r * REPORTS_PER_ROUND + k;
            let text =
                std::fs::read_to_string(root().join("examples/seed002-xfs-fio-falloc-2022.json"))
                    .unwrap();
            let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
            v["commit"]["sha"] = format!("{:040x}", 0x00c0_ffee_0000_u64 + n as u64).into();
            v["commit"]["author"] =
                serde_json::json!({"name": "Alice Author", "email": "alice@example.test"});
            v["recipients"] = serde_json::json!({});
            let p = dir.join(format!("in-{n:03}.json"));
            std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
            p
        })
        .collect()
}

/// The Message-ID a report will have (from `report --print`, which records nothing).
fn report_id(cfg: &Path, input: &Path) -> String {
    let o = perfbot(cfg, &["report", "--print", input.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("message-id:"))
        .unwrap();
    line[11..].trim().trim_matches(['<', '>']).to_string()
}

/// The replies to case `n` (report Message-ID `id`), in the order they come:
/// the author investigates, a stranger asks, the maintainer writes a bad
/// command, then a decision (which one depends on the case), then a reopen
/// or a thank-you.
fn replies(n: usize, id: &str, domain: &str) -> Vec<String> {
    let decision = match n % 4 {
        0 => "This is not a regression: the histogram bins moved.",
        1 => "Not sure, so, at this moment, I'll revert this patch.",
        2 => "#perfbot fixed 0123abcd",
        _ => "#perfbot wontfix",
    };
    let words = [
        (
            "Alice Author <alice@example.test>",
            "I am looking into it, thanks.",
        ),
        ("Stranger <bob@elsewhere.test>", "Where do I find the test?"),
        ("Maintainer <list@example.test>", "#perfbot frobnicate"),
        ("Alice Author <alice@example.test>", decision),
        (
            "Maintainer <list@example.test>",
            if n.is_multiple_of(3) {
                "#perfbot reopen"
            } else {
                "Thanks!"
            },
        ),
        ("Alice Author <alice@example.test>", "Sounds good."),
    ];
    words
        .iter()
        .take(REPLIES_PER_CASE)
        .enumerate()
        .map(|(i, (from, text))| {
            format!(
                "From {from}\nFrom: {from}\nSubject: Re: [xfs] case {n}\nMessage-ID: <r{n}-{i}.{domain}>\nIn-Reply-To: <{id}>\nReferences: <{id}>\nDate: Mon, 1 Jan 2024 00:{i:02}:00 +0000\n\nOn Mon, Jan 1, 2024, perfbot wrote:\n> kernel test robot noticed a -9.0% regression\n\n{text}\n\n"
            )
        })
        .collect()
}

/// A command of the workload.
#[derive(Clone, Copy, Debug)]
enum Step {
    Report(usize),
    Ingest,
    Send,
}

fn args(step: Step, dir: &Path, mbox: &Path) -> Vec<String> {
    match step {
        Step::Report(r) => {
            let mut a = vec!["report".to_string()];
            a.extend(inputs(dir, r).iter().map(|p| p.display().to_string()));
            a
        }
        Step::Ingest => vec!["ingest".into(), "--mbox".into(), mbox.display().to_string()],
        Step::Send => vec!["send".into()],
    }
}

fn spawn(cfg: &Path, args: &[String]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("--config")
        .arg(cfg)
        .args(args)
        .env(PW.0, PW.1)
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// One run of the whole workload; with `kills`, each step may be killed at a
/// random instant (within the time that step took in the unkilled run) and
/// is then started again until it completes.
struct Run {
    dir: tempfile::TempDir,
    cfg: PathBuf,
    mbox: PathBuf,
    /// Mails left in "sending" by each kill (in flight when it landed).
    in_flight: usize,
    kills: usize,
    /// Kills that landed while the process was still working.
    effective: usize,
}

impl Run {
    fn new() -> Run {
        let dir = tempfile::tempdir().unwrap();
        let cfg = setup(dir.path());
        let mbox = dir.path().join("replies.mbox");
        std::fs::write(&mbox, "").unwrap();
        Run {
            dir,
            cfg,
            mbox,
            in_flight: 0,
            kills: 0,
            effective: 0,
        }
    }

    /// Add round `r`'s replies to the mbox (as a list archive grows).
    fn grow(&self, r: usize) {
        use std::io::Write;
        let domain = id_domain(self.dir.path());
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.mbox)
            .unwrap();
        for (k, input) in inputs(self.dir.path(), r).iter().enumerate() {
            let n = r * REPORTS_PER_ROUND + k;
            let id = report_id(&self.cfg, input);
            for m in replies(n, &id, &domain) {
                f.write_all(m.as_bytes()).unwrap();
            }
        }
    }

    fn step(&mut self, step: Step, kill_after: Option<Duration>) -> Duration {
        let a = args(step, self.dir.path(), &self.mbox);
        let t0 = Instant::now();
        let mut child = spawn(&self.cfg, &a);
        if let Some(d) = kill_after {
            std::thread::sleep(d);
            let running = child.try_wait().unwrap().is_none();
            let _ = child.kill(); // SIGKILL
            let _ = child.wait();
            self.kills += 1;
            if running {
                self.effective += 1;
            }
            let sending = outbox(&self.cfg)
                .iter()
                .filter(|e| e["state"] == "sending")
                .count();
            self.in_flight += sending;
            // Restarted until it completes (the work it was doing is redone).
            child = spawn(&self.cfg, &a);
        }
        let st = child.wait().unwrap();
        // send exits 1 when a mail failed in its run; it is retried below.
        if !matches!(step, Step::Send) {
            assert!(st.success(), "{step:?} failed");
        }
        t0.elapsed()
    }

    fn finish(&mut self) {
        for _ in 0..5 {
            self.step(Step::Ingest, None);
            self.step(Step::Send, None);
            if outbox(&self.cfg).iter().all(|e| e["state"] == "sent") {
                return;
            }
        }
        let left: Vec<String> = outbox(&self.cfg)
            .iter()
            .filter(|e| e["state"] != "sent")
            .map(|e| format!("{} {} {}", e["message_id"], e["state"], e["last_error"]))
            .collect();
        panic!("mail left unsent: {left:#?}");
    }
}

const WORK: [fn(usize) -> Step; 4] = [
    Step::Report,
    |_| Step::Ingest,
    |_| Step::Send,
    |_| Step::Ingest,
];

/// What must be equal between the two runs, with run-specific ids masked.
fn state(run: &Run) -> BTreeMap<String, serde_json::Value> {
    let domain = id_domain(run.dir.path());
    // Follow-ups' ids hash their text, which names the run's own ids.
    let hash = regex::Regex::new(r"\.[0-9a-f]{20}@").unwrap();
    let mask = |s: &str| {
        hash.replace_all(&s.replace(&domain, "DOMAIN"), ".HASH@")
            .into_owned()
    };
    let o = perfbot(&run.cfg, &["cases", "list", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut out = BTreeMap::new();
    for c in list.as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        let v = show(&run.cfg, id);
        // Every state change caused by a message: which message, from what to what.
        let moves: Vec<String> = v["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cause"]["kind"] == "message" && e["old"] != e["new"])
            .map(|e| {
                mask(&format!(
                    "{} {}->{}",
                    e["cause"]["message_id"].as_str().unwrap(),
                    e["old"],
                    e["new"]
                ))
            })
            .collect();
        let thread: Vec<String> = v["thread"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| mask(t["message_id"].as_str().unwrap()))
            .collect();
        let mut sorted = thread.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(
            sorted.len(),
            thread.len(),
            "a message recorded twice: {thread:?}"
        );
        out.insert(
            id.to_string(),
            serde_json::json!({"state": v["state"], "moves": moves, "thread": sorted}),
        );
    }
    let mut mails: Vec<String> = outbox(&run.cfg)
        .iter()
        .map(|e| mask(&format!("{} {}", e["kind"], e["message_id"])))
        .collect();
    mails.sort();
    out.insert("outbox".into(), serde_json::json!(mails));
    out
}

/// Copies on the wire of every mail of a run: Message-ID → copies seen by
/// its recipients' mailboxes (max over recipients).
fn wire(run: &Run) -> BTreeMap<String, usize> {
    let domain = id_domain(run.dir.path());
    let mut copies: BTreeMap<String, usize> = BTreeMap::new();
    for user in ["alice", "bob", "list", "bot"] {
        let mut s = imap(user);
        let uids = s
            .uid_search(format!("HEADER Message-ID \"{domain}\""))
            .unwrap();
        let mut per: BTreeMap<String, usize> = BTreeMap::new();
        for chunk in uids.iter().collect::<Vec<_>>().chunks(200) {
            let set: Vec<String> = chunk.iter().map(|u| u.to_string()).collect();
            for f in s
                .uid_fetch(set.join(","), "BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)]")
                .unwrap()
                .iter()
            {
                let h = String::from_utf8_lossy(f.header().unwrap_or_default()).to_string();
                let id = h
                    .trim()
                    .trim_start_matches("Message-ID:")
                    .trim()
                    .to_string();
                *per.entry(id).or_default() += 1;
            }
        }
        let _ = s.logout();
        for (id, n) in per {
            let e = copies.entry(id).or_default();
            *e = (*e).max(n);
        }
    }
    copies
}

#[test]
fn kill_9_at_100_random_instants_loses_and_doubles_nothing() {
    if !mail_server() {
        return;
    }
    let kills: usize = std::env::var("PERFBOT_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let seed: u64 = std::env::var("PERFBOT_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15);

    // The reference: the same work, never killed. Its step durations bound
    // where the kills land.
    let mut reference = Run::new();
    let mut took: Vec<Duration> = Vec::new();
    for r in 0..ROUNDS {
        reference.grow(r);
        for w in WORK {
            took.push(reference.step(w(r), None));
        }
    }
    reference.finish();

    // The same work, killed `kills` times at random instants.
    let mut rng = Rng(seed);
    let mut crashed = Run::new();
    let steps = ROUNDS * WORK.len();
    let mut kill_at: BTreeSet<usize> = BTreeSet::new();
    // Spread the kills over the steps (several on some), seeded.
    let mut plan: Vec<usize> = vec![0; steps];
    for _ in 0..kills {
        plan[rng.below(steps as u64) as usize] += 1;
    }
    let t0 = Instant::now();
    for r in 0..ROUNDS {
        crashed.grow(r);
        for (j, w) in WORK.iter().enumerate() {
            let i = r * WORK.len() + j;
            for _ in 0..plan[i] {
                kill_at.insert(i);
                // Somewhere within what the step took unkilled (at least 20 ms
                // of process start-up, at most 1.5 s).
                let span = took[i].as_micros().clamp(20_000, 1_500_000) as u64;
                let d = Duration::from_micros(rng.below(span));
                crashed.step(w(r), Some(d));
            }
            crashed.step(w(r), None);
        }
    }
    crashed.finish();
    eprintln!(
        "{} kills ({} while working) over {} steps in {:.1} s; {} mail(s) were in flight at the kills",
        crashed.kills,
        crashed.effective,
        kill_at.len(),
        t0.elapsed().as_secs_f64(),
        crashed.in_flight
    );
    assert_eq!(crashed.kills, kills);
    assert!(
        crashed.effective * 2 >= kills,
        "most kills must land mid-work: {} of {kills}",
        crashed.effective
    );

    // Same cases, same moves by the same messages, same threads, same mail.
    let want = state(&reference);
    let got = state(&crashed);
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        got.keys().collect::<Vec<_>>(),
        "cases differ"
    );
    for (k, w) in &want {
        assert_eq!(&got[k], w, "{k} differs after the kills");
    }
    let n_cases = want.len() - 1;
    assert_eq!(n_cases, ROUNDS * REPORTS_PER_ROUND);

    // On the wire: everything arrived; the reference sent each mail once; the
    // killed run at most one extra copy per mail in flight at a kill.
    let ref_wire = wire(&reference);
    let got_wire = wire(&crashed);
    let expected = outbox(&reference.cfg).len();
    assert_eq!(
        ref_wire.len(),
        expected,
        "reference mail missing on the wire"
    );
    assert!(ref_wire.values().all(|n| *n == 1), "{ref_wire:?}");
    assert_eq!(
        got_wire.len(),
        expected,
        "mail missing on the wire after the kills"
    );
    let extra: usize = got_wire.values().map(|n| n - 1).sum();
    eprintln!(
        "{expected} mails; {extra} extra cop(ies) on the wire; bound: {} in flight at the kills",
        crashed.in_flight
    );
    assert!(
        extra <= crashed.in_flight,
        "{extra} duplicates, but only {} mails were in flight at the kills",
        crashed.in_flight
    );
}
