//! The kernel test robot's own mails: reading one into a report input
//! (`perfbot parse-report`) and writing it back in the layout it was read in,
//! to compare with the original (`perfbot roundtrip`). The round trip is the
//! measure of how well perfbot knows the robot's format.

use std::path::Path;

use mail_parser::{Address as MailAddress, MessageParser};

use crate::config::Config;
use crate::input::LoadedInput;
use crate::report::build::build;
use crate::report::parse::{parse, Headers, ParseError, ParsedReport};
use crate::report::render::render;

/// Why a mail could not be read or written back.
#[derive(Debug, thiserror::Error)]
pub enum RobotError {
    #[error("{file}: not a mail (no headers could be read)")]
    NotMail { file: String },
    #[error("{file}: no text part")]
    NoText { file: String },
    #[error("{file}: {error}")]
    Parse { file: String, error: ParseError },
    #[error("{file}: the input read from it is not valid: {why}")]
    Input { file: String, why: String },
    #[error("{file}: rendering it back: {why}")]
    Render { file: String, why: String },
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
    let mut body = msg
        .body_text(0)
        .ok_or_else(|| RobotError::NoText { file: file.into() })?
        .replace("\r\n", "\n");
    // A copy re-encoded as UTF-8 that still says iso-8859-1 (archives do
    // this): `±` then reads as `Â±`. Read such a body as UTF-8 again.
    if body.contains("Â±") {
        if let Some(part) = msg.text_part(0) {
            let bytes = &raw[part.raw_body_offset() as usize..part.raw_end_offset() as usize];
            if let Ok(t) = std::str::from_utf8(bytes) {
                if t.contains('±') {
                    body = t.replace("\r\n", "\n");
                }
            }
        }
    }
    let from = msg.from().and_then(|f| f.first());
    let h = Headers {
        subject: msg.subject().unwrap_or("").to_string(),
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
        attachments: msg
            .attachments()
            .filter_map(|a| {
                use mail_parser::MimeHeaders;
                a.attachment_name().map(str::to_string)
            })
            .collect(),
    };
    Ok((h, body))
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

/// `perfbot parse-report`: a robot mail → what it reports.
pub fn parse_report(raw: &[u8], file: &str) -> Result<ParsedReport, RobotError> {
    let (h, body) = read_mail(raw, file)?;
    parse(&h, &body).map_err(|error| RobotError::Parse {
        file: file.into(),
        error,
    })
}

/// One mail's round trip.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RoundTrip {
    pub file: String,
    pub layout: Option<String>,
    /// The body came back byte for byte (Message-ID links aside).
    pub identical: bool,
    /// Why it could not be done at all.
    pub error: Option<String>,
    /// The first differing lines: (line, original, rendered).
    pub diff: Vec<(usize, String, String)>,
    /// A unified diff of the original (`-`) and perfbot's (`+`) body.
    #[serde(skip)]
    pub unified: String,
}

/// Parse `raw`, render it back with the layout it was read in and the
/// original's sender, and compare the bodies.
pub fn roundtrip(config: &Config, raw: &[u8], file: &str) -> RoundTrip {
    match roundtrip_inner(config, raw, file) {
        Ok(r) => r,
        Err(e) => RoundTrip {
            file: file.into(),
            layout: None,
            identical: false,
            error: Some(e.to_string()),
            diff: Vec::new(),
            unified: String::new(),
        },
    }
}

fn roundtrip_inner(config: &Config, raw: &[u8], file: &str) -> Result<RoundTrip, RobotError> {
    let (h, original) = read_mail(raw, file)?;
    let parsed = parse(&h, &original).map_err(|error| RobotError::Parse {
        file: file.into(),
        error,
    })?;
    let rendered = render_back(config, &h, &parsed, file)?;
    let diff = first_differences(&original, &rendered, 5);
    let unified = similar::TextDiff::from_lines(&original, &rendered)
        .unified_diff()
        .context_radius(2)
        .header("original", "perfbot")
        .to_string();
    Ok(RoundTrip {
        file: file.into(),
        layout: Some(parsed.layout.name().into()),
        identical: diff.is_empty(),
        error: None,
        diff,
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
) -> Result<String, RobotError> {
    let mut c = config.clone();
    // The original's sender: its Reported-by, else its From.
    let (name, email) = parsed
        .reported_by
        .clone()
        .unwrap_or_else(|| (h.from_name.clone(), h.from_email.clone()));
    if !email.is_empty() {
        c.file.bot.name = name;
        c.file.bot.email = email;
    }
    let r = &mut c.file.report;
    r.template = parsed.layout.name().into();
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
    let text = serde_json::to_string(&parsed.input).expect("a JSON value serialises");
    let loaded = LoadedInput::parse(&text, Path::new(file)).map_err(|e| RobotError::Input {
        file: file.into(),
        why: e.to_string(),
    })?;
    let name = parsed.layout.name();
    let (body_tpl, subject_tpl) =
        crate::templates::report_pair(&c.templates_dir(), name).map_err(|e| {
            RobotError::Render {
                file: file.into(),
                why: e.to_string(),
            }
        })?;
    let report = build(&c.report_setup(), &loaded, name, true).map_err(|e| RobotError::Render {
        file: file.into(),
        why: e.to_string(),
    })?;
    let out = render(&report.view, &body_tpl, &subject_tpl).map_err(|e| RobotError::Render {
        file: file.into(),
        why: e.to_string(),
    })?;
    let original_id = h.message_id.trim_matches(['<', '>']);
    Ok(out.body.replace(&report.view.message_id, original_id))
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
