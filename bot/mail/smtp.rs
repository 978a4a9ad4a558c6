//! SMTP delivery with lettre's pooled async transport.
//!
//! The URL says where and how: `smtp://host:port` asks for STARTTLS (and, on a
//! loopback host only, falls back to plain text when the server offers none),
//! `?tls=required` or `?tls=none` override that, `smtps://` is implicit TLS. A
//! private CA (`smtp.ca_file`) is trusted besides the public roots.

use std::time::Duration;

use lettre::address::Envelope as SmtpEnvelope;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use lettre::transport::smtp::PoolConfig;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

use crate::config::{Config, ConfigError};
use crate::mail::Address;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMode {
    /// STARTTLS, required.
    StartTls,
    /// STARTTLS when offered (loopback hosts only).
    Opportunistic,
    /// TLS from the first byte (`smtps://`).
    Implicit,
    /// Plain text (`?tls=none`).
    None,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmtpUrl {
    pub host: String,
    pub port: u16,
    pub tls: TlsMode,
}

impl SmtpUrl {
    pub fn parse(s: &str) -> Result<SmtpUrl, String> {
        let url = url::Url::parse(s).map_err(|e| format!("{s:?}: {e}"))?;
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| format!("{s:?} has no host"))?
            .to_string();
        if !url.username().is_empty() || url.password().is_some() {
            return Err(
                "put the user in smtp.user and the password in PERFBOT_SMTP_PASSWORD or smtp.password_file, not in the URL"
                    .into(),
            );
        }
        let (default_port, mut tls) = match url.scheme() {
            "smtp" => (
                587,
                if crate::mail::address::is_loopback_host(&host) {
                    TlsMode::Opportunistic
                } else {
                    TlsMode::StartTls
                },
            ),
            "smtps" => (465, TlsMode::Implicit),
            other => return Err(format!("scheme {other:?}: use smtp:// or smtps://")),
        };
        for (k, v) in url.query_pairs() {
            match (k.as_ref(), v.as_ref(), url.scheme()) {
                ("tls", "required", "smtp") => tls = TlsMode::StartTls,
                ("tls", "opportunistic", "smtp") => tls = TlsMode::Opportunistic,
                ("tls", "none", "smtp") => tls = TlsMode::None,
                _ => return Err(format!("unknown URL option {k}={v}")),
            }
        }
        Ok(SmtpUrl {
            port: url.port().unwrap_or(default_port),
            host,
            tls,
        })
    }
}

/// Why one mail did not go out. Permanent errors (5xx) are not retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    Transient(String),
    Permanent(String),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Transient(s) => write!(f, "temporary failure: {s}"),
            SendError::Permanent(s) => write!(f, "permanent failure: {s}"),
        }
    }
}

/// Text of a lettre error with its causes: the server's reply is in there.
fn describe(e: &lettre::transport::smtp::Error) -> String {
    use std::error::Error;
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let t = inner.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = inner.source();
    }
    s.replace(['\r', '\n'], " ")
}

#[derive(Clone)]
pub struct SmtpSender {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Address,
    pub url: SmtpUrl,
}

impl SmtpSender {
    pub fn from_config(config: &Config) -> Result<SmtpSender, ConfigError> {
        let sec = &config.file.smtp;
        let invalid = |message: String| ConfigError::Invalid {
            path: config.source.clone(),
            message,
        };
        let url = SmtpUrl::parse(&sec.url).map_err(|e| invalid(format!("smtp.url: {e}")))?;
        let mut tls = TlsParameters::builder(url.host.clone());
        if !sec.ca_file.as_os_str().is_empty() {
            let p = config.resolve(&sec.ca_file);
            let pem = std::fs::read(&p)
                .map_err(|e| invalid(format!("smtp.ca_file {}: {e}", p.display())))?;
            let cert = Certificate::from_pem(&pem)
                .map_err(|e| invalid(format!("smtp.ca_file {}: {e}", p.display())))?;
            tls = tls.add_root_certificate(cert);
        }
        let params = || {
            tls.clone()
                .build_rustls()
                .map_err(|e| invalid(format!("smtp TLS set-up: {e}")))
        };
        let tls = match url.tls {
            TlsMode::StartTls => Tls::Required(params()?),
            TlsMode::Opportunistic => Tls::Opportunistic(params()?),
            TlsMode::Implicit => Tls::Wrapper(params()?),
            TlsMode::None => Tls::None,
        };
        let mut b = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(url.host.clone())
            .port(url.port)
            .tls(tls)
            .timeout(Some(Duration::from_secs(sec.timeout_secs.max(1))))
            .pool_config(
                PoolConfig::new()
                    .max_size(config.file.outbound.concurrency as u32)
                    .idle_timeout(Duration::from_secs(30)),
            );
        if !sec.helo_name.is_empty() {
            b = b.hello_name(ClientId::Domain(sec.helo_name.clone()));
        }
        if !sec.user.is_empty() {
            let pw = config.smtp_password()?;
            b = b.credentials(Credentials::new(sec.user.clone(), pw.expose().to_string()));
        }
        let from_s = if sec.envelope_from.is_empty() {
            &config.file.bot.email
        } else {
            &sec.envelope_from
        };
        let from = Address::parse(from_s)
            .ok_or_else(|| invalid(format!("envelope sender {from_s:?} is not an address")))?;
        Ok(SmtpSender {
            transport: b.build(),
            from,
            url,
        })
    }

    /// Send `raw` to `to`; returns the server's reply on success.
    pub async fn send(&self, to: &[Address], raw: &[u8]) -> Result<String, SendError> {
        let parse = |a: &Address| {
            a.as_str()
                .parse::<lettre::Address>()
                .map_err(|e| SendError::Permanent(format!("{a}: {e}")))
        };
        let to = to.iter().map(parse).collect::<Result<Vec<_>, _>>()?;
        let env = SmtpEnvelope::new(Some(parse(&self.from)?), to)
            .map_err(|e| SendError::Permanent(e.to_string()))?;
        match self.transport.send_raw(&env, raw).await {
            Ok(resp) => Ok(format!(
                "{} {}",
                resp.code(),
                resp.message().collect::<Vec<_>>().join(" ")
            )),
            Err(e) if e.is_permanent() => Err(SendError::Permanent(describe(&e))),
            Err(e) => Err(SendError::Transient(describe(&e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = SmtpUrl::parse("smtp://127.0.0.1:2525").unwrap();
        assert_eq!((u.port, u.tls), (2525, TlsMode::Opportunistic));
        let u = SmtpUrl::parse("smtp://mail.example.org").unwrap();
        assert_eq!((u.port, u.tls), (587, TlsMode::StartTls));
        let u = SmtpUrl::parse("smtps://mail.example.org").unwrap();
        assert_eq!((u.port, u.tls), (465, TlsMode::Implicit));
        let u = SmtpUrl::parse("smtp://localhost:25?tls=required").unwrap();
        assert_eq!(u.tls, TlsMode::StartTls);
        assert!(SmtpUrl::parse("smtp://u:pw@host").is_err());
        assert!(SmtpUrl::parse("http://host").is_err());
        assert!(SmtpUrl::parse("smtp://host?tls=maybe").is_err());
        assert!(SmtpUrl::parse("smtps://host?tls=none").is_err());
    }
}
