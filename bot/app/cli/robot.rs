//! `perfbot parse-report` and `perfbot roundtrip`: the kernel test robot's
//! mails read back into report inputs, and written again to compare.

use std::path::PathBuf;

use clap::Args;

use super::{read_input, Failure};
use crate::config::Config;
use crate::flows::robot::{parse_report, roundtrip, RoundTrip};

#[derive(Args, Debug)]
pub struct ParseReportArgs {
    /// A report mail (.eml; `-` for standard input)
    pub mail: PathBuf,
    /// Print the layout and sender found besides the input
    #[arg(long)]
    pub all: bool,
}

pub fn parse(_config: &Config, a: ParseReportArgs) -> Result<(), Failure> {
    let raw = read_input(&a.mail)?;
    let shown = a.mail.display().to_string();
    let parsed = parse_report(&raw, &shown).map_err(Failure::usage)?;
    let mut out = parsed.input.clone();
    out.as_object_mut()
        .expect("an input is an object")
        .insert("layout".into(), parsed.layout.name().into());
    let text = if a.all {
        serde_json::to_string_pretty(&parsed)
    } else {
        serde_json::to_string_pretty(&out)
    }?;
    println!("{text}");
    Ok(())
}

#[derive(Args, Debug)]
pub struct RoundtripArgs {
    /// Report mails (.eml), or folders searched for `00-report.eml` and `*.eml`
    #[arg(required = true)]
    pub mails: Vec<PathBuf>,
    /// One JSON object per mail
    #[arg(long)]
    pub json: bool,
    /// Print the differences of every mail, not only the summary
    #[arg(long)]
    pub diff: bool,
}

fn mails_in(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = walkdir(p);
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    out
}

/// Report mails below a folder: `00-report.eml` of thread folders, or `.eml`.
fn walkdir(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else if p.file_name().is_some_and(|n| n == "00-report.eml")
            || p.to_string_lossy().ends_with(".eml.gz")
            || (p.extension().is_some_and(|x| x == "eml" || x == "txt")
                && !p.file_name().is_some_and(|n| {
                    n.to_string_lossy()
                        .starts_with(|c: char| c.is_ascii_digit())
                }))
        {
            out.push(p);
        }
    }
    out
}

/// A mail file, gunzipped when its name ends in `.gz`.
fn read_mail_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let raw = std::fs::read(path)?;
    if path.extension().is_some_and(|x| x == "gz") {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&raw[..]), &mut out)?;
        return Ok(out);
    }
    Ok(raw)
}

pub fn run(config: &Config, a: RoundtripArgs) -> Result<(), Failure> {
    let files = mails_in(&a.mails);
    if files.is_empty() {
        return Err(Failure::usage(anyhow::anyhow!("no report mails found")));
    }
    let mut results: Vec<RoundTrip> = Vec::new();
    for f in &files {
        let shown = f.display().to_string();
        let r = match read_mail_file(f) {
            Ok(raw) => roundtrip(config, &raw, &shown),
            Err(e) => RoundTrip {
                file: shown,
                layout: None,
                identical: false,
                error: Some(e.to_string()),
                diff: Vec::new(),
                unified: String::new(),
            },
        };
        if a.json {
            println!("{}", serde_json::to_string(&r)?);
        } else if a.diff && !r.identical {
            println!("== {} ({})", r.file, r.layout.as_deref().unwrap_or("?"));
            if let Some(e) = &r.error {
                println!("   error: {e}");
            }
            print!("{}", r.unified);
        }
        results.push(r);
    }
    if !a.json {
        let same = results.iter().filter(|r| r.identical).count();
        let failed = results.iter().filter(|r| r.error.is_some()).count();
        println!(
            "{same} of {} identical ({:.1}%), {} differ, {failed} could not be read or rendered",
            results.len(),
            100.0 * same as f64 / results.len() as f64,
            results.len() - same - failed
        );
    }
    Ok(())
}
