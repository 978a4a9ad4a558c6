//! The kernel test robot's own mails: reading one into a report input
//! (`perfbot parse-report`) and writing it back in the layout it was read in,
//! to compare with the original (`perfbot roundtrip`). The round trip is the
//! measure of how well perfbot knows the robot's format.

use std::path::Path;

use mail_parser::{Address as MailAddress, MessageParser};

use crate::config::Config;
use crate::input::{is_plain_file_name, LoadedInput};
use crate::model::case::{Case, CaseId, CaseState};
use crate::reply::policy::people::RobotPeople;
use crate::report::parse::{parse, Headers, ParseError, ParsedReport};

/// Why a mail could not be read or written back.
#[derive(Debug, thiserror::Error)]
pub enum RobotError {
    #[error("{file}: not a mail (no headers could be read)")]
    NotMail { file: String },
    #[error("{file}: no text part")]
    NoText { file: String },
    /// `line`: the line of the text the error names, shortened (empty when
    /// it names none), so that the reader sees it without counting lines.
    #[error("{file}: {error}{line}")]
    Parse {
        file: String,
        error: ParseError,
        line: String,
    },
    #[error("{file}: the input read from it is not valid: {why}")]
    Input { file: String, why: String },
    #[error("{file}: rendering it back: {why}")]
    Render { file: String, why: String },
    #[error("{file}: attachment {name:?}: {why}")]
    Attachment {
        file: String,
        name: String,
        why: String,
    },
}

/// A mail's attachments (name, decoded contents), in order. Names come from
/// the sender: one that is not a plain file name is refused, never used as
/// a path.
pub fn attachments_of(raw: &[u8], file: &str) -> Result<Vec<(String, Vec<u8>)>, RobotError> {
    use mail_parser::MimeHeaders;
    let msg = MessageParser::default()
        .parse(without_archive_note(raw))
        .ok_or_else(|| RobotError::NotMail { file: file.into() })?;
    let mut out = Vec::new();
    for a in msg.attachments() {
        let Some(name) = a.attachment_name() else {
            continue;
        };
        if !is_plain_file_name(name) {
            return Err(RobotError::Attachment {
                file: file.into(),
                name: name.into(),
                why: "not a plain file name".into(),
            });
        }
        out.push((name.to_string(), a.contents().to_vec()));
    }
    Ok(out)
}

fn mailboxes(a: Option<&MailAddress>) -> Vec<String> {
    let Some(a) = a else {
        return Vec::new();
    };
    a.iter()
        .filter_map(|m| {
            let email = m.address()?;
            Some(match m.name() {
                Some(n) if !n.is_empty() => crate::model::ids::mailbox(n, email),
                _ => email.to_string(),
            })
        })
        .collect()
}

/// A mail's headers and its first text part (decoded; line ends as `\n`).
pub fn read_mail(raw: &[u8], file: &str) -> Result<(Headers, String), RobotError> {
    let raw = without_archive_note(raw);
    let msg = MessageParser::default()
        .parse(raw)
        .ok_or_else(|| RobotError::NotMail { file: file.into() })?;
    let flattened = flattened_text_part(raw);
    // A copy re-encoded as UTF-8 that still says iso-8859-1 (archives do
    // this) is read as UTF-8: by its label, `±` would read as `Â±`.
    let mut body = match &flattened {
        Some(text) => text.clone(),
        None => msg
            .text_part(0)
            .and_then(|p| crate::flows::ingest::parse::as_written(raw, p))
            .map(Ok)
            .unwrap_or_else(|| {
                msg.body_text(0)
                    .map(|t| t.into_owned())
                    .ok_or_else(|| RobotError::NoText { file: file.into() })
            })?
            .replace("\r\n", "\n"),
    };
    // A copy resent by hand from a client that flows its lines.
    let mut flowed = false;
    if let Some(ct) = msg.text_part(0).and_then(|p| {
        use mail_parser::MimeHeaders;
        p.content_type()
    }) {
        let is = |k: &str, v: &str| ct.attribute(k).is_some_and(|a| a.eq_ignore_ascii_case(v));
        if flattened.is_none() && is("format", "flowed") {
            body = crate::flows::ingest::flowed::unflow(&body, is("delsp", "yes"));
            flowed = true;
        }
    }
    let body = without_list_footer(body);
    let h = Headers {
        flowed,
        ..headers_of(&msg)
    };
    Ok((h, body))
}

/// A mail's headers alone: what a mail without a readable text says of
/// itself (its sender, its recipients, its threading).
pub fn read_headers(raw: &[u8], file: &str) -> Result<Headers, RobotError> {
    let msg = MessageParser::default()
        .parse(without_archive_note(raw))
        .ok_or_else(|| RobotError::NotMail { file: file.into() })?;
    Ok(headers_of(&msg))
}

fn headers_of(msg: &mail_parser::Message) -> Headers {
    let from = msg.from().and_then(|f| f.first());
    Headers {
        subject: subject_of(msg),
        from_name: from.and_then(|f| f.name()).unwrap_or("").to_string(),
        from_email: from.and_then(|f| f.address()).unwrap_or("").to_string(),
        to: mailboxes(msg.to()),
        cc: mailboxes(msg.cc()),
        date: msg.date().map(|d| d.to_rfc3339()),
        message_id: msg
            .message_id()
            .map(|m| format!("<{m}>"))
            .unwrap_or_default(),
        in_reply_to: msg
            .in_reply_to()
            .as_text()
            .map(|m| format!("<{}>", m.trim_matches(['<', '>']))),
        references: msg
            .references()
            .as_text_list()
            .unwrap_or_default()
            .iter()
            .map(|m| format!("<{}>", m.trim_matches(['<', '>'])))
            .collect(),
        attachments: msg
            .attachments()
            .filter_map(|a| {
                use mail_parser::MimeHeaders;
                a.attachment_name().map(str::to_string)
            })
            .collect(),
        flowed: false,
    }
}

/// The body as its sender wrote it: without the footer a mailing list
/// appended to its copy (Mailman's `___` rule and "… mailing list" lines,
/// Google Groups' "You received this message because …" signature).
fn without_list_footer(mut body: String) -> String {
    const MAILMAN: &str = "\n_______________________________________________\n";
    const GROUPS: &str =
        "\n-- \nYou received this message because you are subscribed to the Google Groups";
    if let Some(at) = body.rfind(MAILMAN) {
        let after = &body[at + MAILMAN.len()..];
        if after
            .lines()
            .next()
            .is_some_and(|l| l.ends_with(" mailing list"))
        {
            body.truncate(at + 1);
        }
    }
    if let Some(at) = body.rfind(GROUPS) {
        body.truncate(at + 1);
    }
    body
}

/// The text part of an archived copy whose MIME parts were flattened into
/// `[text/plain; charset=UTF-8 part:]` lines under the headers: the lines
/// after that marker, up to the next part's.
fn flattened_text_part(raw: &[u8]) -> Option<String> {
    // Most mails have no marker: they are not copied to look for one.
    memchr::memmem::find(raw, b" part:]")?;
    let text = std::str::from_utf8(raw).ok()?.replace("\r\n", "\n");
    let (_, body) = text.split_once("\n\n")?;
    let is_marker = |l: &str| {
        l.starts_with('[') && l.ends_with(" part:]") && l[1..].split(['/', ';']).count() >= 2
    };
    let (first, rest) = body.split_once('\n')?;
    if !(is_marker(first) && first.starts_with("[text/plain")) {
        return None;
    }
    let mut out = String::new();
    for l in rest.split_inclusive('\n') {
        if is_marker(l.trim_end_matches('\n')) {
            break;
        }
        out.push_str(l);
    }
    // The line break before the next part's delimiter is the delimiter's
    // (RFC 2046), kept by the copy as a blank line.
    if out.ends_with("\n\n") {
        out.pop();
    }
    Some(out)
}

/// A mail saved from an archive with a note above it (the lore URL, a
/// `[note]`, then a line of dashes): the mail starts after the dashes.
fn without_archive_note(raw: &[u8]) -> &[u8] {
    if !raw.starts_with(b"http") {
        return raw;
    }
    let mut at = 0;
    for _ in 0..6 {
        let Some(nl) = memchr::memchr(b'\n', &raw[at..]) else {
            return raw;
        };
        let line = &raw[at..at + nl];
        at += nl + 1;
        if line.len() >= 20 && line.iter().all(|&b| b == b'-' || b == b'\r') {
            return &raw[at..];
        }
    }
    raw
}

impl RobotError {
    /// Not a performance report (another kind of mail, or of robot mail).
    pub fn not_a_report(&self) -> bool {
        matches!(self, RobotError::Parse { error, .. } if error.not_a_report())
            || matches!(self, RobotError::NoText { .. })
    }
}

/// `: "…"`, the text's 1-based line `n` (shortened), or nothing.
fn quoted_line(text: &str, n: usize) -> String {
    const MAX: usize = 72;
    let Some(line) = n.checked_sub(1).and_then(|i| text.lines().nth(i)) else {
        return String::new();
    };
    let line = line.trim();
    match line.char_indices().nth(MAX) {
        Some((cut, _)) => format!(": {:?}", format!("{}…", &line[..cut])),
        None => format!(": {line:?}"),
    }
}

/// A robot mail's headers, body and what the body reports.
fn read_report(raw: &[u8], file: &str) -> Result<(Headers, String, ParsedReport), RobotError> {
    let (h, body) = read_mail(raw, file)?;
    let parsed = parse(&h, &body).map_err(|error| RobotError::Parse {
        file: file.into(),
        line: quoted_line(&body, error.line),
        error,
    })?;
    Ok((h, body, parsed))
}

/// The Subject as the mail has it: unfolded by removing the line breaks
/// only (RFC 5322 §2.2.3), so the robot's double spaces stay; encoded words
/// decoded (then as mail-parser reads them).
fn subject_of(msg: &mail_parser::Message) -> String {
    match msg.header_raw("Subject") {
        Some(raw) if !raw.contains("=?") => {
            let unfolded = raw.replace("\r\n", "").replace('\n', "");
            let t = unfolded.strip_prefix(' ').unwrap_or(&unfolded);
            t.trim_end_matches(['\r', '\n']).to_string()
        }
        _ => msg.subject().unwrap_or("").to_string(),
    }
}

/// `perfbot parse-report`: a robot mail → what it reports.
pub fn parse_report(raw: &[u8], file: &str) -> Result<ParsedReport, RobotError> {
    read_report(raw, file).map(|(_, _, parsed)| parsed)
}

/// A robot mail read and written back.
pub struct ReadBack {
    /// The mail's body.
    pub original: String,
    /// What it reports, with the input's `spacing`: the blank lines before
    /// sections where the mail differs from its layout.
    pub parsed: ParsedReport,
    /// perfbot's body for it (its layout and sender, the recorded spacing),
    /// or why there is none.
    pub rendered: Result<String, RobotError>,
    /// The mail's Subject and perfbot's for it.
    pub subjects: Option<(String, String)>,
    /// The address and threading headers that differ from the mail's.
    pub headers: Vec<HeaderDiff>,
    /// How many sections `spacing` records.
    pub spaced: usize,
    /// How many lines of the mail the rendering lacks (the input's `unread`).
    pub unread: usize,
}

/// `perfbot parse-report` for rendering, and the round trip: the mail is
/// rendered once with its layout's own spacing, both bodies are measured the
/// same way, and where they differ the mail's counts are recorded in the
/// input and applied to the rendering (as `report` applies them).
pub fn read_back(config: &Config, raw: &[u8], file: &str) -> Result<ReadBack, RobotError> {
    use crate::model::spacing::{apply, differences, insert_remarks, measure, remove_remarks};
    let (h, original, mut parsed) = read_report(raw, file)?;
    let mut spaced = 0;
    // Blank lines are measured without the operators' remarks, which are
    // placed after the spacing (as `report` does).
    let remarks = parsed.input.style.remarks.clone();
    let mut subjects = None;
    let mut headers = Vec::new();
    let rendered = render_back(config, &h, &parsed, file).map(|back| {
        let ours = back.body;
        subjects = Some((h.subject.clone(), back.subject));
        headers = back.headers;
        if let Some(t) = back.shape {
            parsed.input.style.subject_template = Some(t);
        }
        // The text after the signature is placed last, after the spacing.
        let trailer = parsed.input.trailer.as_ref().map(|t| format!("{t}\n"));
        let untrailed = |body: &str| -> String {
            match &trailer {
                Some(t) => body.strip_suffix(t.as_str()).unwrap_or(body).to_string(),
                None => body.to_string(),
            }
        };
        let ours = remove_remarks(&untrailed(&ours), &remarks);
        let theirs = remove_remarks(&untrailed(&original), &remarks);
        let spacing = differences(&measure(&theirs), &measure(&ours));
        spaced = spacing.len();
        if spaced > 0 {
            parsed.input.style.spacing = spacing.clone();
        }
        let back = insert_remarks(&apply(&ours, &spacing), &remarks);
        let back = format!("{back}{}", trailer.as_deref().unwrap_or(""));
        if h.flowed {
            // What a flowed copy of it would carry: no space at a line's end
            // but the signature separator's.
            back.split('\n')
                .map(|l| if l == "-- " { l } else { l.trim_end() })
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            back
        }
    });
    let unread = rendered
        .as_ref()
        .map(|back| unread_lines(&original, back))
        .unwrap_or_default();
    let unread_count = unread.len();
    parsed.input.unread = unread;
    Ok(ReadBack {
        original,
        parsed,
        rendered,
        spaced,
        subjects,
        headers,
        unread: unread_count,
    })
}

/// The lines of `original` that `back` does not have: what the reader read
/// past without reproducing (a blank line is not content).
fn unread_lines(original: &str, back: &str) -> Vec<crate::input::UnreadLine> {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::from_lines(original, back);
    diff.iter_all_changes()
        .filter(|c| c.tag() == ChangeTag::Delete)
        .filter_map(|c| {
            let text = c.value().trim_end_matches(['\n', '\r']);
            (!text.trim().is_empty()).then(|| crate::input::UnreadLine {
                line: c.old_index().map_or(0, |i| i + 1),
                text: text.to_string(),
            })
        })
        .collect()
}

/// One mail's round trip.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RoundTrip {
    pub file: String,
    pub layout: Option<String>,
    /// The body came back byte for byte (Message-ID links aside).
    pub identical: bool,
    /// Sections whose blank lines differ from the layout's (recorded in the
    /// input's `spacing`).
    pub spaced: usize,
    /// Lines of the mail perfbot does not write back (recorded in the
    /// input's `unread`).
    pub unread: usize,
    /// Why it could not be done at all.
    pub error: Option<String>,
    /// The first differing lines: (line, original, rendered).
    pub diff: Vec<(usize, String, String)>,
    /// The Subject came back as the mail has it.
    pub subject_identical: bool,
    /// When it did not: (the mail's, perfbot's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<(String, String)>,
    /// To, Cc, In-Reply-To and References (those the mail has) came back
    /// as the mail has them, as `report` would send it.
    pub headers_identical: bool,
    /// Those that did not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<HeaderDiff>,
    /// A unified diff of the original (`-`) and perfbot's (`+`) body.
    #[serde(skip)]
    pub unified: String,
}

/// Parse `raw`, render it back with the layout it was read in and the
/// original's sender, and compare the bodies.
pub fn roundtrip(config: &Config, raw: &[u8], file: &str) -> RoundTrip {
    roundtrip_inner(config, raw, file).unwrap_or_else(|e| RoundTrip::failed(file, e))
}

impl RoundTrip {
    /// A mail that could not be read or rendered at all, and why.
    pub fn failed(file: &str, why: impl std::fmt::Display) -> RoundTrip {
        RoundTrip {
            file: file.into(),
            layout: None,
            identical: false,
            spaced: 0,
            unread: 0,
            error: Some(why.to_string()),
            diff: Vec::new(),
            subject_identical: false,
            subject: None,
            headers_identical: false,
            headers: Vec::new(),
            unified: String::new(),
        }
    }
}

fn roundtrip_inner(config: &Config, raw: &[u8], file: &str) -> Result<RoundTrip, RobotError> {
    let ReadBack {
        original,
        parsed,
        rendered,
        spaced,
        subjects,
        headers,
        unread,
    } = read_back(config, raw, file)?;
    let rendered = rendered?;
    let diff = first_differences(&original, &rendered, 5);
    let unified = similar::TextDiff::from_lines(&original, &rendered)
        .unified_diff()
        .context_radius(2)
        .header("original", "perfbot")
        .to_string();
    let subject_identical = subjects.as_ref().is_some_and(|(a, b)| a == b);
    Ok(RoundTrip {
        file: file.into(),
        layout: Some(parsed.layout.name().into()),
        identical: diff.is_empty(),
        spaced,
        unread,
        error: None,
        diff,
        subject_identical,
        subject: subjects.filter(|_| !subject_identical),
        headers_identical: headers.is_empty(),
        headers,
        unified,
    })
}

/// The body perfbot writes for what `parsed` read, as the original's sender
/// and in its layout; links made from perfbot's Message-ID are given the
/// original's.
pub fn render_back(
    config: &Config,
    h: &Headers,
    parsed: &ParsedReport,
    file: &str,
) -> Result<Back, RobotError> {
    let c = as_the_sender(config, h, parsed);
    let loaded = LoadedInput::from_input(parsed.input.clone(), Path::new(file)).map_err(|e| {
        RobotError::Input {
            file: file.into(),
            why: e.to_string(),
        }
    })?;
    // Built and addressed once, as `report` would send it (its own checks
    // and caps).
    let layout = Some(parsed.layout.name());
    let p = crate::flows::report::prepare_loaded(&c, &loaded, layout, true, chrono::Utc::now())
        .map_err(|e| RobotError::Render {
            file: file.into(),
            why: e.to_string(),
        })?;
    let original_id = h.message_id.trim_matches(['<', '>']);
    let body = p
        .rendered
        .body
        .replace(&p.report.view.message_id, original_id);
    let (subject, shape) = subject_back(h, p.rendered.subject, &p.report.view);
    let headers = header_differences(h, &p.envelope);
    Ok(Back {
        body,
        subject,
        shape,
        headers,
    })
}

/// `config` as the original's sender had it: its name and address (its
/// Reported-by, else its From), and the links and closing lines it read.
fn as_the_sender(config: &Config, h: &Headers, parsed: &ParsedReport) -> Config {
    let mut c = config.clone();
    let (name, email) = parsed
        .reported_by
        .clone()
        .unwrap_or_else(|| (h.from_name.clone(), h.from_email.clone()));
    if !email.is_empty() {
        c.file.bot.name = name;
        c.file.bot.email = email;
    }
    let r = &mut c.file.report;
    if let Some(m) = &parsed.materials_base {
        r.materials_url = m.clone();
    } else {
        r.materials_url.clear();
    }
    if let Some(a) = &parsed.archive_base {
        r.archive_url = a.clone();
    }
    if let Some(d) = &parsed.disclaimer {
        r.disclaimer = d.clone();
    }
    if let Some(sig) = &parsed.signature {
        r.signature = sig.clone();
    }
    if let Some(rep) = &parsed.reproduce {
        r.reproduce = rep.clone();
    }
    if let Some(name) = &parsed.signoff {
        r.signoff = name.clone();
    }
    // What perfbot adds to its own reports is not the robot's: no noise
    // interval, no regzbot paragraph, no list policy's prefix or muting.
    c.file.noise.enabled = false;
    c.file.regzbot.enabled = false;
    c.file.lists.policy_file = std::path::PathBuf::new();
    c
}

/// The layout's Subject (`rendered`), or the mail's shape of it where that
/// differs and the shape renders the mail's Subject back (with the shape).
fn subject_back(
    h: &Headers,
    rendered: String,
    view: &crate::report::view::ReportView,
) -> (String, Option<String>) {
    if rendered == h.subject {
        return (rendered, None);
    }
    let view = serde_json::to_value(view).expect("the view serialises");
    let t = crate::report::subject::shape(&h.subject, &view);
    match crate::templates::plain().render_template(&t, &view) {
        Ok(s) if s == h.subject => (s, Some(t)),
        _ => (rendered, None),
    }
}

/// A header that came back other than the mail has it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HeaderDiff {
    pub field: String,
    pub mail: String,
    pub perfbot: String,
}

/// To and Cc (by address, in order), In-Reply-To and References (where the
/// mail has them) of the mail against perfbot's envelope for it.
fn header_differences(h: &Headers, e: &crate::mail::message::Envelope) -> Vec<HeaderDiff> {
    let bare = |list: &[String]| -> String {
        list.iter()
            .map(|a| crate::model::ids::bare_address(a).to_ascii_lowercase())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ids = |list: &mut dyn Iterator<Item = String>| -> String {
        list.map(|m| m.trim_matches(['<', '>']).to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut pairs = vec![
        ("To", bare(&h.to), bare(&e.to)),
        ("Cc", bare(&h.cc), bare(&e.cc)),
        (
            "In-Reply-To",
            ids(&mut h.in_reply_to.clone().into_iter()),
            ids(&mut e.in_reply_to.iter().map(|m| m.to_string())),
        ),
    ];
    if !h.references.is_empty() {
        pairs.push((
            "References",
            ids(&mut h.references.iter().cloned()),
            ids(&mut e.references.iter().map(|m| m.to_string())),
        ));
    }
    pairs
        .into_iter()
        .filter(|(_, a, b)| a != b)
        .map(|(f, a, b)| HeaderDiff {
            field: f.into(),
            mail: a,
            perfbot: b,
        })
        .collect()
}

/// What `render_back` wrote.
pub struct Back {
    pub body: String,
    /// perfbot's Subject: the layout's, or the mail's shape of it.
    pub subject: String,
    /// The mail's Subject shape, where the layout's differs.
    pub shape: Option<String>,
    /// The address and threading headers that differ from the mail's.
    pub headers: Vec<HeaderDiff>,
}

/// Up to `max` differing lines of two texts, compared line by line.
fn first_differences(a: &str, b: &str, max: usize) -> Vec<(usize, String, String)> {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut out = Vec::new();
    for i in 0..la.len().max(lb.len()) {
        let (x, y) = (la.get(i).copied(), lb.get(i).copied());
        if x != y {
            out.push((
                i + 1,
                x.unwrap_or("<end>").to_string(),
                y.unwrap_or("<end>").to_string(),
            ));
            if out.len() >= max {
                break;
            }
        }
    }
    if out.is_empty() && a != b {
        // Same lines, different ends (a trailing newline).
        out.push((
            la.len(),
            format!("{} bytes", a.len()),
            format!("{} bytes", b.len()),
        ));
    }
    out
}

/// The case of an adopted robot report: what the report says, keyed by its
/// Message-ID (one case per report mail), state `reported`. Every report the
/// robot sent has its headline's row; one without is cut short (inside its
/// table), and that is the error.
pub fn adopted_case(
    p: &ParsedReport,
    head: &crate::flows::ingest::parse::Head,
) -> Result<Case, String> {
    let i = &p.input;
    let metric = i
        .headline
        .as_ref()
        .map(|h| h.metric.clone())
        .unwrap_or_default();
    // The headline's test: the one the robot drew the bisect of (an
    // operator's remark above the details may carry a table of another
    // machine first), else the first.
    let first = i
        .tests
        .iter()
        .find(|t| t.bisect.is_some())
        .or(i.tests.first());
    let change = first
        .and_then(|t| t.aggregated.as_ref())
        .and_then(|rows| rows.iter().find(|r| r.metric == metric))
        .and_then(|r| r.change.clone())
        .unwrap_or_default();
    if change.is_empty() {
        return Err(format!(
            "its table has no row for its headline {metric:?}: cut short?"
        ));
    }
    Ok(adopted(
        head,
        Adoption {
            commit: i.commit.sha.clone(),
            commit_subject: i.commit.subject.clone(),
            testcase: first.map(|t| t.testcase.clone()).unwrap_or_default(),
            metric,
            change,
            kind: i
                .headline
                .as_ref()
                .and_then(|h| h.kind.clone())
                .unwrap_or_default(),
            to: i.recipients.to.clone(),
            cc: i.recipients.cc.clone(),
            author: i.commit.author.as_ref().map(|a| a.email.clone()),
            base: i.base.sha.clone(),
            unread: None,
        },
    ))
}

/// The case of a tracked robot's report whose body could not be read in
/// full (`why`): what its Subject, its sentence and its headers say, so
/// that its thread is followed. None when they name no headline either.
pub fn glanced_case(
    raw: &[u8],
    head: &crate::flows::ingest::parse::Head,
    file: &str,
    why: &str,
) -> Option<Case> {
    use crate::report::parse::glance;
    // The body where there is one; a mail without text has its headers.
    let (h, body) = match read_mail(raw, file) {
        Ok((h, body)) => (h, Some(body)),
        Err(_) => (read_headers(raw, file).ok()?, None),
    };
    let g = glance::glance(&h.subject, body.as_deref())?;
    let testcase = g.metric.split('.').next().unwrap_or_default().to_string();
    Some(adopted(
        head,
        Adoption {
            commit: g.commit.unwrap_or_default(),
            commit_subject: g.commit_subject.unwrap_or_default(),
            testcase,
            metric: g.metric,
            change: g.change,
            kind: g.kind,
            author: glance::addressee(&h.to),
            to: h.to,
            cc: h.cc,
            base: String::new(),
            unread: Some(why.to_string()),
        },
    ))
}

/// What an adopted case is made of, read in full or at a glance.
struct Adoption {
    commit: String,
    commit_subject: String,
    testcase: String,
    metric: String,
    change: String,
    /// `regression`, `improvement`.
    kind: String,
    to: Vec<String>,
    cc: Vec<String>,
    author: Option<String>,
    base: String,
    unread: Option<String>,
}

fn adopted(head: &crate::flows::ingest::parse::Head, a: Adoption) -> Case {
    use sha2::Digest;
    let key: String = sha2::Sha256::digest(format!("adopted\0{}", head.message_id).as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let created = head.date.unwrap_or_else(chrono::Utc::now);
    Case {
        id: CaseId::from_key(&key),
        key,
        state: CaseState::Reported,
        subject: head.subject.clone(),
        message_id: head.message_id.clone(),
        commit: a.commit,
        subsystem: crate::report::build::subsystem(&a.commit_subject),
        commit_subject: a.commit_subject,
        testcase: a.testcase,
        headline_metric: a.metric,
        headline_change: a.change,
        verdict: a.kind.into(),
        to: a.to,
        cc: a.cc,
        // The thread the report answers: a later version of a series
        // posted there finds this case through it.
        references: {
            let mut r = head.references.clone();
            r.extend(
                head.in_reply_to
                    .iter()
                    .filter(|m| !head.references.contains(m))
                    .cloned(),
            );
            r
        },
        author: a.author,
        committer: None,
        bisect: Vec::new(),
        adopted: true,
        base: a.base,
        baseline: Vec::new(),
        verified: None,
        contributors: Vec::new(),
        moved_by: None,
        moved_by_mail: None,
        question: None,
        robot_people: Vec::new(),
        unread: a.unread,
        created,
        updated: created,
    }
}

/// One message of a replayed thread, as perfbot read it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ReplayStep {
    pub file: String,
    pub outcome: StepOutcome,
    pub from: String,
    pub intent: Option<crate::reply::understand::Intent>,
    pub confidence: Option<f64>,
    pub role: Option<crate::reply::policy::trust::Role>,
    pub evidence: Option<String>,
    /// The case's state after this message.
    pub state: Option<CaseState>,
}

/// What became of one message of a replayed thread.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(into = "String")]
pub enum StepOutcome {
    /// The report: a case opened for it.
    Adopted,
    /// A person's reply.
    Reply,
    /// Another robot's mail.
    Robot,
    /// perfbot's own mail.
    Own,
    Duplicate,
    /// A report already adopted at a glance, now read in full.
    ReadInFull,
    Unmatched,
    Held,
    Quarantined(String),
    /// The review at the thread's end handed the case to a human.
    Review,
}

impl StepOutcome {
    /// The outcome without its detail (a quarantine's reason).
    pub fn as_str(&self) -> &'static str {
        match self {
            StepOutcome::Adopted => "adopted",
            StepOutcome::Reply => "reply",
            StepOutcome::Robot => "robot",
            StepOutcome::Own => "own",
            StepOutcome::Duplicate => "duplicate",
            StepOutcome::ReadInFull => "read in full",
            StepOutcome::Unmatched => "unmatched",
            StepOutcome::Held => "held",
            StepOutcome::Quarantined(_) => "quarantined",
            StepOutcome::Review => "review",
        }
    }
}

impl std::fmt::Display for StepOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepOutcome::Quarantined(why) => write!(f, "quarantined: {why}"),
            other => f.write_str(other.as_str()),
        }
    }
}

impl From<StepOutcome> for String {
    fn from(o: StepOutcome) -> String {
        o.to_string()
    }
}

/// A thread replayed: each message's reading and the case's final state.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Replay {
    pub thread: String,
    pub case: Option<String>,
    pub steps: Vec<ReplayStep>,
    pub final_state: Option<CaseState>,
    /// A question to the robot's people left open beside the final state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<crate::model::case::Question>,
}

/// Replay one thread folder (`00-report.eml`, then the replies in name
/// order) into `store`: the report is adopted (the config's `[track]` plus
/// the report's own sender), the replies are ingested as ingestion reads them.
/// `reports` are the robot's reports known besides the store's (the other
/// threads' of a replay, `report_recipients`): whom the robot copies on them
/// is its people.
pub fn replay(
    config: &Config,
    store: &crate::store::Store,
    dir: &Path,
    reports: &RobotPeople,
) -> Result<Replay, ReplayError> {
    let files = thread_mails(dir)?;
    let c = tracking_the_sender(config, &files[0])?;
    let mut ingestor = crate::flows::ingest::Ingestor::new(&c, store)?;
    ingestor.learn_people(reports);
    let mut steps = Vec::new();
    let mut case: Option<CaseId> = None;
    for f in &files {
        let raw = std::fs::read(f).map_err(|e| ReplayError::Read(f.display().to_string(), e))?;
        let shown = f
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let outcome = ingestor.ingest(&raw, &shown)?;
        let mut step = ReplayStep::of(shown, outcome, store, &mut case);
        if let Some(id) = &case {
            step.state = store.case(id).ok().map(|c| c.state);
        }
        steps.push(step);
    }
    store.flush()?;
    // The thread is over: what the scheduler would have done by now with a
    // case left open on words that may have decided it.
    if let Some(id) = &case {
        if let Some(r) = crate::flows::review::run_case(&c, store, id, chrono::Utc::now())? {
            steps.push(ReplayStep::review(&r));
        }
    }
    let last = case.as_ref().and_then(|id| store.case(id).ok());
    Ok(Replay {
        thread: dir.display().to_string(),
        case: case.map(|c| c.to_string()),
        steps,
        final_state: last.as_ref().map(|c| c.state),
        question: last.and_then(|c| c.question),
    })
}

/// A thread folder's mails in name order, `00-report.eml` first.
fn thread_mails(dir: &Path) -> Result<Vec<std::path::PathBuf>, ReplayError> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| ReplayError::Read(dir.display().to_string(), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .collect();
    files.sort();
    if files
        .first()
        .is_none_or(|p| p.file_name().is_none_or(|n| n != "00-report.eml"))
    {
        return Err(ReplayError::NoReport(dir.display().to_string()));
    }
    Ok(files)
}

/// The config, following the report's own sender whatever it names (its
/// people, who answer from its address under their own names too, are the
/// adopted case's).
fn tracking_the_sender(config: &Config, report: &Path) -> Result<Config, ReplayError> {
    let raw =
        std::fs::read(report).map_err(|e| ReplayError::Read(report.display().to_string(), e))?;
    let mut c = config.clone();
    if let Ok(h) = read_headers(&raw, &report.display().to_string()) {
        if let Some(a) = crate::model::Address::parse(&h.from_email) {
            if !c.file.track.senders.contains(&a) {
                c.file.track.senders.push(a);
            }
        }
    }
    Ok(c)
}

impl ReplayStep {
    /// How one ingested mail reads; `case` becomes the thread's case when
    /// the mail opens or names it.
    fn of(
        file: String,
        outcome: crate::flows::ingest::Outcome,
        store: &crate::store::Store,
        case: &mut Option<CaseId>,
    ) -> ReplayStep {
        use crate::flows::ingest::Outcome;
        let mut step = ReplayStep {
            file,
            outcome: StepOutcome::Held,
            from: String::new(),
            intent: None,
            confidence: None,
            role: None,
            evidence: None,
            state: None,
        };
        match outcome {
            Outcome::Adopted { case: id } => {
                step.outcome = StepOutcome::Adopted;
                // Read at a glance only: say why beside it.
                step.evidence = store
                    .case(&id)
                    .ok()
                    .and_then(|c| c.unread)
                    .map(|why| format!("read at a glance only: {why}"));
                *case = Some(id);
            }
            Outcome::New {
                case: id,
                entry,
                sender,
                handled,
            } => {
                step.from = crate::model::ids::display_mailbox(&entry.from_name, &entry.from);
                step.outcome = match sender {
                    crate::model::SenderKind::Person => StepOutcome::Reply,
                    crate::model::SenderKind::Own => StepOutcome::Own,
                    crate::model::SenderKind::Bot(_) => StepOutcome::Robot,
                };
                if let Some(h) = handled {
                    step.intent = Some(h.understanding.intent);
                    step.confidence = Some(h.understanding.confidence);
                    step.role = Some(h.role);
                    step.evidence = Some(h.understanding.evidence.clone());
                }
                case.get_or_insert(id);
            }
            Outcome::Duplicate => step.outcome = StepOutcome::Duplicate,
            Outcome::ReadInFull { case: id } => {
                step.outcome = StepOutcome::ReadInFull;
                case.get_or_insert(id);
            }
            Outcome::Unmatched => step.outcome = StepOutcome::Unmatched,
            Outcome::Held => step.outcome = StepOutcome::Held,
            Outcome::Quarantined(why) => step.outcome = StepOutcome::Quarantined(why.to_string()),
        }
        step
    }

    /// The step the review takes at the thread's end: the case goes to a
    /// human on words that may have decided it.
    fn review(r: &crate::flows::review::Review) -> ReplayStep {
        ReplayStep {
            file: "(review)".into(),
            outcome: StepOutcome::Review,
            from: r.from.clone(),
            intent: Some(r.decision),
            confidence: Some(r.signal),
            role: None,
            evidence: Some(r.evidence.clone()),
            state: Some(CaseState::NeedsHuman),
        }
    }
}

/// The recipients of the reports (`00-report.eml`) of thread folders, as a
/// daemon that followed the lists would have them in its store. A report
/// whose headers cannot be read counts for nothing here (its replay says
/// why).
pub fn report_recipients(dirs: &[std::path::PathBuf]) -> RobotPeople {
    let mut p = RobotPeople::default();
    for d in dirs {
        let f = d.join("00-report.eml");
        let Ok(raw) = std::fs::read(&f) else {
            continue;
        };
        if let Ok(h) = read_headers(&raw, &f.display().to_string()) {
            if let Some(robot) = crate::model::Address::parse(&h.from_email) {
                p.observe(&robot, &h.message_id, &h.to, &h.cc);
            }
        }
    }
    p
}

/// Why a thread could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("{0}: {1}")]
    Read(String, std::io::Error),
    #[error("{0}: no 00-report.eml (a thread folder holds the report, then its replies)")]
    NoReport(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_line_an_error_names_is_quoted_short() {
        let long = format!("{}± tail", "x".repeat(71));
        let text = format!("first\n  second  \n{long}\n");
        for (n, want) in [
            (0, String::new()),
            (1, ": \"first\"".to_string()),
            (2, ": \"second\"".to_string()),
            (3, format!(": \"{}±…\"", "x".repeat(71))),
            (9, String::new()),
        ] {
            assert_eq!(super::quoted_line(&text, n), want, "{n}");
        }
    }
}
