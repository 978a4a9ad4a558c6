//! How well perfbot reads real maintainers, measured the only honest way: on
//! real replies (`tests/fixtures/threads`, `replies/dev` and the `tune` slice
//! of `replies/more`: 308 replies), each read by a model that never saw its
//! thread (five thread-grouped folds).
//! Also: the committed weights are what `perfbot train-intents` makes, and no
//! input, however odd, makes the reading panic or decide for an untrusted
//! sender.

use std::path::PathBuf;

use perfbot::app::eval::{cross_validate, default_policy, load, summarise, Split};
use perfbot::reply::policy::effect::decide;
use perfbot::reply::policy::trust::Role;
use perfbot::reply::understand::model::Model;
use perfbot::reply::understand::quote::own_words;
use perfbot::reply::understand::rules::Rules;
use perfbot::reply::understand::{read, Context, Intent, Speaker};

mod forms;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn threads() -> PathBuf {
    root().join("tests/fixtures/threads/labels.jsonl")
}

fn dev() -> PathBuf {
    root().join("tests/fixtures/replies/dev/labels.jsonl")
}

fn more() -> PathBuf {
    root().join("tests/fixtures/replies/more/tune.jsonl")
}

fn more_all() -> PathBuf {
    root().join("tests/fixtures/replies/more/labels.jsonl")
}

/// Thread-grouped cross-validation over every public label but the held-out
/// slice of `replies/more` (`holdout.jsonl`: the threads whose key hashes
/// under 64 in its first SHA-256 byte, kept unread until the end). The floors
/// are a little under the figures of BENCHMARKS.md, so that a change that
/// loses ground fails.
#[test]
fn thread_grouped_folds_hold_their_figures() {
    let items = load(&[threads(), dev(), more()]).unwrap();
    assert_eq!(items.len(), 308);
    let reads = cross_validate(
        &items,
        &[],
        Split::folds(5),
        &default_policy(),
        Rules::builtin(),
        Default::default(),
        Default::default(),
    );
    let s = summarise(&reads);
    let f = |a: usize, b: usize| a as f64 / b as f64;
    eprintln!("{}", perfbot::app::eval::render(&s, &reads, false));
    assert_eq!(s.decision_replies, 103);
    assert!(f(s.lenient, s.replies) >= 0.77, "{s:?}");
    assert!(f(s.decided_right, s.decision_replies) >= 0.53, "{s:?}");
    // 23 of 103 here, 24 since a long reply's words weigh less (a
    // twenty-fourth session: in this split one reply to a human is missed
    // instead; over 10 splits decided right is up in 7, never down, and
    // missed up by one in 2). 25 since the fifty-second session mended
    // two corpus texts (an archive's ">From", a no-break space): in this
    // split one author's closure at 0.22 to a human is read as other at
    // 0.30 in its fold; over 10 splits missed is 23.7 on average, was 23.8.
    assert!(s.silently_missed <= 25, "{s:?}");
    // Never on a reply that decided; of the rest, a question asked with a
    // patch to compare (read as a fix offered, awaiting it). An author's
    // "Now the same kernel with / > commits / reverted." is no revert since
    // a sentence a quote cuts stays one (BENCHMARKS.md, a sixteenth session).
    assert_eq!(s.wrong_decisions_on_decisions, 0, "{s:?}");
    assert!(s.wrong_decisions <= 1, "{s:?}");
    // A stranger's unsure closure, read by the model alone, asks no one
    // (BENCHMARKS.md, a fifteenth session): 16 of 153 here, 19 before; 14
    // since the robot's people's own unsure words ask no one (a twentieth
    // session).
    assert!(f(s.quiet_to_human, s.quiet_replies) <= 0.10, "{s:?}");
    // The model alone, whatever the thresholds: a decision outscores a quiet
    // reply 80% of the time here, and 64% of decisions pass the score only
    // 15% of quiet replies pass.
    let sep = s.separation.expect("every reply read by a fold's model");
    assert!(sep.auc >= 0.77, "{sep:?}");
    assert!(f(sep.caught, sep.decisions) >= 0.6, "{sep:?}");
    // The same readings, thread by thread in date order, then the review of
    // a case left open on an unsettled decision (BENCHMARKS.md).
    use perfbot::app::eval::{replay_threads, ThreadOutcome as T};
    let review = perfbot::config::ReviewSection::default();
    let t = replay_threads(&items, &reads, &default_policy(), Some(&review));
    let n = |o: T, decided: bool| {
        t.iter()
            .filter(|x| x.outcome == o && x.decision.is_some() == decided)
            .count()
    };
    let decided = t.iter().filter(|x| x.decision.is_some()).count();
    eprintln!("{}", perfbot::app::eval::render_threads(&t));
    assert!(f(n(T::Right, true), decided) >= 0.51, "{t:?}");
    assert!(
        f(n(T::Right, true) + n(T::ToHuman, true), decided) >= 0.83,
        "{t:?}"
    );
    assert!(n(T::Wrong, true) + n(T::Wrong, false) <= 1, "{t:?}");
    // Where nobody decided or asked anything, few go to a human: 6 of 45
    // here, 7 since words under a negation are features of their own (a
    // twenty-third session; the issue asks at most 25%). 9 since wrapped
    // lines and salutations are read as such (a forty-seventh session): in
    // this split two second readings cross `review.min_signal` (0.19 to
    // 0.20); over ten splits the mean is 8.1 of 45 (7 to 10), 7.9 (6 to 10)
    // before.
    let quiet: Vec<_> = t
        .iter()
        .filter(|x| x.decision.is_none() && !x.asked)
        .collect();
    let to_human = quiet.iter().filter(|x| x.outcome == T::ToHuman).count();
    assert!(
        f(to_human, quiet.len()) <= 0.2,
        "{to_human} of {}",
        quiet.len()
    );
    // An operator settling each decided thread by hand: the reply the label
    // lands on carries that decision itself far more often when it is the
    // strongest reading of it than when it is the thread's last reply.
    let many: Vec<_> = t
        .iter()
        .filter(|x| x.replies > 1)
        .filter_map(|x| x.settled)
        .collect();
    assert_eq!(many.len(), 36, "{t:?}");
    let last = many.iter().filter(|s| s.last).count();
    let strongest = many.iter().filter(|s| s.strongest).count();
    assert!(
        last <= 20 && strongest >= 27,
        "last {last}, strongest {strongest}"
    );
}

/// Decision phrases the replier does not make: under a negated "agree", a
/// condition, someone else's claim, a hedge of "say". With the built-in
/// model, from the author, none closes the case; and a reply of a word or
/// two never makes the case "investigating".
#[test]
fn decision_words_that_are_not_the_repliers_decision_close_nothing() {
    use perfbot::model::case::CaseState as S;
    let model = perfbot::reply::understand::model::builtin();
    let ctx = Context {
        speaker: Speaker::Author,
        improvement: false,
        patch_subject: false,
        patch_attached: false,
    };
    for text in [
        "I don't agree that this is not a regression.",
        "If you think this is not a regression, please explain.",
        "Dave claims this is not a regression, but I disagree.",
        "I wouldn't say this is not a regression",
        "I'm not convinced this is not a regression.",
        "You said this is within the noise. Is it?",
        "If so, this is not a regression after all.",
        "My hunch is that this is just noise from the code layout.",
        "I'm betting this is just noise from the code layout.",
        "Presumably this is just noise from the code layout.",
        // Read by the model alone, with no phrase to place the decision: the
        // claim it disputes comes before a comma (BENCHMARKS.md, a
        // nineteenth session).
        "I don't agree that this is noise, the numbers are stable across all runs.",
        "Dave claims it is only noise, but the runs are stable here.",
        // Someone else's words in quotation marks, typed plain or typeset.
        "As the changelog says: \"this is not a regression\".",
        "As the changelog says: \u{201C}this is not a regression\u{201D}.",
        "As the changelog says: \u{201E}this is not a regression\u{201C}.",
    ] {
        let u = read(text, &own_words(text), ctx, Rules::builtin(), model);
        let e = decide(S::Reported, &u, Role::Author, &default_policy());
        assert!(
            !matches!(e.state, Some(S::NotARegression | S::WontFix | S::Duplicate)),
            "{text:?} closed the case: {u:?} {e:?}"
        );
    }
    for text in ["ok", "+1", "asdf", "Ok.", "thanks!"] {
        let u = read(text, &own_words(text), ctx, Rules::builtin(), model);
        let e = decide(S::Reported, &u, Role::Author, &default_policy());
        assert_eq!(e.state, None, "{text:?}: {u:?} {e:?}");
    }
}

/// `train-intents --guide-weight`: a model trained with the labelling
/// guide's examples (`bot/rules/guide.toml`) beside the real replies reads
/// the decisions the issue found silently missed, in words of their kind,
/// as the decisions they are, and each is decided or put before a human.
/// (Off by default: BENCHMARKS.md, "The labelling guide as examples".)
/// `(words, the state it decides)`.
#[test]
fn a_model_trained_with_the_guide_reads_its_kinds_of_decision() {
    use perfbot::app::eval::{train, Training};
    use perfbot::model::case::CaseState as S;
    let items = load(&[threads(), dev(), more_all()]).unwrap();
    let trained = train(
        &items,
        Rules::builtin(),
        Training {
            guide: 0.5,
            ..Default::default()
        },
    );
    let model = Some(&trained);
    let ctx = Context {
        speaker: Speaker::Author,
        improvement: false,
        patch_subject: false,
        patch_attached: false,
    };
    let table: &[(&str, S)] = &[
        (
            "The patch fixes a real race, so I intend to keep it despite the drop.",
            S::WontFix,
        ),
        ("We can drop it, it's a cleanup.", S::AwaitingRevert),
        ("Please ignore this duplicate report.", S::Duplicate),
        // An answer: what it is the same as is in the question it quotes.
        (
            "On Mon, Bob wrote:\n> Is this the same regression as the one in v2?\n\nYes, it's the same.\n",
            S::Duplicate,
        ),
        ("The numbers don't match the patches.", S::NotARegression),
        (
            "I'll send the formal patch with your Tested-by.",
            S::AwaitingFix,
        ),
        (
            "Could you please test the patch below and see whether the regression goes away?",
            S::AwaitingFix,
        ),
    ];
    for (text, want) in table {
        let u = read(text, &own_words(text), ctx, Rules::builtin(), model);
        let e = decide(S::Reported, &u, Role::Author, &default_policy());
        // "Please ignore this duplicate report": not a regression is what a
        // careful reader could defend too.
        let defensible: &[S] = match want {
            S::Duplicate => &[S::Duplicate, S::NotARegression],
            w => std::slice::from_ref(w),
        };
        let read_as = perfbot::app::eval::target(u.intent);
        assert!(
            read_as.is_some_and(|s| defensible.contains(&s)),
            "{text:?} read as {u:?}"
        );
        assert!(
            e.state == read_as || e.state == Some(S::NeedsHuman),
            "{text:?}: {u:?} {e:?}"
        );
    }
}

/// A patch in a reply, inline or attached, is a fix offered: the case awaits
/// it, whoever posted it — unless the replier says it is not a fix, decided
/// something else, or is one of the robot's people (their patches are the
/// ones they tested). `(words, speaker, attached, state)`.
#[test]
fn a_patch_in_a_reply_is_a_fix_offered() {
    use perfbot::model::case::CaseState as S;
    let model = perfbot::reply::understand::model::builtin();
    let diff = "\n\ndiff --git a/kernel/futex.c b/kernel/futex.c\n--- a/kernel/futex.c\n\
                +++ b/kernel/futex.c\n@@ -385,8 +385,8 @@ static inline int f(void)\n\
                -\tu32 hash = jhash2(a);\n+\tu32 hash = jhash2(b);\n";
    let table: &[(&str, Speaker, bool, Option<S>)] = &[
        (
            "Right you are.",
            Speaker::Maintainer,
            false,
            Some(S::AwaitingFix),
        ),
        (
            "Right you are.",
            Speaker::Other,
            false,
            Some(S::AwaitingFix),
        ),
        (
            "Something like the attached, untested.",
            Speaker::Author,
            true,
            Some(S::AwaitingFix),
        ),
        (
            "This patch is not a fix, just a debug patch.",
            Speaker::Author,
            false,
            None,
        ),
        (
            "This patch is not a fix, just a debug patch.",
            Speaker::Author,
            true,
            None,
        ),
        // A debug patch offered for a profile is not the fix (the guide):
        // the request for a run goes to the robot's people.
        (
            "Could you try this debug patch and send the profile?",
            Speaker::Author,
            false,
            Some(S::NeedsHuman),
        ),
        (
            "A diagnostic patch, not meant to be merged.",
            Speaker::Maintainer,
            true,
            None,
        ),
        (
            "We ran the test again with this change on top.",
            Speaker::Operator,
            false,
            None,
        ),
        (
            "I'll revert the commit, revert below.",
            Speaker::Author,
            false,
            Some(S::AwaitingRevert),
        ),
    ];
    for &(words, speaker, attached, state) in table {
        let body = if attached {
            words.to_string()
        } else {
            format!("{words}{diff}")
        };
        let ctx = Context {
            speaker,
            patch_attached: attached,
            ..Context::default()
        };
        let role = match speaker {
            Speaker::Author => Role::Author,
            Speaker::Maintainer => Role::Maintainer,
            Speaker::Operator => Role::Operator,
            Speaker::Other => Role::Other,
        };
        let u = read(&body, &own_words(&body), ctx, Rules::builtin(), model);
        let e = decide(S::Reported, &u, role, &default_policy());
        let moved = e.state.filter(|s| *s != S::Investigating);
        assert_eq!(moved, state, "{words:?} from {speaker:?}: {u:?} {e:?}");
    }
}

/// A reply longer than what is read (32 KiB of own words) is read in part
/// only when prose lies past the cut, where a decision could be; a long
/// mail of tables or logs is read whole. `(words, partial, state)`.
#[test]
fn a_reply_is_read_in_part_only_when_prose_lies_past_the_cut() {
    use perfbot::model::case::CaseState as S;
    let model = perfbot::reply::understand::model::builtin();
    let table = "      12345 ±  2%     +10.3%      13617 ±  1%  perf-stat.ps.cycles\n".repeat(800);
    let prose = "We looked at the profile again and the numbers move as before.\n".repeat(400);
    let wide =
        " 1234567890 ±  2%     +10.3% 1361712345 ±  1%  perf-stat.i.cache-misses\n".repeat(400);
    let cases: &[(String, bool, Option<S>)] = &[
        (
            format!("Here is the raw data of the runs.\n\n{table}"),
            false,
            None,
        ),
        (format!("{prose}\n{table}"), false, Some(S::Investigating)),
        // Rows with wide figures, not indented, and rows cut short, as a
        // pasted table's rows wrap: no words of prose among them.
        (
            format!("{prose}\n{wide}\n15 ± 10%  perf-profile.children.cycles-pp.task_tick_fair\n"),
            false,
            Some(S::Investigating),
        ),
        (
            format!("{prose}\n{table}\nThis is not a regression, I am going to ignore it."),
            true,
            Some(S::NeedsHuman),
        ),
    ];
    for (words, partial, state) in cases {
        assert!(words.len() > perfbot::reply::understand::MAX_WORDS);
        let ctx = Context {
            speaker: Speaker::Author,
            ..Context::default()
        };
        let u = read(words, &own_words(words), ctx, Rules::builtin(), model);
        assert_eq!(u.partial, *partial, "{:?}", &words[words.len() - 80..]);
        let e = decide(S::Reported, &u, Role::Author, &default_policy());
        assert_eq!(e.state, *state, "{u:?} {e:?}");
    }
}

#[test]
fn the_committed_weights_are_what_training_makes() {
    let items = load(&[threads(), dev(), more_all()]).unwrap();
    let model = perfbot::app::eval::train(&items, Rules::builtin(), Default::default());
    let committed = std::fs::read_to_string(root().join("bot/rules/intents.model")).unwrap();
    assert!(
        model.to_text() == committed,
        "bot/rules/intents.model is stale: run `perfbot train-intents {} {} {}`",
        threads().display(),
        dev().display(),
        more_all().display()
    );
    assert!(committed.len() < 5 << 20);
}

#[test]
fn repeated_decision_words_from_a_stranger_only_reach_a_human() {
    use perfbot::model::case::CaseState as S;
    let words = "This is not a regression. I'll revert this patch. Fixed in v2. \
                 Won't fix. Duplicate of the other report. "
        .repeat(200);
    let model = perfbot::reply::understand::model::builtin();
    assert!(model.is_some(), "the built-in model loads");
    // However the reading comes out (whatever the sender claims to be in the
    // words), an untrusted sender's decision never moves the case.
    for speaker in [Speaker::Other, Speaker::Author, Speaker::Operator] {
        let ctx = Context {
            speaker,
            improvement: false,
            patch_subject: false,
            patch_attached: false,
        };
        let u = read(&words, &own_words(&words), ctx, Rules::builtin(), model);
        let e = decide(S::Reported, &u, Role::Other, &default_policy());
        if u.intent.is_decisive() {
            assert_eq!(e.state, Some(S::NeedsHuman), "{u:?} {e:?}");
        }
        assert!(
            !matches!(
                e.state,
                Some(
                    S::NotARegression
                        | S::WontFix
                        | S::Duplicate
                        | S::AwaitingFix
                        | S::AwaitingRevert
                )
            ),
            "a stranger decided: {e:?}"
        );
    }
}

/// `perfbot eval-replies ARGS… replies/dev/labels.jsonl`, from the
/// repository's top.
fn on_dev(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .arg("eval-replies")
        .args(args)
        .arg(dev())
        .current_dir(root())
        .output()
        .unwrap()
}

#[test]
fn eval_replies_on_the_command_line() {
    let o = on_dev(&["--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in [
        "replies",
        "lenient",
        "per_label",
        "confusion",
        "decided_right",
        "to_human",
        "silently_missed",
        "wrong_decisions",
    ] {
        assert!(v["summary"].get(k).is_some(), "{k} missing");
    }
    assert_eq!(v["replies"].as_array().unwrap().len(), 39);
    // Repeated cross-validation: one row of figures per split, the usual
    // split first, and the same counts of replies in each.
    let o = on_dev(&["--folds", "3", "--repeats", "2", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let splits: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(splits.len(), 2);
    for (seed, s) in splits.iter().enumerate() {
        assert_eq!(s["seed"], seed);
        assert_eq!(s["replies"], 39);
        assert!(s["threads"]["threads"].as_u64().unwrap() > 0, "{s}");
    }
    // One split by its seed reads as the repeats' row of that seed did.
    let o = on_dev(&["--folds", "3", "--seed", "1", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let one: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in ["lenient", "decided_right", "to_human", "silently_missed"] {
        assert_eq!(one["summary"][k], splits[1][k], "{k}");
    }
    // Repeats or a seed without folds, or a seed with repeats, is a usage
    // error.
    for args in [
        &["--repeats", "2"][..],
        &["--seed", "1"],
        &["--folds", "3", "--seed", "1", "--repeats", "2"],
    ] {
        let o = on_dev(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    }
    // A labels file that names a missing message is a clear input error; an
    // empty one is nothing to measure, not a score of 0/0.
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("labels.jsonl");
    for (text, says) in [
        (
            r#"{"thread": "t", "file": "nope.eml", "message_id": "x@y", "from_role": "author", "label": "other"}"#,
            "line 1",
        ),
        ("", "no labelled replies to evaluate"),
    ] {
        std::fs::write(&bad, text).unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_perfbot"))
            .args(["eval-replies"])
            .arg(&bad)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{text:?}: {err}");
        assert!(err.contains(says), "{text:?}: {err}");
    }
    // So is a weight that is no weight; a good one trains.
    std::fs::copy(
        root().join("tests/fixtures/replies/dev/lkp-reply-004.eml"),
        tmp.path().join("one.eml"),
    )
    .unwrap();
    let line = |w: &str| {
        format!(
            r#"{{"thread_key": "t", "file": "one.eml", "message_id": "x@y", "from_role": "author", "label": "other", "weight": {w}}}"#
        )
    };
    for (w, ok) in [
        ("0.3", true),
        ("1", true),
        ("0", false),
        ("-1", false),
        ("1000", false),
    ] {
        std::fs::write(&bad, line(w)).unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_perfbot"))
            .args(["train-intents"])
            .arg(&bad)
            .arg("--out")
            .arg(tmp.path().join("m.model"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.success(), ok, "weight {w}: {err}");
        if !ok {
            assert_eq!(o.status.code(), Some(2), "weight {w}: {err}");
            assert!(err.contains("line 1") && err.contains("weight"), "{err}");
        }
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any text: the reading finishes, its confidence is a probability,
        /// and the model's distribution is one.
        #[test]
        fn reading_arbitrary_text(text in ".{0,2000}", improvement in any::<bool>()) {
            let ctx = Context { speaker: Speaker::Author, improvement, ..Context::default() };
            let model = perfbot::reply::understand::model::builtin();
            let u = read(&text, &own_words(&text), ctx, Rules::builtin(), model);
            prop_assert!((0.0..=1.0).contains(&u.confidence));
            prop_assert!(Intent::ALL.contains(&u.intent));
            let f = perfbot::reply::understand::features::features(
                &text, &text, &u, &Default::default(), None, ctx);
            let p = model.unwrap().predict(&f);
            prop_assert!(p.iter().all(|x| x.is_finite() && *x >= 0.0));
            prop_assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        }

        /// Mail-shaped junk: quotes, patches, commands and decision words mixed.
        #[test]
        fn reading_mail_shaped_junk(parts in proptest::collection::vec(prop_oneof![
            Just("> This is not a regression.\n".to_string()),
            Just("#perfbot invalid\n".to_string()),
            Just("diff --git a/x b/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n".to_string()),
            Just("I'll revert this patch?\n".to_string()),
            Just("Fixes: 0123456789ab (\"x\")\n".to_string()),
            "[a-z ]{0,40}\n",
        ], 0..40), attached in any::<bool>()) {
            let text: String = parts.concat();
            let model = perfbot::reply::understand::model::builtin();
            let ctx = Context { patch_attached: attached, ..Context::default() };
            let u = read(&text, &own_words(&text), ctx, Rules::builtin(), model);
            prop_assert!((0.0..=1.0).contains(&u.confidence));
            // However it reads, a stranger's mail never closes a case.
            let e = decide(perfbot::model::case::CaseState::Reported, &u, Role::Other, &default_policy());
            prop_assert!(!e.state.is_some_and(|s| s.is_closed()), "{u:?} {e:?}");
        }
    }

    #[test]
    fn model_text_round_trip_of_the_builtin() {
        let m = perfbot::reply::understand::model::builtin().unwrap();
        let back = Model::from_text(&m.to_text()).unwrap();
        assert_eq!(back.len(), m.len());
    }
}

/// The robot's own people are read as anyone else: a retraction of their
/// report closes it (the labelling guide: "a robot operator retracting a
/// false positive"), a status of a retest closes nothing.
/// `(words, state)`, from an operator, the case reported.
#[test]
fn the_robots_people_retract_a_report_but_a_retest_status_closes_nothing() {
    use perfbot::model::case::CaseState as S;
    let model = perfbot::reply::understand::model::builtin();
    let table: &[(&str, Option<S>)] = &[
        (
            "So sorry -- this report is a noise. Please ignore it.",
            Some(S::NotARegression),
        ),
        (
            "It's a false positive, sorry for the inconvenience.",
            Some(S::NotARegression),
        ),
        (
            "We retested with the patch on top and the regression is gone.",
            None,
        ),
        (
            "We ran the test 10 more times and the regression is still there.",
            None,
        ),
    ];
    // A model that finds every operator's mail a status report ("other")
    // does not veto the rules' reading of a retraction: most of what the
    // robot's people write is status, which is why such a veto cost
    // decisions and saved none (BENCHMARKS.md, "An eighteenth session").
    let status_minded =
        Model::from_text("# perfbot intent model 1\nspeaker:operator 0 0 0 0 0 0 0 0 3\n").unwrap();
    for model in [model, Some(&status_minded)] {
        for &(words, state) in table {
            let ctx = Context {
                speaker: Speaker::Operator,
                ..Context::default()
            };
            let u = read(words, &own_words(words), ctx, Rules::builtin(), model);
            let e = decide(S::Reported, &u, Role::Operator, &default_policy());
            let moved = e.state.filter(|s| *s != S::Investigating);
            assert_eq!(moved, state, "{words:?}: {u:?} {e:?}");
        }
    }
}

/// The labelling guide's examples (`bot/rules/guide.toml`, never trained
/// on), read as shipped (rules and the built-in model) from the role each
/// names and judged by the policy: none that decides nothing is decided, no
/// decision is decided wrong, and most decisions are decided right. In
/// sample for the rules, which were written from these examples.
#[test]
fn the_guides_examples_as_shipped() {
    use perfbot::app::eval::{context_of, guide_examples, read_one, Outcome};
    let model = perfbot::reply::understand::model::builtin();
    let mut tally = std::collections::BTreeMap::new();
    let mut wrong = Vec::new();
    for l in guide_examples() {
        let u = read(
            &l.text,
            &own_words(&l.text),
            context_of(&l),
            Rules::builtin(),
            model,
        );
        let r = read_one(&l, &u, &default_policy());
        if r.outcome == Outcome::WrongDecision {
            wrong.push(format!("{:?} ({}): {u:?}", l.text, l.label.as_str()));
        }
        *tally.entry(r.outcome).or_insert(0usize) += 1;
    }
    eprintln!("{tally:?}");
    assert!(wrong.is_empty(), "decided wrong:\n{}", wrong.join("\n"));
    let n = |k: Outcome| tally.get(&k).copied().unwrap_or(0);
    use Outcome::{DecidedRight, Quiet, SilentlyMissed, ToHuman};
    assert_eq!(
        n(DecidedRight) + n(ToHuman) + n(SilentlyMissed) + n(Quiet),
        191
    );
    // 115 of the 125 decisions now, 6 to a human, 4 missed; the guide's 66
    // others: 44 quiet, 22 to a human (questions asked of the robot, and
    // unsure readings).
    assert!(n(DecidedRight) >= 110, "{tally:?}");
}

/// A reply with no words of its own (empty, blank, all quote) is read as
/// nothing, with no other readings: the model's prior is no one's words.
/// A patch attached to it is still a fix offered (what the reply said
/// before, "other", stays as its other reading).
#[test]
fn a_reply_without_words_of_its_own_carries_no_readings() {
    let model = perfbot::reply::understand::model::builtin();
    for (body, attached, want) in [
        ("", false, Intent::Other),
        ("  \n\n\t\n", false, Intent::Other),
        (
            "On Mon, Jan 1, A wrote:\n> we noticed a -5% regression\n> of will-it-scale\n",
            false,
            Intent::Other,
        ),
        ("-- \nsignature 123\n", false, Intent::Other),
        ("", true, Intent::FixPosted),
    ] {
        let ctx = Context {
            speaker: Speaker::Author,
            patch_attached: attached,
            ..Context::default()
        };
        let u = read(body, &own_words(body), ctx, Rules::builtin(), model);
        assert_eq!(u.intent, want, "{body:?}: {u:?}");
        if !attached {
            assert!(u.secondary.is_empty(), "{body:?}: {u:?}");
        }
    }
}

/// `text` with its own prose re-filled to `width` columns (a huge width
/// joins each paragraph into one line, as web mailers send it). Quotes,
/// indented or spaced lines (code, tables), headers, short lines and lines
/// of few letters stay as they are, and break paragraphs.
fn refill(text: &str, width: usize) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut para: Vec<&str> = Vec::new();
    let flush = |para: &mut Vec<&str>, out: &mut Vec<String>| {
        let mut line = String::new();
        for word in para.drain(..).flat_map(str::split_whitespace) {
            if !line.is_empty() && line.len() + 1 + word.len() > width {
                out.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        if !line.is_empty() {
            out.push(line);
        }
    };
    for l in text.lines() {
        let t = l.trim();
        let letters = t.chars().filter(|c| c.is_alphabetic()).count();
        let prose = !l.starts_with(['>', ' ', '\t'])
            && l != "-- "
            && t.len() >= 30
            && !t.contains("  ")
            && letters * 2 >= t.chars().count()
            && !["o ", "* ", "- "].iter().any(|b| t.starts_with(b))
            && !is_header(t);
        if prose {
            para.push(t);
        } else {
            flush(&mut para, &mut out);
            out.push(l.to_string());
        }
    }
    flush(&mut para, &mut out);
    out.join("\n")
}

/// `text` with "[...]" under each run of quoted lines, as a replier marks
/// where they cut the quote.
fn mark_cuts(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        out.push(*l);
        let next_quoted = lines.get(i + 1).is_some_and(|n| n.starts_with('>'));
        if l.starts_with('>') && !next_quoted {
            out.push("[...]");
        }
    }
    out.join("\n")
}

/// The text with `added` lines above its signature, where its own words
/// end in a sentence, not already in a short closing.
fn under_words(text: &str, added: &[&str]) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let sig = lines
        .iter()
        .position(|l| *l == "-- ")
        .unwrap_or(lines.len());
    let last_own = lines[..sig]
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty() && !l.starts_with('>'))?;
    if last_own.trim().len() <= 25 {
        return None;
    }
    let mut out = lines[..sig].to_vec();
    out.push("");
    out.extend(added);
    out.extend(&lines[sig..]);
    Some(out.join("\n"))
}

/// A mail carrying `body` with the given Content-Type parameters.
fn mail(content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "From: A <a@example.org>\nSubject: Re: a regression\nMIME-Version: 1.0\n\
         Content-Type: {content_type}; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n{body}"
    )
    .into_bytes()
}

/// The text as a mail client sends it `format=flowed` (RFC 3676): long lines
/// broken after a space, quote markers packed, lines opening with a space or
/// "From " space-stuffed; with `delsp`, a soft break's space is one more.
fn flowed(text: &str, delsp: bool) -> String {
    let soft = if delsp { "  " } else { " " };
    let mut out = Vec::new();
    for line in text.lines() {
        if line == "-- " {
            out.push(line.to_string());
            continue;
        }
        let line = line.trim_end();
        let marks = line.len() - line.trim_start_matches(['>', ' ']).len();
        let (prefix, mut content) = match line[..marks].matches('>').count() {
            0 => (String::new(), line.to_string()),
            depth => (format!("{} ", ">".repeat(depth)), line[marks..].to_string()),
        };
        if prefix.is_empty() && (content.starts_with(' ') || content.starts_with("From ")) {
            content.insert(0, ' ');
        }
        // Break at spaces past 66 columns; a piece's leading blanks stay on it.
        let mut piece = String::new();
        for (i, word) in content.split(' ').enumerate() {
            if !piece.trim().is_empty() && prefix.len() + piece.len() + 1 + word.len() > 66 {
                out.push(format!("{prefix}{piece}{soft}"));
                piece.clear();
            } else if i > 0 {
                piece.push(' ');
            }
            piece.push_str(word);
        }
        out.push(format!("{prefix}{piece}"));
    }
    out.join("\n") + "\n"
}

/// The text as an HTML-only mail: quotes in `<blockquote>`, runs of blanks
/// as `&nbsp;`, a line each ended by `<br>`, or (`outlook`) each a margin-less
/// `<p class="MsoNormal">`, an empty one holding `&nbsp;`.
fn html_only(text: &str, outlook: bool) -> String {
    let mut out = vec!["<html><body>".to_string()];
    let mut open = 0;
    for line in text.lines() {
        let marks = line.len() - line.trim_start_matches(['>', ' ']).len();
        let depth = line[..marks].matches('>').count();
        let content = if depth > 0 { &line[marks..] } else { line };
        for _ in open..depth {
            out.push("<blockquote type=\"cite\">".into());
        }
        for _ in depth..open {
            out.push("</blockquote>".into());
        }
        open = depth;
        let escaped = handlebars::html_escape(content)
            .replace('\t', &"&nbsp;".repeat(8))
            .replace("  ", " &nbsp;");
        out.push(match (outlook, escaped.is_empty()) {
            (false, _) => format!("{escaped}<br>"),
            (true, true) => "<p class=\"MsoNormal\"><o:p>&nbsp;</o:p></p>".into(),
            (true, false) => format!("<p class=\"MsoNormal\">{escaped}<o:p></o:p></p>"),
        });
    }
    out.extend(std::iter::repeat_n("</blockquote>".to_string(), open));
    out.push("</body></html>".into());
    out.join("\n") + "\n"
}

/// "Subject: …", "Fixes: …": a header or trailer, never re-filled.
fn is_header(t: &str) -> bool {
    t.split_once(": ").is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

/// How a reply's lines are wrapped, whom it greets and how it marks its
/// cuts of the quote change nothing of how it is read: each labelled reply
/// of `replies/dev` and `replies/more`, its prose re-filled to 40 columns or
/// joined into one line a paragraph, opened with "Hi Oliver,", with
/// "[...]" under each quote, attributed in Chinese, quoted "kr> " as
/// Supercite does, sent
/// `format=flowed` or as HTML only (lines
/// as `<br>` or as Outlook's paragraphs), or
/// closed twice ("Thanks.\n\nThanks,\nJohn") or "Sent from my iPhone",
/// or carrying what a mail server adds (a legal notice, a company's register
/// entry, a gateway's banner), or typed with typographic apostrophes and sent
/// in UTF-8 under a US-ASCII label, gets the reading it has as
/// written, from the same words. (Before a line going on with a
/// sentence was read as prose whatever it opens with, and an attribution
/// could wrap over three lines, 3 of 219 labelled replies were read as
/// another intent at 40 columns and 2 joined: BENCHMARKS.md, a
/// forty-seventh session; greeted, 7 were read otherwise, and with cuts
/// marked 2, one of them as a revert. Closed twice, 8 of 83 kept "Thanks."
/// as their words before sign-offs were stripped one after another, and 3
/// were read as thanks: a forty-eighth session. Under a legal notice 27 of
/// 219 were read otherwise, and 26 under a banner; labelled US-ASCII, 7 of
/// 163 with apostrophes: a fifty-first session.)
/// The replier's own lines with each apostrophe between letters made
/// typographic ("I’ll"), as word processors and phones type it.
fn apostrophes_typographic(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.starts_with('>') {
                return l.to_string();
            }
            let c: Vec<char> = l.chars().collect();
            (0..c.len())
                .map(|i| {
                    let between = i > 0
                        && i + 1 < c.len()
                        && c[i - 1].is_alphanumeric()
                        && c[i + 1].is_alphanumeric();
                    if c[i] == '\'' && between {
                        '’'
                    } else {
                        c[i]
                    }
                })
                .collect()
        })
        .collect::<Vec<String>>()
        .join("\n")
}

/// Boilerplate mail servers and gateways add to a person's mail, written as
/// companies write theirs (none of the labelled replies carries one).
const NOTICE: &str = "This e-mail and its attachments contain confidential information, which\nis intended only for the person or entity whose address is listed above. Any use of the\ninformation contained herein in any way by persons other than the intended\nrecipient(s) is prohibited. If you receive this e-mail in error, please notify the sender by\nphone or email immediately and delete it!";
const ARM_NOTICE: &str = "IMPORTANT NOTICE: The contents of this email and any attachments are confidential and may also be privileged. If you are not the intended recipient, please notify the sender immediately and do not disclose the contents to any other person, use it for any purpose, or store or copy the information in any medium. Thank you.";
const NOTICE_ZH: &str = "本邮件及其附件含有保密信息，仅限于发送给上面地址中列出的个人或群组。如果您错收了本邮件，请您立即电话或邮件通知发件人并删除本邮件！";
const REGISTER: &str = "Example Deutschland GmbH\nRegistered Address: Hauptstrasse 1, 80000 Muenchen, Germany\nManaging Directors: A. Person, B. Person\nCommercial Register: Amtsgericht Muenchen HRB 123456";
const BANNER: &str = "CAUTION: This email originated from outside of the organization. Do not click links or open attachments unless you recognize the sender and know the content is safe.";

/// A reply's reading as ingestion makes it with the shipped rules and
/// model: its intent, and its evidence word by word, quoted as typed
/// ("I’ll" is "I'll").
fn reading(body: &str) -> (Intent, Vec<String>) {
    let model = perfbot::reply::understand::model::builtin();
    let u = read(
        body,
        &own_words(body),
        Context::default(),
        Rules::builtin(),
        model,
    );
    // Typeset marks quote the same words, and so do a contraction typed
    // without its apostrophe, emphasis and a shorthand.
    let evidence = u
        .evidence
        .replace(['’', '‘', '\''], "")
        .replace(['“', '”'], "\"")
        .replace('…', "...")
        .replace('—', "--")
        .replace(['*', '_'], "");
    let spelled = |w: &str| {
        let core = w.trim_end_matches([',', '.', '?', '!', ';', ':', ')']);
        if let Some((word, _)) = forms::CHAT.iter().find(|(_, short)| *short == core) {
            return format!("{word}{}", &w[core.len()..]);
        }
        [
            ("Thx", "Thanks"),
            ("thx", "thanks"),
            ("Pls", "Please"),
            ("pls", "please"),
        ]
        .iter()
        .find_map(|(short, word)| w.strip_prefix(short).map(|rest| format!("{word}{rest}")))
        .unwrap_or_else(|| w.to_string())
    };
    (u.intent, evidence.split_whitespace().map(spelled).collect())
}

/// Every labelled reply of `replies/dev` and `replies/more`: its file name
/// and its text as ingestion reads it.
fn labelled_replies() -> Vec<(String, String)> {
    use perfbot::flows::ingest::parse::body_text;
    let mut out = Vec::new();
    for dir in ["dev", "more"] {
        let dir = root().join("tests/fixtures/replies").join(dir);
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "eml" || e == "txt") {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                out.push((name, body_text(&std::fs::read(&path).unwrap())));
            }
        }
    }
    out.sort();
    out
}

/// Replies read alike when their sender's client wrapped the quoted lines
/// at 72 columns without quoting their overflow, put no-break spaces for
/// spaces, or characters no one sees (a byte-order mark, zero-width spaces,
/// soft hyphens) and a logo's placeholder line, or an archive left a "From
/// …" line of theirs escaped as ">From …" (all undone by
/// `flows::ingest::mend` as the mail is read), or typeset their marks as a
/// phone or a word processor does (curly quotes, `…`, `—`), or as a
/// Chinese input method does (`，？。` with no space after). With the
/// unseen characters, 218 of these 219 replies read otherwise before:
/// another intent or evidence. Typeset, 5 did: an ellipsis ended no
/// sentence, a commit named as `(“mm: …”)` was no commit, words inside
/// curly quotation marks were the replier's own. With full-width marks,
/// 207: sentences ran together, and 8 questions read as "not a
/// regression" (no `?` ended them). With contractions typed without their
/// apostrophe ("dont", "Im"), 17, 9 of them as another intent ("doesnt"
/// negated nothing); only the one whose "we're" became "were" may still.
/// With negations emphasised as plain text does (`*not*`, `_nothing_`), 6
/// read otherwise, 2 as another intent ("it has *nothing* to do with" no
/// longer negated). With "thanks" and "please" shortened ("Thx", "pls"),
/// 8, 7 as another intent ("Thx for the report!" as won't-fix). With chat's
/// "w/", "w/o", "b/c", "u" and "r", 10 as another intent in BENCHMARKS.md's
/// harness ("Now the same kernel w/ [the patch quoted] reverted." as a
/// revert). Before, the overflow of the robot's quoted table was read as
/// the replier's words (in BENCHMARKS.md's harness, 32 of 214 replies read
/// otherwise, and 104 with an escaped opening). Where the wrap cut a quoted
/// line right after a sentence's end, or inside a run of spaces under a
/// header of words, the overflow stays the replier's as far as anyone can
/// tell: those replies are named here, and only those may read otherwise.
#[test]
fn replies_read_alike_when_a_client_broke_their_quotes_or_an_archive_escaped_from() {
    use perfbot::flows::ingest::parse::body_text;
    const CUT_AT_A_SENTENCE_OR_A_HEADER: [&str; 5] = [
        "more-A-018.eml",
        "more-A-051.eml",
        "more-A-061.eml",
        "more-B-026.eml",
        "more-C-023.eml",
    ];
    // "we're investigating it" typed "were investigating it": the past
    // tense to any reader.
    const WERE_FOR_WE_RE: [&str; 1] = ["more-A-102.eml"];
    let sent = |body: &str| body_text(&mail("text/plain", body));
    let mut unlike = Vec::new();
    let replies = labelled_replies();
    assert!(replies.len() >= 210, "{}", replies.len());
    for (name, text) in &replies {
        let want = reading(text);
        // Each form, and the replies it may leave read otherwise.
        type MadeOver = fn(&str) -> String;
        let table: [(&str, MadeOver, &[&str]); 10] = [
            (
                "wrapped",
                |t| forms::wrapped_by_a_client(t, 72),
                &CUT_AT_A_SENTENCE_OR_A_HEADER,
            ),
            ("no-break spaces", forms::no_break_spaces, &[]),
            (
                "unseen characters",
                forms::unseen_characters_and_a_logo,
                &[],
            ),
            ("full-width marks", forms::full_width_marks, &[]),
            (
                "apostrophes left out",
                forms::apostrophes_left_out,
                &WERE_FOR_WE_RE,
            ),
            ("typeset", forms::typeset, &[]),
            ("negations emphasised", |t| forms::emphasised(t, '*'), &[]),
            ("negations underlined", |t| forms::emphasised(t, '_'), &[]),
            ("thanks and please shortened", forms::shortened, &[]),
            ("chat's shorthands", forms::chatted, &[]),
        ];
        for (form, make_over, may_differ) in table {
            let got = reading(&sent(&make_over(text)));
            if got != want && !may_differ.contains(&name.as_str()) {
                unlike.push(format!("{name} {form}: {want:?} / {got:?}"));
            }
        }
        // Its first paragraph of its own opening "From what I can tell, …",
        // as written and as an mbox writer escaped it.
        if let Some(opened) = opened_with_from(text) {
            let (plain, escaped) = (
                sent(&opened),
                sent(&opened.replace("\nFrom what", "\n>From what")),
            );
            if reading(&plain) != reading(&escaped) {
                unlike.push(format!(
                    "{name} >From: {:?} / {:?}",
                    reading(&plain),
                    reading(&escaped)
                ));
            }
        }
    }
    assert!(unlike.is_empty(), "read otherwise:\n{}", unlike.join("\n"));
}

/// Replies read as the same intent when their writer typed their
/// questions without a `?`, as chat does: a sentence that ends with no
/// mark and opens as a question ("can you rerun this test", "what does
/// this number mean", "…, right") is asked, and a line its writer ended
/// without a mark ends its sentence. Before, 18 of the 214 plain-text
/// replies of BENCHMARKS.md's harness read as another intent ("can you
/// rerun this test" as not-a-regression). Those named here still may: only
/// the mark told their question, which ran on into the next sentence on
/// its line ("…how I ran the test If not, …"), was put in a statement's
/// words ("You're going to merge the two patches to 3.14?"), was a
/// fragment ("David, any idea?") or had a smiley after it.
#[test]
fn replies_read_alike_when_their_questions_lost_their_marks() {
    use perfbot::flows::ingest::parse::body_text;
    const ONLY_THE_MARK_TOLD: [&str; 10] = [
        "lkp-reply-081.eml",
        "lkp-reply-091.eml",
        "lkp-reply-103.eml",
        "more-A-012.eml",
        "more-A-040.eml",
        "more-A-095.eml",
        "more-A-106.eml",
        "more-B-002.eml",
        "more-B-013.eml",
        "more-C-019.eml",
    ];
    let mut unlike = Vec::new();
    let mut asked = 0;
    for (name, text) in labelled_replies() {
        let unmarked = forms::unmarked_questions(&text);
        if unmarked == text {
            continue;
        }
        asked += 1;
        let (want, got) = (
            reading(&text).0,
            reading(&body_text(&mail("text/plain", &unmarked))).0,
        );
        if want != got && !ONLY_THE_MARK_TOLD.contains(&name.as_str()) {
            unlike.push(format!("{name}: {want} / {got}"));
        }
    }
    assert!(asked >= 60, "{asked}");
    assert!(unlike.is_empty(), "read otherwise:\n{}", unlike.join("\n"));
}

/// The text with its first paragraph of the replier's own words opening
/// "From what I can tell, …", if it has one that opens with a letter.
fn opened_with_from(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let at = (0..lines.len()).find(|&i| {
        let t = lines[i].trim();
        (i == 0 || lines[i - 1].trim().is_empty())
            && t.split_whitespace().count() >= 3
            && t.starts_with(|c: char| c.is_alphabetic())
            && !t.ends_with(':')
            && !t.starts_with("From")
            && !["Hi", "Hello", "Dear", "Hey"]
                .iter()
                .any(|g| t.starts_with(g))
    })?;
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let t = lines[at].trim();
    let mut first = t.chars();
    let lower: String = first.next()?.to_lowercase().chain(first).collect();
    out[at] = format!("From what I can tell, {lower}");
    Some(format!("\n{}\n", out.join("\n")))
}

#[test]
fn replies_read_alike_however_wrapped_greeted_or_cut() {
    use perfbot::flows::ingest::parse::body_text;
    let mut unlike = Vec::new();
    let replies = labelled_replies();
    for (name, text) in &replies {
        let want = reading(text);
        let mut variants = vec![
            ("at 40 columns", refill(text, 40)),
            ("joined", refill(text, usize::MAX)),
            ("greeted", format!("Hi Oliver,\n\n{text}")),
            ("with its cuts marked", mark_cuts(text)),
            (
                "attributed as a Chinese Gmail does",
                text.lines()
                    .map(
                        |l| match !l.starts_with('>') && l.trim_end().ends_with("wrote:") {
                            true => {
                                "kernel test robot <lkp@intel.com> 于2024年1月1日周一 10:00写道："
                            }
                            false => l,
                        },
                    )
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            (
                "quoted with Supercite's initials",
                text.lines()
                    .map(|l| match l.strip_prefix('>') {
                        Some(rest) if rest.starts_with(['>', ' ']) || rest.is_empty() => {
                            format!("kr>{rest}")
                        }
                        Some(rest) => format!("kr> {rest}"),
                        None => l.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            (
                "sent flowed",
                body_text(&mail("text/plain; format=flowed", &flowed(text, false))),
            ),
            (
                "sent flowed, delsp",
                body_text(&mail(
                    "text/plain; format=flowed; delsp=yes",
                    &flowed(text, true),
                )),
            ),
            (
                "sent as HTML only",
                body_text(&mail("text/html", &html_only(text, false))),
            ),
            (
                "sent as Outlook's HTML",
                body_text(&mail("text/html", &html_only(text, true))),
            ),
        ];
        let closed = ["Thanks.", "", "Thanks,", "John"];
        variants.extend(under_words(text, &closed).map(|t| ("closed twice", t)));
        let phone = ["Sent from my iPhone"];
        variants.extend(under_words(text, &phone).map(|t| ("sent from a phone", t)));
        // What a mail server or gateway adds: at the end, after a blank
        // or glued to the last line; a banner at the top.
        let end = text.trim_end();
        variants.extend([
            ("under a legal notice", format!("{end}\n\n{NOTICE}\n")),
            ("glued to a legal notice", format!("{end}\n{ARM_NOTICE}\n")),
            (
                "under a notice in Chinese",
                format!("{end}\n\n{NOTICE_ZH}\n\n{NOTICE}\n"),
            ),
            ("under a register entry", format!("{end}\n\n{REGISTER}\n")),
            ("under a gateway's banner", format!("{BANNER}\n\n{text}")),
        ]);
        // Typographic apostrophes, in UTF-8 under an old client's
        // US-ASCII label.
        let typographic = apostrophes_typographic(text);
        if typographic != *text {
            let raw = format!(
            "From: A <a@example.org>\nSubject: Re: a regression\nMIME-Version: 1.0\n\
             Content-Type: text/plain; charset=us-ascii\nContent-Transfer-Encoding: 8bit\n\n{typographic}"
        );
            variants.push(("in UTF-8 labelled US-ASCII", body_text(raw.as_bytes())));
        }
        for (how, variant) in variants {
            let got = reading(&variant);
            if got != want {
                unlike.push(format!("{name} {how}: {want:?} / {got:?}"));
            }
        }
    }
    assert!(replies.len() >= 210, "{}", replies.len());
    assert!(unlike.is_empty(), "read otherwise:\n{}", unlike.join("\n"));
}
