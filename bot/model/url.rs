//! Where a mail server is and how to talk to it, from one URL: `smtp://` or
//! `imap://` = STARTTLS (required, except on a loopback host, where plain text
//! is allowed when the server offers no STARTTLS), `?tls=required|opportunistic|none`
//! to choose, `smtps://` or `imaps://` = TLS from the first byte. Credentials
//! never go in the URL.

use super::ids::is_loopback_host;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMode {
    /// STARTTLS, required.
    StartTls,
    /// STARTTLS when offered (loopback hosts only, unless asked for).
    Opportunistic,
    /// TLS from the first byte.
    Implicit,
    /// Plain text (`?tls=none`).
    None,
}

/// What is wrong with a server URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("{url:?}: {why}")]
    Unparsable { url: String, why: String },
    #[error("{url:?} has no host")]
    NoHost { url: String },
    #[error("put the user in {section}.user and the password in {password_var} or {section}.password_file, not in the URL")]
    Credentials {
        section: &'static str,
        password_var: &'static str,
    },
    #[error("scheme {scheme:?}: use {plain}:// or {secure}://")]
    Scheme {
        scheme: String,
        plain: &'static str,
        secure: &'static str,
    },
    #[error("unknown URL option {key}={value}")]
    Option { key: String, value: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerUrl {
    pub host: String,
    pub port: u16,
    pub tls: TlsMode,
}

/// A protocol's schemes, default ports and config section.
struct Protocol {
    plain: &'static str,
    plain_port: u16,
    secure: &'static str,
    secure_port: u16,
    /// `smtp` or `imap`: where the user and password go instead.
    section: &'static str,
    password_var: &'static str,
}

const SMTP: Protocol = Protocol {
    plain: "smtp",
    plain_port: 587,
    secure: "smtps",
    secure_port: 465,
    section: "smtp",
    password_var: "PERFBOT_SMTP_PASSWORD",
};

const IMAP: Protocol = Protocol {
    plain: "imap",
    plain_port: 143,
    secure: "imaps",
    secure_port: 993,
    section: "imap",
    password_var: "PERFBOT_IMAP_PASSWORD",
};

impl ServerUrl {
    /// `smtp://host:port` (587), `smtps://host:port` (465).
    pub fn smtp(s: &str) -> Result<ServerUrl, UrlError> {
        Self::parse(s, &SMTP)
    }

    /// `imap://host:port` (143), `imaps://host:port` (993).
    pub fn imap(s: &str) -> Result<ServerUrl, UrlError> {
        Self::parse(s, &IMAP)
    }

    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    fn parse(s: &str, p: &Protocol) -> Result<ServerUrl, UrlError> {
        let url = url::Url::parse(s).map_err(|e| UrlError::Unparsable {
            url: s.to_string(),
            why: e.to_string(),
        })?;
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| UrlError::NoHost { url: s.to_string() })?
            .to_string();
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlError::Credentials {
                section: p.section,
                password_var: p.password_var,
            });
        }
        let plain = url.scheme() == p.plain;
        let (default_port, mut tls) = if plain {
            let tls = if is_loopback_host(&host) {
                TlsMode::Opportunistic
            } else {
                TlsMode::StartTls
            };
            (p.plain_port, tls)
        } else if url.scheme() == p.secure {
            (p.secure_port, TlsMode::Implicit)
        } else {
            return Err(UrlError::Scheme {
                scheme: url.scheme().to_string(),
                plain: p.plain,
                secure: p.secure,
            });
        };
        for (k, v) in url.query_pairs() {
            tls = match (k.as_ref(), v.as_ref(), plain) {
                ("tls", "required", true) => TlsMode::StartTls,
                ("tls", "opportunistic", true) => TlsMode::Opportunistic,
                ("tls", "none", true) => TlsMode::None,
                _ => {
                    return Err(UrlError::Option {
                        key: k.into_owned(),
                        value: v.into_owned(),
                    })
                }
            };
        }
        Ok(ServerUrl {
            port: url.port().unwrap_or(default_port),
            host,
            tls,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (url, is SMTP) → (port, TLS), or an error.
    type Row = (&'static str, bool, Option<(u16, TlsMode)>);

    #[test]
    fn urls() {
        let cases: &[Row] = &[
            (
                "smtp://127.0.0.1:2525",
                true,
                Some((2525, TlsMode::Opportunistic)),
            ),
            (
                "smtp://mail.example.org",
                true,
                Some((587, TlsMode::StartTls)),
            ),
            (
                "smtps://mail.example.org",
                true,
                Some((465, TlsMode::Implicit)),
            ),
            (
                "smtp://localhost:25?tls=required",
                true,
                Some((25, TlsMode::StartTls)),
            ),
            ("smtp://u:pw@host", true, None),
            ("http://host", true, None),
            ("smtp://host?tls=maybe", true, None),
            ("smtps://host?tls=none", true, None),
            (
                "imap://127.0.0.1:1143",
                false,
                Some((1143, TlsMode::Opportunistic)),
            ),
            (
                "imap://mail.example.org",
                false,
                Some((143, TlsMode::StartTls)),
            ),
            (
                "imaps://mail.example.org",
                false,
                Some((993, TlsMode::Implicit)),
            ),
            ("imap://u:p@h", false, None),
            ("pop3://h", false, None),
            ("smtp://h", false, None),
        ];
        for (s, smtp, want) in cases {
            let got = if *smtp {
                ServerUrl::smtp(s)
            } else {
                ServerUrl::imap(s)
            };
            assert_eq!(got.ok().map(|u| (u.port, u.tls)), *want, "{s}");
        }
    }
}
