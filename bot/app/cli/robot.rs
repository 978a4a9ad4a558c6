//! `perfbot parse-report` and `perfbot roundtrip`: the kernel test robot's
//! mails read back into report inputs, and written again to compare.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Args;

use super::{read_input, Failure};
use crate::config::Config;
use crate::flows::robot::{attachments_of, read_back, roundtrip, RoundTrip};
use crate::model::case::CaseState;

#[derive(Args, Debug)]
pub struct ParseReportArgs {
    /// A report mail (.eml; `-` for standard input)
    pub mail: PathBuf,
    /// Print the layout and sender found besides the input
    #[arg(long)]
    pub all: bool,
    /// Save the mail's attachments into this folder and name them in the
    /// input as files to send (`{"name", "path"}`)
    #[arg(long, value_name = "DIR")]
    pub attachments: Option<PathBuf>,
}

pub fn parse(config: &Config, a: ParseReportArgs) -> Result<(), Failure> {
    let raw = read_input(&a.mail)?;
    let shown = a.mail.display().to_string();
    let back = read_back(config, &raw, &shown).map_err(Failure::usage)?;
    if back.unread > 0 {
        eprintln!(
            "{shown}: {} lines perfbot does not write back, kept in the input's \"unread\"",
            back.unread
        );
    }
    let parsed = back.parsed;
    // The layout it was read in is in the input's `style`.
    let mut out = parsed.input.clone();
    // What it prints is an input `report` takes, or nothing: a value the
    // mail says but an input may not hold (a mean of 1e308) is refused here,
    // naming the mail and the field, not later by `report`.
    if let Err(e) = crate::input::LoadedInput::from_input(out.clone(), std::path::Path::new(&shown))
    {
        return Err(Failure::usage(anyhow::anyhow!(
            "the report reads back into an input perfbot refuses: {e}"
        )));
    }
    if let Some(dir) = &a.attachments {
        let files = attachments_of(&raw, &shown).map_err(Failure::usage)?;
        std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
        let dir = dir
            .canonicalize()
            .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
        if files.len() > crate::input::MAX_ATTACHMENTS {
            return Err(Failure::usage(anyhow::anyhow!(
                "{shown}: {} attachments, over {}: none saved",
                files.len(),
                crate::input::MAX_ATTACHMENTS
            )));
        }
        let mut specs = Vec::new();
        for (name, bytes) in files {
            let path = save_new(&dir, &name, &bytes)?;
            specs.push(crate::input::AttachmentSpec::File(
                crate::input::AttachedFile { name, path },
            ));
        }
        out.attachments = specs;
    }
    let text = if a.all {
        serde_json::to_string_pretty(&parsed)
    } else {
        serde_json::to_string_pretty(&out)
    }?;
    println!("{text}");
    Ok(())
}

/// Write an attachment as a new file in `dir`: never over an existing file,
/// never through a symlink (`create_new` refuses both); a second attachment
/// of the same name is saved as `name.2`, `name.3`, …
fn save_new(dir: &std::path::Path, name: &str, bytes: &[u8]) -> Result<PathBuf, Failure> {
    use std::io::Write;
    for n in 1..=crate::input::MAX_ATTACHMENTS {
        let file = if n == 1 {
            name.to_string()
        } else {
            format!("{name}.{n}")
        };
        let path = dir.join(&file);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut f) => {
                f.write_all(bytes)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                tracing::debug!(path = %path.display(), "exists: not overwritten");
            }
            Err(e) => return Err(anyhow::anyhow!("{}: {e}", path.display()).into()),
        }
    }
    Err(Failure::usage(anyhow::anyhow!(
        "{}: {name} and {} more of that name exist: not overwritten",
        dir.display(),
        crate::input::MAX_ATTACHMENTS - 1
    )))
}

#[derive(Args, Debug)]
pub struct RoundtripArgs {
    /// Report mails (.eml), or folders searched for `00-report.eml` and `*.eml`
    #[arg(required = true)]
    pub mails: Vec<PathBuf>,
    /// One JSON object per mail
    #[arg(long)]
    pub json: bool,
    /// Print the differences of every mail, not only the summary
    #[arg(long)]
    pub diff: bool,
}

fn mails_in(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = walkdir(p);
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    out
}

/// Report mails below a folder: of a thread folder (one with a
/// `00-report.eml`) only that report, its replies are no reports; of any
/// other folder every `.eml`, `.eml.gz` and `.txt`, whatever its name.
fn walkdir(dir: &std::path::Path) -> Vec<PathBuf> {
    let report = dir.join("00-report.eml");
    if report.is_file() {
        return vec![report];
    }
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = p.to_string_lossy();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else if name.ends_with(".eml") || name.ends_with(".eml.gz") || name.ends_with(".txt") {
            out.push(p);
        }
    }
    out
}

/// A mail file, gunzipped when its name ends in `.gz`; either way at most
/// `input::MAX_INPUT_BYTES` (a gzip bomb is refused at the limit).
fn read_mail_file(path: &std::path::Path) -> Result<Vec<u8>, String> {
    use crate::fsutil::{read_capped, Bounded};
    use crate::input::MAX_INPUT_BYTES;
    let raw = crate::input::read_bytes(path).map_err(|e| e.to_string())?;
    if path.extension().is_some_and(|x| x == "gz") {
        return read_capped(flate2::read::GzDecoder::new(&raw[..]), MAX_INPUT_BYTES, 0).map_err(
            |e| match e {
                Bounded::Io(e) => format!("{}: {e}", path.display()),
                _ => format!(
                    "{}: over {MAX_INPUT_BYTES} bytes decompressed, the limit for an input: not read",
                    path.display()
                ),
            },
        );
    }
    Ok(raw)
}

pub fn run(config: &Config, a: RoundtripArgs) -> Result<(), Failure> {
    super::require_files(a.mails.iter().map(PathBuf::as_path))?;
    let files = mails_in(&a.mails);
    let empty: Vec<String> = (a.mails.iter())
        .filter(|p| p.is_dir() && walkdir(p).is_empty())
        .map(|p| p.display().to_string())
        .collect();
    const WHAT: &str = "no report mail in it (a 00-report.eml, or files *.eml, *.eml.gz, *.txt)";
    if files.is_empty() {
        return Err(Failure::usage(anyhow::anyhow!(
            "{}: {WHAT}",
            empty.join(", ")
        )));
    }
    for dir in &empty {
        eprintln!("perfbot: {dir}: {WHAT}");
    }
    let mut results: Vec<RoundTrip> = Vec::new();
    for f in &files {
        let shown = f.display().to_string();
        let r = match read_mail_file(f) {
            Ok(raw) => roundtrip(config, &raw, &shown),
            Err(e) => RoundTrip::failed(&shown, e),
        };
        if a.json {
            println!("{}", serde_json::to_string(&r)?);
        } else if a.diff && !r.identical {
            println!("== {} ({})", r.file, r.layout.as_deref().unwrap_or("?"));
            if let Some(e) = &r.error {
                println!("   error: {e}");
            }
            print!("{}", r.unified);
        }
        results.push(r);
    }
    if !a.json {
        print!("{}", summary(&results));
    }
    Ok(())
}

/// The lines after a round trip of several mails: how many came back
/// identical, what was not written back, and the headers that differ.
fn summary(results: &[RoundTrip]) -> String {
    use std::fmt::Write;
    let n = results.len();
    let count = |p: fn(&RoundTrip) -> bool| results.iter().filter(|r| p(r)).count();
    let same = count(|r| r.identical);
    let failed = count(|r| r.error.is_some());
    let spaced = count(|r| r.identical && r.spaced > 0);
    let mut out = format!(
        "{same} of {n} identical ({:.1}%; {spaced} of them with blank lines recorded where the mail differs from its layout), {} differ, {failed} could not be read or rendered\n",
        100.0 * same as f64 / n as f64,
        n - same - failed
    );
    let unread: Vec<&RoundTrip> = results.iter().filter(|r| r.unread > 0).collect();
    if !unread.is_empty() {
        let _ = writeln!(
            out,
            "{} lines perfbot does not write back, kept in the input's unread, in {} {}: {}",
            unread.iter().map(|r| r.unread).sum::<usize>(),
            unread.len(),
            if unread.len() == 1 { "mail" } else { "mails" },
            unread
                .iter()
                .map(|r| r.file.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(
        out,
        "Subject identical in {} of {n}; To, Cc, In-Reply-To and References in {} of {n}",
        count(|r| r.subject_identical),
        count(|r| r.headers_identical),
    );
    for r in results.iter().filter(|r| r.error.is_none()) {
        for d in &r.headers {
            let _ = writeln!(
                out,
                "   {}: {}: mail {:?}, perfbot {:?}",
                r.file, d.field, d.mail, d.perfbot
            );
        }
    }
    out
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Thread folders: `00-report.eml`, then the replies (as in the corpus)
    #[arg(required = true)]
    pub threads: Vec<PathBuf>,
    /// Replay into this state directory (kept) instead of a scratch one per thread
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// One JSON object per thread
    #[arg(long)]
    pub json: bool,
    /// Labels of the threads' replies (`labels.jsonl`, as `eval-replies`
    /// reads them): each thread's final state is judged against them, and
    /// the thread figures follow
    #[arg(long = "labels", value_name = "LABELS.jsonl")]
    pub labels: Vec<PathBuf>,
    /// With --labels: replay each thread with a model trained without its
    /// thread's labels, the labelled threads dealt into K folds as
    /// `eval-replies --folds` deals them (the threads' figures out of
    /// sample for the model; the phrase rules are what they are)
    #[arg(long, requires = "labels", value_parser = clap::value_parser!(u16).range(2..))]
    pub folds: Option<u16>,
    /// With --folds: more labelled replies every fold's model trains on
    #[arg(long = "train-with", requires = "folds", value_name = "LABELS.jsonl")]
    pub train_with: Vec<PathBuf>,
}

/// A replayed thread, with how it ended against its labels (if any).
#[derive(serde::Serialize)]
struct Judged<'a> {
    #[serde(flatten)]
    replay: &'a crate::flows::robot::Replay,
    #[serde(skip_serializing_if = "Option::is_none")]
    judged: Option<&'a crate::app::eval::ThreadRead>,
}

/// Labelled replies by the thread folder they are in (canonical), each
/// folder's in date order.
fn by_folder(
    labels: &[crate::app::eval::Labelled],
) -> std::collections::HashMap<PathBuf, Vec<&crate::app::eval::Labelled>> {
    let mut by: std::collections::HashMap<PathBuf, Vec<&crate::app::eval::Labelled>> =
        Default::default();
    for l in labels {
        if let Some(dir) = l.path.parent().and_then(|p| p.canonicalize().ok()) {
            by.entry(dir).or_default().push(l);
        }
    }
    for mine in by.values_mut() {
        mine.sort_by(|a, b| (a.date, &a.path).cmp(&(b.date, &b.path)));
    }
    by
}

/// The config each thread folder is replayed with: `config` itself, or
/// with `--folds`, a model trained without the labels of the folder's fold
/// (a folder without labels reads with the model of every label).
struct FoldConfigs {
    /// A labelled thread's key → its fold.
    fold_of: std::collections::HashMap<String, usize>,
    /// One config per fold, and the last for unlabelled folders.
    configs: Vec<Config>,
}

impl FoldConfigs {
    fn new(
        config: &Config,
        labels: &[crate::app::eval::Labelled],
        train_with: &[PathBuf],
        k: usize,
    ) -> Result<FoldConfigs, Failure> {
        use crate::app::eval;
        let extra = eval::load_besides(train_with, labels)
            .map_err(|e| Failure::usage(anyhow::anyhow!("{e}")))?;
        let fold = eval::folds(labels, eval::Split::folds(k));
        let train = |leave: Option<usize>| {
            let items: Vec<eval::Labelled> = labels
                .iter()
                .zip(&fold)
                .filter(|(_, f)| Some(**f) != leave)
                .map(|(l, _)| l.clone())
                .chain(extra.iter().cloned())
                .collect();
            let model = eval::train(&items, config.intent_rules(), Default::default());
            config.clone().with_intent_model(model)
        };
        let mut configs: Vec<Config> = (0..k).map(|f| train(Some(f))).collect();
        configs.push(train(None));
        let fold_of = labels
            .iter()
            .zip(&fold)
            .map(|(l, f)| (l.thread.clone(), *f))
            .collect();
        Ok(FoldConfigs { fold_of, configs })
    }

    /// The config for a folder whose labels are `mine` (`by_folder`).
    fn of(&self, mine: Option<&Vec<&crate::app::eval::Labelled>>) -> &Config {
        let f = mine
            .and_then(|m| m.first())
            .and_then(|l| self.fold_of.get(&l.thread).copied());
        &self.configs[f.unwrap_or(self.configs.len() - 1)]
    }
}

/// A scratch state directory, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The thread folders given: each one with its `00-report.eml`, or a
/// folder of them (the corpus), in order.
fn thread_dirs(given: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for t in given {
        if t.join("00-report.eml").exists() {
            dirs.push(t.clone());
        } else if t.is_dir() {
            let mut inner: Vec<PathBuf> = std::fs::read_dir(t)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.join("00-report.eml").exists())
                .collect();
            if inner.is_empty() {
                // A folder that holds no thread is a mistake, not 0 threads.
                return Err(Failure::usage(anyhow::anyhow!(
                    "{}: no thread folder in it (a folder with 00-report.eml)",
                    t.display()
                )));
            }
            inner.sort();
            dirs.extend(inner);
        } else {
            return Err(Failure::usage(anyhow::anyhow!(
                "{}: not a thread folder",
                t.display()
            )));
        }
    }
    Ok(dirs)
}

/// One replayed thread for people: its final state, against the labels'
/// decision when there are labels, then each message's reading.
fn print_replay(r: &crate::flows::robot::Replay, verdict: Option<&crate::app::eval::ThreadRead>) {
    let against = verdict.map_or(String::new(), |v| {
        let decision = v
            .decision
            .map_or("no decision".to_string(), |d| d.to_string());
        format!(" ({} against the labels' {decision})", v.outcome.as_str())
    });
    let asked = if r.question.is_some() {
        ", a question to the robot's people open"
    } else {
        ""
    };
    println!(
        "== {} → {}{asked}{against}",
        r.thread,
        r.final_state.map_or("no case", CaseState::as_str)
    );
    for s in &r.steps {
        let reading = match (&s.intent, s.confidence) {
            (Some(i), Some(c)) => format!(
                "{i} ({c:.2}, {}) {:?}",
                s.role.map_or("?", |r| r.as_str()),
                s.evidence
                    .as_deref()
                    .unwrap_or("")
                    .chars()
                    .take(70)
                    .collect::<String>()
            ),
            // A note without a reading: a report read at a glance.
            _ => s.evidence.clone().unwrap_or_default(),
        };
        println!(
            "   {:<18} {:<10} {:<16} {}",
            s.file,
            s.outcome.as_str(),
            s.state.map_or("-", CaseState::as_str),
            reading
        );
    }
}

pub fn replay(config: &Config, a: ReplayArgs) -> Result<(), Failure> {
    let dirs = thread_dirs(&a.threads)?;
    let labels = if a.labels.is_empty() {
        Vec::new()
    } else {
        crate::app::eval::load(&a.labels).map_err(|e| Failure::usage(anyhow::anyhow!("{e}")))?
    };
    let labelled = by_folder(&labels);
    let folds = match a.folds {
        Some(k) => Some(FoldConfigs::new(
            config,
            &labels,
            &a.train_with,
            usize::from(k),
        )?),
        None => None,
    };
    // The reports of every thread given, as a daemon that followed the
    // lists would know them: whom the robot copies on them is its people.
    let reports = crate::flows::robot::report_recipients(&dirs);
    if !a.json && config.file.track.learn_people {
        say_the_robots_people(&reports);
    }
    let mut judged: Vec<crate::app::eval::ThreadRead> = Vec::new();
    let mut states: BTreeMap<String, usize> = BTreeMap::new();
    // A kept state is opened once for every thread: a database just
    // closed can still be locked by its last flush when opened again.
    let kept = match &a.state {
        Some(s) => Some(crate::store::Store::open(s)?),
        None => None,
    };
    for (n, dir) in dirs.iter().enumerate() {
        let mine = dir.canonicalize().ok().and_then(|d| labelled.get(&d));
        let c = folds.as_ref().map_or(config, |f| f.of(mine));
        let r = replay_thread(c, kept.as_ref().zip(a.state.as_deref()), n, dir, &reports)?;
        *states
            .entry(
                r.final_state
                    .map_or("no case", CaseState::as_str)
                    .to_string(),
            )
            .or_default() += 1;
        let verdict =
            mine.map(|mine| crate::app::eval::judge_thread(&r.thread, mine, r.final_state));
        if a.json {
            let j = Judged {
                replay: &r,
                judged: verdict.as_ref(),
            };
            println!("{}", serde_json::to_string(&j)?);
        } else {
            print_replay(&r, verdict.as_ref());
        }
        judged.extend(verdict);
    }
    if !a.json {
        let summary: Vec<String> = states.iter().map(|(s, n)| format!("{s} {n}")).collect();
        let threads = crate::model::counted(dirs.len(), "thread", "threads");
        println!("{threads}: {}", summary.join(", "));
        if !a.labels.is_empty() {
            print!("{}", crate::app::eval::render_threads(&judged));
        }
    }
    Ok(())
}

/// Whom each robot copies on its reports, as `replay` learnt it.
fn say_the_robots_people(reports: &crate::reply::policy::people::RobotPeople) {
    for (org, n, people) in reports.robots() {
        if !people.is_empty() {
            let people: Vec<&str> = people.iter().map(|p| p.as_str()).collect();
            println!(
                "the robot's people at {org}, from {n} of its reports: {}",
                people.join(", ")
            );
        }
    }
}

/// Replay the `n`th thread folder into the `kept` store (and its state
/// directory), or into a scratch one of its own, removed afterwards.
fn replay_thread(
    config: &Config,
    kept: Option<(&crate::store::Store, &std::path::Path)>,
    n: usize,
    dir: &std::path::Path,
    reports: &crate::reply::policy::people::RobotPeople,
) -> Result<crate::flows::robot::Replay, Failure> {
    let (state_dir, _scratch) = match kept {
        Some((_, s)) => (s.to_path_buf(), None),
        None => {
            let s = std::env::temp_dir().join(format!("perfbot-replay-{}-{n}", std::process::id()));
            (s.clone(), Some(Scratch(s)))
        }
    };
    let mut c = config.clone();
    c.file.bot.state_dir = state_dir.clone();
    let scratch_store;
    let store = match kept {
        Some((s, _)) => s,
        None => {
            scratch_store = crate::store::Store::open(&state_dir)?;
            &scratch_store
        }
    };
    Ok(crate::flows::robot::replay(&c, store, dir, reports).map_err(|e| anyhow::anyhow!("{e}"))?)
}
