//! What replies do to cases, end to end through `perfbot ingest`: decisions by
//! trusted people move the case with the evidence on record; questions,
//! untrusted or contradicting decisions go to a human (with an escalation mail);
//! robots and perfbot's own mail do nothing; commands, reverts and `Closes:`
//! trailers; acks at most once per case.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{event_to, ok, outbox, perfbot_stdin, root, show};

fn setup(dir: &Path, extra: &str) -> PathBuf {
    let text = format!(
        r#"
[bot]
state_dir = {state:?}
email = "perfbot@ci.example"
message_id_domain = "perfbot.ci.example"

[report]
templates_dir = {templates:?}
cc = ["oe-lkp@lists.linux.dev"]

[outbound]
transport = "stdout"
outbox_dir = {outbox:?}

[trust]
operators = ["ops@ci.example"]
maintainers = ["maint@kernel.example"]

{extra}
"#,
        state = dir.join("state"),
        templates = root().join("templates"),
        outbox = dir.join("state/outbox"),
    );
    let p = dir.join("config.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn run(cfg: &Path, args: &[&str], input: Option<&[u8]>) -> Output {
    let o = perfbot_stdin(cfg, args, input);
    ok(&o);
    o
}

struct Case {
    id: String,
    message_id: String,
}

fn report(cfg: &Path) -> Case {
    run(
        cfg,
        &["report", "examples/seed002-xfs-fio-falloc-2022.json"],
        None,
    );
    // Sent (to standard output): the case is "reported" when replies come.
    run(cfg, &["send"], None);
    let o = run(cfg, &["cases", "list", "--json"], None);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    Case {
        id: v[0]["id"].as_str().unwrap().into(),
        message_id: v[0]["message_id"].as_str().unwrap().into(),
    }
}

fn mail(from: &str, id: &str, parent: &str, extra_headers: &str, body: &str) -> Vec<u8> {
    format!(
        "From: {from}\r\nSubject: Re: [xfs] 0b02c8c0d7: fio.write_iops -9.0% regression\r\nMessage-ID: <{id}>\r\nIn-Reply-To: <{parent}>\r\nReferences: <{parent}>\r\nDate: Tue, 5 Jun 2018 17:31:14 +1000\r\n{extra_headers}\r\n\
         On Tue, Jun 05, 2018 at 03:16:57PM +0800, kernel test robot wrote:\r\n> FYI, we noticed a -9.0% regression of fio.write_iops\r\n> regression regression\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

fn ingest(cfg: &Path, raw: &[u8]) {
    run(cfg, &["ingest", "--stdin"], Some(raw));
}

fn raw_of(cfg: &Path, id: &str) -> String {
    String::from_utf8(run(cfg, &["outbox", "show", id], None).stdout).unwrap()
}

const DAVE: &str = "Dave Chinner <dchinner@xfs.example>";

#[test]
fn the_authors_not_a_regression_closes_the_case_with_the_evidence_and_one_ack() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "[acks]\nenabled = true\n");
    let c = report(&cfg);
    ingest(
        &cfg,
        &mail(
            DAVE,
            "r1@dastard",
            &c.message_id,
            "",
            "This is not a regression. The histogram moved.\r\n\r\nCheers,\r\n\r\nDave.",
        ),
    );
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "not-a-regression");
    let ev = event_to(&v, "not-a-regression");
    assert_eq!(ev["cause"]["kind"], "message");
    assert_eq!(ev["cause"]["message_id"], "r1@dastard");
    assert_eq!(ev["cause"]["quote"], "This is not a regression.");
    assert_eq!(ev["old"], "reported");
    let t = thread_entry(&v, "r1@dastard");
    assert_eq!(t["understanding"]["intent"], "not-a-regression");
    assert_eq!(t["understanding"]["role"], "author");

    // One ack, in the thread, to Dave with the lists in Cc.
    let acks: Vec<_> = outbox(&cfg)
        .into_iter()
        .filter(|e| e["kind"] == "ack")
        .collect();
    assert_eq!(acks.len(), 1);
    let raw = raw_of(&cfg, acks[0]["message_id"].as_str().unwrap());
    assert!(raw.contains("In-Reply-To: <r1@dastard>"), "{raw}");
    assert!(raw.contains("To: dchinner@xfs.example"), "{raw}");
    assert!(raw.contains("Subject: Re: "), "{raw}");
    assert!(raw.contains("> This is not a regression."), "{raw}");
    assert!(raw.contains("Auto-Submitted: auto-replied"), "{raw}");
    // Another decision in the thread: never a second ack.
    ingest(
        &cfg,
        &mail(
            "maint@kernel.example",
            "r2@x",
            "r1@dastard",
            "",
            "Agreed, this is not a regression.",
        ),
    );
    let acks = outbox(&cfg)
        .into_iter()
        .filter(|e| e["kind"] == "ack")
        .count();
    assert_eq!(acks, 1);
}

/// A fix offered as an attached file (as Linus sends them): the case awaits
/// the fix, and the thread keeps the patch's name.
/// Dave's reply <p1@dastard> to `parent` with a patch attached and a line
/// of text.
fn patch_attached(parent: &str) -> String {
    format!(
        "From: {DAVE}\r\nSubject: Re: [xfs] 0b02c8c0d7: fio.write_iops -9.0% regression\r\n\
         Message-ID: <p1@dastard>\r\nIn-Reply-To: <{parent}>\r\nReferences: <{parent}>\r\n\
         Date: Tue, 5 Jun 2018 17:31:14 +1000\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"zz\"\r\n\r\n\
         --zz\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n\
         Something like the attached, entirely untested.\r\n\r\n   Dave\r\n\
         --zz\r\nContent-Type: text/x-patch; charset=US-ASCII; name=\"patch.diff\"\r\n\
         Content-Disposition: attachment; filename=\"patch.diff\"\r\n\r\n\
         diff --git a/fs/xfs/xfs_file.c b/fs/xfs/xfs_file.c\r\n--- a/fs/xfs/xfs_file.c\r\n\
         +++ b/fs/xfs/xfs_file.c\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n--zz--\r\n"
    )
}

#[test]
fn a_patch_attached_to_a_reply_awaits_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    ingest(&cfg, patch_attached(&c.message_id).as_bytes());
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "awaiting-fix", "{v:#}");
    let t = thread_entry(&v, "p1@dastard");
    assert_eq!(t["patches"], serde_json::json!(["patch.diff"]));
    assert_eq!(t["understanding"]["intent"], "fix-posted");
    assert_eq!(
        t["understanding"]["evidence"],
        "a patch attached to the reply"
    );
}

/// Dave's HTML-only reply `id` to `parent`, as Gmail writes one: a `<div>`
/// a line, and the mail it answers under the attribution in a blockquote.
fn html_reply(id: &str, parent: &str, own: &str, quoted: &str) -> String {
    let own: String = own.split('\n').map(|l| format!("<div>{l}</div>")).collect();
    format!(
        "From: {DAVE}\r\nSubject: Re: [xfs] 0b02c8c0d7: fio.write_iops -9.0% regression\r\n\
         Message-ID: <{id}>\r\nIn-Reply-To: <{parent}>\r\nReferences: <{parent}>\r\n\
         Date: Tue, 5 Jun 2018 17:31:14 +1000\r\nMIME-Version: 1.0\r\n\
         Content-Type: text/html; charset=UTF-8\r\n\r\n\
         <div dir=\"ltr\">{own}</div><br><div class=\"gmail_quote\"><div dir=\"ltr\" \
         class=\"gmail_attr\">On Tue, Jun 5, 2018 at 3:16 PM kernel test robot &lt;lkp@intel.com&gt; \
         wrote:<br></div><blockquote class=\"gmail_quote\" style=\"margin:0px 0px 0px 0.8ex\">\
         {quoted}</blockquote></div>\r\n"
    )
}

/// An HTML-only reply is read as its writer laid it out: its lines are
/// sentences, and what it quotes is not the replier's word.
#[test]
fn an_html_only_reply_is_read_line_by_line_without_its_quote() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    // The quote holds a closure; the replier's own words only look.
    let quoting = html_reply(
        "h1@dastard",
        &c.message_id,
        "Hi,\nThanks, I will look at it this week.\nDave",
        "FYI, we noticed a -9.0% regression.<br><br>This is not a regression, please ignore it.<br>",
    );
    ingest(&cfg, quoting.as_bytes());
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "investigating", "{v:#}");
    let t = thread_entry(&v, "h1@dastard");
    // Its lines as written, its salutation left out as in plain text.
    assert_eq!(t["text"], "Thanks, I will look at it this week.\nDave");
    // A decision on a line of its own is the replier's, with that line as
    // its evidence (read as one run-on line before, it was missed).
    let deciding = html_reply(
        "h2@dastard",
        "h1@dastard",
        "This is not a regression.\nThe histogram moved\nCheers, Dave",
        "",
    );
    ingest(&cfg, deciding.as_bytes());
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "not-a-regression", "{v:#}");
    assert_eq!(
        event_to(&v, "not-a-regression")["cause"]["quote"],
        "This is not a regression."
    );
}

/// `perfbot classify` reads a mail as ingestion does (its attachments among
/// its words), plain text as the replier's words, and says so in each form.
#[test]
fn classify_reads_a_mail_or_plain_text() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let mail = patch_attached("r@x");
    let mail = mail.as_bytes();
    // (arguments, standard input, what standard output and error contain)
    let table: &[(&[&str], &[u8], &str, &str)] = &[
        (
            &["classify"],
            mail,
            "fix-posted (0.70): a patch attached to the reply\n",
            "",
        ),
        (
            &["classify", "--json"],
            mail,
            "\"rule\": \"inline-patch\"",
            "",
        ),
        (
            &["classify", "--words", "--rules-only"],
            mail,
            "fix-posted (0.70)",
            "--- own words\nSomething like the attached, entirely untested.\n",
        ),
        (
            &["classify", "--role", "author"],
            b"This is not a regression, the test is broken.",
            "not-a-regression (0.9",
            "",
        ),
        (
            &["classify"],
            b"",
            "other (0.30): (no words of its own)",
            "",
        ),
        (
            &["classify"],
            b"\x00\xff",
            "other (0.30): (no words of its own)",
            "",
        ),
    ];
    for (args, input, out, err) in table {
        let o = run(&cfg, args, Some(input));
        let (stdout, stderr) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert!(stdout.contains(out), "{args:?}: {stdout}");
        assert!(stderr.contains(err), "{args:?}: {stderr}");
    }
}

#[test]
fn a_question_escalates_to_the_operators() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    ingest(
        &cfg,
        &mail(
            "Kent <kent@bcache.example>",
            "q1@x",
            &c.message_id,
            "",
            "I'm trying to figure out how to parse this - where do I find the test?",
        ),
    );
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "needs-human");
    let esc: Vec<_> = outbox(&cfg)
        .into_iter()
        .filter(|e| e["kind"] == "escalation")
        .collect();
    assert_eq!(esc.len(), 1);
    assert_eq!(esc[0]["recipients"], serde_json::json!(["ops@ci.example"]));
    let raw = raw_of(&cfg, esc[0]["message_id"].as_str().unwrap());
    assert!(raw.contains("where do I find the test?"), "{raw}");
    assert!(
        raw.contains(&format!("https://lore.kernel.org/r/{}", c.message_id)),
        "{raw}"
    );
    assert!(raw.contains("In-Reply-To: <q1@x>"), "{raw}");
    // The signature stands apart from the instructions.
    assert!(
        raw.contains("with a #perfbot command.\r\n\r\n-- \r\n"),
        "{raw}"
    );
}

#[test]
fn untrusted_unsure_and_contradicting_decisions_go_to_a_human() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    // A stranger's decision.
    ingest(
        &cfg,
        &mail(
            "Random <random@else.example>",
            "u1@x",
            &c.message_id,
            "",
            "This is not a regression.",
        ),
    );
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "needs-human");
    let note = last_event(&v)["note"].as_str().unwrap().to_string();
    assert!(
        note.contains("other") && note.contains("free text"),
        "{note}"
    );

    // The author decides; then a maintainer contradicts.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    ingest(
        &cfg,
        &mail(
            DAVE,
            "a1@x",
            &c.message_id,
            "",
            "Not sure, so, at this moment, I'll revert this patch.",
        ),
    );
    assert_eq!(show(&cfg, &c.id)["state"], "awaiting-revert");
    ingest(
        &cfg,
        &mail(
            "maint@kernel.example",
            "a2@x",
            "a1@x",
            "",
            "This is not a regression, no need.",
        ),
    );
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "needs-human");
    let note = last_event(&v)["note"].as_str().unwrap().to_string();
    assert!(note.contains("contradicts"), "{note}");
}

/// The author awaits their own fix, then finds the commit innocent: their
/// later word overturns their earlier one (someone else's would go to a
/// human, as above).
#[test]
fn the_author_may_overturn_their_own_open_decision() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    ingest(
        &cfg,
        &mail(DAVE, "o1@x", &c.message_id, "", "Patch below, I'll send it formally once tested.\r\n\r\ndiff --git a/fs/xfs/a.c b/fs/xfs/a.c\r\n--- a/fs/xfs/a.c\r\n+++ b/fs/xfs/a.c\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n"),
    );
    assert_eq!(show(&cfg, &c.id)["state"], "awaiting-fix");
    ingest(
        &cfg,
        &mail(
            DAVE,
            "o2@x",
            "o1@x",
            "",
            "That patch changed nothing. This is not a regression, the test is contending on one file.",
        ),
    );
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "not-a-regression", "{}", v["events"]);
}

/// A stranger's patch put the case awaiting a fix; the author then finds
/// the commit innocent: a trusted sender has the last word over someone who
/// may not close the case (a second stranger would not). Where the author
/// (known by name at another address) awaited the fix, an operator's
/// contrary word is a human's to weigh. `(first, second, state)`.
#[test]
fn a_trusted_sender_overturns_a_strangers_open_decision() {
    const MALLORY: &str = "Mallory <mallory@else.example>";
    const OPS: &str = "Ops <ops@ci.example>";
    for (first, second, want) in [
        (MALLORY, DAVE, "not-a-regression"),
        (MALLORY, "Eve <eve@else.example>", "needs-human"),
        ("Dave Chinner <dchinner@kernel.example>", OPS, "needs-human"),
        (MALLORY, OPS, "not-a-regression"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = setup(tmp.path(), "");
        let c = report(&cfg);
        ingest(
            &cfg,
            &mail(
                first,
                "m1@x",
                &c.message_id,
                "",
                "I have posted a fix for this regression.",
            ),
        );
        assert_eq!(show(&cfg, &c.id)["state"], "awaiting-fix", "{first}");
        ingest(
            &cfg,
            &mail(
                second,
                "m2@x",
                "m1@x",
                "",
                "This is not a regression, the test is contending on one file.",
            ),
        );
        let v = show(&cfg, &c.id);
        assert_eq!(v["state"], want, "{first}, then {second}: {}", v["events"]);
    }
}

#[test]
fn robots_and_own_mail_never_move_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "[acks]\nenabled = true\n");
    let c = report(&cfg);
    let before = show(&cfg, &c.id)["state"].clone();
    ingest(
        &cfg,
        &mail(
            "syzbot <syzbot@syzkaller.example>",
            "b1@x",
            &c.message_id,
            "Auto-Submitted: auto-generated\r\n",
            "This is not a regression.",
        ),
    );
    ingest(
        &cfg,
        &mail(
            "kernel test robot <perfbot@ci.example>",
            "o1@perfbot.ci.example",
            &c.message_id,
            "",
            "#perfbot invalid",
        ),
    );
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], before);
    assert_eq!(
        v["thread"].as_array().unwrap().len(),
        3,
        "both recorded in the thread"
    );
    assert_eq!(
        outbox(&cfg).len(),
        1,
        "only the report: no ack, no answer to a robot"
    );
}

#[test]
fn commands_good_and_bad() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    ingest(
        &cfg,
        &mail(
            "maint@kernel.example",
            "c1@x",
            &c.message_id,
            "",
            "#perfbot frobnicate",
        ),
    );
    let errs: Vec<_> = outbox(&cfg)
        .into_iter()
        .filter(|e| e["kind"] == "command-error")
        .collect();
    assert_eq!(errs.len(), 1);
    assert_eq!(
        errs[0]["recipients"],
        serde_json::json!(["maint@kernel.example"])
    );
    let raw = raw_of(&cfg, errs[0]["message_id"].as_str().unwrap());
    assert!(
        raw.contains("unknown command") && raw.contains("In-Reply-To: <c1@x>"),
        "{raw}"
    );
    // A stranger's command is refused, and not answered (no backscatter).
    ingest(
        &cfg,
        &mail(
            "x@else.example",
            "c2@x",
            &c.message_id,
            "",
            "#perfbot invalid",
        ),
    );
    assert_ne!(show(&cfg, &c.id)["state"], "not-a-regression");
    // A maintainer's command is obeyed.
    ingest(
        &cfg,
        &mail(
            "maint@kernel.example",
            "c3@x",
            &c.message_id,
            "",
            "#perfbot wontfix\r\n\r\nWe accept this.",
        ),
    );
    assert_eq!(show(&cfg, &c.id)["state"], "wont-fix");
    ingest(
        &cfg,
        &mail(
            "maint@kernel.example",
            "c4@x",
            &c.message_id,
            "",
            "#perfbot reopen",
        ),
    );
    assert_eq!(show(&cfg, &c.id)["state"], "reopened");
}

#[test]
fn reverts_and_closing_trailers_on_the_list() {
    // A revert posted as a new thread.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    let revert = b"From: Dave Chinner <dchinner@xfs.example>\r\nSubject: [PATCH] Revert \"xfs: set prealloc flag in xfs_alloc_file_space()\"\r\nMessage-ID: <rev@x>\r\n\r\nThis reverts commit 0b02c8c0d75a738c98c35f02efb36217c170d78c.\r\n\r\nIt regressed fio.\r\n";
    ingest(&cfg, revert);
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "reverted");
    assert_eq!(last_event(&v)["cause"]["message_id"], "rev@x");

    // A fix that closes the report, then "applied" in its thread.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    let fix = format!(
        "From: Someone <someone@kernel.example>\r\nSubject: [PATCH] xfs: restore the fast path\r\nMessage-ID: <fix@x>\r\n\r\nThe prealloc flag made us slow.\r\n\r\nFixes: 0b02c8c0d75a (\"xfs: set prealloc flag in xfs_alloc_file_space()\")\r\nReported-by: kernel test robot <perfbot@ci.example>\r\nCloses: https://lore.kernel.org/oe-lkp/{}\r\nSigned-off-by: Someone <someone@kernel.example>\r\n",
        c.message_id
    );
    ingest(&cfg, fix.as_bytes());
    assert_eq!(show(&cfg, &c.id)["state"], "awaiting-fix");
    ingest(
        &cfg,
        &mail(
            "maint@kernel.example",
            "ap@x",
            "fix@x",
            "",
            "Applied to for-next, thanks!",
        ),
    );
    assert_eq!(show(&cfg, &c.id)["state"], "fixed");
}

#[test]
fn reminders_ping_in_thread_at_most_max_times() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(
        tmp.path(),
        "[reminders]\nenabled = true\nno_reply_days = 0\nmax_pings = 2\n",
    );
    let c = report(&cfg);
    let o = run(&cfg, &["remind", "--dry-run"], None);
    assert!(String::from_utf8_lossy(&o.stderr).contains("reminder 1 of 2"));
    assert!(
        outbox(&cfg).iter().all(|e| e["kind"] != "reminder"),
        "dry run queues nothing"
    );
    let pings = || -> Vec<_> {
        outbox(&cfg)
            .into_iter()
            .filter(|e| e["kind"] == "reminder")
            .collect()
    };
    run(&cfg, &["remind"], None);
    run(&cfg, &["remind"], None);
    assert_eq!(
        pings().len(),
        1,
        "the next ping waits for the first to leave"
    );
    for _ in 0..3 {
        run(&cfg, &["send"], None);
        std::thread::sleep(std::time::Duration::from_millis(20));
        run(&cfg, &["remind"], None);
    }
    let pings = pings();
    assert_eq!(pings.len(), 2, "at most max_pings");
    let raw = raw_of(&cfg, pings[0]["message_id"].as_str().unwrap());
    assert!(
        raw.contains(&format!("In-Reply-To: <{}>", c.message_id)),
        "{raw}"
    );
    assert!(raw.contains("Subject: Re: "), "{raw}");
    assert!(raw.contains("Auto-Submitted: auto-replied"), "{raw}");
    // The template's data: the report's date, the place in the series.
    let created = show(&cfg, &c.id)["created"].as_str().unwrap()[..10].to_string();
    assert!(
        raw.contains(&format!(
            "about this report from {created}: we have not seen"
        )),
        "{raw}"
    );
    // …above the signature, whose separator mail readers know ("-- ").
    assert!(raw.contains("(reminder 1 of 2)\r\n\r\n-- \r\n"), "{raw}");
    // A reply stops the pings.
    ingest(
        &cfg,
        &mail(DAVE, "busy@x", &c.message_id, "", "Looking into it."),
    );
    assert_eq!(show(&cfg, &c.id)["state"], "investigating");
}

/// Standard base64, for the test's DKIM public key record.
fn b64(data: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(data)
}

#[test]
fn a_failed_dkim_signature_lowers_trust() {
    use mail_auth::common::crypto::Ed25519Key;
    use mail_auth::common::headers::HeaderWriter;
    use mail_auth::dkim::DkimSigner;

    let pkcs8 = Ed25519Key::generate_pkcs8().unwrap();
    let key = Ed25519Key::from_pkcs8_der(&pkcs8).unwrap();
    let public = b64(&key.public_key());
    let sign_headers = |raw: &[u8], headers: &[&str]| -> Vec<u8> {
        let k = Ed25519Key::from_pkcs8_der(&pkcs8).unwrap();
        let sig = DkimSigner::from_key(k)
            .domain("xfs.example")
            .selector("sel")
            .headers(headers.iter().copied())
            .sign(raw)
            .unwrap();
        let mut out = sig.to_header().into_bytes();
        out.extend_from_slice(raw);
        out
    };
    let sign = |raw: &[u8]| -> Vec<u8> {
        sign_headers(
            raw,
            &["From", "Subject", "Message-ID", "In-Reply-To", "References"],
        )
    };
    // The default [trust] table of setup() is replaced by one with DKIM on.
    let make = |dir: &Path| -> PathBuf {
        let cfg = setup(dir, "");
        let text = std::fs::read_to_string(&cfg).unwrap().replace(
            "[trust]\noperators = [\"ops@ci.example\"]\nmaintainers = [\"maint@kernel.example\"]\n",
            "",
        );
        std::fs::write(
            &cfg,
            format!(
                "{text}\n[trust]\ndkim = true\noperators = [\"ops@ci.example\"]\n[trust.dkim_keys]\n\"sel._domainkey.xfs.example\" = \"v=DKIM1; k=ed25519; p={public}\"\n"
            ),
        )
        .unwrap();
        cfg
    };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = make(tmp.path());

    // Signed by the author's domain, intact: the author decides.
    let c = report(&cfg);
    ingest(
        &cfg,
        &sign(&mail(
            DAVE,
            "good@x",
            &c.message_id,
            "",
            "This is not a regression.",
        )),
    );
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "not-a-regression");
    let t = thread_entry(&v, "good@x");
    assert!(
        t["understanding"]["dkim"]
            .as_str()
            .unwrap()
            .starts_with("pass"),
        "{t}"
    );

    // Signed, then altered on the way: the same words decide nothing.
    let tmp = tempfile::tempdir().unwrap();
    let cfg2 = make(tmp.path());
    let c = report(&cfg2);
    let mut forged = sign(&mail(
        DAVE,
        "forged@x",
        &c.message_id,
        "",
        "I am looking into it.",
    ));
    let at = forged
        .windows(12)
        .position(|w| w == b"I am looking")
        .unwrap();
    let old = "I am looking into it.".len();
    forged.splice(at..at + old, b"This is not a regression.".iter().copied());
    ingest(&cfg2, &forged);
    let v = show(&cfg2, &c.id);
    assert_eq!(v["state"], "needs-human", "{}", v["events"]);
    let t = thread_entry(&v, "forged@x");
    assert!(
        t["understanding"]["dkim"]
            .as_str()
            .unwrap()
            .starts_with("fail"),
        "{t}"
    );
    assert_eq!(t["understanding"]["role"], "other");
    // Anyone's words may await a fix, but not a forged author's.
    let tmp = tempfile::tempdir().unwrap();
    let cfg2 = make(tmp.path());
    let c = report(&cfg2);
    let mut forged = sign(&mail(DAVE, "forged2@x", &c.message_id, "", "Thanks."));
    let at = forged.windows(7).position(|w| w == b"Thanks.").unwrap();
    forged.splice(
        at..at + 7,
        b"I have posted a fix for this regression.".iter().copied(),
    );
    ingest(&cfg2, &forged);
    let v = show(&cfg2, &c.id);
    assert_eq!(v["state"], "needs-human", "{}", v["events"]);
    assert!(
        v["events"].to_string().contains("DKIM signature fails"),
        "{}",
        v["events"]
    );

    // Signed by another domain (a valid signature, d=attacker.test), From the
    // author: the signature says nothing about the author, so the decision
    // waits for a human.
    let attacker = Ed25519Key::generate_pkcs8().unwrap();
    let attacker_public = b64(&Ed25519Key::from_pkcs8_der(&attacker).unwrap().public_key());
    let tmp = tempfile::tempdir().unwrap();
    let cfg3 = make(tmp.path());
    let text = std::fs::read_to_string(&cfg3).unwrap();
    std::fs::write(
        &cfg3,
        format!("{text}\"sel._domainkey.attacker.test\" = \"v=DKIM1; k=ed25519; p={attacker_public}\"\n"),
    )
    .unwrap();
    let c = report(&cfg3);
    let raw = mail(
        DAVE,
        "unaligned@x",
        &c.message_id,
        "",
        "This is not a regression.",
    );
    let sig = DkimSigner::from_key(Ed25519Key::from_pkcs8_der(&attacker).unwrap())
        .domain("attacker.test")
        .selector("sel")
        .headers(["From", "Subject", "Message-ID", "In-Reply-To"])
        .sign(&raw)
        .unwrap();
    let mut signed = sig.to_header().into_bytes();
    signed.extend_from_slice(&raw);
    let t = to_a_human(&cfg3, &c.id, &signed, "unaligned@x");
    let dkim = t["understanding"]["dkim"].as_str().unwrap();
    assert!(
        dkim.contains("attacker.test") && dkim.contains("unverified"),
        "{t}"
    );
    assert!(
        t["understanding"]["effect"]
            .as_str()
            .unwrap()
            .contains("unverified sender"),
        "{t}"
    );

    // Signed by the author's domain, but not its References: the words
    // are Dave's, the thread they answer is not proven (the reply could be
    // replayed into another case's thread), so a human decides.
    let tmp = tempfile::tempdir().unwrap();
    let cfg6 = make(tmp.path());
    let c = report(&cfg6);
    let raw = sign_headers(
        &mail(
            DAVE,
            "uncovered@x",
            &c.message_id,
            "",
            "This is not a regression.",
        ),
        &["From", "Subject", "Message-ID", "In-Reply-To"],
    );
    let t = to_a_human(&cfg6, &c.id, &raw, "uncovered@x");
    let dkim = t["understanding"]["dkim"].as_str().unwrap();
    assert!(dkim.contains("References not signed"), "{t}");

    // The author's valid signature among more than perfbot verifies (each
    // could cost a key lookup): none is verified, so a human decides.
    let tmp = tempfile::tempdir().unwrap();
    let cfg7 = make(tmp.path());
    let c = report(&cfg7);
    let mut many = Vec::new();
    for i in 0..10 {
        many.extend_from_slice(
            format!("DKIM-Signature: v=1; a=ed25519-sha256; d=d{i}.example; s=sel; h=From; bh=AAAA; b=AAAA\r\n")
                .as_bytes(),
        );
    }
    many.extend_from_slice(&sign(&mail(
        DAVE,
        "many@x",
        &c.message_id,
        "",
        "This is not a regression.",
    )));
    let t = to_a_human(&cfg7, &c.id, &many, "many@x");
    let dkim = t["understanding"]["dkim"].as_str().unwrap();
    assert!(
        dkim.starts_with("fail") && dkim.contains("11 DKIM signatures"),
        "{t}"
    );

    // Not signed at all, with DKIM checking on: a human decides too.
    let tmp = tempfile::tempdir().unwrap();
    let cfg4 = make(tmp.path());
    let c = report(&cfg4);
    ingest(
        &cfg4,
        &mail(
            DAVE,
            "unsigned@x",
            &c.message_id,
            "",
            "This is not a regression.",
        ),
    );
    assert_eq!(show(&cfg4, &c.id)["state"], "needs-human");

    // An operator who accepts unsigned mail says so: then only failures count.
    let tmp = tempfile::tempdir().unwrap();
    let cfg5 = make(tmp.path());
    let text = std::fs::read_to_string(&cfg5)
        .unwrap()
        .replace("dkim = true\n", "dkim = true\nrequire_dkim = false\n");
    std::fs::write(&cfg5, text).unwrap();
    let c = report(&cfg5);
    ingest(
        &cfg5,
        &mail(
            DAVE,
            "unsigned2@x",
            &c.message_id,
            "",
            "This is not a regression.",
        ),
    );
    assert_eq!(show(&cfg5, &c.id)["state"], "not-a-regression");
}

/// Ingest `raw`, which must send `case` to a human; its thread entry.
fn to_a_human(cfg: &Path, case: &str, raw: &[u8], message_id: &str) -> serde_json::Value {
    ingest(cfg, raw);
    let v = show(cfg, case);
    assert_eq!(v["state"], "needs-human", "{}", v["events"]);
    thread_entry(&v, message_id)
}

/// The case's last event.
fn last_event(v: &serde_json::Value) -> serde_json::Value {
    v["events"].as_array().unwrap().last().unwrap().clone()
}

/// The entry of the case's thread for the mail `id`.
fn thread_entry(v: &serde_json::Value, id: &str) -> serde_json::Value {
    v["thread"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["message_id"] == id)
        .unwrap_or_else(|| panic!("{id} not in the thread"))
        .clone()
}

#[test]
fn one_answer_per_mail_a_cap_per_sender_and_none_to_strangers() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    let errors = |cfg: &Path| {
        outbox(cfg)
            .into_iter()
            .filter(|e| e["kind"] == "command-error")
            .collect::<Vec<_>>()
    };
    // 500 bad lines in one mail: one answer, listing a few and counting the rest.
    let flood: String = (0..500).map(|i| format!("#perfbot bogus{i}\r\n")).collect();
    ingest(
        &cfg,
        &mail("maint@kernel.example", "flood@x", &c.message_id, "", &flood),
    );
    let e = errors(&cfg);
    assert_eq!(e.len(), 1, "{e:?}");
    let raw = raw_of(&cfg, e[0]["message_id"].as_str().unwrap());
    assert!(raw.contains("bogus0") && raw.contains("490 more"), "{raw}");
    // More bad mails from the same sender within the hour: at most the cap (3).
    for i in 0..5 {
        ingest(
            &cfg,
            &mail(
                "maint@kernel.example",
                &format!("more{i}@x"),
                &c.message_id,
                "",
                "#perfbot nonsense",
            ),
        );
    }
    assert_eq!(errors(&cfg).len(), 3);
    // The case's history says why the others were not answered.
    let v = show(&cfg, &c.id);
    let t = thread_entry(&v, "more4@x");
    assert!(
        t["understanding"]["notes"][0]
            .as_str()
            .unwrap()
            .contains("not answered"),
        "{t}"
    );
    // Anyone else's bad commands are never answered: they may not command.
    for i in 0..3 {
        ingest(
            &cfg,
            &mail(
                &format!("x{i}@else.example"),
                &format!("s{i}@x"),
                &c.message_id,
                "",
                "#perfbot nonsense",
            ),
        );
    }
    assert_eq!(errors(&cfg).len(), 3);
}

#[test]
fn echoes_of_perfbots_own_mail_are_never_answered() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    ingest(
        &cfg,
        &mail(
            "maint@kernel.example",
            "bad@x",
            &c.message_id,
            "",
            "#perfbot fixed",
        ),
    );
    let first: Vec<_> = outbox(&cfg)
        .into_iter()
        .filter(|e| e["kind"] == "command-error")
        .collect();
    assert_eq!(first.len(), 1);
    let answer_id = first[0]["message_id"].as_str().unwrap().to_string();
    let answer = raw_of(&cfg, &answer_id);
    let body = answer
        .split("\r\n\r\n")
        .skip(1)
        .collect::<Vec<_>>()
        .join("\r\n\r\n");
    // An autoresponder without auto-reply headers sends it straight back,
    // unquoted, as if the maintainer wrote it.
    let echo = format!(
        "From: maint@kernel.example\r\nSubject: Re: x\r\nMessage-ID: <echo1@x>\r\nIn-Reply-To: <{answer_id}>\r\nReferences: <{}> <{answer_id}>\r\n\r\n{body}",
        c.message_id
    );
    let state_before = show(&cfg, &c.id)["state"].clone();
    ingest(&cfg, echo.as_bytes());
    // And a mail that carries perfbot's error text as its own words.
    ingest(
        &cfg,
        &mail(
            "maint@kernel.example",
            "echo2@x",
            &c.message_id,
            "",
            "perfbot could not follow this command:\r\n#perfbot fixed: which commit?",
        ),
    );
    let n = outbox(&cfg)
        .into_iter()
        .filter(|e| e["kind"] == "command-error")
        .count();
    assert_eq!(n, 1, "an echo was answered: a mail loop");
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], state_before);
    assert!(
        thread_entry(&v, "echo1@x")["understanding"]["effect"]
            .as_str()
            .unwrap()
            .contains("not acted on"),
        "{v}"
    );
    // The maintainer's own words in answer to it are still read.
    ingest(
        &cfg,
        &mail(
            "maint@kernel.example",
            "human@x",
            &answer_id,
            "",
            "Sorry, my mistake.\r\n#perfbot fixed 0123abcd",
        ),
    );
    assert_eq!(show(&cfg, &c.id)["state"], "fixed");
}

#[test]
fn a_decision_in_a_reply_read_only_in_part_goes_to_a_human() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "[inbound]\nmax_message_bytes = 20000\n");
    let c = report(&cfg);
    // The author's words, then a big attachment: over the limit (62 KB),
    // and under 4 times it (past that, it is not read at all).
    let attachment =
        "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB\r\n".repeat(1000);
    let raw = format!(
        "From: {DAVE}\r\nSubject: Re: x\r\nMessage-ID: <big@x>\r\nIn-Reply-To: <{}>\r\n\
         Content-Type: multipart/mixed; boundary=zz\r\n\r\n--zz\r\nContent-Type: text/plain\r\n\r\n\
         This is not a regression.\r\n--zz\r\nContent-Type: application/octet-stream\r\n\
         Content-Transfer-Encoding: base64\r\n\r\n{attachment}--zz--\r\n",
        c.message_id
    );
    ingest(&cfg, raw.as_bytes());
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "needs-human", "{}", v["events"]);
    let t = thread_entry(&v, "big@x");
    assert!(
        t["limited"].as_str().unwrap().contains("only the first"),
        "{t}"
    );
    let note = t["understanding"]["effect"].as_str().unwrap();
    assert!(
        note.contains("in part") && note.contains("This is not a regression"),
        "{note}"
    );
    // The operators are told.
    assert!(outbox(&cfg).iter().any(|e| e["kind"] == "escalation"));
}

/// Own words past what ingestion keeps of a body (`inbound.max_text_bytes`):
/// the end of the reply is kept, so a decision written under pages of pasted
/// data is not lost; past what the reader reads, it goes to a human.
#[test]
fn a_decision_under_pages_of_pasted_data_is_not_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    let rows =
        "      12345 +-  2%     +10.3%      13617 +-  1%  perf-stat.ps.cycles\r\n".repeat(1500);
    let body = format!("Here are my own runs.\r\n\r\n{rows}\r\nI'll revert this patch.\r\n");
    ingest(&cfg, &mail(DAVE, "data@x", &c.message_id, "", &body));
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "needs-human", "{}", v["events"]);
    let t = thread_entry(&v, "data@x");
    assert!(
        t["limited"].as_str().unwrap().contains("middle not kept"),
        "{t}"
    );
    let note = t["understanding"]["effect"].as_str().unwrap();
    assert!(note.contains("longer than perfbot reads"), "{note}");
}

#[test]
fn digest_in_three_formats_and_mailed_to_the_operators() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    ingest(
        &cfg,
        &mail(DAVE, "d1@x", &c.message_id, "", "This is not a regression."),
    );
    let text = String::from_utf8(run(&cfg, &["digest"], None).stdout).unwrap();
    assert!(text.contains("== Closed recently (1)"), "{text}");
    // One case is one case; counts are listed, not ended, with separators.
    assert!(
        text.contains("\n1 case: not-a-regression 1\nOpen by subsystem: none\n"),
        "{text}"
    );
    assert!(
        text.contains("by Dave Chinner <dchinner@xfs.example>: \"This is not a regression.\""),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&run(&cfg, &["digest", "--format", "json"], None).stdout).unwrap();
    assert_eq!(json["recently_closed"][0]["case"]["id"], c.id.as_str());
    let html = String::from_utf8(run(&cfg, &["digest", "--format", "html"], None).stdout).unwrap();
    assert!(html.contains(">1 case: <span>"), "{html}");
    assert!(
        html.contains("<q class=\"evidence\">This is not a regression.</q>"),
        "{html}"
    );
    run(&cfg, &["digest", "--send"], None);
    let d: Vec<_> = outbox(&cfg)
        .into_iter()
        .filter(|e| e["kind"] == "digest")
        .collect();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["recipients"], serde_json::json!(["ops@ci.example"]));
    let raw = raw_of(&cfg, d[0]["message_id"].as_str().unwrap());
    assert!(
        raw.contains("Subject: [perfbot] digest") && raw.contains("This is not a regression."),
        "{raw}"
    );
    // It is sent like any mail (standard output transport here).
    run(&cfg, &["send"], None);
    let d: Vec<_> = outbox(&cfg)
        .into_iter()
        .filter(|e| e["kind"] == "digest")
        .collect();
    assert_eq!(d[0]["state"], "sent");
}

/// 120 strangers ask the robot something on one case's thread: the
/// operators get one escalation mail for the case, the others are recorded
/// (the case waits on a human, the digest lists it). With one mail per need
/// (`per_case_hours = 0`), the follow-ups use only their share of the rate
/// limit: a new report still goes out at once.
#[test]
fn many_strangers_make_one_escalation_and_reports_keep_their_budget() {
    let mbox = |c: &Case| -> Vec<u8> {
        (0..120)
            .flat_map(|i| {
                let mut m = b"From x@y Thu Jan  1 00:00:00 2026\n".to_vec();
                m.extend(mail(
                    &format!("Someone {i} <s{i}@strangers.example>"),
                    &format!("stranger{i}@x"),
                    &c.message_id,
                    "",
                    "Where do I find the test and how do I run it?",
                ));
                m.push(b'\n');
                m
            })
            .collect()
    };
    let escalations = |cfg: &Path| {
        outbox(cfg)
            .into_iter()
            .filter(|e| e["kind"] == "escalation")
            .count()
    };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    let file = tmp.path().join("strangers.mbox");
    std::fs::write(&file, mbox(&c)).unwrap();
    run(&cfg, &["ingest", "--mbox", file.to_str().unwrap()], None);
    assert_eq!(escalations(&cfg), 1);
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "needs-human");
    let t = thread_entry(&v, "stranger119@x");
    assert!(
        t["understanding"]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("no second mail")),
        "{t}"
    );

    // Every need mailed: the follow-ups wait for their share, the report
    // does not wait for them.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "[escalation]\nper_case_hours = 0\n");
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "transport = \"stdout\"",
        "transport = \"stdout\"\nmax_per_hour = 5\nfollowups_per_hour = 2",
    );
    std::fs::write(&cfg, text).unwrap();
    let c = report(&cfg);
    std::fs::write(&file, mbox(&c)).unwrap();
    run(&cfg, &["ingest", "--mbox", file.to_str().unwrap()], None);
    assert_eq!(escalations(&cfg), 120);
    run(
        &cfg,
        &["report", "examples/seed004-f2fs-aim7-improvement.json"],
        None,
    );
    let o = run(&cfg, &["send"], None);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(err.contains("follow-up rate limit"), "{err}");
    let sent = |kind: &str| {
        outbox(&cfg)
            .into_iter()
            .filter(|e| e["kind"] == kind && e["state"] == "sent")
            .count()
    };
    assert_eq!(sent("report"), 2, "{err}");
    assert_eq!(sent("escalation"), 2, "{err}");
}

/// `#perfbot dup` naming no case, or the case itself: refused with one
/// answer, and the case is not closed as a duplicate.
#[test]
fn a_dup_of_no_case_or_of_itself_closes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    let before = show(&cfg, &c.id)["state"].clone();
    for (n, target) in ["0123456789ab".to_string(), c.id.clone()]
        .iter()
        .enumerate()
    {
        ingest(
            &cfg,
            &mail(
                "maint@kernel.example",
                &format!("dup{n}@x"),
                &c.message_id,
                "",
                &format!("#perfbot dup {target}"),
            ),
        );
        let v = show(&cfg, &c.id);
        assert_eq!(v["state"], before, "dup {target}: {v}");
    }
    let errs: Vec<_> = outbox(&cfg)
        .into_iter()
        .filter(|e| e["kind"] == "command-error")
        .collect();
    assert_eq!(errs.len(), 2, "{errs:?}");
}

/// An operator settles a case: the reply that led there becomes a labelled
/// example beside what perfbot had read, the digest says how often perfbot
/// agreed with its humans, and the examples export in the corpus' layout
/// that `eval-replies` and `train-intents` read.
#[test]
fn operators_settling_cases_teach_the_reader() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    ingest(
        &cfg,
        &mail(
            DAVE,
            "teach1@x",
            &c.message_id,
            "",
            "Meh. Compilers do that. I wouldn't lose sleep over this one.",
        ),
    );
    // Thanks after the decision: the thread's last reply, not the one the
    // decision rests on.
    ingest(
        &cfg,
        &mail(
            "Someone Else <se@example.org>",
            "teach2@x",
            "teach1@x",
            "",
            "Thanks for looking, Dave.",
        ),
    );
    // What a command said on stderr, and the labels as JSON.
    let said = |args: &[&str]| String::from_utf8_lossy(&run(&cfg, args, None).stderr).to_string();
    let labels = || -> serde_json::Value {
        serde_json::from_slice(&run(&cfg, &["labels", "list", "--json"], None).stdout).unwrap()
    };
    // Bad input: exit 2, saying what is wrong, nothing set.
    let set = ["cases", "set", &c.id, "not-a-regression", "--reason", "x"];
    for (args, says) in [
        (
            [&set[..], &["--reply", "<nowhere@x>"]].concat(),
            "<nowhere@x> is not a person's reply",
        ),
        (
            vec!["labels", "set", "nowhere@x", "other", "--reason", "x"],
            "<nowhere@x> is in no case's thread",
        ),
        (
            vec!["labels", "set", "teach2@x", "maybe", "--reason", "x"],
            "unknown intent \"maybe\"",
        ),
        (
            vec!["labels", "drop", "nowhere@x"],
            "no label for <nowhere@x>",
        ),
    ] {
        let o = perfbot_stdin(&cfg, &args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_ne!(show(&cfg, &c.id)["state"], "not-a-regression");
    assert_eq!(labels(), serde_json::json!([]));

    let err = said(&[
        "cases",
        "set",
        &c.id,
        "not-a-regression",
        "--reason",
        "Dave says it is compiler noise",
    ]);
    assert!(
        err.contains("learned: <teach1@x> is not-a-regression (the reply read closest to it"),
        "{err}"
    );
    let l = labels();
    assert_eq!(l.as_array().unwrap().len(), 1);
    assert_eq!(l[0]["label"], "not-a-regression");
    assert_eq!(l[0]["case_id"], c.id.as_str());
    assert!(l[0]["text"].as_str().unwrap().contains("lose sleep"));
    assert_eq!(l[0]["chosen"], "strongest");
    let agreed = usize::from(l[0]["perfbot"] == "not-a-regression");
    // As text: the label, whether perfbot read the same, who and why.
    let o = run(&cfg, &["labels", "list"], None);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let mark = if agreed == 1 { "=" } else { "≠" };
    assert!(
        text.contains(&format!(
            "  case {}  not-a-regression {mark} perfbot {}  <teach1@x>  by ",
            c.id,
            l[0]["perfbot"].as_str().unwrap_or("-")
        )) && text
            .trim_end()
            .ends_with(": Dave says it is compiler noise"),
        "{text}"
    );
    let o = run(&cfg, &["digest", "--format", "json"], None);
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(d["settled_by_humans"], 1);
    assert_eq!(d["agreed_with_humans"], agreed);
    let o = run(&cfg, &["digest"], None);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        text.contains(&format!(
            "Of 1 reply operators labelled, perfbot had read {agreed}"
        )),
        "{text}"
    );
    // Exported, they are a corpus the reader's own tools take.
    let dir = tmp.path().join("learned");
    run(&cfg, &["labels", "export", dir.to_str().unwrap()], None);
    let labels_file = dir.join("labels.jsonl");
    let o = run(
        &cfg,
        &["eval-replies", "--json", labels_file.to_str().unwrap()],
        None,
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("teach1@x"));
    let model = tmp.path().join("intents.model");
    run(
        &cfg,
        &[
            "train-intents",
            root()
                .join("tests/fixtures/replies/dev/labels.jsonl")
                .to_str()
                .unwrap(),
            labels_file.to_str().unwrap(),
            "--out",
            model.to_str().unwrap(),
        ],
        None,
    );
    assert!(std::fs::metadata(&model).unwrap().len() > 0);

    // Named, another reply is labelled, as the operator said.
    let err = said(&[
        "cases",
        "set",
        &c.id,
        "investigating",
        "--reason",
        "Dave is looking again",
        "--reply",
        "teach2@x",
    ]);
    assert!(
        err.contains("learned: <teach2@x> is investigating (the reply named"),
        "{err}"
    );
    let l = labels();
    assert_eq!(l[1]["message_id"], "teach2@x");
    assert_eq!(l[1]["chosen"], "named");
    // One reply labelled directly, any intent, the case left where it is.
    let err = said(&[
        "labels",
        "set",
        "<teach2@x>",
        "thanks-only",
        "--reason",
        "only thanks",
    ]);
    assert!(err.contains("learned: <teach2@x> is thanks-only"), "{err}");
    assert_eq!(show(&cfg, &c.id)["state"], "investigating");
    let l = labels();
    assert_eq!(l.as_array().unwrap().len(), 2, "{l}");
    assert_eq!(
        (&l[1]["label"], &l[1]["state"]),
        (&"thanks-only".into(), &"".into())
    );
    run(&cfg, &["labels", "drop", "teach2@x"], None);
    let l = labels();
    assert_eq!(l.as_array().unwrap().len(), 1, "{l}");
    assert_eq!(l[0]["message_id"], "teach1@x");
}

/// `#perfbot ignore <metric|testcase>`: from someone who may command, the
/// case is settled as won't fix and a later report the rule covers (the same
/// metric, in the case's subsystem here: the report is on a tree, not a
/// patch) is recorded with that decision and its mail held with the rule;
/// `ignores drop` undoes it. A stranger's is recorded, not obeyed, and not
/// answered; one naming a scope the case lacks is answered once.
#[test]
fn ignore_is_obeyed_from_the_trusted_and_covers_later_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    let line = "#perfbot ignore fio.write_iops";
    ingest(
        &cfg,
        &mail("Eve <eve@else.example>", "ig1@x", &c.message_id, "", line),
    );
    let rules = || -> Vec<serde_json::Value> {
        let o = run(&cfg, &["ignores", "list", "--json"], None);
        serde_json::from_slice::<serde_json::Value>(&o.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    };
    assert!(rules().is_empty(), "a stranger's rule is not kept");
    let o = run(&cfg, &["ignores", "list"], None);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "no #perfbot ignore rule\n"
    );
    let answered = |to: &str| {
        outbox(&cfg)
            .iter()
            .filter(|e| e["kind"] == "command-error" || e["kind"] == "ack")
            .filter(|e| e["recipients"].to_string().contains(to))
            .count()
    };
    assert_eq!(answered("eve@else.example"), 0);
    let v = show(&cfg, &c.id);
    assert_ne!(v["state"], "wont-fix", "{v}");
    assert!(v.to_string().contains("neither obeyed nor answered"), "{v}");

    // A scope the case does not have: answered once, nothing kept.
    let bad = "#perfbot ignore fio.write_iops series";
    ingest(
        &cfg,
        &mail("maint@kernel.example", "ig2@x", &c.message_id, "", bad),
    );
    assert_eq!(answered("maint@kernel.example"), 1);
    assert!(rules().is_empty());

    run(
        &cfg,
        &["cases", "set", &c.id, "reported", "--reason", "test"],
        None,
    );
    ingest(
        &cfg,
        &mail("maint@kernel.example", "ig3@x", &c.message_id, "", line),
    );
    assert_eq!(show(&cfg, &c.id)["state"], "wont-fix");
    let r = rules();
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0]["what"], "fio.write_iops");
    assert_eq!(
        r[0]["scope"],
        serde_json::json!({"kind": "subsystem", "name": "xfs"})
    );
    assert_eq!(r[0]["message_id"], "ig3@x");
    let o = run(&cfg, &["ignores", "list"], None);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!("case {}", c.id))
            && text.contains("fio.write_iops")
            && text.contains("xfs")
            && text.contains("maint@kernel.example"),
        "{text}"
    );

    // A later xfs commit with the same headline: recorded, not mailed.
    let later = |name: &str, n: u32| {
        let text =
            std::fs::read_to_string(root().join("examples/seed002-xfs-fio-falloc-2022.json"))
                .unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["commit"]["sha"] = format!("{:040x}", 0xabc0_0000u64 + u64::from(n)).into();
        let p = tmp.path().join(name);
        std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
        p
    };
    let sent_reports = || {
        outbox(&cfg)
            .iter()
            .filter(|e| e["kind"] == "report" && e["state"] != "held")
            .count()
    };
    let before = sent_reports();
    let o = run(
        &cfg,
        &["report", later("l1.json", 1).to_str().unwrap()],
        None,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("ignored: #perfbot ignore fio.write_iops"),
        "{err}"
    );
    assert_eq!(sent_reports(), before, "held, not queued");
    let o = run(&cfg, &["cases", "list", "--json"], None);
    let cases: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        cases
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k["state"] == "wont-fix")
            .count(),
        2,
        "{cases}"
    );
    // Undone: the held report is pointed out, and the next one is reported.
    let o = run(&cfg, &["ignores", "drop", "<ig3@x>"], None);
    let err = String::from_utf8_lossy(&o.stderr);
    let held: Vec<serde_json::Value> = outbox(&cfg)
        .into_iter()
        .filter(|e| e["state"] == "held")
        .collect();
    assert_eq!(held.len(), 1, "{held:?}");
    let held_id = held[0]["message_id"].as_str().unwrap().to_string();
    assert!(
        err.contains("stays wont-fix") && err.contains(&format!("outbox approve {held_id}")),
        "{err}"
    );
    assert!(rules().is_empty());
    let o = run(
        &cfg,
        &["report", later("l2.json", 2).to_str().unwrap()],
        None,
    );
    assert!(!String::from_utf8_lossy(&o.stderr).contains("ignored"));
    assert_eq!(sent_reports(), before + 1);

    // Sending the held one anyway sets the carried decision aside: once
    // sent, its case is followed as reported.
    let held_case = held[0]["case_id"].as_str().unwrap().to_string();
    run(&cfg, &["outbox", "approve", &held_id], None);
    assert_eq!(show(&cfg, &held_case)["state"], "queued");
    run(&cfg, &["send"], None);
    assert_eq!(show(&cfg, &held_case)["state"], "reported");
}

/// Someone who posted a patch in the thread speaks for it: their "I have
/// posted a fix" moves the case to awaiting a fix (a state that closes
/// nothing), as the author's would; their "not a regression" still closes
/// nothing without a human. Where strangers' words may not move a case
/// (`open_moves_by_anyone = false`), one who posted no patch moves nothing.
#[test]
fn a_patch_poster_in_the_thread_may_make_open_moves_only() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "open_moves_by_anyone = false");
    let c = report(&cfg);
    const EVE: &str = "Eve Hacker <eve@else.example>";
    const MALLORY: &str = "Mallory <mallory@else.example>";
    // A stranger's promise: a human decides.
    ingest(
        &cfg,
        &mail(
            MALLORY,
            "m1@x",
            &c.message_id,
            "",
            "I have posted a fix for this regression.",
        ),
    );
    assert_eq!(show(&cfg, &c.id)["state"], "needs-human");
    run(
        &cfg,
        &["cases", "set", &c.id, "reported", "--reason", "test"],
        None,
    );
    // Eve posts a test patch in the thread.
    ingest(
        &cfg,
        &mail(
            EVE,
            "e1@x",
            &c.message_id,
            "",
            "Could you try this?\r\n\r\ndiff --git a/fs/xfs/xfs_file.c b/fs/xfs/xfs_file.c\r\n--- a/fs/xfs/xfs_file.c\r\n+++ b/fs/xfs/xfs_file.c\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n",
        ),
    );
    let v = show(&cfg, &c.id);
    assert!(
        v["thread"].to_string().contains("\"role\":\"contributor\""),
        "{}",
        v["thread"]
    );
    run(
        &cfg,
        &["cases", "set", &c.id, "reported", "--reason", "test"],
        None,
    );
    ingest(
        &cfg,
        &mail(
            EVE,
            "e2@x",
            &c.message_id,
            "",
            "I have posted a fix for this regression.",
        ),
    );
    assert_eq!(show(&cfg, &c.id)["state"], "awaiting-fix");
    ingest(
        &cfg,
        &mail(EVE, "e3@x", &c.message_id, "", "This is not a regression."),
    );
    assert_eq!(show(&cfg, &c.id)["state"], "needs-human");
}

/// By default anyone's words may make a move that closes nothing: a
/// stranger's promise of a fix awaits it. A stranger's mail that also says
/// something else decisive goes to a human, and a stranger's closure never
/// closes.
#[test]
fn a_strangers_single_decision_awaits_a_fix_and_nothing_else_moves() {
    const MALLORY: &str = "Mallory <mallory@else.example>";
    for (id, words, want) in [
        (
            "s1@x",
            "I have posted a fix for this regression.",
            "awaiting-fix",
        ),
        (
            "s2@x",
            "I have posted a fix for this regression. This is not a regression anyway, \
             it is just noise, won't fix.",
            "needs-human",
        ),
        ("s3@x", "This is not a regression.", "needs-human"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = setup(tmp.path(), "");
        let c = report(&cfg);
        ingest(&cfg, &mail(MALLORY, id, &c.message_id, "", words));
        assert_eq!(show(&cfg, &c.id)["state"], want, "{words}");
    }
}

/// `labels retrain`: the reader retrained on the operators' labels is
/// measured against the reader of now by the same thread-grouped folds, and
/// written only if it makes no more wrong decisions (nor sends more quiet
/// replies to a human than the bar). An operator's mistaken label, weighed
/// heavily, is refused with exit 3 and nothing written; `--force` writes it.
#[test]
fn a_retrained_reader_is_measured_before_it_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let shipped = root().join("tests/fixtures/replies/dev/labels.jsonl");
    let shipped = shipped.to_str().unwrap();
    let retrain = |out: &Path, extra: &[&str]| {
        let args = [
            &[
                "labels",
                "retrain",
                "--shipped",
                shipped,
                "--out",
                out.to_str().unwrap(),
            ][..],
            extra,
        ]
        .concat();
        perfbot_stdin(&cfg, &args, None)
    };
    // Nothing labelled yet, a weight out of range, a directory to write
    // to: usage errors.
    let out = tmp.path().join("reader.model");
    for (to, extra, says) in [
        (&out, &[][..], "no reply labelled by an operator yet"),
        (
            &out,
            &["--weight", "0"][..],
            "--weight 0 is not in (0, 100]",
        ),
        (&tmp.path().to_path_buf(), &[][..], "names no file"),
    ] {
        let o = retrain(to, extra);
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(says), "{o:?}");
    }
    // From a deployment's directory, without --shipped: the shipped labels
    // are found in the tree perfbot was built from (read before the
    // operators' labels are looked for).
    let o = Command::new(env!("CARGO_BIN_EXE_perfbot"))
        .args(["--config", cfg.to_str().unwrap(), "labels", "retrain"])
        .args(["--out", out.to_str().unwrap()])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no reply labelled by an operator yet"),
        "{err}"
    );
    let c = report(&cfg);
    for (id, words) in [
        (
            "rt1@x",
            "Meh. Compilers do that. I wouldn't lose sleep over this one.",
        ),
        ("rt2@x", "Thanks for looking."),
    ] {
        ingest(&cfg, &mail(DAVE, id, &c.message_id, "", words));
    }
    let settle = [
        "cases",
        "set",
        &c.id,
        "not-a-regression",
        "--reason",
        "noise",
    ];
    run(&cfg, &settle, None);
    run(
        &cfg,
        &[
            "labels",
            "set",
            "rt2@x",
            "thanks-only",
            "--reason",
            "thanks",
        ],
        None,
    );

    let o = retrain(&out, &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["measure"]["operators"], 2);
    assert_eq!(v["measure"]["shipped"], 39);
    assert_eq!(v["refused"], serde_json::json!([]));
    assert_eq!(v["written"], out.to_str().unwrap());
    // The weights written are a reader perfbot reads replies with.
    let with = tmp.path().join("with-model.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&with, format!("{text}\n[reply]\nmodel = {out:?}\n")).unwrap();
    let o = perfbot_stdin(
        &with,
        &["classify", "--role", "author"],
        Some(b"This is expected."),
    );
    ok(&o);

    // Thanks labelled as a closure, weighing a hundred shipped labels.
    run(
        &cfg,
        &[
            "labels",
            "set",
            "rt2@x",
            "not-a-regression",
            "--reason",
            "oops",
        ],
        None,
    );
    let poisoned = tmp.path().join("poisoned.model");
    let o = retrain(&poisoned, &["--weight", "100"]);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("wrong automatic decisions where the reader of now makes"),
        "{err}"
    );
    assert!(err.contains("nothing written"), "{err}");
    assert!(!poisoned.exists());
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("wrong automatic decisions"), "{table}");
    // What the model alone tells apart, whatever the thresholds: taught
    // that thanks close cases, it finds fewer of the decisions.
    let sep: Vec<usize> = table
        .lines()
        .find(|l| l.starts_with("decisions the model alone separates"))
        .unwrap_or_else(|| panic!("{table}"))
        .split_whitespace()
        .filter_map(|w| w.split_once('/'))
        .map(|(caught, _)| caught.parse().unwrap())
        .collect();
    assert!(sep.len() == 2 && sep[1] < sep[0], "{table}");
    let o = retrain(&poisoned, &["--weight", "100", "--force"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(poisoned.exists());
}

/// The author answered with an investigation that may also be a decision,
/// and the thread went quiet (the reply is of 2018): `perfbot review` hands
/// the case to a human once, with the author's words, and leaves it where an
/// operator then sets it. A thread still talking is left alone.
#[test]
fn a_quiet_case_with_an_unsettled_decision_goes_to_a_human_once() {
    let tmp = tempfile::tempdir().unwrap();
    // The mechanism, not the threshold: any decision the reading carries.
    let cfg = setup(tmp.path(), "[review]\nmin_signal = 0.05\n");
    let c = report(&cfg);
    let words = "This is probably expected: the commit adds a barrier on that path. \
                 I'll look at the profile to be sure.";
    ingest(&cfg, &mail(DAVE, "hmm@x", &c.message_id, "", words));
    assert_eq!(show(&cfg, &c.id)["state"], "investigating");
    let said = |args: &[&str]| String::from_utf8(run(&cfg, args, None).stderr).unwrap();

    let dry = said(&["review", "--dry-run"]);
    assert!(
        dry.contains(&format!("case {}: needs a human: perhaps decided", c.id)),
        "{dry}"
    );
    assert_eq!(show(&cfg, &c.id)["state"], "investigating");

    let done = said(&["review"]);
    assert!(
        done.contains("perhaps decided: Dave Chinner <dchinner@xfs.example> wrote"),
        "{done}"
    );
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "needs-human");
    let last = last_event(&v);
    assert_eq!(
        last["cause"],
        serde_json::json!({"kind": "system", "what": "review"})
    );
    assert!(
        last["note"]
            .as_str()
            .unwrap()
            .contains("in <hmm@x> (read as investigating; it may be "),
        "{last}"
    );
    let digest: serde_json::Value =
        serde_json::from_slice(&run(&cfg, &["digest", "--format", "json"], None).stdout).unwrap();
    let reason = digest["needs_human"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("perhaps decided: "), "{reason}");

    // Once: nothing more to review, and an operator's word stands.
    assert!(said(&["review"]).contains("no case to review"));
    run(
        &cfg,
        &[
            "cases",
            "set",
            &c.id,
            "investigating",
            "--reason",
            "asked Dave",
        ],
        None,
    );
    assert!(said(&["review"]).contains("no case to review"));
    assert_eq!(show(&cfg, &c.id)["state"], "investigating");

    // A thread with a message of today is still talking.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "[review]\nmin_signal = 0.05\n");
    let c = report(&cfg);
    let now = chrono::Utc::now().to_rfc2822();
    let raw = String::from_utf8(mail(DAVE, "hmm@x", &c.message_id, "", words))
        .unwrap()
        .replace("Tue, 5 Jun 2018 17:31:14 +1000", &now);
    ingest(&cfg, raw.as_bytes());
    let said = String::from_utf8(run(&cfg, &["review"], None).stderr).unwrap();
    assert!(said.contains("no case to review"), "{said}");
    assert_eq!(show(&cfg, &c.id)["state"], "investigating");
}

/// A question asked of the robot's people in a case that awaits a fix: the
/// operators are told and the digest lists it, but the fix stays awaited;
/// the robot's people answering in the thread, or a human settling the
/// case, closes the question.
#[test]
fn a_question_for_the_robot_leaves_the_fix_awaited() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = setup(tmp.path(), "");
    let c = report(&cfg);
    ingest(&cfg, patch_attached(&c.message_id).as_bytes());
    assert_eq!(show(&cfg, &c.id)["state"], "awaiting-fix");
    let ask = |id: &str| {
        mail(
            DAVE,
            id,
            "p1@dastard",
            "",
            "I'm trying to figure out how to parse this - where do I find the test?",
        )
    };
    ingest(&cfg, &ask("q1@dastard"));
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "awaiting-fix", "{v:#}");
    assert_eq!(v["question"]["message_id"], "q1@dastard", "{v:#}");
    assert!(v["question"]["quote"]
        .as_str()
        .unwrap()
        .contains("where do I find the test?"));
    let esc: Vec<_> = outbox(&cfg)
        .into_iter()
        .filter(|e| e["kind"] == "escalation")
        .collect();
    assert_eq!(esc.len(), 1, "the operators are told");
    let raw = raw_of(&cfg, esc[0]["message_id"].as_str().unwrap());
    assert!(raw.contains("A question for the robot's people"), "{raw}");
    assert!(raw.contains("(awaiting-fix)"), "{raw}");
    let list = String::from_utf8(run(&cfg, &["cases", "list"], None).stdout).unwrap();
    assert!(
        list.contains("a question to the robot's people is open"),
        "{list}"
    );
    let digest = String::from_utf8(run(&cfg, &["digest"], None).stdout).unwrap();
    assert!(
        digest.contains(
            "a question for the robot's people, not answered yet; the case stays awaiting-fix"
        ),
        "{digest}"
    );

    // The robot's people answer in the thread: the question is closed.
    ingest(
        &cfg,
        &mail(
            "Robot Ops <ops@ci.example>",
            "a1@ci",
            "q1@dastard",
            "",
            "The test is fio-basic from lkp-tests; the job file is in the report.",
        ),
    );
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "awaiting-fix", "{v:#}");
    assert!(v.get("question").is_none(), "{v:#}");
    let digest = String::from_utf8(run(&cfg, &["digest"], None).stdout).unwrap();
    assert!(!digest.contains("not answered yet"), "{digest}");

    // Asked again, and settled by a human at the command line instead.
    ingest(&cfg, &ask("q2@dastard"));
    assert_eq!(show(&cfg, &c.id)["question"]["message_id"], "q2@dastard");
    let set = [
        "cases",
        "set",
        &c.id,
        "awaiting-fix",
        "--reason",
        "answered off-list",
    ];
    run(&cfg, &set, None);
    let v = show(&cfg, &c.id);
    assert_eq!(v["state"], "awaiting-fix");
    assert!(v.get("question").is_none(), "{v:#}");
}

/// Replies read in another order than they were written (an archive read
/// list by list, a late delivery) leave the case where reading them in
/// order does, or with a human: a later decision stands over an earlier one
/// read after it, unless the two disagree. A reply that answers the mail
/// that moved the case comes after it, whatever its Date says (a clock set
/// wrong). `(what, replies in written order: (from, id, parent, Date, words),
/// the order read, state in order, state read in that order)`.
#[test]
fn replies_read_out_of_their_written_order() {
    const REVERT: &str = "Not sure, so, at this moment, I'll revert this patch.";
    const FIX: &str = "Patch below, I'll send it formally once tested.\r\n\r\ndiff --git a/fs/xfs/a.c b/fs/xfs/a.c\r\n--- a/fs/xfs/a.c\r\n+++ b/fs/xfs/a.c\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n";
    const INNOCENT: &str =
        "That patch changed nothing. This is not a regression, the test is contending on one file.";
    const ASKED: &str =
        "Where can I find the job file for this test? Could you rerun it with the fix?";
    const KEEP: &str =
        "We keep the patch as it is: the drop is the price of correctness, so we won't change it.";
    const STRANGER: &str = "Random <random@else.example>";
    const OPS: &str = "Ops <ops@ci.example>";
    const JOB_FILE: &str =
        "The job file is attached to the report (job.yaml), and the reproduce script is next to it.";
    const LOOKING: &str = "I'm looking into it, I will try to reproduce it here.";
    const DAY1: &str = "Wed, 6 Jun 2018 09:00:00 +0000";
    const DAY2: &str = "Thu, 7 Jun 2018 09:00:00 +0000";
    const DAY3: &str = "Fri, 8 Jun 2018 09:00:00 +0000";
    const DAY4: &str = "Sat, 9 Jun 2018 09:00:00 +0000";
    type Reply = (
        &'static str,
        &'static str,
        Option<&'static str>,
        &'static str,
        &'static str,
    );
    /// (what, the replies in written order, the order read, the state in
    /// order, the state read in that order).
    type Row = (
        &'static str,
        &'static [Reply],
        &'static [usize],
        &'static str,
        &'static str,
    );
    let table: [Row; 18] = [
        (
            "a fix follows a revert",
            &[
                (DAVE, "r1@x", None, DAY1, REVERT),
                ("maint@kernel.example", "r2@x", Some("r1@x"), DAY2, FIX),
            ],
            &[1, 0],
            "awaiting-fix",
            "awaiting-fix",
        ),
        (
            "the author's own change of mind",
            &[
                (DAVE, "m1@x", None, DAY1, REVERT),
                (DAVE, "m2@x", None, DAY2, INNOCENT),
            ],
            &[1, 0],
            "not-a-regression",
            "not-a-regression",
        ),
        (
            "two people disagree",
            &[
                ("maint@kernel.example", "d1@x", None, DAY1, INNOCENT),
                (DAVE, "d2@x", None, DAY2, FIX),
            ],
            &[1, 0],
            "needs-human",
            "needs-human",
        ),
        (
            // Read in order: the revert, then its author's answer to it,
            // dated a day before by a wrong clock.
            "an answer dated before what it answers",
            &[
                (DAVE, "c1@x", None, DAY2, REVERT),
                (DAVE, "c2@x", Some("c1@x"), DAY1, INNOCENT),
            ],
            &[1, 0],
            "not-a-regression",
            "not-a-regression",
        ),
        (
            // In order the question stays open beside the fix awaited, and
            // the closure contradicts the fix. Read first, the question sent
            // the case to a human; the fix read after it must not be lost
            // under that human, or the closure meets nothing to contradict.
            "a question read before an older fix, then a closure",
            &[
                (DAVE, "q1@x", None, DAY1, FIX),
                (DAVE, "q2@x", None, DAY2, ASKED),
                ("maint@kernel.example", "q3@x", None, DAY3, INNOCENT),
            ],
            &[1, 0, 2],
            "needs-human",
            "needs-human",
        ),
        (
            "a question read before an older fix",
            &[
                (DAVE, "p1@x", None, DAY1, FIX),
                (DAVE, "p2@x", None, DAY2, ASKED),
            ],
            &[1, 0],
            "awaiting-fix",
            "awaiting-fix",
        ),
        (
            // A stranger may not close the case, but in order only says
            // again what the author decided.
            "a stranger agrees with the author's older decision",
            &[
                (DAVE, "s1@x", None, DAY1, KEEP),
                (STRANGER, "s2@x", None, DAY2, KEEP),
            ],
            &[1, 0],
            "wont-fix",
            "wont-fix",
        ),
        (
            "a stranger disagrees with the author's older decision",
            &[
                (DAVE, "t1@x", None, DAY1, KEEP),
                (STRANGER, "t2@x", None, DAY2, INNOCENT),
            ],
            &[1, 0],
            "needs-human",
            "needs-human",
        ),
        (
            // In order the author changes their own mind (a revert, then
            // keeping the patch), and a maintainer's fix contradicts that.
            // Read late, the author's second word is weighed against their
            // own first one, not as a stranger's to it.
            "an author's change of mind read after a maintainer's fix",
            &[
                (DAVE, "u1@x", None, DAY1, REVERT),
                (DAVE, "u2@x", None, DAY2, KEEP),
                ("maint@kernel.example", "u3@x", None, DAY3, FIX),
            ],
            &[0, 2, 1],
            "needs-human",
            "needs-human",
        ),
        (
            // Read first, the question and the stranger's closure each need
            // a human: the older fix read last settles only the first.
            "a question and a stranger's closure, then an older fix",
            &[
                (DAVE, "v1@x", None, DAY1, FIX),
                (DAVE, "v2@x", None, DAY2, ASKED),
                (STRANGER, "v3@x", None, DAY3, INNOCENT),
            ],
            &[1, 2, 0],
            "needs-human",
            "needs-human",
        ),
        (
            // The revert read first; the closure before it sends the case
            // to a human; the stranger's fix, written between the two, is
            // still read late: it must not take the case from the human as
            // if it were the newest word.
            "a reply written between two read before it",
            &[
                ("maint@kernel.example", "w1@x", None, DAY1, INNOCENT),
                (STRANGER, "w2@x", None, DAY2, FIX),
                (DAVE, "w3@x", None, DAY3, REVERT),
            ],
            &[2, 0, 1],
            "awaiting-revert",
            "needs-human",
        ),
        (
            // In order the maintainer's decision stands over a fix a
            // stranger posted: read late, that fix is no disagreement.
            "a stranger's fix read after a maintainer's later decision",
            &[
                (STRANGER, "x1@x", None, DAY1, FIX),
                ("maint@kernel.example", "x2@x", None, DAY2, KEEP),
            ],
            &[1, 0],
            "wont-fix",
            "wont-fix",
        ),
        (
            // In order the robot's people answer the question asked beside
            // the fix awaited; read after their answer, it is answered.
            "a question read after the robot's people answered it",
            &[
                (DAVE, "y1@x", None, DAY1, FIX),
                (DAVE, "y2@x", None, DAY2, ASKED),
                (OPS, "y3@x", None, DAY3, JOB_FILE),
            ],
            &[0, 2, 1],
            "awaiting-fix",
            "awaiting-fix",
        ),
        (
            // Read first, the question sent the case to a human; the
            // robot's people answered it; the older fix read last takes the
            // case without keeping the question open beside it.
            "an answered question, then the older fix it was asked beside",
            &[
                ("maint@kernel.example", "z1@x", None, DAY1, FIX),
                (DAVE, "z2@x", None, DAY2, ASKED),
                (OPS, "z3@x", None, DAY3, JOB_FILE),
            ],
            &[1, 2, 0],
            "awaiting-fix",
            "awaiting-fix",
        ),
        (
            // The maintainer's revert said again is the newest word: the
            // author's fix written before it and read after it is no
            // disagreement.
            "a decision said again stands over an older fix read after it",
            &[
                ("maint@kernel.example", "a1@x", None, DAY1, REVERT),
                (DAVE, "a2@x", None, DAY2, FIX),
                ("maint@kernel.example", "a3@x", None, DAY3, REVERT),
            ],
            &[0, 2, 1],
            "awaiting-revert",
            "awaiting-revert",
        ),
        (
            // Only looking into it (investigating) decides nothing to stand
            // over: the older question read after it sends the case to a
            // human, and the fix written after the question takes it.
            "a question read after a later investigation, then a fix",
            &[
                (DAVE, "b1@x", None, DAY1, ASKED),
                ("maint@kernel.example", "b2@x", None, DAY2, FIX),
                (DAVE, "b3@x", None, DAY4, LOOKING),
            ],
            &[2, 0, 1],
            "awaiting-fix",
            "awaiting-fix",
        ),
        (
            // With a human already (the question), the stranger's closure
            // needs one again: the newest word, so the fix written before
            // it and read after it does not take the case from the human.
            "a human needed again, then an older fix",
            &[
                (DAVE, "h1@x", None, DAY1, ASKED),
                ("maint@kernel.example", "h2@x", None, DAY2, FIX),
                (STRANGER, "h3@x", None, DAY3, INNOCENT),
            ],
            &[0, 2, 1],
            "needs-human",
            "needs-human",
        ),
        (
            // Two questions read first, the later one first: it stands for
            // both, the robot's people answer, and the fix asked beside
            // the later question takes the case.
            "two questions, their answer, then the fix between them",
            &[
                (DAVE, "k1@x", None, DAY1, ASKED),
                ("maint@kernel.example", "k2@x", None, DAY2, FIX),
                (DAVE, "k3@x", None, DAY3, ASKED),
                (OPS, "k4@x", None, DAY4, JOB_FILE),
            ],
            &[2, 0, 3, 1],
            "awaiting-fix",
            "awaiting-fix",
        ),
    ];
    for (what, replies, read, in_order, other_order) in table {
        let written: Vec<usize> = (0..replies.len()).collect();
        for (order, expect) in [(&written[..], in_order), (read, other_order)] {
            let tmp = tempfile::tempdir().unwrap();
            let cfg = setup(tmp.path(), "");
            let c = report(&cfg);
            for &i in order {
                let (from, id, parent, date, words) = replies[i];
                let raw = mail(from, id, parent.unwrap_or(&c.message_id), "", words);
                let raw = String::from_utf8(raw)
                    .unwrap()
                    .replace("Tue, 5 Jun 2018 17:31:14 +1000", date);
                ingest(&cfg, raw.as_bytes());
            }
            let v = show(&cfg, &c.id);
            let how = if order == written {
                "in order"
            } else {
                "out of order"
            };
            assert_eq!(v["state"], expect, "{what}, {how}: {}", v["events"]);
            // Whichever the order, a question asked while the case held a
            // decision stays open for a human beside it, until the robot's
            // people write in the thread after it. (Asked of an undecided
            // case, it went to the human with the move.)
            let asked = replies.iter().position(|r| r.4 == ASKED);
            let beside = |q: usize| {
                replies[..q]
                    .iter()
                    .any(|r| [FIX, REVERT, KEEP, INNOCENT].contains(&r.4))
            };
            let answered = |q: usize| replies[q..].iter().any(|r| r.0 == OPS);
            if let Some(q) = asked.filter(|_| expect == "awaiting-fix") {
                let open = (beside(q) && !answered(q)).then_some(replies[q].1);
                assert_eq!(
                    v["question"]["message_id"].as_str(),
                    open,
                    "{what}, {how}: {v:#}"
                );
            }
        }
    }
}

mod any_order {
    //! Whatever order a thread's replies are read in, the case never ends
    //! in another decision than reading them in written order gives: the
    //! same state, or a human weighs it (where order matters to who had the
    //! last word).

    use super::*;
    use proptest::prelude::*;

    const SENDERS: [&str; 3] = [
        DAVE,
        "Maint <maint@kernel.example>",
        "Random <random@else.example>",
    ];
    const WORDS: [&str; 6] = [
        "Not sure, so, at this moment, I'll revert this patch.",
        "Patch below, I'll send it formally once tested.\r\n\r\ndiff --git a/fs/xfs/a.c b/fs/xfs/a.c\r\n--- a/fs/xfs/a.c\r\n+++ b/fs/xfs/a.c\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n",
        "I see the drop is inside the noise. This is not a regression.",
        "We keep the patch as it is: the drop is the price of correctness, so we won't change it.",
        "Where can I find the job file for this test? Could you rerun it with the fix?",
        "Thanks for the report.",
    ];

    /// One reply: its sender, its words, and what it answers (0: the
    /// report; else an earlier reply, counted back).
    type Reply = (usize, usize, usize);

    /// The case's state after reading `replies` (written a day apart, in
    /// this order) in the order `read`, by one run of `ingest`, or a new
    /// run before each reply `cut` names (its place in `read`). A reply to
    /// a reply names only its parent, under a Subject of its own (as `git
    /// send-email` writes them): read before its parent, only the thread
    /// joins it to the case.
    fn after(replies: &[Reply], read: &[usize], cut: &[bool]) -> String {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = setup(tmp.path(), "");
        let c = report(&cfg);
        let mails: Vec<String> = read
            .iter()
            .map(|&i| {
                let (from, words, back) = replies[i];
                // The first reply can only answer the report.
                let parent = match (back, i) {
                    (0, _) | (_, 0) => c.message_id.clone(),
                    (b, i) => format!("o{}@x", i - 1 - (b - 1) % i),
                };
                let raw = mail(SENDERS[from], &format!("o{i}@x"), &parent, "", WORDS[words]);
                let date = format!("Wed, {} Jun 2018 09:00:00 +0000", 6 + i);
                let mut m = String::from_utf8(raw)
                    .unwrap()
                    .replace("Tue, 5 Jun 2018 17:31:14 +1000", &date);
                if back > 0 && i > 0 {
                    m = m.replace(
                        "Subject: Re: [xfs] 0b02c8c0d7: fio.write_iops -9.0% regression",
                        "Subject: Re: [PATCH] xfs: the fix",
                    );
                }
                m
            })
            .collect();
        let mut runs: Vec<Vec<String>> = vec![];
        for (k, m) in mails.into_iter().enumerate() {
            if runs.is_empty() || cut.get(k).copied().unwrap_or(false) {
                runs.push(vec![]);
            }
            runs.last_mut().unwrap().push(m);
        }
        for (n, mails) in runs.iter().enumerate() {
            let f = tmp.path().join(format!("list{n}.mbox"));
            std::fs::write(&f, common::mbox(mails)).unwrap();
            run(&cfg, &["ingest", "--mbox", f.to_str().unwrap()], None);
        }
        let v = show(&cfg, &c.id);
        let thread = common::thread_ids(&v)
            .iter()
            .filter(|id| id.ends_with("@x"))
            .count();
        assert_eq!(thread, replies.len(), "every reply is in the thread: {v}");
        v["state"].as_str().unwrap().to_string()
    }

    type Thread = (Vec<Reply>, Vec<usize>, Vec<bool>);

    /// Replies, an order to read them in, and where a new run starts.
    fn thread() -> impl Strategy<Value = Thread> {
        prop::collection::vec((0..SENDERS.len(), 0..WORDS.len(), 0usize..3), 2..6).prop_flat_map(
            |r| {
                let order: Vec<usize> = (0..r.len()).collect();
                let cuts = prop::collection::vec(any::<bool>(), r.len());
                (Just(r), Just(order).prop_shuffle(), cuts)
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]

        #[test]
        fn no_reading_order_ends_in_another_decision((replies, read, cuts) in thread()) {
            let in_order: Vec<usize> = (0..replies.len()).collect();
            let written = after(&replies, &in_order, &[]);
            let shuffled = after(&replies, &read, &[]);
            prop_assert!(
                shuffled == written || shuffled == "needs-human" || written == "needs-human",
                "{replies:?} read as {read:?}: {shuffled}, in order {written}"
            );
            // Read by several runs, the replies kept for a later parent
            // carry over: the same state as one run's.
            let by_runs = after(&replies, &read, &cuts);
            prop_assert_eq!(&by_runs, &shuffled, "{:?} read as {:?} cut at {:?}", replies, read, cuts);
        }
    }
}
