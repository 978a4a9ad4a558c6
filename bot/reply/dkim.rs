//! Optional DKIM verification of replies (mail-auth). A signature that fails
//! lowers the sender's trust: their words are recorded and understood, but they
//! cannot decide the case. Keys come from DNS, or from `[trust] dkim_keys`
//! (selector._domainkey.domain → TXT record) for private or offline setups.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use mail_auth::common::parse::TxtRecordParser;
use mail_auth::common::verify::DomainKey;
use mail_auth::{
    AuthenticatedMessage, DkimResult, MessageAuthenticator, Parameters, ResolverCache, Txt,
};

/// What the DKIM check said about a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// At least one valid signature (by this domain).
    Pass(String),
    /// Signed, and no signature verifies (the reason).
    Fail(String),
    /// Not signed (or keys could not be fetched): no evidence either way.
    Unsigned(String),
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

pub struct Checker {
    auth: MessageAuthenticator,
    keys: StaticTxt,
    rt: tokio::runtime::Runtime,
}

impl Checker {
    /// `keys`: `selector._domainkey.domain` → the DKIM TXT record.
    pub fn new(keys: &HashMap<String, String>) -> Result<Checker, String> {
        let auth = MessageAuthenticator::new_system_conf()
            .or_else(|_| MessageAuthenticator::new_cloudflare())
            .map_err(|e| format!("DKIM resolver: {e}"))?;
        let mut map = HashMap::new();
        for (name, record) in keys {
            let key = DomainKey::parse(record.as_bytes())
                .map_err(|e| format!("trust.dkim_keys {name:?}: {e}"))?;
            let fqdn = format!("{}.", name.trim_end_matches('.').to_ascii_lowercase());
            map.insert(fqdn.into_boxed_str(), Txt::DomainKey(Arc::new(key)));
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Checker {
            auth,
            keys: StaticTxt(map),
            rt,
        })
    }

    /// Verify `raw`. Blocking: call it from a plain thread (ingestion's).
    pub fn check(&self, raw: &[u8]) -> Verdict {
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
        for o in &out {
            match o.result() {
                DkimResult::Pass => {
                    let d = o.signature().map(|s| s.d.to_string()).unwrap_or_default();
                    return Verdict::Pass(d);
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
        if why.is_empty() {
            Verdict::Unsigned("no DKIM signature".into())
        } else {
            Verdict::Fail(why.join("; "))
        }
    }
}
