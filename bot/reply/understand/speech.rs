//! Who commits to what, sentence by sentence: the speech act behind a
//! reply's words, in two uses.
//!
//! - `own_claim`: is a decision phrase found in a sentence the replier's own
//!   claim? Not when it sits under a negated or reporting verb ("I don't agree
//!   that…", "Dave claims…"), in a condition ("If you think…"), a question, a
//!   quotation, or is disowned later in the sentence ("…, but I disagree").
//! - `acts`: features for the learned model that abstract over phrasing —
//!   the person speaking (I, we, you, it), the modality (will, please, can,
//!   should, done), negation, condition and question, crossed with the kind of
//!   action the sentence is about (revert, fix, keep, expected, test, look…).
//!   "I'll send the formal patch" and "we will post a fix" share
//!   `sa:1:fut:fix`; a word-pair model sees nothing in common.
//!
//! Both work on a normalised sentence (lower case, plain apostrophes, single
//! spaces), as the phrase rules do. Pure and linear in the sentence.

/// Why a decision phrase is not the replier's own claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotOwn {
    /// Under a negated verb of saying or believing: "I don't agree that …".
    Negated,
    /// Someone else's words: "Dave claims …", "you said …".
    Reported,
    /// A condition: "if …", "unless …", "whether …".
    Conditional,
    /// Asked, not claimed.
    Question,
    /// Inside quotation marks.
    Quoted,
    /// Disowned after it: "…, but I disagree".
    Disowned,
}

impl NotOwn {
    pub fn as_str(self) -> &'static str {
        match self {
            NotOwn::Negated => "negated",
            NotOwn::Reported => "reported",
            NotOwn::Conditional => "conditional",
            NotOwn::Question => "question",
            NotOwn::Quoted => "quoted",
            NotOwn::Disowned => "disowned",
        }
    }
}

/// Words of a normalised text (apostrophes kept inside words).
fn words(s: &str) -> Vec<&str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect()
}

/// What ends one clause of a sentence and begins the next: ", so", ";",
/// ":", ", but", ", however", a dash, a sentence-internal full stop. The
/// scope of a hedge or a condition: "Not sure, so, at this moment, I'll
/// revert this patch" decides in its last clause.
static CLAUSE_BREAK: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r",? so,? |; ?|: |, but |, however,? | - | -- |\. ").expect("a valid pattern")
});

/// Auxiliaries and modals, which open a yes/no question ("does it …",
/// "could you …"), with their negated forms' stems ("doesn't" → "does").
const AUX: &[&str] = &[
    "am", "are", "can", "could", "did", "do", "does", "had", "has", "have", "is", "may", "might",
    "must", "shall", "should", "was", "were", "will", "would",
];

/// What can follow an auxiliary as the subject of a question: a pronoun,
/// or a determiner opening a noun phrase ("is the regression …").
const SUBJECTS: &[&str] = &[
    "i", "you", "we", "it", "they", "he", "she", "this", "that", "these", "those", "there",
    "anyone", "anybody", "someone", "somebody", "the", "a", "an", "any", "your", "our", "my",
    "his", "her", "their", "its", "all",
];

/// Pronouns alone: after "do" and "have", a determiner opens an order
/// ("do the same", "have a look"), not a question.
const PRONOUNS: &[&str] = &[
    "i", "you", "we", "it", "they", "he", "she", "this", "that", "these", "those", "there",
    "anyone", "anybody", "someone", "somebody",
];

/// Words that open questions for information.
const WH: &[&str] = &[
    "what", "why", "how", "where", "when", "which", "who", "whose",
];

/// The auxiliary behind a word, negated or not ("isn't" → "is", "won't"
/// → "will", "can't" → "can").
pub fn aux(w: &str) -> Option<&'static str> {
    let stem = match w.strip_suffix("n't") {
        Some("wo") => "will",
        Some("ca") => "can",
        Some("sha") => "shall",
        Some(s) => s,
        None => w,
    };
    AUX.iter().copied().find(|a| *a == stem)
}

/// Is a sentence a question? By its `?`; or, typed without one as chat and
/// quick replies are ("can you rerun this test", "what does this number
/// mean"), by a question's word order in a sentence that ends with no
/// mark: a clause opening with an auxiliary before its subject or with a
/// question word and an auxiliary, or a tag (", right", ", doesn't it").
/// A sentence that ends with `.` or `!` is said, not asked, whatever its
/// order ("Could you rerun it."). Case-blind.
pub fn is_question(s: &str) -> bool {
    let s = s.trim_end();
    if s.ends_with('?') {
        return true;
    }
    if !s.ends_with(|c: char| c.is_alphanumeric()) {
        return false;
    }
    let s = s.to_lowercase();
    let tag = s.rsplit_once(", ").is_some_and(|(_, t)| {
        let t = words(t);
        t == ["right"]
            || (t.len() == 2
                && t[0].ends_with("n't")
                && aux(t[0]).is_some()
                && PRONOUNS.contains(&t[1]))
    });
    let clauses: Vec<&str> = s.split(", ").collect();
    let last = clauses.len() - 1;
    tag || clauses
        .iter()
        .enumerate()
        .any(|(i, clause)| opens_question(&words(clause), i == 0, i == last))
}

/// Does a clause open as a question ("so does this …", "how reliable are
/// your results", "which config did you use")? Not a condition put by
/// inversion before the clause it conditions ("should it land, …", "had
/// we known, …"), nor a relative clause after a comma (", which will …",
/// ", where it is …"): `first` and `last` say where the clause stands.
fn opens_question(ws: &[&str], first: bool, last: bool) -> bool {
    const LEAD: &[&str] = &[
        "so", "and", "but", "or", "also", "then", "ok", "okay", "well", "btw", "now", "hmm", "oh",
    ];
    let ws = match ws.first() {
        Some(w) if LEAD.contains(w) => &ws[1..],
        _ => ws,
    };
    let subject_after = |i: usize| {
        let (Some(a), Some(next)) = (ws.get(i).and_then(|w| aux(w)), ws.get(i + 1)) else {
            return false;
        };
        let subjects = if matches!(a, "do" | "have" | "had") {
            PRONOUNS
        } else {
            SUBJECTS
        };
        let condition = i == 0 && !last && matches!(a, "should" | "had" | "were");
        subjects.contains(next) && !condition
    };
    let Some(&opening) = ws.first() else {
        return false;
    };
    // "what's", "how're": the question word with its auxiliary.
    let (wh, contracted) = match opening.split_once('\'') {
        Some((wh, "s" | "re" | "d" | "ll")) => (wh, true),
        _ => (opening, false),
    };
    // "Why" asks in any word order ("why only this commit is slower"), as
    // writers whose first language inverts nothing put it.
    if WH.contains(&wh) && (first || matches!(wh, "what" | "why" | "how")) {
        wh == "why"
            || contracted
            || ws.get(1).is_some_and(|w| aux(w).is_some())
            || (2..=3).any(subject_after)
    } else {
        subject_after(0)
    }
}

/// The clause of `s` that holds byte `at` (a char boundary), as a range.
pub fn clause_of(s: &str, at: usize) -> std::ops::Range<usize> {
    let mut start = 0;
    let mut end = s.len();
    for m in CLAUSE_BREAK.find_iter(s) {
        // "If so, …" keeps its condition over what follows: its "so," is
        // not the conjunction that starts a clause.
        if m.as_str()
            .trim_start_matches(',')
            .trim_start()
            .starts_with("so")
            && (s[..m.start()].ends_with(" if") || &s[..m.start()] == "if")
        {
            continue;
        }
        if m.end() <= at {
            start = m.end();
        } else if m.start() > at {
            end = m.start();
            break;
        }
    }
    start..end
}

const NEGATORS: &[&str] = &[
    "not",
    "don't",
    "doesn't",
    "didn't",
    "wouldn't",
    "won't",
    "can't",
    "cannot",
    "never",
    "hardly",
    "isn't",
    "aren't",
    "wasn't",
    "shouldn't",
    "couldn't",
    "no",
];

/// A word that negates what follows it in its sentence.
pub fn is_negator(w: &str) -> bool {
    NEGATORS.contains(&w) || w.ends_with("n't")
}

/// Verbs whose complement is a claim (said, believed, agreed).
const CLAIM_VERBS: &[&str] = &[
    "agree",
    "say",
    "think",
    "believe",
    "buy",
    "accept",
    "claim",
    "call",
    "consider",
    "convinced",
    "sure",
];

/// Verbs that report someone else's claim.
const REPORTING: &[&str] = &[
    "claims",
    "claimed",
    "claim",
    "says",
    "said",
    "say",
    "argues",
    "argued",
    "argue",
    "thinks",
    "thought",
    "think",
    "believes",
    "believe",
    "suggests",
    "suggested",
    "insists",
    "insisted",
    "reckons",
    "asserts",
    "asserted",
    "wrote",
    "writes",
    "told",
];

const CONDITIONS: &[&str] = &[
    "if",
    "unless",
    "whether",
    "assuming",
    "suppose",
    "supposing",
];

/// Is the decision phrase at byte `at` of the normalised sentence `s` the
/// replier's own claim? `Ok` if so, else why not.
pub fn own_claim(s: &str, at: usize) -> Result<(), NotOwn> {
    let at = s.floor_char_boundary(at);
    if s[..at].matches('"').count() % 2 == 1 {
        return Err(NotOwn::Quoted);
    }
    if is_question(s) {
        return Err(NotOwn::Question);
    }
    let start = clause_of(s, at).start;
    let before = words(&s[start..at]);
    if before.iter().any(|w| CONDITIONS.contains(w)) || s[start..at].contains("in case ") {
        return Err(NotOwn::Conditional);
    }
    // A negated verb of claiming right before: "don't agree that", "wouldn't
    // say", "not convinced". Neg-raising inside the phrase itself ("I don't
    // think it is a regression") is part of the match, not before it; a
    // hedge set off by a comma ("Not sure, so, I'll revert") is a clause of
    // its own.
    let near = s[start..at].rfind(',').map_or(start, |c| start + c + 1);
    let near_words = words(&s[near..at]);
    for (i, w) in near_words.iter().enumerate() {
        if NEGATORS.contains(w)
            && *w != "no"
            && near_words[i + 1..]
                .iter()
                .take(2)
                .any(|v| CLAIM_VERBS.iter().any(|c| v.starts_with(c)))
        {
            return Err(NotOwn::Negated);
        }
        if ["disagree", "doubt", "dispute", "deny"].contains(w) {
            return Err(NotOwn::Negated);
        }
    }
    // Someone else's words: a reporting verb whose subject is not the
    // replier ("I said" is the replier's own claim).
    for (i, w) in before.iter().enumerate() {
        if w == &"according" {
            return Err(NotOwn::Reported);
        }
        if REPORTING.contains(w) {
            let subject = i.checked_sub(1).map(|j| before[j]);
            let own = matches!(
                subject,
                Some("i" | "we" | "i've" | "we've" | "and" | "also")
            ) || (subject.is_none() && start == 0);
            if !own {
                return Err(NotOwn::Reported);
            }
        }
    }
    let after = &s[at..];
    if [
        "i disagree",
        "i don't agree",
        "i do not agree",
        "i doubt",
        "i'm not convinced",
    ]
    .iter()
    .any(|p| after.contains(p))
    {
        return Err(NotOwn::Disowned);
    }
    Ok(())
}

/// The longest sentence `own_throughout` reads as a claim.
const MAX_CLAIM_BYTES: usize = 600;

/// Is the whole sentence the replier's own claim, wherever in it a decision
/// may lie? For a closure the learned model reads, no phrase says where the
/// decision is: "I don't agree that this is noise, the numbers are stable"
/// is the replier's own claim at its end, not after "agree that".
pub fn own_throughout(s: &str) -> bool {
    // Each place is read in time linear in the sentence; a sentence longer
    // than this is no plain claim anyway, and a human reads it.
    if s.len() > MAX_CLAIM_BYTES {
        return false;
    }
    let word_starts = s
        .char_indices()
        .filter(|&(i, c)| c == ' ' && i + 1 < s.len())
        .map(|(i, _)| i + 1);
    std::iter::once(0)
        .chain(word_starts)
        .chain(std::iter::once(s.len()))
        .all(|at| own_claim(s, at).is_ok())
}

/// The kinds of action a sentence can be about, by word stems.
const CLASSES: &[(&str, &[&str])] = &[
    (
        "revert",
        &["revert", "drop", "undo", "backout", "unmerg", "pull"],
    ),
    (
        "fix",
        &[
            "fix", "patch", "send", "sent", "post", "queue", "appl", "merg", "commit", "push",
            "pick", "formal",
        ],
    ),
    (
        "keep",
        &[
            "keep",
            "leave",
            "stay",
            "accept",
            "worth",
            "tradeoff",
            "trade-off",
            "inevitabl",
            "price",
            "cost",
            "intend",
        ],
    ),
    (
        "expected",
        &[
            "expect",
            "design",
            "artifact",
            "artefact",
            "nois",
            "varian",
            "fluctuat",
            "align",
            "unrelated",
            "bogus",
            "false",
            "spurious",
            "stable",
            "flak",
            "random",
            "fake",
            "real",
            "genuine",
        ],
    ),
    (
        "regress",
        &[
            "regress", "slow", "drop", "degrad", "worse", "lower", "loss",
        ],
    ),
    (
        "improve",
        &["improv", "faster", "better", "gain", "speedup", "boost"],
    ),
    (
        "test",
        &[
            "test",
            "retest",
            "run",
            "rerun",
            "reproduc",
            "confirm",
            "verif",
            "measur",
            "bisect",
            "result",
            "number",
            "data",
            "config",
            "benchmark",
        ],
    ),
    (
        "look",
        &[
            "look",
            "investigat",
            "check",
            "analy",
            "dig",
            "understand",
            "figur",
            "profil",
            "debug",
            "trace",
            "think",
            "idea",
            "explain",
        ],
    ),
    ("thanks", &["thank", "appreciat", "great", "nice"]),
    (
        "same",
        &[
            "same", "duplicat", "dup", "already", "known", "earlier", "previous", "another",
            "again",
        ],
    ),
    (
        "agree",
        &[
            "agree", "yes", "yeah", "right", "correct", "ok", "okay", "sure", "fine", "sense",
        ],
    ),
    ("ignore", &["ignore", "disregard", "nevermind", "never"]),
    (
        "tested",
        &[
            "tested-by",
            "reported-by",
            "fixes",
            "closes",
            "link",
            "acked-by",
            "reviewed-by",
        ],
    ),
];

fn person(ws: &[&str]) -> &'static str {
    for w in ws.iter().take(6) {
        match *w {
            "i" | "i'll" | "i'm" | "i've" | "i'd" | "me" | "my" | "i'd've" => return "1",
            "we" | "we'll" | "we're" | "we've" | "we'd" | "let's" | "our" | "us" => return "1",
            "you" | "you'll" | "you're" | "you've" | "your" => return "2",
            "please" => return "2",
            _ => {}
        }
    }
    "3"
}

fn modality(s: &str, ws: &[&str]) -> &'static str {
    let has = |x: &[&str]| ws.iter().any(|w| x.contains(w));
    if has(&["please"])
        || s.contains("can you")
        || s.contains("could you")
        || s.contains("would you")
        || s.contains("would be nice")
        || s.contains("would be great")
        || s.contains("mind ")
    {
        "req"
    } else if has(&[
        "i'll", "we'll", "will", "shall", "gonna", "plan", "planning", "going",
    ]) || s.contains("about to")
        || s.contains("intend to")
    {
        "fut"
    } else if has(&["should", "must", "need", "needs", "ought"]) || s.contains("have to") {
        "should"
    } else if has(&["can", "could", "may", "might"]) {
        "can"
    } else if has(&[
        "done", "already", "did", "have", "has", "had", "was", "were",
    ]) || ws.iter().any(|w| w.len() > 4 && w.ends_with("ed"))
    {
        "past"
    } else {
        "now"
    }
}

/// The speech-act features of one normalised sentence.
pub fn acts(s: &str, out: &mut Vec<String>) {
    let ws = words(s);
    if ws.is_empty() {
        return;
    }
    let p = person(&ws);
    let m = modality(s, &ws);
    let neg = ws.iter().any(|w| is_negator(w));
    let cond = ws.iter().any(|w| CONDITIONS.contains(w));
    let q = is_question(s);
    out.push(format!("sa:{p}:{m}"));
    if q {
        out.push(format!("sa:q:{p}:{m}"));
    }
    for (name, stems) in CLASSES {
        if !mentions(&ws, stems) {
            continue;
        }
        out.push(format!("sa:{name}"));
        out.push(format!("sa:{p}:{name}"));
        out.push(format!("sa:{m}:{name}"));
        out.push(format!("sa:{p}:{m}:{name}"));
        if neg {
            out.push(format!("sa:neg:{name}"));
            out.push(format!("sa:neg:{p}:{name}"));
        }
        if cond {
            out.push(format!("sa:cond:{name}"));
        }
        if q {
            out.push(format!("sa:q:{name}"));
            out.push(format!("sa:q:{p}:{name}"));
        }
    }
}

/// Does a normalised sentence commit its speaker to look into something or
/// test it, still to be done ("I need to look closer", "I'll test it on my
/// box")? Said with an agreement, it agrees to examine, not to what was
/// proposed: the person, modality and action of `acts`, not a phrase list.
pub fn commits_to_examine(s: &str) -> bool {
    let ws = words(s);
    if person(&ws) != "1" || !matches!(modality(s, &ws), "fut" | "should") {
        return false;
    }
    CLASSES
        .iter()
        .filter(|(name, _)| matches!(*name, "look" | "test"))
        .any(|(_, stems)| mentions(&ws, stems))
}

/// Does one of the words begin with one of a class's stems?
fn mentions(ws: &[&str], stems: &[&str]) -> bool {
    ws.iter().any(|w| stems.iter().any(|st| w.starts_with(st)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The phrase "not a regression" in each sentence: whose claim is it?
    #[test]
    fn own_claims_table() {
        let table: &[(&str, Result<(), NotOwn>)] = &[
            ("this is not a regression.", Ok(())),
            ("i think this is not a regression.", Ok(())),
            ("i said before: this is not a regression.", Ok(())),
            (
                "i don't agree that this is not a regression.",
                Err(NotOwn::Negated),
            ),
            (
                "i wouldn't say this is not a regression",
                Err(NotOwn::Negated),
            ),
            (
                "i'm not convinced this is not a regression.",
                Err(NotOwn::Negated),
            ),
            ("i doubt this is not a regression.", Err(NotOwn::Negated)),
            (
                "if you think this is not a regression, please explain.",
                Err(NotOwn::Conditional),
            ),
            (
                "unless this is not a regression after all.",
                Err(NotOwn::Conditional),
            ),
            (
                "dave claims this is not a regression, but i disagree.",
                Err(NotOwn::Reported),
            ),
            ("you said this is not a regression.", Err(NotOwn::Reported)),
            (
                "according to dave this is not a regression.",
                Err(NotOwn::Reported),
            ),
            ("is this not a regression?", Err(NotOwn::Question)),
            (
                "he wrote \"this is not a regression\" yesterday.",
                Err(NotOwn::Quoted),
            ),
            (
                "this is not a regression, or so i heard; i disagree.",
                Err(NotOwn::Disowned),
            ),
            ("hmm, i don't know. but this is not a regression.", Ok(())),
            ("no, i think this is not a regression.", Ok(())),
            (
                "not sure, so, at this moment, this is not a regression.",
                Ok(()),
            ),
            (
                "if so, this is not a regression after all.",
                Err(NotOwn::Conditional),
            ),
        ];
        for (s, want) in table {
            let at = s
                .find("this is not a regression")
                .or_else(|| s.find("this not"))
                .unwrap();
            assert_eq!(own_claim(s, at), *want, "{s}");
        }
    }

    /// A sentence with no phrase to place the decision: own only if it is
    /// the replier's claim wherever the decision lies.
    #[test]
    fn own_throughout_table() {
        let table: &[(&str, bool)] = &[
            ("this is just noise from the code layout.", true),
            ("no, i think this is noise, the runs vary a lot.", true),
            (
                "i don't agree that this is noise, the numbers are stable across all runs.",
                false,
            ),
            ("dave claims it is only noise, the runs are stable.", false),
            ("if it is noise, the next run will tell.", false),
            ("is it noise, then?", false),
            ("it is noise, or so i heard; i disagree.", false),
            ("", true),
        ];
        for &(s, want) in table {
            assert_eq!(own_throughout(s), want, "{s}");
        }
        // Past the bound, no claim is read (and no time is spent on one).
        let long = "this is just noise ".repeat(40);
        assert!(long.len() > MAX_CLAIM_BYTES);
        assert!(!own_throughout(&long));
    }

    #[test]
    fn acts_abstract_over_phrasing() {
        let mut a = Vec::new();
        acts("i'll send the formal patch with your tested-by.", &mut a);
        let mut b = Vec::new();
        acts("we will post a fix soon.", &mut b);
        assert!(a.contains(&"sa:1:fut:fix".to_string()), "{a:?}");
        assert!(b.contains(&"sa:1:fut:fix".to_string()), "{b:?}");
        let mut c = Vec::new();
        acts("could you retest with the patch below?", &mut c);
        assert!(c.contains(&"sa:q:2:test".to_string()), "{c:?}");
        let mut d = Vec::new();
        acts("", &mut d);
        assert!(d.is_empty());
    }

    #[test]
    fn commits_to_examine_table() {
        let cases = [
            ("right, i need to look closer.", true),
            ("agreed, i'll test it on my box tomorrow.", true),
            ("we should check the profile first.", true),
            ("yes, i think that's right.", false),
            ("i looked at it already.", false),
            ("you should test it.", false),
            ("yes, we should drop it.", false),
        ];
        for (s, expect) in cases {
            assert_eq!(commits_to_examine(s), expect, "{s}");
        }
    }
}

/// Words that make a question or request one for the robot or its people:
/// its name, its test, a run, its data. Whole words, in the forms replies
/// use: a prefix took "both" for a bot, "runqueue" for a run and "database"
/// for data.
const ROBOT_WORDS: &[&str] = &[
    "robot",
    "robots",
    "lkp",
    "0day",
    "bot",
    "bots",
    "oliver",
    "retest",
    "retested",
    "retesting",
    "rerun",
    "reran",
    "rerunning",
    "reproduce",
    "reproduced",
    "reproduces",
    "reproducible",
    "reproducing",
    "reproducer",
    "bisect",
    "bisected",
    "bisecting",
    "bisection",
    "kconfig",
    "config",
    "configs",
    "configuration",
    "job",
    "jobs",
    "machine",
    "machines",
    "testbox",
    "benchmark",
    "benchmarks",
    "benchmarking",
    "test",
    "tests",
    "tested",
    "testing",
    "testcase",
    "testcases",
    "testsuite",
    "run",
    "runs",
    "running",
    "ran",
    "result",
    "results",
    "numbers",
    "data",
    "profile",
    "profiles",
    "profiling",
    "stddev",
    "metric",
    "metrics",
    "report",
    "reports",
    "reported",
];

/// Does a normalised sentence ask something of the robot or its operators
/// (a question or a request that names the robot, its test, a run or its
/// data)? "David, any idea?" and "Say what?" do not.
pub fn asks_robot(s: &str) -> bool {
    let ws = words(s);
    let asking = is_question(s)
        || ws.first().is_some_and(|w| *w == "please")
        || s.contains("could you")
        || s.contains("can you")
        || s.contains("would you")
        || s.contains("would be nice if")
        || s.contains("would be great if");
    asking && ws.iter().any(|w| ROBOT_WORDS.contains(w))
}

#[cfg(test)]
mod asks {
    use super::asks_robot;

    #[test]
    fn questions_for_the_robot_table() {
        for (s, want) in [
            ("could you retest with the patch below?", true),
            ("where do i find the test?", true),
            ("can you share the kconfig?", true),
            ("is the result stable?", true),
            ("lkp folks, is there some nfs on the test system?", true),
            ("0day, 0-day and the bot: which one ran it?", true),
            ("david, any idea?", false),
            ("say what?", false),
            ("does that make sense to you?", false),
            ("the test was run twice.", false),
            // Whole words: "both" is no bot, a runqueue no run, a database
            // no data.
            ("should both of them take the lock?", false),
            ("why does the runqueue lock show up?", false),
            ("is the database on the same disk?", false),
            // Asked without the mark, as chat does.
            ("can you rerun this test", true),
            ("where do i find the test", true),
            ("the test was run twice", false),
        ] {
            assert_eq!(asks_robot(s), want, "{s}");
        }
    }
}

#[cfg(test)]
mod questions {
    use super::is_question;

    #[test]
    fn questions_with_and_without_their_mark() {
        for (s, want) in [
            ("Is this noise?", true),
            ("Could you rerun it.", false),
            ("Stop!", false),
            // Asked in a question's word order, the mark left off.
            ("can you rerun this test", true),
            ("Does this perhaps mean that this test is broken", true),
            ("is the regression gone with the patch", true),
            ("So should we drop it", true),
            ("Or does it in some cases", true),
            ("Feng, can you double check with", true),
            (
                "If not, in your experience, how reliable are your results",
                true,
            ),
            ("What storage driver is this using", true),
            ("what does this number mean", true),
            ("which config did you use", true),
            ("How much memory does the box have", true),
            ("Why is this faster", true),
            ("What's up", true),
            (
                "If it is caused by NUMA, why only this commit is slower",
                true,
            ),
            ("doesn't that fix it", true),
            ("This still feels like magic, doesn't it", true),
            ("So everything now goes faster, right", true),
            // Said, not asked.
            ("the test was run twice", false),
            ("I can rerun it", false),
            ("Thanks, will do", false),
            ("No, do not apply it", false),
            ("What I did was run it again", false),
            ("When I ran the test it failed", false),
            ("How it works is described in the changelog", false),
            ("Have a look at the patch", false),
            // The subject left out, as quick replies do.
            ("Could be a cache alignment thing", false),
            ("Can't reproduce it here", false),
            ("Should be fixed by the next rc", false),
            ("Would be nice to have the kconfig", false),
            ("Do the same for the other test", false),
            ("Should it land, the mutex will be the bottleneck", false),
            ("I have a patch, which will avoid the degradation", false),
            ("It is in the tree, where it was tested", false),
            ("That's right", false),
            ("", false),
        ] {
            assert_eq!(is_question(s), want, "{s:?}");
        }
    }
}
