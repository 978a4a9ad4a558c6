//! `perfbot digest`: the thread-status digest as text, HTML or JSON; or
//! queued as a mail to the operators.

use anyhow::anyhow;
use chrono::Utc;
use clap::{Args, ValueEnum};

use super::{open_store, Failure};
use crate::config::Config;
use crate::flows::digest;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// As the e-mail says it
    Text,
    /// The dashboard's page
    Html,
    Json,
}

#[derive(Args, Debug)]
pub struct DigestArgs {
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Closed cases since: 7d, 36h, 2w
    #[arg(long, default_value = "7d", value_parser = since)]
    pub since: chrono::Duration,
    /// Queue it as a mail to the operators (digest.to)
    #[arg(long)]
    pub send: bool,
}

fn since(s: &str) -> Result<chrono::Duration, String> {
    digest::parse_since(s).ok_or_else(|| format!("{s:?}: use e.g. 7d, 36h, 2w"))
}

pub fn run(config: &Config, a: DigestArgs) -> Result<(), Failure> {
    // Refused before anything is printed, so the digest on the screen is
    // never taken for one that was queued.
    if a.send && config.digest_to().is_empty() {
        return Err(Failure::usage(anyhow!(
            "nobody gets the digest: set digest.to or trust.operators"
        )));
    }
    // An old copy of a template used leaves out what was added since.
    let mut used = match a.format {
        Format::Json => vec![],
        Format::Text => vec![config.file.digest.template.clone()],
        Format::Html => vec!["web/digest".to_string(), "web/layout".to_string()],
    };
    if a.send {
        used.push(config.file.digest.template.clone());
    }
    for d in config.template_drift() {
        if used.contains(&d.name) {
            eprintln!("warning: {d}");
        }
    }
    let store = open_store(config)?;
    let now = Utc::now();
    let d = digest::from_store(&store, now, now - a.since, config.digest_thresholds())?;
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&d)?),
        Format::Text => print!("{}", digest::render_text(config, &d)?),
        Format::Html => {
            let hb = crate::app::web::templates(config)?;
            let content = hb.render("digest", &digest::view(&d))?;
            let page = crate::app::web::Layout {
                title: "Digest",
                content,
            };
            print!("{}", hb.render("layout", &page)?);
        }
    }
    if a.send {
        if let Some(id) = digest::queue_mail(config, &store, &d, digest::Occasion::ByHand)? {
            eprintln!("digest queued as <{id}>; `perfbot send` delivers it");
        }
    }
    Ok(())
}
