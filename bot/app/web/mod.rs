//! The read-only dashboard (axum, server-rendered handlebars pages): the case
//! list with filters and counts, a case page (report, bisect plot, thread with
//! each reply's understanding, history), the digest, JSON under `/api`, and
//! `/healthz` and `/metrics` for the daemon. Every piece of mail-derived text is
//! HTML-escaped by handlebars; the only raw HTML inserted is built here from
//! escaped parts (highlighted evidence, SVG plots).

pub(crate) mod view;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::{Duration, Utc};
use handlebars::Handlebars;
use serde::{Deserialize, Serialize};

use crate::app::view::{CaseFilter, CaseOrder, TimelineItem};
use crate::config::Config;
use crate::model::case::{Case, CaseId, CaseState, Event};
use crate::store::Store;

/// Counters of the daemon, shown at `/healthz` and `/metrics`.
#[derive(Debug, Default)]
pub struct Metrics {
    pub mails_sent: AtomicU64,
    pub mails_failed: AtomicU64,
    pub messages_ingested: AtomicU64,
    pub messages_quarantined: AtomicU64,
    /// Quarantined messages read again since start, and read this time
    /// (the daemon's re-read at start).
    pub quarantine_released: AtomicU64,
    pub replies_handled: AtomicU64,
    pub reports_queued: AtomicU64,
}

impl Metrics {
    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }
    fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

pub struct AppState {
    pub config: Arc<Config>,
    pub store: Arc<Store>,
    pub metrics: Arc<Metrics>,
    hb: Handlebars<'static>,
    /// The SHA-256 of the operator token, when settling on the dashboard is
    /// on (only its digest is kept, and compared).
    settle_token: Option<[u8; 32]>,
}

/// The page templates: from `web.templates_dir` when present, else built in.
/// HTML escaping stays on (handlebars' default).
pub fn templates(config: &Config) -> Result<Handlebars<'static>, crate::templates::TemplateError> {
    crate::templates::web(&config.resolve(&config.file.web.templates_dir))
}

impl AppState {
    pub fn new(
        config: Arc<Config>,
        store: Arc<Store>,
        metrics: Arc<Metrics>,
    ) -> Result<AppState, crate::templates::TemplateError> {
        let hb = templates(&config)?;
        Ok(AppState {
            config,
            store,
            metrics,
            hb,
            settle_token: None,
        })
    }

    /// Let operators who give `token` settle cases on the dashboard (an
    /// empty token leaves it read-only).
    pub fn with_settle_token(mut self, token: &crate::config::Secret) -> AppState {
        self.settle_token = (!token.is_empty()).then(|| digest(token.expose()));
        self
    }

    fn page<T: Serialize>(&self, title: &str, name: &str, data: &T) -> Response {
        match self
            .hb
            .render(name, data)
            .and_then(|content| self.framed(StatusCode::OK, title, content))
        {
            Ok(page) => page,
            Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        }
    }

    /// `content` in the layout (its navigation, its style), with `code`.
    fn framed(
        &self,
        code: StatusCode,
        title: &str,
        content: String,
    ) -> Result<Response, handlebars::RenderError> {
        let html = self.hb.render("layout", &Layout { title, content })?;
        Ok((code, Html(html)).into_response())
    }
}

/// A failed request: its status and a line saying why.
#[derive(Debug)]
pub struct WebError(StatusCode, String);

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        error(self.0, &self.1)
    }
}

fn internal(e: impl std::fmt::Display) -> WebError {
    WebError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
}

/// Cases after filtering, with the counts of all of them, and the page of
/// them asked for.
struct Listing {
    cases: Vec<crate::model::case::Case>,
    counts: BTreeMap<String, usize>,
    total: usize,
    page: usize,
    /// The order the query asked for, if it named one.
    order: Option<CaseOrder>,
}

fn error(code: StatusCode, msg: &str) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        msg.to_string(),
    )
        .into_response()
}

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(list_page))
        .route("/case/{id}", get(case_page))
        .route("/case/{id}/settle", post(settle))
        .route("/case/{id}/label", post(label))
        .route("/digest", get(digest_page))
        .route("/api/cases", get(api_cases))
        .route("/api/cases/{id}", get(api_case))
        .route("/api/digest", get(api_digest))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .with_state(state)
}

#[derive(Debug, Default, Deserialize)]
pub struct Filter {
    pub state: Option<String>,
    pub subsystem: Option<String>,
    /// Younger than this many days.
    pub age: Option<String>,
    pub needs_human: Option<String>,
    /// Reports sent to a list whose address contains this (`linux-mm`).
    pub list: Option<String>,
    /// Reports of this year (`2024`).
    pub year: Option<String>,
    /// Cases waiting on someone whose address or name contains this.
    pub waits_on: Option<String>,
    /// The order (`view::CaseOrder`): newest, oldest, updated, state.
    pub sort: Option<String>,
    /// The page of the HTML list (from 1).
    pub page: Option<String>,
}

/// Cases of the HTML list per page: each row reads its case's thread.
pub const PAGE_CASES: usize = 100;

/// A filter as the list applies it, checked once: an empty field filters
/// nothing, a field that says nothing it takes is the asker's mistake
/// (never read as no filter, which would show every case under a filter
/// the form still displays).
#[derive(Debug, Default, PartialEq)]
struct CaseQuery {
    filter: CaseFilter,
    /// None: the page's own default.
    order: Option<CaseOrder>,
    page: usize,
}

impl TryFrom<&Filter> for CaseQuery {
    type Error = WebError;

    fn try_from(f: &Filter) -> Result<CaseQuery, WebError> {
        let given = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let state = field("state", &f.state, CaseState::parse, || {
            let all: Vec<&str> = CaseState::ALL.iter().map(|s| s.as_str()).collect();
            format!("a case state ({})", all.join(", "))
        })?;
        // Any number of days is a period; a huge one is every case.
        let max_days = crate::flows::digest::MAX_DAYS as u64;
        let days = |v: &str| v.parse::<u64>().ok().map(|d| d.min(max_days) as i64);
        let age_days = field("age", &f.age, days, || "a number of days".into())?;
        let year = |v: &str| v.parse::<i32>().ok().filter(|y| (1970..=9999).contains(y));
        let year = field("year", &f.year, year, || "a year (2024)".into())?;
        let page = page_number(f.page.as_deref())?;
        let order = field("sort", &f.sort, CaseOrder::parse, || {
            format!("an order ({})", CaseOrder::names())
        })?;
        let filter = CaseFilter {
            state,
            subsystem: given(&f.subsystem),
            age_days,
            needs_human: f.needs_human.is_some(),
            list: given(&f.list).map(|l| l.to_ascii_lowercase()),
            year,
            waits_on: given(&f.waits_on).map(|w| w.to_lowercase()),
        };
        Ok(CaseQuery {
            filter,
            order,
            page,
        })
    }
}

/// A field of the list's query read by `parse`: None when it is empty or
/// absent; a 400 saying what it `takes` when it is neither and `parse`
/// finds nothing in it.
fn field<T>(
    name: &str,
    v: &Option<String>,
    parse: impl Fn(&str) -> Option<T>,
    takes: impl Fn() -> String,
) -> Result<Option<T>, WebError> {
    let Some(v) = v.as_deref().map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    parse(v).map(Some).ok_or_else(|| {
        WebError(
            StatusCode::BAD_REQUEST,
            format!("{name}={v:?}: {}", takes()),
        )
    })
}

/// The cases the filter `f` admits, in its order (`order` when it names
/// none).
fn filtered(s: &AppState, f: &Filter, order: CaseOrder) -> Result<Listing, WebError> {
    let q = CaseQuery::try_from(f)?;
    let all = s.store.cases().map_err(internal)?;
    let mut counts = BTreeMap::new();
    for c in &all {
        *counts.entry(c.state.as_str().to_string()).or_insert(0) += 1;
    }
    let now = Utc::now();
    let total = all.len();
    let mut cases = q
        .filter
        .select(all, now, |id| s.store.history(id))
        .map_err(internal)?;
    q.order.unwrap_or(order).sort(&mut cases);
    Ok(Listing {
        cases,
        counts,
        total,
        page: q.page,
        order: q.order,
    })
}

/// A page inside the layout.
#[derive(Debug, Serialize)]
pub struct Layout<'a> {
    pub title: &'a str,
    pub content: String,
}

/// One row of the case list: a case with its thread's course (replies, the
/// first one's delay, the words that moved the case), as the digest shows
/// it for followed reports.
#[derive(Debug, Serialize)]
struct CaseRow<'a> {
    id: &'a CaseId,
    state: CaseState,
    subsystem: String,
    age_days: i64,
    subject: &'a str,
    adopted: bool,
    /// A question to the robot's people is open.
    question: bool,
    replies: usize,
    /// Replies that could not be read (in the quarantine).
    unread: usize,
    first_reply: Option<String>,
    evidence: Option<String>,
    who: Option<String>,
    waits_on: Option<String>,
    /// What `?waits_on=` takes to list every case waiting on them (their
    /// bare address, which each spelling of it contains).
    waits_on_key: Option<String>,
}

fn list_rows<'a>(s: &AppState, list: &'a [Case]) -> Result<Vec<CaseRow<'a>>, WebError> {
    let now = Utc::now();
    let quarantined = s.store.quarantined().map_err(internal)?;
    let unread = crate::model::Quarantined::by_case(&quarantined);
    let mut cases = Vec::with_capacity(list.len());
    for c in list {
        let (events, thread) = s.store.history(&c.id).map_err(internal)?;
        let line = crate::digest::CaseLine::new(c, now);
        let f = crate::digest::followed(c, &events, &thread, &line);
        let waits = crate::model::case::waits_on_named(c, &events, &thread);
        cases.push(CaseRow {
            id: &c.id,
            state: c.state,
            subsystem: line.subsystem,
            age_days: (now - c.created).num_days(),
            subject: &c.subject,
            adopted: c.adopted,
            question: c.question.is_some(),
            replies: f.replies,
            unread: unread.get(&c.id).copied().unwrap_or(0),
            first_reply: f.first_reply,
            evidence: f.evidence,
            who: f.who,
            waits_on_key: waits.as_deref().map(crate::model::ids::bare_address),
            waits_on: waits,
        });
    }
    Ok(cases)
}

/// The case list page.
#[derive(Debug, Serialize)]
struct ListPage<'a> {
    total: usize,
    counts: &'a BTreeMap<String, usize>,
    cases: Vec<CaseRow<'a>>,
    states: Vec<Choice>,
    orders: Vec<Choice>,
    filter: FilterShown<'a>,
    pager: ListPager,
}

/// A state or an order in the filter's menus.
#[derive(Debug, Serialize)]
struct Choice {
    name: &'static str,
    selected: bool,
}

impl Choice {
    /// A menu of `names`, the one equal to `chosen` selected.
    fn menu<const N: usize>(names: [&'static str; N], chosen: Option<&str>) -> Vec<Choice> {
        names
            .into_iter()
            .map(|name| Choice {
                name,
                selected: chosen == Some(name),
            })
            .collect()
    }
}

/// The filter as the form shows it back.
#[derive(Debug, Serialize)]
struct FilterShown<'a> {
    subsystem: Option<&'a str>,
    age: Option<&'a str>,
    needs_human: bool,
    list: Option<&'a str>,
    year: Option<&'a str>,
    waits_on: Option<&'a str>,
    /// The order asked for, kept by the counts' links.
    sort: Option<&'a str>,
}

async fn list_page(State(s): State<Arc<AppState>>, Query(f): Query<Filter>) -> Response {
    let Listing {
        cases: list,
        counts,
        total,
        page,
        order,
    } = match filtered(&s, &f, CaseOrder::Newest) {
        Ok(x) => x,
        Err(WebError(code, why)) => return bad_filter(&s, code, &why),
    };
    let pages = list.len().div_ceil(PAGE_CASES).max(1);
    let page = page.min(pages);
    let (list, span) = page_of(list, page, PAGE_CASES);
    let cases = match list_rows(&s, &list) {
        Ok(x) => x,
        Err(e) => return e.into_response(),
    };
    let states = Choice::menu(CaseState::ALL.map(CaseState::as_str), f.state.as_deref());
    let shown = order.unwrap_or(CaseOrder::Newest).as_str();
    let orders = Choice::menu(CaseOrder::ALL.map(CaseOrder::as_str), Some(shown));
    let filter = FilterShown {
        subsystem: f.subsystem.as_deref(),
        age: f.age.as_deref(),
        needs_human: f.needs_human.is_some(),
        list: f.list.as_deref(),
        year: f.year.as_deref(),
        waits_on: f.waits_on.as_deref(),
        sort: order.map(CaseOrder::as_str),
    };
    let pager = ListPager {
        page,
        pages,
        span,
        previous: (page > 1).then(|| page_link(&f, page - 1)),
        next: (page < pages).then(|| page_link(&f, page + 1)),
    };
    let page = ListPage {
        total,
        counts: &counts,
        cases,
        states,
        orders,
        filter,
        pager,
    };
    s.page("Cases", "list", &page)
}

/// Where the list's pages are: this one, how many, and links to the pages
/// beside it under the same filter.
#[derive(Debug, Serialize)]
struct ListPager {
    page: usize,
    pages: usize,
    span: Span,
    previous: Option<String>,
    next: Option<String>,
}

/// The list's address for page `page` under the filter `f` (query-encoded).
fn page_link(f: &Filter, page: usize) -> String {
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in [
        ("state", &f.state),
        ("subsystem", &f.subsystem),
        ("list", &f.list),
        ("year", &f.year),
        ("age", &f.age),
        ("waits_on", &f.waits_on),
        ("needs_human", &f.needs_human),
        ("sort", &f.sort),
    ] {
        if let Some(v) = v.as_deref().filter(|v| !v.trim().is_empty()) {
            q.append_pair(k, v);
        }
    }
    q.append_pair("page", &page.to_string());
    format!("/?{}", q.finish())
}

/// A filter that says nothing the list takes: what was wrong, and the way
/// back to every case.
fn bad_filter(s: &AppState, code: StatusCode, why: &str) -> Response {
    let content = format!(
        "<h1>No such filter</h1>\n<p class=\"error\">{}</p>\n<p><a href=\"/\">All cases</a></p>\n",
        handlebars::html_escape(why),
    );
    s.framed(code, "No such filter", content)
        .unwrap_or_else(|_| error(code, why))
}

/// Messages of a case's thread per page (and twice as many events): a case
/// with ten thousand replies is a hundred pages, not one page of 46 MB.
pub const PAGE_MESSAGES: usize = 100;

/// `?page=N` (from 1) of a case's page and its JSON.
#[derive(Debug, Default, Deserialize)]
pub struct PageQuery {
    pub page: Option<String>,
}

/// Where one page of a list is: items `from` to `to` (from 1; `from` 0 on
/// an empty page) of `total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Span {
    pub from: usize,
    pub to: usize,
    pub total: usize,
}

/// Which page of a case this is, and where its messages and events are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PageInfo {
    pub page: usize,
    pub pages: usize,
    pub previous: Option<usize>,
    pub next: Option<usize>,
    pub messages: Span,
    pub events: Span,
}

/// A case as `/api/cases/ID` gives it: one page of its thread and history,
/// and the report it sent.
#[derive(Debug, Serialize)]
pub struct CaseData {
    pub case: Case,
    /// Whom the case waits on, from its whole history (not one page's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waits_on: Option<String>,
    /// Replies found to belong to the case that could not be read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub quarantined: Vec<crate::digest::UnreadMessage>,
    pub events: Vec<Event>,
    pub timeline: Vec<TimelineItem>,
    pub report: Option<String>,
    pub page: PageInfo,
}

/// `?page=N`, from 1 (the first when not given or empty).
fn page_number(p: Option<&str>) -> Result<usize, WebError> {
    match p.map(str::trim).filter(|p| !p.is_empty()) {
        None => Ok(1),
        Some(p) => p.parse::<usize>().ok().filter(|n| *n >= 1).ok_or_else(|| {
            WebError(
                StatusCode::BAD_REQUEST,
                format!("page={p:?}: a page number from 1"),
            )
        }),
    }
}

/// Page `page` (from 1) of `items`, `per` a page, with where it is.
fn page_of<T>(mut items: Vec<T>, page: usize, per: usize) -> (Vec<T>, Span) {
    let total = items.len();
    let pages = total.div_ceil(per).max(1);
    let page = page.clamp(1, pages);
    let from = ((page - 1) * per).min(total);
    let to = (from + per).min(total);
    items.truncate(to);
    items.drain(..from);
    let span = Span {
        from: from + usize::from(to > from),
        to,
        total,
    };
    (items, span)
}

/// A case's page of data, and every person's reply of its thread for the
/// settle form (the thread is read once for both).
fn case_data(
    s: &AppState,
    id: &str,
    page: Option<&str>,
) -> Result<(CaseData, Vec<SettleReply>), WebError> {
    let c = s
        .store
        .find_case(id)
        .map_err(|e| WebError(StatusCode::NOT_FOUND, e.to_string()))?;
    let page = page_number(page)?;
    let (events, thread) = s.store.history(&c.id).map_err(internal)?;
    let outbox = s.store.case_outbox(&c.id).map_err(internal)?;
    let replies = settle_replies(&thread);
    let timeline = crate::app::view::timeline(&outbox, &thread);
    let waits_on = crate::model::case::waits_on_named(&c, &events, &thread);
    let all = s.store.quarantined().map_err(internal)?;
    let quarantined = crate::app::view::of_case(&all, &c.id);
    let pages = timeline
        .len()
        .div_ceil(PAGE_MESSAGES)
        .max(events.len().div_ceil(2 * PAGE_MESSAGES))
        .max(1);
    let page = page.min(pages);
    let (timeline, messages) = page_of(timeline, page, PAGE_MESSAGES);
    let (events, event_span) = page_of(events, page, 2 * PAGE_MESSAGES);
    let report = s
        .store
        .outbox_raw(&c.message_id)
        .ok()
        .map(|raw| crate::flows::ingest::parse::body_text(&raw));
    let data = CaseData {
        case: c,
        waits_on,
        quarantined,
        events,
        timeline,
        report,
        page: PageInfo {
            page,
            pages,
            previous: (page > 1).then(|| page - 1),
            next: (page < pages).then(|| page + 1),
            messages,
            events: event_span,
        },
    };
    Ok((data, replies))
}

async fn case_page(
    State(s): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query<PageQuery>,
) -> Response {
    let (d, replies) = match case_data(&s, &id, q.page.as_deref()) {
        Ok(d) => d,
        Err(e) => return e.into_response(),
    };
    // Every person's reply of the thread, not only this page's: the one a
    // decision rests on may be on another page.
    let settle = s.settle_token.is_some().then(|| view::Settle {
        // `queued` is perfbot's own (`flows::learn::settle` refuses it).
        states: CaseState::ALL
            .into_iter()
            .filter(|s| *s != CaseState::Queued)
            .map(CaseState::as_str)
            .collect(),
        intents: crate::reply::understand::Intent::ALL
            .map(|i| i.as_str())
            .to_vec(),
        replies,
    });
    s.page(&format!("Case {id}"), "case", &view::case_page(&d, settle))
}

/// A reply the settle form offers as the one a decision rests on.
#[derive(Debug, Serialize)]
pub struct SettleReply {
    pub message_id: String,
    /// The sender's name, else address.
    pub from: String,
    pub date: Option<String>,
    /// What perfbot read in it.
    pub read: Option<String>,
}

/// Every person's reply of the case's thread, oldest first, for the settle
/// form.
fn settle_replies(thread: &[crate::model::ThreadEntry]) -> Vec<SettleReply> {
    thread
        .iter()
        .filter(|e| e.sender == crate::model::Sender::Person)
        .map(|e| SettleReply {
            message_id: e.message_id.to_string(),
            from: if e.from_name.is_empty() {
                e.from.clone()
            } else {
                e.from_name.clone()
            },
            date: e.date.map(crate::model::shown_minute),
            read: e.understanding.as_ref().map(|u| u.intent.clone()),
        })
        .collect()
}

fn digest(token: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes()).into()
}

/// An operator's decision on the dashboard's case page.
#[derive(Debug, Deserialize)]
pub struct SettleForm {
    pub state: String,
    pub reason: String,
    /// Who is settling (their name, for the timeline).
    pub operator: String,
    pub token: String,
    /// The reply the decision rests on (empty: perfbot finds it).
    #[serde(default)]
    pub reply: String,
}

/// Longest reason and operator name a form may give.
const MAX_REASON: usize = 2000;
const MAX_NAME: usize = 100;

/// `POST /case/{id}/settle`: as `cases set`, the state set with the reason
/// and the reply that led there labelled; only with the operator token
/// (typed into the form, so no other site can post it), then back to the
/// case page.
async fn settle(
    State(s): State<Arc<AppState>>,
    Path(id): Path<String>,
    axum::Form(f): axum::Form<SettleForm>,
) -> Response {
    back_to_case(&s, &id, settle_case(&s, &id, &f))
}

/// After an operator's form: back to the case page, or a page saying what
/// was wrong with a way back (a browser shows plain text as a dead end).
fn back_to_case(s: &AppState, id: &str, done: Result<(), WebError>) -> Response {
    match done {
        Ok(()) => (
            StatusCode::SEE_OTHER,
            [(header::LOCATION, format!("/case/{id}"))],
        )
            .into_response(),
        Err(WebError(code, why)) => {
            let back = match crate::model::case::CaseId::parse(id) {
                Some(id) => format!("<a href=\"/case/{id}\">Back to the case</a>"),
                None => "<a href=\"/\">Back to the cases</a>".to_string(),
            };
            let content = format!(
                "<h1>Not done</h1>\n<p class=\"error\">{}</p>\n<p>Nothing was changed. {back}</p>\n",
                handlebars::html_escape(&why),
            );
            // Without a layout, the words alone.
            s.framed(code, "Not done", content)
                .unwrap_or_else(|_| error(code, &why))
        }
    }
}

/// An operator's form checked: the token, a reason and a name, as plain
/// trimmed values.
struct Operator<'a> {
    name: &'a str,
    reason: &'a str,
}

fn check_operator<'a>(
    s: &AppState,
    id: &str,
    token: &str,
    name: &'a str,
    reason: &'a str,
) -> Result<Operator<'a>, WebError> {
    let Some(want) = &s.settle_token else {
        return Err(WebError(
            StatusCode::FORBIDDEN,
            "settling on the dashboard is off (web.operator_token_file or PERFBOT_WEB_TOKEN)"
                .into(),
        ));
    };
    if digest(token) != *want {
        tracing::warn!(case = %id, "dashboard: a form with a wrong operator token");
        return Err(WebError(
            StatusCode::FORBIDDEN,
            "wrong operator token".into(),
        ));
    }
    let (reason, name) = (reason.trim(), name.trim());
    if reason.is_empty() || reason.len() > MAX_REASON {
        return Err(bad(format!(
            "a reason is needed, at most {MAX_REASON} bytes"
        )));
    }
    if name.is_empty() || name.len() > MAX_NAME || name.chars().any(char::is_control) {
        return Err(bad(format!(
            "your name is needed, one line of at most {MAX_NAME} bytes"
        )));
    }
    Ok(Operator { name, reason })
}

fn bad(why: String) -> WebError {
    WebError(StatusCode::BAD_REQUEST, why)
}

/// A settle or label refused: the operator's mistake (400) or the store's.
fn refused(e: crate::flows::learn::SettleError) -> WebError {
    match e {
        crate::flows::learn::SettleError::Store(e) => internal(e),
        e => bad(e.to_string()),
    }
}

fn find_case(s: &AppState, id: &str) -> Result<crate::model::case::Case, WebError> {
    s.store
        .find_case(id)
        .map_err(|e| WebError(StatusCode::NOT_FOUND, e.to_string()))
}

fn settle_case(s: &AppState, id: &str, f: &SettleForm) -> Result<(), WebError> {
    let op = check_operator(s, id, &f.token, &f.operator, &f.reason)?;
    let state =
        CaseState::parse(&f.state).ok_or_else(|| bad(format!("unknown state {:?}", f.state)))?;
    let case = find_case(s, id)?;
    let cause = crate::model::case::Cause::Dashboard {
        user: op.name.to_string(),
        reason: op.reason.to_string(),
    };
    let by = format!("{} (dashboard)", op.name);
    let reply = Some(f.reply.trim()).filter(|r| !r.is_empty());
    let (c, label) =
        crate::flows::learn::settle(&s.store, &case.id, state, cause, &by, op.reason, reply)
            .map_err(refused)?;
    tracing::info!(case = %c.id, state = %c.state, by = %by, learned = label.is_some(), "settled on the dashboard");
    Ok(())
}

/// An operator's label of one reply on the dashboard's case page.
#[derive(Debug, Deserialize)]
pub struct LabelForm {
    pub reply: String,
    pub intent: String,
    pub reason: String,
    pub operator: String,
    pub token: String,
}

/// `POST /case/{id}/label`: as `labels set`, one reply of the case's thread
/// labelled, the case left as it is; only with the operator token.
async fn label(
    State(s): State<Arc<AppState>>,
    Path(id): Path<String>,
    axum::Form(f): axum::Form<LabelForm>,
) -> Response {
    back_to_case(&s, &id, label_reply(&s, &id, &f))
}

fn label_reply(s: &AppState, id: &str, f: &LabelForm) -> Result<(), WebError> {
    let op = check_operator(s, id, &f.token, &f.operator, &f.reason)?;
    let intent = crate::reply::understand::Intent::parse(&f.intent)
        .ok_or_else(|| bad(format!("unknown intent {:?}", f.intent)))?;
    let case = find_case(s, id)?;
    let by = format!("{} (dashboard)", op.name);
    let l = crate::flows::learn::label_reply(
        &s.store,
        &f.reply,
        Some(&case.id),
        intent,
        &by,
        op.reason,
    )
    .map_err(refused)?;
    tracing::info!(case = %case.id, reply = %l.message_id, label = %l.label, by = %by, "labelled on the dashboard");
    Ok(())
}

fn digest_value(
    s: &AppState,
    since: Option<&str>,
) -> Result<crate::flows::digest::Digest, WebError> {
    let now = Utc::now();
    // A period that cannot be read is the asker's mistake, said as such, not
    // a silent week.
    let back = match since {
        None => Duration::days(7),
        Some(text) => crate::flows::digest::parse_since(text).ok_or_else(|| {
            WebError(
                StatusCode::BAD_REQUEST,
                format!(
                    "since={text:?}: a period such as 7d, 36h or 2w, at most {} days",
                    crate::flows::digest::MAX_DAYS
                ),
            )
        })?,
    };
    crate::flows::digest::from_store(&s.store, now, now - back, s.config.digest_thresholds())
        .map_err(internal)
}

#[derive(Debug, Default, Deserialize)]
pub struct Since {
    pub since: Option<String>,
}

async fn digest_page(State(s): State<Arc<AppState>>, Query(q): Query<Since>) -> Response {
    match digest_value(&s, q.since.as_deref()) {
        Ok(d) => s.page("Digest", "digest", &crate::flows::digest::view(&d)),
        Err(e) => e.into_response(),
    }
}

async fn api_cases(State(s): State<Arc<AppState>>, Query(f): Query<Filter>) -> Response {
    let summaries = filtered(&s, &f, CaseOrder::Oldest).and_then(|l| {
        let quarantined = s.store.quarantined().map_err(internal)?;
        crate::app::view::CaseSummary::listed(&l.cases, |id| s.store.history(id), &quarantined)
            .map(|rows| Json(rows).into_response())
            .map_err(internal)
    });
    summaries.unwrap_or_else(|e| e.into_response())
}

async fn api_case(
    State(s): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query<PageQuery>,
) -> Response {
    match case_data(&s, &id, q.page.as_deref()) {
        Ok((d, _)) => Json(d).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn api_digest(State(s): State<Arc<AppState>>, Query(q): Query<Since>) -> Response {
    match digest_value(&s, q.since.as_deref()) {
        Ok(d) => Json(d).into_response(),
        Err(e) => e.into_response(),
    }
}

/// What `/healthz` and `/metrics` count.
#[derive(Debug, Serialize)]
struct Counters {
    mails_sent: u64,
    mails_failed: u64,
    messages_ingested: u64,
    messages_quarantined: u64,
    quarantine_released: u64,
    replies_handled: u64,
    reports_queued: u64,
    /// Messages in the quarantine now (a gauge: what an operator watches).
    quarantine_held: u64,
    cases_by_state: BTreeMap<&'static str, u64>,
}

impl Counters {
    /// The counters as (name, value), in `/metrics` order.
    fn totals(&self) -> [(&'static str, u64); 7] {
        [
            ("mails_sent", self.mails_sent),
            ("mails_failed", self.mails_failed),
            ("messages_ingested", self.messages_ingested),
            ("messages_quarantined", self.messages_quarantined),
            ("quarantine_released", self.quarantine_released),
            ("replies_handled", self.replies_handled),
            ("reports_queued", self.reports_queued),
        ]
    }
}

fn counters(s: &AppState) -> Counters {
    let m = &s.metrics;
    let mut cases_by_state = BTreeMap::new();
    if let Ok(cases) = s.store.cases() {
        for c in cases {
            *cases_by_state.entry(c.state.as_str()).or_insert(0u64) += 1;
        }
    }
    Counters {
        mails_sent: Metrics::get(&m.mails_sent),
        mails_failed: Metrics::get(&m.mails_failed),
        messages_ingested: Metrics::get(&m.messages_ingested),
        messages_quarantined: Metrics::get(&m.messages_quarantined),
        quarantine_released: Metrics::get(&m.quarantine_released),
        quarantine_held: s.store.quarantine_len() as u64,
        replies_handled: Metrics::get(&m.replies_handled),
        reports_queued: Metrics::get(&m.reports_queued),
        cases_by_state,
    }
}

/// `/healthz`: the counters, and that it answers.
#[derive(Debug, Serialize)]
struct Health {
    #[serde(flatten)]
    counters: Counters,
    status: &'static str,
}

async fn healthz(State(s): State<Arc<AppState>>) -> Response {
    Json(Health {
        counters: counters(&s),
        status: "ok",
    })
    .into_response()
}

async fn metrics(State(s): State<Arc<AppState>>) -> Response {
    let c = counters(&s);
    let mut out = String::new();
    // Typed, so a scraper rates the counters and not the gauges.
    for (k, n) in c.totals() {
        out.push_str(&format!("# TYPE perfbot_{k} counter\nperfbot_{k} {n}\n"));
    }
    let held = c.quarantine_held;
    out.push_str(&format!(
        "# TYPE perfbot_quarantine_held gauge\nperfbot_quarantine_held {held}\n"
    ));
    out.push_str("# TYPE perfbot_cases gauge\n");
    for (st, n) in &c.cases_by_state {
        out.push_str(&format!("perfbot_cases{{state=\"{st}\"}} {n}\n"));
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response()
}

/// `GET path` of the dashboard on the loopback `port`, as the bench and
/// the tests ask it (plain HTTP/1.1, one connection a request): the body of
/// a 200 answer; else the answer given (its head and body), or None when
/// none came within 5 s.
pub fn get_local(port: u16, path: &str) -> Result<String, Option<String>> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|_| None)?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .map_err(|_| None)?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(request.as_bytes()).map_err(|_| None)?;
    let mut out = String::new();
    s.read_to_string(&mut out).map_err(|_| None)?;
    match out.split_once("\r\n\r\n") {
        Some((head, body)) if head.starts_with("HTTP/1.1 200") => Ok(body.to_string()),
        _ => Err(Some(out)),
    }
}

/// Connections the dashboard serves at once; more wait for a slot.
pub const MAX_CONNECTIONS: usize = 64;
/// Connections whose request is still arriving, or that wait for a slot, at
/// most (each a task and a socket); past this, new connections are closed.
pub const MAX_PENDING: usize = 256;
/// A client has this long to send a request's headers (slowloris).
pub const HEADER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// A request waits this long for a slot, then is answered 503.
pub const QUEUE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// No connection lives longer than this, however it is used.
pub const CONNECTION_LIFETIME: std::time::Duration = std::time::Duration::from_secs(120);
/// The most of a request's head read before a slot is given.
const MAX_HEAD: usize = 16 << 10;

/// Serve `app` on `listener` until `stop` resolves. Unlike `axum::serve`, the
/// number of connections and the time to send headers are bounded, so that
/// half-open clients cannot take the file descriptors the rest of the daemon
/// needs (the spool, SMTP, sled). A connection gets one of the
/// `MAX_CONNECTIONS` slots only once its request's head has arrived: slow
/// senders wait without one (and time out), so they cannot keep `/healthz`
/// from answering, and a burst of real requests queues for a slot (fairly,
/// first come first served) instead of being dropped.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    stop: impl std::future::Future<Output = ()>,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let pending = Arc::new(tokio::sync::Semaphore::new(MAX_PENDING));
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            _ = &mut stop => break,
            a = listener.accept() => a,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                // EMFILE and friends: say so, and give the process a moment
                // instead of spinning.
                tracing::warn!(error = %e, "dashboard: accepting a connection failed");
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                continue;
            }
        };
        let Ok(ticket) = pending.clone().try_acquire_owned() else {
            tracing::debug!("dashboard: too many connections waiting; connection closed");
            drop(tcp);
            continue;
        };
        tokio::spawn(connection(tcp, ticket, slots.clone(), app.clone()));
    }
}

/// One connection: its request's head, then a slot, then hyper.
async fn connection(
    mut tcp: tokio::net::TcpStream,
    ticket: tokio::sync::OwnedSemaphorePermit,
    slots: Arc<tokio::sync::Semaphore>,
    app: Router,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;
    use tokio::io::AsyncWriteExt;

    let Ok(Ok(head)) = tokio::time::timeout(HEADER_TIMEOUT, read_head(&mut tcp)).await else {
        return;
    };
    if head.is_empty() {
        return;
    }
    let Ok(Ok(slot)) = tokio::time::timeout(QUEUE_WAIT, slots.acquire_owned()).await else {
        let _ = tcp
            .write_all(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .await;
        return;
    };
    drop(ticket);
    let _slot = slot;
    let io = Prefixed {
        head,
        at: 0,
        inner: tcp,
    };
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(io), TowerToHyperService::new(app));
    let _ = tokio::time::timeout(CONNECTION_LIFETIME, conn).await;
}

/// Read until the end of a request's head (a blank line), `MAX_HEAD` bytes
/// or the end of the stream; what was read is handed to hyper first.
async fn read_head(tcp: &mut tokio::net::TcpStream) -> std::io::Result<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 2048];
    while head.len() < MAX_HEAD {
        let n = tcp.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
        if head.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    Ok(head)
}

/// A stream whose first bytes were read already (the request's head).
struct Prefixed {
    head: Vec<u8>,
    at: usize,
    inner: tokio::net::TcpStream,
}

impl tokio::io::AsyncRead for Prefixed {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        if self.at < self.head.len() {
            let n = buf.remaining().min(self.head.len() - self.at);
            let at = self.at;
            buf.put_slice(&self.head[at..at + n]);
            self.at += n;
            return std::task::Poll::Ready(Ok(()));
        }
        std::pin::Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Prefixed {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::case::{Case, Cause};

    /// The dashboard of the default config over a store in `dir` that holds
    /// `cases` (each under its own Message-ID).
    fn serving(dir: &std::path::Path, cases: impl IntoIterator<Item = Case>) -> AppState {
        let store = Store::open(&dir.join("state")).unwrap();
        for c in cases {
            store.adopt_case(&c, Cause::system("test")).unwrap();
        }
        let config = Arc::new(Config::load(None).unwrap());
        AppState::new(config, Arc::new(store), Arc::default()).unwrap()
    }

    /// The list names whom a case waits on as their own mail does, and
    /// `?waits_on=` finds it by that name or by the report's spelling.
    #[test]
    fn the_case_list_names_whom_a_case_waits_on_as_the_digest_does() {
        let tmp = tempfile::tempdir().unwrap();
        let mut c = Case::sample("aaaaaaaaaaaa", CaseState::Reported, Utc::now());
        c.to = vec!["goralbaris <goralbaris@x>".into()];
        let s = serving(tmp.path(), [c.clone()]);
        let mut own = crate::model::ThreadEntry::sample("own@x", "goralbaris@x", "Looking.");
        own.from_name = "Baris Goral".into();
        s.store
            .record_thread_message(&c.id, &mut own, "reply")
            .unwrap();
        let listing = filtered(&s, &Filter::default(), CaseOrder::Oldest).unwrap();
        let rows = list_rows(&s, &listing.cases).unwrap();
        assert_eq!(
            rows[0].waits_on.as_deref(),
            Some("Baris Goral <goralbaris@x>")
        );
        assert_eq!(rows[0].waits_on_key.as_deref(), Some("goralbaris@x"));
        for who in ["Baris Goral", "goralbaris <", "goralbaris@x"] {
            let f = Filter {
                waits_on: Some(who.into()),
                ..Filter::default()
            };
            let listing = filtered(&s, &f, CaseOrder::Oldest).unwrap();
            assert_eq!(listing.cases.len(), 1, "?waits_on={who}");
        }
    }

    #[test]
    fn the_case_list_filters_by_list_and_year() {
        let tmp = tempfile::tempdir().unwrap();
        let at = |y: i32| chrono::TimeZone::with_ymd_and_hms(&Utc, y, 6, 1, 0, 0, 0).unwrap();
        let mut mm = Case::sample("aaaaaaaaaaaa", CaseState::Reported, at(2024));
        mm.cc = vec!["<linux-mm@kvack.org>".into()];
        mm.adopted = true;
        let mut xfs = Case::sample("bbbbbbbbbbbb", CaseState::Reported, at(2025));
        xfs.to = vec!["linux-xfs@vger.kernel.org".into()];
        xfs.message_id = crate::model::MessageId::parse("other@x").unwrap();
        xfs.adopted = true;
        let s = serving(tmp.path(), [mm, xfs]);
        let ids = |f: Filter| -> Vec<String> {
            let Ok(listing) = filtered(&s, &f, CaseOrder::Oldest) else {
                panic!("the listing failed");
            };
            listing.cases.iter().map(|c| c.id.to_string()).collect()
        };
        assert_eq!(ids(Filter::default()).len(), 2);
        let by_list = Filter {
            list: Some("Linux-MM".into()),
            ..Filter::default()
        };
        assert_eq!(ids(by_list), ["aaaaaaaaaaaa"]);
        let by_year = Filter {
            year: Some("2025".into()),
            ..Filter::default()
        };
        assert_eq!(ids(by_year), ["bbbbbbbbbbbb"]);
        let nothing = Filter {
            list: Some("linux-mm".into()),
            year: Some("2025".into()),
            ..Filter::default()
        };
        assert!(ids(nothing).is_empty());
        // An empty field filters nothing.
        let empty = Filter {
            year: Some(" ".into()),
            state: Some(String::new()),
            ..Filter::default()
        };
        assert_eq!(ids(empty).len(), 2);
    }

    /// A filter is checked once: each field that says nothing it takes is
    /// the asker's mistake, named with what it takes (never read as no
    /// filter, which would list every case under a filter still shown).
    #[test]
    fn a_filter_is_checked_field_by_field() {
        let f = |k: &str, v: &str| {
            let mut f = Filter::default();
            let v = Some(v.to_string());
            match k {
                "state" => f.state = v,
                "age" => f.age = v,
                "year" => f.year = v,
                "page" => f.page = v,
                "list" => f.list = v,
                "waits_on" => f.waits_on = v,
                "sort" => f.sort = v,
                _ => unreachable!(),
            }
            CaseQuery::try_from(&f).map_err(|WebError(code, why)| (code, why))
        };
        let bad = StatusCode::BAD_REQUEST;
        let q = |edit: fn(&mut CaseFilter), page| {
            let mut filter = CaseFilter::default();
            edit(&mut filter);
            CaseQuery {
                filter,
                order: None,
                page,
            }
        };
        let table: &[(&str, &str, Result<CaseQuery, &str>)] = &[
            (
                "state",
                "fixed",
                Ok(q(|f| f.state = Some(CaseState::Fixed), 1)),
            ),
            (
                "state",
                "bogus",
                Err("state=\"bogus\": a case state (queued, reported"),
            ),
            ("age", " 30 ", Ok(q(|f| f.age_days = Some(30), 1))),
            (
                "age",
                "9223372036854775807",
                Ok(q(|f| f.age_days = Some(crate::flows::digest::MAX_DAYS), 1)),
            ),
            ("age", "abc", Err("age=\"abc\": a number of days")),
            ("age", "-3", Err("age=\"-3\": a number of days")),
            ("year", "2024", Ok(q(|f| f.year = Some(2024), 1))),
            ("year", "20x6", Err("year=\"20x6\": a year")),
            ("year", "99999", Err("year=\"99999\": a year")),
            ("page", "3", Ok(q(|_| {}, 3))),
            ("page", "0", Err("page=\"0\": a page number from 1")),
            (
                "list",
                "Linux-MM",
                Ok(q(|f| f.list = Some("linux-mm".into()), 1)),
            ),
            (
                "waits_on",
                " Dave@Kernel.org ",
                Ok(q(|f| f.waits_on = Some("dave@kernel.org".into()), 1)),
            ),
            ("waits_on", "", Ok(q(|_| {}, 1))),
            (
                "sort",
                "updated",
                Ok(CaseQuery {
                    order: Some(CaseOrder::Updated),
                    ..q(|_| {}, 1)
                }),
            ),
            ("sort", "", Ok(q(|_| {}, 1))),
            (
                "sort",
                "age",
                Err("sort=\"age\": an order (oldest, newest, updated, state)"),
            ),
        ];
        for (k, v, want) in table {
            match (f(k, v), want) {
                (Ok(got), Ok(want)) => assert_eq!(&got, want, "{k}={v}"),
                (Err((code, why)), Err(want)) => {
                    assert_eq!(code, bad, "{k}={v}");
                    assert!(why.starts_with(want), "{k}={v}: {why}");
                }
                (got, want) => panic!("{k}={v}: {got:?}, not {want:?}"),
            }
        }
    }

    /// 250 cases are listed 100 a page; the links to the pages beside one
    /// keep its filter, and a page past the end is the last.
    #[test]
    fn a_long_case_list_is_paged() {
        let tmp = tempfile::tempdir().unwrap();
        let now = Utc::now();
        let cases = (0..250u32).map(|i| Case {
            message_id: crate::model::MessageId::parse(&format!("r{i}@x")).unwrap(),
            ..Case::sample(&format!("{i:012x}"), CaseState::Reported, now)
        });
        let s = Arc::new(serving(tmp.path(), cases));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let html = |f: Filter| {
            let r = rt.block_on(list_page(State(s.clone()), Query(f)));
            assert_eq!(r.status(), StatusCode::OK);
            let body = rt
                .block_on(axum::body::to_bytes(r.into_body(), usize::MAX))
                .unwrap();
            String::from_utf8(body.to_vec()).unwrap()
        };
        let first = html(Filter {
            state: Some("reported".into()),
            ..Filter::default()
        });
        assert_eq!(first.matches("class=\"case-link\"").count(), PAGE_CASES);
        assert!(first.contains("Page 1 of 3: cases 1–100 of 250"), "{first}");
        // Handlebars escapes `=` too (`&#x3D;`), as HTML allows.
        let link = |l: &str| format!("href=\"{}\"", handlebars::html_escape(l));
        assert!(
            first.contains(&format!("{}>next</a>", link("/?state=reported&page=2"))),
            "{first}"
        );
        let last = html(Filter {
            page: Some("7".into()),
            ..Filter::default()
        });
        assert!(last.contains("Page 3 of 3: cases 201–250 of 250"), "{last}");
        assert_eq!(last.matches("class=\"case-link\"").count(), 50);
        assert!(
            last.contains(&format!("{}>previous</a>", link("/?page=2"))),
            "{last}"
        );
        assert!(!last.contains(">next</a>"), "{last}");
        // The newest first, unless another order is asked for; the order
        // is kept from page to page.
        let ids = |html: &str| -> Vec<String> {
            html.split("class=\"case-link\" href=\"/case/")
                .skip(1)
                .map(|r| r[..12].to_string())
                .collect()
        };
        assert_eq!(ids(&first)[0], format!("{:012x}", 249));
        let oldest = html(Filter {
            sort: Some("oldest".into()),
            ..Filter::default()
        });
        assert_eq!(ids(&oldest)[0], format!("{:012x}", 0));
        assert!(
            oldest.contains(&format!("{}>next</a>", link("/?sort=oldest&page=2"))),
            "{oldest}"
        );
        assert!(
            oldest.contains("<option value=\"oldest\" selected>"),
            "{oldest}"
        );
        // The counts' links keep the order too (and only the order: they
        // count every case).
        assert!(
            oldest.contains("<a href=\"/?state=reported&amp;sort=oldest\">reported</a> 250"),
            "{oldest}"
        );
        assert!(
            first.contains("<a href=\"/?state=reported\">reported</a> 250"),
            "{first}"
        );
    }

    /// "Needs a human" lists the cases in needs-human and those that keep
    /// their decision beside an open question to the robot's people.
    #[test]
    fn needs_a_human_includes_open_questions() {
        let tmp = tempfile::tempdir().unwrap();
        let now = Utc::now();
        let human = Case::sample("aaaaaaaaaaaa", CaseState::NeedsHuman, now);
        let mut asked = Case::sample("bbbbbbbbbbbb", CaseState::AwaitingFix, now);
        asked.message_id = crate::model::MessageId::parse("b@x").unwrap();
        asked.question = Some(crate::model::case::Question::sample(
            "Could the robot test v2?",
            now,
        ));
        let mut quiet = Case::sample("cccccccccccc", CaseState::AwaitingFix, now);
        quiet.message_id = crate::model::MessageId::parse("c@x").unwrap();
        let s = serving(tmp.path(), [human, asked, quiet]);
        let f = Filter {
            needs_human: Some("1".into()),
            ..Filter::default()
        };
        let Ok(listing) = filtered(&s, &f, CaseOrder::Oldest) else {
            panic!("the listing failed");
        };
        let ids: Vec<String> = listing.cases.iter().map(|c| c.id.to_string()).collect();
        assert_eq!(ids, ["aaaaaaaaaaaa", "bbbbbbbbbbbb"]);
        let rows = list_rows(&s, &listing.cases).unwrap();
        assert!(!rows[0].question && rows[1].question);
    }

    /// A case with 250 replies is paged: 100 messages a page, `?page=`
    /// moves, a page past the end is the last, and a page that is no
    /// number is the asker's mistake.
    #[test]
    fn a_long_thread_is_paged() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("state")).unwrap();
        let mut c = Case::sample("cccccccccccc", CaseState::Reported, Utc::now());
        c.to = vec!["Author <a@x>".into()];
        let cause = Cause::system("test");
        store.adopt_case(&c, cause).unwrap();
        for i in 0..250 {
            let mut e =
                crate::model::ThreadEntry::sample(&format!("r{i}@x"), "a@x", &format!("reply {i}"));
            store.record_thread_message(&c.id, &mut e, "reply").unwrap();
        }
        let config = Arc::new(Config::load(None).unwrap());
        let s = AppState::new(config, Arc::new(store), Arc::default()).unwrap();
        let page = |p: Option<&str>| case_data(&s, "cccccccccccc", p).map(|(d, _)| d);
        let first = page(None).unwrap();
        assert_eq!(first.timeline.len(), 100);
        assert_eq!((first.page.pages, first.page.next), (3, Some(2)));
        let last = page(Some("3")).unwrap();
        assert_eq!(
            last.page.messages,
            Span {
                from: 201,
                to: 250,
                total: 250
            }
        );
        assert_eq!(last.page.next, None);
        assert_eq!(page(Some("99")).unwrap().page.page, 3);
        assert!(page(Some("0")).is_err());
        assert!(page(Some("x")).is_err());
        let html = s.hb.render("case", &view::case_page(&first, None)).unwrap();
        assert!(html.contains("Page 1 of 3"), "{html}");
        // Whom it waits on, from the whole history, on every page.
        assert!(
            html.contains("<td class=\"waits-on\">Author &lt;a@x&gt;</td>"),
            "{html}"
        );
        assert!(html.contains("?page=2"), "{html}");
        assert_eq!(html.matches("class=\"msg").count(), 100);
    }

    /// A real thread replayed (the robot's report adopted, the replies read):
    /// the case list shows the replies, the delay to the first one and the
    /// words that moved the case, with who wrote them.
    #[test]
    fn the_case_list_shows_how_a_followed_thread_went() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("state")).unwrap();
        let config = Arc::new(Config::load(None).unwrap());
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/threads/2023-10-20_cgroups_51d74c18a9");
        let r = crate::flows::robot::replay(&config, &store, &dir, &Default::default()).unwrap();
        assert_eq!(r.final_state, Some(CaseState::AwaitingRevert));
        let s = AppState::new(config, Arc::new(store), Arc::default()).unwrap();
        let listing = filtered(&s, &Filter::default(), CaseOrder::Oldest).unwrap();
        let rows = list_rows(&s, &listing.cases).unwrap();
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert!(row.adopted);
        let replies = r
            .steps
            .iter()
            .filter(|s| s.outcome == crate::flows::robot::StepOutcome::Reply)
            .count();
        assert_eq!(row.replies, replies);
        // The report: 21 October 2023, 00:17:56 +08:00 (16:17 UTC on the
        // 20th); the first reply: 20 October, 10:23:16 -07:00 (17:23 UTC).
        assert_eq!(row.first_reply.as_deref(), Some("1 h"));
        // The words shown are those of the reply that moved the case last
        // (a later one that agrees with it moves nothing).
        let moved = r
            .steps
            .windows(2)
            .rev()
            .find(|w| w[0].state != w[1].state)
            .map(|w| &w[1])
            .unwrap();
        let evidence = row.evidence.clone().unwrap();
        assert_eq!(Some(&evidence), moved.evidence.as_ref());
        let key = row.waits_on_key.clone().unwrap();
        let page = ListPage {
            total: 1,
            counts: &BTreeMap::new(),
            cases: rows,
            states: Vec::new(),
            orders: Vec::new(),
            filter: FilterShown {
                subsystem: None,
                age: None,
                needs_human: false,
                list: None,
                year: None,
                waits_on: None,
                sort: None,
            },
            pager: ListPager {
                page: 1,
                pages: 1,
                span: Span {
                    from: 1,
                    to: 1,
                    total: 1,
                },
                previous: None,
                next: None,
            },
        };
        let html = s.hb.render("list", &page).unwrap();
        assert!(
            html.contains("<td class=\"first-reply\">1 h</td>"),
            "{html}"
        );
        assert!(html.contains("<p class=\"counts\">1 case:"), "{html}");
        let shown = handlebars::html_escape(&evidence);
        assert!(html.contains(&shown), "{html}");
        // Whom it waits on links to every case waiting on them, by the bare
        // address each spelling of it contains.
        assert!(key.contains('@') && !key.contains('<'), "{key}");
        let link = format!("<a href=\"/?waits_on={}\">", key.replace('@', "%40"));
        assert!(html.contains(&link), "{link} in {html}");
        // The case page says whose replies are read as the robot's: here
        // the report's sender alone (one report says nothing of its team).
        let (d, _) = case_data(&s, r.case.as_deref().unwrap(), None).unwrap();
        let html = s.hb.render("case", &view::case_page(&d, None)).unwrap();
        assert!(
            html.contains("<th>The robot's people</th><td>oliver.sang@intel.com &mdash;"),
            "{html}"
        );
    }

    /// A report read at a glance only (its body in a layout not read) says
    /// so on its case page, with the reason.
    #[test]
    fn the_case_page_says_a_report_was_read_at_a_glance() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("state")).unwrap();
        let config = Arc::new(Config::load(None).unwrap());
        let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/threads/2023-10-20_cgroups_51d74c18a9");
        let dir = tmp.path().join("thread");
        std::fs::create_dir(&dir).unwrap();
        let raw = std::fs::read(from.join("00-report.eml")).unwrap();
        let text = String::from_utf8_lossy(&raw);
        let cut = text.find("\ntestcase:").unwrap();
        std::fs::write(dir.join("00-report.eml"), &text[..cut + 1]).unwrap();
        let r = crate::flows::robot::replay(&config, &store, &dir, &Default::default()).unwrap();
        let s = AppState::new(config, Arc::new(store), Arc::default()).unwrap();
        let (d, _) = case_data(&s, r.case.as_deref().unwrap(), None).unwrap();
        let html = s.hb.render("case", &view::case_page(&d, None)).unwrap();
        assert!(
            html.contains(
                "<th>Read</th><td class=\"unread\">at a glance only (Subject, sentence, headers): "
            ),
            "{html}"
        );
        assert!(html.contains("no &quot;testcase:&quot; line"), "{html}");
        // And the digest lists it for the operators.
        let d = digest_value(&s, None).unwrap();
        let html =
            s.hb.render("digest", &crate::flows::digest::view(&d))
                .unwrap();
        assert!(
            html.contains("<h2>Reports read at a glance only (1)</h2>"),
            "{html}"
        );
        assert!(
            html.contains(&format!(
                "<a href=\"/case/{0}\">{0}</a>",
                r.case.as_deref().unwrap()
            )),
            "{html}"
        );
    }

    /// The digest page says whom the open cases wait on: each person links
    /// to every case waiting on them, their longest waits shown and the
    /// rest one link away.
    #[test]
    fn the_digest_page_links_whom_cases_wait_on() {
        let tmp = tempfile::tempdir().unwrap();
        let now = Utc::now();
        let cases = (0..5i64).map(|i| {
            let created = now - chrono::Duration::days(i);
            Case {
                message_id: crate::model::MessageId::parse(&format!("r{i}@x")).unwrap(),
                to: vec!["Ann Author <ann+lkml@example.org>".into()],
                ..Case::sample(&format!("{i:012x}"), CaseState::Reported, created)
            }
        });
        let s = serving(tmp.path(), cases);
        let d = digest_value(&s, None).unwrap();
        let html =
            s.hb.render("digest", &crate::flows::digest::view(&d))
                .unwrap();
        let link = "href=\"/?waits_on=ann%2Blkml%40example.org\"";
        let want = format!(
            "<h2 id=\"waiting-on\">Waiting on (1 person, 5 open cases)</h2>\n<ul>\n\
             <li><a class=\"waits-on\" {link}>Ann Author &lt;ann+lkml@example.org&gt;</a> (5 cases): \
             <a href=\"/case/000000000004\">000000000004</a> <span class=\"state\">reported</span> 4d, \
             <a href=\"/case/000000000003\">000000000003</a> <span class=\"state\">reported</span> 3d, \
             <a href=\"/case/000000000002\">000000000002</a> <span class=\"state\">reported</span> 2d, \
             <a {link}>and 2 more</a></li>"
        );
        assert!(html.contains(&want), "{html}");
    }

    /// The digest page names the mail perfbot kept but could not read, from
    /// the store, its words escaped.
    #[test]
    fn the_digest_page_names_quarantined_mail() {
        let tmp = tempfile::tempdir().unwrap();
        let s = serving(tmp.path(), []);
        let at = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 11, 1, 0, 0, 0).unwrap();
        let case = CaseId::parse("0123456789ab").unwrap();
        let why = "not a mail: <script>";
        let q = crate::model::Quarantined::sample("cd", "m@x", why, at, Some(&case));
        s.store.quarantine(&q, b"junk\n").unwrap();
        let d = digest_value(&s, None).unwrap();
        // Scripts (`/api/digest`) get the whole hash; the page its start.
        assert_eq!(d.unread.quarantined[0].hash, q.hash);
        let html =
            s.hb.render("digest", &crate::flows::digest::view(&d))
                .unwrap();
        let want = "<li>2026-11-01 00:00 UTC <code>cdcdcdcdcdcdcdcd</code> &lt;m@x&gt;, a reply in case <a href=\"/case/0123456789ab\">0123456789ab</a>: not a mail: &lt;script&gt;</li>";
        assert!(
            html.contains("<h2>Mail that could not be read (1)</h2>"),
            "{html}"
        );
        assert!(html.contains(want), "{html}");
    }

    /// The case page names a reply of its thread that could not be read,
    /// and the list counts it in the case's row; a case with none says
    /// nothing of it.
    #[test]
    fn the_case_page_names_its_replies_that_could_not_be_read() {
        let tmp = tempfile::tempdir().unwrap();
        let mine = Case::sample("0123456789ab", CaseState::Reported, Utc::now());
        let mut other = Case::sample("bbbbbbbbbbbb", CaseState::Reported, Utc::now());
        other.message_id = crate::model::MessageId::parse("other@x").unwrap();
        let s = serving(tmp.path(), [mine.clone(), other.clone()]);
        let at = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 11, 1, 0, 0, 0).unwrap();
        let why = "more than 200 MIME parts";
        let q = crate::model::Quarantined::sample("cd", "m@x", why, at, Some(&mine.id));
        s.store.quarantine(&q, b"junk\n").unwrap();
        let page = |c: &Case| {
            let (d, _) = case_data(&s, c.id.as_str(), None).unwrap();
            s.hb.render("case", &view::case_page(&d, None)).unwrap()
        };
        let html = page(&mine);
        let want = "<tr><th>Not read</th><td class=\"unread\">&lt;m@x&gt;, quarantined 2026-11-01 00:00 UTC (<code>cdcdcdcdcdcdcdcd</code>): more than 200 MIME parts &mdash;";
        assert!(html.contains(want), "{html}");
        assert!(!page(&other).contains("Not read"));

        let s = Arc::new(s);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let r = rt.block_on(list_page(State(s.clone()), Query(Filter::default())));
        let body = rt
            .block_on(axum::body::to_bytes(r.into_body(), usize::MAX))
            .unwrap();
        let html = String::from_utf8(body.to_vec()).unwrap();
        let unread =
            "<span class=\"unread\" title=\"could not be read: see the case\">+1 not read</span>";
        assert_eq!(html.matches(unread).count(), 1, "{html}");
        let row = html.split("<tr>").find(|r| r.contains(unread)).unwrap();
        assert!(row.contains("/case/0123456789ab"), "{row}");
    }

    /// `/metrics` is Prometheus text: each counter and gauge typed once,
    /// before its samples; the quarantine's gauge counts what it holds now.
    #[test]
    fn metrics_are_typed_prometheus_text() {
        let tmp = tempfile::tempdir().unwrap();
        let now = Utc::now();
        let s = serving(
            tmp.path(),
            [Case::sample("aaaaaaaaaaaa", CaseState::Reported, now)],
        );
        for hash in ["ab", "cd"] {
            let q = crate::model::Quarantined::sample(hash, "m@x", "junk", now, None);
            s.store.quarantine(&q, b"junk\n").unwrap();
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let r = rt.block_on(metrics(State(Arc::new(s))));
        let body = rt
            .block_on(axum::body::to_bytes(r.into_body(), usize::MAX))
            .unwrap();
        let text = String::from_utf8(body.to_vec()).unwrap();
        for want in [
            "# TYPE perfbot_mails_sent counter\nperfbot_mails_sent 0\n",
            "# TYPE perfbot_quarantine_held gauge\nperfbot_quarantine_held 2\n",
            "# TYPE perfbot_cases gauge\nperfbot_cases{state=\"reported\"} 1\n",
        ] {
            assert!(text.contains(want), "{want}: {text}");
        }
        // Every sample's metric is typed, once, before it.
        let mut typed = std::collections::HashSet::new();
        for line in text.lines() {
            if let Some(t) = line.strip_prefix("# TYPE ") {
                let name = t.split(' ').next().unwrap();
                assert!(typed.insert(name.to_string()), "typed twice: {name}");
            } else {
                let name = line.split(['{', ' ']).next().unwrap();
                assert!(typed.contains(name), "untyped: {line}");
            }
        }
    }
}
