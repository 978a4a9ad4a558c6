//! Every Handlebars template perfbot renders, in one place: the built-in copies
//! (so the binary works with a config anywhere), the lookup of an operator's
//! own copy (`templates_dir/<name>.hbs`, or a path), and the two ways they are
//! rendered: plain text for mail (strict, nothing escaped, values never
//! re-parsed) and HTML for the dashboard (escaped).

use std::path::{Path, PathBuf};

use handlebars::Handlebars;

use crate::model::layout::Layout;

/// The built-in copy of each template, by name.
const BUILTIN: &[(&str, &str)] = &[
    ("classic", include_str!("../templates/classic.hbs")),
    (
        "classic.subject",
        include_str!("../templates/classic.subject.hbs"),
    ),
    ("modern", include_str!("../templates/modern.hbs")),
    (
        "modern.subject",
        include_str!("../templates/modern.subject.hbs"),
    ),
    ("lkp-2014", include_str!("../templates/lkp-2014.hbs")),
    (
        "lkp-2014.subject",
        include_str!("../templates/lkp-2014.subject.hbs"),
    ),
    ("lkp-2018", include_str!("../templates/lkp-2018.hbs")),
    (
        "lkp-2018.subject",
        include_str!("../templates/lkp-2018.subject.hbs"),
    ),
    ("lkp-2021", include_str!("../templates/lkp-2021.hbs")),
    (
        "lkp-2021.subject",
        include_str!("../templates/lkp-2021.subject.hbs"),
    ),
    ("lkp-2022", include_str!("../templates/lkp-2022.hbs")),
    (
        "lkp-2022.subject",
        include_str!("../templates/lkp-2022.subject.hbs"),
    ),
    ("lkp-2022-11", include_str!("../templates/lkp-2022-11.hbs")),
    (
        "lkp-2022-11.subject",
        include_str!("../templates/lkp-2022-11.subject.hbs"),
    ),
    ("lkp-2023", include_str!("../templates/lkp-2023.hbs")),
    (
        "lkp-2023.subject",
        include_str!("../templates/lkp-2023.subject.hbs"),
    ),
    ("lkp-2023-04", include_str!("../templates/lkp-2023-04.hbs")),
    (
        "lkp-2023-04.subject",
        include_str!("../templates/lkp-2023-04.subject.hbs"),
    ),
    ("lkp-2023-08", include_str!("../templates/lkp-2023-08.hbs")),
    (
        "lkp-2023-08.subject",
        include_str!("../templates/lkp-2023-08.subject.hbs"),
    ),
    ("lkp-2024", include_str!("../templates/lkp-2024.hbs")),
    (
        "lkp-2024.subject",
        include_str!("../templates/lkp-2024.subject.hbs"),
    ),
    ("lkp-2025", include_str!("../templates/lkp-2025.hbs")),
    (
        "lkp-2025.subject",
        include_str!("../templates/lkp-2025.subject.hbs"),
    ),
    // 2026 mails read as 2025's; what differs (a patch's prefix kept in the
    // tables' commit lines) is a rule of the era in the report builder.
    ("lkp-2026", include_str!("../templates/lkp-2025.hbs")),
    (
        "lkp-2026.subject",
        include_str!("../templates/lkp-2025.subject.hbs"),
    ),
    ("ack", include_str!("../templates/ack.hbs")),
    ("escalation", include_str!("../templates/escalation.hbs")),
    (
        "command-error",
        include_str!("../templates/command-error.hbs"),
    ),
    ("digest", include_str!("../templates/digest.hbs")),
    ("reminder", include_str!("../templates/reminder.hbs")),
    ("web/layout", include_str!("../templates/web/layout.hbs")),
    ("web/list", include_str!("../templates/web/list.hbs")),
    ("web/case", include_str!("../templates/web/case.hbs")),
    ("web/digest", include_str!("../templates/web/digest.hbs")),
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("unknown template {name:?}: use {} or a .hbs path", Layout::names())]
    UnknownReport { name: String },
    #[error("template {name:?}: {why}")]
    Missing { name: String, why: String },
    #[error("template {name:?}: {why}")]
    Syntax { name: String, why: String },
    #[error("template {name:?}: {why}")]
    Render { name: String, why: String },
}

/// The built-in text of `name`, if there is one.
pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Whether `name` is a path to a template file rather than a template name.
pub fn is_path(name: &str) -> bool {
    name.ends_with(".hbs") || (name.contains('/') && builtin(name).is_none())
}

/// Where an operator's copy of `name` would be: the path itself, or
/// `dir/<name>.hbs`.
pub fn path_of(dir: &Path, name: &str) -> PathBuf {
    if is_path(name) {
        PathBuf::from(name)
    } else {
        dir.join(format!("{name}.hbs"))
    }
}

/// A template file: text of at most 16 MB (the largest shipped one is
/// under 8 KB), so that a template path to `/dev/zero` is refused.
fn read_file(p: &Path) -> Result<String, String> {
    crate::fsutil::read_text(p, 16 << 20)
}

/// The text of template `name`: the operator's copy in `dir` when it exists,
/// else the built-in one. A path that does not exist is an error.
pub fn text(dir: &Path, name: &str) -> Result<String, TemplateError> {
    let p = path_of(dir, name);
    match read_file(&p) {
        Ok(t) => Ok(t),
        Err(e) if is_path(name) || builtin(name).is_none() => Err(TemplateError::Missing {
            name: name.to_string(),
            why: format!("{}: {e}", p.display()),
        }),
        Err(_) => Ok(builtin(name).expect("checked above").to_string()),
    }
}

/// Body and subject template text of report template `name`: `classic`,
/// `modern` (the operator's copies in `dir` first), or a `.hbs` path with its
/// `.subject.hbs` beside it.
pub fn report_pair(dir: &Path, name: &str) -> Result<(String, String), TemplateError> {
    if is_path(name) {
        let body = text(dir, name)?;
        let subject_path = path_of(dir, name).with_extension("subject.hbs");
        let subject = read_file(&subject_path).map_err(|e| TemplateError::Missing {
            name: name.to_string(),
            why: format!("{}: {e}", subject_path.display()),
        })?;
        return Ok((body, subject));
    }
    // The report templates a config may name without a path: one per
    // layout (`classic` and `modern` are perfbot's own two, the `lkp-*` ones
    // the robot's by era, what `parse-report` recognises).
    if Layout::from_name(name).is_none() {
        return Err(TemplateError::UnknownReport {
            name: name.to_string(),
        });
    }
    Ok((text(dir, name)?, text(dir, &format!("{name}.subject"))?))
}

/// A report template a config names must exist (its file, or a built-in name).
pub fn check_report_template(dir: &Path, name: &str) -> Result<(), TemplateError> {
    if is_path(name) {
        let p = path_of(dir, name);
        if !p.exists() {
            return Err(TemplateError::Missing {
                name: name.to_string(),
                why: format!("{} does not exist", p.display()),
            });
        }
        return compiles(&p.display().to_string(), &text(dir, name)?);
    }
    let (body, subject) = report_pair(dir, name)?;
    compiles(name, &body)?;
    compiles(&format!("{name}.subject"), &subject)
}

/// Mail template `name` is there (in `dir`, else built in) and parses:
/// checked when the config is read, not when a digest or a reminder is
/// first due hours later.
pub fn check_mail_template(dir: &Path, name: &str) -> Result<(), TemplateError> {
    let file = path_of(dir, name);
    let text = text(dir, name)?;
    if file.exists() {
        compiles(&file.display().to_string(), &text)
    } else {
        compiles(name, &text)
    }
}

/// `text` parses; a syntax error names `name` (an operator's file: its path).
fn compiles(name: &str, text: &str) -> Result<(), TemplateError> {
    handlebars::Template::compile_with_name(text, name.to_string())
        .map(|_| ())
        .map_err(|e| TemplateError::Syntax {
            name: name.to_string(),
            why: e.to_string(),
        })
}

/// A Handlebars registry for mail: strict (a missing field is an error, not an
/// empty string) and without escaping (mail is plain text).
pub fn plain() -> Handlebars<'static> {
    let mut hb = Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_escape_fn(handlebars::no_escape);
    hb
}

/// Render template text `tpl` (named `name` for errors) as plain text.
pub fn render_plain(
    name: &str,
    tpl: &str,
    data: &impl serde::Serialize,
) -> Result<String, TemplateError> {
    plain()
        .render_template(tpl, data)
        .map_err(|e| TemplateError::Render {
            name: name.to_string(),
            why: e.to_string(),
        })
}

/// Look up `name` in `dir` (or built in) and render it as plain text.
pub fn render_named(
    dir: &Path,
    name: &str,
    data: &impl serde::Serialize,
) -> Result<String, TemplateError> {
    render_plain(name, &text(dir, name)?, data)
}

// `{{when t}}`: an RFC 3339 time as people read it, "2026-12-04 09:55
// UTC" (`seconds=true` adds them); anything else as it is.
handlebars::handlebars_helper!(
    when: |t: str, {seconds: bool = false}| {
        let shown = if seconds { crate::model::shown_time } else { crate::model::shown_minute };
        chrono::DateTime::parse_from_rfc3339(t)
            .map_or_else(|_| t.to_string(), |d| shown(d.with_timezone(&chrono::Utc)))
    }
);

// `{{urlencode v}}`: a value as a link's query takes it (`a+b@x` is
// `a%2Bb%40x`), so that a filter link finds what it names.
handlebars::handlebars_helper!(
    urlencode: |v: str| url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>()
);

/// The dashboard's pages: each `web/<page>` built in, or `<page>.hbs` in
/// `web.templates_dir`.
const WEB_PAGES: [&str; 4] = ["layout", "list", "case", "digest"];

/// The dashboard's registry (HTML-escaped): `layout`, `list`, `case`,
/// `digest`, each from `dir` when there, else built in.
pub fn web(dir: &Path) -> Result<Handlebars<'static>, TemplateError> {
    let mut hb = Handlebars::new();
    hb.set_strict_mode(false);
    hb.register_helper("when", Box::new(when));
    hb.register_helper("urlencode", Box::new(urlencode));
    for page in WEB_PAGES {
        let p = dir.join(format!("{page}.hbs"));
        let text = read_file(&p).unwrap_or_else(|_| {
            builtin(&format!("web/{page}"))
                .expect("built in")
                .to_string()
        });
        hb.register_template_string(page, text)
            .map_err(|e| TemplateError::Syntax {
                name: format!("web/{page}"),
                why: e.to_string(),
            })?;
    }
    Ok(hb)
}

/// An operator's copy of a template that never names a value its built-in
/// template shows: most likely a section added since the copy was made,
/// which the copy leaves out of what it renders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// The operator's copy.
    pub path: PathBuf,
    /// The built-in template it stands for (`digest`, `web/list`).
    pub name: String,
    /// The values the built-in names and the copy does not.
    pub missing: Vec<String>,
}

impl std::fmt::Display for Drift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let missing: Vec<String> = self.missing.iter().map(|m| format!("`{m}`")).collect();
        let them = if missing.len() == 1 { "it" } else { "them" };
        write!(
            f,
            "{}: this copy never names {}, which the built-in {} template shows \
             (added since the copy was made?); compare it with the shipped \
             templates/{}.hbs, or name {them} in a {{{{!-- comment --}}}} to leave {them} out",
            self.path.display(),
            missing.join(", "),
            self.name,
            self.name,
        )
    }
}

/// The values a template names from its top context: the first part of
/// each path in its `{{…}}` (`unread` for `{{#if unread.total}}`), outside
/// the blocks that move into an item (`each`, `with`). Comments count, so
/// that an operator can name a value they leave out on purpose; helpers
/// and keywords are not values.
fn names(text: &str) -> std::collections::BTreeSet<&str> {
    const NOT_VALUES: &[&str] = &[
        "if",
        "unless",
        "each",
        "with",
        "else",
        "lookup",
        "this",
        "eq",
        "ne",
        "and",
        "or",
        "not",
        "lt",
        "gt",
        "len",
        "log",
        "when",
        "urlencode",
        "true",
        "false",
        "null",
        "as",
    ];
    static MUSTACHE: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"(?s)\{\{(.*?)\}\}").expect("valid"));
    static WORD: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        // A path's first part, not a string's words, a `@key` or a `../`.
        regex::Regex::new(r#""[^"]*"|'[^']*'|[@.]?\b([A-Za-z_][A-Za-z0-9_]*)"#).expect("valid")
    });
    let mut out = std::collections::BTreeSet::new();
    // Each open block: whether it moves into an item's context.
    let mut open: Vec<bool> = Vec::new();
    for m in MUSTACHE.captures_iter(text) {
        let inner = m.get(1).map_or("", |g| g.as_str());
        let inner = inner.trim_start_matches(['{', '~', ' ']);
        if inner.starts_with('/') {
            open.pop();
            continue;
        }
        let block = inner.strip_prefix('#');
        if !open.contains(&true) {
            let words = WORD.captures_iter(block.unwrap_or(inner));
            out.extend(
                words
                    .filter(|w| !w[0].starts_with(['"', '\'', '@', '.']))
                    .filter_map(|w| w.get(1).map(|g| g.as_str()))
                    .filter(|w| !NOT_VALUES.contains(w)),
            );
        }
        if let Some(b) = block {
            let helper = b.split_whitespace().next().unwrap_or("");
            open.push(matches!(helper, "each" | "with"));
        }
    }
    out
}

/// How the operator's copy of built-in template `name` at `path` falls
/// behind the built-in one, if it does (no copy: it does not).
pub fn drift(path: &Path, name: &str) -> Option<Drift> {
    let builtin = builtin(name)?;
    let copy = read_file(path).ok()?;
    let have = names(&copy);
    let missing: Vec<String> = names(builtin)
        .into_iter()
        .filter(|n| !have.contains(n))
        .map(str::to_string)
        .collect();
    (!missing.is_empty()).then(|| Drift {
        path: path.to_path_buf(),
        name: name.to_string(),
        missing,
    })
}

/// `drift` of the dashboard's pages, whose copies are `dir/<page>.hbs`.
pub fn web_drift(dir: &Path) -> Vec<Drift> {
    WEB_PAGES
        .into_iter()
        .filter_map(|page| drift(&dir.join(format!("{page}.hbs")), &format!("web/{page}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_show_times_as_people_read_them_and_encode_query_values() {
        let hb = web(Path::new("/nonexistent-perfbot-templates")).unwrap();
        let cases = [
            (
                "{{when t}}",
                "2026-12-04T09:55:17.651076153Z",
                "2026-12-04 09:55 UTC",
            ),
            (
                "{{when t seconds=true}}",
                "2026-12-04T09:55:17.6Z",
                "2026-12-04 09:55:17 UTC",
            ),
            // Another zone is shown in UTC, as the rest of the page.
            (
                "{{when t}}",
                "2026-12-04T11:55:17+02:00",
                "2026-12-04 09:55 UTC",
            ),
            // Not a time: as it is (escaped).
            ("{{when t}}", "yesterday <b>", "yesterday &lt;b&gt;"),
            // A query value: what a form would send, with nothing left
            // for the HTML escape to mangle.
            ("{{urlencode t}}", "a+b@x.org", "a%2Bb%40x.org"),
            (
                "{{urlencode t}}",
                "Dave <d@x> & \"co\"",
                "Dave+%3Cd%40x%3E+%26+%22co%22",
            ),
        ];
        for (template, t, want) in cases {
            let got = hb
                .render_template(template, &serde_json::json!({ "t": t }))
                .unwrap();
            assert_eq!(got, want, "{template} of {t}");
        }
    }

    #[test]
    fn lookup() {
        let none = Path::new("/nonexistent-perfbot-templates");
        // Every template has a built-in copy: a config anywhere works.
        for name in [
            "classic",
            "modern",
            "ack",
            "escalation",
            "command-error",
            "digest",
            "reminder",
        ] {
            assert!(text(none, name).is_ok(), "{name}");
        }
        assert!(matches!(
            text(none, "nosuch"),
            Err(TemplateError::Missing { .. })
        ));
        assert!(matches!(
            text(none, "/nonexistent/x.hbs"),
            Err(TemplateError::Missing { .. })
        ));
        assert!(web(none).is_ok());
    }

    /// The escalation's quote stands apart from what follows it, and names
    /// the mail as a Message-ID is written.
    #[test]
    fn an_escalation_keeps_its_paragraphs() {
        let none = Path::new("/nonexistent-perfbot-templates");
        let t = text(none, "escalation").unwrap();
        let data = serde_json::json!({
            "case_id": "529ac5eb9e54", "subject": "s", "state": "needs-human",
            "thread_url": "u", "reason": "r", "from": "a@x", "message_id": "m@x",
            "quoted": ["one", "two"], "question": false, "signature": "perfbot",
        });
        let mail = render_plain("escalation", &t, &data).unwrap();
        assert!(
            mail.contains("a@x wrote (<m@x>):\n> one\n> two\n\nDecide with"),
            "{mail}"
        );
        let data = serde_json::json!({
            "case_id": "529ac5eb9e54", "subject": "s", "state": "needs-human",
            "thread_url": "u", "reason": "r", "from": "", "message_id": "",
            "quoted": [], "question": false, "signature": "perfbot",
        });
        let mail = render_plain("escalation", &t, &data).unwrap();
        assert!(mail.contains("Why:      r\n\nDecide with"), "{mail}");
    }

    /// An ack has one blank line before its signature, closing or not.
    #[test]
    fn an_ack_has_no_stray_blank_line() {
        let none = Path::new("/nonexistent-perfbot-templates");
        let t = text(none, "ack").unwrap();
        for (closing, end) in [
            (
                true,
                "as fixed.\nWe will not follow up on it further.\n\n-- \n",
            ),
            (false, "as fixed.\n\n-- \n"),
        ] {
            let data = serde_json::json!({
                "first_name": "Dave", "evidence": "e", "reply_date": "d",
                "outcome": "fixed", "closing": closing, "signature": "perfbot",
            });
            let mail = render_plain("ack", &t, &data).unwrap();
            assert!(mail.contains(end), "{mail:?}");
        }
    }

    #[test]
    fn plain_text_is_not_escaped_nor_reparsed() {
        let s = render_plain("t", "{{a}}", &serde_json::json!({"a": "<b> & {{c}}"})).unwrap();
        assert_eq!(s, "<b> & {{c}}");
        assert!(render_plain("t", "{{missing}}", &serde_json::json!({})).is_err());
    }

    /// The values a template names from its top context.
    #[test]
    fn names_are_the_top_contexts_values() {
        let table: &[(&str, &[&str])] = &[
            ("{{a}} and {{b.c}}", &["a", "b"]),
            ("{{#if u.total}}{{u.more}}{{/if}}", &["u"]),
            // Inside an item the names are the item's.
            ("{{#each xs}}{{y}} {{@key}}{{/each}}{{z}}", &["xs", "z"]),
            ("{{#with p}}{{q}}{{/with}}{{r}}", &["p", "r"]),
            (
                "{{#each xs}}{{#if y}}{{w}}{{/if}}{{/each}}{{v}}",
                &["v", "xs"],
            ),
            // Helpers, strings and sub-paths are not values.
            (
                "{{#if (eq n 1)}}one{{else}}{{lookup m \"k\"}}{{/if}}",
                &["m", "n"],
            ),
            (
                "{{{raw}}} {{~trim~}} {{when t seconds=true}}",
                &["raw", "seconds", "t", "trim"],
            ),
            // A comment names what an operator leaves out on purpose.
            ("{{!-- unread --}}", &["unread"]),
            ("no mustache {a}", &[]),
        ];
        for (text, want) in table {
            let got: Vec<&str> = names(text).into_iter().collect();
            assert_eq!(&got, want, "{text}");
        }
    }

    /// An operator's copy made before a section was added says which
    /// values it leaves out; a copy as shipped, one that names them in a
    /// comment, or none at all, says nothing.
    #[test]
    fn an_old_copy_of_a_template_says_what_it_leaves_out() {
        let tmp = tempfile::tempdir().unwrap();
        let copy = tmp.path().join("digest.hbs");
        assert_eq!(drift(&copy, "digest"), None, "no copy");
        let shipped = builtin("digest").unwrap();
        let cut = |from: &str, to: &str| {
            let (a, rest) = shipped.split_once(from).unwrap();
            let (_, b) = rest.split_once(to).unwrap();
            format!("{a}{b}")
        };
        // The section on unread mail, as a copy made before it lacks it.
        let old = cut("{{#if unread.total}}", "{{/if}}\n{{/if}}");
        std::fs::write(&copy, &old).unwrap();
        let d = drift(&copy, "digest").unwrap();
        assert_eq!(d.missing, ["unread"]);
        let said = d.to_string();
        assert!(said.starts_with(&format!("{}: ", copy.display())), "{said}");
        assert!(said.contains("never names `unread`"), "{said}");
        assert!(
            said.ends_with("name it in a {{!-- comment --}} to leave it out"),
            "{said}"
        );
        std::fs::write(&copy, format!("{{{{!-- unread --}}}}{old}")).unwrap();
        assert_eq!(drift(&copy, "digest"), None, "named in a comment");
        std::fs::write(&copy, shipped).unwrap();
        assert_eq!(drift(&copy, "digest"), None, "as shipped");
        // A template of one's own, not a copy of a built-in one.
        assert_eq!(drift(&copy, "mine.hbs"), None);
    }

    /// The shipped `templates/` are the built-in ones: the default
    /// config's copies never fall behind.
    #[test]
    fn the_shipped_templates_are_the_built_in_ones() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
        for (name, text) in BUILTIN {
            let p = dir.join(format!("{name}.hbs"));
            let Ok(file) = std::fs::read_to_string(&p) else {
                continue; // lkp-2026 reads as lkp-2025's file.
            };
            assert_eq!(&file, text, "{}", p.display());
            assert_eq!(drift(&p, name), None);
        }
    }
}
