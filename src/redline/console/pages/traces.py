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
from redline.console.trace_filters import filter_values, filters_from
from redline.console.trace_tree import (
    CATEGORIES,
    LABELS,
    SHORT,
    TraceTree,
    cost_text,
    duration_text,
    trace_tree,
)
from redline.db.id_pages import MAX_LIMIT
from redline.errors import NotFound
from redline.identity.models import Project
from redline.identity.service import Actor, ProjectRole, holds, project_role, visible_projects
from redline.learning import scoring
from redline.reviews import annotate
from redline.reviews import service as review_keys
from redline.reviews.models import ReviewKey
from redline.reviews.said import Said, own_value, said_about
from redline.reviews.schemas import ValueIn
from redline.reviews.values import number_text
from redline.sentences import counted, listed
from redline.traces import service as traces
from redline.traces.models import Step, Trace
from redline.traces.otlp.store import stored_spans
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
    step: Step
    pieces: list[Piece]
    arguments: str | None
    folded: bool
    said: list[Annotation] = field(default_factory=list)


def pieces(content: str, said: list[Annotation]) -> list[Piece]:
    """The text cut where quotes begin and end, using the offsets the service resolved on save; a
    quote whose offsets no longer fit the text (it changed since) is not marked."""
    bounds = {0, len(content)}
    quotes: list[tuple[int, int, str]] = []
    for annotation in said:
        quote = annotation.quote or {}
        start, end = quote.get("start"), quote.get("end")
        if not (isinstance(start, int) and isinstance(end, int)):
            continue
        if 0 <= start < end <= len(content) and content[start:end] == quote.get("text"):
            quotes.append((start, end, str(annotation.id)))
            bounds.update((start, end))
    cuts = sorted(bounds)
    return [
        Piece(content[a:b], tuple(ident for start, end, ident in quotes if start <= a and b <= end))
        for a, b in pairwise(cuts)
        if b > a
    ]


def _folded(step: Step) -> bool:
    return step.role == "tool" and (len(step.content) > FOLD_CHARS or step.content.count("\n") >= FOLD_LINES)


def _arguments(step: Step) -> str | None:
    """A tool call's arguments pretty-printed; "" for a call without any, which the page writes in its
    line rather than as an empty box."""
    if step.tool_name is None or step.role != "assistant":
        return None
    return json.dumps(step.tool_input, indent=2, ensure_ascii=False) if step.tool_input else ""


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


def review_places(
    view: RunView, reviews: list[Said], actor: Actor, keys: list[ReviewKey], can_write: bool
) -> dict[str | None, ReviewPlace]:
    """The whole trace (under None) and each span (under its id), with what was said there."""
    whole = ReviewPlace(str(view.trace.id), "The whole trace", None, whole=True)
    places: dict[str | None, ReviewPlace] = {None: whole}
    places.update((span.span_id, ReviewPlace(span.span_id, span.name, span.kind)) for span in view.spans)
    defined = {key.key for key in keys}
    for item in reviews:
        place = places.get(item.span_key)
        if place is None:
            continue
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
    places: dict[str | None, ReviewPlace]
    keys: list[ReviewKey]
    role: ProjectRole | None
    tree: TraceTree

    @property
    def can_write(self) -> bool:
        return holds(self.role, "write")


def _read_trace(session: Session, actor: Actor, ident: uuid.UUID, prices_file: str | None) -> TraceRead:
    view = traces.get_run(session, actor, ident)
    feedback = [a for a in annotation_service.for_trace(session, actor, ident) if _is_feedback(a)]
    reviews = said_about(session, [ident])[ident]
    role = _role_in(session, actor, view.trace.project_id)
    keys = review_keys.list_keys(session, actor, project_id=view.trace.project_id, limit=MAX_LIMIT).items
    # In key order, as a queue that names no reviews offers its project's.
    keys.sort(key=lambda key: key.key)
    by_row = {span.id: span.span_id for span in view.spans}
    said_by_span: dict[str, int] = {}
    for span_key in [item.span_key for item in reviews] + [by_row.get(a.span_id) for a in feedback]:  # type: ignore[arg-type]
        if span_key is not None:
            said_by_span[span_key] = said_by_span.get(span_key, 0) + 1
    tree = trace_tree(
        view.trace,
        view.spans,
        view.steps,
        price_table(prices_file),
        annotations=len(feedback) + len(reviews),
        said_by_span=said_by_span,
    )
    places = review_places(view, reviews, actor, keys, holds(role, "write"))
    return TraceRead(view, feedback, places, keys, role, tree)


def _span_panel(session: Session, read: TraceRead, span_id: str) -> SpanPanel:
    """The panel of one of the run's spans; not found, in a sentence naming it, when the run has none
    by that id."""
    row = next((row for row in read.tree.rows if row.span.span_id == span_id), None)
    if row is None:
        raise NotFound("span", span_id, f'This trace has no span "{span_id}".')
    trace = read.view.trace
    stored = None
    # Spans that came over OTLP keep their resource and scope; the trace's external id is its OTLP id.
    if row.span.resource_id is not None and trace.external_id:
        stored = next(
            (one for one in stored_spans(session, trace.id, trace.external_id) if one.span_id == span_id),
            None,
        )
    panel = span_panel(row, read.tree.rows, stored)
    panel.said = [a for a in read.feedback if a.span_id == row.span.id]
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
    steps = [
        StepView(
            step,
            pieces(step.content, by_step.get(step.id, [])),
            _arguments(step),
            _folded(step),
            by_step.get(step.id, []),
        )
        for step in view.steps
    ]
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


def _shared(read: TraceRead, actor: Actor) -> dict[str, Any]:
    """What the page and the span panel's fragment both render with."""
    return {
        "trace_id": str(read.view.trace.id),
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
        read = _read_trace(session, who.actor, ident, _prices_file(request))
        panel = _span_panel(session, read, span_id)
    shared = _shared(read, who.actor)
    return fragment("traces/_span_panel.html", span_view=panel, span_place=read.places[span_id], **shared)


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
