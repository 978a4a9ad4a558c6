//! Handlebars rendering of the report view model into a subject and a body.
//!
//! Templates are plain text: nothing is HTML-escaped, and values are never
//! re-parsed as templates, so `{{` in a commit subject stays literal text.

use std::path::Path;

use super::build::{ReportError, ReportView};

/// Subject and body template text of report template `name` (`classic`,
/// `modern`, or a `.hbs` path with its `.subject.hbs` beside it).
pub fn load(dir: &Path, name: &str) -> Result<(String, String), ReportError> {
    let err = |e: crate::templates::TemplateError| ReportError::Template(e.to_string());
    if crate::templates::is_path(name) {
        let body = crate::templates::text(dir, name).map_err(err)?;
        let subject_path = crate::templates::path_of(dir, name).with_extension("subject.hbs");
        let subject = std::fs::read_to_string(&subject_path)
            .map_err(|e| ReportError::Template(format!("{}: {e}", subject_path.display())))?;
        return Ok((body, subject));
    }
    if !crate::templates::REPORT_TEMPLATES.contains(&name) {
        return Err(ReportError::Template(format!(
            "unknown template {name:?}: use classic, modern or a .hbs path"
        )));
    }
    let body = crate::templates::text(dir, name).map_err(err)?;
    let subject = crate::templates::text(dir, &format!("{name}.subject")).map_err(err)?;
    Ok((body, subject))
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
    let mut hb = crate::templates::plain();
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
