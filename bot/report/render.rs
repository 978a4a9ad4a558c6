//! Handlebars rendering of the report view model into a subject and a body.
//!
//! Templates are plain text: nothing is HTML-escaped, and values are never
//! re-parsed as templates, so `{{` in a commit subject stays literal text.

use std::path::Path;

use handlebars::Handlebars;

use super::build::{ReportError, ReportView};

const BUILTIN: &[(&str, &str, &str)] = &[
    (
        "classic",
        include_str!("../../templates/classic.hbs"),
        include_str!("../../templates/classic.subject.hbs"),
    ),
    (
        "modern",
        include_str!("../../templates/modern.hbs"),
        include_str!("../../templates/modern.subject.hbs"),
    ),
];

pub fn is_builtin(name: &str) -> bool {
    BUILTIN.iter().any(|(n, _, _)| *n == name)
}

/// Subject and body template text: from `path` when it exists, else built in.
pub fn load(name: &str, path: &Path) -> Result<(String, String), ReportError> {
    if path.exists() {
        let body = std::fs::read_to_string(path)
            .map_err(|e| ReportError::Template(format!("{}: {e}", path.display())))?;
        let subject_path = path.with_extension("subject.hbs");
        let subject = std::fs::read_to_string(&subject_path)
            .map_err(|e| ReportError::Template(format!("{}: {e}", subject_path.display())))?;
        return Ok((body, subject));
    }
    BUILTIN
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, b, s)| (b.to_string(), s.to_string()))
        .ok_or_else(|| {
            ReportError::Template(format!(
                "unknown template {name:?}: use classic, modern or a .hbs path"
            ))
        })
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub subject: String,
    pub body: String,
}

pub fn render(
    view: &ReportView,
    body_tpl: &str,
    subject_tpl: &str,
) -> Result<Rendered, ReportError> {
    let mut hb = Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_escape_fn(handlebars::no_escape);
    hb.register_template_string("body", body_tpl)
        .map_err(|e| ReportError::Template(e.to_string()))?;
    hb.register_template_string("subject", subject_tpl)
        .map_err(|e| ReportError::Template(e.to_string()))?;
    let body = hb
        .render("body", view)
        .map_err(|e| ReportError::Template(e.to_string()))?;
    let subject = hb
        .render("subject", view)
        .map_err(|e| ReportError::Template(e.to_string()))?;
    // A subject is one line whatever the template or the data did.
    let subject = subject.replace(['\r', '\n'], " ").trim().to_string();
    Ok(Rendered { subject, body })
}
