//! SMTP delivery with lettre's pooled async transport.
//!
//! Where and how (TLS) comes from `smtp.url` (see `server_url`). A private CA
//! (`smtp.ca_file`) is trusted besides the public roots.

use std::time::Duration;

use lettre::address::Envelope as SmtpEnvelope;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use lettre::transport::smtp::PoolConfig;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

use crate::config::{Config, ConfigError};
use crate::model::url::{ServerUrl, TlsMode};
use crate::model::Address;

/// Why one mail did not go out. Permanent errors (5xx) are not retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    Transient(String),
    Permanent(String),
    /// Nothing can go out until the operator fixes something (the server
    /// refused our credentials): not the mail's fault, so it stays queued.
    Operator(String),
    /// The server fell silent: it may have taken the mail, or not.
    Silent(String),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Transient(s) => write!(f, "temporary failure: {s}"),
            SendError::Permanent(s) => write!(f, "permanent failure: {s}"),
            SendError::Operator(s) => write!(f, "the server refused perfbot itself: {s}"),
            SendError::Silent(s) => write!(f, "temporary failure: {s}"),
        }
    }
}

/// SMTP replies about the client, not the mail: authentication required
/// (530), too weak (534), credentials invalid (535), encryption required for
/// the mechanism (538).
const OPERATOR_CODES: &[u16] = &[530, 534, 535, 538];

/// Text of a lettre error with its causes: the server's reply is in there.
fn describe(e: &lettre::transport::smtp::Error) -> String {
    crate::model::error::chain_line(e).replace(['\r', '\n'], " ")
}

/// What the server said when it took a mail: its reply, and the recipients
/// it refused one by one (the mail went to the others).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Delivered {
    pub reply: String,
    pub refused: Vec<Refused>,
}

/// A recipient the server refused permanently, with its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub address: Address,
    pub why: String,
}

/// The recipient a permanent refusal is about, when the server names it (as
/// Postfix, Exim and most others do: `550 5.1.1 <x@y>: Recipient address
/// rejected`). `None`: the refusal is about the mail, or names nobody.
fn refused_recipient<'a>(why: &str, to: &'a [Address]) -> Option<&'a Address> {
    let lower = why.to_ascii_lowercase();
    let named: Vec<&Address> = to
        .iter()
        .filter(|a| {
            let a = a.as_str().to_ascii_lowercase();
            lower.contains(&format!("<{a}>")) || lower.contains(&format!(" {a}:"))
        })
        .collect();
    // Exactly one named: about that recipient.
    match named.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

#[derive(Clone)]
pub struct SmtpSender {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Address,
    pub url: ServerUrl,
    /// `smtp.timeout_secs`: how long the server may take over one exchange.
    timeout: Duration,
}

/// The exchanges of a mail's conversation besides one RCPT per recipient:
/// greeting, EHLO, STARTTLS, EHLO again, AUTH, MAIL, DATA, the end of data.
const EXCHANGES: u32 = 8;

/// What a conversation that went silent is told as.
fn silent(bound: Duration) -> String {
    format!(
        "the server went silent: the conversation did not end within {} s (smtp.timeout_secs per exchange)",
        bound.as_secs()
    )
}

impl SmtpSender {
    pub fn from_config(config: &Config) -> Result<SmtpSender, ConfigError> {
        let sec = &config.file.smtp;
        let invalid = |message: String| ConfigError::Invalid {
            path: config.source.clone(),
            message,
        };
        let url = ServerUrl::smtp(&sec.url).map_err(|e| invalid(format!("smtp.url: {e}")))?;
        let mut tls = TlsParameters::builder(url.host.clone());
        if !sec.ca_file.as_os_str().is_empty() {
            let p = config.resolve(&sec.ca_file);
            let certs = crate::mail::ca::read(&p)
                .map_err(|e| invalid(format!("smtp.ca_file {}: {e}", p.display())))?;
            for c in certs {
                let c = Certificate::from_der(c.to_vec())
                    .map_err(|e| invalid(format!("smtp.ca_file {}: {e}", p.display())))?;
                tls = tls.add_root_certificate(c);
            }
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
        // lettre's bound on the connect, and perfbot's per exchange.
        let timeout = Duration::from_secs(sec.timeout_secs.max(1));
        let mut b = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(url.host.clone())
            .port(url.port)
            .tls(tls)
            .timeout(Some(timeout))
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
            if pw.is_empty() {
                return Err(invalid(
                    "smtp.user is set but there is no password: set PERFBOT_SMTP_PASSWORD or smtp.password_file".into(),
                ));
            }
            b = b.credentials(Credentials::new(sec.user.clone(), pw.expose().to_string()));
        }
        let email = &config.file.bot.email;
        let from = match &sec.envelope_from {
            Some(a) => a.clone(),
            None => Address::parse(email)
                .ok_or_else(|| invalid(format!("envelope sender {email:?} is not an address")))?,
        };
        Ok(SmtpSender {
            transport: b.build(),
            from,
            url,
            timeout,
        })
    }

    /// Whether the server answers and takes perfbot's login: a connection
    /// as a send makes it (EHLO, TLS as configured, AUTH), then NOOP. The
    /// error says why not.
    pub async fn reachable(&self) -> Result<(), String> {
        // Up to the login, and NOOP.
        let bound = self.timeout * (EXCHANGES - 2);
        match tokio::time::timeout(bound, self.transport.test_connection()).await {
            Err(_) => Err(silent(bound)),
            Ok(Ok(true)) => Ok(()),
            Ok(Ok(false)) => Err("the connection closed after the login".into()),
            Ok(Err(e)) => Err(e.to_string()),
        }
    }

    /// Send `raw` to `to`. A recipient the server refuses permanently by
    /// name is left out and the mail goes to the others (as lists and MTAs
    /// do): lettre gives up at the first refused RCPT before any DATA, so
    /// the mail is sent again without it, and no one gets it twice.
    pub async fn send(&self, to: &[Address], raw: &[u8]) -> Result<Delivered, SendError> {
        let mut to: Vec<Address> = to.to_vec();
        let mut refused = Vec::new();
        loop {
            match self.send_once(&to, raw).await {
                Ok(reply) => return Ok(Delivered { reply, refused }),
                Err(SendError::Permanent(why)) if to.len() > 1 => {
                    let Some(bad) = refused_recipient(&why, &to).cloned() else {
                        return Err(SendError::Permanent(why));
                    };
                    tracing::warn!(recipient = %bad, reply = %why, "recipient refused: sending to the others");
                    to.retain(|a| *a != bad);
                    refused.push(Refused { address: bad, why });
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn send_once(&self, to: &[Address], raw: &[u8]) -> Result<String, SendError> {
        let parse = |a: &Address| {
            a.as_str()
                .parse::<lettre::Address>()
                .map_err(|e| SendError::Permanent(format!("{a}: {e}")))
        };
        let to = to.iter().map(parse).collect::<Result<Vec<_>, _>>()?;
        let env = SmtpEnvelope::new(Some(parse(&self.from)?), to)
            .map_err(|e| SendError::Permanent(e.to_string()))?;
        // lettre bounds only the connect of an async send (lettre#1027): a
        // server that takes the connection and then says nothing would hold
        // the mail, and every mail after it, for ever. The whole
        // conversation is bounded here instead, a timeout per exchange.
        let bound = self.timeout * (EXCHANGES + to_count(&env));
        let sent = tokio::time::timeout(bound, self.transport.send_raw(&env, raw))
            .await
            .map_err(|_| SendError::Silent(silent(bound)))?;
        match sent {
            Ok(resp) => Ok(format!(
                "{} {}",
                resp.code(),
                resp.message().collect::<Vec<_>>().join(" ")
            )),
            Err(e)
                if e.status()
                    .is_some_and(|c| OPERATOR_CODES.contains(&u16::from(c))) =>
            {
                Err(SendError::Operator(describe(&e)))
            }
            Err(e) if e.is_permanent() => Err(SendError::Permanent(describe(&e))),
            Err(e) => Err(SendError::Transient(describe(&e))),
        }
    }
}

fn to_count(env: &SmtpEnvelope) -> u32 {
    u32::try_from(env.to().len()).unwrap_or(u32::MAX / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refused_recipient_is_the_one_the_server_names() {
        let to: Vec<Address> = ["alice@example.test", "nobody@example.test", "a@x.org"]
            .iter()
            .map(|a| Address::parse(a).unwrap())
            .collect();
        let table: [(&str, Option<&str>); 5] = [
            (
                "permanent error (550): 5.1.1 <nobody@example.test>: Recipient address rejected: User unknown",
                Some("nobody@example.test"),
            ),
            ("550 5.1.1 <NOBODY@example.test>: unknown", Some("nobody@example.test")),
            ("550 5.7.1 message content rejected", None),
            // Two named: about the mail, not one recipient.
            ("550 <alice@example.test> and <a@x.org> refused", None),
            ("550 <someone@else.org>: unknown", None),
        ];
        for (why, want) in table {
            let got = refused_recipient(why, &to).map(|a| a.as_str().to_string());
            assert_eq!(got.as_deref(), want, "{why}");
        }
    }
}
