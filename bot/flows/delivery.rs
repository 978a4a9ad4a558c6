//! Delivering what the outbox has due, exactly once per Message-ID.
//!
//! Each mail goes queued → sending (flushed to disk) → handed to the transport →
//! sent (flushed at once). A crash before "sending" leaves it queued; a crash
//! after the server accepted it but before "sent" was flushed leaves it in
//! "sending", and the next run sends it again *with the same Message-ID and the
//! same bytes*, which list archives and mail readers fold into one. That window
//! is the round trip of one sled flush; it is kept that small by flushing each
//! mail's "sent" mark alone, right after the server's reply.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::task::JoinSet;

use crate::config::{Config, ConfigError, InboundSource, TransportKind};
use crate::mail::guard;
use crate::mail::smtp::{Delivered, SendError, SmtpSender};
use crate::mail::transport::deliver_file;
use crate::model::case::{CaseState, Cause};
use crate::model::ids::OptOuts;
use crate::model::Address;
use crate::model::{OutboxEntry, OutboxKind, OutboxState};
use crate::store::{Store, StoreError};

/// Where mail goes.
#[derive(Clone)]
pub enum Transport {
    File(PathBuf),
    Stdout,
    Smtp(SmtpSender),
}

impl Transport {
    pub fn from_config(config: &Config) -> Result<Transport, ConfigError> {
        Ok(match config.file.outbound.transport {
            TransportKind::Stdout => Transport::Stdout,
            TransportKind::Smtp => Transport::Smtp(SmtpSender::from_config(config)?),
            TransportKind::File => Transport::File(config.outbox_dir()),
        })
    }

    pub fn describe(&self) -> String {
        match self {
            Transport::File(d) => format!("file outbox {}", d.display()),
            Transport::Stdout => "standard output".into(),
            Transport::Smtp(s) => format!("smtp {}:{}", s.url.host, s.url.port),
        }
    }

    async fn send(
        &self,
        e: &OutboxEntry,
        to: &[Address],
        raw: &[u8],
    ) -> Result<Delivered, SendError> {
        let local = |reply: String| Delivered {
            reply,
            refused: Vec::new(),
        };
        match self {
            Transport::File(dir) => deliver_file(dir, &e.message_id, raw)
                .map(|p| local(format!("written to {}", p.display())))
                .map_err(|err| SendError::Transient(err.to_string())),
            Transport::Stdout => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                out.write_all(raw)
                    .and_then(|_| out.write_all(b"\n"))
                    .map(|_| local("written to standard output".to_string()))
                    .map_err(|err| SendError::Transient(err.to_string()))
            }
            Transport::Smtp(s) => s.send(to, raw).await,
        }
    }
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SendSummary {
    pub sent: usize,
    /// Failed this time, to be retried later.
    pub failed: usize,
    /// Given up: permanent failure or out of attempts.
    pub dead: usize,
    /// Due but held back by the rate limit.
    pub deferred: usize,
    /// Would have been sent (dry run).
    pub would_send: usize,
    /// Why nothing was sent at all, if so.
    pub stopped: Option<String>,
    /// The server refused perfbot itself (credentials): sending stopped, the
    /// mail stays queued.
    pub operator_error: Option<String>,
    /// Interrupted mails found in the own mailbox (marked sent, not resent).
    pub confirmed: usize,
    pub lines: Vec<String>,
}

impl SendSummary {
    pub fn line(&self) -> String {
        let mut s = format!(
            "sent {}, failed {}, dead {}, deferred by rate limit {}",
            self.sent, self.failed, self.dead, self.deferred
        );
        if self.would_send > 0 {
            s.push_str(&format!(", would send {}", self.would_send));
        }
        if self.confirmed > 0 {
            s.push_str(&format!(", found already delivered {}", self.confirmed));
        }
        if let Some(r) = &self.stopped {
            s.push_str(&format!(" (stopped: {r})"));
        }
        if let Some(r) = &self.operator_error {
            s.push_str(&format!(" (stopped: {r})"));
        }
        s
    }

    /// Something went wrong in this run: a mail failed or died, or the server
    /// refused perfbot itself.
    pub fn trouble(&self) -> bool {
        self.failed > 0 || self.dead > 0 || self.operator_error.is_some()
    }
}

fn due(e: &OutboxEntry, now: DateTime<Utc>) -> bool {
    match e.state {
        OutboxState::Queued | OutboxState::Failed => e.next_attempt_at <= now,
        // Left over from a process that died mid-send: its fate is unknown, so it
        // goes again under the same Message-ID.
        OutboxState::Sending => true,
        _ => false,
    }
}

/// Mails left in "sending" by a process that died may have left, and so may
/// mails whose server fell silent (`fate_unknown`). perfbot
/// copies itself on its reports (`report.cc_self`); when it reads its mailbox
/// over IMAP, a copy there means the server took the mail: mark it sent
/// instead of sending it a second time. Best effort: when the mailbox cannot
/// be searched, the mail is sent again (same Message-ID, same bytes).
async fn confirm_sending(
    config: &Config,
    store: &Store,
    due: &mut Vec<OutboxEntry>,
    s: &mut SendSummary,
) -> Result<(), StoreError> {
    if config.file.inbound.source != InboundSource::Imap {
        return Ok(());
    }
    let me: Vec<String> = [&config.file.bot.email, &config.file.imap.user]
        .into_iter()
        .filter_map(|a| Address::parse(a))
        .map(|a| a.to_string())
        .collect();
    let copied = self_copy(config).is_some();
    let ids: Vec<crate::model::MessageId> = due
        .iter()
        .filter(|e| {
            (e.state == OutboxState::Sending || e.fate_unknown)
                && (copied || e.recipients.iter().any(|r| me.contains(r)))
        })
        .map(|e| e.message_id.clone())
        .collect();
    if ids.is_empty() {
        return Ok(());
    }
    let Some(found) = in_own_mailbox(config, ids).await else {
        return Ok(());
    };
    let now = Utc::now();
    for e in due.iter_mut().filter(|e| found.contains(&e.message_id)) {
        e.state = OutboxState::Sent;
        e.sent_at = Some(now);
        e.fate_unknown = false;
        e.server_reply = Some(
            "interrupted while sending; a copy is in perfbot's own mailbox, so the server took it"
                .into(),
        );
        store.outbox_transition(
            e,
            reported(e),
            Cause::system("delivery"),
            &format!(
                "{} <{}> found in the own mailbox after an interruption: sent, not sent again",
                e.kind, e.message_id
            ),
        )?;
        tracing::info!(message_id = %e.message_id, "interrupted mail found in the own mailbox: not sent again");
        s.lines.push(format!(
            "{} <{}> was interrupted while sending and found in the own mailbox: marked sent",
            e.kind, e.message_id
        ));
        s.confirmed += 1;
    }
    due.retain(|e| e.state != OutboxState::Sent);
    Ok(())
}

/// Which of `ids` perfbot's own mailbox holds; `None` when it cannot be
/// searched (said in the log: the mails are then sent again).
async fn in_own_mailbox(
    config: &Config,
    ids: Vec<crate::model::MessageId>,
) -> Option<Vec<crate::model::MessageId>> {
    let account = match crate::flows::ingest::imap_source::account(config) {
        Ok(a) => a,
        Err(e) => {
            tracing::warn!(error = %e, "cannot look for interrupted mail in the own mailbox");
            return None;
        }
    };
    let mailbox = config.file.imap.mailbox.clone();
    let found = tokio::task::spawn_blocking(move || {
        crate::mail::imap::find_message_ids(&account, &mailbox, &ids)
    })
    .await;
    match found {
        Ok(Ok(f)) => Some(f),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "cannot look for interrupted mail in the own mailbox; sending it again");
            None
        }
        Err(e) => {
            tracing::warn!(error = %e, "looking for interrupted mail failed; sending it again");
            None
        }
    }
}

/// The address perfbot sends itself a copy of every mail at (envelope only),
/// when it copies itself (`report.cc_self`) and reads that mailbox over IMAP.
fn self_copy(config: &Config) -> Option<Address> {
    (config.file.report.cc_self && config.file.inbound.source == InboundSource::Imap)
        .then(|| Address::parse(&config.file.bot.email))
        .flatten()
}

/// Deliver every due message (at most what the rate limits allow). With
/// `dry_run`, say what would be sent and change nothing.
pub async fn send_due(
    config: &Config,
    store: &Store,
    transport: &Transport,
    now: DateTime<Utc>,
    dry_run: bool,
) -> Result<SendSummary, StoreError> {
    let mut s = SendSummary::default();
    let o = &config.file.outbound;
    let entries = store.outbox_entries()?;
    let mut due_list: Vec<OutboxEntry> = entries.iter().filter(|e| due(e, now)).cloned().collect();
    if due_list.is_empty() {
        return Ok(s);
    }
    if let Some(reason) = guard::stop_reason(config) {
        s.emergency_stop(reason, due_list.len());
        return Ok(s);
    }
    if !dry_run && matches!(transport, Transport::Smtp(_)) {
        confirm_sending(config, store, &mut due_list, &mut s).await?;
    }
    let budget = Budget::of(&entries, o, now);
    let mut run = Run::new(config, store, transport, dry_run)?;
    let mut followups_started = 0usize;
    let mut followups_deferred = 0usize;
    for (i, e) in due_list.iter().cloned().enumerate() {
        if s.operator_error.is_some() {
            break;
        }
        if run.started >= budget.allowed {
            s.rate_limited(o, due_list.len() - i, budget.next_free);
            break;
        }
        if e.kind != OutboxKind::Report {
            if followups_started >= budget.followups_allowed {
                followups_deferred += 1;
                continue;
            }
            followups_started += 1;
        }
        run.start(e, &mut s).await?;
    }
    run.drain(&mut s).await?;
    if followups_deferred > 0 {
        s.followups_limited(o, followups_deferred, budget.followups_free);
    }
    Ok(s)
}

/// One run of deliveries: what every mail in it needs, and the mails in
/// flight.
struct Run<'a> {
    config: &'a Config,
    store: &'a Store,
    transport: Arc<Transport>,
    dry_run: bool,
    optouts: OptOuts,
    redirect: Option<Address>,
    self_copy: Option<Address>,
    tasks: JoinSet<Sent>,
    /// What each task is sending, so that a task that panics is still recorded.
    in_flight: HashMap<tokio::task::Id, OutboxEntry>,
    /// Mails handed to the transport (or that would be, in a dry run).
    started: usize,
}

impl<'a> Run<'a> {
    fn new(
        config: &'a Config,
        store: &'a Store,
        transport: &Transport,
        dry_run: bool,
    ) -> Result<Run<'a>, StoreError> {
        Ok(Run {
            config,
            store,
            transport: Arc::new(transport.clone()),
            dry_run,
            optouts: crate::flows::optout::all(config, store)?,
            redirect: config.file.outbound.redirect_all_to.clone(),
            self_copy: self_copy(config),
            tasks: JoinSet::new(),
            in_flight: HashMap::new(),
            started: 0,
        })
    }

    /// Hand one mail to the transport (or bury it when nobody may get it, or
    /// say that it would go, in a dry run).
    async fn start(&mut self, mut e: OutboxEntry, s: &mut SendSummary) -> Result<(), StoreError> {
        let to = envelope(
            &e,
            &self.optouts,
            self.redirect.as_ref(),
            self.self_copy.as_ref(),
        );
        if to.is_empty() {
            if !self.dry_run {
                bury_unaddressed(self.store, &mut e)?;
            }
            s.dead += 1;
            s.lines.push(format!(
                "dead {} ({}): no recipient left",
                e.message_id, e.kind
            ));
            return Ok(());
        }
        if self.dry_run {
            s.would_send += 1;
            s.lines.push(would_send(&e, &to));
            self.started += 1;
            return Ok(());
        }
        let raw = message_bytes(self.store, &e, &self.optouts, self.redirect.as_ref())?;
        if e.state == OutboxState::Sending {
            tracing::warn!(message_id = %e.message_id, case = %e.case_id,
                "was being sent when perfbot stopped; sending again under the same Message-ID");
        }
        let before = e.clone();
        // Durably "sending" before the first byte goes out.
        e.state = OutboxState::Sending;
        e.attempts += 1;
        self.store.put_outbox_entry(&e)?;
        self.started += 1;
        let t = self.transport.clone();
        let handle = self.tasks.spawn(async move {
            let r = t.send(&e, &to, &raw).await;
            (e, r)
        });
        self.in_flight.insert(handle.id(), before);
        // Bounded concurrency: as many in flight as pooled connections.
        if self.tasks.len() >= self.config.file.outbound.concurrency {
            if let Some(done) = self.tasks.join_next_with_id().await {
                finish(self.config, self.store, done, &mut self.in_flight, s)?;
            }
        }
        Ok(())
    }

    /// Wait for the mails still in flight and record each.
    async fn drain(&mut self, s: &mut SendSummary) -> Result<(), StoreError> {
        while let Some(done) = self.tasks.join_next_with_id().await {
            finish(self.config, self.store, done, &mut self.in_flight, s)?;
        }
        Ok(())
    }
}

impl SendSummary {
    /// The emergency stop is set: the `due` mails stay queued.
    fn emergency_stop(&mut self, reason: String, due: usize) {
        tracing::warn!(due, %reason, "emergency stop: nothing sent");
        self.lines.push(format!(
            "emergency stop, {due} due mail(s) stay queued: {reason}"
        ));
        self.stopped = Some(reason);
    }

    /// The rate limit held `deferred` mails back until `free`.
    fn rate_limited(
        &mut self,
        o: &crate::config::OutboundSection,
        deferred: usize,
        free: Option<DateTime<Utc>>,
    ) {
        self.deferred = deferred;
        let when = free.map_or("later".to_string(), crate::model::shown_time);
        tracing::warn!(deferred, next = %when, "rate limit reached");
        self.lines.push(format!(
            "rate limit ({} per hour, {} per day): {deferred} mail(s) wait until {when}",
            o.max_per_hour, o.max_per_day
        ));
    }

    /// The follow-ups' share of the rate limit held `deferred` mails other
    /// than reports back until `free`.
    fn followups_limited(
        &mut self,
        o: &crate::config::OutboundSection,
        deferred: usize,
        free: Option<DateTime<Utc>>,
    ) {
        self.deferred += deferred;
        let when = free.map_or("later".to_string(), crate::model::shown_time);
        tracing::warn!(deferred, next = %when, "follow-up share of the rate limit reached");
        self.lines.push(format!(
            "follow-up rate limit ({} per hour, {} per day; the rest is kept for reports): \
             {deferred} mail(s) other than reports wait until {when}",
            o.followups_per_hour, o.followups_per_day
        ));
    }
}

/// How much mail the rate limits let out now, and when more may go.
struct Budget {
    allowed: usize,
    next_free: Option<DateTime<Utc>>,
    /// Mail other than reports has a share of its own, so that the rest of
    /// the budget is always there for reports.
    followups_allowed: usize,
    followups_free: Option<DateTime<Utc>>,
}

impl Budget {
    fn of(
        entries: &[OutboxEntry],
        o: &crate::config::OutboundSection,
        now: DateTime<Utc>,
    ) -> Budget {
        let sent_times: Vec<DateTime<Utc>> = entries.iter().filter_map(|e| e.sent_at).collect();
        let (allowed, next_free) = guard::budget(&sent_times, now, o.max_per_hour, o.max_per_day);
        let followup_times: Vec<DateTime<Utc>> = entries
            .iter()
            .filter(|e| e.kind != OutboxKind::Report)
            .filter_map(|e| e.sent_at)
            .collect();
        let (followups_allowed, followups_free) = guard::budget(
            &followup_times,
            now,
            o.followups_per_hour.min(o.max_per_hour),
            o.followups_per_day.min(o.max_per_day),
        );
        Budget {
            allowed,
            next_free,
            followups_allowed,
            followups_free,
        }
    }
}

/// The envelope recipients of a mail: its recipients without the opted-out
/// (or the staging address instead), and perfbot's own mailbox.
fn envelope(
    e: &OutboxEntry,
    optouts: &OptOuts,
    redirect: Option<&Address>,
    self_copy: Option<&Address>,
) -> Vec<Address> {
    let (mut to, dropped) = guard::envelope(&e.recipients, optouts, redirect);
    for (a, why) in &dropped {
        tracing::info!(message_id = %e.message_id, address = %a, reason = why, "recipient left out");
    }
    // A copy of every mail to perfbot's own mailbox (envelope only, like
    // Bcc): after an interruption, `confirm_sending` finds it there
    // instead of sending the mail a second time.
    if let (Some(me), false) = (self_copy, to.is_empty() || redirect.is_some()) {
        if !to.contains(me) {
            to.push(me.clone());
        }
    }
    to
}

/// A mail nobody may get any more is dead, with the reason in its case.
fn bury_unaddressed(store: &Store, e: &mut OutboxEntry) -> Result<(), StoreError> {
    e.state = OutboxState::Dead;
    e.last_error = Some("no recipient left (all opted out or invalid)".into());
    store.outbox_transition(
        e,
        None,
        Cause::system("outbox"),
        &format!("mail <{}> not sent: no recipient left", e.message_id),
    )
}

/// The line `send --dry-run` prints for a mail.
fn would_send(e: &OutboxEntry, to: &[Address]) -> String {
    format!(
        "would send {} ({}, case {}) to {}: {}",
        e.message_id,
        e.kind,
        e.case_id,
        to.iter()
            .map(Address::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        e.subject
    )
}

/// The bytes to send: the queued message, with a header naming the original
/// recipients when staging redirects it.
fn message_bytes(
    store: &Store,
    e: &OutboxEntry,
    optouts: &OptOuts,
    redirect: Option<&Address>,
) -> Result<Vec<u8>, StoreError> {
    let raw = store.outbox_raw(&e.message_id)?;
    let Some(r) = redirect else {
        return Ok(raw);
    };
    let original: Vec<Address> = guard::envelope(&e.recipients, optouts, None).0;
    let mut with = guard::redirect_header(r, &original);
    with.extend_from_slice(&raw);
    Ok(with)
}

/// What a send task gives back: the mail and what the transport said.
type Sent = (OutboxEntry, Result<Delivered, SendError>);

/// Record the outcome of one send task (or of its panic).
fn finish(
    config: &Config,
    store: &Store,
    done: Result<(tokio::task::Id, Sent), tokio::task::JoinError>,
    in_flight: &mut HashMap<tokio::task::Id, OutboxEntry>,
    s: &mut SendSummary,
) -> Result<(), StoreError> {
    match done {
        Ok((id, (e, r))) => {
            let before = in_flight.remove(&id).expect("every task is tracked");
            match r {
                Err(SendError::Operator(why)) => {
                    // Not the mail's fault: it goes back to where it was.
                    let mut back = before;
                    back.last_error = Some(format!("not sent: {why}"));
                    store.outbox_transition(
                        &back,
                        None,
                        Cause::system("delivery"),
                        &format!("{} <{}> not sent, kept: {why}", back.kind, back.message_id),
                    )?;
                    if s.operator_error.is_none() {
                        tracing::error!(error = %why, "the mail server refused perfbot's credentials: sending stopped, mail kept queued");
                        s.lines.push(format!(
                            "sending stopped, nothing was given up: the server refused perfbot itself ({why}); fix smtp.user / the password, then `perfbot send`"
                        ));
                        s.operator_error = Some(why);
                    }
                    Ok(())
                }
                r => record(config, store, e, r, s),
            }
        }
        Err(join) => {
            let mut e = in_flight.remove(&join.id()).expect("every task is tracked");
            // The task died with the mail in hand: as a transient failure.
            e.state = OutboxState::Sending;
            e.attempts += 1;
            let why = format!("internal error while sending: {join}");
            tracing::error!(message_id = %e.message_id, error = %why, "send task failed");
            record(config, store, e, Err(SendError::Transient(why)), s)
        }
    }
}

/// A report that left moves its case from queued to reported; other mail
/// moves no case.
fn reported(e: &OutboxEntry) -> Option<(CaseState, CaseState)> {
    (e.kind == OutboxKind::Report).then_some((CaseState::Queued, CaseState::Reported))
}

/// Write down what the transport said about one mail.
fn record(
    config: &Config,
    store: &Store,
    e: OutboxEntry,
    r: Result<Delivered, SendError>,
    s: &mut SendSummary,
) -> Result<(), StoreError> {
    match r {
        Ok(d) => record_sent(store, e, d, s),
        Err(err) => record_failure(config, store, e, err, s),
    }
}

/// The server took the mail (perhaps refusing some recipients): sent, and
/// a report's case is reported.
fn record_sent(
    store: &Store,
    mut e: OutboxEntry,
    Delivered { reply, refused }: Delivered,
    s: &mut SendSummary,
) -> Result<(), StoreError> {
    let now = Utc::now();
    e.state = OutboxState::Sent;
    e.sent_at = Some(now);
    e.last_error = None;
    e.fate_unknown = false;
    e.server_reply = Some(reply.clone());
    e.refused = refused
        .iter()
        .map(|r| format!("{}: {}", r.address, r.why))
        .collect();
    let reply = if refused.is_empty() {
        reply
    } else {
        let who: Vec<String> = refused.iter().map(|r| r.address.to_string()).collect();
        format!(
            "{reply}; refused by the server, left out: {}",
            who.join(", ")
        )
    };
    store.outbox_transition(
        &e,
        reported(&e),
        Cause::system("delivery"),
        &format!("{} <{}> sent: {reply}", e.kind, e.message_id),
    )?;
    tracing::info!(case = %e.case_id, message_id = %e.message_id, kind = %e.kind, %reply, "sent");
    s.sent += 1;
    s.lines
        .push(format!("sent {} ({}): {reply}", e.message_id, e.kind));
    Ok(())
}

/// The mail did not go: to be tried again after a backoff, or dead when
/// the failure is permanent or its attempts are spent.
fn record_failure(
    config: &Config,
    store: &Store,
    mut e: OutboxEntry,
    err: SendError,
    s: &mut SendSummary,
) -> Result<(), StoreError> {
    let o = &config.file.outbound;
    let give_up = matches!(err, SendError::Permanent(_) | SendError::Operator(_))
        || e.attempts >= o.max_attempts;
    e.last_error = Some(err.to_string());
    e.fate_unknown = matches!(err, SendError::Silent(_));
    let note = if give_up {
        e.state = OutboxState::Dead;
        s.dead += 1;
        format!(
            "{} <{}> dead after {} attempt(s): {err}",
            e.kind, e.message_id, e.attempts
        )
    } else {
        e.state = OutboxState::Failed;
        e.next_attempt_at =
            Utc::now() + guard::backoff(e.attempts, o.retry_base_secs, o.retry_max_secs);
        s.failed += 1;
        format!(
            "{} <{}> attempt {} failed, next at {}: {err}",
            e.kind,
            e.message_id,
            e.attempts,
            crate::model::shown_time(e.next_attempt_at)
        )
    };
    tracing::warn!(case = %e.case_id, message_id = %e.message_id, attempts = e.attempts, error = %err, "{}", if give_up { "gave up" } else { "will retry" });
    store.outbox_transition(&e, None, Cause::system("delivery"), &note)?;
    s.lines.push(note);
    Ok(())
}
