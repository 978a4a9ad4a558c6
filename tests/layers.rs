//! The layering of ARCHITECTURE.md, checked: every top-level module of `bot/`
//! has a layer, and imports (`crate::x`) only modules of lower layers. With
//! that, no import cycle between top-level modules can exist. Test code
//! (`#[cfg(test)]` modules at the end of a file) may use anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Layer of each top-level module; the bottom is 0. Adding a module means
/// placing it here (and in ARCHITECTURE.md's code map).
const LAYERS: &[(&str, u8)] = &[
    ("model", 0),
    ("fsutil", 0),
    ("compare", 1),
    ("templates", 1),
    ("input", 2),
    ("report", 3),
    ("reply", 3),
    ("digest", 3),
    ("config", 4),
    ("store", 4),
    ("mail", 5),
    ("flows", 6),
    ("app", 7),
];

fn bot() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bot")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level modules and their files.
fn modules() -> BTreeMap<String, Vec<PathBuf>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(bot()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            if name == "rules" {
                continue; // data, not code
            }
            let mut files = Vec::new();
            rust_files(&p, &mut files);
            out.insert(name, files);
        } else if p.extension().is_some_and(|x| x == "rs") && name != "lib" && name != "main" {
            out.insert(name, vec![p]);
        }
    }
    out
}

/// The top-level modules a piece of source names as `crate::x` or inside
/// `crate::{x, y::z}`, with the line they are on.
fn imports(source: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let code = source.split("#[cfg(test)]").next().unwrap_or("");
    let mut group = false;
    for (n, line) in code.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        let mut rest = t;
        if group {
            // Inside `use crate::{ … }` spread over lines.
            for part in rest.split([',', '{', '}']) {
                let name = part.trim().split("::").next().unwrap_or("").trim();
                if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    out.push((name.to_string(), n + 1));
                }
            }
            if rest.contains("};") {
                group = false;
            }
            continue;
        }
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            if let Some(list) = after.strip_prefix('{') {
                let (inner, closed) = match list.find("};") {
                    Some(end) => (&list[..end], true),
                    None => (list, false),
                };
                // Only the first segment of each item names the module.
                let mut depth = 0;
                let mut item = String::new();
                for c in inner.chars().chain([',']) {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            let name = item.trim().split("::").next().unwrap_or("").to_string();
                            if !name.is_empty() {
                                out.push((name, n + 1));
                            }
                            item.clear();
                            continue;
                        }
                        _ => {}
                    }
                    if depth == 0 {
                        item.push(c);
                    }
                }
                group = !closed;
                break;
            }
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.push((name, n + 1));
            rest = after;
        }
    }
    out
}

/// Imports against the layering among `sources` (module, file, text).
fn violations(sources: &[(String, String, String)]) -> Vec<String> {
    let layer: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    let known: std::collections::BTreeSet<&str> = sources.iter().map(|s| s.0.as_str()).collect();
    let mut wrong = Vec::new();
    for (m, file, text) in sources {
        let Some(&mine) = layer.get(m.as_str()) else {
            wrong.push(format!(
                "{file}: top-level module {m} has no layer in tests/layers.rs"
            ));
            continue;
        };
        for (name, line) in imports(text) {
            if &name == m || !known.contains(name.as_str()) {
                continue;
            }
            let theirs = layer.get(name.as_str()).copied().unwrap_or(u8::MAX);
            if theirs >= mine {
                wrong.push(format!(
                    "{file}:{line}: {m} (layer {mine}) imports {name} (layer {theirs})"
                ));
            }
        }
    }
    wrong
}

#[test]
fn every_import_points_down() {
    let mut sources = Vec::new();
    for (m, files) in modules() {
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let shown = f.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(&f);
            sources.push((m.clone(), shown.display().to_string(), text));
        }
    }
    assert!(
        sources.len() > 50,
        "found only {} source files",
        sources.len()
    );
    let wrong = violations(&sources);
    assert!(
        wrong.is_empty(),
        "imports against the layering (ARCHITECTURE.md):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_scanner_sees_every_form_of_import() {
    let src = "use crate::model::Case;\n\
               use crate::{store::Store, flows::{a, b}};\n\
               use crate::{\n    mail::smtp,\n    app,\n};\n\
               // crate::ignored in a comment\n\
               fn f() { crate::report::x(); let _ = crate::input::y; }\n\
               #[cfg(test)]\nmod tests { use crate::app; }\n";
    let names: Vec<String> = imports(src).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        ["model", "store", "flows", "mail", "app", "report", "input"]
    );
}

#[test]
fn upward_sideways_and_unplaced_imports_are_caught() {
    let src = |m: &str, text: &str| (m.to_string(), format!("bot/{m}.rs"), text.to_string());
    let sources = [
        src("model", "use crate::store::Store;\n"),
        src(
            "store",
            "use crate::model::Case;\nuse crate::config::Config;\n",
        ),
        src("config", "use crate::model::Case;\n"),
        src("widget", "use crate::model::Case;\n"),
        src("app", "use crate::flows::x;\nuse crate::widget::y;\n"),
        src("flows", "use crate::store::Store;\n"),
    ];
    assert_eq!(
        violations(&sources),
        [
            "bot/model.rs:1: model (layer 0) imports store (layer 4)",
            "bot/store.rs:2: store (layer 4) imports config (layer 4)",
            "bot/widget.rs: top-level module widget has no layer in tests/layers.rs",
            "bot/app.rs:2: app (layer 7) imports widget (layer 255)",
        ]
    );
}
