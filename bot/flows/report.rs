//! From an input file to a queued e-mail and a case: the `perfbot report` job.

use std::path::Path;
use std::time::SystemTime;

use chrono::{DateTime, Utc};

use crate::config::Config;
use crate::input::LoadedInput;
use crate::mail::message::{self, dedup_recipients, BuildError, Envelope};
use crate::model::case::{Case, CaseId, CaseState, Cause};
use crate::model::error::InputError;
use crate::model::ids::{bare_address, OptOuts};
use crate::model::series::series_key;
use crate::model::MessageId;
use crate::model::{OutboxEntry, OutboxState};
use crate::report::build::{build, Report, ReportError};
use crate::report::render::{render, Rendered};
use crate::store::{Created, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A report rendered into a complete message, not yet stored.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub report: Report,
    pub rendered: Rendered,
    pub envelope: Envelope,
    pub raw: Vec<u8>,
    pub input: String,
    /// The commit's author and committer addresses (for sender trust).
    pub author: Option<String>,
    pub committer: Option<String>,
    /// Recipients left out (opted out, over `outbound.max_recipients`), with why.
    pub dropped: Vec<(String, &'static str)>,
    /// Why the noise gate holds the mail for a human, if it does.
    pub held_because: Option<String>,
    /// Why the report is handed to regzbot, if it is.
    pub regzbot: Option<String>,
    /// Not sent before this (a list's embargo).
    pub not_before: Option<DateTime<Utc>>,
    /// The list policy that applied, or why the report is muted.
    pub policy: Option<String>,
    /// The base commit, and the headline's samples on it (raw inputs).
    pub base: String,
    pub baseline: Vec<f64>,
}

/// The list policy of a report (`lists.policy_file`): `None` without a
/// policy file, `Err` with the reason when the report is muted (no policy
/// for its lists or subsystem, or a muted one).
fn list_policy<'c>(
    config: &'c Config,
    to: &[String],
    cc: &[String],
    subsystem: Option<&str>,
) -> Option<Result<&'c crate::model::list_policy::ListPolicy, String>> {
    let policies = config.lists.as_ref()?;
    let recipients: Vec<String> = to.iter().chain(cc).map(|a| bare_address(a)).collect();
    Some(match policies.find(&recipients, subsystem) {
        None => Err(format!(
            "muted: no list policy for {} (subsystem {}); lists.policy_file",
            recipients.join(", "),
            subsystem.unwrap_or("-")
        )),
        Some(p) if p.muted => Err(format!("muted by the policy of {}", p.name())),
        Some(p) => Ok(p),
    })
}

/// Why a report goes to regzbot, if it does (`[regzbot]`): a regression of
/// mainline or next (the input's tree), at least `min_change_percent`, of a
/// broad benchmark, sent to a list that asked for it.
fn regzbot_handover(
    config: &Config,
    i: &crate::input::ReportInput,
    report: &crate::report::build::Report,
    to: &[String],
    cc: &[String],
) -> Option<String> {
    let z = &config.file.regzbot;
    if !z.enabled || report.view.headline.verdict != "regression" {
        return None;
    }
    let tree = i.tree.as_ref()?.name.as_deref()?;
    if !z.trees.iter().any(|t| t == tree) {
        return None;
    }
    if report.headline.change.value.abs() < z.min_change_percent {
        return None;
    }
    let testcase = &report.view.test.testcase;
    if !z.testcases.is_empty() && !z.testcases.contains(testcase) {
        return None;
    }
    let bare = |a: &String| crate::model::ids::bare_address(a).to_ascii_lowercase();
    let list = to
        .iter()
        .chain(cc)
        .map(bare)
        .find(|a| z.lists.iter().any(|l| l.eq_ignore_ascii_case(a)))?;
    Some(format!("a {tree} regression of {testcase} sent to {list}"))
}

/// The headline's interval from the first test's raw samples, and why it
/// holds the report, if it does (`[noise]`).
fn noise_gate(
    config: &Config,
    headline: Option<&(Vec<f64>, Vec<f64>)>,
    report: &crate::report::build::Report,
) -> Option<(crate::compare::noise::Interval, Option<String>)> {
    if !config.file.noise.enabled {
        return None;
    }
    let (base, head) = headline?;
    let absolute = report.headline.change.absolute;
    let i = crate::compare::noise::interval(base, head, absolute, config.file.noise.bootstrap())?;
    let min = config.report_setup().report.min_change_percent;
    Some((i, crate::compare::noise::hold_reason(&i, absolute, min)))
}

/// The raw samples of `metric` in the input's first test, base and head
/// (`None` for aggregated inputs or a metric that is not numbers).
pub fn samples(loaded: &LoadedInput, metric: &str) -> Option<(Vec<f64>, Vec<f64>)> {
    use crate::compare::matrix::{Matrix, Series};
    let Some(crate::input::TestData::Raw { base, head }) = loaded.data.first() else {
        return None;
    };
    let values = |m: &Matrix| -> Option<Vec<f64>> {
        match m.stats.get(metric)? {
            Series::Numbers(v) => Some(v.iter().map(|s| s.value).collect()),
            Series::Text => None,
        }
    };
    Some((values(base)?, values(head)?))
}

fn input_date(s: &str, path: &Path) -> Result<DateTime<Utc>, InputError> {
    let d = DateTime::parse_from_rfc3339(s)
        .or_else(|_| DateTime::parse_from_rfc2822(s))
        .map(|d| d.with_timezone(&Utc))
        .map_err(|e| InputError::field(path, "$.date", &format!("not an RFC 3339 date: {e}")))?;
    // Mail dates are seconds since 1970; a report cannot predate that.
    if !(1970..=9999).contains(&chrono::Datelike::year(&d)) {
        return Err(InputError::field(
            path,
            "$.date",
            "out of range: a report's date is between 1970 and 9999",
        ));
    }
    Ok(d)
}

/// Load, analyse and render one input file.
pub fn prepare(
    config: &Config,
    path: &Path,
    template: Option<&str>,
    force: bool,
    now: DateTime<Utc>,
) -> Result<Prepared, QueueError> {
    prepare_loaded(config, &LoadedInput::load(path)?, template, force, now)
}

/// The report's envelope: from the bot to `to`/`cc`, under the report's
/// Message-ID, in the patch's thread when it reports on a patch, with the
/// case's id in `X-Perfbot-Case`.
fn envelope(
    config: &Config,
    loaded: &LoadedInput,
    report: &Report,
    subject: &str,
    (to, cc): (Vec<String>, Vec<String>),
    date: DateTime<Utc>,
) -> Envelope {
    let (patch_id, references) = patch_thread(&loaded.input);
    Envelope {
        attachments: loaded.files.clone(),
        from: config.file.bot.sender(),
        to,
        cc,
        subject: subject.to_string(),
        message_id: MessageId::parse(&report.view.message_id).expect("perfbot makes valid ids"),
        in_reply_to: patch_id,
        references,
        date: SystemTime::from(date),
        charset: config.file.report.charset,
        extra: vec![(
            "X-Perfbot-Case".into(),
            CaseId::from_key(&report.case_key).to_string(),
        )],
    }
}

/// `prepare`, for an input loaded already.
pub fn prepare_loaded(
    config: &Config,
    loaded: &LoadedInput,
    template: Option<&str>,
    force: bool,
    now: DateTime<Utc>,
) -> Result<Prepared, QueueError> {
    let path = loaded.path.as_path();
    let date = match &loaded.input.date {
        Some(d) => input_date(d, path)?,
        None => now,
    };
    // --template, else the layout a parsed report was read in, else the
    // config's.
    let name = template
        .or(loaded.input.style.layout.map(|l| l.name()))
        .unwrap_or(&config.file.report.template);
    let (body_tpl, subject_tpl) = crate::templates::report_pair(&config.templates_dir(), name)
        .map_err(|e| ReportError::Template(e.to_string()))?;
    let mut report = build(&config.report_setup(), loaded, name, force)?;
    // The headline's raw samples: for the noise gate, and kept as the
    // case's base (what a fix must come back to).
    let headline = samples(loaded, &report.headline.metric);
    let noise = noise_gate(config, headline.as_ref(), &report);
    if let Some((i, _)) = &noise {
        report.view.headline.interval = Some(i.describe(report.headline.change.absolute));
    }
    let mut rendered = render(&report.view, &body_tpl, &subject_tpl)?;
    let i = &loaded.input;
    let (to, mut cc) = recipients(config, loaded)?;
    let max = config.file.outbound.max_recipients;
    let handover = regzbot_handover(config, i, &report, &to, &cc);
    if handover.is_some() {
        hand_over(config, &mut cc, &mut rendered, &report.view.commit.sha);
    }
    let own = bare_address(&config.file.bot.email);
    let (to, mut cc, dropped) = apply_policy(
        to,
        cc,
        &OptOuts::new(config.optout_addresses()),
        max,
        Some(&own),
    );
    let noise_hold = noise
        .as_ref()
        .and_then(|(_, why)| why.as_ref())
        .map(|why| format!("noise gate: {why}"));
    let listed = apply_list_policy(config, &to, &mut cc, &mut rendered, &report, now);
    let held_because = listed.held_because.or(noise_hold);
    let envelope = envelope(config, loaded, &report, &rendered.subject, (to, cc), date);
    let raw = message::build(&envelope, &rendered.body)?;
    let baseline = headline.map(|(b, _)| b).unwrap_or_default();
    Ok(Prepared {
        report,
        rendered,
        envelope,
        raw,
        input: path.display().to_string(),
        author: i.commit.author.as_ref().map(|a| a.email.clone()),
        committer: i.commit.committer.as_ref().map(|a| a.email.clone()),
        dropped,
        held_because,
        regzbot: handover,
        not_before: listed.not_before,
        policy: listed.line,
        base: i.base.sha.clone(),
        baseline,
    })
}

/// To and Cc of a report: the input's To (else the commit's author), its
/// Cc with the configured ones unless the input says its list is exact.
/// More addresses in To than `outbound.max_recipients` is the input's error:
/// perfbot never cuts To.
fn recipients(
    config: &Config,
    loaded: &LoadedInput,
) -> Result<(Vec<String>, Vec<String>), QueueError> {
    let i = &loaded.input;
    let to: Vec<String> = if i.recipients.to.is_empty() {
        i.commit
            .author
            .iter()
            .map(|a| crate::model::ids::mailbox(&a.name, &a.email))
            .collect()
    } else {
        i.recipients.to.clone()
    };
    let (to, cc) = if i.recipients.exact {
        (to, i.recipients.cc.clone())
    } else {
        let mut cc: Vec<String> = config.file.report.cc.clone();
        cc.extend(i.recipients.cc.iter().cloned());
        if config.file.report.cc_self {
            cc.push(config.file.bot.email.clone());
        }
        dedup_recipients(&to, &cc)
    };
    let max = config.file.outbound.max_recipients;
    if to.len() > max {
        return Err(InputError::field(
            &loaded.path,
            "$.recipients.to",
            &format!(
                "{} addresses in To, over outbound.max_recipients ({max}): perfbot never cuts To",
                to.len()
            ),
        )
        .into());
    }
    Ok((to, cc))
}

/// Hand the report to regzbot: its address in Cc, and its
/// `#regzbot introduced:` line in a paragraph of its own, as regzbot reads it.
fn hand_over(config: &Config, cc: &mut Vec<String>, rendered: &mut Rendered, sha: &str) {
    let tracker = config.file.regzbot.cc.as_str();
    if !cc
        .iter()
        .any(|a| bare_address(a).eq_ignore_ascii_case(tracker))
    {
        cc.push(tracker.to_string());
    }
    let body = rendered.body.trim_end_matches('\n');
    rendered.body = format!("{body}\n\n#regzbot introduced: {sha}\n");
}

/// What a list's opt-in policy did to a report.
#[derive(Default)]
struct Listed {
    /// The report is held: no policy lets it go to these lists.
    held_because: Option<String>,
    /// The policy's embargo.
    not_before: Option<DateTime<Utc>>,
    /// The policy that applied, or why none did, for the operators.
    line: Option<String>,
}

/// Apply the lists' opt-in policy: hold the report, or mail the author
/// alone, prefix the Subject, delay it, as the policy says.
fn apply_list_policy(
    config: &Config,
    to: &[String],
    cc: &mut Vec<String>,
    rendered: &mut Rendered,
    report: &Report,
    now: DateTime<Utc>,
) -> Listed {
    match list_policy(config, to, cc, report.view.subsystem.as_deref()) {
        None => Listed::default(),
        Some(Err(why)) => Listed {
            line: Some(why.clone()),
            held_because: Some(why),
            not_before: None,
        },
        Some(Ok(p)) => {
            if p.mail == crate::model::list_policy::MailTo::Author {
                cc.clear();
            }
            if !p.subject_prefix.is_empty() {
                rendered.subject = format!("{} {}", p.subject_prefix, rendered.subject);
            }
            Listed {
                held_because: None,
                not_before: (p.embargo_hours > 0)
                    .then(|| now + chrono::Duration::hours(i64::from(p.embargo_hours))),
                line: Some(format!("policy {}", p.describe())),
            }
        }
    }
}

/// The patch a report answers, and what its References say: the patch's
/// thread, then the patch.
fn patch_thread(i: &crate::input::ReportInput) -> (Option<MessageId>, Vec<MessageId>) {
    let patch_id = i
        .patch
        .as_ref()
        .and_then(|p| MessageId::parse(&p.message_id));
    let mut references: Vec<MessageId> = i
        .patch
        .iter()
        .flat_map(|p| &p.references)
        .filter_map(|r| MessageId::parse(r))
        .filter(|r| Some(r) != patch_id.as_ref())
        .collect();
    references.extend(patch_id.clone());
    (patch_id, references)
}

/// Drop opted-out addresses, then cap the count (To is kept, Cc cut from the
/// end). Returns what is left and what was dropped, with the reason.
pub fn apply_policy(
    to: Vec<String>,
    cc: Vec<String>,
    optouts: &OptOuts,
    max: usize,
    own: Option<&str>,
) -> (Vec<String>, Vec<String>, Vec<(String, &'static str)>) {
    let mut dropped = Vec::new();
    let mut keep = |list: Vec<String>| -> Vec<String> {
        list.into_iter()
            .filter(|a| {
                let out = optouts.excludes(a);
                if out {
                    dropped.push((a.clone(), "opted out"));
                }
                !out
            })
            .collect()
    };
    let mut to = keep(to);
    let mut cc = keep(cc);
    if to.len() > max {
        for a in to.drain(max..) {
            dropped.push((a, "over outbound.max_recipients"));
        }
    }
    let room = max - to.len();
    if cc.len() > room {
        // perfbot's own copy is what its re-send check reads back: a long Cc
        // loses others first.
        let is_own = |a: &String| own.is_some_and(|o| bare_address(a).eq_ignore_ascii_case(o));
        let mine = (room > 0)
            .then(|| cc.iter().position(is_own).map(|i| cc.remove(i)))
            .flatten();
        let room = room.saturating_sub(usize::from(mine.is_some()));
        for a in cc.drain(room.min(cc.len())..) {
            dropped.push((a, "over outbound.max_recipients"));
        }
        cc.extend(mine);
    }
    (to, cc, dropped)
}

impl Prepared {
    /// Remove addresses opted out in the state database and rebuild the message.
    pub fn exclude(&mut self, optouts: &OptOuts, max: usize) -> Result<(), QueueError> {
        let own = bare_address(&self.envelope.from);
        let (to, cc, dropped) = apply_policy(
            std::mem::take(&mut self.envelope.to),
            std::mem::take(&mut self.envelope.cc),
            optouts,
            max,
            Some(&own),
        );
        self.envelope.to = to;
        self.envelope.cc = cc;
        if !dropped.is_empty() {
            self.raw = message::build(&self.envelope, &self.rendered.body)?;
            self.dropped.extend(dropped);
        }
        Ok(())
    }
}

/// Queue a prepared report: the opt-outs of the database too (`prepare` saw
/// only the config's) are left out, then the case is recorded and its mail
/// queued. What was left out stays listed in `p.dropped`.
pub fn submit(
    config: &Config,
    store: &Store,
    p: &mut Prepared,
    now: DateTime<Utc>,
) -> Result<Created, QueueError> {
    let optouts = crate::flows::optout::all(config, store)?;
    p.exclude(&optouts, config.file.outbound.max_recipients)?;
    queue(config, store, p, now)
}

/// Record the case and queue its mail. Idempotent: the same input finds the
/// existing case and queues nothing.
pub fn queue(
    config: &Config,
    store: &Store,
    p: &Prepared,
    now: DateTime<Utc>,
) -> Result<Created, QueueError> {
    let case = case_of(p, now);
    let mut entry = outbox_entry_of(config, p, &case.id, now);
    // A later version of a series whose regression was accepted, or a
    // metric someone said to ignore: the decision is carried over, and the
    // mail is held instead of sent.
    let carried = carried_decision(store, &case)?;
    if let Some(c) = &carried {
        entry.state = OutboxState::Held;
        entry.held_because = Some(carried_hold(&c.held_because));
    }
    let created = store.create_case(
        &case,
        Cause::Report {
            input: p.input.clone(),
        },
        &entry,
        &p.raw,
    )?;
    if let (Created::New(new), Some(c)) = (&created, carried) {
        let new = store.set_state(&new.id, c.state, Cause::system(c.why), &c.note)?;
        return Ok(Created::New(new));
    }
    Ok(created)
}

/// The case a prepared report opens: its facts, queued.
fn case_of(p: &Prepared, now: DateTime<Utc>) -> Case {
    let r = &p.report;
    Case {
        id: CaseId::from_key(&r.case_key),
        key: r.case_key.clone(),
        state: CaseState::Queued,
        subject: p.rendered.subject.clone(),
        message_id: p.envelope.message_id.clone(),
        commit: r.view.commit.sha.clone(),
        commit_subject: r.view.commit.subject.clone(),
        testcase: r.view.test.testcase.clone(),
        headline_metric: r.headline.metric.clone(),
        headline_change: r.view.headline.change_signed.clone(),
        verdict: crate::model::case::ReportKind::parse(&r.view.headline.verdict),
        subsystem: r.view.subsystem.clone(),
        to: p.envelope.to.clone(),
        cc: p.envelope.cc.clone(),
        references: p.envelope.references.clone(),
        author: p.author.clone(),
        committer: p.committer.clone(),
        bisect: r.bisect.clone(),
        adopted: false,
        base: p.base.clone(),
        baseline: p.baseline.clone(),
        verified: None,
        contributors: Vec::new(),
        moved_by: None,
        moved_by_mail: None,
        question: None,
        robot_people: Vec::new(),
        unread: None,
        created: now,
        updated: now,
    }
}

/// The report's mail as the outbox queues it: each address once, held for
/// moderation or for the reason the report gave, not before its time.
fn outbox_entry_of(config: &Config, p: &Prepared, id: &CaseId, now: DateTime<Utc>) -> OutboxEntry {
    // The envelope names each address once, in To and Cc alike.
    let mut seen = std::collections::HashSet::new();
    let recipients = p
        .envelope
        .to
        .iter()
        .chain(&p.envelope.cc)
        .map(|a| bare_address(a))
        .filter(|a| seen.insert(a.clone()))
        .collect();
    let mut entry = OutboxEntry::queued(
        p.envelope.message_id.clone(),
        id.clone(),
        crate::model::OutboxKind::Report,
        p.rendered.subject.clone(),
        recipients,
        now,
    );
    if config.file.outbound.moderation {
        entry.state = OutboxState::Held;
        entry.held_because =
            Some("moderation (outbound.moderation): every report waits for an operator".into());
    }
    if let Some(why) = &p.held_because {
        // Never dropped: held with the reason until a human approves it
        // (`outbox approve`) or drops it.
        entry.state = OutboxState::Held;
        entry.held_because = Some(why.clone());
    }
    if let Some(t) = p.not_before {
        entry.next_attempt_at = t;
    }
    entry
}

/// What a report held by a carried-over decision records as the reason it
/// waits (`ignores drop` finds the reports its rule held by it).
pub fn carried_hold(reason: &str) -> String {
    format!("{reason}; approve to mail anyway")
}

/// A decision a new case takes over instead of being mailed.
struct Carried {
    state: CaseState,
    /// The event's cause and note.
    why: String,
    note: String,
    held_because: String,
}

/// The decision `case` carries over: an earlier version's settled case, or
/// a `#perfbot ignore` rule that covers it.
fn carried_decision(store: &Store, case: &Case) -> Result<Option<Carried>, StoreError> {
    if let Some(e) = earlier_version(store, case)? {
        return Ok(Some(Carried {
            state: e.state,
            why: format!("carried over from case {} of an earlier version", e.id),
            note: format!("the decision on {} carried over to this version", e.id),
            held_because: format!(
                "series memory: case {} ({}) of an earlier version of this series was settled as {}",
                e.id, e.subject, e.state
            ),
        }));
    }
    let rules = store.ignores()?;
    Ok(rules
        .iter()
        .rev()
        .find(|r| r.covers(case))
        .map(|r| Carried {
            state: CaseState::WontFix,
            why: format!("ignored: {}", r.describe()),
            note: format!("not reported: {}", r.describe()),
            held_because: r.held_reason(),
        }))
}

/// The case of an earlier version of `case`'s series settled as a
/// regression accepted (not a regression, won't fix, a duplicate). An earlier
/// version is one by the same author with the same patch subject but for its
/// version prefix, or one posted in the same thread (the two reports'
/// References meet) with the same headline metric: a v2 sent in reply to v1
/// may have a new subject, and the patches of one posting share a thread but
/// not a regression.
fn earlier_version(store: &Store, case: &Case) -> Result<Option<Case>, StoreError> {
    let key = series_key(&case.subject);
    let author = |c: &Case| c.to.first().map(|a| bare_address(a).to_ascii_lowercase());
    let same_series =
        |c: &Case| key.is_some() && series_key(&c.subject) == key && author(c) == author(case);
    let same_thread = |c: &Case| {
        c.headline_metric == case.headline_metric
            && c.references.iter().any(|r| case.references.contains(r))
    };
    let accepted = [
        CaseState::NotARegression,
        CaseState::WontFix,
        CaseState::Duplicate,
    ];
    Ok(store
        .cases_in(&accepted)?
        .into_iter()
        .filter(|c| c.id != case.id && c.subject != case.subject)
        .filter(|c| same_series(c) || same_thread(c))
        .max_by_key(|c| c.updated))
}

#[cfg(test)]
mod cap_tests {
    use super::apply_policy;
    use crate::model::ids::OptOuts;

    #[test]
    fn a_long_cc_keeps_perfbots_own_copy() {
        let to = vec!["author@x.org".to_string()];
        let mut cc: Vec<String> = (0..10).map(|i| format!("c{i}@x.org")).collect();
        cc.push("perfbot@ci.example".into());
        let (t, c, dropped) = apply_policy(
            to.clone(),
            cc.clone(),
            &OptOuts::new(Vec::new()),
            5,
            Some("perfbot@ci.example"),
        );
        assert_eq!(t, to);
        assert_eq!(c.len(), 4);
        assert_eq!(c.last().unwrap(), "perfbot@ci.example");
        assert_eq!(dropped.len(), 7);
        // No own copy named: the end of the list is cut, as before.
        let (_, c, _) = apply_policy(to, cc, &OptOuts::new(Vec::new()), 5, None);
        assert_eq!(c, ["c0@x.org", "c1@x.org", "c2@x.org", "c3@x.org"]);
    }
}
