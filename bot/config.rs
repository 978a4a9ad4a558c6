//! `config.toml`: one file for the whole bot, validated at start-up.
//!
//! Paths in it are relative to the directory of the config file. Every section
//! has defaults, so an empty file is a working (file-outbox, maildir) config.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::compare::rules::{DirectionEntry, DirectionTable, RulesError, SelectionRules};

/// The repository's default config, built in so that the binary runs anywhere.
pub const DEFAULT_CONFIG: &str = include_str!("../config.toml");

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("{path}: {source}")]
    Rules { path: String, source: RulesError },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BotSection {
    /// Where sled keeps cases, threads and the outbox.
    pub state_dir: PathBuf,
    /// Display name of the sender (`kernel test robot`).
    pub name: String,
    /// The sender's address; also the Reported-by identity.
    pub email: String,
    /// Domain of the Message-IDs perfbot makes.
    pub message_id_domain: String,
}

impl Default for BotSection {
    fn default() -> Self {
        BotSection {
            state_dir: "state".into(),
            name: "kernel test robot".into(),
            email: "perfbot@localhost".into(),
            message_id_domain: "perfbot.localhost".into(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReportSection {
    /// `classic`, `modern`, or a path to a `.hbs` file (its `.subject.hbs` beside it).
    pub template: String,
    pub templates_dir: PathBuf,
    /// `iso-8859-1` (as the robot) or `utf-8`.
    pub charset: String,
    /// Base of the `Closes:`/`Link:` URL: `<archive_url>/<message-id>`.
    pub archive_url: String,
    /// Base of the "materials to reproduce" URL (modern template); empty for none.
    pub materials_url: String,
    /// Smallest change of a directional metric worth a report, in percent.
    pub min_change_percent: f64,
    /// Which headline verdicts produce a report.
    pub kinds: Vec<String>,
    /// List the headline metric first in its table (the 2018 robot did).
    pub headline_first: bool,
    /// Lists always copied, in order, before the input's own Cc.
    pub cc: Vec<String>,
    /// Copy the sender itself last, as the robot does.
    pub cc_self: bool,
    pub disclaimer: String,
    /// The classic template's sign-off under "Thanks,".
    pub signoff: String,
    /// The modern template's signature after `-- `.
    pub signature: String,
    /// The classic template's "To reproduce:" block.
    pub reproduce: String,
}

impl Default for ReportSection {
    fn default() -> Self {
        ReportSection {
            template: "modern".into(),
            templates_dir: "templates".into(),
            charset: "iso-8859-1".into(),
            archive_url: "https://lore.kernel.org/oe-lkp".into(),
            materials_url: String::new(),
            min_change_percent: 1.0,
            kinds: vec!["regression".into(), "improvement".into()],
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

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CompareSection {
    /// Overrides of `bot/rules/selection.toml`, key by key.
    pub selection: Option<toml::Table>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutboundSection {
    /// `file` (the default: `.eml` files in `outbox_dir`), `smtp` or `stdout`.
    pub transport: String,
    pub outbox_dir: PathBuf,
}

impl Default for OutboundSection {
    fn default() -> Self {
        OutboundSection {
            transport: "file".into(),
            outbox_dir: "state/outbox".into(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InboundSection {
    /// `maildir` (the default) or `imap`.
    pub source: String,
    pub maildir: PathBuf,
}

impl Default for InboundSection {
    fn default() -> Self {
        InboundSection {
            source: "maildir".into(),
            maildir: "state/inbox".into(),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConfigFile {
    pub bot: BotSection,
    pub report: ReportSection,
    pub compare: CompareSection,
    /// Extra metric directions, consulted before the built-in table.
    pub direction: Vec<DirectionEntry>,
    pub outbound: OutboundSection,
    pub inbound: InboundSection,
}

/// The validated configuration, with paths resolved and rules compiled.
#[derive(Debug, Clone)]
pub struct Config {
    pub source: String,
    pub file: ConfigFile,
    pub base_dir: PathBuf,
    pub selection: SelectionRules,
    pub directions: DirectionTable,
}

impl Config {
    /// Load `path`, or the built-in default when `path` is `None`.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        match path {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| ConfigError::Invalid {
                    path: p.display().to_string(),
                    message: e.to_string(),
                })?;
                let dir = p.parent().map(Path::to_path_buf).unwrap_or_default();
                let dir = if dir.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    dir
                };
                Self::parse(&text, &p.display().to_string(), dir)
            }
            None => Self::parse(DEFAULT_CONFIG, "(built-in config.toml)", PathBuf::from(".")),
        }
    }

    pub fn parse(text: &str, source: &str, base_dir: PathBuf) -> Result<Config, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: source.to_string(),
            message,
        };
        let file: ConfigFile =
            toml::from_str(text).map_err(|e| invalid(e.to_string().trim().to_string()))?;
        let selection =
            SelectionRules::with_overrides(file.compare.selection.as_ref()).map_err(|e| {
                ConfigError::Rules {
                    path: source.to_string(),
                    source: e,
                }
            })?;
        let directions =
            DirectionTable::with_overrides(&file.direction).map_err(|e| ConfigError::Rules {
                path: source.to_string(),
                source: e,
            })?;
        if !file.bot.email.contains('@') || file.bot.email.contains(['\r', '\n', '<', '>']) {
            return Err(invalid(format!(
                "bot.email {:?} is not an address",
                file.bot.email
            )));
        }
        if file.bot.name.contains(['\r', '\n']) {
            return Err(invalid("bot.name must be one line".into()));
        }
        if !matches!(
            file.report.charset.to_ascii_lowercase().as_str(),
            "iso-8859-1" | "utf-8"
        ) {
            return Err(invalid(format!(
                "report.charset {:?}: use \"iso-8859-1\" or \"utf-8\"",
                file.report.charset
            )));
        }
        for k in &file.report.kinds {
            if !matches!(k.as_str(), "regression" | "improvement") {
                return Err(invalid(format!(
                    "report.kinds: {k:?} is not \"regression\" or \"improvement\""
                )));
            }
        }
        if !matches!(file.outbound.transport.as_str(), "file" | "stdout" | "smtp") {
            return Err(invalid(format!(
                "outbound.transport {:?}: use file, stdout or smtp",
                file.outbound.transport
            )));
        }
        let config = Config {
            source: source.to_string(),
            file,
            base_dir,
            selection,
            directions,
        };
        let t = config.template_path(&config.file.report.template);
        if !crate::report::render::is_builtin(&config.file.report.template) && !t.exists() {
            return Err(invalid(format!(
                "report.template: {} does not exist",
                t.display()
            )));
        }
        Ok(config)
    }

    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }

    pub fn state_dir(&self) -> PathBuf {
        self.resolve(&self.file.bot.state_dir)
    }

    pub fn outbox_dir(&self) -> PathBuf {
        self.resolve(&self.file.outbound.outbox_dir)
    }

    /// A template by name (`classic`, `modern`) or path.
    pub fn template_path(&self, name: &str) -> PathBuf {
        if name.ends_with(".hbs") || name.contains('/') {
            PathBuf::from(name)
        } else {
            self.resolve(&self.file.report.templates_dir)
                .join(format!("{name}.hbs"))
        }
    }
}
