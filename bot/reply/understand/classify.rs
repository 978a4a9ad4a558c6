//! The intent classifier: the replier's own words, sentence by sentence,
//! against the phrase rules; hedges and questions damp decisions; a short
//! agreement adopts the quoted proposal it agrees with. Pure and fast: no I/O,
//! linear-time regexes, input cut to a bounded size.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::intent::Intent;
use super::quote::{attribution_end, greets, is_quote, notice_end, own_words, quoted_text};
use super::rules::Rules;
use super::speech::{self, is_question, own_claim, NotOwn};

/// Closing decisions: they end the case (a misreading hides a regression).
pub(crate) fn closes(i: Intent) -> bool {
    matches!(
        i,
        Intent::NotARegression | Intent::WontFix | Intent::Duplicate
    )
}

/// What a reply was understood to say.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Understanding {
    pub intent: Intent,
    /// 0..1; decisive intents act only above the configured threshold.
    pub confidence: f64,
    /// The replier's words that decided it.
    pub evidence: String,
    /// Other intents the reply also carries, strongest first.
    pub secondary: Vec<Secondary>,
    /// What the reading rests on (a rule's sentence, a command, a fact on
    /// the list, the model…), for explaining, tuning and the policy.
    pub basis: Basis,
    /// A fix was applied (merged, queued), not just posted.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub applied: bool,
    /// Decision signals the reading could not settle: a human decides.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unsettled: bool,
    /// The reply says the regression is real (after a closing decision, it
    /// reverses it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub confirms: bool,
    /// Intents the reply ruled out ("this patch is not a fix").
    #[serde(skip)]
    pub vetoed: Vec<Intent>,
    /// A question or request asked of the robot or its operators (its test,
    /// a run, its data), not of another developer.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub asks_robot: bool,
    /// The reply is longer than what is read (`MAX_WORDS`): a decision may
    /// be beyond.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

/// A fact seen on the list, whoever posted it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fact {
    /// A revert of the case's commit.
    RevertPosted,
    /// A patch whose `Closes:`/`Link:` trailer points at the report.
    ClosingPatch,
}

/// What a reading rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Basis {
    /// A phrase rule matched the evidence sentence.
    Rule { id: String },
    /// A short agreement with a quoted proposal a rule read.
    Agreement { id: Option<String> },
    /// A patch in the reply itself, with kernel trailers.
    InlinePatch,
    /// A question mark, and no rule.
    QuestionMark,
    /// Nothing fired (a long reply reads as investigating, a short one other).
    Fallback,
    /// The learned model.
    Model,
    /// An explicit `#perfbot` command.
    Command { command: super::command::Command },
    /// A fact on the list.
    Fact { fact: Fact },
}

impl Basis {
    /// The short name `classify --json` prints as `rule`.
    pub fn name(&self) -> String {
        match self {
            Basis::Rule { id } => id.clone(),
            Basis::Agreement { id } => id.clone().unwrap_or_else(|| "agreement".into()),
            Basis::InlinePatch => "inline-patch".into(),
            Basis::QuestionMark => "question-mark".into(),
            Basis::Fallback => "fallback".into(),
            Basis::Model => "model".into(),
            Basis::Command { .. } => "command".into(),
            Basis::Fact { .. } => "fact".into(),
        }
    }

    /// A phrase rule (or an agreement with one) found the evidence sentence.
    pub fn is_rule(&self) -> bool {
        matches!(
            self,
            Basis::Rule { .. } | Basis::Agreement { .. } | Basis::InlinePatch
        )
    }
}

impl Understanding {
    /// A reading with nothing behind it (what a reply that says nothing gets).
    pub fn nothing() -> Understanding {
        Understanding {
            intent: Intent::Other,
            confidence: 0.0,
            evidence: String::new(),
            secondary: Vec::new(),
            basis: Basis::Fallback,
            applied: false,
            unsettled: false,
            confirms: false,
            vetoed: Vec::new(),
            asks_robot: false,
            partial: false,
        }
    }

    /// The flags `classify --json` prints as `tags`.
    pub fn tags(&self) -> Vec<String> {
        let mut t = Vec::new();
        if let Basis::Command { command } = &self.basis {
            t.push(format!("command:{}", command.name()));
        }
        if matches!(self.basis, Basis::Agreement { .. }) {
            t.push("agreement".into());
        }
        if self.applied {
            t.push("applied".into());
        }
        if self.unsettled {
            t.push("unsettled".into());
        }
        if self.confirms {
            t.push("confirms".into());
        }
        t
    }

    /// The `#perfbot` command this reading is, if it is one.
    pub fn command(&self) -> Option<&super::command::Command> {
        match &self.basis {
            Basis::Command { command } => Some(command),
            _ => None,
        }
    }

    /// A patch in the reply may be read as the fix: the replier neither
    /// ruled a fix out nor decided something else.
    pub(crate) fn open_to_a_patch(&self) -> bool {
        !self.vetoed.contains(&Intent::FixPosted)
            && (!self.intent.is_decisive() || self.intent == Intent::FixPosted)
    }

    /// Read as a fix posted in the reply itself (`evidence`: which patch),
    /// at least `sure`; what it was read as before becomes a second reading.
    pub(crate) fn read_as_patch(&mut self, evidence: String, sure: f64) {
        self.secondary.insert(
            0,
            Secondary {
                intent: self.intent,
                confidence: self.confidence,
            },
        );
        self.secondary.retain(|s| s.intent != Intent::FixPosted);
        self.intent = Intent::FixPosted;
        self.confidence = round(self.confidence.max(sure));
        self.evidence = evidence;
        self.basis = Basis::InlinePatch;
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Secondary {
    pub intent: Intent,
    pub confidence: f64,
}

/// Words of this many bytes are plenty to decide; beyond is analysis or pasted
/// output, and cutting bounds the time on hostile input.
pub const MAX_WORDS: usize = 32 << 10;
/// Sentences longer than this are pasted data, not prose.
const MAX_SENTENCE: usize = 600;

/// Hedges damp a decision made in the same sentence.
static HEDGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:maybe|perhaps|possibly|might|not sure|unsure|not certain|i wonder|wondering|unless|whether|i guess|my guess|i suspect|suspect|suspicion|hunch|speculat\w*|could be|may be|i bet|i.d bet|betting|presumably|conceivably|my theory|hypothes\w*|would it make sense|shall we|should we|do we want|per se)\b").unwrap()
});

/// A normalised sentence hedges what it says ("maybe", "my hunch").
pub(crate) fn hedged(s: &str) -> bool {
    HEDGE.is_match(s)
}

/// Opinions held firmly enough to count, a little less than a flat statement.
static OPINION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:i think|i believe|i'd say|probably|likely|most likely|in my opinion|imo)\b")
        .unwrap()
});

/// Below this, a decisive reading is a hint, not the reply's intent.
const DECISIVE_FLOOR: f64 = 0.5;

/// The clause of `s` that holds byte `at`.
fn clause_at(s: &str, at: usize) -> &str {
    &s[super::speech::clause_of(s, at)]
}

/// A short reply that only agrees (with what it quotes).
static AGREE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:yes|yeah|yep|yup|sure|agreed|agree|ok|okay|fine|right|indeed|absolutely|exactly|makes sense|sounds good|sounds right|no problem|no objections?|fine (?:by|with) me|works for me|good idea|please do|go ahead|ack(?:ed)?)\b").unwrap()
});

/// A short reply that only agrees.
pub(crate) fn agrees(words: &str) -> bool {
    // The agreement is the first words (`AGREE` is anchored): only they are
    // normalised, however long the reply.
    let head: String = words.trim_start().chars().take(AGREE_HEAD).collect();
    AGREE.is_match(&normalise(&head))
}

/// More characters than any of `AGREE`'s openings, spaces and all.
const AGREE_HEAD: usize = 64;

/// Words after the agreement that take something back: "Yes, but …".
static CONTRAST: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(?:but|however|though|although|except|unless)\b").unwrap());

/// An agreement that adopts what it answers: it agrees, takes nothing back
/// ("Yes, but I'd rather fix it"), says nothing of its own that a rule
/// reads as looking into it or asking, and commits to no examination of
/// its own ("Right, I need to look closer").
fn only_agrees(words: &str, own: &Understanding) -> bool {
    let own_act =
        own.basis.is_rule() && matches!(own.intent, Intent::Investigating | Intent::Question);
    let examines = || {
        read_sentences(words)
            .iter()
            .any(|s| super::speech::commits_to_examine(&normalise(s)))
    };
    agrees(words) && !own_act && !CONTRAST.is_match(&normalise(words)) && !examines()
}

/// Text of the robot's own report, when quoted.
static ROBOT_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)kernel test robot noticed|fyi, we noticed|%stddev|reported-by: kernel test robot|in addition to that, the commit").unwrap()
});

/// Apostrophes as typesetters write them ("don’t"), which mean the plain one.
pub(crate) const TYPOGRAPHIC_APOSTROPHES: [char; 2] = ['\u{2019}', '\u{2018}'];

/// Quotation marks as typesetters (and phones, and Outlook) write them,
/// which mean the plain `"`: words inside them are someone else's.
const TYPOGRAPHIC_QUOTES: [char; 6] = [
    '\u{201C}', '\u{201D}', '\u{201E}', '\u{201F}', '\u{00AB}', '\u{00BB}',
];

/// Words as a quick typist leaves them, and what they are: contractions
/// without their apostrophe ("dont", "Im") and a few shorthands ("thx",
/// "pls"); only words English has no other use for (not "its", "were",
/// "well", "id", "lets", "hell"), lower case. "Ill" is one only written so
/// ("ill" is a word of its own; see `shorthand`).
const SHORTHANDS: [(&str, &str); 32] = [
    ("arent", "aren't"),
    ("cant", "can't"),
    ("couldnt", "couldn't"),
    ("didnt", "didn't"),
    ("doesnt", "doesn't"),
    ("dont", "don't"),
    ("hadnt", "hadn't"),
    ("hasnt", "hasn't"),
    ("havent", "haven't"),
    ("im", "i'm"),
    ("isnt", "isn't"),
    ("ive", "i've"),
    ("mustnt", "mustn't"),
    ("pls", "please"),
    ("plz", "please"),
    ("shouldnt", "shouldn't"),
    ("thanx", "thanks"),
    ("thats", "that's"),
    ("theres", "there's"),
    ("theyre", "they're"),
    ("thnx", "thanks"),
    ("thx", "thanks"),
    ("tnx", "thanks"),
    ("wasnt", "wasn't"),
    ("werent", "weren't"),
    ("whats", "what's"),
    ("wont", "won't"),
    ("wouldnt", "wouldn't"),
    ("youd", "you'd"),
    ("youll", "you'll"),
    ("youre", "you're"),
    ("youve", "you've"),
];

/// What a word a quick typist shortened is (a contraction without its
/// apostrophe, a shorthand), lower case, and the word's letters as typed
/// (`"Dont,"` → `("Dont", "don't")`, `"Thx!"` → `("Thx", "thanks")`);
/// `None` for any other word.
pub(crate) fn shorthand(word: &str) -> Option<(&str, &'static str)> {
    let core = word.trim_matches(|c: char| !c.is_alphanumeric());
    if core == "Ill" {
        return Some((core, "i'll"));
    }
    // Every sentence's every word passes here, several times: no copy.
    if !(2..=8).contains(&core.len()) || !core.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let mut buf = [0u8; 8];
    buf.iter_mut()
        .zip(core.bytes())
        .for_each(|(d, b)| *d = b.to_ascii_lowercase());
    let lower = std::str::from_utf8(&buf[..core.len()]).ok()?;
    SHORTHANDS
        .binary_search_by(|(bare, _)| (*bare).cmp(lower))
        .ok()
        .map(|i| (core, SHORTHANDS[i].1))
}

/// Shorthands of chat and notes, each a word between blanks of its own
/// ("tested w/o the patch", "can u retest"), and what they are. A slash
/// makes `w/`, `w/o` and `b/c` no other word; `U` and `R` are one only
/// without a full stop, which makes them an initial ("Liam R. Howlett").
const CHAT_SHORTHANDS: [(&str, &str); 12] = [
    ("B/C", "because"),
    ("B/c", "because"),
    ("R", "are"),
    ("U", "you"),
    ("W/", "with"),
    ("W/O", "without"),
    ("W/o", "without"),
    ("b/c", "because"),
    ("r", "are"),
    ("u", "you"),
    ("w/", "with"),
    ("w/o", "without"),
];

/// What a whole word between blanks is, if chat shortens it
/// (`CHAT_SHORTHANDS`): the word without the marks a sentence puts around
/// it, and the word spelled out. Code stays code: `%u`, `-r` and `r/w` are
/// no shorthand.
pub(crate) fn chat_shorthand(word: &str) -> Option<(&str, &'static str)> {
    let core = word
        .trim_start_matches(['(', '"', '\''])
        .trim_end_matches([',', '.', ';', ':', '!', '?', ')', '"', '\'']);
    if core.len() == 1 && core.starts_with(char::is_uppercase) && word.ends_with('.') {
        return None;
    }
    CHAT_SHORTHANDS
        .binary_search_by(|(short, _)| (*short).cmp(core))
        .ok()
        .map(|i| (core, CHAT_SHORTHANDS[i].1))
}

/// A sentence as the rules read it: lower case, whitespace collapsed,
/// apostrophes and quotation marks plain, contractions typed without their
/// apostrophe given it back and shorthands spelled out, words emphasised in plain text (`*not*`,
/// `_nothing_`, `**never**`) plain.
pub(crate) fn normalise(s: &str) -> String {
    let s = without_emphasis(s);
    spelled_out(plain_lower(&s), &s)
}

/// `s` without the marks plain text emphasises words with: a run of one or
/// two `*` or `_` before a word, and the same run after the word or words
/// it emphasises, on one line. Only words between them (letters,
/// apostrophes, hyphens, blanks), so `*ptr`, `__GFP_NOWARN`, `a*b*c` and
/// `_raw_spin_lock` stay as they are.
fn without_emphasis(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains(['*', '_']) {
        return std::borrow::Cow::Borrowed(s);
    }
    let chars: Vec<char> = s.chars().collect();
    let mut keep = vec![true; chars.len()];
    let mut i = 0;
    while i < chars.len() {
        match emphasis_at(&chars, i) {
            Some((run, close)) => {
                keep[i..i + run].fill(false);
                keep[close..close + run].fill(false);
                i = close + run;
            }
            None => i += 1,
        }
    }
    std::borrow::Cow::Owned(
        chars
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(c, _)| c)
            .collect(),
    )
}

/// The emphasis that opens at `i`: its marks' run length and where its
/// closing run starts.
fn emphasis_at(chars: &[char], i: usize) -> Option<(usize, usize)> {
    let mark = chars[i];
    if mark != '*' && mark != '_' {
        return None;
    }
    let opens = i == 0 || chars[i - 1].is_whitespace() || "(\"'".contains(chars[i - 1]);
    let run = if chars.get(i + 1) == Some(&mark) {
        2
    } else {
        1
    };
    let first = *chars.get(i + run)?;
    if !opens || !first.is_alphabetic() {
        return None;
    }
    let wordish =
        |c: char| c.is_alphabetic() || c == '\'' || c == '\u{2019}' || c == '-' || c == ' ';
    let mut j = i + run;
    while j < chars.len() && j - i <= 80 && wordish(chars[j]) {
        j += 1;
    }
    let closes = (0..run).all(|k| chars.get(j + k) == Some(&mark))
        && chars[j - 1].is_alphabetic()
        && chars
            .get(j + run)
            .is_none_or(|c| c.is_whitespace() || ".,;:!?)\"'".contains(*c));
    closes.then_some((run, j))
}

/// `normal`, the normalised `s` (a word of it for each of `s`'s), with
/// each word `s` shortens spelled out (`shorthand`).
fn spelled_out(normal: String, s: &str) -> String {
    let bare: Vec<(usize, &str, &str)> = s
        .split_whitespace()
        .enumerate()
        .filter_map(|(i, w)| {
            chat_shorthand(w)
                .or_else(|| shorthand(w))
                .map(|(core, c)| (i, core, c))
        })
        .collect();
    if bare.is_empty() {
        return normal;
    }
    let mut words: Vec<String> = normal.split(' ').map(str::to_string).collect();
    for (i, core, contraction) in bare {
        if let Some(w) = words.get_mut(i) {
            *w = w.replacen(&core.to_ascii_lowercase(), contraction, 1);
        }
    }
    words.join(" ")
}

/// `s` lower case, whitespace collapsed, apostrophes and quotation marks
/// plain.
fn plain_lower(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        // A backquote too, as in "don`t", for the rules' phrases.
        let c = if c == '`' || TYPOGRAPHIC_APOSTROPHES.contains(&c) {
            '\''
        } else if TYPOGRAPHIC_QUOTES.contains(&c) {
            '"'
        } else {
            c
        };
        if c.is_whitespace() {
            space = true;
        } else {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// A line of figures, or of signs: fewer letters than other characters.
fn few_letters(t: &str) -> bool {
    let letters = t.chars().filter(|c| c.is_alphabetic()).count();
    letters * 2 < t.chars().count()
}

/// Whether a paragraph's line is left out of its prose (code, a diff, a log,
/// a table), after the text `open` of a sentence not yet ended. A line that
/// goes on with such a sentence is prose whatever it opens with, as
/// wrapping leaves it ("… the reported / -14%. If it's …", "… merge the two
/// patches to / 3.14?"), unless it is indented or a diff's own markers; a
/// line of figures only when it is one word or ends the sentence (at its
/// first word or its last). After a colon, a line of more than one word is
/// the data the colon introduced.
fn skipped(l: &str, open: &str) -> bool {
    let t = l.trim();
    if t.is_empty() {
        return false;
    }
    let open = open.trim();
    let goes_on = !open.is_empty() && !open.ends_with(':');
    if l.starts_with('\t')
        || l.starts_with("    ")
        || t.starts_with("diff --git")
        || t.starts_with("@@")
    {
        return true;
    }
    if few_letters(t) {
        let first = t.split_whitespace().next().unwrap_or_default();
        let tail = first.ends_with(['.', '?', '!', ',']) || t.ends_with(['.', '?', '!']);
        // One word (a figure, a commit id) is wrapped text even after a colon.
        let word = first == t && !open.is_empty();
        return !(word || (goes_on && tail));
    }
    // Code whatever comes before it: a block's braces, a statement with
    // code's punctuation or an identifier's `_`, a diff's line with a space
    // or tab after its sign.
    let signed = added_or_removed(t);
    let statement = t.ends_with(';');
    let code = t.ends_with('{')
        || t == "}"
        || (statement && has_code_punctuation(t))
        || (signed && !t[1..].starts_with(char::is_alphanumeric) && !(goes_on && member(t)));
    // Code unless it goes on with a sentence: a line a diff added or removed
    // ("-2.4% …" is not one), a statement of a few words ("return;", "int
    // err;"). Prose can end in `;` too ("It also;" before a list).
    let short_statement = statement && t.split_whitespace().count() <= 4;
    code || ((signed || short_statement) && !goes_on)
}

/// A line that opens with a member named through a pointer, as kernel prose
/// wrapped at a `->` does ("… where I stop calling / ->pte_entry() heavily").
fn member(t: &str) -> bool {
    t.strip_prefix("->")
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

/// A line a diff added or removed. A signed figure opening a line of prose
/// ("-2.4% regression reads to me like an improvement") is the report's
/// change quoted back, not a diff: the letters test above still drops a
/// line of figures.
fn added_or_removed(t: &str) -> bool {
    let mut chars = t.chars();
    let sign = chars.next();
    let next = chars.next();
    match sign {
        Some('+') => !next.is_some_and(|c| c.is_ascii_digit()),
        Some('-') => next.is_some_and(|c| c != ' ' && !c.is_ascii_digit()),
        _ => false,
    }
}

/// Brackets, operators or an identifier's underscore: rare in prose.
fn has_code_punctuation(t: &str) -> bool {
    t.contains(|c| "()=[]*&<>{}_".contains(c))
}

/// Sentences of prose, in order (original text, whitespace collapsed).
pub fn sentences(words: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_sentence(words, |s| {
        out.push(s.to_string());
        ControlFlow::Continue(())
    });
    out
}

/// `f` on each sentence of prose in order, until it says stop: the lines
/// of a paragraph that are not data, joined, cut after `.`, `!`, `?` or a
/// typeset ellipsis (`…`, which phones and word processors put for "...")
/// before a space ("e.g." and "i.e." cut nothing), and at a line's end
/// that ends a sentence without its mark (`unmarked_end`). Sentences longer
/// than `MAX_SENTENCE` or without a letter are not prose. Lazy, so that a
/// caller looking for one sentence reads no further than it.
fn each_sentence(words: &str, mut f: impl FnMut(&str) -> ControlFlow<()>) {
    let mut cur = String::new();
    let mut emit = |cur: &mut String| {
        let s = cur.trim();
        let flow = if !s.is_empty() && s.len() <= MAX_SENTENCE && s.chars().any(char::is_alphabetic)
        {
            f(s)
        } else {
            ControlFlow::Continue(())
        };
        cur.clear();
        flow
    };
    for para in words.split("\n\n") {
        let width = wrap_width(para);
        let mut lines = para.lines().peekable();
        while let Some(line) = lines.next() {
            if skipped(line, &cur) {
                continue;
            }
            // A paragraph's lines are joined by one space.
            let mut chars = line.trim().chars().chain(std::iter::once(' ')).peekable();
            while let Some(c) = chars.next() {
                cur.push(c);
                let end = matches!(c, '.' | '!' | '?' | '…')
                    && chars.peek().is_none_or(|n| n.is_whitespace())
                    && !cur.ends_with("e.g.")
                    && !cur.ends_with("i.e.");
                if end && emit(&mut cur).is_break() {
                    return;
                }
            }
            let unmarked = lines.peek().is_some_and(|n| unmarked_end(line, n, width));
            if unmarked && emit(&mut cur).is_break() {
                return;
            }
        }
        if emit(&mut cur).is_break() {
            return;
        }
    }
}

/// Where a paragraph was wrapped, if it was: its widest line, in
/// characters. No narrower: clients wrap at 40 columns as well as at 80.
fn wrap_width(para: &str) -> usize {
    para.lines()
        .map(|l| l.trim_end().chars().count())
        .max()
        .unwrap_or(0)
}

/// Does `line` end a sentence typed without its mark, as chat and quick
/// replies do ("can you rerun this test" / "The box is idle")? It ends in
/// a word, `next` opens with a capital, and `next`'s first word would have
/// fitted on `line` with room to spare within the paragraph's `width`: no
/// wrap put it on a line of its own, the writer did. A wrapped sentence
/// ("… on the" / "Icelake box") breaks only where the word did not fit.
fn unmarked_end(line: &str, next: &str, width: usize) -> bool {
    // Writers who wrap by eye stop a few characters early, and a list's
    // line can overrun the width the prose keeps to.
    const SLACK: usize = 8;
    let line = line.trim_end();
    let Some(word) = next.split_whitespace().next() else {
        return false;
    };
    // "I" is a capital anywhere in a sentence, and a label or a trailer
    // ("Reported-by:") is what a sentence may lead into.
    let pronoun = word == "I" || word.starts_with("I'") || word.starts_with("I’");
    line.ends_with(|c: char| c.is_alphanumeric() || c == ')')
        && word.starts_with(char::is_uppercase)
        && !pronoun
        && !word.ends_with(':')
        && (line.chars().count() + 1 + word.chars().count() + SLACK) <= width
}

#[derive(Debug, Clone)]
struct Hit {
    score: f64,
    count: usize,
    evidence: String,
    basis: Basis,
    applied: bool,
}

/// Where the part of the own words that is read ends (`MAX_WORDS`).
fn read_cut(words: &str) -> usize {
    words.floor_char_boundary(MAX_WORDS)
}

/// The own words cut to what is read (`MAX_WORDS`), as sentences.
pub(crate) fn read_sentences(words: &str) -> Vec<String> {
    sentences(&words[..read_cut(words)])
}

/// The part of the own words past what is read holds prose, where a
/// decision could be: not only the tables, logs and code of a long data
/// mail. A sentence of prose has a few words.
pub(crate) fn prose_unread(words: &str) -> bool {
    // It stops at the first such sentence: the rest of a hostile reply can
    // be megabytes long.
    let mut prose = false;
    each_sentence(&words[read_cut(words)..], |s| {
        prose = s.split_whitespace().filter(|w| is_prose_word(w)).count() >= MIN_PROSE_WORDS;
        if prose {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    prose
}

/// Fewer words than this are a table's label, not a sentence of prose.
const MIN_PROSE_WORDS: usize = 4;

/// A word of prose: letters, with an apostrophe or a hyphen inside ("isn't",
/// "cache-line"), the punctuation around it aside. A figure, "±", a metric
/// or a symbol ("perf-profile.children.cycles-pp.task_tick_fair") is none:
/// a table's row cut short ("15 ± 10%  perf-profile.…") is no sentence
/// whose decision perfbot could have missed.
pub(crate) fn is_prose_word(w: &str) -> bool {
    let w = w.trim_matches(|c: char| !c.is_alphanumeric());
    !w.is_empty()
        && w.chars()
            .all(|c| c.is_alphabetic() || matches!(c, '\'' | '’' | '-'))
}

/// Every rule that fires in `sents`, with its weight there (damped by a
/// question or a hedge in the deciding clause): `hit(rule, weight, sentence)`.
fn scan(sents: &[String], rules: &Rules, mut hit: impl FnMut(&super::rules::Rule, f64, &str)) {
    for original in sents {
        let s = normalise(original);
        let question = is_question(&s);
        if !rules.any.is_match(&s) {
            continue;
        }
        let matched = rules.any.matches(&s);
        for r in &rules.rules {
            // The rule's first pattern that matches says where the decision is.
            let Some(first) = r.patterns.clone().find(|&i| matched.matched(i)) else {
                continue;
            };
            if r.max_chars.is_some_and(|m| s.len() > m)
                || r.unless.as_ref().is_some_and(|u| u.is_match(&s))
            {
                continue;
            }
            let mut w = r.weight;
            if r.intent.is_decisive() && !r.in_question {
                if question {
                    w *= 0.4;
                }
                // A hedge in the clause that decides weakens the decision.
                let at = r.each[first - r.patterns.start]
                    .regex()
                    .find(&s)
                    .map_or(0, |m| m.start());
                // A decision phrase under someone else's claim, a negated
                // "I agree", a condition or quotation is not the replier's.
                match own_claim(&s, at) {
                    Ok(()) | Err(NotOwn::Question) => {}
                    Err(NotOwn::Conditional) if !closes(r.intent) => {}
                    Err(_) => continue,
                }
                let clause = clause_at(&s, at);
                if HEDGE.is_match(clause) {
                    w *= 0.5;
                } else if OPINION.is_match(clause) {
                    w *= 0.8;
                }
            }
            hit(r, w, original);
        }
    }
}

/// Every rule that fires in the replier's own words, by id, with its best
/// weight (features for the learned model).
pub type RuleHits = BTreeMap<String, f64>;

/// The rules that fire in `words`, scanned on their own.
fn rule_hits(words: &str, rules: &Rules) -> RuleHits {
    let mut out = RuleHits::new();
    scan(&read_sentences(words), rules, |r, w, _| {
        note_hit(&mut out, r, w)
    });
    out
}

fn note_hit(out: &mut RuleHits, r: &super::rules::Rule, w: f64) {
    let e = out.entry(r.id.clone()).or_default();
    *e = e.max(w);
}

/// Classify the replier's own words.
pub fn classify_words(words: &str, rules: &Rules) -> Understanding {
    classify_noting(words, rules, None)
}

/// `classify_words`, noting every rule that fires in `fired` as well: one
/// scan of the words serves the reading and the model's features.
fn classify_noting(words: &str, rules: &Rules, fired: Option<&mut RuleHits>) -> Understanding {
    let sents = read_sentences(words);
    let found = find_hits(&sents, rules, fired);
    let (vetoed, confirms) = (found.vetoed, found.confirms);
    let ranked = rank(weigh(found.hits, &sents));
    let done = move |mut u: Understanding| {
        u.vetoed = vetoed;
        u.confirms = confirms;
        u
    };
    // A decision read only faintly (hedged, asked) does not make the reply a
    // decision: the strongest undecided reading wins, the decision stays a
    // secondary hint.
    let ranked = match undecided_first(ranked) {
        Ok(ranked) => ranked,
        Err(faint) => {
            let mut u = fallback(&sents);
            u.secondary = secondaries(&faint);
            return done(u);
        }
    };
    let Some((top, hit)) = ranked.first().cloned() else {
        return done(fallback(&sents));
    };
    let second = ranked.get(1).map(|(i, h)| (*i, h.score));
    let mut confidence = hit.score;
    if let Some((other, s)) = second {
        let pull = if other.is_decisive() && top.is_decisive() {
            0.4
        } else {
            0.15
        };
        confidence *= 1.0 - pull * (s / hit.score).min(1.0);
    }
    done(Understanding {
        intent: top,
        confidence: round(confidence),
        evidence: hit.evidence,
        secondary: secondaries(&ranked[1..]),
        basis: hit.basis,
        applied: hit.applied,
        ..Understanding::nothing()
    })
}

/// Readings kept beside the one chosen, as their scores.
fn secondaries(ranked: &[(Intent, Hit)]) -> Vec<Secondary> {
    ranked
        .iter()
        .map(|(i, h)| Secondary {
            intent: *i,
            confidence: round(h.score),
        })
        .collect()
}

/// What the rules found in a reply's sentences.
struct Found {
    /// The best hit per intent, the vetoed ones taken out.
    hits: BTreeMap<Intent, Hit>,
    /// Intents a rule ruled out ("this is not a fix").
    vetoed: Vec<Intent>,
    /// A rule read the regression confirmed.
    confirms: bool,
}

/// Scan `sents` with the rules, noting every rule that fires in `fired`.
fn find_hits(sents: &[String], rules: &Rules, mut fired: Option<&mut RuleHits>) -> Found {
    let mut hits: BTreeMap<Intent, Hit> = BTreeMap::new();
    let mut vetoed: Vec<Intent> = Vec::new();
    let mut confirms = false;
    scan(sents, rules, |r, w, original| {
        if let Some(out) = fired.as_deref_mut() {
            note_hit(out, r, w);
        }
        vetoed.extend(r.vetoes.iter().copied());
        confirms |= r.tags.contains(&super::rules::RuleTag::Confirms);
        let h = hits.entry(r.intent).or_insert(Hit {
            score: 0.0,
            count: 0,
            evidence: String::new(),
            basis: Basis::Fallback,
            applied: false,
        });
        h.count += 1;
        if w > h.score {
            h.score = w;
            h.evidence = original.to_string();
            h.basis = Basis::Rule { id: r.id.clone() };
            h.applied = r.tags.contains(&super::rules::RuleTag::Applied);
        }
    });
    for v in &vetoed {
        hits.remove(v);
    }
    Found {
        hits,
        vetoed,
        confirms,
    }
}

/// The hits' scores, weighed by the reply as a whole; the first real
/// question is a question read at 0.5 at least.
fn weigh(mut hits: BTreeMap<Intent, Hit>, sents: &[String]) -> BTreeMap<Intent, Hit> {
    // A long analysis rarely is a verdict: its decisive-sounding sentences
    // count for less.
    let prose: usize = sents.iter().map(String::len).sum();
    if prose > 1200 {
        for (i, h) in hits.iter_mut() {
            if i.is_decisive() {
                h.score *= 0.8;
            }
        }
    }
    // Several sentences saying the same thing make it surer.
    for h in hits.values_mut() {
        h.score = (h.score + 0.04 * (h.count.saturating_sub(1)) as f64).min(1.0);
    }
    let first_question = sents.iter().find(|o| {
        let s = normalise(o);
        is_question(&s) && s.len() > 8
    });
    if let Some(q) = first_question {
        let h = hits.entry(Intent::Question).or_insert(Hit {
            score: 0.0,
            count: 0,
            evidence: q.clone(),
            basis: Basis::QuestionMark,
            applied: false,
        });
        if h.score < 0.5 {
            h.score = 0.5;
            h.evidence = q.clone();
            h.basis = Basis::QuestionMark;
        }
    }
    hits
}

/// The readings of a reply, strongest first.
type Ranked = Vec<(Intent, Hit)>;

/// Strongest first; on a tie the less consequential intent wins.
fn rank(hits: BTreeMap<Intent, Hit>) -> Ranked {
    let mut ranked: Ranked = hits.into_iter().collect();
    ranked.sort_by(|a, b| {
        b.1.score
            .partial_cmp(&a.1.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.0.is_decisive().cmp(&b.0.is_decisive()))
    });
    ranked
}

/// A decision on top read under `DECISIVE_FLOOR` gives way to the strongest
/// undecided reading; with none, the faint readings come back as `Err`.
fn undecided_first(mut ranked: Ranked) -> Result<Ranked, Ranked> {
    let faint = ranked
        .first()
        .is_some_and(|(i, h)| i.is_decisive() && h.score < DECISIVE_FLOOR);
    if !faint {
        return Ok(ranked);
    }
    match ranked.iter().position(|(i, _)| !i.is_decisive()) {
        Some(p) => {
            let undecided = ranked.remove(p);
            ranked.insert(0, undecided);
            Ok(ranked)
        }
        None => Err(ranked),
    }
}

pub(crate) fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// No rule fired: a long analysis is someone investigating; else "other".
fn fallback(sents: &[String]) -> Understanding {
    let prose: usize = sents.iter().map(String::len).sum();
    let (intent, confidence) = if prose > 300 {
        (Intent::Investigating, 0.4)
    } else {
        (Intent::Other, 0.3)
    };
    Understanding {
        intent,
        confidence,
        evidence: sents.first().cloned().unwrap_or_default(),
        ..Understanding::nothing()
    }
}

/// The quoted text right above the reply's first own line (the proposal a
/// short "yes" answers), unless it is the robot's report.
pub fn quoted_before_reply(body: &str) -> Option<String> {
    let lines: Vec<&str> = body.lines().collect();
    let first_own = first_own_line(&lines)?;
    let mut block = Vec::new();
    for l in lines[..first_own].iter().rev() {
        if let Some(q) = quoted_text(l) {
            block.push(q);
        } else if block.is_empty() && (l.trim().is_empty() || greets(l)) {
            continue;
        } else {
            break;
        }
    }
    block.reverse();
    // The robot's own report is never a proposal, however long the quote.
    // Its telltale words are in its first lines ("kernel test robot noticed",
    // the table's header) or, trimmed, in the last ones: those are searched,
    // not a whole quoted report of hundreds of kilobytes.
    let head = block.iter().take(ROBOT_HEAD_LINES);
    let tail = block
        .iter()
        .skip(ROBOT_HEAD_LINES.max(block.len().saturating_sub(PROPOSAL_LINES)));
    if head.chain(tail).any(|l| ROBOT_TEXT.is_match(l)) {
        return None;
    }
    // A proposal is the last few lines quoted; a long quote is context.
    let text = block[block.len().saturating_sub(PROPOSAL_LINES)..].join("\n");
    (!text.trim().is_empty()).then_some(text)
}

/// The replier's first line of their own: past blank lines, quotes, a
/// greeting ("Hi Oliver,"), a gateway's banner and attributions, wrapped or
/// not.
fn first_own_line(lines: &[&str]) -> Option<usize> {
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if t.is_empty() || is_quote(t) || greets(t) {
            i += 1;
        } else if let Some(end) = attribution_end(lines, i).or_else(|| notice_end(lines, i)) {
            i = end + 1;
        } else {
            return Some(i);
        }
    }
    None
}

/// The decision the quoted text right above the reply proposes, if any
/// (what the reply answers, for the model's features).
pub(crate) fn quoted_decision(body: &str, rules: &Rules) -> Option<Intent> {
    quoted_before_reply(body)
        .map(|q| classify_words(&q, rules).intent)
        .filter(|i| i.is_decisive())
}

/// What a quoted yes/no question asks, as the claim a "yes" makes of it:
/// its last sentence, if a question, with a leading auxiliary and its
/// pronoun subject put back in statement order ("is this noise?" → "this is
/// noise", "should we drop it?" → "we should drop it"; a negated auxiliary
/// asks the same: "isn't this expected?" → "this is expected"). A question
/// put to the replier ("could you …?") is a request, not a claim: `None`.
fn asked_claim(quoted: &str) -> Option<String> {
    const AUX: &[&str] = &[
        "is", "was", "are", "were", "should", "shall", "can", "could", "will", "would", "may",
        "might", "do", "does", "did", "must",
    ];
    const SUBJECT: &[&str] = &["this", "that", "it", "these", "those", "they", "we", "i"];
    let last = sentences(quoted).pop()?;
    let asked = normalise(&last);
    let asked = asked.trim_end().strip_suffix('?')?;
    // "Noise or not?", "this or that?": a yes picks no side.
    if asked.contains(" or ") {
        return None;
    }
    let words: Vec<&str> = asked.split_whitespace().collect();
    let lead = usize::from(matches!(
        words.first(),
        Some(&("so" | "and" | "but" | "then"))
    ));
    let (first, subject) = (words.get(lead)?, words.get(lead + 1)?);
    let Some(aux) = speech::aux(first).filter(|a| AUX.contains(a)) else {
        return Some(asked.to_string());
    };
    if !SUBJECT.contains(subject) {
        return None;
    }
    let rest = words[lead + 2..].join(" ");
    Some(format!("{subject} {aux} {rest}."))
}

/// The quoted lines right above a reply that can hold what it agrees with.
pub(crate) const PROPOSAL_LINES: usize = 30;

/// The first lines of a quote that show whether it is the robot's report.
pub(crate) const ROBOT_HEAD_LINES: usize = 120;

/// A patch in the reply itself (after scissors, or a git-format-patch body)
/// that says it fixes something: its subject line.
fn inline_fix(body: &str) -> Option<String> {
    let own: Vec<&str> = body.lines().filter(|l| !is_quote(l)).collect();
    let has_diff = own
        .iter()
        .any(|l| l.starts_with("diff --git") || l.starts_with("+++ b/"));
    // Its Subject header unfolded: git format-patch folds a long one onto
    // lines that open with a space.
    let subject = own.iter().enumerate().find_map(|(i, l)| {
        let first = l
            .strip_prefix("Subject: ")
            .filter(|s| s.contains("PATCH"))?;
        let folded = own[i + 1..]
            .iter()
            .take_while(|l| l.starts_with([' ', '\t']) && !l.trim().is_empty());
        Some(folded.fold(first.trim().to_string(), |s, l| s + " " + l.trim()))
    });
    let fixes = own.iter().any(|l| {
        let t = l.trim_start();
        t.starts_with("Fixes: ")
            || t.starts_with("Closes: ")
            || (t.starts_with("Reported-by: ") && t.to_ascii_lowercase().contains("robot"))
    });
    if !(has_diff || subject.is_some()) || !fixes {
        return None;
    }
    Some(subject.unwrap_or_else(|| "an inline patch with Fixes:/Reported-by: trailers".into()))
}

/// Classify a whole reply body (quotes included): own words first, then, for a
/// bare agreement, the proposal it agrees with.
pub fn understand(body: &str, rules: &Rules) -> Understanding {
    understand_words(body, &own_words(body), rules)
}

/// `understand`, for a caller that has the replier's own words of `body`
/// already (ingestion keeps them for the timeline).
pub fn understand_words(body: &str, words: &str, rules: &Rules) -> Understanding {
    understand_into(body, words, rules, None)
}

/// `understand_words`, with every rule that fires in the own words
/// (`rule_hits`), from the same scan.
pub fn understand_noting(body: &str, words: &str, rules: &Rules) -> (Understanding, RuleHits) {
    let mut fired = RuleHits::new();
    let u = understand_into(body, words, rules, Some(&mut fired));
    (u, fired)
}

/// A short reply that only agrees ("yes", "right") with a decision quoted
/// right above it makes the decision its own, less surely; so does a yes to
/// a question that asked for one.
fn agreeing(body: &str, words: &str, u: &Understanding, rules: &Rules) -> Option<Understanding> {
    let q = quoted_before_reply(body)?;
    let mut proposal = classify_words(&q, rules);
    if !proposal.intent.is_decisive() {
        // "Is this the same as last week's?" — "Yes, it's the same."
        // A yes to a question asserts what the question asked.
        if let Some(claim) = asked_claim(&q) {
            proposal = classify_words(&claim, rules);
        }
    }
    if !proposal.intent.is_decisive() {
        return None;
    }
    let own = words.lines().next().unwrap_or("").trim().to_string();
    Some(Understanding {
        intent: proposal.intent,
        confidence: round((proposal.confidence * 0.85).min(0.8)),
        evidence: format!("{own} (agreeing with: \"{}\")", proposal.evidence),
        secondary: vec![Secondary {
            intent: u.intent,
            confidence: u.confidence,
        }],
        basis: Basis::Agreement {
            id: match proposal.basis {
                Basis::Rule { id } => Some(id),
                _ => None,
            },
        },
        ..Understanding::nothing()
    })
}

fn understand_into(
    body: &str,
    words: &str,
    rules: &Rules,
    fired: Option<&mut RuleHits>,
) -> Understanding {
    // An explicit command says it all.
    if let Some((line, Ok(cmd))) = super::command::commands(words)
        .into_iter()
        .find(|(_, c)| c.is_ok())
    {
        // A labelled reply with a command still trains the model on what
        // the rules found in it.
        if let Some(fired) = fired {
            *fired = rule_hits(words, rules);
        }
        return Understanding {
            intent: cmd.intent(),
            confidence: 1.0,
            evidence: line,
            applied: matches!(cmd, super::command::Command::Fixed(_)),
            basis: Basis::Command { command: cmd },
            ..Understanding::nothing()
        };
    }
    let mut u = classify_noting(words, rules, fired);
    if u.open_to_a_patch() {
        if let Some(subject) = inline_fix(body) {
            u.read_as_patch(subject, 0.82);
            return u;
        }
    }
    let short = words.len() < 200;
    if short && !u.intent.is_decisive() && only_agrees(words, &u) {
        if let Some(agreed) = agreeing(body, words, &u, rules) {
            return agreed;
        }
    }
    if u.intent == Intent::Other
        && u.basis == Basis::Fallback
        && short
        && !words.is_empty()
        && agrees(words)
    {
        u.intent = Intent::ThanksOnly;
        u.confidence = 0.4;
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules noted while reading are the rules a scan of their own
    /// finds: a plain reply, one with a command, a bare agreement that reads
    /// its quote, a reply with no rule in it.
    #[test]
    fn reading_notes_the_rules_a_scan_finds() {
        let rules = Rules::builtin();
        for body in [
            "This is not a regression. I'll revert it anyway?\n",
            "#perfbot invalid\nThis is noise, I think.\n",
            "> We should drop the patch.\nAgreed.\n",
            "Hello.\n",
        ] {
            let words = super::super::quote::own_words(body);
            let (_, noted) = understand_noting(body, &words, rules);
            assert_eq!(noted, rule_hits(&words, rules), "{body:?}");
        }
        let words = "This is not a regression.";
        assert!(
            !rule_hits(words, rules).is_empty(),
            "the table finds a rule"
        );
    }

    /// A word wrapping left alone on a line ends the sentence it belongs to.
    #[test]
    fn sentences_of_wrapped_lines() {
        for (words, expect) in [
            (
                "You're going to merge the two patches to\n3.14?",
                &["You're going to merge the two patches to 3.14?"][..],
            ),
            (
                "Still far off from the reported\n-14%. If it's really required I can test it.",
                &[
                    "Still far off from the reported -14%.",
                    "If it's really required I can test it.",
                ],
            ),
            (
                "The numbers:\n12345\nAll good.",
                &["The numbers: 12345 All good."],
            ),
            (
                "The numbers:\n12 345\nAll good.",
                &["The numbers: All good."],
            ),
            (
                "It is fixed.\n12345 678\nAll good.",
                &["It is fixed.", "All good."],
            ),
            (
                "It is fixed.\n3.14\nAll good.",
                &["It is fixed.", "All good."],
            ),
            (
                "It is fixed in\n    code();\nthe tree.",
                &["It is fixed in the tree."],
            ),
            (
                "The regression reduced\nto -0.6%. Good.",
                &["The regression reduced to -0.6%.", "Good."],
            ),
            (
                "It is always built with\n-falign-functions=64 now.",
                &["It is always built with -falign-functions=64 now."],
            ),
            (
                "It reduces the scan rates by\n33%. It also;\n\nFine.",
                &["It reduces the scan rates by 33%.", "It also;", "Fine."],
            ),
            (
                "Something like\n-\tfoo();\n+\tbar();\nthis.",
                &["Something like this."],
            ),
            (
                "Something like\nfoo(bar);\nthis.",
                &["Something like this."],
            ),
            (
                "Like this:\n-foo bar baz\n+foo bar\nDone.",
                &["Like this: Done."],
            ),
            // A member through a pointer, wrapped to the line's start.
            (
                "where I stop calling\n->pte_entry() callback heavily.",
                &["where I stop calling ->pte_entry() callback heavily."],
            ),
            (
                "Something like\n->foo = bar;\nthis.",
                &["Something like this."],
            ),
            (
                "It is fixed.\n->pte_entry() is gone\nAll good.",
                &["It is fixed.", "All good."],
            ),
            (
                "The call goes\n-> can_modify_mm\nthere.",
                &["The call goes there."],
            ),
        ] {
            assert_eq!(sentences(words), expect, "{words:?}");
        }
    }

    /// A patch in the reply that says it fixes something, by its Subject
    /// (unfolded) or its trailers; `None` without a fix's trailer.
    #[test]
    fn inline_fixes() {
        let patch = "diff --git a/mm/x.c b/mm/x.c\n--- a/mm/x.c\n+++ b/mm/x.c\n";
        let trailers = "Fixes: 1234abcd5678 (\"mm: x\")\nSigned-off-by: A <a@b.c>\n---\n";
        for (head, trailers, expect) in [
            (
                "Subject: [PATCH] mm: fix the flipped condition\n\n",
                trailers,
                Some("[PATCH] mm: fix the flipped condition"),
            ),
            (
                "Subject: [PATCH] mm: fix the flipped condition in\n gfpflags_allow_spinning()\n\n",
                trailers,
                Some("[PATCH] mm: fix the flipped condition in gfpflags_allow_spinning()"),
            ),
            (
                "Subject: [PATCH] mm: fix it\n\n  indented prose\n",
                trailers,
                Some("[PATCH] mm: fix it"),
            ),
            (
                "",
                trailers,
                Some("an inline patch with Fixes:/Reported-by: trailers"),
            ),
            (
                "Subject: [PATCH] mm: fix it\n\n",
                "Signed-off-by: A <a@b.c>\n",
                None,
            ),
        ] {
            let body = format!("Does this help?\n\n{head}{trailers}{patch}");
            assert_eq!(inline_fix(&body).as_deref(), expect, "{body:?}");
        }
    }

    /// A typeset ellipsis ends a sentence as three dots do.
    #[test]
    fn ellipses_end_sentences() {
        for (words, expect) in [
            (
                "Hmm… what if we recompute it at commit?",
                &["Hmm…", "what if we recompute it at commit?"][..],
            ),
            (
                "Hmm... what if we recompute it at commit?",
                &["Hmm...", "what if we recompute it at commit?"],
            ),
            (
                "We pin them, but… If another thread stores -1, what then?",
                &[
                    "We pin them, but…",
                    "If another thread stores -1, what then?",
                ],
            ),
            ("The time went from 1…2 s.", &["The time went from 1…2 s."]),
            // What an ellipsis cuts off with no letter is no sentence.
            ("… and that is the lock.", &["and that is the lock."]),
            ("... and that is the lock.", &["and that is the lock."]),
        ] {
            assert_eq!(sentences(words), expect, "{words:?}");
        }
    }

    #[test]
    fn shorthands_sorted() {
        assert!(SHORTHANDS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(CHAT_SHORTHANDS.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn normalised_sentences() {
        for (sentence, expect) in [
            // Contractions typed without their apostrophe, shorthands.
            ("Thx! Pls retest, thanx.", "thanks! please retest, thanks."),
            ("THX; plz", "thanks; please"),
            (
                "I dont think its a regression.",
                "i don't think its a regression.",
            ),
            ("Im on it, thanks.", "i'm on it, thanks."),
            (
                "Ill revert it; ill be back.",
                "i'll revert it; ill be back.",
            ),
            (
                "\"Doesnt\" matter, WONT fix.",
                "\"doesn't\" matter, won't fix.",
            ),
            (
                "We were well; its id lets it.",
                "we were well; its id lets it.",
            ),
            // Chat's shorthands, words of their own; code and initials are none.
            (
                "Tested w/o the patch (b/c u asked), W/O it r slower.",
                "tested without the patch (because you asked), without it are slower.",
            ),
            ("Same w/ it; w/, w/o.", "same with it; with, without."),
            (
                "\"Liam R. Howlett\" and U. Bob",
                "\"liam r. howlett\" and u. bob",
            ),
            ("U say R we done?", "you say are we done?"),
            (
                "printk(\"%u\"), r/w, -r, u64",
                "printk(\"%u\"), r/w, -r, u64",
            ),
            ("a \u{201C}dont\u{201D}  b", "a \"don't\" b"),
            ("This  is\tNOT a regression.", "this is not a regression."),
            ("It isn\u{2019}t; it isn`t.", "it isn't; it isn't."),
            (
                "As a \u{201C}has a fix if somebody cares\u{201D}.",
                "as a \"has a fix if somebody cares\".",
            ),
            ("\u{201E}Kein Fehler\u{201C}", "\"kein fehler\""),
            ("\u{00AB} pas un bogue \u{00BB}", "\" pas un bogue \""),
            // Emphasis in plain text.
            ("There is *nothing* to fix.", "there is nothing to fix."),
            ("It is _not_ a regression.", "it is not a regression."),
            ("I **really** dont agree", "i really don't agree"),
            ("(*not* this) and *that*?", "(not this) and that?"),
            ("*This is not a regression*.", "this is not a regression."),
            ("*isn't*, __don't__", "isn't, don't"),
            // Not emphasis: code, arithmetic, a lone mark, marks unmatched.
            (
                "Set __GFP_NOWARN in _raw_spin_lock.",
                "set __gfp_nowarn in _raw_spin_lock.",
            ),
            ("*ptr = a*b*c; x_y_z", "*ptr = a*b*c; x_y_z"),
            ("*not_ this", "*not_ this"),
            ("**not* this", "**not* this"),
            ("* not *", "* not *"),
            ("a * b", "a * b"),
        ] {
            assert_eq!(normalise(sentence), expect, "{sentence:?}");
        }
    }

    /// A line its writer ended without a mark ends its sentence; a line a
    /// wrap cut does not.
    #[test]
    fn sentences_typed_without_their_marks() {
        for (words, expect) in [
            (
                "can you rerun this test\nThe box was idle then, nothing else ran on it.",
                &["can you rerun this test", "The box was idle then, nothing else ran on it."][..],
            ),
            (
                "What storage driver is this using\nThe material talks about an ata disk, not a driver",
                &["What storage driver is this using", "The material talks about an ata disk, not a driver"],
            ),
            // Lines this short tell no width: it may have been wrapped at 40.
            (
                "can you rerun this test\nThe box was idle.",
                &["can you rerun this test The box was idle."],
            ),
            // Wrapped where the next word did not fit.
            (
                "I ran the test on an Icelake server with the patch applied on the\nIcelake box.",
                &["I ran the test on an Icelake server with the patch applied on the Icelake box."],
            ),
            // It would have fitted, but only just: a wrap by eye.
            (
                "Also to avoid some duplication of debugging, here are some tries\nI did, as the list below shows to anyone who reads on.",
                &["Also to avoid some duplication of debugging, here are some tries I did, as the list below shows to anyone who reads on."],
            ),
            // "I" and a trailer carry no news of a sentence's start.
            (
                "Here are some other tries\nI did, as the list below shows to anyone who reads on.",
                &["Here are some other tries I did, as the list below shows to anyone who reads on."],
            ),
            (
                "can you amend the commit to\nReported-by: kernel test robot <lkp@intel.com>",
                &["can you amend the commit to Reported-by: kernel test robot <lkp@intel.com>"],
            ),
            // A comma or a small letter goes on.
            (
                "Hi Oliver,\nThanks for the report.",
                &["Hi Oliver, Thanks for the report."],
            ),
            (
                "can you rerun this test\nthanks",
                &["can you rerun this test thanks"],
            ),
        ] {
            assert_eq!(sentences(words), expect, "{words:?}");
        }
    }

    #[test]
    fn sentence_split() {
        let s = sentences("This is it. Really?\nYes!  e.g. this stays.\n\n    code();\nlast line");
        assert_eq!(
            s,
            [
                "This is it.",
                "Really?",
                "Yes!",
                "e.g. this stays.",
                "last line"
            ]
        );
    }

    /// Which lines are code, logs or tables, and which are prose.
    #[test]
    fn data_lines() {
        for (line, data) in [
            ("This is not a regression.", false),
            ("- This is a list item in prose.", false),
            (
                "-2.4% regression reads to me like an improvement of 2.4%.",
                false,
            ),
            (
                "+12.3% is what the robot saw, and I can reproduce it.",
                false,
            ),
            (
                "-14%. If it's really required I can go find a box, but",
                false,
            ),
            ("-\treturn __legitimize_path(path, nd->m_seq, seq);", true),
            ("+\treturn !!(gfp_flags & __GFP_RECLAIM);", true),
            ("+static void lru_add_and_bh_lrus_drain(void)", true),
            ("--- a/fs/namei.c", true),
            ("+++ b/fs/namei.c", true),
            ("-Dave.", true),
            ("+1", true),
            ("-1", true),
            ("-12.3%   +5.1%   1.2e+06", true),
            ("    indented code", true),
            ("\tindented code", true),
            ("diff --git a/x b/x", true),
            ("@@ -1,3 +1,4 @@", true),
            ("kobject_put(&mddev->kobj);", true),
            ("goto out_free_mddev;", true),
            ("int err;", true),
            ("return;", true),
            (
                "unsigned long nextevt, nextevt_local, nextevt_global;",
                true,
            ),
            ("struct timer_base *base_local, *base_global;", true),
            (
                "rates by 33% giving almost 99% allocation success rates. It also;",
                false,
            ),
            (
                "1 creates an eventfd with the counter's initial value set to 0;",
                false,
            ),
            ("if (x) {", true),
            ("}", true),
        ] {
            assert_eq!(skipped(line, ""), data, "{line:?}");
        }
    }

    proptest::proptest! {
        /// Stopping after `k` sentences sees the first `k` of them, exactly.
        #[test]
        fn sentences_stop_where_asked(
            w in "([a-e]{1,3}|[ .?!\n\t>;{}+-]|e\\.g\\.|    |\u{e9}){0,300}",
            k in 0usize..8,
        ) {
            let mut seen = Vec::new();
            each_sentence(&w, |s| {
                seen.push(s.to_string());
                if seen.len() > k { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
            });
            let all = sentences(&w);
            proptest::prop_assert_eq!(&seen[..], &all[..all.len().min(k + 1)]);
        }
    }

    /// The proposal a short reply answers is the quote right above its first
    /// own line, whichever language the attribution above that quote is in.
    #[test]
    fn quoted_before_reply_table() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "On Mon, X wrote:\n> revert it?\n\nYes.\n",
                Some("revert it?"),
            ),
            (
                "Am Mo., 1. Jan. 2024 um 10:00 Uhr schrieb X <x@y.z>:\n> revert it?\n\nJa.\n",
                Some("revert it?"),
            ),
            (
                "Le lun. 1 janv. 2024, X <x@y.z> a écrit :\n> revert it?\n\nOui.\n",
                Some("revert it?"),
            ),
            (
                "X <x@y.z> 于2024年1月1日周一 10:00写道：\n> revert it?\n\n好的。\n",
                Some("revert it?"),
            ),
            (
                "2024년 1월 1일 (월) 오전 10:00, X <x@y.z>님이 작성:\n> revert it?\n\n네.\n",
                Some("revert it?"),
            ),
            // A greeting above the attribution, or between quote and reply.
            ("Hi Oliver,\n\nOn Mon, X wrote:\n> revert it?\n\nYes.\n", Some("revert it?")),
            ("On Mon, X wrote:\n> revert it?\n\nHi John,\n\nYes.\n", Some("revert it?")),
            // A wrapped attribution, over two lines or three.
            ("On Thu, Aug 18, 2022 at 10:28:30AM +0100, John\nGarry wrote:\n> revert it?\n\nYes.\n", Some("revert it?")),
            ("On Sat, Mar 28, 2020 at 9:24 PM kernel\ntest robot\nwrote:\n> revert it?\n\nYes.\n", Some("revert it?")),
            ("\"Rafael J. Wysocki\" <rafael@kernel.org>\nwrites:\n> revert it?\n\nYes.\n", Some("revert it?")),
            // A gateway's banner above the attribution is nobody's words.
            (
                "CAUTION: This email originated from outside of the organization.\n\nOn Mon, X wrote:\n> revert it?\n\nYes.\n",
                Some("revert it?"),
            ),
            // Own words right above an attribution are the replier's.
            ("I agree.\nOn Mon, X wrote:\n> revert it?\n\nYes.\n", None),
            // Own words first: nothing quoted above them.
            ("Yes.\n\nOn Mon, X wrote:\n> revert it?\n", None),
            // The robot's report is never a proposal.
            (
                "On Mon, X wrote:\n> kernel test robot noticed a -5% regression\n\nOk.\n",
                None,
            ),
        ];
        for (body, want) in cases {
            assert_eq!(quoted_before_reply(body).as_deref(), *want, "{body:?}");
        }
    }

    #[test]
    fn agreement_adopts_the_quoted_proposal() {
        let body = "On Mon, X wrote:\n> I think we should just revert this patch for now.\n\nYeah, no problem with that from my side.\n";
        let u = understand(body, Rules::builtin());
        assert_eq!(u.intent, Intent::WillRevert);
        assert!(matches!(u.basis, Basis::Agreement { .. }));
        assert!(u.evidence.contains("agreeing with"));
        // Agreeing with the robot's report decides nothing.
        let body = "> kernel test robot noticed a -5% regression of x\n\nOk.\n";
        let u = understand(body, Rules::builtin());
        assert!(!u.intent.is_decisive());
    }
}
