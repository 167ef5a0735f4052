"""The traces list and the trace page: reading a run, annotating it in place.

The list is `traces.listing` (keyset pages, sorted by a column, filtered on what people said), with every
view state in the address. The trace page shows the run's totals in its header, its spans as a tree on a
shared time axis (`console.trace_tree`) beside the conversation (the steps in order, with what people said
on each), and one span at a time in a panel (`console.span_panel`): its input and output, attributes,
events, the span as received, and the project's human reviews on it. The panel is a fragment of its own
(`GET /ui/traces/{id}/spans/{span}`) that the page fetches when a span is picked, and renders in place when
the address names a span (`?span=`), so a link to a span survives a reload.

Rating, commenting (on the step or on text selected in it) and flagging a label error save in place
through JSON routes that call `annotations.service`, so the rules and their sentences are the rm
surface's. Human reviews on the whole trace and on a span are set in place through `reviews.annotate`, as
the /v2 span annotation route and the review screen do.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping, ValuesView
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from sqlalchemy.orm import Session
from starlette.responses import JSONResponse, Response

from redline.annotations import service as annotation_service
from redline.annotations.document import feedback_fields
from redline.annotations.models import Annotation
from redline.annotations.schemas import AnnotationChange, AnnotationIn
from redline.console import traces_listing as listing
from redline.console.areas import Area
from redline.console.credit import heatmap
from redline.console.deps import Changer, Db, Viewer
from redline.console.nav import Crumb
from redline.console.pages.review import ReviewSave
from redline.console.pages.trace_actions import action_bar, said
from redline.console.paging import cursor_url
from redline.console.rendering import fragment
from redline.console.session_links import session_link
from redline.console.span_panel import SpanPanel, span_panel
from redline.console.tool_calls import answered
from redline.console.trace_filters import filter_values, filters_from
from redline.console.trace_tree import (
    CATEGORIES,
    LABELS,
    SHORT,
    PageRow,
    TraceTree,
    cost_text,
    duration_text,
    span_row,
    subtree_rows,
    trace_tree,
)
from redline.db.id_pages import MAX_LIMIT
from redline.errors import NotFound
from redline.identity.models import Project
from redline.identity.service import Actor, ProjectRole, holds, project_role, visible_projects
from redline.learning import scoring
from redline.queues.annotation.blind import hidden_from
from redline.reviews import annotate
from redline.reviews import service as review_keys
from redline.reviews.models import ReviewKey
from redline.reviews.said import Said, own_value, said_about
from redline.reviews.schemas import ValueIn
from redline.reviews.values import number_text
from redline.sentences import counted, listed
from redline.traces import service as traces
from redline.traces.models import Span, Step, Trace
from redline.traces.otlp.model import RawSpan
from redline.traces.otlp.store import stored_span
from redline.traces.prices import price_table
from redline.traces.service import RunView
from redline.web.addresses import path_id

router = APIRouter()

PAGE_SIZE = 50
TRACES = Crumb("Traces", "/ui/traces")
AREA = Area("traces", "traces")

# The list's columns, in order, with their headers; the trace's own name is always shown.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("agent", "Agent"),
    ("version", "Version"),
    ("status", "Status"),
    ("when", "When"),
    ("steps", "Steps"),
    ("ratings", "Ratings"),
    ("comments", "Comments"),
    ("corrections", "Corrections"),
    ("score", "Latest score"),
)
STATUSES = ("running", "completed", "failed", "cancelled", "suspended")
# The "has …" filters: the address's parameter, the filter's field, its label.
HAS_FILTERS = (
    ("rated", "has_ratings", "Ratings"),
    ("commented", "has_comments", "Comments"),
    ("corrected", "has_corrections", "Corrections"),
)
# A tool result longer than this (or with more lines) is folded: it is read far less than the decisions.
FOLD_CHARS = 600
FOLD_LINES = 12
NOT_SCORED = "No reward model has scored this trace yet."


# --------------------------------------------------------------------------------------------------- list


def _scored(session: Session, rows: list[listing.TraceRow]) -> list[listing.TraceRow]:
    """The page's rows with each one's latest score, by whichever reward model gave it last."""
    latest = scoring.latest_scores(session, [row.id for row in rows])
    return [
        replace(row, latest_score=latest[row.id].score.score) if row.id in latest else row for row in rows
    ]


def scored_words(scored: list[tuple[str, int]], where: str) -> str:
    """What the list says below its Latest score column: which models scored how many traces `where`
    (a project's name, or "your projects"), most first, or that none has."""
    if not scored:
        return f"Latest score: no reward model has scored a trace in {where} yet, so the column is empty."
    (first, first_count), *others = scored
    said = [f"{first} has scored {counted(first_count, 'trace')}"]
    said += [f"{name} {counted(count, 'trace')}" for name, count in others]
    return f"Latest score: the newest score a reward model gave the trace. In {where}, {listed(said)}."


def _where(projects: list[tuple[Project, ProjectRole]], chosen: uuid.UUID | None) -> str:
    """The projects the list draws from, as the footer names them."""
    named = [project.name for project, _ in projects if chosen is None or project.id == chosen]
    return named[0] if len(named) == 1 else "your projects"


@router.get("/traces")
def trace_list(
    request: Request,
    who: Viewer,
    db: Db,
    project: str | None = None,
    agent: str | None = None,
    version: str | None = None,
    status: str | None = None,
    rated: str | None = None,
    commented: str | None = None,
    corrected: str | None = None,
    since: str | None = None,
    until: str | None = None,
    sort: str | None = None,
    cols: Annotated[list[str] | None, Query()] = None,
    after: str | None = None,
    before: str | None = None,
) -> Response:
    asked = {
        "project": project,
        "agent": agent,
        "version": version,
        "status": status,
        "rated": rated,
        "commented": commented,
        "corrected": corrected,
        "since": since,
        "until": until,
    }
    filters = filters_from(asked)
    project_id = filters.project_id
    sort_key, descending = listing.parse_sort(sort)
    with db.read() as session:
        found = listing.list_traces(
            session, who.actor, filters, sort=sort, limit=PAGE_SIZE, after=after, before=before
        )
        projects = visible_projects(session, who.actor)
        agents = listing.agent_names(session, who.actor, project_id)
        rows = _scored(session, found.rows)
        # The list checked access to the project asked for; without one it draws from every visible one.
        scope = [project_id] if project_id else [p.id for p, _ in projects]
        scored = scoring.scored_counts(session, scope)
        one_page = found.before is None and found.after is None
        bar = action_bar(session, who.actor, asked, filters, one_page=one_page)
    known = {key for key, _ in COLUMNS}
    shown_cols = [key for key in cols if key in known] if cols else [key for key, _ in COLUMNS]
    return AREA.page(
        request,
        who,
        "list",
        "Traces",
        Crumb("Traces"),
        rows=rows,
        scored=scored_words(scored, _where(projects, project_id)),
        project_names={p.id: p.name for p, _ in projects},
        projects=[(str(p.id), p.name) for p, _ in projects],
        many_projects=len(projects) > 1,
        agents=agents,
        statuses=STATUSES,
        has_filters=HAS_FILTERS,
        columns=COLUMNS,
        cols=shown_cols,
        sort=f"{'-' if descending else ''}{sort_key}",
        values=filter_values(asked),
        filtered=any(asked.values()),
        previous_url=cursor_url(request, before=found.before) if found.before else None,
        next_url=cursor_url(request, after=found.after) if found.after else None,
        bar=bar,
        **said(request),
    )


# ------------------------------------------------------------------------------------------- trace page


@dataclass(frozen=True)
class Piece:
    """A run of a step's text, marked when a quote covers it (the annotation ids whose quote it is)."""

    text: str
    quotes: tuple[str, ...] = ()


@dataclass
class StepView:
    """One step as the conversation shows it. A tool call carries its result (`result`), shown under
    the call as one unit, each step still with its own anchor, annotations and controls."""

    step: Step
    pieces: list[Piece]
    arguments: str | None
    folded: bool
    said: list[Annotation] = field(default_factory=list)
    result: StepView | None = None

    @property
    def arguments_folded(self) -> bool:
        return _long(self.arguments or "")


def pieces(content: str, said: list[Annotation]) -> list[Piece]:
    """The text cut where quotes begin and end, at the offsets the service found them (on save, and
    again whenever the step's words changed: a fuzzy one at its changed words). A detached quote has
    none, and the offsets of a step whose content was erased no longer fit it: neither is marked."""
    bounds = {0, len(content)}
    quotes: list[tuple[int, int, str]] = []
    for annotation in said:
        quote = annotation.quote or {}
        start, end = quote.get("start"), quote.get("end")
        if not (isinstance(start, int) and isinstance(end, int)):
            continue
        if 0 <= start < end <= len(content):
            quotes.append((start, end, str(annotation.id)))
            bounds.update((start, end))
    cuts = sorted(bounds)
    return [
        Piece(content[a:b], tuple(ident for start, end, ident in quotes if start <= a and b <= end))
        for a, b in pairwise(cuts)
        if b > a
    ]


def _long(text: str) -> bool:
    return len(text) > FOLD_CHARS or text.count("\n") >= FOLD_LINES


def _folded(step: Step) -> bool:
    return step.role == "tool" and _long(step.content)


def _arguments(step: Step) -> str | None:
    """A tool call's arguments pretty-printed (arguments a tracer kept as a JSON string too); "" for a
    call without any, which the page writes in its line rather than as an empty box."""
    if step.tool_name is None or step.role != "assistant":
        return None
    arguments = step.tool_input
    if isinstance(arguments, str):
        text: str = arguments
        try:
            arguments = json.loads(text)
        except ValueError:
            return text.strip()
    return json.dumps(arguments, indent=2, ensure_ascii=False) if arguments else ""


def conversation(steps: list[Step], said: dict[uuid.UUID | None, list[Annotation]]) -> list[StepView]:
    """The steps in order as the page shows them, what was said on each beside it, and each tool result
    that answers a call under that call rather than again on its own."""
    views = {
        step.id: StepView(
            step,
            pieces(step.content, said.get(step.id, [])),
            _arguments(step),
            _folded(step),
            said.get(step.id, []),
        )
        for step in steps
    }
    results = answered(steps)
    for call, result in results.items():
        views[steps[call].id].result = views[steps[result].id]
    placed = set(results.values())
    return [views[step.id] for place, step in enumerate(steps) if place not in placed]


def trace_name(view: RunView) -> str:
    """How the breadcrumbs and the list name a trace: its title, its external id, else what made it."""
    trace = view.trace
    return (
        trace.title
        or trace.external_id
        or f"{view.agent_name or view.flow_name or 'Trace'} · {str(trace.id)[:8]}"
    )


def _is_feedback(annotation: Annotation) -> bool:
    """A rating or comment (the rm kind); review values and evaluator results are shown apart."""
    return annotation.key is None and annotation.source == "human"


def _role_in(session: Session, actor: Actor, project_id: uuid.UUID) -> ProjectRole | None:
    return project_role(session, actor, session.get_one(Project, project_id))


@dataclass
class ReviewPlace:
    """The whole trace or one of its spans, as its panel shows the human reviews on it.

    `address` names it in the save route's path: a span's own id, or the trace's id for the trace as a
    whole (as queue items name it). `mine` is the signed-in writer's value of each of the project's keys,
    which the widgets show; `said` is everything else said there: other people's values, values under
    keys the project no longer defines, evaluator results.
    """

    address: str
    name: str
    kind: str | None
    whole: bool = False
    mine: dict[str, Any] = field(default_factory=dict)
    said: list[Said] = field(default_factory=list)


class Places(Mapping[str | None, ReviewPlace]):
    """The whole trace (under None) and each span (under its span id) as review places, a span's made
    when it is first asked for: a run of thousands of spans has something said on a few, and a page or
    panel shows one. `values()` are the places made so far, every one where something was said among
    them; a span's not made yet has nothing said."""

    def __init__(self, whole: ReviewPlace, spans: Mapping[str, tuple[str, str | None]]):
        self._spans = spans
        self._made: dict[str | None, ReviewPlace] = {None: whole}

    def __getitem__(self, key: str | None) -> ReviewPlace:
        made = self._made.get(key)
        if made is None:
            name, kind = self._spans[key]  # type: ignore[index]
            made = self._made[key] = ReviewPlace(key, name, kind)  # type: ignore[arg-type]
        return made

    def __contains__(self, key: object) -> bool:
        return key is None or key in self._spans

    def __iter__(self) -> Iterator[str | None]:
        yield None
        yield from self._spans

    def __len__(self) -> int:
        return 1 + len(self._spans)

    def values(self) -> ValuesView[ReviewPlace]:
        return self._made.values()


def review_places(
    trace: Trace,
    spans: Mapping[str, tuple[str, str | None]],
    reviews: list[Said],
    actor: Actor,
    keys: list[ReviewKey],
    can_write: bool,
) -> Places:
    """The whole trace (under None) and each span (under its id; `spans` gives its name and kind), with
    what was said there."""
    places = Places(ReviewPlace(str(trace.id), "The whole trace", None, whole=True), spans)
    defined = {key.key for key in keys}
    for item in reviews:
        if item.span_key not in places:
            continue
        place = places[item.span_key]
        if can_write and own_value(item, actor) and item.annotation.key in defined:
            place.mine[str(item.annotation.key)] = item.annotation.value
        else:
            place.said.append(item)
    return places


@dataclass
class TraceRead:
    """What the trace page and its span panel read of one run, in one transaction."""

    view: RunView
    feedback: list[Annotation]
    places: Places
    keys: list[ReviewKey]
    role: ProjectRole | None
    tree: TraceTree

    @property
    def can_write(self) -> bool:
        return holds(self.role, "write")

    @property
    def trace(self) -> Trace:
        return self.view.trace


@dataclass
class SpanRead:
    """What one span's panel reads of its run, in one transaction, without the run's other spans'
    contents or its steps (`_read_span`)."""

    trace: Trace
    keys: list[ReviewKey]
    role: ProjectRole | None
    panel: SpanPanel
    place: ReviewPlace

    @property
    def can_write(self) -> bool:
        return holds(self.role, "write")


def _said(session: Session, actor: Actor, trace: Trace) -> tuple[list[Annotation], list[Said]]:
    """What people said on the run: ratings and comments; review values (but those blind review hides
    from the actor) and evaluator results."""
    hidden = hidden_from(session, actor)
    feedback = [a for a in annotation_service.for_trace(session, actor, trace.id, hidden) if _is_feedback(a)]
    return feedback, said_about(session, [trace.id], hidden)[trace.id]


def _said_and_keys(
    session: Session, actor: Actor, trace: Trace
) -> tuple[list[Annotation], list[Said], ProjectRole | None, list[ReviewKey]]:
    """What people said on the run (`_said`), the actor's role in its project and the project's review
    keys."""
    feedback, reviews = _said(session, actor, trace)
    role = _role_in(session, actor, trace.project_id)
    keys = review_keys.list_keys(session, actor, project_id=trace.project_id, limit=MAX_LIMIT).items
    # In key order, as a queue that names no reviews offers its project's.
    keys.sort(key=lambda key: key.key)
    return feedback, reviews, role, keys


def _said_by_span(
    feedback: list[Annotation], reviews: list[Said], span_ids: Mapping[uuid.UUID, str]
) -> dict[str, int]:
    """How many things were said about each span, by its span id; `span_ids` maps the spans' row ids to
    their span ids."""
    counts: dict[str, int] = {}
    for span_id in [item.span_key for item in reviews] + [span_ids.get(a.span_id) for a in feedback]:  # type: ignore[arg-type]
        if span_id is not None:
            counts[span_id] = counts.get(span_id, 0) + 1
    return counts


def _read_trace(session: Session, actor: Actor, ident: uuid.UUID, prices_file: str | None) -> TraceRead:
    trace = traces.readable_trace(session, actor, ident, "read")
    # The steps as objects, the spans as plain rows without their events and links: a run of thousands
    # of spans reads several times faster so (bench/console.py); the open span is read whole.
    [view] = traces.views_of(session, [trace], with_steps=True)
    spans = traces.span_figures(session, trace)
    feedback, reviews, role, keys = _said_and_keys(session, actor, trace)
    tree = trace_tree(
        trace,
        spans,
        view.steps,
        price_table(prices_file),
        annotations=len(feedback) + len(reviews),
        said_by_span=_said_by_span(feedback, reviews, {span.id: span.span_id for span in spans}),
    )
    named = {span.span_id: (span.name, span.kind) for span in spans}
    places = review_places(trace, named, reviews, actor, keys, holds(role, "write"))
    return TraceRead(view, feedback, places, keys, role, tree)


def _no_span(span_id: str) -> NotFound:
    return NotFound("span", span_id, f'This trace has no span "{span_id}".')


def _stored(session: Session, trace: Trace, span: Span) -> RawSpan | None:
    """A span that came over OTLP as it arrived, with its resource and scope; the trace's external id is
    its OTLP id. None for a span sent in the native format."""
    if span.resource_id is None or not trace.external_id:
        return None
    return stored_span(session, span, trace.external_id)


def _read_span(
    session: Session, actor: Actor, ident: uuid.UUID, span_id: str, prices_file: str | None
) -> SpanRead:
    """One span's panel as the page's would show it (`_span_panel`), reading that span whole and of the
    others only their outline (ids, parents, names, times): its depth, bar and parent come out the same,
    at a cost that hardly grows with the run's size."""
    trace = traces.readable_trace(session, actor, ident, "read")
    span = traces.run_span(session, trace, span_id)
    if span is None:
        raise _no_span(span_id)
    feedback, reviews, role, keys = _said_and_keys(session, actor, trace)
    outline = traces.span_outline(session, trace)
    said = sum(item.span_key == span_id for item in reviews) + sum(a.span_id == span.id for a in feedback)
    row = span_row(trace, span, outline, price_table(prices_file), said=said)
    if row is None:
        raise _no_span(span_id)
    names = {one.span_id: one.name for one in outline}
    panel = span_panel(row, span, names.get(span.parent_span_id or ""), _stored(session, trace, span))
    panel.said = [a for a in feedback if a.span_id == span.id]
    spans = {span.span_id: (span.name, span.kind)}
    place = review_places(trace, spans, reviews, actor, keys, holds(role, "write"))[span_id]
    return SpanRead(trace, keys, role, panel, place)


def _span_panel(session: Session, read: TraceRead, span_id: str) -> SpanPanel:
    """The panel of one of the run's spans; not found, in a sentence naming it, when the run has none
    by that id."""
    row = next((row for row in read.tree.rows if row.span.span_id == span_id), None)
    span = traces.run_span(session, read.trace, span_id)
    if row is None or span is None:
        raise _no_span(span_id)
    names = {one.span.span_id: one.span.name for one in read.tree.rows}
    panel = span_panel(row, span, names.get(span.parent_span_id or ""), _stored(session, read.trace, span))
    panel.said = [a for a in read.feedback if a.span_id == span.id]
    return panel


def _session_link(trace: Trace) -> tuple[str, str] | None:
    """The run's session id and the page of its other runs; None for a run of no session."""
    link = session_link(trace)
    return (trace.session_id, link) if trace.session_id is not None and link is not None else None


def _prices_file(request: Request) -> str | None:
    """REDLINE_PRICES_FILE, as the console was made with it."""
    return request.app.state.prices_file  # type: ignore[no-any-return]


@router.get("/traces/{trace_id}")
def trace_page(request: Request, trace_id: str, who: Viewer, db: Db, span: str | None = None) -> Response:
    ident = path_id(trace_id, "run")
    with db.read() as session:
        read = _read_trace(session, who.actor, ident, _prices_file(request))
        latest = scoring.latest_scores(session, [ident]).get(ident)
        # A span the address names opens with the page; one the run lacks leaves the page as it is.
        panel = _span_panel(session, read, span) if span and span in read.places else None
    view = read.view
    by_step: dict[uuid.UUID | None, list[Annotation]] = {}
    for annotation in read.feedback:
        # One said of a span and of no step is shown in the span's panel.
        if annotation.step_id is not None or annotation.span_id is None:
            by_step.setdefault(annotation.step_id, []).append(annotation)
    steps = conversation(view.steps, by_step)
    name = trace_name(view)
    return AREA.page(
        request,
        who,
        "trace",
        name,
        TRACES,
        Crumb(name),
        view=view,
        name=name,
        steps=steps,
        trace_said=by_step.get(None, []),
        tree=read.tree,
        categories=[(category, SHORT[category], LABELS[category]) for category in CATEGORIES],
        session_link=_session_link(view.trace),
        whole=read.places[None],
        reviewed=any(place.said or place.mine for place in read.places.values()),
        span_view=panel,
        span_place=read.places[span] if panel else None,
        not_scored=NOT_SCORED,
        heat=heatmap(latest),
        **_shared(read, who.actor),
    )


def _shared(read: TraceRead | SpanRead, actor: Actor) -> dict[str, Any]:
    """What the page and the span panel's fragment both render with."""
    return {
        "trace_id": str(read.trace.id),
        "review_keys": read.keys,
        "can_write": read.can_write,
        "is_admin": read.role == "admin",
        "me": actor.principal_id,
        "num": number_text,
        "duration": duration_text,
        "money": cost_text,
    }


@router.get("/traces/{trace_id}/spans/{span_id}")
def span_fragment(request: Request, trace_id: str, span_id: str, who: Viewer, db: Db) -> Response:
    """One span's panel, as the page fetches it when a span is picked."""
    ident = path_id(trace_id, "run")
    with db.read() as session:
        read = _read_span(session, who.actor, ident, span_id, _prices_file(request))
    shared = _shared(read, who.actor)
    return fragment("traces/_span_panel.html", span_view=read.panel, span_place=read.place, **shared)


@router.get("/traces/{trace_id}/span-rows")
def span_rows(request: Request, trace_id: str, who: Viewer, db: Db, under: str | None = None) -> Response:
    """The tree's rows below the span `under` (every row without it), as the page fetches them when a
    folded span is opened, a span below one is revealed, or all are expanded."""
    ident = path_id(trace_id, "run")
    with db.read() as session:
        trace = traces.readable_trace(session, who.actor, ident, "read")
        feedback, reviews = _said(session, who.actor, trace)
        outline = traces.span_outline(session, trace)
        rows = subtree_rows(
            trace,
            outline,
            lambda span_ids: traces.span_figures(session, trace, span_ids),
            under,
            price_table(_prices_file(request)),
            _said_by_span(feedback, reviews, traces.span_ids_of(session, {a.span_id for a in feedback})),
        )
    if rows is None:
        raise _no_span(under or "")
    return fragment(
        "traces/_span_rows.html",
        rows=[PageRow(row, not row.folded) for row in rows],
        duration=duration_text,
        money=cost_text,
    )


# ----------------------------------------------------------------------------------------- in-place saves


@router.post("/traces/{trace_id}/annotations")
def create_annotation(trace_id: str, body: AnnotationIn, who: Changer, db: Db) -> JSONResponse:
    """Answers with the rm document's fields: the page's script shows the annotation it just saved from
    them, as the page renders one."""
    with db.write() as session:
        saved = annotation_service.create(session, who.actor, path_id(trace_id, "run"), body)
        answer = feedback_fields(saved)
    return JSONResponse(answer, status_code=201)


@router.post("/annotations/{annotation_id}")
def change_annotation(annotation_id: str, body: AnnotationChange, who: Changer, db: Db) -> JSONResponse:
    with db.write() as session:
        changed = annotation_service.change(session, who.actor, path_id(annotation_id, "annotation"), body)
        answer = feedback_fields(changed)
    return JSONResponse(answer)


@router.post("/annotations/{annotation_id}/delete")
def delete_annotation(annotation_id: str, who: Changer, db: Db) -> JSONResponse:
    with db.write() as session:
        annotation_service.delete(session, who.actor, path_id(annotation_id, "annotation"))
    return JSONResponse({"deleted": annotation_id})


@router.post("/traces/{trace_id}/spans/{span_id}/values")
def save_value(trace_id: str, span_id: str, body: ReviewSave, who: Changer, db: Db) -> JSONResponse:
    """Set the signed-in person's value of one human review on a span (the trace's own id: on the trace
    as a whole), or with null take it back, through the service the /v2 span annotation route calls, so
    its checks and sentences are the document's. Answers the value as stored."""
    ident = path_id(trace_id, "run")
    span_key = "" if span_id in (trace_id, str(ident)) else span_id
    with db.write() as session:
        if body.value is None or body.value == []:
            annotate.remove_values(session, who.actor, ident, span_key, keys=[body.key])
            return JSONResponse({"key": body.key, "value": None})
        saved, *_ = annotate.save_values(
            session, who.actor, ident, span_key, [ValueIn(key=body.key, value=body.value)]
        )
        return JSONResponse({"key": body.key, "value": saved.value})
