//! Optional DKIM verification of replies (mail-auth). A signature counts for
//! the sender only when it verifies *and* its `d=` domain aligns with the From
//! domain (relaxed alignment in the sense of RFC 7489 §3.1.1: the same
//! organizational domain, found with the Public Suffix List): anyone can sign
//! a forged `From: author@kernel.org` with their own domain's key.
//!
//! A signature that fails lowers the sender's trust: their words are recorded
//! and understood, but they cannot decide the case. Keys come from DNS, or from
//! `[trust] dkim_keys` (selector._domainkey.domain → TXT record) for private or
//! offline setups.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use mail_auth::common::parse::TxtRecordParser;
use mail_auth::common::verify::DomainKey;
use mail_auth::{
    AuthenticatedMessage, DkimResult, MessageAuthenticator, Parameters, ResolverCache, Txt,
};

pub use crate::reply::policy::trust::Verdict;

pub use crate::model::ids::organizational_domain;

/// Relaxed DKIM alignment (RFC 7489 §3.1.1): the signing domain and the From
/// domain have the same organizational domain.
pub fn aligned(signing_domain: &str, from_domain: &str) -> bool {
    let (s, f) = (
        signing_domain.trim_end_matches('.').to_ascii_lowercase(),
        from_domain.trim_end_matches('.').to_ascii_lowercase(),
    );
    if s.is_empty() || f.is_empty() {
        return false;
    }
    s == f || organizational_domain(&s) == organizational_domain(&f)
}

/// TXT records given in the config, answered before DNS.
struct StaticTxt(HashMap<Box<str>, Txt>);

impl ResolverCache<Box<str>, Txt> for StaticTxt {
    fn get<Q>(&self, name: &Q) -> Option<Txt>
    where
        Box<str>: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.0.get(name).cloned()
    }
    fn remove<Q>(&self, _: &Q) -> Option<Txt>
    where
        Box<str>: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        None
    }
    fn insert(&self, _: Box<str>, _: Txt, _: std::time::Instant) {}
}

/// Why DKIM cannot be checked as configured.
#[derive(Debug, thiserror::Error)]
pub enum DkimError {
    #[error("DKIM resolver: {0}")]
    Resolver(String),
    #[error("trust.dkim_keys {name:?}: {why}")]
    Key { name: String, why: String },
    #[error("DKIM runtime: {0}")]
    Runtime(#[from] std::io::Error),
}

pub struct Checker {
    auth: MessageAuthenticator,
    keys: StaticTxt,
    rt: tokio::runtime::Runtime,
}

impl Checker {
    /// `keys`: `selector._domainkey.domain` → the DKIM TXT record.
    pub fn new(keys: &HashMap<String, String>) -> Result<Checker, DkimError> {
        let auth = MessageAuthenticator::new_system_conf()
            .or_else(|_| MessageAuthenticator::new_cloudflare())
            .map_err(|e| DkimError::Resolver(e.to_string()))?;
        let mut map = HashMap::new();
        for (name, record) in keys {
            let key = DomainKey::parse(record.as_bytes()).map_err(|e| DkimError::Key {
                name: name.clone(),
                why: e.to_string(),
            })?;
            let fqdn = format!("{}.", name.trim_end_matches('.').to_ascii_lowercase());
            map.insert(fqdn.into_boxed_str(), Txt::DomainKey(Arc::new(key)));
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(Checker {
            auth,
            keys: StaticTxt(map),
            rt,
        })
    }

    /// Verify `raw`, whose From address is in `from_domain`. Blocking: call it
    /// from a plain thread (ingestion's).
    pub fn check(&self, raw: &[u8], from_domain: &str) -> Verdict {
        // Each signature may cost a key lookup in DNS and a hash of the
        // body: a mail with hundreds would hold ingestion up. Real mail has
        // one to four (author, provider, list); more is no evidence.
        let n = header_lines(raw)
            .filter(|l| is_header(l, "DKIM-Signature"))
            .count();
        if n > MAX_SIGNATURES {
            return Verdict::Fail(format!(
                "{n} DKIM signatures, more than the {MAX_SIGNATURES} perfbot verifies"
            ));
        }
        let Some(msg) = AuthenticatedMessage::parse(raw) else {
            return Verdict::Unsigned("not parseable for DKIM".into());
        };
        let out = self.rt.block_on(
            self.auth
                .verify_dkim(Parameters::new(&msg).with_txt_cache(&self.keys)),
        );
        if out.is_empty() {
            return Verdict::Unsigned("no DKIM signature".into());
        }
        let mut why = Vec::new();
        let mut unaligned = Vec::new();
        let mut uncovered = None;
        let threading = threading_headers(raw);
        for o in &out {
            match o.result() {
                DkimResult::Pass => {
                    let d = o.signature().map(|s| s.d.to_string()).unwrap_or_default();
                    if aligned(&d, from_domain) {
                        // A decision counts for the thread it answers only
                        // if that is signed too: else a signed reply could be
                        // replayed into another case's thread.
                        let signed = o.signature().map(|s| s.h.as_slice()).unwrap_or_default();
                        let missing: Vec<&str> = threading
                            .iter()
                            .copied()
                            .filter(|t| !signed.iter().any(|h| h.eq_ignore_ascii_case(t)))
                            .collect();
                        if missing.is_empty() {
                            return Verdict::Aligned(d);
                        }
                        uncovered = Some(format!("{d}; {}", missing.join(", ")));
                        continue;
                    }
                    unaligned.push(d);
                }
                DkimResult::Fail(e) | DkimResult::PermError(e) | DkimResult::Neutral(e) => {
                    why.push(e.to_string())
                }
                DkimResult::TempError(e) => {
                    return Verdict::Unsigned(format!("keys unavailable: {e}"))
                }
                DkimResult::None => {}
            }
        }
        if let Some(w) = uncovered {
            Verdict::Uncovered(w)
        } else if !unaligned.is_empty() {
            Verdict::Unaligned(format!("d={}", unaligned.join(", d=")))
        } else if why.is_empty() {
            Verdict::Unsigned("no DKIM signature".into())
        } else {
            Verdict::Fail(why.join("; "))
        }
    }
}

/// Signatures verified at most in one mail (mail servers cap them too).
const MAX_SIGNATURES: usize = 10;

/// The lines of `raw`'s header block (continuation lines included).
fn header_lines(raw: &[u8]) -> impl Iterator<Item = &[u8]> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .or_else(|| raw.windows(2).position(|w| w == b"\n\n"))
        .unwrap_or(raw.len());
    raw[..end].split(|b| *b == b'\n')
}

/// `line` starts the header `name`.
fn is_header(line: &[u8], name: &str) -> bool {
    line.len() > name.len()
        && line[..name.len()].eq_ignore_ascii_case(name.as_bytes())
        && line[name.len()] == b':'
}

/// The threading headers `raw` has (`In-Reply-To`, `References`), as
/// named in a signature's `h=`.
fn threading_headers(raw: &[u8]) -> Vec<&'static str> {
    let lines: Vec<&[u8]> = header_lines(raw).collect();
    ["In-Reply-To", "References"]
        .into_iter()
        .filter(|h| lines.iter().any(|l| is_header(l, h)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threading_headers_of_a_mail() {
        for (raw, want) in [
            (
                &b"From: a@b\r\nIn-Reply-To: <x@y>\r\nreferences: <x@y>\r\n\r\nReferences: no"[..],
                vec!["In-Reply-To", "References"],
            ),
            (
                b"From: a@b\nSubject: Re: x\n\nIn-Reply-To: <body>\n",
                vec![],
            ),
            (b"From: a@b\nX-References: <x>\n\n", vec![]),
        ] {
            assert_eq!(threading_headers(raw), want);
        }
    }

    #[test]
    fn alignment() {
        let cases = [
            ("kernel.org", "kernel.org", true),
            ("kernel.org", "vger.kernel.org", true),
            ("mail.example.co.uk", "example.co.uk", true),
            ("attacker.test", "kernel.org", false),
            ("co.uk", "example.co.uk", false),
            ("user1.github.io", "user2.github.io", false),
            ("gmail.com", "googlemail.com", false),
            ("", "kernel.org", false),
            ("KERNEL.ORG.", "kernel.org", true),
        ];
        for (d, from, want) in cases {
            assert_eq!(aligned(d, from), want, "d={d} from={from}");
        }
    }
}
