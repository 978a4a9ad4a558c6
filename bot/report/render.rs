//! Handlebars rendering of the report view model into a subject and a body.
//!
//! Templates are plain text: nothing is HTML-escaped, and values are never
//! re-parsed as templates, so `{{` in a commit subject stays literal text.
//! The template text comes from `templates::report_pair`: nothing here reads files.

use super::build::ReportError;
use super::view::ReportView;

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
    let subject_tpl = view
        .finish
        .subject_template
        .as_deref()
        .unwrap_or(subject_tpl);
    hb.register_template_string("subject", subject_tpl)
        .map_err(|e| ReportError::Template(e.to_string()))?;
    let body = hb
        .render("body", view)
        .map_err(|e| ReportError::Template(e.to_string()))?;
    let body = match &view.finish.appendix {
        Some(rows) => with_appendix(&body, rows),
        None => body,
    };
    let body = crate::model::spacing::apply(&body, &view.finish.spacing);
    let body = crate::model::spacing::insert_remarks(&body, &view.finish.remarks);
    let body = with_row_notes(&body, &view.finish.row_notes);
    let body = match &view.finish.trailer {
        Some(t) => format!("{body}{t}\n"),
        None => body,
    };
    let subject = hb
        .render("subject", view)
        .map_err(|e| ReportError::Template(e.to_string()))?;
    // A subject is one line whatever the template or the data did.
    let subject = subject.replace(['\r', '\n'], " ").trim().to_string();
    Ok(Rendered { subject, body })
}

/// `body` with the operators' marks after the table rows they were written
/// on: each after the first row line that ends with its metric.
fn with_row_notes(body: &str, notes: &[(String, String)]) -> String {
    if notes.is_empty() {
        return body.to_string();
    }
    let mut done = vec![false; notes.len()];
    let mut out = String::with_capacity(body.len() + 64 * notes.len());
    for line in body.split_inclusive('\n') {
        let text = line.trim_end_matches('\n');
        out.push_str(text);
        if let Some(k) = notes
            .iter()
            .enumerate()
            .position(|(k, (m, _))| !done[k] && text.ends_with(&format!("  {m}")))
        {
            out.push_str(&notes[k].1);
            done[k] = true;
        }
        out.push_str(&line[text.len()..]);
    }
    out
}

/// `body` with rows after its end, as the robot appended them once in 2024:
/// two blank lines, its line saying so, a blank line, the rows, and then the
/// blank lines the body ended with.
fn with_appendix(body: &str, rows: &str) -> String {
    let text = body.trim_end_matches('\n');
    let ending = &body[text.len()..];
    format!("{text}\n\n\n<below more details following above table FYI>\n\n{rows}{ending}")
}
