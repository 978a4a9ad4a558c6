//! Small typed values for mail identity.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A Message-ID without its angle brackets (`perfbot.0a1b…@example.org`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MessageId(String);

impl MessageId {
    /// Normalise: strip brackets, comments and surrounding junk; `None` when
    /// nothing id-like remains.
    pub fn parse(raw: &str) -> Option<MessageId> {
        let s = raw.trim();
        let s = match (s.find('<'), s.find('>')) {
            (Some(a), Some(b)) if a < b => &s[a + 1..b],
            _ => s,
        };
        let s = s.trim();
        if s.is_empty()
            || s.len() > 998
            || s.contains(|c: char| c.is_whitespace() || c.is_control() || c == '<' || c == '>')
        {
            return None;
        }
        Some(MessageId(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// With angle brackets, for headers.
    pub fn bracketed(&self) -> String {
        format!("<{}>", self.0)
    }
}

/// Look a Message-ID up by its text (`HashMap<MessageId, _>::get(&str)`):
/// the text is the id, as `parse` leaves it.
impl std::borrow::Borrow<str> for MessageId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for MessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The bare address of `Name <addr>` or `addr`, lower-cased for comparison.
pub fn bare_address(mailbox: &str) -> String {
    let s = mailbox.trim();
    let s = match (s.rfind('<'), s.rfind('>')) {
        (Some(a), Some(b)) if a < b => &s[a + 1..b],
        _ => s,
    };
    s.trim().to_ascii_lowercase()
}

/// `Name <addr>` as a header takes it: the name quoted when it needs to be
/// (`"Chinner, Dave" <david@fromorbit.com>`), the bare address without a name.
/// Control characters cannot stand in a header's name, so they are left out
/// (a damaged archive copy has `Dan Willia\r\0`); a name lettre still cannot
/// write gives the bare address, never a panic.
pub fn mailbox(name: &str, email: &str) -> String {
    use std::fmt::Write;
    let name: String = name.chars().filter(|c| !c.is_control()).collect();
    match email.trim().parse::<lettre::Address>() {
        Ok(a) if !name.trim().is_empty() => {
            let mut out = String::new();
            let mailbox = lettre::message::Mailbox::new(Some(name.trim().to_string()), a.clone());
            match write!(out, "{mailbox}") {
                Ok(()) => out,
                Err(_) => a.to_string(),
            }
        }
        Ok(a) => a.to_string(),
        Err(_) => email.to_string(),
    }
}

/// Addresses that never get mail from perfbot: the one test every recipient
/// list goes through (a report's headers when it is queued, each envelope
/// when it is sent).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptOuts(std::collections::HashSet<Address>);

impl OptOuts {
    pub fn new(addresses: impl IntoIterator<Item = Address>) -> OptOuts {
        OptOuts(addresses.into_iter().collect())
    }

    pub fn contains(&self, a: &Address) -> bool {
        self.0.contains(a)
    }

    /// Whether the mailbox (`Name <addr>` or `addr`) is opted out.
    pub fn excludes(&self, mailbox: &str) -> bool {
        Address::parse(mailbox).is_some_and(|a| self.contains(&a))
    }
}

/// `Name <addr>` as a person reads it in text (a report's `Reported-by:`, a
/// timeline), unquoted; the address alone when there is no name. Headers
/// use `mailbox`, which quotes what RFC 5322 needs quoted.
pub fn display_mailbox(name: &str, email: &str) -> String {
    if name.trim().is_empty() {
        email.to_string()
    } else {
        format!("{} <{}>", name.trim(), email)
    }
}

/// `localhost` or a loopback IP: where plain-text mail protocols are allowed.
pub fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The organizational domain of `domain` (lower case): its registrable part
/// under the Public Suffix List, or the name itself when it has none.
pub fn organizational_domain(domain: &str) -> String {
    let d = domain.trim_end_matches('.').to_ascii_lowercase();
    match psl::domain_str(&d) {
        Some(org) => org.to_string(),
        None => d,
    }
}

/// A bare e-mail address, lower-cased: what opt-outs, trust and envelopes compare.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Address(String);

impl Address {
    /// From `Name <addr>` or `addr`; `None` unless it is a valid address.
    pub fn parse(mailbox: &str) -> Option<Address> {
        let bare = bare_address(mailbox);
        bare.parse::<lettre::Address>().ok()?;
        Some(Address(bare))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// A display name, whatever it holds (quotes, brackets, commas,
        /// control characters, any script: archives hold all of them),
        /// never changes the address a header's mailbox carries.
        #[test]
        fn a_name_never_changes_the_address(
            name in "\\PC{0,30}|[\"<>,;:@\\\\()\\[\\] a-z\r\n\t\u{0}]{0,20}",
            local in "[a-z0-9._+-]{1,12}",
            domain in "[a-z0-9-]{1,10}\\.(org|com|de)",
        ) {
            let email = format!("{local}@{domain}");
            let want = Address::parse(&email);
            let header = mailbox(&name, &email);
            proptest::prop_assert_eq!(Address::parse(&header), want, "{}", header);
        }

        /// A Message-ID read back from its header form is itself; reading
        /// one twice changes nothing.
        #[test]
        fn message_ids_read_back(raw in "\\PC{0,40}") {
            if let Some(id) = MessageId::parse(&raw) {
                proptest::prop_assert_eq!(MessageId::parse(&id.bracketed()), Some(id.clone()));
                proptest::prop_assert_eq!(MessageId::parse(id.as_str()), Some(id));
            }
        }
    }

    #[test]
    fn message_ids() {
        assert_eq!(MessageId::parse("<a@b>").unwrap().as_str(), "a@b");
        assert_eq!(MessageId::parse(" a@b ").unwrap().as_str(), "a@b");
        assert_eq!(
            MessageId::parse("(comment) <a@b> junk").unwrap().as_str(),
            "a@b"
        );
        assert!(MessageId::parse("<>").is_none());
        assert!(MessageId::parse("a b@c").is_none());
    }

    #[test]
    fn bare() {
        assert_eq!(
            bare_address("Dave Chinner <David@Fromorbit.com>"),
            "david@fromorbit.com"
        );
        assert_eq!(bare_address("<x@y>"), "x@y");
    }

    #[test]
    fn mailboxes_as_headers_take_them() {
        for (name, email, want) in [
            (
                "Dave Chinner",
                "david@fromorbit.com",
                "Dave Chinner <david@fromorbit.com>",
            ),
            (
                "Chinner, Dave",
                "david@fromorbit.com",
                "\"Chinner, Dave\" <david@fromorbit.com>",
            ),
            ("", "david@fromorbit.com", "david@fromorbit.com"),
            (
                "Dan Willia\r\0",
                "dan@intel.com",
                "Dan Willia <dan@intel.com>",
            ),
            ("\0\r\n", "dan@intel.com", "dan@intel.com"),
            ("Dan", "not an address", "not an address"),
        ] {
            assert_eq!(mailbox(name, email), want, "{name:?} {email:?}");
        }
    }

    #[test]
    fn addresses() {
        assert_eq!(Address::parse("A <B@C.org>").unwrap().as_str(), "b@c.org");
        assert!(Address::parse("not an address").is_none());
        assert!(Address::parse("a@b\r\nBcc: x@y").is_none());
    }
}
