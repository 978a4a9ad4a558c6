//! One incoming message, parsed with mail-parser into what perfbot needs: its
//! identity, its place in a thread, its sender and its text. Limits keep a
//! hostile message from costing more than a glance.

use chrono::{DateTime, TimeZone, Utc};
use mail_parser::{HeaderValue, MessageParser, MimeHeaders};
use sha2::{Digest, Sha256};

use super::flowed::unflow;
use super::mend;
use crate::model::{Address, MessageId};
use crate::reply::understand::quote::is_quote;

/// Limits on what one message may cost (from `[inbound]`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bigger messages are matched by their headers only; the body is not read.
    pub max_bytes: usize,
    /// More MIME parts than this and the message is quarantined.
    pub max_parts: usize,
    /// References kept (the first few and the last ones).
    pub max_references: usize,
    /// The text kept of a body, in bytes.
    pub max_text: usize,
}

impl Limits {
    /// A message bigger than this is never read at all, from any source
    /// (`OVERSIZE_FACTOR` × `max_bytes`).
    pub fn never_read_over(&self) -> usize {
        self.max_bytes.saturating_mul(super::OVERSIZE_FACTOR)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 16 << 20,
            max_parts: 200,
            max_references: 200,
            max_text: 64 << 10,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("not a mail: no From, Message-ID, Subject or Date header could be read")]
    NoHeaders,
    #[error("{parts} MIME parts, over the limit of {max}")]
    TooManyParts { parts: usize, max: usize },
}

/// The headers that decide where a message belongs and who sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub message_id: MessageId,
    /// True when the message had no usable Message-ID and one was derived from
    /// its bytes (so that seeing it twice is still recognised).
    pub synthetic_id: bool,
    pub in_reply_to: Vec<MessageId>,
    pub references: Vec<MessageId>,
    pub subject: String,
    pub from: Option<Address>,
    pub from_name: String,
    pub date: Option<DateTime<Utc>>,
    /// Headers that mark automatic mail (name, value), for `sender`.
    pub auto_headers: Vec<(String, String)>,
    pub content_type: String,
}

impl Head {
    /// What the message answers: the first id of its `In-Reply-To`, else the
    /// last of its `References` (the rule `Route::parent` follows in the raw
    /// fields; mail-parser's ids can differ for a malformed field).
    pub fn parent(&self) -> Option<&MessageId> {
        self.in_reply_to.first().or(self.references.last())
    }
}

/// A parsed message: its head and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound {
    pub head: Head,
    /// The body as plain text (HTML converted, format=flowed joined).
    pub text: String,
    /// Set when a limit cut something: says what.
    pub limited: Option<String>,
    pub size: usize,
    /// The names of the patches attached to it (a fix offered as a file).
    pub patches: Vec<String>,
}

/// A body over the text limit with its long quotes shortened: of each run
/// of quoted lines, the first and the last ones, which are what the reading
/// looks at (whether the robot's report is quoted, and the proposal a short
/// reply agrees with); the middle of a quoted report is no one's words. A
/// reply that quotes a whole report is then read whole, not in part.
fn elide_quotes(text: &str) -> String {
    use crate::reply::understand::classify::{PROPOSAL_LINES, ROBOT_HEAD_LINES};
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len().min(1 << 20));
    let mut i = 0;
    while i < lines.len() {
        let run = lines[i..].iter().take_while(|l| is_quote(l)).count();
        if run > ROBOT_HEAD_LINES + PROPOSAL_LINES + 1 {
            lines[i..i + ROBOT_HEAD_LINES]
                .iter()
                .for_each(|l| out.push_str(l));
            let elided = run - ROBOT_HEAD_LINES - PROPOSAL_LINES;
            out.push_str(&format!("> [{elided} quoted lines not kept]\n"));
            lines[i + run - PROPOSAL_LINES..i + run]
                .iter()
                .for_each(|l| out.push_str(l));
            i += run;
        } else if run > 0 {
            lines[i..i + run].iter().for_each(|l| out.push_str(l));
            i += run;
        } else {
            out.push_str(lines[i]);
            i += 1;
        }
    }
    out
}

/// Of a `text` longer than `max` bytes: its beginning and its end, each
/// about half of `max` and cut at line ends, joined by a quoted line saying
/// how many bytes between them are left out; and that number. The whole
/// stays within `max`. The end is kept because on the lists a reply's words
/// come last, after what they answer: a decision under pages of pasted data
/// is still seen (and, past what the reader reads, sent to a human as read
/// in part).
fn keep_ends(text: &str, max: usize) -> (String, usize) {
    // The note's longest form ("\n> [", twenty digits, " bytes not kept]\n"):
    // with it, what is kept stays within `max`.
    const NOTE: usize = 41;
    if max <= NOTE {
        // A limit this small keeps its first bytes only.
        let cut = text.floor_char_boundary(max);
        return (text[..cut].to_string(), text.len() - cut);
    }
    let half = (max - NOTE) / 2;
    let mut head = text.floor_char_boundary(half);
    if let Some(nl) = text[..head].rfind('\n') {
        head = nl + 1;
    }
    let mut tail = text.ceil_char_boundary(text.len().saturating_sub(half).max(head));
    if !text[..tail].ends_with('\n') {
        if let Some(nl) = text[tail..].find('\n') {
            tail += nl + 1;
        }
    }
    let left_out = tail - head;
    // The note is a line of its own, and quoted: no one's words.
    let open = if head == 0 || text[..head].ends_with('\n') {
        ""
    } else {
        "\n"
    };
    (
        format!(
            "{}{open}> [{left_out} bytes not kept]\n{}",
            &text[..head],
            &text[tail..]
        ),
        left_out,
    )
}

/// An attachment that is a patch: named `*.patch`/`*.diff`, typed as one,
/// or plain text holding a diff. Its name, or its type when it has none.
fn patch_name(part: &mail_parser::MessagePart) -> Option<String> {
    use mail_parser::MimeHeaders;
    let name = part.attachment_name().unwrap_or("").to_ascii_lowercase();
    let kind = part
        .content_type()
        .map(|ct| format!("{}/{}", ct.ctype(), ct.subtype().unwrap_or("")))
        .unwrap_or_default()
        .to_ascii_lowercase();
    let named = name.ends_with(".patch") || name.ends_with(".diff");
    let typed = matches!(
        kind.as_str(),
        "text/x-patch" | "text/x-diff" | "text/x-diff-file"
    );
    let text = kind.is_empty() || kind.starts_with("text/");
    let holds_diff = || {
        text && crate::reply::understand::features::has_diff(&String::from_utf8_lossy(
            part.contents(),
        ))
    };
    (named || typed || holds_diff())
        .then(|| part.attachment_name().map(str::to_string).unwrap_or(kind))
}

/// How far into a message its header block is looked for.
pub const HEADER_CAP: usize = 256 << 10;

/// Where the header block ends (the blank line), within the first `cap` bytes.
pub fn header_block(raw: &[u8], cap: usize) -> &[u8] {
    let hay = &raw[..raw.len().min(cap)];
    // One pass over the line ends: a header block is a few dozen lines, the
    // body behind it may be megabytes.
    for nl in memchr::memchr_iter(b'\n', hay) {
        match hay.get(nl + 1) {
            Some(b'\n') => return &raw[..nl + 2],
            Some(b'\r') if hay.get(nl + 2) == Some(&b'\n') => return &raw[..nl + 3],
            _ => {}
        }
    }
    hay
}

fn ids(v: &HeaderValue, max: usize) -> Vec<MessageId> {
    let list: Vec<MessageId> = match v {
        HeaderValue::Text(t) => t.split_whitespace().filter_map(MessageId::parse).collect(),
        HeaderValue::TextList(l) => l.iter().filter_map(|t| MessageId::parse(t)).collect(),
        _ => Vec::new(),
    };
    cap_ids(list, max)
}

/// Keep the first ten (the thread's root is first) and the most recent ones.
fn cap_ids(mut list: Vec<MessageId>, max: usize) -> Vec<MessageId> {
    if list.len() <= max {
        return list;
    }
    let head = 10.min(max);
    let tail = max - head;
    let rest = list.split_off(head);
    list.extend(rest[rest.len() - tail..].iter().cloned());
    list
}

const AUTO_HEADERS: &[&str] = &[
    "Auto-Submitted",
    "X-Auto-Response-Suppress",
    "Precedence",
    "X-Perfbot-Case",
    "Return-Path",
    "X-Mailer",
    "X-Patchwork-Bot",
    "List-Id",
];

/// Parse the head only: cheap, and enough to decide whether a message matters.
pub fn parse_head(raw: &[u8], limits: &Limits) -> Result<Head, ParseError> {
    let block = header_block(raw, HEADER_CAP);
    let m = MessageParser::default()
        .parse_headers(block)
        .ok_or(ParseError::NoHeaders)?;
    // Something mail-parser read as headers, but none of the ones every mail
    // has: not a mail.
    if m.from().is_none() && m.message_id().is_none() && m.subject().is_none() && m.date().is_none()
    {
        return Err(ParseError::NoHeaders);
    }
    let (message_id, synthetic_id) = match m.message_id().and_then(MessageId::parse) {
        Some(id) => (id, false),
        None => {
            let h: String = Sha256::digest(raw)
                .iter()
                .take(16)
                .map(|b| format!("{b:02x}"))
                .collect();
            (
                MessageId::parse(&format!("no-message-id.{h}@perfbot.invalid")).expect("valid"),
                true,
            )
        }
    };
    let (from, from_name) = match m.from().and_then(|a| a.first()) {
        Some(a) => (
            a.address().and_then(Address::parse),
            a.name().unwrap_or_default().to_string(),
        ),
        None => (None, String::new()),
    };
    let (from, from_name) = author_behind_the_list(&m, &from_name).unwrap_or((from, from_name));
    let date = m
        .date()
        .and_then(|d| Utc.timestamp_opt(d.to_timestamp(), 0).single());
    let auto_headers = AUTO_HEADERS
        .iter()
        .filter_map(|n| {
            m.header_raw(*n)
                .map(|v| (n.to_string(), v.trim().to_string()))
        })
        .collect();
    let content_type = m
        .content_type()
        .map(|ct| match ct.subtype() {
            Some(s) => format!("{}/{}", ct.ctype(), s).to_ascii_lowercase(),
            None => ct.ctype().to_ascii_lowercase(),
        })
        .unwrap_or_else(|| "text/plain".into());
    Ok(Head {
        message_id,
        synthetic_id,
        in_reply_to: ids(m.in_reply_to(), limits.max_references),
        references: ids(m.references(), limits.max_references),
        subject: m.subject().unwrap_or_default().trim().to_string(),
        from,
        from_name,
        date,
        auto_headers,
        content_type,
    })
}

/// The author of a mail whose From the list rewrote to pass DMARC ("Dave
/// Chinner via Linux-xfs <linux-xfs@lists.example.org>"): the list keeps
/// them in `X-Original-From` (Google Groups) or `Reply-To` (Mailman), whose
/// name must be the one before " via ". Only on a list's copy (`List-Id`).
/// Where DKIM is checked, it is checked for the author's domain, which the
/// list's rewrite fails: such a reply decides nothing by itself.
fn author_behind_the_list(
    m: &mail_parser::Message,
    name: &str,
) -> Option<(Option<Address>, String)> {
    // A display name as lists quote it: `'Dave Chinner'`, `"Dave Chinner"`.
    let unquoted = |n: &str| n.trim().trim_matches(['\'', '"']).trim().to_string();
    let (who, _list) = name.rsplit_once(" via ")?;
    let who = unquoted(who);
    if who.is_empty() || m.header_raw("List-Id").is_none() {
        return None;
    }
    // Either names the author the list named, or no one: a sender cannot
    // claim another's name through a header of their own.
    let same = |n: Option<&str>| n.is_none_or(|n| unquoted(n) == who);
    let original = m
        .header_raw("X-Original-From")
        .filter(|v| {
            same(
                v.split_once('<')
                    .map(|(n, _)| n)
                    .filter(|n| !n.trim().is_empty()),
            )
        })
        .and_then(Address::parse)
        .or_else(|| {
            let a = m.reply_to()?.first()?;
            same(a.name())
                .then(|| a.address().and_then(Address::parse))
                .flatten()
        })?;
    Some((Some(original), who))
}

/// Candidates `before..after` of field `f` were just added: the first of
/// `In-Reply-To` is the parent, else the last of `References` so far.
fn note_parent(parent: &mut Option<(usize, usize)>, f: usize, before: usize, after: usize) {
    match (f, *parent) {
        (1, None | Some((2, _))) if after > before => *parent = Some((1, before)),
        (2, None | Some((2, _))) if after > before => *parent = Some((2, after - 1)),
        _ => {}
    }
}

/// What a first look at a message's header block finds: every Message-ID
/// its `Message-ID`, `In-Reply-To` and `References` fields could name (as
/// text: what `MessageId::parse` would keep), and its subject. Generous on
/// purpose: a candidate too many costs a full parse, one too few would lose a
/// reply.
#[derive(Debug, Clone, Default)]
pub struct Route<'a> {
    pub ids: Vec<&'a str>,
    pub subject: std::borrow::Cow<'a, str>,
    /// What it answers, as `Head::parent` says: the first id of its
    /// `In-Reply-To`, else the last of its `References`.
    pub parent: Option<&'a str>,
}

/// The text of a candidate id: trimmed, not empty, no inner space.
fn candidate(b: &[u8]) -> Option<&str> {
    let t = std::str::from_utf8(b.trim_ascii()).ok()?;
    (!t.is_empty() && !t.contains(|c: char| c.is_whitespace() || c == '<' || c == '>')).then_some(t)
}

/// Candidate Message-IDs in a field value: what is between `<` and `>`; in a
/// value without brackets, every token with an `@`.
fn id_candidates<'a>(value: &'a [u8], out: &mut Vec<&'a str>, max: usize) {
    if memchr::memchr(b'<', value).is_none() {
        for tok in value.split(|c| c.is_ascii_whitespace() || *c == b',') {
            if out.len() >= max {
                return;
            }
            if memchr::memchr(b'@', tok).is_some() {
                out.extend(candidate(tok));
            }
        }
        return;
    }
    let mut rest = value;
    while let Some(a) = memchr::memchr(b'<', rest) {
        let Some(b) = memchr::memchr(b'>', &rest[a..]) else {
            break;
        };
        if out.len() >= max {
            return;
        }
        out.extend(candidate(&rest[a + 1..a + b]));
        rest = &rest[a + b + 1..];
    }
}

/// A first look at the four fields that place a message in a thread, found by
/// a scan of the header block's lines: no header is parsed (mail-parser reads
/// the message whole when this look says it may matter). An encoded subject
/// (`=?utf-8?b?…?=`) is decoded by mail-parser. `None`: none of the fields.
pub fn parse_route<'a>(raw: &'a [u8], limits: &Limits) -> Option<Route<'a>> {
    let block = &raw[..raw.len().min(HEADER_CAP)];
    const NAMES: [&[u8]; 4] = [b"message-id", b"in-reply-to", b"references", b"subject"];
    let max = limits.max_references * 2 + 1;
    let mut r = Route::default();
    let mut seen = [false; 4];
    let mut subject: Vec<&[u8]> = Vec::new();
    let mut current: Option<usize> = None;
    // The field (1 `In-Reply-To`, 2 `References`) and index in `r.ids` of
    // the parent so far.
    let mut parent: Option<(usize, usize)> = None;
    let mut start = 0;
    // Line by line up to the blank line that ends the header block.
    while start < block.len() {
        let end = memchr::memchr(b'\n', &block[start..]).map_or(block.len(), |i| start + i);
        let line = &block[start..end];
        start = end + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(&first) = line.first() else { break };
        if first == b' ' || first == b'\t' {
            match current {
                Some(3) => subject.push(line),
                Some(f) => {
                    let before = r.ids.len();
                    id_candidates(line, &mut r.ids, max);
                    note_parent(&mut parent, f, before, r.ids.len());
                }
                None => {}
            }
            continue;
        }
        current = None;
        // Only names that can be one of the four are looked at closely.
        if !matches!(first | 0x20, b'm' | b'i' | b'r' | b's') {
            continue;
        }
        let Some(colon) = memchr::memchr(b':', line) else {
            continue;
        };
        let name = line[..colon].trim_ascii_end();
        let Some(f) = NAMES.iter().position(|n| name.eq_ignore_ascii_case(n)) else {
            continue;
        };
        // A field given twice: the first one counts, as for mail-parser.
        if seen[f] {
            continue;
        }
        seen[f] = true;
        current = Some(f);
        let value = &line[colon + 1..];
        if f == 3 {
            subject.push(value);
        } else {
            let before = r.ids.len();
            id_candidates(value, &mut r.ids, max);
            note_parent(&mut parent, f, before, r.ids.len());
        }
    }
    if !seen.iter().any(|s| *s) {
        return None;
    }
    r.parent = parent.map(|(_, i)| r.ids[i]);
    r.subject = match subject.as_slice() {
        [] => std::borrow::Cow::Borrowed(""),
        [one] if !one.windows(2).any(|w| w == b"=?") => String::from_utf8_lossy(one.trim_ascii()),
        parts => {
            let mut h = b"Subject:".to_vec();
            for p in parts {
                h.push(b' ');
                h.extend_from_slice(p.trim_ascii());
            }
            h.extend_from_slice(b"\r\n\r\n");
            let decoded = MessageParser::new()
                .parse_headers(&h[..])
                .and_then(|m| m.subject().map(|s| s.trim().to_string()))
                .unwrap_or_else(|| String::from_utf8_lossy(&h[9..h.len() - 4]).into_owned());
            std::borrow::Cow::Owned(decoded)
        }
    };
    Some(r)
}

/// The body text of `input`: a raw RFC 5322 message, or plain text.
pub fn body_text(input: &[u8]) -> String {
    let limits = Limits::default();
    if parse_head(input, &limits).is_ok() {
        if let Ok(m) = parse(input, &limits) {
            return m.text;
        }
    }
    String::from_utf8_lossy(input).replace("\r\n", "\n")
}

/// Count MIME part openings cheaply (boundary declarations), before parsing.
fn multipart_count(raw: &[u8]) -> usize {
    memchr::memmem::find_iter(raw, b"boundary=").count()
        + memchr::memmem::find_iter(raw, b"BOUNDARY=").count()
        + memchr::memmem::find_iter(raw, b"Boundary=").count()
}

/// Parse the whole message within `limits`.
pub fn parse(raw: &[u8], limits: &Limits) -> Result<Inbound, ParseError> {
    let head = parse_head(raw, limits)?;
    // Over the size limit, only the first `max_bytes` are read: the text a
    // person wrote comes before the attachments that make a mail big, and
    // what is read is marked as read in part (a decision in it then goes to
    // a human instead of acting, or being lost).
    let (raw_read, over) = if raw.len() > limits.max_bytes {
        let mut cut = limits.max_bytes;
        // Cut at a line end, so that no header or boundary line is split.
        if let Some(nl) = memchr::memrchr(b'\n', &raw[..cut]) {
            cut = nl + 1;
        }
        (&raw[..cut], true)
    } else {
        (raw, false)
    };
    let mut inbound = parse_within(raw_read, head, limits)?;
    inbound.size = raw.len();
    if over {
        inbound.limited = Some(format!(
            "{} bytes, over the limit of {}: only the first {} were read",
            raw.len(),
            limits.max_bytes,
            raw_read.len()
        ));
    }
    Ok(inbound)
}

fn parse_within(raw: &[u8], head: Head, limits: &Limits) -> Result<Inbound, ParseError> {
    let declared = multipart_count(raw);
    if declared > limits.max_parts {
        return Err(ParseError::TooManyParts {
            parts: declared,
            max: limits.max_parts,
        });
    }
    let m = MessageParser::default()
        .parse(raw)
        .ok_or(ParseError::NoHeaders)?;
    if m.parts.len() > limits.max_parts {
        return Err(ParseError::TooManyParts {
            parts: m.parts.len(),
            max: limits.max_parts,
        });
    }
    // The first text part, and what its Content-Type says of it.
    let first = m.text_part(0);
    let param = |name: &str, value: &str| {
        first.and_then(|p| p.content_type()).is_some_and(|ct| {
            ct.attribute(name)
                .is_some_and(|v| v.eq_ignore_ascii_case(value))
        })
    };
    let (flowed, delsp) = (param("format", "flowed"), param("delsp", "yes"));
    let mut text = match first.map(|p| &p.body) {
        // An HTML-only body, laid out with its quotes marked.
        Some(mail_parser::PartType::Html(html)) => super::html::text(html),
        _ => first
            .and_then(|p| as_written(raw, p))
            .unwrap_or_else(|| m.body_text(0).unwrap_or_default().into_owned()),
    }
    .replace("\r\n", "\n");
    if flowed {
        text = unflow(&text, delsp);
    }
    text.retain(|c| c != '\0');
    // What the sender's client or an archive did to the words, undone.
    if let Some(mended) = mend::mend(&text) {
        text = mended;
    }
    let mut limited = None;
    if text.len() > limits.max_text {
        text = elide_quotes(&text);
    }
    if text.len() > limits.max_text {
        let (kept, left_out) = keep_ends(&text, limits.max_text);
        text = kept;
        limited = Some(format!(
            "text over {} bytes: {left_out} bytes in its middle not kept",
            limits.max_text
        ));
    }
    let patches = m.attachments().filter_map(patch_name).collect();
    Ok(Inbound {
        head,
        text,
        limited,
        size: raw.len(),
        patches,
    })
}

/// A text part's words as its writer typed them, where its label (or the
/// lack of one) says otherwise; `None` where mail-parser reads it right.
/// - UTF-8 bytes under US-ASCII or a Latin label (an old client's default, a
///   paste into it) are read as UTF-8: by its label, "I’ll revert it" becomes
///   "Iâ€™ll revert it". Latin text is almost never valid UTF-8 with a
///   character past ASCII in it, so no rightly labelled part is misread.
/// - Bytes that are no UTF-8 under a UTF-8 label or none (Windows' curly
///   quotes, 0x92 for ’, from a client that labels whatever it sends UTF-8)
///   are read as Windows-1252 where they break, and as UTF-8 elsewhere: read
///   as UTF-8, "doesn’t" becomes "doesn\u{fffd}t" and negates nothing.
///
/// The robot's archived reports are read so too (`flows::robot::read_mail`).
pub(crate) fn as_written(raw: &[u8], part: &mail_parser::MessagePart) -> Option<String> {
    // "ANSI_X3.4-1968" is glibc's name for ASCII, which a mail written
    // under the C locale carries.
    const LATIN: &[&str] = &[
        "us-ascii",
        "ascii",
        "ansi_x3.4-1968",
        "iso-8859-1",
        "iso8859-1",
        "latin1",
        "windows-1252",
        "cp1252",
    ];
    // A plain text part only: an HTML part's bytes are markup.
    if !matches!(part.body, mail_parser::PartType::Text(_)) {
        return None;
    }
    let label = part.content_type().and_then(|ct| ct.attribute("charset"));
    let latin = label.is_some_and(|c| LATIN.iter().any(|l| c.eq_ignore_ascii_case(l)));
    let utf8 =
        label.is_none_or(|c| c.eq_ignore_ascii_case("utf-8") || c.eq_ignore_ascii_case("utf8"));
    if !latin && !utf8 {
        return None;
    }
    let body = raw.get(part.offset_body as usize..part.offset_end as usize)?;
    let bytes = match part.encoding {
        mail_parser::Encoding::None => body.to_vec(),
        mail_parser::Encoding::QuotedPrintable => {
            mail_parser::decoders::quoted_printable::quoted_printable_decode(body)?
        }
        mail_parser::Encoding::Base64 => mail_parser::decoders::base64::base64_decode(body)?,
    };
    if bytes.is_ascii() {
        return None;
    }
    match String::from_utf8(bytes) {
        Ok(text) => latin.then_some(text),
        Err(e) if utf8 => Some(utf8_else_windows_1252(e.as_bytes())),
        Err(_) => None,
    }
}

/// `bytes` read as UTF-8 where they are, and each byte that breaks it as
/// Windows-1252.
fn utf8_else_windows_1252(bytes: &[u8]) -> String {
    let cp1252 = mail_parser::decoders::charsets::map::charset_decoder(b"windows-1252");
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        match cp1252 {
            Some(decode) => out.push_str(&decode(chunk.invalid())),
            None => out.extend(chunk.invalid().iter().map(|_| char::REPLACEMENT_CHARACTER)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(raw: &str) -> Inbound {
        parse(raw.as_bytes(), &Limits::default()).unwrap()
    }

    /// A list that rewrites From to pass DMARC keeps the author elsewhere:
    /// the author is the sender, as they would be without the rewrite.
    #[test]
    fn the_author_behind_a_list_that_rewrote_from() {
        let list = "List-Id: <linux-xfs.lists.example.org>\r\n";
        let cases: &[(&str, &str, &str)] = &[
            // Mailman: the author in Reply-To.
            (
                "From: \"Dave Chinner via Linux-xfs\" <linux-xfs@lists.example.org>\r\nReply-To: Dave Chinner <david@fromorbit.com>\r\n",
                "david@fromorbit.com",
                "Dave Chinner",
            ),
            // Google Groups: in X-Original-From, the name quoted.
            (
                "From: \"'Dave Chinner' via kasan-dev\" <kasan-dev@googlegroups.com>\r\nX-Original-From: Dave Chinner <david@fromorbit.com>\r\nReply-To: kasan-dev@googlegroups.com\r\n",
                "david@fromorbit.com",
                "Dave Chinner",
            ),
            // X-Original-From names someone else: the list's From stands.
            (
                "From: \"Eve via kasan-dev\" <kasan-dev@googlegroups.com>\r\nX-Original-From: Dave Chinner <david@fromorbit.com>\r\n",
                "kasan-dev@googlegroups.com",
                "Eve via kasan-dev",
            ),
            // Reply-To names someone else: the list's From stands.
            (
                "From: \"Dave Chinner via Linux-xfs\" <linux-xfs@lists.example.org>\r\nReply-To: Eve <eve@example.org>\r\n",
                "linux-xfs@lists.example.org",
                "Dave Chinner via Linux-xfs",
            ),
            // Nowhere to find the author.
            (
                "From: \"Dave Chinner via Linux-xfs\" <linux-xfs@lists.example.org>\r\n",
                "linux-xfs@lists.example.org",
                "Dave Chinner via Linux-xfs",
            ),
            // A name with "via" in a mail of the person's own.
            (
                "From: Ann via Phone <ann@example.org>\r\nReply-To: Ann via Phone <ann@example.org>\r\n",
                "ann@example.org",
                "Ann via Phone",
            ),
        ];
        for (i, &(headers, address, name)) in cases.iter().enumerate() {
            let own = i == cases.len() - 1;
            let raw = format!(
                "Message-ID: <m@x>\r\n{}{headers}Subject: Re: x\r\n\r\nbody\r\n",
                if own { "" } else { list }
            );
            let m = p(&raw);
            assert_eq!(
                m.head.from.as_ref().map(Address::as_str),
                Some(address),
                "{headers}"
            );
            assert_eq!(m.head.from_name, name, "{headers}");
        }
    }

    #[test]
    fn identity_and_threading_headers() {
        let m = p("Message-ID: (comment) <a@b>\r\nIn-Reply-To: junk <r@x> (c)\r\nReferences: <r0@x>\r\n <r@x> garbage\r\nFrom: \"Chinner, Dave\" <David@Fromorbit.COM>\r\nSubject: =?utf-8?q?Re=3A_=5Bxfs=5D_caf=C3=A9?=\r\nDate: Tue, 5 Jun 2018 17:31:14 +1000\r\n\r\nbody\r\n");
        assert_eq!(m.head.message_id.as_str(), "a@b");
        assert_eq!(m.head.in_reply_to[0].as_str(), "r@x");
        let refs: Vec<&str> = m.head.references.iter().map(|r| r.as_str()).collect();
        assert_eq!(refs, ["r0@x", "r@x"]);
        assert_eq!(m.head.from.unwrap().as_str(), "david@fromorbit.com");
        assert_eq!(m.head.from_name, "Chinner, Dave");
        assert_eq!(m.head.subject, "Re: [xfs] café");
        assert_eq!(
            m.head.date.unwrap().to_rfc3339(),
            "2018-06-05T07:31:14+00:00"
        );
        assert_eq!(m.text.trim(), "body");
    }

    /// What a first look takes a message to answer: `(header block,
    /// parent)`. `In-Reply-To`'s first id wins, wherever it stands; else
    /// the last of `References`, folded lines too.
    #[test]
    fn route_parent_table() {
        let table: &[(&str, Option<&str>)] = &[
            ("Message-ID: <m@x>\r\nSubject: s\r\n", None),
            (
                "Message-ID: <m@x>\r\nIn-Reply-To: <p@x> <q@x>\r\n",
                Some("p@x"),
            ),
            (
                "References: <r0@x> <r1@x>\r\nMessage-ID: <m@x>\r\n",
                Some("r1@x"),
            ),
            (
                "References: <r0@x>\r\n <r1@x>\r\nIn-Reply-To: <p@x>\r\n",
                Some("p@x"),
            ),
            (
                "In-Reply-To: <p@x>\r\nReferences: <r0@x>\r\n <r1@x>\r\n",
                Some("p@x"),
            ),
            (
                "In-Reply-To:\r\n <p@x>\r\nReferences: <r0@x>\r\n",
                Some("p@x"),
            ),
            (
                "In-Reply-To: no id here\r\nReferences: <r0@x>\r\n",
                Some("r0@x"),
            ),
            ("In-Reply-To: no id here\r\nMessage-ID: <m@x>\r\n", None),
        ];
        for (headers, parent) in table {
            let raw = format!("{headers}\r\nbody\r\n");
            let r = parse_route(raw.as_bytes(), &Limits::default()).unwrap();
            assert_eq!(r.parent, *parent, "{headers:?}");
        }
    }

    #[test]
    fn charsets_and_encodings() {
        let m = p("Message-ID: <c@x>\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nGr=FC=DFe, =B119%\r\n");
        assert_eq!(m.text.trim(), "Grüße, ±19%");
        let m = p("Message-ID: <d@x>\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\nSGVsbG8g4pyT\r\n");
        assert_eq!(m.text.trim(), "Hello ✓");
    }

    /// A part's bytes are read as UTF-8 when they are UTF-8, whatever Latin
    /// label it carries; bytes that are not UTF-8 are read by a Latin label,
    /// and as Windows-1252 under a UTF-8 label or none, where they break.
    #[test]
    fn utf8_under_a_latin_label() {
        // (the charset label, "" for none; the body; its text)
        let table: &[(&str, &[u8], &str)] = &[
            (
                "us-ascii",
                b"I\xe2\x80\x99ll revert it, \xc2\xb15%",
                "I’ll revert it, ±5%",
            ),
            ("iso-8859-1", b"I\xe2\x80\x99ll revert it", "I’ll revert it"),
            ("windows-1252", b"Micha\xc5\x82 says so", "Michał says so"),
            ("iso-8859-1", b"Gr\xfc\xdfe, \xb119%", "Grüße, ±19%"),
            ("us-ascii", b"plain words", "plain words"),
            (
                "ANSI_X3.4-1968",
                b"I\xe2\x80\x99ll revert it",
                "I’ll revert it",
            ),
            ("windows-1252", b"I\x92ll revert it", "I’ll revert it"),
            // Windows' bytes under a UTF-8 label, or under none.
            ("utf-8", b"I don\x92t think so", "I don’t think so"),
            (
                "UTF8",
                b"\x93not a regression\x94 \x85",
                "“not a regression” …",
            ),
            (
                "",
                b"I don\x92t think so, caf\xe9",
                "I don’t think so, café",
            ),
            // UTF-8 where it is: only what breaks it is read otherwise.
            (
                "utf-8",
                b"Micha\xc5\x82 doesn\x92t agree",
                "Michał doesn’t agree",
            ),
            ("utf-8", b"Micha\xc5\x82 agrees", "Michał agrees"),
            // Some other charset's bytes are its own.
            ("koi8-r", b"\xf0\xd2\xc9\xd7\xc5\xd4", "Привет"),
        ];
        for (charset, body, want) in table {
            let label = match *charset {
                "" => String::new(),
                c => format!("; charset={c}"),
            };
            let mut raw = format!(
                "Message-ID: <u@x>\r\nContent-Type: text/plain{label}\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
            )
            .into_bytes();
            raw.extend_from_slice(body);
            raw.extend_from_slice(b"\r\n");
            let m = parse(&raw, &Limits::default()).unwrap();
            assert_eq!(m.text.trim(), *want, "{charset} {body:?}");
        }
        // Quoted-printable and base64 bodies too.
        let m = p("Message-ID: <q@x>\r\nContent-Type: text/plain; charset=us-ascii\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nI=E2=80=99ll revert it\r\n");
        assert_eq!(m.text.trim(), "I’ll revert it");
        let m = p("Message-ID: <b@x>\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: base64\r\n\r\nSeKAmWxsIHJldmVydCBpdA==\r\n");
        assert_eq!(m.text.trim(), "I’ll revert it");
        // A part of a multipart mail, read from where it is in the mail.
        let m = p("Message-ID: <m@x>\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\n--zz\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\nI’ll revert it\r\n--zz\r\nContent-Type: application/x-xz\r\nContent-Transfer-Encoding: base64\r\n\r\nAAAA\r\n--zz--\r\n");
        assert_eq!(m.text.trim(), "I’ll revert it");
        // No Content-Type at all.
        let m = parse(
            b"Message-ID: <n@x>\r\n\r\nI won\x92t revert it\r\n",
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(m.text.trim(), "I won’t revert it");
    }

    #[test]
    fn html_only_and_multipart() {
        let m = p("Message-ID: <h@x>\r\nContent-Type: text/html\r\n\r\n<p>This is <b>not</b> a regression.</p>");
        assert!(m.text.contains("This is not a regression."), "{}", m.text);
        let m = p("Message-ID: <m@x>\r\nContent-Type: multipart/alternative; boundary=zz\r\n\r\n--zz\r\nContent-Type: text/plain\r\n\r\nplain words\r\n--zz\r\nContent-Type: text/html\r\n\r\n<p>html words</p>\r\n--zz--\r\n");
        assert_eq!(m.text.trim(), "plain words");
    }

    /// Which attachments are patches: `(part headers and body, expected)`.
    #[test]
    fn attached_patches_table() {
        let diff =
            "diff --git a/x.c b/x.c\r\n--- a/x.c\r\n+++ b/x.c\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n";
        let table: &[(String, &[&str])] = &[
            (
                format!("Content-Type: text/x-patch; name=patch.diff\r\nContent-Disposition: attachment; filename=patch.diff\r\n\r\n{diff}"),
                &["patch.diff"],
            ),
            (
                "Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=0001-mm-fix.patch\r\nContent-Transfer-Encoding: base64\r\n\r\nZGlmZg==\r\n".into(),
                &["0001-mm-fix.patch"],
            ),
            (
                format!("Content-Type: text/plain\r\nContent-Disposition: attachment; filename=notes.txt\r\n\r\n{diff}"),
                &["notes.txt"],
            ),
            (
                "Content-Type: text/plain\r\nContent-Disposition: attachment; filename=notes.txt\r\n\r\nno diff here\r\n".into(),
                &[],
            ),
            (
                "Content-Type: application/x-xz\r\nContent-Disposition: attachment; filename=dmesg.xz\r\n\r\nxz\r\n".into(),
                &[],
            ),
            (
                "Content-Type: application/pgp-signature; name=signature.asc\r\n\r\n-----BEGIN PGP SIGNATURE-----\r\n".into(),
                &[],
            ),
        ];
        for (part, expected) in table {
            let raw = format!("Message-ID: <a@x>\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\n--zz\r\nContent-Type: text/plain\r\n\r\nSomething like the attached.\r\n--zz\r\n{part}--zz--\r\n");
            let m = p(&raw);
            assert_eq!(m.patches, *expected, "{part}");
            assert_eq!(m.text.trim(), "Something like the attached.", "{part}");
        }
    }

    /// A reply that quotes a whole report, with words before and after
    /// the quote: over the text limit, the quote's middle is left out and
    /// every own word kept (nothing is marked as read in part); own words
    /// over the limit are still cut, and said to be.
    #[test]
    fn long_quotes_are_shortened_before_the_text_is_cut() {
        let quote = "> 464232   -5.6%  438315   aim7.jobs-per-min and more\r\n".repeat(2000);
        let raw = format!(
            "Message-ID: <q@x>\r\nSubject: Re: r\r\n\r\nOn Mon, the robot wrote:\r\n> kernel test robot noticed\r\n{quote}\r\nThis is not a regression.\r\n"
        );
        let m = p(&raw);
        assert!(
            m.text.len() <= Limits::default().max_text,
            "{}",
            m.text.len()
        );
        assert_eq!(m.limited, None);
        assert!(m.text.contains("> kernel test robot noticed"));
        assert!(
            m.text.contains("> [1851 quoted lines not kept]"),
            "{}",
            &m.text[..200]
        );
        assert!(m.text.trim_end().ends_with("This is not a regression."));
        // Own words over the limit: their first and last parts are kept,
        // the words that come last (a decision under pasted data) among them.
        let own = "We looked again and the numbers move as before here.\r\n".repeat(2000);
        let m = p(&format!(
            "Message-ID: <o@x>\r\n\r\n{own}\r\nI'll revert this patch.\r\n"
        ));
        assert!(
            m.limited
                .as_deref()
                .is_some_and(|l| l.contains("middle not kept")),
            "{:?}",
            m.limited
        );
        assert!(m.text.len() <= Limits::default().max_text);
        assert!(m.text.starts_with("We looked again"));
        assert!(m.text.trim_end().ends_with("I'll revert this patch."));
        assert!(
            m.text.contains("bytes not kept]\nWe looked again"),
            "a line split"
        );
    }

    /// `keep_ends` keeps whole lines of both ends and says, in a quoted line,
    /// how much of the middle it left out: `(text, max, kept, left out)`.
    #[test]
    fn the_ends_of_a_long_text_are_kept() {
        let cases: &[(&str, usize, &str, usize)] = &[
            // 41 bytes of every limit are the note's: here 4 of each end.
            ("aa\nbb\ncc\ndd\n", 49, "aa\n> [6 bytes not kept]\ndd\n", 6),
            // No line end in the first half: cut inside the line.
            ("aaaaaa\nb\nc\n", 47, "aaa\n> [6 bytes not kept]\nc\n", 6),
            // Nor anywhere: cut inside, on character boundaries.
            ("ééééé", 45, "é\n> [6 bytes not kept]\né", 6),
            // A limit too small for the note keeps the first bytes only.
            ("ééééé", 5, "éé", 6),
        ];
        for (text, max, kept, left) in cases {
            assert_eq!(keep_ends(text, *max), (kept.to_string(), *left), "{text:?}");
        }
    }

    #[test]
    fn format_flowed_is_joined() {
        let m = p("Message-ID: <f@x>\r\nContent-Type: text/plain; format=flowed\r\n\r\nI'll revert this \r\npatch today.\r\n> quoted \r\n> more\r\n");
        assert!(
            m.text.starts_with("I'll revert this patch today.\n"),
            "{:?}",
            m.text
        );
        assert!(m.text.contains("> quoted more"), "{:?}", m.text);
    }

    #[test]
    fn limits_hold() {
        let limits = Limits {
            max_bytes: 1000,
            ..Limits::default()
        };
        let big = format!("Message-ID: <big@x>\r\n\r\n{}", "x".repeat(5000));
        let m = parse(big.as_bytes(), &limits).unwrap();
        assert_eq!(m.head.message_id.as_str(), "big@x");
        // Read in part, and marked so.
        assert!(m.limited.unwrap().contains("only the first"));
        assert!(m.text.len() < 1000);
        let big = format!(
            "Message-ID: <big2@x>\r\n\r\nThis is not a regression.\r\n{}",
            "attachment line\r\n".repeat(500)
        );
        let m = parse(big.as_bytes(), &limits).unwrap();
        assert!(
            m.text.starts_with("This is not a regression."),
            "{}",
            m.text
        );
        let refs: String = (0..10_000).map(|i| format!(" <r{i}@x>")).collect();
        let m = p(&format!(
            "Message-ID: <r@x>\r\nReferences:{refs}\r\n\r\nhi\r\n"
        ));
        assert_eq!(m.head.references.len(), 200);
        assert_eq!(m.head.references[0].as_str(), "r0@x");
        assert_eq!(m.head.references[199].as_str(), "r9999@x");
        // 1,000-level MIME nesting: refused before parsing.
        let mut deep = String::from("Message-ID: <deep@x>\r\n");
        for i in 0..1000 {
            deep.push_str(&format!(
                "Content-Type: multipart/mixed; boundary=b{i}\r\n\r\n--b{i}\r\n"
            ));
        }
        assert!(matches!(
            parse(deep.as_bytes(), &Limits::default()),
            Err(ParseError::TooManyParts { .. })
        ));
    }

    #[test]
    fn junk_never_panics() {
        for raw in [
            &b""[..],
            b"\0\0\0",
            b"\xff\xfe\xfd: \xff\r\n\r\n\xff",
            b"Subject: no id\r\n\r\nbody",
            b"From nobody\n",
        ] {
            let _ = parse(raw, &Limits::default());
        }
        let m = parse(b"Subject: no id\r\n\r\nbody", &Limits::default()).unwrap();
        assert!(m.head.synthetic_id);
    }
}
