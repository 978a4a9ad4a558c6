//! `config.toml`: one file for the whole bot, validated at start-up.
//!
//! Paths in it are relative to the directory of the config file. Every section
//! has defaults, so an empty file is a working (file-outbox, maildir) config.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::compare::rules::{DirectionEntry, DirectionTable, RulesError, SelectionRules};
use crate::model::Address;
use crate::reply::policy::trust::Role;
use crate::reply::Intent;

/// The longest a mail server may take over one exchange (`smtp.timeout_secs`,
/// `imap.timeout_secs`).
pub const MAX_TIMEOUT_SECS: u64 = 3600;

/// The repository's default config, built in so that the binary runs anywhere.
pub const DEFAULT_CONFIG: &str = include_str!("../config.toml");

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    /// A rule overridden in `section` (`[compare.selection]`, `[[direction]]`)
    /// is wrong. Not the error's source: its words are in the message.
    #[error("{path}: {section}: {why}")]
    Rules {
        path: String,
        section: &'static str,
        why: RulesError,
    },
}

pub use crate::report::settings::{BotSection, ReportKind, ReportSection};

/// Where mail goes (`outbound.transport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    /// `.eml` files in `outbound.outbox_dir` (the default: no mail server needed).
    File,
    Smtp,
    /// Printed, one mail after another.
    Stdout,
}

/// Where replies are read from (`inbound.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InboundSource {
    Maildir,
    Imap,
    None,
}

/// The learned intent model (`reply.model`): `builtin`, `none`, or a path.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "String")]
pub enum ModelChoice {
    Builtin,
    None,
    File(PathBuf),
}

impl From<String> for ModelChoice {
    fn from(s: String) -> Self {
        match s.as_str() {
            "builtin" => ModelChoice::Builtin,
            "none" => ModelChoice::None,
            _ => ModelChoice::File(s.into()),
        }
    }
}

/// A list of addresses, each checked (`Name <addr>` is read as `addr`).
fn addresses<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Address>, D::Error> {
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|a| {
            Address::parse(a)
                .ok_or_else(|| serde::de::Error::custom(format!("{a:?} is not an e-mail address")))
        })
        .collect()
}

/// A list of recipients as written (`Name <addr>` kept for the To header),
/// each checked to hold an address.
fn mailboxes<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let v = Vec::<String>::deserialize(d)?;
    match v.iter().find(|a| Address::parse(a).is_none()) {
        Some(a) => Err(serde::de::Error::custom(format!(
            "{a:?} is not an e-mail address"
        ))),
        None => Ok(v),
    }
}

/// One address.
fn address<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Address, D::Error> {
    let s = String::deserialize(d)?;
    Address::parse(&s)
        .ok_or_else(|| serde::de::Error::custom(format!("{s:?} is not an e-mail address")))
}

/// One address, or the empty string for none.
fn optional_address<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Address>, D::Error> {
    let s = String::deserialize(d)?;
    if s.trim().is_empty() {
        return Ok(None);
    }
    Address::parse(&s)
        .map(Some)
        .ok_or_else(|| serde::de::Error::custom(format!("{s:?} is not an e-mail address")))
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CompareSection {
    /// Overrides of `bot/rules/selection.toml`, key by key.
    pub selection: Option<toml::Table>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutboundSection {
    /// `file` (the default: `.eml` files in `outbox_dir`), `smtp` or `stdout`.
    pub transport: TransportKind,
    /// Relative to the config file; left out, `outbox` under `state_dir`.
    pub outbox_dir: PathBuf,
    /// Staging: every envelope goes to this one address instead (headers unchanged,
    /// an `X-Perfbot-Redirected` header says so).
    #[serde(deserialize_with = "optional_address")]
    pub redirect_all_to: Option<Address>,
    /// Most recipients (To + Cc) one mail may have; Cc beyond it is dropped.
    pub max_recipients: usize,
    /// Rate limits over all mail perfbot sends (0 = no limit).
    pub max_per_hour: u32,
    pub max_per_day: u32,
    /// The share of those limits that mail other than reports (escalations,
    /// acks, reminders, digests, notes) may use: the rest is kept for
    /// reports, so that a flood of replies never holds a report back.
    pub followups_per_hour: u32,
    pub followups_per_day: u32,
    /// Halt all sending (mail is still recorded and queued).
    pub emergency_stop: bool,
    /// The same, by creating this file (relative to the config file).
    /// Relative to the config file; left out, `STOP` under `state_dir`.
    pub stop_file: PathBuf,
    /// Hold new reports until `perfbot outbox approve`.
    pub moderation: bool,
    /// Attempts before a mail is given up as dead.
    pub max_attempts: u32,
    /// First retry delay; doubled per attempt up to `retry_max_secs`.
    pub retry_base_secs: u64,
    pub retry_max_secs: u64,
    /// Mails sent over SMTP at once (and pooled connections).
    pub concurrency: usize,
    /// Addresses that never get mail (joined with `perfbot optout add`).
    #[serde(deserialize_with = "addresses")]
    pub optout: Vec<Address>,
}

impl Default for OutboundSection {
    fn default() -> Self {
        OutboundSection {
            transport: TransportKind::File,
            outbox_dir: PathBuf::new(),
            redirect_all_to: None,
            max_recipients: 60,
            max_per_hour: 60,
            max_per_day: 500,
            followups_per_hour: 20,
            followups_per_day: 200,
            emergency_stop: false,
            stop_file: PathBuf::new(),
            moderation: false,
            max_attempts: 8,
            retry_base_secs: 60,
            retry_max_secs: 6 * 3600,
            concurrency: 4,
            optout: Vec::new(),
        }
    }
}

/// A password: read from the environment or a file, never printed.
#[derive(Clone, Default)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: String) -> Self {
        Secret(s)
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_empty() {
            "(none)"
        } else {
            "(redacted)"
        })
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SmtpSection {
    /// `smtp://host:port` (STARTTLS; plain allowed only on loopback when the server
    /// offers no STARTTLS), `smtp://…?tls=required|none`, or `smtps://host:port`.
    pub url: String,
    pub user: String,
    /// File holding the password; `PERFBOT_SMTP_PASSWORD` wins over it.
    pub password_file: PathBuf,
    /// PEM file of a private CA to trust besides the public roots.
    pub ca_file: PathBuf,
    pub timeout_secs: u64,
    /// Envelope sender (MAIL FROM); `bot.email` when empty.
    #[serde(deserialize_with = "optional_address")]
    pub envelope_from: Option<Address>,
    /// Name sent in EHLO; the host name when empty.
    pub helo_name: String,
}

impl Default for SmtpSection {
    fn default() -> Self {
        SmtpSection {
            url: "smtp://127.0.0.1:25".into(),
            user: String::new(),
            password_file: PathBuf::new(),
            ca_file: PathBuf::new(),
            timeout_secs: 30,
            envelope_from: None,
            helo_name: String::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InboundSection {
    /// `maildir` (the default), `imap`, or `none`.
    pub source: InboundSource,
    /// Relative to the config file; left out, `inbox` under `state_dir`.
    pub maildir: PathBuf,
    /// Messages bigger than this are matched by their headers only.
    pub max_message_bytes: usize,
    /// More MIME parts than this and a message is quarantined.
    pub max_mime_parts: usize,
    /// References kept per message (the first ten and the most recent).
    pub max_references: usize,
    /// Text kept of a reply's body.
    pub max_text_bytes: usize,
    /// Addresses or name fragments of robots besides the built-in list.
    pub robots: Vec<String>,
    /// Replies that may answer a tracked robot's report not read yet are
    /// held this many days for it, at most `max_held` of them; so are the
    /// early replies below.
    pub hold_days: u32,
    pub max_held: usize,
    /// Replies about no case, kept up to this many bytes (the oldest go
    /// first; in memory, and saved for the next run) and read again when
    /// the message they answer joins a case's thread: read before it, they
    /// would be lost.
    pub early_replies_bytes: usize,
}

/// The least `inbound.max_text_bytes`: a short reply, whole.
const MIN_TEXT_BYTES: usize = 1 << 10;

impl Default for InboundSection {
    fn default() -> Self {
        InboundSection {
            source: InboundSource::Maildir,
            maildir: PathBuf::new(),
            max_message_bytes: 16 << 20,
            max_mime_parts: 200,
            max_references: 200,
            max_text_bytes: 64 << 10,
            robots: Vec::new(),
            hold_days: 30,
            max_held: 10_000,
            early_replies_bytes: 16 << 20,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImapSection {
    /// `imap://host:port` (STARTTLS; plain text only on loopback when the server
    /// offers no STARTTLS), `?tls=required|none`, or `imaps://host:port`.
    pub url: String,
    pub user: String,
    /// File holding the password; `PERFBOT_IMAP_PASSWORD` wins over it.
    pub password_file: PathBuf,
    pub ca_file: PathBuf,
    pub mailbox: String,
    /// Wait for new mail with IDLE when the server offers it.
    pub idle: bool,
    /// Poll interval without IDLE, and the longest IDLE before a re-check
    /// (at most 29 minutes: `IDLE_ROUND`).
    pub poll_secs: u64,
    pub timeout_secs: u64,
    /// Messages fetched per round trip.
    pub batch: usize,
}

impl Default for ImapSection {
    fn default() -> Self {
        ImapSection {
            url: "imap://127.0.0.1:143".into(),
            user: String::new(),
            password_file: PathBuf::new(),
            ca_file: PathBuf::new(),
            mailbox: "INBOX".into(),
            idle: true,
            poll_secs: 300,
            timeout_secs: 30,
            batch: 200,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConfigFile {
    pub bot: BotSection,
    pub report: ReportSection,
    pub compare: CompareSection,
    /// Extra metric directions, consulted before the built-in table.
    pub direction: Vec<DirectionEntry>,
    pub outbound: OutboundSection,
    pub smtp: SmtpSection,
    pub inbound: InboundSection,
    pub imap: ImapSection,
    pub reply: ReplySection,
    pub trust: TrustSection,
    pub acks: AcksSection,
    pub escalation: EscalationSection,
    pub digest: DigestSection,
    pub reminders: RemindersSection,
    pub review: ReviewSection,
    pub web: WebSection,
    pub run: RunSection,
    pub track: TrackSection,
    pub noise: NoiseSection,
    pub regzbot: RegzbotSection,
    pub lists: ListsSection,
}

/// `[lists]`: the opt-in policy file (see `model::list_policy`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ListsSection {
    /// A policy file kept in git (`policy.toml`, relative to the config).
    /// Empty: no policies, reports go where their input says.
    pub policy_file: PathBuf,
}

/// `[regzbot]`: hand real regressions to regzbot, the kernel's regression
/// tracker (Documentation/admin-guide/reporting-regressions.rst and
/// handling-regressions.rst): off, and for no list, unless configured.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RegzbotSection {
    pub enabled: bool,
    /// Only reports sent to one of these lists (To or Cc): the lists whose
    /// maintainers want regzbot to track what perfbot finds.
    pub lists: Vec<String>,
    /// Trees regressions are tracked for: mainline and next.
    pub trees: Vec<String>,
    /// The smallest headline change (percent, either sign) handed over.
    pub min_change_percent: f64,
    /// Broad benchmarks only (testcase names); any when empty.
    pub testcases: Vec<String>,
    /// Copied on the reports handed over.
    #[serde(deserialize_with = "address")]
    pub cc: Address,
}

impl Default for RegzbotSection {
    fn default() -> Self {
        RegzbotSection {
            enabled: false,
            lists: Vec::new(),
            trees: vec!["linus".into(), "linux-next".into()],
            min_change_percent: 5.0,
            testcases: Vec::new(),
            cc: Address::parse("regressions@lists.linux.dev").expect("an address"),
        }
    }
}

/// `[noise]`: the gate before a report goes out (see `compare::noise`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NoiseSection {
    /// Hold a report whose headline change is within the runs' scatter.
    pub enabled: bool,
    pub resamples: usize,
    /// Two-sided confidence level of the interval.
    pub level: f64,
    pub seed: u64,
}

impl Default for NoiseSection {
    fn default() -> Self {
        let b = crate::compare::noise::Bootstrap::default();
        NoiseSection {
            enabled: true,
            resamples: b.resamples,
            level: b.level,
            seed: b.seed,
        }
    }
}

impl NoiseSection {
    pub fn bootstrap(&self) -> crate::compare::noise::Bootstrap {
        crate::compare::noise::Bootstrap {
            resamples: self.resamples,
            level: self.level,
            seed: self.seed,
        }
    }
}

/// `[track]`: other robots' reports to follow as cases (adopted), as read
/// from the lists. Off unless `senders` say whose.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrackSection {
    /// Sender addresses of the reports (`oliver.sang@intel.com`, `lkp@intel.com`).
    #[serde(deserialize_with = "addresses")]
    pub senders: Vec<Address>,
    /// Sender display names (`kernel test robot`), matched exactly; they only
    /// narrow `senders` (a report is adopted by its address, never by a name).
    pub names: Vec<String>,
    /// Only reports sent to one of these lists (To, Cc or List-Id); any when empty.
    pub lists: Vec<String>,
    /// Remind on adopted cases too (off: the robot's reports are not ours to chase).
    pub remind: bool,
    /// The robot's people who answer in its threads under their own names,
    /// beyond those learnt from its reports (whom it copies on them): read
    /// as its operators on its adopted cases.
    #[serde(deserialize_with = "addresses")]
    pub people: Vec<Address>,
    /// Learn the robot's people from whom its reports copy (at its own mail
    /// domain, on one report in ten). Off for a robot that sends from a
    /// public mail domain, where that says nothing: name them in `people`.
    pub learn_people: bool,
}

impl Default for TrackSection {
    fn default() -> Self {
        TrackSection {
            senders: Vec::new(),
            names: Vec::new(),
            lists: Vec::new(),
            remind: false,
            people: Vec::new(),
            learn_people: true,
        }
    }
}

impl TrackSection {
    pub fn enabled(&self) -> bool {
        !self.senders.is_empty() || !self.names.is_empty()
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DigestSection {
    /// awaiting-revert / awaiting-fix longer than this is overdue.
    pub awaiting_days: i64,
    /// A report with no reply for longer than this is overdue.
    pub no_reply_days: i64,
    /// The daemon mails the digest every this many hours (0: never).
    pub every_hours: u64,
    /// Recipients; the operators when empty.
    #[serde(deserialize_with = "mailboxes")]
    pub to: Vec<String>,
    pub template: String,
}

impl Default for DigestSection {
    fn default() -> Self {
        DigestSection {
            awaiting_days: 14,
            no_reply_days: 7,
            every_hours: 0,
            to: Vec::new(),
            template: "digest".into(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RemindersSection {
    pub enabled: bool,
    /// A report with no reply after this many days gets a polite ping.
    pub no_reply_days: i64,
    /// awaiting-revert with no revert seen after this many days gets a ping.
    pub awaiting_revert_days: i64,
    /// awaiting-fix (a fix posted, not seen applied) after this many days
    /// gets a ping.
    pub awaiting_fix_days: i64,
    /// At most this many pings per case.
    pub max_pings: u32,
    /// An open case with no activity for this many days becomes stale (0: never).
    pub stale_days: i64,
    pub template: String,
}

impl Default for RemindersSection {
    fn default() -> Self {
        RemindersSection {
            enabled: false,
            no_reply_days: 7,
            awaiting_revert_days: 14,
            awaiting_fix_days: 21,
            max_pings: 2,
            stale_days: 90,
            template: "reminder".into(),
        }
    }
}

/// `[review]`: an open case whose thread went quiet after words that may
/// carry a decision perfbot did not act on goes to a human (`flows::review`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReviewSection {
    pub enabled: bool,
    /// Days without a message in the thread before a case is reviewed.
    pub quiet_days: i64,
    /// How surely a reply must read as a decision (its reading or a second
    /// reading) to be worth a human's look.
    pub min_signal: f64,
}

impl Default for ReviewSection {
    fn default() -> Self {
        ReviewSection {
            enabled: true,
            quiet_days: 14,
            min_signal: 0.2,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebSection {
    pub enabled: bool,
    /// Read-only dashboard; loopback by default. An IP address and port
    /// (`127.0.0.1:8080`, `[::1]:8080`), checked when the config is read.
    pub listen: std::net::SocketAddr,
    pub templates_dir: PathBuf,
    /// A file holding the token an operator types to settle a case on the
    /// dashboard (or `PERFBOT_WEB_TOKEN`); empty and unset: the dashboard
    /// only reads.
    pub operator_token_file: PathBuf,
}

impl Default for WebSection {
    fn default() -> Self {
        WebSection {
            enabled: true,
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], 8080)),
            templates_dir: "templates/web".into(),
            operator_token_file: PathBuf::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Report inputs dropped here are queued by the daemon (then moved to
    /// `done/` or `failed/`), since the CLI cannot open the database it holds.
    /// Relative to the config file; left out, `spool` under `state_dir`.
    pub spool_dir: PathBuf,
    /// Delivery loop period.
    pub send_every_secs: u64,
    /// Maildir and spool poll period.
    pub poll_every_secs: u64,
    /// Scheduler (reminders, digest) period.
    pub schedule_every_secs: u64,
    /// How long a command waits for another perfbot command to release the
    /// state database before it gives up (exit 1). The daemon's hold is told
    /// at once instead.
    pub lock_wait_secs: u64,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            spool_dir: PathBuf::new(),
            send_every_secs: 30,
            poll_every_secs: 2,
            schedule_every_secs: 3600,
            lock_wait_secs: 60,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrustSection {
    /// perfbot's operators: they may always decide, and get escalations.
    #[serde(deserialize_with = "mailboxes")]
    pub operators: Vec<String>,
    /// Maintainers' addresses, besides those of `maintainers_file`.
    #[serde(deserialize_with = "addresses")]
    pub maintainers: Vec<Address>,
    /// A kernel MAINTAINERS file: every `M:` address is a maintainer.
    pub maintainers_file: PathBuf,
    /// A `.mailmap` (the kernel's own): a person's other addresses speak
    /// with the role of the address they map to.
    pub mailmap_file: PathBuf,
    /// Roles whose prose may move a case (author, committer, maintainer,
    /// operator, other).
    pub free_text: Vec<Role>,
    /// Roles whose `#perfbot` commands are obeyed.
    pub commands: Vec<Role>,
    /// Decisions read with less confidence go to a human.
    pub min_confidence: f64,
    /// A fix or a revert awaited (states that close nothing) may follow
    /// the words of anyone, `other` included, not only `free_text` roles';
    /// closures never do. A stranger's words move a case only where they
    /// carry that one decision (a mail full of decision words goes to a
    /// human), and never from a sender whose DKIM signature fails.
    pub open_moves_by_anyone: bool,
    /// A sender with the display name and the mailbox name (before the `@`)
    /// of the report's author, committer or a recipient, at another domain,
    /// is that person: developers answer from other addresses than their
    /// commits' (`fdmanana@kernel.org` for `fdmanana@suse.com`). A sender
    /// with no display name is matched where the mailbox spells the name
    /// (`trust::same_name_elsewhere`). Never where
    /// decisions need DKIM (`require_dkim`): anyone can sign for a domain of
    /// their own. Without DKIM, a From header is taken at its word anyway.
    pub same_name_addresses: bool,
    /// Verify replies' DKIM signatures; a failing one lowers the sender's trust.
    pub dkim: bool,
    /// Decisions (by prose or command) need a DKIM signature that verifies and
    /// aligns with the From domain; others go to a human. Defaults to `dkim`:
    /// once signatures are checked, an unsigned or foreign-signed decision is
    /// not believed; `false` only distrusts signatures that fail.
    pub require_dkim: Option<bool>,
    /// DKIM keys known without DNS: `"sel._domainkey.example.org" = "v=DKIM1; k=…; p=…"`.
    pub dkim_keys: std::collections::HashMap<String, String>,
}

impl Default for TrustSection {
    fn default() -> Self {
        let roles = vec![
            Role::Author,
            Role::Committer,
            Role::Maintainer,
            Role::Operator,
        ];
        TrustSection {
            operators: Vec::new(),
            maintainers: Vec::new(),
            maintainers_file: PathBuf::new(),
            mailmap_file: PathBuf::new(),
            free_text: roles.clone(),
            commands: roles,
            min_confidence: 0.6,
            open_moves_by_anyone: true,
            same_name_addresses: true,
            dkim: false,
            require_dkim: None,
            dkim_keys: std::collections::HashMap::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AcksSection {
    /// Send a short in-thread acknowledgement of a settled decision.
    pub enabled: bool,
    /// For which decisions.
    pub intents: Vec<Intent>,
    /// Template name in `templates/` (or a path to a `.hbs`).
    pub template: String,
}

impl Default for AcksSection {
    fn default() -> Self {
        AcksSection {
            enabled: false,
            intents: vec![Intent::NotARegression, Intent::WillRevert, Intent::WontFix],
            template: "ack".into(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EscalationSection {
    /// Who gets "needs a human" mail; `trust.operators` when empty.
    #[serde(deserialize_with = "mailboxes")]
    pub to: Vec<String>,
    pub template: String,
    /// At most one escalation mail per case in this many hours; later needs
    /// of the same case are recorded and listed by the digest (0 = a mail
    /// every time).
    pub per_case_hours: u32,
}

impl Default for EscalationSection {
    fn default() -> Self {
        EscalationSection {
            to: Vec::new(),
            template: "escalation".into(),
            per_case_hours: 24,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplySection {
    /// Extra intent rules, or replacements of built-in ones by id
    /// (format of `bot/rules/intents.toml`).
    pub rule: Vec<crate::reply::understand::rules::RuleSpec>,
    /// Automatic answers (acks, command errors) one sender gets per hour at
    /// most; more bad commands are recorded and not answered.
    pub max_answers_per_sender_hour: usize,
    /// The learned intent model: `builtin` (trained on the labelled real
    /// replies, `bot/rules/intents.model`), `none` (rules alone), or the
    /// path of a weights file written by `perfbot train-intents`.
    pub model: ModelChoice,
}

impl Default for ReplySection {
    fn default() -> Self {
        ReplySection {
            rule: Vec::new(),
            max_answers_per_sender_hour: 3,
            model: ModelChoice::Builtin,
        }
    }
}

/// The validated configuration, with paths resolved and rules compiled.
#[derive(Debug, Clone)]
pub struct Config {
    pub source: String,
    pub file: ConfigFile,
    pub base_dir: PathBuf,
    pub selection: SelectionRules,
    pub directions: DirectionTable,
    /// Compiled at start-up only when the config changes them; the built-in
    /// rules compile on first use (most commands never classify).
    intent_rules: Option<crate::reply::understand::rules::Rules>,
    /// A model from a file (`reply.model` = path); the built-in one loads on
    /// first use.
    intent_model: Option<std::sync::Arc<crate::reply::understand::Model>>,
    /// The reply policy: who may decide, and each handler's section.
    pub reply: crate::reply::policy::ReplyPolicy,
    /// The lists' mail policies (`lists.policy_file`), checked at start-up.
    pub lists: Option<crate::model::list_policy::ListPolicies>,
}

impl Config {
    /// What building a report reads of this config.
    pub fn report_setup(&self) -> crate::report::settings::Setup<'_> {
        crate::report::settings::Setup {
            bot: &self.file.bot,
            report: &self.file.report,
            selection: &self.selection,
            directions: &self.directions,
        }
    }

    /// Load `path`, or the built-in default when `path` is `None`.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        match path {
            Some(p) => {
                let text = read_file(p).map_err(|message| ConfigError::Invalid {
                    path: p.display().to_string(),
                    message,
                })?;
                let dir = p.parent().map(Path::to_path_buf).unwrap_or_default();
                let dir = if dir.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    dir
                };
                Self::parse(&text, &p.display().to_string(), dir)
            }
            None => Self::parse(DEFAULT_CONFIG, "(built-in config.toml)", PathBuf::from(".")),
        }
    }

    pub fn parse(text: &str, source: &str, base_dir: PathBuf) -> Result<Config, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: source.to_string(),
            message,
        };
        // Serde checks every closed choice (transport, source, charset, kinds,
        // roles, intents, addresses) and names the key; `validate` the rest.
        let file: ConfigFile =
            toml::from_str(text).map_err(|e| invalid(e.to_string().trim().to_string()))?;
        file.validate().map_err(invalid)?;
        let rules = |section| {
            move |why| ConfigError::Rules {
                path: source.to_string(),
                section,
                why,
            }
        };
        let selection = SelectionRules::with_overrides(file.compare.selection.as_ref())
            .map_err(rules("[compare.selection]"))?;
        let directions =
            DirectionTable::with_overrides(&file.direction).map_err(rules("[[direction]]"))?;
        let intent_rules = if file.reply.rule.is_empty() {
            None
        } else {
            Some(
                crate::reply::understand::rules::Rules::with_overrides(&file.reply.rule)
                    .map_err(|e| invalid(format!("[[reply.rule]]: {e}")))?,
            )
        };
        let resolve = |p: &Path| resolved(&base_dir, p);
        let policy = trust_policy(&file.trust, &resolve).map_err(invalid)?;
        let intent_model = intent_model(&file.reply.model, &resolve).map_err(invalid)?;
        let lists = list_policies(&file.lists.policy_file, &resolve).map_err(invalid)?;
        check_templates(&file, &resolve(&file.report.templates_dir)).map_err(invalid)?;
        Ok(Config {
            source: source.to_string(),
            intent_rules,
            intent_model,
            reply: reply_policy(&file, policy),
            lists,
            file,
            base_dir,
            selection,
            directions,
        })
    }

    pub fn resolve(&self, p: &Path) -> PathBuf {
        resolved(&self.base_dir, p)
    }

    /// A directory the config names (relative to the config file), or, left
    /// out, `name` under the state directory: a config copied elsewhere with
    /// its own `state_dir` keeps all its files there.
    fn under_state(&self, set: &Path, name: &str) -> PathBuf {
        if set.as_os_str().is_empty() {
            self.state_dir().join(name)
        } else {
            self.resolve(set)
        }
    }

    pub fn state_dir(&self) -> PathBuf {
        self.resolve(&self.file.bot.state_dir)
    }

    pub fn outbox_dir(&self) -> PathBuf {
        self.under_state(&self.file.outbound.outbox_dir, "outbox")
    }

    /// The opt-outs listed in the config (the database has more).
    pub fn optout_addresses(&self) -> Vec<Address> {
        self.file.outbound.optout.clone()
    }

    pub fn stop_file(&self) -> PathBuf {
        self.under_state(&self.file.outbound.stop_file, "STOP")
    }

    pub fn maildir(&self) -> PathBuf {
        self.under_state(&self.file.inbound.maildir, "inbox")
    }

    /// The IMAP password: `PERFBOT_IMAP_PASSWORD`, else `imap.password_file`.
    pub fn imap_password(&self) -> Result<Secret, ConfigError> {
        secret("PERFBOT_IMAP_PASSWORD", &self.file.imap.password_file, self)
    }

    /// The learned intent model in force, if any (`reply.model`).
    pub fn intent_model(&self) -> Option<&crate::reply::understand::Model> {
        match self.file.reply.model {
            ModelChoice::None => None,
            ModelChoice::Builtin => crate::reply::understand::model::builtin(),
            ModelChoice::File(_) => self.intent_model.as_deref(),
        }
    }

    /// This config reading replies with `model` instead (a model trained
    /// apart, to measure it: `replay --folds`).
    pub fn with_intent_model(mut self, model: crate::reply::understand::Model) -> Config {
        self.file.reply.model = ModelChoice::File(PathBuf::from("(trained in memory)"));
        self.intent_model = Some(std::sync::Arc::new(model));
        self
    }

    /// The intent rules in force.
    pub fn intent_rules(&self) -> &crate::reply::understand::rules::Rules {
        self.intent_rules
            .as_ref()
            .unwrap_or_else(|| crate::reply::understand::rules::Rules::builtin())
    }

    pub fn spool_dir(&self) -> PathBuf {
        self.under_state(&self.file.run.spool_dir, "spool")
    }

    pub fn digest_thresholds(&self) -> crate::digest::Thresholds {
        crate::digest::Thresholds {
            awaiting_days: self.file.digest.awaiting_days,
            no_reply_days: self.file.digest.no_reply_days,
        }
    }

    /// Who gets the digest: `digest.to`, else the operators.
    pub fn digest_to(&self) -> Vec<String> {
        if self.file.digest.to.is_empty() {
            self.file.trust.operators.clone()
        } else {
            self.file.digest.to.clone()
        }
    }

    /// Decisions need an aligned DKIM pass (`trust.require_dkim`, default `trust.dkim`).
    pub fn require_dkim(&self) -> bool {
        self.reply.gate.require_verified
    }

    /// The dashboard's operator token: `PERFBOT_WEB_TOKEN`, else
    /// `web.operator_token_file` (empty: settling on the dashboard is off).
    pub fn web_token(&self) -> Result<Secret, ConfigError> {
        secret(
            "PERFBOT_WEB_TOKEN",
            &self.file.web.operator_token_file,
            self,
        )
    }

    /// The SMTP password: `PERFBOT_SMTP_PASSWORD`, else `smtp.password_file`.
    pub fn smtp_password(&self) -> Result<Secret, ConfigError> {
        secret("PERFBOT_SMTP_PASSWORD", &self.file.smtp.password_file, self)
    }

    /// Where the operator's own templates are (each falls back to the built-in copy).
    pub fn templates_dir(&self) -> PathBuf {
        self.resolve(&self.file.report.templates_dir)
    }

    /// The operator's copies of the built-in templates in use that never
    /// name a value the built-in one shows (`templates::drift`): most
    /// likely a section added since they were copied. `run` says so when
    /// it starts, `digest` when it renders one.
    pub fn template_drift(&self) -> Vec<crate::templates::Drift> {
        let dir = self.templates_dir();
        let f = &self.file;
        let report = &f.report.template;
        let mut names = vec![
            f.digest.template.clone(),
            f.reminders.template.clone(),
            f.acks.template.clone(),
            f.escalation.template.clone(),
            "command-error".to_string(),
        ];
        if !crate::templates::is_path(report) {
            names.extend([report.clone(), format!("{report}.subject")]);
        }
        let web = crate::templates::web_drift(&self.resolve(&f.web.templates_dir));
        names
            .iter()
            .filter_map(|n| crate::templates::drift(&crate::templates::path_of(&dir, n), n))
            .chain(web)
            .collect()
    }

    /// Render mail template `name` (from `templates_dir`, else built in).
    pub fn render_template(
        &self,
        name: &str,
        data: &impl serde::Serialize,
    ) -> Result<String, crate::templates::TemplateError> {
        crate::templates::render_named(&self.templates_dir(), name, data)
    }
}

/// `p` as the config means it: relative to the config file's directory.
fn resolved(base_dir: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base_dir.join(p)
    }
}

/// The intent model `reply.model` names: built in (`None` here), or
/// weights read from a file.
fn intent_model(
    choice: &ModelChoice,
    resolve: &dyn Fn(&Path) -> PathBuf,
) -> Result<Option<std::sync::Arc<crate::reply::understand::Model>>, String> {
    let ModelChoice::File(path) = choice else {
        return Ok(None);
    };
    let p = resolve(path);
    let why = |e: &dyn std::fmt::Display| format!("reply.model {}: {e}", p.display());
    let text = read_file(&p).map_err(|e| why(&e))?;
    let model = crate::reply::understand::Model::from_text(&text).map_err(|e| why(&e))?;
    Ok(Some(std::sync::Arc::new(model)))
}

/// The lists' opt-in policies, where `lists.policy_file` names a file.
fn list_policies(
    file: &Path,
    resolve: &dyn Fn(&Path) -> PathBuf,
) -> Result<Option<crate::model::list_policy::ListPolicies>, String> {
    if file.as_os_str().is_empty() {
        return Ok(None);
    }
    let p = resolve(file);
    let why = |e: &dyn std::fmt::Display| format!("lists.policy_file {}: {e}", p.display());
    let text = read_file(&p).map_err(|e| why(&e))?;
    let policies = crate::model::list_policy::ListPolicies::parse(&text).map_err(|e| why(&e))?;
    Ok(Some(policies))
}

/// Every template the configuration names is found and parses, so a broken
/// one is said when the config is read, not when a digest or a ping is due.
fn check_templates(file: &ConfigFile, templates_dir: &Path) -> Result<(), String> {
    crate::templates::check_report_template(templates_dir, &file.report.template)
        .map_err(|e| format!("report.template: {e}"))?;
    for (key, name) in [
        ("digest.template", file.digest.template.as_str()),
        ("reminders.template", &file.reminders.template),
        ("acks.template", &file.acks.template),
        ("escalation.template", &file.escalation.template),
        ("the command-error template", "command-error"),
    ] {
        crate::templates::check_mail_template(templates_dir, name)
            .map_err(|e| format!("{key}: {e}"))?;
    }
    Ok(())
}

/// The reply policy, from `[trust]`, `[reply]`, `[escalation]`, `[acks]`
/// and `[report]`.
fn reply_policy(
    file: &ConfigFile,
    trust: crate::reply::policy::trust::Policy,
) -> crate::reply::policy::ReplyPolicy {
    use crate::reply::policy::{AckPolicy, AnswerPolicy, EscalationPolicy, GatePolicy};
    crate::reply::policy::ReplyPolicy {
        trust,
        gate: GatePolicy {
            require_verified: file.trust.dkim && file.trust.require_dkim.unwrap_or(true),
        },
        answers: AnswerPolicy {
            max_per_sender_hour: file.reply.max_answers_per_sender_hour,
        },
        escalation: EscalationPolicy {
            to: if file.escalation.to.is_empty() {
                file.trust.operators.clone()
            } else {
                file.escalation.to.clone()
            },
        },
        acks: AckPolicy {
            enabled: file.acks.enabled,
            intents: file.acks.intents.clone(),
        },
        archive_url: file.report.archive_url.clone(),
        signature: file.report.signature.clone(),
    }
}

/// The trust policy of `[trust]`: addresses and roles are checked by serde,
/// the maintainers file is read here (`resolve` makes its path absolute).
fn trust_policy(
    t: &TrustSection,
    resolve: &dyn Fn(&Path) -> PathBuf,
) -> Result<crate::reply::policy::trust::Policy, String> {
    use crate::reply::policy::trust::{maintainers_from_file, Aliases, Policy};
    let mut maintainers: std::collections::HashSet<Address> =
        t.maintainers.iter().cloned().collect();
    if !t.maintainers_file.as_os_str().is_empty() {
        let p = resolve(&t.maintainers_file);
        let text =
            read_file(&p).map_err(|e| format!("trust.maintainers_file {}: {e}", p.display()))?;
        maintainers.extend(maintainers_from_file(&text));
    }
    let aliases = if t.mailmap_file.as_os_str().is_empty() {
        Aliases::default()
    } else {
        let p = resolve(&t.mailmap_file);
        let text = crate::fsutil::read_limited(&p, MAX_CONFIG_FILE_BYTES)
            .map_err(|e| format!("trust.mailmap_file {}: {e}", p.display()))?;
        Aliases::from_mailmap(&text)
            .map_err(|e| format!("trust.mailmap_file {}: {e}", p.display()))?
    };
    Ok(Policy {
        operators: t
            .operators
            .iter()
            .filter_map(|a| Address::parse(a))
            .collect(),
        maintainers,
        free_text: t.free_text.clone(),
        commands: t.commands.clone(),
        min_confidence: t.min_confidence,
        anyone_moves_open: t.open_moves_by_anyone,
        aliases,
        same_name: t.same_name_addresses && !(t.dkim && t.require_dkim.unwrap_or(true)),
    })
}

impl ConfigFile {
    /// What serde cannot say: ranges, single lines, combinations. Section
    /// by section; the first problem is the error.
    fn validate(&self) -> Result<(), String> {
        let bot = &self.bot;
        if Address::parse(&bot.email).is_none() || bot.email.contains(['<', '>']) {
            return Err(format!("bot.email {:?} is not an address", bot.email));
        }
        if bot.name.contains(['\r', '\n']) {
            return Err("bot.name must be one line".into());
        }
        self.outbound.validate()?;
        if self.inbound.max_text_bytes < MIN_TEXT_BYTES {
            return Err(format!(
                "inbound.max_text_bytes ({}) must be at least {MIN_TEXT_BYTES}: less would not \
                 hold a short reply whole",
                self.inbound.max_text_bytes
            ));
        }
        let n = &self.noise;
        if !(0.5..1.0).contains(&n.level) || n.resamples == 0 || n.resamples > 1_000_000 {
            return Err(format!(
                "noise.level ({}) must be in [0.5, 1) and noise.resamples ({}) in 1..=1000000",
                n.level, n.resamples
            ));
        }
        if !self.track.names.is_empty() && self.track.senders.is_empty() {
            return Err(
                "track.names without track.senders: a display name is the sender's to choose \
                 (anyone can send as \"kernel test robot\"); list the robot's addresses in \
                 track.senders (names then only narrow them)"
                    .into(),
            );
        }
        if self.inbound.source == InboundSource::Imap {
            crate::model::url::ServerUrl::imap(&self.imap.url)
                .map_err(|e| format!("imap.url: {e}"))?;
        }
        if self.outbound.transport == TransportKind::Smtp {
            crate::model::url::ServerUrl::smtp(&self.smtp.url)
                .map_err(|e| format!("smtp.url: {e}"))?;
        }
        for (name, secs) in [
            ("smtp.timeout_secs", self.smtp.timeout_secs),
            ("imap.timeout_secs", self.imap.timeout_secs),
        ] {
            if !(1..=MAX_TIMEOUT_SECS).contains(&secs) {
                return Err(format!(
                    "{name} ({secs}) must be between 1 and {MAX_TIMEOUT_SECS} (an hour)"
                ));
            }
        }
        self.validate_periods()?;
        let signal = self.review.min_signal;
        if !(signal > 0.0 && signal <= 1.0) {
            return Err(format!("review.min_signal ({signal}) must be in (0, 1]"));
        }
        self.trust.validate()
    }

    /// Every period in days is one the digest can show.
    fn validate_periods(&self) -> Result<(), String> {
        let max_days = crate::digest::MAX_DAYS;
        for (name, v) in [
            ("digest.awaiting_days", self.digest.awaiting_days),
            ("digest.no_reply_days", self.digest.no_reply_days),
            ("reminders.no_reply_days", self.reminders.no_reply_days),
            (
                "reminders.awaiting_revert_days",
                self.reminders.awaiting_revert_days,
            ),
            (
                "reminders.awaiting_fix_days",
                self.reminders.awaiting_fix_days,
            ),
            ("reminders.stale_days", self.reminders.stale_days),
            ("review.quiet_days", self.review.quiet_days),
            (
                "digest.every_hours / 24",
                (self.digest.every_hours / 24) as i64,
            ),
        ] {
            if !(0..=max_days).contains(&v) {
                return Err(format!("{name} must be between 0 and {max_days} days"));
            }
        }
        Ok(())
    }
}

impl OutboundSection {
    /// Counts of at least one, and the follow-ups' share of each rate limit
    /// under the whole, so that some is always kept for reports.
    fn validate(&self) -> Result<(), String> {
        if self.max_attempts == 0 || self.concurrency == 0 || self.max_recipients == 0 {
            return Err(
                "outbound.max_attempts, concurrency and max_recipients must be at least 1".into(),
            );
        }
        for (what, share, all) in [
            ("hour", self.followups_per_hour, self.max_per_hour),
            ("day", self.followups_per_day, self.max_per_day),
        ] {
            if all > 0 && (share == 0 || share >= all) {
                return Err(format!(
                    "outbound.followups_per_{what} ({share}) must be at least 1 and under \
                     outbound.max_per_{what} ({all}): the rest is kept for reports"
                ));
            }
        }
        Ok(())
    }
}

impl TrustSection {
    fn validate(&self) -> Result<(), String> {
        for (name, record) in &self.dkim_keys {
            if !name.contains("._domainkey.") || !record.contains("p=") {
                return Err(format!(
                    "trust.dkim_keys: {name:?} = {record:?} is not \"selector._domainkey.domain\" = \"v=DKIM1; k=…; p=…\""
                ));
            }
        }
        if self.require_dkim == Some(true) && !self.dkim {
            return Err("trust.require_dkim needs trust.dkim = true".into());
        }
        if !(0.0..=1.0).contains(&self.min_confidence) {
            return Err("trust.min_confidence must be between 0 and 1".into());
        }
        if self.free_text.contains(&Role::Bot) || self.commands.contains(&Role::Bot) {
            return Err("trust: robots may never decide".into());
        }
        Ok(())
    }
}

/// A secret from the environment variable `var`, else from `file` (trailing
/// newline dropped). Neither is ever logged.
pub fn secret(var: &str, file: &Path, config: &Config) -> Result<Secret, ConfigError> {
    if let Ok(v) = std::env::var(var) {
        return Ok(Secret(v));
    }
    if file.as_os_str().is_empty() {
        return Ok(Secret::default());
    }
    let p = config.resolve(file);
    let text = read_file(&p).map_err(|e| ConfigError::Invalid {
        path: config.source.clone(),
        message: format!("secret file {}: {e}", p.display()),
    })?;
    Ok(Secret(text.trim_end_matches(['\r', '\n']).to_string()))
}

/// The most a file the configuration names may weigh (the configuration
/// itself, MAINTAINERS, a mailmap, a model, a secret): MAINTAINERS is about
/// 1 MB. `--config /dev/zero` is refused, not read without end; a pipe
/// (`--config <(…)`) is read.
const MAX_CONFIG_FILE_BYTES: u64 = 64 << 20;

fn read_file(p: &Path) -> Result<String, String> {
    crate::fsutil::read_text(p, MAX_CONFIG_FILE_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Left out, the mail directories live under the state directory, so
    /// a config copied elsewhere writes nothing outside its state; set, they
    /// are relative to the config file.
    #[test]
    fn mail_directories_follow_the_state_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("c.toml");
        std::fs::write(&p, "[bot]\nstate_dir = \"/srv/perfbot\"\n").unwrap();
        let c = Config::load(Some(&p)).unwrap();
        let state = Path::new("/srv/perfbot");
        assert_eq!(c.outbox_dir(), state.join("outbox"));
        assert_eq!(c.maildir(), state.join("inbox"));
        assert_eq!(c.spool_dir(), state.join("spool"));
        assert_eq!(c.stop_file(), state.join("STOP"));
        std::fs::write(&p, "[outbound]\noutbox_dir = \"mail\"\n").unwrap();
        let c = Config::load(Some(&p)).unwrap();
        assert_eq!(c.outbox_dir(), tmp.path().join("mail"));
    }

    /// The default config with `patch` applied: a line replaced (`key = …`
    /// matched at the start of a line) or, with no match, appended to the
    /// given section.
    fn with(section: &str, line: &str) -> Result<Config, ConfigError> {
        let base = include_str!("../config.toml");
        let key = line.split('=').next().unwrap().trim();
        let mut out = String::new();
        let mut current = String::new();
        let mut done = false;
        for l in base.lines() {
            if l.starts_with('[') {
                if current == section && !done {
                    out.push_str(line);
                    out.push('\n');
                    done = true;
                }
                current = l.trim_matches(['[', ']']).to_string();
            }
            let same_key = l.split('=').next().map(str::trim) == Some(key);
            if current == section && same_key && !done {
                out.push_str(line);
                done = true;
            } else {
                out.push_str(l);
            }
            out.push('\n');
        }
        // The file's last section takes the line at its end.
        if !done && current == section {
            out.push_str(&format!("{line}\n"));
        } else if !done {
            out.push_str(&format!("[{section}]\n{line}\n"));
        }
        Config::parse(
            &out,
            "config.toml",
            PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        )
    }

    fn rejected(section: &str, line: &str) -> String {
        match with(section, line) {
            Ok(_) => panic!("[{section}] {line}: accepted"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_default_config_is_valid() {
        let c = with("bot", "name = \"perfbot\"").unwrap();
        assert_eq!(c.file.outbound.transport, TransportKind::File);
        assert_eq!(c.file.inbound.source, InboundSource::Maildir);
    }

    /// Another address by name counts only where a From is taken at its
    /// word: once decisions need DKIM, anyone could sign for a domain of
    /// their own under someone's name.
    #[test]
    fn same_name_addresses_only_without_required_dkim() {
        for (line, same) in [
            ("min_confidence = 0.6", true),
            ("dkim = true", false),
            ("dkim = true\nrequire_dkim = false", true),
            ("same_name_addresses = false", false),
        ] {
            let c = with("trust", line).unwrap();
            assert_eq!(c.reply.trust.same_name, same, "{line}");
        }
    }

    /// `[compare.selection]`, `[[direction]]` and `[[reply.rule]]` change
    /// what perfbot does, or are refused with the section, key and fault named.
    #[test]
    fn rule_overrides_take_effect_or_say_what_is_wrong() {
        type Check = fn(&Config) -> bool;
        let parse = |extra: &str| {
            let text = format!("{DEFAULT_CONFIG}\n{extra}\n");
            Config::parse(&text, "c.toml", PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        };
        let took: &[(&str, Check)] = &[
            // A list replaces the built-in one…
            ("[compare.selection]\ndenylist = [\"^fio\\\\.\"]", |c| {
                !c.selection.is_reportable("fio.write_iops")
                    && c.selection.is_reportable("interrupts.x")
            }),
            // …a table merges with it, key by key.
            (
                "[compare.selection.sort_key_components]\nmybench = 1",
                |c| {
                    c.selection.sort_key("mybench.a.b", "mybench") == "mybench"
                        && c.selection.sort_key("perf-profile.a.b.c", "perf-profile")
                            == "perf-profile.a"
                },
            ),
            (
                "[compare.selection]\nfallback_rules = [[\"^mybench\\\\.\", \"delta_gt\", 10]]",
                |c| {
                    !c.selection.reasonable_change("mybench.x", 5.0, 1e9)
                        && c.selection.reasonable_change("mybench.x", 11.0, 1.0)
                },
            ),
            (
                "[[direction]]\npattern = '^mybench\\.score$'\ndirection = \"lower\"",
                |c| {
                    c.directions.direction("mybench.score")
                        == crate::compare::rules::Direction::Lower
                },
            ),
        ];
        for (extra, check) in took {
            let c = parse(extra).unwrap_or_else(|e| panic!("{extra}: {e}"));
            assert!(check(&c), "{extra}");
        }
        // The whole message, on one line.
        let refused: &[(&str, &str)] = &[
            (
                "[compare.selection]\nmin_run = 2",
                "c.toml: [compare.selection]: unknown field `min_run`, expected one of `min_runs`,",
            ),
            (
                "[compare.selection]\nmin_runs = \"three\"",
                "c.toml: [compare.selection]: `min_runs`: invalid type: string \"three\", expected usize",
            ),
            (
                "[compare.selection]\nthresholds = [[\"^a\", \"x\"]]",
                "c.toml: [compare.selection]: `thresholds`: invalid type: string \"x\", expected a number",
            ),
            (
                "[compare.selection]\nfallback_rules = [[\"^x\", \"min_gt\", 1]]",
                "c.toml: [compare.selection]: bad pattern \"^x\" in fallback_rules: unknown test \"min_gt\" (max_gt or delta_gt)",
            ),
            (
                "[compare.selection]\ndenylist = [\"(\"]",
                "c.toml: [compare.selection]: bad pattern \"(\" in denylist: regex parse error:",
            ),
            (
                "[[direction]]\npattern = '('\ndirection = \"lower\"",
                "c.toml: [[direction]]: bad pattern \"(\" in direction: regex parse error:",
            ),
            (
                "[[direction]]\npattern = 'x'\ndirection = \"sideways\"",
                "unknown variant `sideways`, expected one of `higher`, `lower`, `none`",
            ),
            (
                "[[reply.rule]]\nid = \"mine\"\nintent = \"maybe\"\nweight = 0.5\npatterns = [\"x\"]",
                "c.toml: [[reply.rule]]: intent rule mine: unknown intent \"maybe\" (one of ",
            ),
            (
                "[[reply.rule]]\nid = \"mine\"\nintent = \"wont-fix\"\nweight = 2.0\npatterns = [\"x\"]",
                "c.toml: [[reply.rule]]: intent rule mine: weight 2 is not in 0..=1",
            ),
        ];
        for (extra, want) in refused {
            let e = parse(extra).expect_err(extra).to_string();
            assert!(
                e.starts_with(want) || (!want.starts_with("c.toml") && e.contains(want)),
                "{extra}:\n{e}"
            );
            // The regex crate's and a TOML parse error's own layout point at
            // the fault in the text, over several lines.
            if !e.contains("regex parse error") && !e.contains("TOML parse error") {
                assert!(!e.contains('\n'), "{extra}: more than one line:\n{e}");
            }
        }
    }

    #[test]
    fn closed_choices_are_typed_and_named_when_wrong() {
        // (section, line, words the error must contain)
        let table: &[(&str, &str, &[&str])] = &[
            (
                "outbound",
                "transport = \"pigeon\"",
                &["transport", "pigeon"],
            ),
            ("inbound", "source = \"pop3\"", &["source", "pop3"]),
            ("report", "charset = \"ebcdic\"", &["charset", "ebcdic"]),
            (
                "report",
                "kinds = [\"regression\", \"hunch\"]",
                &["kinds", "hunch"],
            ),
            (
                "trust",
                "free_text = [\"author\", \"passer-by\"]",
                &["free_text", "passer-by"],
            ),
            (
                "trust",
                "operators = [\"not an address\"]",
                &["operators", "not an address"],
            ),
            ("outbound", "transprot = \"smtp\"", &["transprot"]),
            ("reply", "model = 7", &["model"]),
        ];
        for (section, line, words) in table {
            let e = rejected(section, line);
            assert!(e.starts_with("config.toml: "), "{line}: {e}");
            for w in *words {
                assert!(e.contains(w), "{line}: {e:?} does not name {w:?}");
            }
        }
    }

    #[test]
    fn what_serde_cannot_check_is_validated() {
        let table: &[(&str, &str, &str)] = &[
            ("bot", "email = \"nobody\"", "bot.email"),
            ("bot", "name = \"a\\nb\"", "bot.name must be one line"),
            ("outbound", "concurrency = 0", "at least 1"),
            (
                "outbound",
                "followups_per_hour = 0",
                "outbound.followups_per_hour (0) must be at least 1 and under outbound.max_per_hour",
            ),
            (
                "outbound",
                "max_per_day = 5",
                "outbound.followups_per_day (200) must be at least 1 and under outbound.max_per_day (5)",
            ),
            ("noise", "level = 1.0", "noise.level (1) must be in [0.5, 1)"),
            ("noise", "resamples = 0", "noise.resamples (0) in 1..=1000000"),
            (
                "track",
                "names = [\"kernel test robot\"]",
                "track.names without track.senders",
            ),
            (
                "digest",
                "every_hours = 99999999",
                "digest.every_hours / 24 must be between 0 and",
            ),
            ("trust", "dkim_keys = { x = \"y\" }", "trust.dkim_keys"),
            ("reminders", "stale_days = 99999999", "reminders.stale_days"),
            ("review", "quiet_days = -1", "review.quiet_days"),
            ("review", "min_signal = 0", "review.min_signal"),
            ("inbound", "max_text_bytes = 100", "inbound.max_text_bytes"),
            ("review", "min_signal = nan", "review.min_signal"),
            ("smtp", "timeout_secs = 0", "smtp.timeout_secs (0) must be between 1 and 3600"),
            (
                "imap",
                "timeout_secs = 99999999999",
                "imap.timeout_secs (99999999999) must be between 1",
            ),
            ("trust", "min_confidence = 1.5", "min_confidence"),
            (
                "trust",
                "require_dkim = true",
                "require_dkim needs trust.dkim",
            ),
            (
                "trust",
                "maintainers_file = \"no/such/MAINTAINERS\"",
                "maintainers_file",
            ),
            (
                "trust",
                "mailmap_file = \"no/such/.mailmap\"",
                "trust.mailmap_file",
            ),
            // Where the dashboard listens: said when the config is read,
            // not when `run` first binds it.
            ("web", "listen = \"nonsense\"", "invalid socket address syntax"),
            ("web", "listen = \"localhost:8080\"", "invalid socket address syntax"),
            // Addresses perfbot writes into envelopes and headers.
            ("regzbot", "cc = \"regzbot\"", "\"regzbot\" is not an e-mail address"),
            ("smtp", "envelope_from = \"bot at x\"", "is not an e-mail address"),
        ];
        for (section, line, want) in table {
            let e = rejected(section, line);
            assert!(e.contains(want), "{line}: {e:?} lacks {want:?}");
        }
        // A server's URL is checked where it is used.
        for (text, want) in [
            (
                "[outbound]\ntransport = \"smtp\"\n[smtp]\nurl = \"http://mail.example.org\"",
                "smtp.url: ",
            ),
            (
                "[inbound]\nsource = \"imap\"\n[imap]\nurl = \"pop3://mail.example.org\"",
                "imap.url: ",
            ),
        ] {
            let e = Config::parse(text, "config.toml", PathBuf::from("."))
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{text}: {e:?} lacks {want:?}");
        }
        for ok in [
            "[smtp]\nurl = \"http://mail.example.org\"",
            "[imap]\nurl = \"pop3://mail.example.org\"",
        ] {
            assert!(
                Config::parse(ok, "config.toml", PathBuf::from(".")).is_ok(),
                "{ok}"
            );
        }
        // A mailmap with a line that is not one: the file and the line.
        let dir = tempfile::tempdir().unwrap();
        let map = dir.path().join(".mailmap");
        std::fs::write(&map, "A <a@x.org> <b@y.org>\nnot an entry\n").unwrap();
        let e = rejected(
            "trust",
            &format!("mailmap_file = {:?}", map.display().to_string()),
        );
        assert!(e.contains(".mailmap") && e.contains("Line 2"), "{e}");
        // A mail template that is not there, or does not parse, is told
        // when the config is read, with the key and the file.
        let broken = dir.path().join("digest.hbs");
        std::fs::write(&broken, "{{#if x}}\n").unwrap();
        let broken = format!("{:?}", broken.display().to_string());
        for (section, line, want) in [
            (
                "digest",
                "template = \"nosuch\"".to_string(),
                "digest.template: template \"nosuch\"",
            ),
            (
                "reminders",
                "template = \"nosuch\"".into(),
                "reminders.template: ",
            ),
            ("acks", "template = \"nosuch\"".into(), "acks.template: "),
            (
                "escalation",
                "template = \"nosuch\"".into(),
                "escalation.template: ",
            ),
            ("digest", format!("template = {broken}"), "digest.hbs\":2:1"),
            ("report", format!("template = {broken}"), "digest.hbs\":2:1"),
            // Files the config names are read with it, and named when not.
            (
                "reply",
                "model = \"no/such/model.txt\"".into(),
                "reply.model /",
            ),
            ("reply", format!("model = {broken}"), "reply.model "),
            (
                "lists",
                "policy_file = \"no/such/policy.toml\"".into(),
                "lists.policy_file /",
            ),
            (
                "lists",
                format!("policy_file = {broken}"),
                "lists.policy_file ",
            ),
        ] {
            let e = rejected(section, &line);
            assert!(e.contains(want), "{line}: {e:?} lacks {want:?}");
        }
    }
}
