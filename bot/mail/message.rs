//! Building report e-mails: headers, threading, charset.

use std::time::SystemTime;

use lettre::message::header::{
    ContentDisposition, ContentTransferEncoding, ContentType, HeaderName, HeaderValue,
};
use lettre::message::{Attachment, Body, Mailbox, Mailboxes, MultiPart, SinglePart};
use lettre::Message;

use crate::model::ids::{bare_address, MessageId};
use crate::model::Charset;

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("bad address {0:?}: {1}")]
    Address(String, String),
    #[error("cannot build the message: {0}")]
    Build(String),
}

/// Everything that goes into the headers of an outgoing mail.
#[derive(Debug, Clone)]
pub struct Envelope {
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub subject: String,
    pub message_id: MessageId,
    pub in_reply_to: Option<MessageId>,
    pub references: Vec<MessageId>,
    pub date: SystemTime,
    pub charset: Charset,
    /// Extra `X-…` headers (name, value).
    pub extra: Vec<(String, String)>,
    /// Files sent after the text (name, contents): the mail is then
    /// multipart/mixed, its text the first part, as the robot's.
    pub attachments: Vec<(String, Vec<u8>)>,
}

fn mailbox(s: &str) -> Result<Mailbox, BuildError> {
    s.trim()
        .parse::<Mailbox>()
        .map_err(|e| BuildError::Address(s.to_string(), e.to_string()))
}

/// To, then Cc without duplicates (by address) and without the To addresses.
pub fn dedup_recipients(to: &[String], cc: &[String]) -> (Vec<String>, Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    let mut out_to = Vec::new();
    for a in to {
        if seen.insert(bare_address(a)) {
            out_to.push(a.trim().to_string());
        }
    }
    let mut out_cc = Vec::new();
    for a in cc {
        if seen.insert(bare_address(a)) {
            out_cc.push(a.trim().to_string());
        }
    }
    (out_to, out_cc)
}

/// Text in the declared charset (`Charset::for_text` chose one that holds it).
pub fn encode_body(text: &str, charset: Charset) -> Vec<u8> {
    charset.encode(&text.replace("\r\n", "\n").replace('\n', "\r\n"))
}

/// RFC 5322/2045 8bit: lines of at most 998 octets, CRLF only, no NUL.
fn fits_8bit(bytes: &[u8]) -> bool {
    if bytes.contains(&0) {
        return false;
    }
    bytes.split(|&b| b == b'\n').all(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        line.len() <= 998 && !line.contains(&b'\r')
    })
}

/// The complete RFC 5322 message.
pub fn build(env: &Envelope, body: &str) -> Result<Vec<u8>, BuildError> {
    let b = headed(env)?;
    let charset = env.charset.for_text(body);
    let ct = ContentType::parse(&format!("text/plain; charset=\"{}\"", charset.as_str()))
        .map_err(|e| BuildError::Build(e.to_string()))?;
    let body = text_body(body, charset)?;
    if !env.attachments.is_empty() {
        let text = SinglePart::builder()
            .header(ct)
            .header(ContentDisposition::inline())
            .body(body);
        let mut parts = MultiPart::mixed().singlepart(text);
        for (name, bytes) in &env.attachments {
            parts = parts.singlepart(attachment(name, bytes)?);
        }
        let msg = b
            .multipart(parts)
            .map_err(|e| BuildError::Build(e.to_string()))?;
        return Ok(msg.formatted());
    }
    let mime = HeaderName::new_from_ascii("MIME-Version".into())
        .map_err(|e| BuildError::Build(e.to_string()))?;
    let msg = b
        .raw_header(HeaderValue::new(mime, "1.0".into()))
        .header(ct)
        .header(ContentDisposition::inline())
        .body(body)
        .map_err(|e| BuildError::Build(e.to_string()))?;
    Ok(msg.formatted())
}

/// The message's headers: From, Subject, Message-ID, Date, the addresses,
/// the threading and the extra headers.
fn headed(env: &Envelope) -> Result<lettre::message::MessageBuilder, BuildError> {
    let mut b = Message::builder()
        .from(mailbox(&env.from)?)
        .raw_header(subject_header(&env.subject)?)
        .message_id(Some(env.message_id.bracketed()))
        .date(env.date);
    // Callers decide whether an address in To may stay in Cc (a mail read
    // back keeps it, as its sender had it); within one header, once.
    let once = |list: &[String]| -> Result<Mailboxes, BuildError> {
        let mut seen = std::collections::HashSet::new();
        let mut boxes = Mailboxes::new();
        for a in list.iter().filter(|a| seen.insert(bare_address(a))) {
            boxes.push(mailbox(a.trim())?);
        }
        Ok(boxes)
    };
    b = b.mailbox(lettre::message::header::To::from(once(&env.to)?));
    let cc = once(&env.cc)?;
    if cc.iter().next().is_some() {
        b = b.mailbox(lettre::message::header::Cc::from(cc));
    }
    if let Some(irt) = &env.in_reply_to {
        b = b.in_reply_to(irt.bracketed());
    }
    if !env.references.is_empty() {
        let refs: Vec<String> = env.references.iter().map(MessageId::bracketed).collect();
        b = b.references(refs.join(" "));
    }
    for (name, value) in &env.extra {
        let name = HeaderName::new_from_ascii(name.clone())
            .map_err(|e| BuildError::Build(e.to_string()))?;
        b = b.raw_header(HeaderValue::new(name, value.replace(['\r', '\n'], " ")));
    }
    Ok(b)
}

/// The Subject as lettre writes it, but where its words are not ASCII and
/// two of them are apart by more than one space: lettre would encode them
/// one by one, with the spaces between, which readers drop (RFC 2047 6.2:
/// `一  一` arrives as `一一`). Such a Subject is encoded whole, its spaces
/// inside the encoded words.
fn subject_header(subject: &str) -> Result<HeaderValue, BuildError> {
    let name = HeaderName::new_from_ascii_str("Subject");
    if subject.is_ascii() || !subject.contains("  ") {
        return Ok(HeaderValue::new(name, subject.to_string()));
    }
    let mut encoded = String::new();
    {
        let mut w = email_encoding::headers::writer::EmailWriter::new(
            &mut encoded,
            "Subject: ".len(),
            0,
            false,
        );
        email_encoding::headers::rfc2047::encode(subject, &mut w)
            .map_err(|_| BuildError::Build("the Subject cannot be encoded".into()))?;
    }
    Ok(HeaderValue::dangerous_new_pre_encoded(
        name,
        subject.to_string(),
        encoded,
    ))
}

/// The text in `charset`: 8bit like the robot (the bytes are already in the
/// declared charset, which lettre cannot check), unless a line is too long
/// for 8bit or holds a NUL.
fn text_body(text: &str, charset: Charset) -> Result<Body, BuildError> {
    let bytes = encode_body(text, charset);
    if fits_8bit(&bytes) {
        Ok(Body::dangerous_pre_encoded(
            bytes,
            ContentTransferEncoding::EightBit,
        ))
    } else {
        Body::new_with_encoding(bytes, ContentTransferEncoding::QuotedPrintable)
            .map_err(|_| BuildError::Build("body cannot be encoded".into()))
    }
}

/// An attached file: text files as the robot sends them (text/plain,
/// us-ascii); anything else as bytes. lettre picks the transfer encoding.
fn attachment(name: &str, bytes: &[u8]) -> Result<SinglePart, BuildError> {
    let ascii_text = !bytes.contains(&0) && bytes.is_ascii();
    let ct = if ascii_text {
        ContentType::parse("text/plain; charset=us-ascii")
    } else {
        ContentType::parse("application/octet-stream")
    }
    .map_err(|e| BuildError::Build(e.to_string()))?;
    Ok(Attachment::new(name.to_string()).body(bytes.to_vec(), ct))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn envelope(subject: &str, name: &str, charset: Charset, att: Option<Vec<u8>>) -> Envelope {
        Envelope {
            from: "perfbot <perfbot@example.org>".into(),
            to: vec![format!("\"{name}\" <a@example.org>")],
            cc: vec!["b@example.org".into()],
            subject: subject.into(),
            message_id: MessageId::parse("<x.1@example.org>").unwrap(),
            in_reply_to: None,
            references: vec![],
            date: SystemTime::now(),
            charset,
            extra: vec![],
            attachments: att.map(|a| vec![("f.bin".into(), a)]).unwrap_or_default(),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// What perfbot puts in a mail is what a reader gets out of it: the
        /// Subject, the addressee, the text in either charset (8bit, or
        /// quoted-printable past 998 octets) and an attachment's bytes.
        #[test]
        fn built_mail_reads_back(
            words in prop::collection::vec(("[!-~\u{a0}-\u{24f}\u{4e00}-\u{4e20}]{1,20}", any::<bool>()), 1..12),
            name in "[ !#-\\[\\]-~\u{a0}-\u{24f}]{0,40}",
            body in "([ -~\u{a0}-\u{24f}\u{4e00}-\u{4e20}\t]{0,120}\n){0,20}[ -~]{0,1200}",
            latin in any::<bool>(),
            att in prop::option::of(prop::collection::vec(any::<u8>(), 0..300)),
        ) {
            // Words apart by one space or two (as in the robot's Subjects).
            let mut subject = String::new();
            for (i, (w, wide)) in words.iter().enumerate() {
                if i > 0 {
                    subject.push_str(if *wide { "  " } else { " " });
                }
                subject.push_str(w);
            }
            let charset = if latin { Charset::Latin1 } else { Charset::Utf8 };
            let raw = build(&envelope(&subject, &name, charset, att.clone()), &body).unwrap();
            let m = mail_parser::MessageParser::default().parse(&raw).unwrap();
            // mail-parser unfolds a header folded at two spaces to one.
            let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
            prop_assert_eq!(words(m.subject().unwrap_or("")), words(&subject));
            prop_assert_eq!(m.body_text(0).unwrap().replace("\r\n", "\n"), body.clone());
            let to = m.to().unwrap().first().unwrap();
            prop_assert_eq!(to.address().unwrap(), "a@example.org");
            // lettre reads a display name with its runs of spaces as one.
            if !name.trim().is_empty() {
                prop_assert_eq!(words(to.name().unwrap_or("")), words(&name));
            }
            if let Some(a) = att {
                prop_assert_eq!(m.attachment(0).unwrap().contents(), &a[..]);
            }
        }
    }
}
