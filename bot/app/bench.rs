//! `perfbot bench`: throughput figures on synthetic data (see BENCHMARKS.md).

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::compare::case_file::CaseFile;
use crate::compare::matrix::Matrix;
use crate::compare::{Column, SelectOptions};
use crate::config::Config;

/// A deterministic pseudo-random sequence (xorshift), so runs are comparable.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

const PREFIXES: &[&str] = &[
    "fio",
    "meminfo",
    "proc-vmstat",
    "perf-stat",
    "perf-profile.children.cycles-pp",
    "vmstat",
    "sched_debug",
    "numa-vmstat",
];

/// Columns of `metrics` metrics × `runs` runs; about 5% of metrics shift by 10-40%.
pub fn synthetic(metrics: usize, runs: usize, commits: usize) -> Vec<Column> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let names: Vec<String> = (0..metrics)
        .map(|i| format!("{}.metric_{i}", PREFIXES[i % PREFIXES.len()]))
        .collect();
    let bases: Vec<f64> = (0..metrics).map(|_| 10f64.powf(rng.next() * 9.0)).collect();
    let shifted: Vec<bool> = (0..metrics).map(|_| rng.next() < 0.05).collect();
    (0..commits)
        .map(|c| {
            let m = Matrix::from_f64(names.iter().enumerate().map(|(i, n)| {
                let shift = if c > 0 && shifted[i] {
                    1.1 + rng.next() * 0.3
                } else {
                    1.0
                };
                let v: Vec<f64> = (0..runs)
                    .map(|_| bases[i] * shift * (1.0 + (rng.next() - 0.5) * 0.02))
                    .collect();
                (n.clone(), v)
            }));
            Column::new(format!("{:040x}", c + 1), m)
        })
        .collect()
}

/// Peak resident set size of this process, in MiB (Linux).
pub fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

pub fn compare_render(
    config: &Config,
    metrics: usize,
    runs: usize,
    commits: usize,
    iterations: usize,
) -> String {
    let build_start = Instant::now();
    // What `perfbot compare` tables, with the bench's one parameter.
    let case = CaseFile {
        path: PathBuf::from("bench"),
        common_axes: vec![("testcase".into(), "bench".into())],
        axis: "commit".into(),
        columns: synthetic(metrics, runs, commits.max(2)),
    };
    let build = build_start.elapsed();
    let mut times = Vec::new();
    let mut rows_out = 0;
    let mut bytes = 0;
    for _ in 0..iterations.max(1) {
        let t = Instant::now();
        let table = case.table(&config.selection, &SelectOptions::default());
        let text = table.render();
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        rows_out = table.rows.len();
        bytes = text.len();
    }
    let n = times.len();
    let (median, min, max) = spread(times);
    format!(
        "compare+render: {metrics} metrics x {} commits x {runs} runs, {} iterations\n  rows selected: {rows_out}, table bytes: {bytes}\n  time per compare+render: min {:.2} ms, median {:.2} ms, max {:.2} ms\n  (building the synthetic input: {:.1} ms)\n  peak RSS: {}\n",
        commits.max(2),
        n,
        min,
        median,
        max,
        build.as_secs_f64() * 1000.0,
        peak_rss_mib().map_or("unknown".into(), |m| format!("{m:.1} MiB")),
    )
}

/// Queue `count` distinct reports (seed 002's, each under its own commit and
/// Message-ID) in a scratch state directory, then deliver them all through the
/// configured transport with pooled connections.
pub async fn deliver(config: &Config, count: usize, to: &str) -> anyhow::Result<String> {
    use crate::flows::delivery::{send_due, Transport};
    use chrono::Utc;

    // Held to the end: the directory goes when it does.
    let (_scratch, mut config) = scratch_config(config)?;
    let store = crate::store::Store::open(&config.state_dir())?;
    let t0 = Instant::now();
    let bytes = queue_copies(&config, &store, count, to)?;
    let queued = t0.elapsed();

    let transport = Transport::from_config(&config)?;
    let t1 = Instant::now();
    let mut sent = 0;
    let mut rounds = 0;
    // Failed sends (a busy server) retry at once here: retry_base_secs is 0.
    config.file.outbound.retry_base_secs = 0;
    while sent < count && rounds < 5 {
        let s = send_due(&config, &store, &transport, Utc::now(), false).await?;
        sent += s.sent;
        rounds += 1;
    }
    let delivered = t1.elapsed();
    Ok(format!(
        "deliver: {count} reports of {bytes} bytes via {}, concurrency {}\n\
         queue:   {:.2} s ({:.0} reports/s, one sled transaction + flush each)\n\
         deliver: {:.2} s ({:.0} mails/s, {sent} sent in {rounds} round(s))\n",
        transport.describe(),
        config.file.outbound.concurrency,
        queued.as_secs_f64(),
        count as f64 / queued.as_secs_f64(),
        delivered.as_secs_f64(),
        sent as f64 / delivered.as_secs_f64(),
    ))
}

/// A scratch directory, and `config` with its state, outbox and stop file
/// there, mailing without limits or moderation.
fn scratch_config(config: &Config) -> std::io::Result<(Scratch, Config)> {
    let scratch = Scratch::new()?;
    let mut config = config.clone();
    config.file.bot.state_dir = scratch.join("state");
    config.file.outbound.outbox_dir = scratch.join("outbox");
    config.file.outbound.stop_file = scratch.join("STOP");
    config.file.outbound.max_per_hour = 0;
    config.file.outbound.max_per_day = 0;
    config.file.outbound.moderation = false;
    config.file.outbound.redirect_all_to = None;
    Ok((scratch, config))
}

/// Queue `count` copies of seed 002's report to `to`, each its own case
/// under its own Message-ID. Returns the size of one mail.
fn queue_copies(
    config: &Config,
    store: &crate::store::Store,
    count: usize,
    to: &str,
) -> anyhow::Result<usize> {
    use crate::flows::report::{prepare, queue};
    use crate::model::MessageId;

    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/seed002-xfs-fio-falloc-2022.json");
    let now = chrono::Utc::now();
    let base = prepare(config, &example, None, false, now)?;
    let stamp = now.timestamp_nanos_opt().unwrap_or_default();
    for i in 0..count {
        let mut p = base.clone();
        // The case id is the key's first 12 digits: make those differ.
        p.report.case_key = format!("{i:012x}{:052x}", stamp as u64);
        p.envelope.message_id = MessageId::parse(&format!(
            "perfbot.bench.{stamp:x}.{i}@{}",
            config.file.bot.message_id_domain
        ))
        .expect("valid id");
        p.envelope.to = vec![to.to_string()];
        p.envelope.cc.clear();
        p.raw = crate::mail::message::build(&p.envelope, &p.rendered.body)?;
        queue(config, store, &p, now)?;
    }
    Ok(base.raw.len())
}

/// The dashboard's pages over `count` cases (seed 002's report, each its
/// own case; every other one reported to `to`, the rest still queued),
/// served on a loopback port as the daemon serves them: each page
/// `iterations` times over HTTP, with its size.
pub fn dashboard(
    config: &Config,
    count: usize,
    iterations: usize,
    to: &str,
) -> anyhow::Result<String> {
    use crate::model::case::{CaseState, Cause};

    let (_scratch, config) = scratch_config(config)?;
    let store = std::sync::Arc::new(crate::store::Store::open(&config.state_dir())?);
    queue_copies(&config, &store, count, to)?;
    for c in store.cases()?.iter().step_by(2) {
        store.set_state(&c.id, CaseState::Reported, Cause::system("bench"), "sent")?;
    }
    let state = crate::app::web::AppState::new(
        std::sync::Arc::new(config),
        store,
        std::sync::Arc::new(crate::app::web::Metrics::default()),
    )?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let port = listener.local_addr()?.port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let app = crate::app::web::router(std::sync::Arc::new(state));
    rt.spawn(crate::app::web::serve(listener, app, async {
        let _ = stopped.await;
    }));
    let who = to.split('@').next().unwrap_or(to).trim_start_matches('<');
    let pages = [
        "/".to_string(),
        "/?page=2".into(),
        "/?state=reported".into(),
        format!("/?waits_on={who}"),
        "/api/cases".into(),
        "/digest".into(),
    ];
    let timed: anyhow::Result<Vec<String>> = pages
        .iter()
        .map(|page| time_page(port, page, iterations))
        .collect();
    // Stopped and cleaned up whether a page failed or not.
    let _ = stop.send(());
    drop(rt);
    let mut out = format!(
        "dashboard: {count} cases (half reported, half queued), {iterations} requests a page\n"
    );
    for line in timed? {
        out.push_str(&line);
    }
    Ok(out)
}

/// Opening a database of `count` cases, each with its report queued, as
/// every command does first: `iterations` times, the database closed in
/// between, and listing the cases once it is open (what `cases list` and the
/// digest read).
pub fn open(config: &Config, count: usize, iterations: usize, to: &str) -> anyhow::Result<String> {
    use crate::store::Store;

    let (_scratch, config) = scratch_config(config)?;
    {
        let store = Store::open(&config.state_dir())?;
        queue_copies(&config, &store, count, to)?;
        store.flush()?;
    }
    let (mut opens, mut lists) = (Vec::new(), Vec::new());
    for _ in 0..iterations.max(1) {
        let t = Instant::now();
        let store = Store::open(&config.state_dir())?;
        opens.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let n = store.cases()?.len();
        lists.push(t.elapsed().as_secs_f64() * 1000.0);
        anyhow::ensure!(n == count, "{n} cases read back of {count}");
    }
    let line = |what: &str, times: Vec<f64>| {
        let (median, min, max) = spread(times);
        format!("  {what:<12} min {min:.2} ms, median {median:.2} ms, max {max:.2} ms\n")
    };
    Ok(format!(
        "open: a database of {count} cases, each with its report queued, {iterations} times\n{}{}",
        line("open", opens),
        line("list cases", lists),
    ))
}

/// `GET page` on the loopback `port`, `iterations` times: a line with its
/// times and size, or an error if it is not answered 200 OK.
fn time_page(port: u16, page: &str, iterations: usize) -> anyhow::Result<String> {
    let mut times = Vec::with_capacity(iterations);
    let mut bytes = 0;
    for _ in 0..iterations.max(1) {
        let t = Instant::now();
        let body = crate::app::web::get_local(port, page);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        bytes = body
            .map_err(|_| anyhow::anyhow!("GET {page}: no 200 OK from the dashboard"))?
            .len();
    }
    let (median, min, max) = spread(times);
    Ok(format!(
        "  {page:<20} min {min:.2} ms, median {median:.2} ms, max {max:.2} ms, {:.0} KB\n",
        bytes as f64 / 1000.0
    ))
}

/// A scratch directory of its own, removed when the bench is done with it
/// however it ends: a step that fails returns early with `?`, and nothing
/// is left behind in the temporary directory.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        let d = std::env::temp_dir().join(format!(
            "perfbot-bench-{}-{}",
            std::process::id(),
            chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default()
        ));
        std::fs::create_dir_all(&d)?;
        Ok(Scratch(d))
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Write a synthetic LKML-like mbox: `messages` messages, header blocks with
/// Received chains, bodies of 0.5–60 KB (patches long, replies short), a MIME
/// mix (plain, quoted-printable ISO-8859-1, base64 attachments, HTML-only,
/// multipart/alternative), and about 1% replies to `parents`. Streamed to the
/// file, so the generator holds one message at a time.
pub fn write_synthetic_mbox(
    path: &std::path::Path,
    messages: usize,
    parents: &[String],
) -> std::io::Result<u64> {
    use std::io::Write;
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut written = 0u64;
    for i in 0..messages {
        let m = synthetic_message(&mut rng, i, parents);
        out.write_all(m.as_bytes())?;
        written += m.len() as u64;
    }
    out.flush()?;
    Ok(written)
}

/// The `i`th message of the synthetic mbox, in its mbox "From " line.
fn synthetic_message(rng: &mut Rng, i: usize, parents: &[String]) -> String {
    let reply = !parents.is_empty() && rng.next() < 0.01;
    let kind = rng.next();
    // Sizes: mostly short mails, some long patches.
    let body_len = if rng.next() < 0.15 {
        8_000 + (rng.next() * 52_000.0) as usize
    } else {
        500 + (rng.next() * 4_000.0) as usize
    };
    let mut m = String::with_capacity(body_len + 2048);
    m.push_str(&format!(
        "From list-owner@vger.example Mon Jan  1 00:00:{:02} 2024\n",
        i % 60
    ));
    for hop in 0..4 {
        m.push_str(&format!(
            "Received: from mx{hop}.vger.example (mx{hop}.vger.example [10.0.{hop}.{}])\n\tby lists.example with ESMTP id {i:x}{hop}\n\tfor <linux-kernel@vger.example>; Mon, 1 Jan 2024 00:00:00 +0000\n",
            i % 250
        ));
    }
    m.push_str(&format!(
        "From: Developer {} <dev{}@kernel.example>\nTo: linux-kernel@vger.example\nDate: Mon, 1 Jan 2024 00:{:02}:00 +0000\nMessage-ID: <bench.{i}@kernel.example>\nList-Id: <linux-kernel.vger.example>\nMIME-Version: 1.0\n",
        i % 977,
        i % 977,
        i % 60
    ));
    if reply {
        let p = &parents[i % parents.len()];
        m.push_str(&format!(
            "Subject: Re: [xfs] regression report {i}\nIn-Reply-To: <{p}>\nReferences: <{p}>\n"
        ));
    } else if i > 0 && rng.next() < 0.6 {
        // Replies in other threads (their roots are not in this file, so
        // the 1% of replies to perfbot's cases stay 1%).
        m.push_str(&format!(
            "Subject: Re: [PATCH v{}] mm: change {i}\nIn-Reply-To: <patch.{}@kernel.example>\nReferences: <patch.{}@kernel.example> <patch.{}@kernel.example>\n",
            i % 5,
            i / 3,
            i / 9,
            i / 3
        ));
    } else {
        m.push_str(&format!("Subject: [PATCH v{}] mm: change {i}\n", i % 5));
    }
    let body = synthetic_text(rng, body_len);
    synthetic_body(&mut m, kind, reply, &body);
    m.push('\n');
    m
}

/// About `bytes` of kernel-ish words in lines of some 70 columns.
fn synthetic_text(rng: &mut Rng, bytes: usize) -> String {
    const WORDS: [&str; 18] = [
        "the",
        "page",
        "cache",
        "lock",
        "we",
        "should",
        "not",
        "regression",
        "patch",
        "commit",
        "this",
        "memory",
        "scheduler",
        "xfs",
        "inode",
        "revert",
        "fix",
        "test",
    ];
    let mut s = String::with_capacity(bytes + 80);
    let mut col = 0;
    while s.len() < bytes {
        let w = WORDS[(rng.next() * WORDS.len() as f64) as usize % WORDS.len()];
        s.push_str(w);
        col += w.len() + 1;
        if col > 70 {
            s.push('\n');
            col = 0;
        } else {
            s.push(' ');
        }
    }
    s.push('\n');
    s
}

/// The Content-Type and body of a synthetic message, by `kind` (a draw in
/// [0, 1)): plain (always for a `reply`), quoted-printable ISO-8859-1, a
/// base64 attachment, HTML only, or multipart/alternative.
fn synthetic_body(m: &mut String, kind: f64, reply: bool, body: &str) {
    if reply || kind < 0.70 {
        m.push_str("Content-Type: text/plain; charset=us-ascii\n\n");
        if reply {
            m.push_str("On Mon, Jan 1, 2024, kernel test robot wrote:\n> regression\n\nThis is not a regression.\n");
        }
        m.push_str(body);
    } else if kind < 0.80 {
        m.push_str("Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\n");
        m.push_str(&body.replace("the", "th=E9"));
    } else if kind < 0.90 {
        m.push_str("Content-Type: multipart/mixed; boundary=\"bnd\"\n\n--bnd\nContent-Type: text/plain\n\nsee attached\n--bnd\nContent-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\n");
        use base64::Engine;
        for chunk in body.as_bytes().chunks(57) {
            m.push_str(&base64::engine::general_purpose::STANDARD.encode(chunk));
            m.push('\n');
        }
        m.push_str("--bnd--\n");
    } else if kind < 0.95 {
        m.push_str("Content-Type: text/html; charset=utf-8\n\n<html><body><p>");
        m.push_str(body);
        m.push_str("</p></body></html>\n");
    } else {
        m.push_str("Content-Type: multipart/alternative; boundary=\"alt\"\n\n--alt\nContent-Type: text/plain\n\n");
        m.push_str(body);
        m.push_str("--alt\nContent-Type: text/html\n\n<p>html</p>\n--alt--\n");
    }
}

/// Ingest a synthetic `messages`-message mbox into a scratch state directory
/// holding `cases` reported cases (the outbox a long-running bot has).
pub fn ingest(
    config: &Config,
    messages: usize,
    cases: usize,
    keep: Option<&std::path::Path>,
) -> anyhow::Result<String> {
    use crate::flows::ingest::sources::ingest_mbox;
    use crate::flows::ingest::Ingestor;
    use crate::store::Store;

    let (scratch, config) = scratch_config(config)?;
    let store = Store::open(&config.state_dir())?;
    let parents = reported_cases(&config, &store, cases, 7, |i| {
        format!("bench.case{i}@perfbot")
    })?;
    // `--mbox PATH`: kept there (and reused when it exists), so that other
    // tools can be timed on the very same file.
    let path = keep.map_or_else(|| scratch.join("lkml.mbox"), std::path::Path::to_path_buf);
    let t = Instant::now();
    let bytes = if keep.is_some() && path.exists() {
        std::fs::metadata(&path)?.len()
    } else {
        write_synthetic_mbox(&path, messages, &parents)?
    };
    let generated = t.elapsed();
    let rss_before = peak_rss_mib().unwrap_or(0.0);
    let mut ing = Ingestor::new(&config, &store)?;
    let t = Instant::now();
    ingest_mbox(&mut ing, &path)?;
    let took = t.elapsed().as_secs_f64();
    let rss = peak_rss_mib().unwrap_or(0.0);
    let s = ing.stats.clone();
    Ok(format!(
        "ingest: {messages} messages, {:.1} MB mbox (generated in {:.1} s), {cases} cases reported before\n\
         known thread ids (for other tools): {}\n\
         {}\n\
         time {:.2} s: {:.0} MB/s, {:.0} messages/s (a reader thread and the routing thread)\n\
         peak RSS {:.1} MiB (before ingesting: {:.1} MiB)\n",
        bytes as f64 / 1e6,
        generated.as_secs_f64(),
        shown_ids(&parents),
        s.line(),
        took,
        bytes as f64 / 1e6 / took,
        messages as f64 / took,
        rss,
        rss_before,
    ))
}

/// `bench --what maildir`: the synthetic LKML of `ingest` as a maildir of
/// `messages` read mails (in `cur/`). Times the daemon's poll round, which
/// reads `new/` only (one new reply each round), and the first reading at
/// start, which reads `cur/` too.
pub fn maildir(
    config: &Config,
    messages: usize,
    rounds: usize,
    keep: Option<&std::path::Path>,
) -> anyhow::Result<String> {
    use crate::flows::ingest::sources::ingest_maildir_with;
    use crate::flows::ingest::Ingestor;
    use crate::store::Store;

    let (scratch, config) = scratch_config(config)?;
    let store = Store::open(&config.state_dir())?;
    let parents = reported_cases(&config, &store, 10, 7, |i| format!("bench.case{i}@perfbot"))?;
    let dir = keep.map_or_else(|| scratch.join("maildir"), std::path::Path::to_path_buf);
    anyhow::ensure!(!dir.exists(), "{}: exists already", dir.display());
    for sub in ["new", "cur", "tmp"] {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut bytes = 0u64;
    for i in 0..messages {
        let m = synthetic_message(&mut rng, i, &parents);
        // Without the mbox's "From " line.
        let m = m.split_once('\n').map_or(m.as_str(), |(_, rest)| rest);
        bytes += m.len() as u64;
        std::fs::write(dir.join("cur").join(format!("{i}.bench.host:2,S")), m)?;
    }
    let mut ing = Ingestor::new(&config, &store)?;
    let t = Instant::now();
    ingest_maildir_with(&mut ing, &dir, true)?;
    let first = t.elapsed().as_secs_f64();
    let mut times = Vec::with_capacity(rounds);
    for r in 0..rounds {
        let reply = format!(
            "From: Dave <dave@x.org>\r\nSubject: Re: report\r\nMessage-ID: <round{r}@bench>\r\n\
             In-Reply-To: <{}>\r\n\r\nLooking into it.\r\n",
            parents[r % parents.len()]
        );
        std::fs::write(dir.join("new").join(format!("r{r}.bench.host")), reply)?;
        let t = Instant::now();
        ingest_maildir_with(&mut ing, &dir, false)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let (median, least, most) = spread(times);
    Ok(format!(
        "maildir: {messages} read messages, {:.1} MB in cur/\n\
         first reading (cur/ and new/): {first:.2} s\n\
         a poll round with one new reply ({rounds} rounds): median {median:.2} ms \
         (least {least:.2}, most {most:.2})\n",
        bytes as f64 / 1e6,
    ))
}

/// `bench --what public-inbox`: the synthetic LKML of `ingest`, written as a
/// public-inbox repository (one commit per message, with gitoxide), then read
/// by `ingest --public-inbox` from an empty cursor; and read again (nothing
/// new: the cursor).
pub fn public_inbox(config: &Config, messages: usize) -> anyhow::Result<String> {
    use crate::flows::ingest::public_inbox::{ingest_repository, write_archive};
    use crate::flows::ingest::Ingestor;
    use crate::store::Store;

    let (scratch, config) = scratch_config(config)?;
    let store = Store::open(&config.state_dir())?;
    let mbox = scratch.join("lkml.mbox");
    write_synthetic_mbox(&mbox, messages, &["bench.case0@perfbot".to_string()])?;
    let mut raws: Vec<Vec<u8>> = Vec::with_capacity(messages);
    let file = std::fs::File::open(&mbox)?;
    crate::flows::ingest::mbox::for_each::<_, std::io::Error>(file, usize::MAX, |m| {
        if let crate::flows::ingest::mbox::Item::Message(m) = m {
            raws.push(m.raw.to_vec());
        }
        Ok(())
    })?;
    let bytes: u64 = raws.iter().map(|r| r.len() as u64).sum();
    let repo = scratch.join("lkml/git/0.git");
    let t = Instant::now();
    write_archive(&repo, raws.iter().map(Vec::as_slice))?;
    let written = t.elapsed().as_secs_f64();
    drop(raws);
    let rss_before = peak_rss_mib().unwrap_or(0.0);
    let time_read = |store: &Store| -> anyhow::Result<(f64, String, usize)> {
        let mut ing = Ingestor::new(&config, store)?;
        let t = Instant::now();
        let read = ingest_repository(&mut ing, &repo, |_| {})?;
        Ok((t.elapsed().as_secs_f64(), ing.stats.line(), read.commits))
    };
    let (loose, first, commits) = time_read(&store)?;
    let rss = peak_rss_mib().unwrap_or(0.0);
    let t = Instant::now();
    let (_, _, again) = time_read(&store)?;
    let rerun = t.elapsed().as_secs_f64();
    // lore's mirrors are packed: pack the archive as `git gc` would (once,
    // with git if it is installed) and read it again into a fresh state.
    let packed = std::process::Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["repack", "-adq"])
        .status()
        .is_ok_and(|s| s.success());
    let packed_line = if packed {
        drop(store);
        let fresh = Store::open(&scratch.join("state2"))?;
        let (t, _, _) = time_read(&fresh)?;
        format!(
            "packed (git repack -ad): {t:.2} s: {:.0} MB/s, {:.0} messages/s\n",
            bytes as f64 / 1e6 / t,
            messages as f64 / t
        )
    } else {
        "packed: git not installed, not measured\n".into()
    };
    Ok(format!(
        "public-inbox: {messages} messages, {:.1} MB of message data, one commit each \
         (written with gitoxide in {written:.1} s)\n\
         first read: {commits} commits, {first}\n\
         loose objects: {loose:.2} s: {:.0} MB/s, {:.0} messages/s\n\
         {packed_line}\
         peak RSS {rss:.1} MiB (before reading: {rss_before:.1} MiB)\n\
         rerun from the cursor: {again} commits in {rerun:.3} s\n",
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / loose,
        messages as f64 / loose,
    ))
}

/// Classify a typical reply (seed 000's, Dave Chinner's), a 370 KB reply
/// that quotes a whole report and 4 KB of prose with non-ASCII characters,
/// `iterations` times each; the rules are compiled once before timing.
pub fn classify(config: &Config, iterations: usize) -> String {
    use crate::reply::understand;
    let rules = config.intent_rules();
    let model = config.intent_model();
    // What ingestion does per reply: own words, then the reading (rules, and
    // the model's features and prediction when there is one).
    let once = |text: &str, model| {
        let words = understand::quote::own_words(text);
        understand::read(text, &words, understand::Context::default(), rules, model)
    };
    let t0 = Instant::now();
    let _ = crate::reply::understand::rules::Rules::with_overrides(&[]);
    let compile = t0.elapsed().as_secs_f64() * 1e3;
    let t0 = Instant::now();
    let _ =
        crate::reply::understand::model::Model::from_text(include_str!("../rules/intents.model"));
    let load = t0.elapsed().as_secs_f64() * 1e3;
    let mut out = format!(
        "classify: {iterations} iterations each (rules compile once: {compile:.1} ms; model loads once: {load:.1} ms)\n"
    );
    let inputs = classify_inputs();
    for (name, m) in [("rules alone", None), ("rules and model", model)] {
        if name == "rules and model" && m.is_none() {
            continue;
        }
        let timed: Vec<String> = inputs
            .iter()
            .map(|(what, text)| {
                let _ = once(text, m);
                let (median, lo, hi) = spread_micros(iterations, || {
                    std::hint::black_box(once(std::hint::black_box(text), m));
                });
                format!("{what}: median {median:.1} µs (min {lo:.1}, max {hi:.1})")
            })
            .collect();
        out.push_str(&format!("{name}: {}\n", timed.join("; ")));
    }
    // What ingestion undoes before the reading (`flows::ingest::mend`): a
    // client's broken quotes, an archive's `>From `, no-break spaces.
    let mended: Vec<String> = inputs
        .iter()
        .map(|(what, text)| {
            let (median, lo, hi) = spread_micros(iterations, || {
                std::hint::black_box(crate::flows::ingest::mend::mend(std::hint::black_box(text)));
            });
            format!("{what}: median {median:.1} µs (min {lo:.1}, max {hi:.1})")
        })
        .collect();
    out.push_str(&format!("mended first: {}\n", mended.join("; ")));
    out.push_str(&html_bodies(iterations));
    out
}

/// An HTML-only body read as text, as ingestion reads one now (html5ever's
/// tokenizer, laid out in `flows::ingest::html`) and by mail-parser's own
/// conversion (as it did before): a Gmail reply quoting a report, a
/// megabyte of lines, and a megabyte nested without end.
fn html_bodies(iterations: usize) -> String {
    use crate::flows::ingest::html;
    let quoted = "&gt; 46.56 ±  3%      +7.1       53.61        fio.latency_2ms%<br>".repeat(40);
    let gmail = format!(
        "<div dir=\"ltr\"><div>Hi,</div><div>This is not a regression.</div><div>Dave</div></div>\
         <div class=\"gmail_quote\"><div class=\"gmail_attr\">On Tue, kernel test robot wrote:<br></div>\
         <blockquote class=\"gmail_quote\">{quoted}</blockquote></div>"
    );
    let flat = "<div>a line of words</div>".repeat((1 << 20) / 26);
    let deep = "<blockquote><div>".repeat((1 << 20) / 17);
    let mut out = String::from("HTML-only body to text, perfbot / mail-parser:");
    for (what, body) in [
        (format!("Gmail reply ({} bytes)", gmail.len()), gmail),
        (format!("{} KB of lines", flat.len() >> 10), flat),
        (format!("{} KB nested", deep.len() >> 10), deep),
    ] {
        let ours = spread_micros(iterations.min(50), || {
            std::hint::black_box(html::text(std::hint::black_box(&body)));
        });
        let theirs = spread_micros(iterations.min(50), || {
            std::hint::black_box(mail_parser::decoders::html::html_to_text(
                std::hint::black_box(&body),
            ));
        });
        out.push_str(&format!(
            " {what}: median {:.1} µs / {:.1} µs;",
            ours.0, theirs.0
        ));
    }
    out.pop();
    out.push('\n');
    out
}

/// The replies `bench --what classify` times, each with the words its
/// line names it by.
fn classify_inputs() -> [(String, String); 5] {
    let typical = "On Tue, Jun 05, 2018 at 03:16:57PM +0800, kernel test robot wrote:\n>\n> Greeting,\n>\n> FYI, we noticed a +7.1% regression of fio.latency_2ms% due to commit:\n>\n> commit: b027d4c97b9675c2ad75dec94be4e46dceb3ec74 (\"xfs: don't retry xfs_buf_find on XBF_TRYLOCK failure\")\n> 46.56 ±  3%      +7.1       53.61        fio.latency_2ms%\n> 25.20 ±  6%      -7.3       17.86 ±  6%  fio.latency_4ms%\n\nThis is not a regression. The number of IOs in the 4ms IO latency\nbin has reduced by 7%, and inumber in the 2ms IO latency bin has\nincreased by 7%. IOWs, there's a measurable improvement in IO\nlatency as a result of those patches, not a regression.\n\nCheers,\n\nDave.\n-- \nDave Chinner\ndavid@fromorbit.com\n";
    let mut big =
        String::from("On Mon, Jan 1, 2024 at 10:00:00AM +0800, kernel test robot wrote:\n");
    let row = ">      46.56 ±  3%      +7.1       53.61        perf-profile.children.cycles-pp.some_kernel_function_name\n";
    while big.len() < 370_000 {
        big.push_str(row);
    }
    big.push_str("\nI'll revert this patch, thanks.\n");
    // Prose with a non-ASCII character in every sentence (names, dashes,
    // ellipses, a damaged byte): what once made every rule run on the regex
    // crate's slow engine.
    let mut accented = String::from("On Mon, Jan 1, 2024 at 10:00, kernel test robot wrote:\n> FYI, we noticed a -9.0% regression\n\n");
    while accented.len() < 4_000 {
        accented.push_str("Thanks, Jürgen — the numbers look odd… I'm not sure the commit is to blame; the profile shows the same cost in the s\u{fffd}bsystem. ");
    }
    // Hostile replies as large as ingestion keeps of a body
    // (`inbound.max_text_bytes`), all own words: short sentences in one
    // paragraph, and one line that never ends a sentence.
    let max = crate::flows::ingest::parse::Limits::default().max_text;
    let sentences = "This is fine. ".repeat(max / 14);
    let one_line = "not a regression ".repeat(max / 17);
    [
        (
            format!("typical reply ({} bytes)", typical.len()),
            typical.to_string(),
        ),
        ("370 KB reply quoting a report".to_string(), big),
        (
            format!(
                "{} KB of prose, non-ASCII in every sentence",
                accented.len() / 1000
            ),
            accented,
        ),
        (
            format!(
                "{} KB of short sentences in one paragraph",
                sentences.len() >> 10
            ),
            sentences,
        ),
        (
            format!("{} KB on one line, no sentence ends", one_line.len() >> 10),
            one_line,
        ),
    ]
}

/// `f` timed `iterations` times: the median, least and most, in µs.
fn spread_micros(iterations: usize, mut f: impl FnMut()) -> (f64, f64, f64) {
    spread(
        (0..iterations.max(1))
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect(),
    )
}

/// The median, least and most of `times` (at least one).
fn spread(mut times: Vec<f64>) -> (f64, f64, f64) {
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[0], times[times.len() - 1])
}

/// `perfbot run` under load, against the local test mail server: ten reported
/// cases, then `count` replies to them dropped at once into the bot's mailbox
/// (`$MAIL_TEST_DIR/mail/example.test/bot/Maildir/new`, as a local delivery
/// agent would); time until the daemon has applied them all (IMAP IDLE wakes
/// it), then its CPU use over ten idle seconds.
pub fn daemon(config: &Config, count: usize) -> anyhow::Result<String> {
    use std::time::Duration;

    let mail_dir = std::path::PathBuf::from(
        std::env::var("MAIL_TEST_DIR").unwrap_or_else(|_| "/tmp/mailtest".into()),
    );
    anyhow::ensure!(
        mail_dir.join("mail").is_dir(),
        "{} not found: start the test mail server (.ci/mailserver/start-mail.sh) first",
        mail_dir.join("mail").display()
    );
    let maildir = bot_maildir(&mail_dir)?;
    let scratch = Scratch::new()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let domain = format!("bench{}.perfbot.test", std::process::id());
    let cfg_path = daemon_config(config, &scratch, &mail_dir, port, &domain)?;
    let parents = {
        let cfg = Config::load(Some(&cfg_path))?;
        // Closed again before the daemon opens it.
        let store = crate::store::Store::open(&cfg.state_dir())?;
        reported_cases(&cfg, &store, 10, std::process::id().into(), |i| {
            format!("case{i}@{domain}")
        })?
    };
    let child = Stopped(
        std::process::Command::new(std::env::current_exe()?)
            .arg("--config")
            .arg(&cfg_path)
            .arg("run")
            .env("PERFBOT_IMAP_PASSWORD", "secret")
            .stderr(std::process::Stdio::null())
            .spawn()?,
    );
    let health = Health { port };
    // Up, and caught up with what the mailbox held before.
    health
        .wait(|_| true, 30)
        .ok_or_else(|| anyhow::anyhow!("the daemon did not come up"))?;
    std::thread::sleep(Duration::from_secs(3));
    let before = health.get().map_or(0, |c| c.replies_handled);
    let files = write_replies(&maildir, count, &parents)?;
    // Delivered at once: timed from the first rename into new/.
    let t0 = Instant::now();
    for f in &files {
        std::fs::rename(maildir.with_file_name("tmp").join(f), maildir.join(f))?;
    }
    let target = before + count as u64;
    let done = health.wait(|c| c.replies_handled >= target, 120);
    let took = t0.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_secs(2));
    let cpu = idle_cpu(child.0.id(), Duration::from_secs(10));
    drop(child);
    let handled = done.map_or(0, |c| c.replies_handled - before);
    Ok(format!(
        "daemon: {count} replies dropped at once into the bot's mailbox\n\
         applied {handled} in {took:.2} s (IMAP IDLE wake-up, fetch, parse, classify, record)\n\
         idle CPU afterwards: {cpu:.2}% of one core over 10 s\n"
    ))
}

/// The daemon under measure, stopped as an operator stops it (SIGTERM) when
/// the bench is done with it, however it ends: one that never came up is
/// not left running.
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
    }
}

/// The daemon's config: file outbox, the test server's IMAP mailbox of
/// `bot`, the dashboard on `port`.
fn daemon_config(
    config: &Config,
    scratch: &Path,
    mail_dir: &Path,
    port: u16,
    domain: &str,
) -> anyhow::Result<PathBuf> {
    let cfg_path = scratch.join("config.toml");
    let text = format!(
        "[bot]\nstate_dir = {state:?}\nemail = \"bot@example.test\"\nmessage_id_domain = \"{domain}\"\n\
         [report]\ntemplates_dir = {tpl:?}\ncc = []\ncc_self = false\n\
         [outbound]\ntransport = \"file\"\noutbox_dir = {outbox:?}\n\
         [inbound]\nsource = \"imap\"\n\
         [imap]\nurl = \"imap://127.0.0.1:1143\"\nuser = \"bot@example.test\"\nca_file = {ca:?}\npoll_secs = 120\nbatch = 500\n\
         [web]\nlisten = \"127.0.0.1:{port}\"\n\
         [run]\nsend_every_secs = 5\n",
        state = scratch.join("state"),
        tpl = config.resolve(&config.file.report.templates_dir),
        outbox = scratch.join("outbox"),
        ca = mail_dir.join("ca.pem"),
    );
    std::fs::write(&cfg_path, text)?;
    Ok(cfg_path)
}

/// Ten cases reported from the xfs example in `store`, the `i`th under the
/// Message-ID `id(i)` (case keys told apart by `tag`); their reports'
/// Message-IDs.
/// The first ten ids, and how many more.
fn shown_ids(ids: &[String]) -> String {
    let mut out = ids[..ids.len().min(10)].join(" ");
    if ids.len() > 10 {
        out.push_str(&format!(" and {} more", ids.len() - 10));
    }
    out
}

/// `n` reported cases, each with its report queued, whose Message-IDs
/// `id(i)` gives.
fn reported_cases(
    cfg: &Config,
    store: &crate::store::Store,
    n: usize,
    tag: u64,
    id: impl Fn(usize) -> String,
) -> anyhow::Result<Vec<String>> {
    use crate::flows::report::{prepare, queue};
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/seed002-xfs-fio-falloc-2022.json");
    let now = chrono::Utc::now();
    let base = prepare(cfg, &example, None, false, now)?;
    let mut parents = Vec::new();
    for i in 0..n {
        let mut p = base.clone();
        // The case id is the key's first 12 digits: make those differ.
        p.report.case_key = format!("{i:012x}{tag:052x}");
        p.envelope.message_id = crate::model::MessageId::parse(&id(i)).expect("valid");
        parents.push(p.envelope.message_id.to_string());
        queue(cfg, store, &p, now)?;
    }
    Ok(parents)
}

/// The bot's maildir on the test mail server, its `new/`. Dovecot makes it
/// on the first delivery or login, so a server that has had neither has
/// none yet: it is made here as Dovecot would (owned by `mail`).
fn bot_maildir(mail_dir: &Path) -> anyhow::Result<PathBuf> {
    let root = mail_dir.join("mail/example.test/bot/Maildir");
    for sub in ["new", "cur", "tmp"] {
        std::fs::create_dir_all(root.join(sub))?;
    }
    let _ = std::process::Command::new("chown")
        .args(["-R", "mail:mail"])
        .arg(mail_dir.join("mail/example.test"))
        .status();
    Ok(root.join("new"))
}

/// `count` replies to the `parents`, written to the maildir's tmp/ (then
/// renamed into new/, as a delivery agent does); their file names.
fn write_replies(maildir: &Path, count: usize, parents: &[String]) -> anyhow::Result<Vec<String>> {
    let tmp = maildir.with_file_name("tmp");
    let stamp = chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default();
    let mut files = Vec::new();
    for i in 0..count {
        let name = format!("{stamp}.{i}.perfbot-bench");
        let body = format!(
            "From: Developer {i} <dev{i}@kernel.example>\r\nTo: bot@example.test\r\nSubject: Re: report\r\nMessage-ID: <bench.{stamp}.{i}@kernel.example>\r\nIn-Reply-To: <{p}>\r\nReferences: <{p}>\r\n\r\n> kernel test robot noticed a regression\r\n\r\nLooking into it, thanks.\r\n",
            p = parents[i % parents.len()]
        );
        std::fs::write(tmp.join(&name), body)?;
        files.push(name);
    }
    let _ = std::process::Command::new("chown")
        .args(["-R", "mail:mail"])
        .arg(&tmp)
        .status();
    Ok(files)
}

/// The daemon's `/healthz`, on `port`.
struct Health {
    port: u16,
}

/// What the bench reads of the daemon's `/healthz`.
#[derive(Debug, serde::Deserialize)]
struct Counts {
    replies_handled: u64,
}

impl Health {
    fn get(&self) -> Option<Counts> {
        serde_json::from_str(&crate::app::web::get_local(self.port, "/healthz").ok()?).ok()
    }

    /// The counts once `f` holds of them, within `secs`.
    fn wait(&self, f: impl Fn(&Counts) -> bool, secs: u64) -> Option<Counts> {
        let end = Instant::now() + std::time::Duration::from_secs(secs);
        while Instant::now() < end {
            if let Some(v) = self.get().filter(|v| f(v)) {
                return Some(v);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        None
    }
}

/// The CPU process `pid` uses over `span`, in percent of one core.
fn idle_cpu(pid: u32, span: std::time::Duration) -> f64 {
    let (c0, i0) = (cpu_ticks(pid), Instant::now());
    std::thread::sleep(span);
    cpu_ticks(pid).saturating_sub(c0) as f64 / 100.0 / i0.elapsed().as_secs_f64() * 100.0
}

/// The CPU time process `pid` used so far, in clock ticks (user + system).
fn cpu_ticks(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1.to_string();
            let f: Vec<&str> = rest.split_whitespace().collect();
            Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
        })
        .unwrap_or(0)
}

/// The noise gate's interval for `metrics` metrics of `runs` samples each
/// (deterministic samples, half of them shifted): the time for all of them.
pub fn noise(config: &Config, metrics: usize, runs: usize) -> String {
    use crate::compare::noise::{hold_reason, interval};
    let b = config.file.noise.bootstrap();
    let sample = |m: usize, r: usize, shift: f64| {
        let jitter = ((m * 7919 + r * 104_729) % 1000) as f64 / 1000.0 - 0.5;
        (1000.0 + m as f64) * (1.0 + 0.02 * jitter) * shift
    };
    let data: Vec<(Vec<f64>, Vec<f64>)> = (0..metrics)
        .map(|m| {
            let shift = if m % 2 == 0 { 1.1 } else { 1.0 };
            (
                (0..runs).map(|r| sample(m, r, 1.0)).collect(),
                (0..runs).map(|r| sample(m, r + runs, shift)).collect(),
            )
        })
        .collect();
    let t0 = std::time::Instant::now();
    let mut held = 0;
    for (base, head) in &data {
        if let Some(i) = interval(base, head, false, b) {
            held += usize::from(hold_reason(&i, false, 1.0).is_some());
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    format!(
        "noise gate: {metrics} metrics × {runs} runs, {} resamples each: {secs:.3} s ({:.1} µs per metric); {held} held, {} pass\n",
        b.resamples,
        secs * 1e6 / metrics.max(1) as f64,
        metrics - held
    )
}
