//! `perfbot check`: what `perfbot run` would start with, checked without
//! running it — the config and its templates, the state database, where
//! mail goes and whom it reaches, and (unless `--offline`) that the mail
//! servers answer and take perfbot's login. Exit 1 when a check fails.

use std::fmt;

use anyhow::anyhow;

use super::{lock_wait, runtime, Failure};
use crate::config::{Config, InboundSource, TransportKind};
use crate::flows::delivery::Transport;
use crate::store::{Store, StoreError};

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Connect to no mail server: check only what the config and the state
    /// say.
    #[arg(long)]
    pub offline: bool,
    /// Print the findings as JSON (`level`, `what`, `text` each).
    #[arg(long)]
    pub json: bool,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
enum Level {
    Ok,
    /// Works, but an operator should know (an old template copy, sending
    /// stopped).
    Warn,
    Fail,
    /// The config cannot work at all (`run` refuses to start: exit 2).
    Unusable,
}

/// One line of `perfbot check`.
#[derive(Debug, serde::Serialize)]
struct Finding {
    level: Level,
    what: &'static str,
    text: String,
}

impl Finding {
    fn new(level: Level, what: &'static str, text: impl Into<String>) -> Finding {
        Finding {
            level,
            what,
            text: text.into(),
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            Level::Ok => "ok  ",
            Level::Warn => "warn",
            Level::Fail | Level::Unusable => "FAIL",
        };
        write!(f, "{level}  {}: {}", self.what, self.text)
    }
}

/// `check --json`.
#[derive(serde::Serialize)]
struct Checked<'a> {
    config: &'a str,
    findings: &'a [Finding],
}

pub fn run(config: &Config, a: CheckArgs) -> Result<(), Failure> {
    let mut found = templates(config);
    found.push(state(config));
    // The SMTP pool is made and dropped with the runtime entered.
    {
        let rt = runtime()?;
        let _entered = rt.enter();
        found.push(match Transport::from_config(config) {
            Ok(t) => sending(&rt, &t, a.offline),
            Err(e) => Finding::new(Level::Unusable, "sending", e.to_string()),
        });
    }
    found.extend(stops(config));
    found.push(recipients(config));
    found.push(
        reading(config, a.offline)
            .unwrap_or_else(|e| Finding::new(Level::Unusable, "reading", e.to_string())),
    );
    found.push(dashboard(config));
    if a.json {
        let v = Checked {
            config: &config.source,
            findings: &found,
        };
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("perfbot check: config {}", config.source);
        for f in &found {
            println!("{f}");
        }
    }
    // A transport or mail source that cannot work as configured is a usage
    // error (exit 2), as `perfbot run` makes it; a server that refuses, 1.
    let failed = |l: Level| found.iter().filter(|f| f.level == l).count();
    let (unusable, failed) = (failed(Level::Unusable), failed(Level::Fail));
    let why = anyhow!("{} of {} checks failed", unusable + failed, found.len());
    match (unusable, failed) {
        (0, 0) => Ok(()),
        (0, _) => Err(why.into()),
        _ => Err(Failure::usage(why)),
    }
}

/// The templates compiled when the config was read; an old copy of one in
/// use is named (`Config::template_drift`).
fn templates(config: &Config) -> Vec<Finding> {
    let drift = config.template_drift();
    let mut out = vec![Finding::new(
        Level::Ok,
        "templates",
        format!(
            "report template {:?} and the mail templates compile ({})",
            config.file.report.template,
            config.templates_dir().display()
        ),
    )];
    out.extend(
        drift
            .iter()
            .map(|d| Finding::new(Level::Warn, "templates", d.to_string())),
    );
    out
}

/// The state database opens (its schema, marker and generation agree), or
/// is held by the daemon, or is not made yet.
fn state(config: &Config) -> Finding {
    let dir = config.state_dir();
    if !Store::exists(&dir) {
        let text = format!(
            "{}: no database yet (the first report or ingest makes it)",
            dir.display()
        );
        return Finding::new(Level::Ok, "state", text);
    }
    match Store::open_waiting(&dir, lock_wait(config)) {
        Ok(store) => match summary(&store) {
            Ok(s) => Finding::new(Level::Ok, "state", format!("{}: {s}", dir.display())),
            Err(e) => Finding::new(Level::Fail, "state", e.to_string()),
        },
        Err(StoreError::Locked { .. }) => Finding::new(
            Level::Ok,
            "state",
            format!(
                "{}: held by a running `perfbot run` (its /healthz counts)",
                dir.display()
            ),
        ),
        Err(e) => Finding::new(Level::Fail, "state", e.to_string()),
    }
}

/// What the database holds, in a few words.
fn summary(store: &Store) -> Result<String, StoreError> {
    use crate::model::OutboxState;
    let cases = store.cases()?;
    let open = cases.iter().filter(|c| !c.state.is_closed()).count();
    let outbox = store.outbox_entries()?;
    let stuck = |s: OutboxState| outbox.iter().filter(|e| e.state == s).count();
    let quarantined = store.quarantined()?.len();
    Ok(format!(
        "{} cases ({open} open); outbox {} mails ({} held, {} failed, {} dead); {quarantined} quarantined",
        cases.len(),
        outbox.len(),
        stuck(OutboxState::Held),
        stuck(OutboxState::Failed),
        stuck(OutboxState::Dead),
    ))
}

/// Where mail goes; over SMTP, that the server answers and takes the
/// login (EHLO, TLS as configured, AUTH, NOOP).
fn sending(rt: &tokio::runtime::Runtime, t: &Transport, offline: bool) -> Finding {
    let where_ = t.describe();
    let Transport::Smtp(s) = t else {
        return Finding::new(Level::Ok, "sending", format!("{where_} (no mail server)"));
    };
    if offline {
        return Finding::new(
            Level::Ok,
            "sending",
            format!("{where_} (not tried: --offline)"),
        );
    }
    match rt.block_on(s.reachable()) {
        Ok(()) => Finding::new(
            Level::Ok,
            "sending",
            format!("{where_} answers and takes the login"),
        ),
        Err(why) => Finding::new(Level::Fail, "sending", format!("{where_}: {why}")),
    }
}

/// Sending stopped on purpose (`outbound.emergency_stop`, the stop file).
fn stops(config: &Config) -> Option<Finding> {
    crate::mail::guard::stop_reason(config)
        .map(|why| Finding::new(Level::Warn, "sending", format!("stopped: {why}")))
}

/// Whom reports reach beyond the commit's people: the lists copied, a
/// redirect, moderation.
fn recipients(config: &Config) -> Finding {
    let o = &config.file.outbound;
    let text = if o.transport != TransportKind::Smtp {
        "nobody is mailed: the mail is written, not sent".to_string()
    } else if let Some(to) = &o.redirect_all_to {
        format!("every mail goes to {to} only (outbound.redirect_all_to)")
    } else {
        let cc = &config.file.report.cc;
        let lists = match cc.is_empty() {
            true => "no list copied (report.cc)".to_string(),
            false => format!("copied to {}", cc.join(", ")),
        };
        let held = match o.moderation {
            true => "held until `perfbot outbox approve` (outbound.moderation)",
            false => "sent without approval",
        };
        format!("reports go to each commit's people, {lists}; {held}")
    };
    Finding::new(Level::Ok, "recipients", text)
}

/// Where replies are read from; over IMAP, that the server takes the login
/// and has the mailbox.
fn reading(config: &Config, offline: bool) -> Result<Finding, crate::config::ConfigError> {
    let text = match config.file.inbound.source {
        InboundSource::None => "nothing (inbound.source = none)".to_string(),
        InboundSource::Maildir => {
            let dir = config.maildir();
            let made = match dir.join("new").is_dir() {
                true => "",
                false => " (made when first read)",
            };
            format!("maildir {}{made}", dir.display())
        }
        InboundSource::Imap => {
            let account = crate::flows::ingest::imap_source::account(config)?;
            let mailbox = &config.file.imap.mailbox;
            let at = format!("IMAP {} mailbox {mailbox}", config.file.imap.url);
            if offline {
                format!("{at} (not tried: --offline)")
            } else if let Err(why) = crate::mail::imap::can_read(&account, mailbox) {
                return Ok(Finding::new(Level::Fail, "reading", format!("{at}: {why}")));
            } else {
                format!("{at}: logged in, the mailbox is there")
            }
        }
    };
    Ok(Finding::new(Level::Ok, "reading", text))
}

/// The dashboard's address: free to listen on, or the running daemon's.
/// Taken by another program, `run` could not start.
fn dashboard(config: &Config) -> Finding {
    let web = &config.file.web;
    if !web.enabled {
        return Finding::new(Level::Ok, "dashboard", "off (web.enabled = false)");
    }
    let at = format!("http://{}/", web.listen);
    if crate::store::daemon_running(&config.state_dir()) {
        return Finding::new(
            Level::Ok,
            "dashboard",
            format!("{at} (the running daemon's)"),
        );
    }
    match std::net::TcpListener::bind(web.listen) {
        Ok(_) => Finding::new(Level::Ok, "dashboard", format!("{at}: the address is free")),
        Err(e) => Finding::new(Level::Fail, "dashboard", format!("{at}: web.listen: {e}")),
    }
}
