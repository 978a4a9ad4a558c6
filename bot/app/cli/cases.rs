//! `perfbot cases`: list, show and decide cases; reply in a case's thread.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use chrono::Utc;
use clap::Subcommand;

use super::{by_operator, open_store, parse_id, read_input, who, Failure};
use crate::app::view::{CaseDetail, CaseFilter, CaseOrder, CaseSummary};
use crate::config::Config;
use crate::flows::followup::{prepare_followup, FollowUp};
use crate::flows::learn::SettleError;
use crate::model::case::CaseState;
use crate::model::{Chosen, OutboxKind};
use crate::store::Store;

#[derive(Subcommand, Debug)]
pub enum CasesCmd {
    /// List cases
    List {
        #[command(flatten)]
        filter: ListFilter,
        /// The order: oldest (the first reported first), newest, updated
        /// (the last changed first), state
        #[arg(long, value_parser = order, default_value = "oldest")]
        sort: CaseOrder,
        /// As JSON, for scripts
        #[arg(long)]
        json: bool,
    },
    /// Show one case with its history
    Show {
        /// The case's id, or enough of its start to name one case
        id: String,
        /// As JSON, for scripts
        #[arg(long)]
        json: bool,
    },
    /// Set a case's state (a human decision, recorded as such)
    Set {
        /// The case's id, or enough of its start to name one case
        id: String,
        /// The state it is in now (`cases list --state` takes the same names)
        #[arg(value_parser = state)]
        state: CaseState,
        /// Why, in a few words; kept in the case's history
        #[arg(long, value_parser = super::reason)]
        reason: String,
        /// The reply the decision rests on, labelled by it (default: the
        /// reply whose reading carried the decision most strongly, else the
        /// last one)
        #[arg(long, value_name = "MESSAGE-ID")]
        reply: Option<String>,
    },
    /// Queue a mail from the operator in the case's thread (Re: subject, threaded)
    Reply {
        /// The case's id, or enough of its start to name one case
        id: String,
        /// File with the body text, or - for standard input
        #[arg(long)]
        body: PathBuf,
        /// Answer this Message-ID of the thread instead of the report
        #[arg(long)]
        parent: Option<String>,
    },
}

impl CasesCmd {
    pub fn only_prints(&self) -> bool {
        matches!(self, CasesCmd::List { .. } | CasesCmd::Show { .. })
    }
}

/// Which cases `cases list` shows: the dashboard's filters.
#[derive(clap::Args, Debug)]
pub struct ListFilter {
    /// Those in this state
    #[arg(long, value_parser = state)]
    state: Option<CaseState>,
    /// Those of this subsystem (`xfs`)
    #[arg(long)]
    subsystem: Option<String>,
    /// Those whose report went to a list whose address contains this (`linux-mm`)
    #[arg(long)]
    list: Option<String>,
    /// Those reported in this year
    #[arg(long, value_parser = clap::value_parser!(i32).range(1970..=9999))]
    year: Option<i32>,
    /// Those reported at most this many days ago
    #[arg(long, value_name = "DAYS")]
    age: Option<u32>,
    /// Those in needs-human, or with a question to the robot's people open
    #[arg(long)]
    needs_human: bool,
    /// Those waiting on someone whose address or name contains this
    /// (`dave@kernel.org`; `operators`, `robot's people`)
    #[arg(long, value_name = "WHO")]
    waits_on: Option<String>,
}

impl From<ListFilter> for CaseFilter {
    fn from(f: ListFilter) -> CaseFilter {
        CaseFilter {
            state: f.state,
            subsystem: f.subsystem,
            age_days: f.age.map(i64::from),
            needs_human: f.needs_human,
            list: f.list.map(|l| l.to_ascii_lowercase()),
            year: f.year,
            waits_on: f.waits_on.map(|w| w.to_lowercase()),
        }
    }
}

fn order(s: &str) -> Result<CaseOrder, String> {
    CaseOrder::parse(s).ok_or_else(|| format!("{s:?}: one of {}", CaseOrder::names()))
}

fn state(s: &str) -> Result<CaseState, String> {
    CaseState::parse(s)
        .ok_or_else(|| super::unknown_state(s, CaseState::ALL.iter().map(|c| c.as_str())))
}

pub fn run(config: &Config, c: CasesCmd) -> Result<(), Failure> {
    let store = open_store(config)?;
    match c {
        CasesCmd::List { filter, sort, json } => list(&store, &filter.into(), sort, json),
        CasesCmd::Show { id, json } => show(&store, &id, json),
        CasesCmd::Set {
            id,
            state,
            reason,
            reply,
        } => set(&store, &id, state, reason, reply.as_deref()),
        CasesCmd::Reply { id, body, parent } => {
            queue_reply(config, &store, &id, &body, parent.as_deref())
        }
    }
}

/// `cases list`: the cases the filter admits, in the order asked.
fn list(store: &Store, filter: &CaseFilter, sort: CaseOrder, json: bool) -> Result<(), Failure> {
    let now = Utc::now();
    // `--waits-on` reads the history of each case it admits; the rows need
    // it again, so it is kept rather than read twice.
    let read = std::cell::RefCell::new(std::collections::HashMap::new());
    let mut list = filter.select(store.cases()?, now, |id| {
        let h = store.history(id)?;
        read.borrow_mut().insert(id.clone(), h.clone());
        Ok::<_, crate::store::StoreError>(h)
    })?;
    sort.sort(&mut list);
    let history = |id: &crate::model::CaseId| match read.borrow_mut().remove(id) {
        Some(h) => Ok(h),
        None => store.history(id),
    };
    let rows = CaseSummary::listed(&list, history, &store.quarantined()?)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else if list.is_empty() {
        // "in state S" when that is the whole filter, as before filters.
        let state_only = CaseFilter {
            state: filter.state,
            ..CaseFilter::default()
        };
        let only = match filter.state {
            _ if filter.is_empty() => String::new(),
            Some(s) if *filter == state_only => format!(" in state {s}"),
            _ => " that match".to_string(),
        };
        println!("no cases{only}");
    } else {
        for c in &rows {
            print!("{}", crate::app::view::list_line(c));
        }
    }
    Ok(())
}

/// `cases show`: a case, its events and its thread's timeline.
fn show(store: &Store, id: &str, json: bool) -> Result<(), Failure> {
    let c = store.find_case(id)?;
    let (events, thread) = store.history(&c.id)?;
    let timeline = crate::app::view::timeline(&store.case_outbox(&c.id)?, &thread);
    let waits_on = crate::model::case::waits_on_named(&c, &events, &thread);
    let unread = crate::app::view::of_case(&store.quarantined()?, &c.id);
    if json {
        let v = CaseDetail::new(&c, &events, &timeline, waits_on, &unread);
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let waits = waits_on.as_deref();
        let text = crate::app::view::show_text(&c, &events, &timeline, waits, &unread);
        print!("{text}");
    }
    Ok(())
}

/// `cases set`: a human's decision, and the reply it labels learned.
fn set(
    store: &Store,
    id: &str,
    state: CaseState,
    reason: String,
    reply: Option<&str>,
) -> Result<(), Failure> {
    let c = store.find_case(id)?;
    let was = c.state;
    let by = who();
    let (c, label) = crate::flows::learn::settle(
        store,
        &c.id,
        state,
        by_operator(&reason),
        &by,
        &reason,
        reply,
    )
    .map_err(|e| match e {
        SettleError::Store(e) => Failure::from(anyhow::Error::from(e).context("setting the state")),
        e => Failure::usage(e),
    })?;
    if c.state == was {
        eprintln!(
            "case {} was {} already: the decision is recorded again",
            c.id, c.state
        );
    } else {
        eprintln!("case {} is now {}", c.id, c.state);
    }
    // The reply that led here, labelled by the decision.
    if let Some(l) = label {
        let read = l.perfbot.as_deref().unwrap_or("nothing");
        let how = match l.chosen {
            Chosen::Named => "the reply named",
            Chosen::Strongest => "the reply read closest to it",
            Chosen::Last => "the last reply; name another with --reply",
        };
        eprintln!(
            "learned: <{}> is {} ({how}; perfbot had read {read}); `perfbot labels retrain --out FILE` retrains the reader, measured first",
            l.message_id, l.label
        );
    }
    Ok(())
}

/// `cases reply`: a mail from the operator queued in the case's thread.
fn queue_reply(
    config: &Config,
    store: &Store,
    id: &str,
    body: &Path,
    parent: Option<&str>,
) -> Result<(), Failure> {
    let c = store.find_case(id)?;
    // A body that is no text, or none, is the command's mistake (exit 2).
    let text = String::from_utf8(read_input(body)?)
        .map_err(|_| Failure::usage(anyhow!("{}: not UTF-8 text", body.display())))?;
    // An empty mail to a list is noise, and usually a wrong path or pipe.
    if text.trim().is_empty() {
        return Err(Failure::usage(anyhow!(
            "{}: the body is empty, nothing queued",
            body.display()
        )));
    }
    let parent = parent.map(parse_id).transpose()?;
    // An answer to a message outside the thread would thread elsewhere.
    if let Some(p) = &parent {
        if *p != c.message_id && store.message_case(p)?.as_ref() != Some(&c.id) {
            return Err(Failure::usage(anyhow!(
                "<{p}> is not in case {}'s thread (`perfbot cases show {}` lists it), nothing queued",
                c.id,
                c.id
            )));
        }
    }
    let f = FollowUp {
        kind: OutboxKind::Note,
        body: &text,
        parent: parent.as_ref(),
        to: Vec::new(),
        cc: Vec::new(),
    };
    let (entry, raw) = prepare_followup(config, &c, &f, Utc::now())?;
    let note = format!("operator reply <{}> queued", entry.message_id);
    if store.queue_followup(&entry, &raw, by_operator("operator reply"), &note)? {
        eprintln!("queued <{}>: {}", entry.message_id, entry.subject);
    } else {
        eprintln!("<{}> is queued already", entry.message_id);
    }
    Ok(())
}
