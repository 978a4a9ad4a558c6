//! The `[bot]` and `[report]` sections of `config.toml`: who sends reports and
//! how they look. Defined here, where they are used; `config` reads them.

use std::path::PathBuf;

use serde::Deserialize;

use crate::compare::rules::{DirectionTable, SelectionRules};

/// Everything building a report reads: the `[bot]` and `[report]` sections and
/// the compiled selection and direction rules. Borrowed from the loaded config
/// (`Config::report_setup`), so `report` never depends on `config`.
#[derive(Debug, Clone, Copy)]
pub struct Setup<'a> {
    pub bot: &'a BotSection,
    pub report: &'a ReportSection,
    pub selection: &'a SelectionRules,
    pub directions: &'a DirectionTable,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BotSection {
    /// Where sled keeps cases, threads and the outbox.
    pub state_dir: PathBuf,
    /// Display name of the sender (`perfbot`; the 0-day robot's is `kernel test robot`).
    pub name: String,
    /// The sender's address; also the Reported-by identity.
    pub email: String,
    /// Domain of the Message-IDs perfbot makes.
    pub message_id_domain: String,
}

impl BotSection {
    /// The `From:` of every mail perfbot sends (quoted as headers need).
    pub fn sender(&self) -> String {
        crate::model::ids::mailbox(&self.name, &self.email)
    }

    /// The sender as a report's `Reported-by:` trailer names it.
    pub fn reported_by(&self) -> String {
        crate::model::ids::display_mailbox(&self.name, &self.email)
    }
}

impl Default for BotSection {
    fn default() -> Self {
        BotSection {
            state_dir: "state".into(),
            name: "perfbot".into(),
            email: "perfbot@localhost".into(),
            message_id_domain: "perfbot.localhost".into(),
        }
    }
}

/// A headline verdict that may produce a report (`report.kinds`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportKind {
    Regression,
    Improvement,
}

impl ReportKind {
    pub fn word(self) -> &'static str {
        match self {
            ReportKind::Regression => "regression",
            ReportKind::Improvement => "improvement",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReportSection {
    /// `classic`, `modern`, or a path to a `.hbs` file (its `.subject.hbs` beside it).
    pub template: String,
    pub templates_dir: PathBuf,
    /// `iso-8859-1` (as the robot) or `utf-8`; a mail ISO-8859-1 cannot
    /// hold goes in UTF-8 (`Charset::for_text`).
    pub charset: crate::model::Charset,
    /// Base of the `Closes:`/`Link:` URL: `<archive_url>/<message-id>`.
    pub archive_url: String,
    /// Base of the "materials to reproduce" URL (modern template); empty for none.
    pub materials_url: String,
    /// Smallest change of a directional metric worth a report, in percent.
    pub min_change_percent: f64,
    /// Which headline verdicts produce a report.
    pub kinds: Vec<ReportKind>,
    /// List the headline metric first in its table (the 2018 robot did).
    pub headline_first: bool,
    /// Lists always copied, in order, before the input's own Cc.
    pub cc: Vec<String>,
    /// Copy the sender itself last, as the robot does.
    pub cc_self: bool,
    pub disclaimer: String,
    /// The classic template's sign-off under "Thanks,".
    pub signoff: String,
    /// The signature after `-- ` (the modern templates), or after `---` (the
    /// footer of `lkp-2021`).
    pub signature: String,
    /// The "To reproduce:" block (where no materials link is printed); empty
    /// prints no block.
    pub reproduce: String,
}

impl Default for ReportSection {
    fn default() -> Self {
        ReportSection {
            template: "modern".into(),
            templates_dir: "templates".into(),
            charset: crate::model::Charset::Latin1,
            // lore's redirector finds a message on any list it archives;
            // the robot's own `oe-lkp` is for its identity only.
            archive_url: "https://lore.kernel.org/r".into(),
            materials_url: String::new(),
            min_change_percent: 1.0,
            kinds: vec![ReportKind::Regression, ReportKind::Improvement],
            headline_first: false,
            cc: Vec::new(),
            cc_self: true,
            disclaimer: "Results have been estimated based on internal Intel analysis and are provided\nfor informational purposes only. Any difference in system hardware or software\ndesign or configuration may affect actual performance.".into(),
            signoff: "perfbot".into(),
            signature: "perfbot performance CI".into(),
            reproduce: "        git clone https://github.com/intel/lkp-tests.git\n        cd lkp-tests\n        bin/lkp install job.yaml\n        bin/lkp run     job.yaml".into(),
        }
    }
}
