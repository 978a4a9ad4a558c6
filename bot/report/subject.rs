//! The Subject as a mail laid it out. The robot's Subjects vary in ways its
//! layouts do not capture (two spaces or one after `]` and `:`, a sign or
//! none, a tab, a list's `[dm-devel]` tag, a tree tag that one era adds and
//! another omits). A read mail's Subject is kept as its *shape*: a subject
//! template in which every value the report's data holds (tree, subsystem,
//! commit, metric, change, verdict, patch subject) is a placeholder and only
//! the rest — spaces, brackets, list tags — is text. Rendered with the same
//! data it gives the mail's Subject back; rendered with other data it still
//! says what the data says.

use serde_json::Value;

/// The view's values a Subject may name, as (placeholder, path in the view).
/// Within a group only the first match counts (a change is printed once).
const SLOTS: &[(&str, &[&str])] = &[
    ("patch.subject", &["patch", "subject"]),
    ("tree.name", &["tree", "name"]),
    ("tree.branch", &["tree", "branch"]),
    ("subsystem", &["subsystem"]),
    ("commit_sha10", &["commit_sha10"]),
    ("commit_sha11", &["commit_sha11"]),
    ("headline.metric", &["headline", "metric"]),
    ("headline.change_signed", &["headline", "change_signed"]),
    ("headline.change_robot", &["headline", "change_robot"]),
    (
        "headline.change_magnitude",
        &["headline", "change_magnitude"],
    ),
    ("headline.verdict", &["headline", "verdict"]),
];

/// Placeholders that stand for one value: once one is used, the others are.
fn group(name: &str) -> &str {
    if name.starts_with("commit_sha") {
        "sha"
    } else if name.starts_with("headline.change") {
        "change"
    } else {
        name
    }
}

fn value<'v>(view: &'v Value, path: &[&str]) -> Option<&'v str> {
    path.iter()
        .try_fold(view, |v, k| v.get(k))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Whether `at..end` of `s` is a whole token: no letter, digit, `-`, `_` or
/// `/` glued to either side (a sha prefix inside a longer hex run is not the
/// sha, `xfs` is not the subsystem of `[xfs-dev]`).
fn whole(s: &str, at: usize, end: usize) -> bool {
    let before = s[..at].chars().next_back();
    let after = s[end..].chars().next();
    let glued = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || "-_/".contains(c));
    !glued(before) && !glued(after)
}

/// Text of the Subject as template text: `{{` never opens a placeholder.
fn literal(text: &str) -> String {
    text.replace("{{", "\\{{")
}

/// The shape of `subject` over `view` (the report view serialised): left to
/// right, the earliest value of the data found (the longest where two start
/// together) becomes its placeholder, the rest stays text.
pub fn shape(subject: &str, view: &Value) -> String {
    let mut out = String::new();
    let mut used: Vec<&str> = Vec::new();
    let mut pos = 0;
    loop {
        let mut best: Option<(usize, usize, &str)> = None;
        for (name, path) in SLOTS {
            if used.contains(&group(name)) {
                continue;
            }
            let Some(v) = value(view, path) else { continue };
            let mut from = pos;
            while let Some(i) = subject[from..].find(v) {
                let (at, end) = (from + i, from + i + v.len());
                if whole(subject, at, end) {
                    let better = match best {
                        None => true,
                        Some((b_at, b_end, _)) => at < b_at || (at == b_at && end > b_end),
                    };
                    if better {
                        best = Some((at, end, name));
                    }
                    break;
                }
                from = at + subject[at..].chars().next().map_or(1, char::len_utf8);
            }
        }
        let Some((at, end, name)) = best else { break };
        out.push_str(&literal(&subject[pos..at]));
        out.push_str(&format!("{{{{{name}}}}}"));
        used.push(group(name));
        pos = end;
    }
    out.push_str(&literal(&subject[pos..]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view() -> Value {
        json!({
            "subsystem": "xfs",
            "commit_sha10": "490d451fa5",
            "commit_sha11": "490d451fa51",
            "tree": {"name": "linus", "branch": "master"},
            "headline": {"metric": "aim7.jobs-per-min", "change_signed": "-5.7%",
                         "change_robot": "-5.7%", "change_magnitude": "5.7%", "verdict": "regression"},
        })
    }

    #[test]
    fn subjects_become_their_shapes() {
        let table = [
            (
                "[xfs]  490d451fa5:  aim7.jobs-per-min -5.7% regression",
                "[{{subsystem}}]  {{commit_sha10}}:  {{headline.metric}} {{headline.change_signed}} {{headline.verdict}}",
            ),
            (
                "[linus:master] [xfs]  490d451fa5: aim7.jobs-per-min 5.7% regression",
                "[{{tree.name}}:{{tree.branch}}] [{{subsystem}}]  {{commit_sha10}}: {{headline.metric}} {{headline.change_magnitude}} {{headline.verdict}}",
            ),
            (
                "[dm-devel] [xfs] 490d451fa5: aim7.jobs-per-min -5.7%\tregression",
                "[dm-devel] [{{subsystem}}] {{commit_sha10}}: {{headline.metric}} {{headline.change_signed}}\t{{headline.verdict}}",
            ),
            // What the data does not hold stays text.
            (
                "[xfs-dev]  490d451fa5:  aim7.jobs-per-min \u{2212}5.7% regression",
                "[xfs-dev]  {{commit_sha10}}:  {{headline.metric}} \u{2212}{{headline.change_magnitude}} {{headline.verdict}}",
            ),
            ("a {{weird}} subject", "a \\{{weird}} subject"),
        ];
        for (subject, want) in table {
            assert_eq!(shape(subject, &view()), want, "{subject}");
        }
    }

    #[test]
    fn a_shape_renders_its_subject_back() {
        let hb = crate::templates::plain();
        for subject in [
            "[xfs]  490d451fa5:  aim7.jobs-per-min -5.7% regression",
            "Re: [f2fs-dev] [PATCH 13/13] writeback: {{x}} 490d451fa5",
            "[linus:master] [xfs]  490d451fa5: aim7.jobs-per-min 5.7% regression",
        ] {
            let t = shape(subject, &view());
            assert_eq!(hb.render_template(&t, &view()).unwrap(), subject, "{t}");
        }
    }
}
