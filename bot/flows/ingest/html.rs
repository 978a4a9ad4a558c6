//! An HTML-only body as the text its writer saw. mail-parser's own
//! conversion joins `<div>` lines into one run-on line and drops
//! `<blockquote>`, so a Gmail reply read that way had no sentences, and the
//! mail it quoted read as the replier's own words (a quoted "not a
//! regression" closed the case).
//!
//! html5ever's tokenizer (browser-grade, fuzzed) reads the markup; what is
//! laid out here is only what a reader of replies needs: a line per block,
//! `> ` before each line of a `<blockquote>`, `<pre>` kept as written. A
//! tokenizer, not a tree: it streams, so no nesting or size makes it
//! recurse or stall. (html2text, which lays out a whole page, hung on a
//! 20-byte body — `<table><td><ul><pre>` and a tab — and panicked on
//! another; a hostile sender must not get that from us.)

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

/// `html` as plain text, a line per block, quoted lines marked `> `.
pub fn text(html: &str) -> String {
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let tok = Tokenizer::new(Layout::default(), TokenizerOpts::default());
    let _ = tok.feed(&input);
    tok.end();
    let mut l = tok.sink.0.into_inner();
    l.end_line(false);
    l.out
}

/// Quotes deeper than this are marked as this deep: deeper than any thread
/// goes, and a body of nested quotes each holding a line would otherwise
/// write a prefix as long as the nesting before each line (a megabyte of
/// markup, gigabytes of text).
const MAX_QUOTE: usize = 16;

/// What is written so far, and where in the markup the writing is.
#[derive(Default)]
struct Lines {
    out: String,
    line: String,
    /// Blockquotes open.
    quote: usize,
    /// `<pre>` open: whitespace as written.
    pre: usize,
    /// In `<style>`, `<script>`, `<title>`: nothing a person reads.
    hidden: bool,
    /// The line ends in a space that stands for a run of whitespace.
    collapsed: bool,
    /// The line holds a character, if only a no-break space: a browser
    /// gives it a line's height (Outlook's blank line is `<p>&nbsp;</p>`).
    held: bool,
    /// The open `<p>` is Outlook's `MsoNormal`: its style gives it no
    /// margin, so it is a line, as its writer saw it, not a paragraph.
    line_paragraph: bool,
}

#[derive(Default)]
struct Layout(RefCell<Lines>);

/// Elements that start and end a line of their own.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "dd",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "td",
    "th",
    "tr",
    "ul",
];

impl Lines {
    /// End the line being written; an empty one only if `always` (a `<br>`
    /// writes an empty line, a block boundary does not).
    fn end_line(&mut self, always: bool) {
        self.collapsed = false;
        let held = std::mem::take(&mut self.held);
        let line = std::mem::take(&mut self.line);
        let line = line.trim_end();
        if line.is_empty() && !always && !held {
            return;
        }
        for _ in 0..self.quote.min(MAX_QUOTE) {
            self.out.push('>');
        }
        if self.quote > 0 && !line.is_empty() {
            self.out.push(' ');
        }
        self.out.push_str(line);
        self.out.push('\n');
    }

    fn tag(&mut self, t: &Tag) -> TokenSinkResult<()> {
        let name = &*t.name;
        let start = t.kind == TagKind::StartTag;
        match name {
            "br" => self.end_line(true),
            "style" | "script" | "title" | "template" => {
                // `<title/>` as an XHTML-minded client writes it holds
                // nothing; a browser would hide the whole body after it,
                // and a reply read as empty loses its words.
                self.hidden = start && !t.self_closing;
                if start && !t.self_closing {
                    // Their content is text, not markup, as a browser reads it.
                    let kind = if name == "title" {
                        RawKind::Rcdata
                    } else if name == "script" {
                        RawKind::ScriptData
                    } else {
                        RawKind::Rawtext
                    };
                    return TokenSinkResult::RawData(kind);
                }
            }
            _ if BLOCKS.contains(&name) => {
                self.end_line(false);
                if name == "p" && start {
                    self.line_paragraph = t.attrs.iter().any(|a| {
                        &*a.name.local == "class"
                            && a.value.split_whitespace().any(|c| c == "MsoNormal")
                    });
                }
                if name == "p" && !start && !self.out.is_empty() && !self.line_paragraph {
                    // A paragraph ends with a blank line, as in plain text.
                    self.end_line(true);
                }
                let depth = match name {
                    "blockquote" => &mut self.quote,
                    "pre" => &mut self.pre,
                    _ => return TokenSinkResult::Continue,
                };
                *depth = if start {
                    depth.saturating_add(1)
                } else {
                    depth.saturating_sub(1)
                };
            }
            _ => {}
        }
        TokenSinkResult::Continue
    }

    fn chars(&mut self, s: &str) {
        if self.hidden {
            return;
        }
        if self.pre > 0 {
            let mut parts = s.split('\n');
            if let Some(first) = parts.next() {
                self.line.push_str(first);
            }
            for part in parts {
                self.end_line(true);
                self.line.push_str(part);
            }
            return;
        }
        // HTML's whitespace runs are one space, none at a line's start; a
        // no-break space is a space that stays (what a client writes for
        // the spaces a person typed: indents, aligned columns).
        for c in s.chars() {
            if c.is_ascii_whitespace() {
                if !self.line.is_empty() && !self.collapsed {
                    self.line.push(' ');
                    self.collapsed = true;
                }
            } else {
                self.line.push(if c == '\u{a0}' { ' ' } else { c });
                self.collapsed = false;
                self.held = true;
            }
        }
    }
}

impl TokenSink for Layout {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut l = self.0.borrow_mut();
        match token {
            Token::TagToken(t) => return l.tag(&t),
            Token::CharacterTokens(s) => l.chars(&s),
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_bodies_read_as_their_writers_saw_them() {
        let deep = "<div>".repeat(100_000) + "deep";
        let quotes = "<blockquote>x<br>".repeat(10_000);
        let mut quoted = String::new();
        for depth in 1..=10_000 {
            quoted += &">".repeat(depth.min(MAX_QUOTE));
            quoted += " x\n";
        }
        let table: &[(&str, &str)] = &[
            ("", ""),
            // Gmail writes a line per <div>, an empty line as <div><br></div>.
            (
                "<div dir=\"ltr\"><div>Hi,</div><div><br></div><div>I don&#39;t think so.</div><div>Thanks</div></div>",
                "Hi,\n\nI don't think so.\nThanks\n",
            ),
            // The quoted mail under the attribution is marked as quoted.
            (
                "<div>Looking.</div><div class=\"gmail_quote\"><div>On Mon, X wrote:<br></div>\
                 <blockquote class=\"gmail_quote\">This is not a regression.<br>Bye</blockquote></div>",
                "Looking.\nOn Mon, X wrote:\n> This is not a regression.\n> Bye\n",
            ),
            // A quote in a quote, an empty quoted line, paragraphs.
            (
                "<p>Yes.</p><blockquote><p>Sure?</p><blockquote>Revert<br><br>it.</blockquote></blockquote>",
                "Yes.\n\n> Sure?\n>\n>> Revert\n>>\n>> it.\n",
            ),
            // Whitespace collapsed, a long paragraph one line, entities read.
            (
                "<p>\n  one\n  two\t&amp; three&nbsp;four </p>",
                "one two & three four\n\n",
            ),
            // Spaces a person typed, as a client writes them, are kept.
            (
                "<div>&nbsp; &nbsp;46.56 &nbsp; &nbsp;+7.1</div>",
                "   46.56    +7.1\n",
            ),
            // <pre> as written; styles, scripts and titles not read at all.
            (
                "<head><title>t</title><style>p { x: '<b>' }</style></head><pre>a  b\n  c</pre>\
                 <script>if (a < b) { c }</script>done",
                "a  b\n  c\ndone\n",
            ),
            // Outlook's paragraphs have no margin: a line each; an empty
            // one is a blank line.
            (
                "<p class=\"MsoNormal\">Merging<o:p></o:p></p><p class=MsoNormal>requests slow it.</p>\
                 <p class=\"MsoNormal\"><o:p>&nbsp;</o:p></p><p class=\"MsoNormal\">Thanks,</p><p>Dave</p>",
                "Merging\nrequests slow it.\n\nThanks,\nDave\n\n",
            ),
            // Written self-closed, they hide nothing after them.
            (
                "<head><title/><style/></head><div>I will revert it.</div>",
                "I will revert it.\n",
            ),
            // Table cells a line each; unclosed and stray end tags are harmless.
            (
                "<table><tr><td>left<td>right</tr></table></blockquote></pre>after",
                "left\nright\nafter\n",
            ),
            // What html2text hung on, and what it panicked on.
            ("<table><td><ul><pre>\t", ""),
            ("<table><th><td colspan=\"9\"rowspan=\"9\">x", "x\n"),
            // Nested without end: streamed, never recursed.
            (&deep, "deep\n"),
            // A quote in each quote: marked as at most MAX_QUOTE deep.
            (&quotes, &quoted),
        ];
        for (html, expect) in table {
            assert_eq!(text(html), *expect, "{:.200}", html);
        }
    }
}
