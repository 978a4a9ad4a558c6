//! HTML pieces built in Rust: a reply's words with its evidence highlighted,
//! and SVG plots of bisect samples. Every piece of text is escaped before it
//! is wrapped in markup; these are the only strings inserted unescaped.

use chrono::{DateTime, Utc};
use handlebars::html_escape;
use serde::Serialize;

use super::{CaseData, PageInfo, SettleReply};
use crate::app::view::{cause_line, TimelineItem};
use crate::model::Case;

/// `text` escaped, with the first occurrence of `evidence` in `<mark>`.
pub fn highlight(text: &str, evidence: &str) -> String {
    let ev = evidence.trim();
    // Evidence adopted from a quote reads "words (agreeing with: …)": mark the
    // replier's own part.
    let ev = ev.split(" (agreeing with:").next().unwrap_or(ev);
    if let Some(at) = (!ev.is_empty()).then(|| find_loose(text, ev)).flatten() {
        let (a, rest) = text.split_at(at.0);
        let (m, b) = rest.split_at(at.1 - at.0);
        format!(
            "{}<mark class=\"evidence\">{}</mark>{}",
            html_escape(a),
            html_escape(m),
            html_escape(b)
        )
    } else {
        html_escape(text)
    }
}

/// Where `needle` occurs in `hay`, allowing different whitespace (the evidence
/// is a sentence joined from wrapped lines). Byte range in `hay`.
fn find_loose(hay: &str, needle: &str) -> Option<(usize, usize)> {
    if let Some(i) = hay.find(needle) {
        return Some((i, i + needle.len()));
    }
    let words: Vec<&str> = needle.split_whitespace().collect();
    let first = *words.first()?;
    let mut from = 0;
    while let Some(rel) = hay[from..].find(first) {
        let start = from + rel;
        let mut pos = start;
        let mut ok = true;
        for w in &words {
            let rest = &hay[pos..];
            let trimmed = rest.trim_start();
            pos += rest.len() - trimmed.len();
            if trimmed.starts_with(w) {
                pos += w.len();
            } else {
                ok = false;
                break;
            }
        }
        if ok {
            return Some((start, pos));
        }
        from = start + first.len();
    }
    None
}

/// An SVG plot of one metric's bisect samples: good commits then bad ones, as
/// the report's ASCII plot shows them.
pub fn bisect_svg(metric: &str, good: &[f64], bad: &[f64]) -> String {
    let (w, h, pad) = (560.0, 220.0, 48.0);
    let all: Vec<f64> = good
        .iter()
        .chain(bad)
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    if all.is_empty() {
        return String::new();
    }
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let n = (good.len() + bad.len()).max(2) as f64;
    let x = |i: usize| pad + (w - 2.0 * pad) * (i as f64) / (n - 1.0);
    let y = |v: f64| h - pad - (h - 2.0 * pad) * (v - lo) / span;
    let mut s = format!(
        "<svg class=\"bisect\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\"><title>{}</title>",
        html_escape(metric)
    );
    s.push_str(&format!(
        "<rect x=\"{pad}\" y=\"{pad}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>",
        w - 2.0 * pad,
        h - 2.0 * pad
    ));
    s.push_str(&format!(
        "<text x=\"{pad}\" y=\"20\" font-size=\"13\">{}</text>",
        html_escape(metric)
    ));
    s.push_str(&format!(
        "<text x=\"4\" y=\"{}\" font-size=\"10\">{}</text><text x=\"4\" y=\"{}\" font-size=\"10\">{}</text>",
        pad + 4.0,
        fmt(hi),
        h - pad,
        fmt(lo)
    ));
    for (i, v) in good.iter().enumerate().filter(|(_, v)| v.is_finite()) {
        s.push_str(&format!(
            "<circle class=\"good\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#2a7\"/>",
            x(i),
            y(*v)
        ));
    }
    for (j, v) in bad.iter().enumerate().filter(|(_, v)| v.is_finite()) {
        s.push_str(&format!(
            "<circle class=\"bad\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#c33\"/>",
            x(good.len() + j),
            y(*v)
        ));
    }
    s.push_str(&format!(
        "<text x=\"{pad}\" y=\"{}\" font-size=\"11\" fill=\"#2a7\">good samples</text><text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#c33\">bad samples</text></svg>",
        h - 12.0,
        w / 2.0,
        h - 12.0
    ));
    s
}

fn fmt(v: f64) -> String {
    if v.abs() >= 1e4 || (v != 0.0 && v.abs() < 1e-2) {
        format!("{v:.3e}")
    } else {
        format!("{v:.2}")
    }
}

/// The case page's data: a page of the case's thread, each message's words
/// escaped with its evidence marked; its history in words; its bisect plots.
#[derive(Debug, Serialize)]
pub struct CasePage<'a> {
    pub case: &'a Case,
    pub waits_on: Option<&'a str>,
    /// The case's replies that could not be read (in the quarantine).
    pub quarantined: Vec<crate::digest::UnreadShown<'a>>,
    /// The report's To and Cc, joined.
    pub to: String,
    pub cc: String,
    /// One SVG per bisected metric.
    pub plots: Vec<String>,
    pub timeline: Vec<Message<'a>>,
    pub events: Vec<HistoryLine<'a>>,
    pub report: Option<&'a str>,
    pub page: PageInfo,
    /// The settle and label forms, for operators with a token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settle: Option<Settle>,
}

/// One message of the thread, as the page shows it.
#[derive(Debug, Serialize)]
pub struct Message<'a> {
    #[serde(flatten)]
    pub item: &'a TimelineItem,
    /// `item.text` escaped, its evidence in `<mark>`.
    pub text_html: String,
}

/// One event of the case's history, in words.
#[derive(Debug, Serialize)]
pub struct HistoryLine<'a> {
    pub time: DateTime<Utc>,
    /// "old → new", or the state alone where it stayed.
    pub change: String,
    pub note: &'a str,
    pub cause: String,
}

/// What the settle and label forms offer.
#[derive(Debug, Serialize)]
pub struct Settle {
    pub states: Vec<&'static str>,
    pub intents: Vec<&'static str>,
    pub replies: Vec<SettleReply>,
}

pub fn case_page(d: &CaseData, settle: Option<Settle>) -> CasePage<'_> {
    let timeline = d
        .timeline
        .iter()
        .map(|t| Message {
            item: t,
            text_html: highlight(
                &t.text,
                t.understanding.as_ref().map_or("", |u| u.evidence.as_str()),
            ),
        })
        .collect();
    let events = d
        .events
        .iter()
        .map(|e| HistoryLine {
            time: e.time,
            change: match e.old {
                Some(o) if o != e.new => format!("{o} → {}", e.new),
                _ => e.new.to_string(),
            },
            note: &e.note,
            cause: cause_line(&e.cause),
        })
        .collect();
    let plots = d
        .case
        .bisect
        .iter()
        .map(|b| bisect_svg(&b.metric, &b.good, &b.bad))
        .collect();
    CasePage {
        case: &d.case,
        waits_on: d.waits_on.as_deref(),
        quarantined: d
            .quarantined
            .iter()
            .map(crate::digest::UnreadShown::of)
            .collect(),
        to: d.case.to.join(", "),
        cc: d.case.cc.join(", "),
        plots,
        timeline,
        events,
        report: d.report.as_deref(),
        page: d.page,
        settle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlighting_escapes_everything() {
        let h = highlight(
            "<script>alert(1)</script>\nThis is not\na regression. <b>x</b>",
            "This is not a regression.",
        );
        assert_eq!(
            h,
            "&lt;script&gt;alert(1)&lt;/script&gt;\n<mark class=\"evidence\">This is not\na regression.</mark> &lt;b&gt;x&lt;/b&gt;"
        );
        assert_eq!(highlight("a <i>", "zzz"), "a &lt;i&gt;");
        let svg = bisect_svg("<m>", &[1.0, 2.0], &[3.0]);
        assert!(svg.contains("&lt;m&gt;") && !svg.contains("<m>"));
        assert_eq!(svg.matches("<circle").count(), 3);
    }
}
