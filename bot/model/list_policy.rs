//! Opt-in mail policies, kept in git beside the config: per list (or
//! subsystem), whether perfbot may mail there at all, whom, after which
//! embargo, under which subject prefix, and the consent that enabled it.
//! With a policy file, a report for a list or subsystem that has no entry
//! is muted: recorded and held, never mailed.

use serde::Deserialize;

/// Whom a report for the list goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MailTo {
    /// The commit's author (To) only: no list, no other Cc.
    Author,
    /// To and Cc as the report names them, the list included.
    List,
}

impl MailTo {
    /// As the policy file spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            MailTo::Author => "author",
            MailTo::List => "list",
        }
    }
}

/// Who said yes, and when.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Consent {
    /// The mail in which the list's maintainers agreed.
    pub message_id: String,
    /// A TOML date (`2026-11-01`).
    pub date: toml::value::Datetime,
}

/// One list's (or subsystem's) policy.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListPolicy {
    /// The list's address (`linux-xfs@vger.kernel.org`); empty for a policy
    /// by subsystem only.
    #[serde(default)]
    pub list: String,
    /// Subsystems (`xfs`, `mm`) this policy covers, besides the list.
    #[serde(default)]
    pub subsystems: Vec<String>,
    #[serde(default = "muted_by_default")]
    pub muted: bool,
    #[serde(default = "list_by_default")]
    pub mail: MailTo,
    /// Hours a report waits before it is sent (the maintainers' look first).
    #[serde(default)]
    pub embargo_hours: u32,
    /// Put before the Subject (`[perfbot]`).
    #[serde(default)]
    pub subject_prefix: String,
    /// Required to unmute.
    #[serde(default)]
    pub consent: Option<Consent>,
}

fn muted_by_default() -> bool {
    true
}

fn list_by_default() -> MailTo {
    MailTo::List
}

/// A policy file: `[[list]]` entries.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListPolicies {
    #[serde(default, rename = "list")]
    pub lists: Vec<ListPolicy>,
}

impl ListPolicies {
    /// Parse and check a policy file's text: every field known, every list
    /// an address, every unmuted entry with its consent.
    pub fn parse(text: &str) -> Result<ListPolicies, String> {
        let p: ListPolicies = toml::from_str(text).map_err(|e| e.to_string().trim().to_string())?;
        for (n, l) in p.lists.iter().enumerate() {
            let at = format!("list[{n}]");
            if l.list.is_empty() && l.subsystems.is_empty() {
                return Err(format!("{at}: names no list and no subsystem"));
            }
            if !l.list.is_empty() && crate::model::Address::parse(&l.list).is_none() {
                return Err(format!("{at}.list: {:?} is not a list address", l.list));
            }
            if !l.muted && l.consent.is_none() {
                return Err(format!(
                    "{at} ({}): unmuted without `consent = {{ message_id = \"…\", date = YYYY-MM-DD }}`",
                    l.name()
                ));
            }
            if l.subject_prefix.contains(['\r', '\n']) || l.embargo_hours > 24 * 30 {
                return Err(format!(
                    "{at}: subject_prefix must be one line, embargo_hours at most 720"
                ));
            }
        }
        Ok(p)
    }

    /// The policy for a report to `recipients` (bare addresses) about
    /// `subsystem`: the first entry whose list is a recipient, else the first
    /// that covers the subsystem.
    pub fn find(&self, recipients: &[String], subsystem: Option<&str>) -> Option<&ListPolicy> {
        self.lists
            .iter()
            .find(|l| {
                !l.list.is_empty() && recipients.iter().any(|r| r.eq_ignore_ascii_case(&l.list))
            })
            .or_else(|| {
                let s = subsystem?;
                self.lists
                    .iter()
                    .find(|l| l.subsystems.iter().any(|x| x == s))
            })
    }
}

impl ListPolicy {
    /// `linux-xfs@…: open, mail list, embargo 24 h, prefix "[perfbot]",
    /// consent <…> of 2026-11-01`: what `policy check` and a report's plan say.
    pub fn describe(&self) -> String {
        let consent = self
            .consent
            .as_ref()
            .map(|c| format!("consent {} of {}", c.message_id, c.date))
            .unwrap_or_else(|| "no consent".into());
        let prefix = if self.subject_prefix.is_empty() {
            "no subject prefix".to_string()
        } else {
            format!("subject prefix {:?}", self.subject_prefix)
        };
        format!(
            "{}: {}, mail {}, embargo {} h, {prefix}, {consent}",
            self.name(),
            if self.muted { "muted" } else { "open" },
            self.mail.as_str(),
            self.embargo_hours,
        )
    }

    pub fn name(&self) -> String {
        if self.list.is_empty() {
            format!("subsystems {}", self.subsystems.join(", "))
        } else {
            self.list.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_files_are_checked() {
        let table: [(&str, Result<usize, &str>); 6] = [
            ("", Ok(0)),
            ("[[list]]\nlist = \"linux-xfs@vger.kernel.org\"\n", Ok(1)),
            (
                "[[list]]\nlist = \"linux-xfs@vger.kernel.org\"\nmuted = false\nconsent = { message_id = \"<a@b>\", date = 2026-11-01 }\n",
                Ok(1),
            ),
            ("[[list]]\nlist = \"x@y.org\"\nmuted = false\n", Err("consent")),
            ("[[list]]\nlist = \"x@y.org\"\nmute = true\n", Err("unknown field `mute`")),
            ("[[list]]\nlist = \"not a list\"\n", Err("not a list address")),
        ];
        for (text, want) in table {
            match (ListPolicies::parse(text), want) {
                (Ok(p), Ok(n)) => assert_eq!(p.lists.len(), n, "{text}"),
                (Err(e), Err(w)) => assert!(e.contains(w), "{text}: {e}"),
                (got, want) => panic!("{text}: {got:?}, wanted {want:?}"),
            }
        }
    }

    #[test]
    fn a_report_finds_its_list_then_its_subsystem() {
        let p = ListPolicies::parse(
            "[[list]]\nlist = \"linux-xfs@vger.kernel.org\"\n[[list]]\nsubsystems = [\"mm\"]\n",
        )
        .unwrap();
        let r = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            p.find(&r(&["a@b.org", "LINUX-XFS@vger.kernel.org"]), None)
                .unwrap()
                .list,
            "linux-xfs@vger.kernel.org"
        );
        assert!(p.find(&r(&["a@b.org"]), Some("mm")).is_some());
        assert!(p.find(&r(&["a@b.org"]), Some("btrfs")).is_none());
    }
}
