"""Traces as the reviews surface's /v3 reads show them: a trace, its spans as a tree, a search over
traces, each with what people and evaluators said about it.

Reading takes the read role in the trace's project; the caller says what is hidden from the reader
(`annotations.hidden`: blind review). A trace the caller can't see is
`Trace with id <id> for workspace <workspace id> was not found.`, in the document's wording for spans.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, and_, false, func, not_, or_, select, true
from sqlalchemy.orm import Session

from redline.annotations.hidden import Hidden
from redline.db.keyset import Walk, merged, past, window
from redline.db.paging import decode_cursor, encode_cursor
from redline.db.wire_text import Column
from redline.errors import Invalid, NotFound, not_in_workspace
from redline.identity.service import Actor, visible_projects
from redline.reviews.said import Said, on_span, said_about
from redline.reviews.schemas import TraceFilterIn, TraceSearchIn
from redline.reviews.targets import find_target, span_not_found, trace_id_of
from redline.traces import metadata_index
from redline.traces.models import Agent, Span, Trace
from redline.traces.service import LISTED, each_project, producer_names, readable_trace, traces_in_order

DEFAULT_SPAN_LIMIT = 50
MAX_SPAN_LIMIT = 200
# Spans in time order, those without a start first on both stores (their NULL order differs), then id.
SPAN_ORDER = (Span.started_at.asc().nulls_first(), Span.span_id)
# Deeper than any real call tree; a parent loop in what a tracer sent stops here.
MAX_DEPTH = 1_000


@dataclass
class TraceView:
    trace: Trace
    agent_name: str | None
    flow_name: str | None
    root_span_id: str | None
    said: list[Said] = field(default_factory=list)


@dataclass
class SpanView:
    span: Span
    level: int
    has_children: bool
    said: list[Said] = field(default_factory=list)


def trace_not_found(actor: Actor, ident: object) -> NotFound:
    return not_in_workspace("trace", "Trace", ident, actor.workspace_id)


def _trace(session: Session, actor: Actor, trace_ref: str) -> Trace:
    trace_id = trace_id_of(trace_ref)
    if trace_id is None:
        raise trace_not_found(actor, trace_ref)
    return readable_trace(session, actor, trace_id, "read", trace_not_found(actor, trace_ref))


def _views(session: Session, traces: Sequence[Trace], hidden: Hidden) -> list[TraceView]:
    """Traces with their producers' names, root spans and what was said, in a few queries for all."""
    ids = [trace.id for trace in traces]
    agents, flows = producer_names(session, traces)
    roots: dict[uuid.UUID, str] = {}
    if ids:
        for trace_id, span_id in session.execute(
            select(Span.trace_id, Span.span_id)
            .where(Span.trace_id.in_(ids), Span.parent_span_id.is_(None))
            .order_by(*SPAN_ORDER)
        ):
            roots.setdefault(trace_id, span_id)
    said = said_about(session, ids, hidden)
    return [
        TraceView(
            trace,
            agents.get(trace.agent_id) if trace.agent_id else None,
            flows.get(trace.flow_id) if trace.flow_id else None,
            roots.get(trace.id),
            said.get(trace.id, []),
        )
        for trace in traces
    ]


def get_trace(session: Session, actor: Actor, trace_ref: str, hidden: Hidden) -> TraceView:
    return _views(session, [_trace(session, actor, trace_ref)], hidden)[0]


# ------------------------------------------------------------------------------------------------- spans


def _tree(session: Session, trace_id: uuid.UUID) -> tuple[dict[str, int], set[str]]:
    """Each span's depth (0 for a root) and which spans have children, from the trace's parent links."""
    parents: dict[str, str | None] = dict(
        session.execute(select(Span.span_id, Span.parent_span_id).where(Span.trace_id == trace_id)).all()
    )
    with_children = {parent for parent in parents.values() if parent is not None and parent in parents}
    levels: dict[str, int] = {}
    for span_id in parents:
        depth, current = 0, parents[span_id]
        while current is not None and current in parents and depth < MAX_DEPTH:
            depth += 1
            current = parents[current]
        levels[span_id] = depth
    return levels, with_children


def _span_token(span: Span) -> str:
    return encode_cursor(span.started_at.isoformat() if span.started_at else "", span.span_id)


def _after_token(token: str) -> ColumnElement[bool]:
    at_text, after = decode_cursor(token, 2)
    if at_text == "":
        return or_(and_(Span.started_at.is_(None), Span.span_id > after), Span.started_at.is_not(None))
    try:
        at = datetime.fromisoformat(at_text)
    except ValueError:
        raise Invalid(
            f'"{token}" is not a page_token this list gave out.', details={"field": "page_token"}
        ) from None
    return past((Span.started_at, Span.span_id), (at, after), descending=False)


def list_spans(
    session: Session, actor: Actor, trace_ref: str, hidden: Hidden, *, limit: int, page_token: str | None
) -> tuple[list[SpanView], str | None]:
    """A page of the trace's spans in time order, and the token of the next page (None on the last)."""
    if not 1 <= limit <= MAX_SPAN_LIMIT:
        raise Invalid(f"limit is from 1 to {MAX_SPAN_LIMIT}.", details={"field": "limit"})
    trace = _trace(session, actor, trace_ref)
    query = select(Span).where(Span.trace_id == trace.id)
    if page_token:
        query = query.where(_after_token(page_token))
    spans = list(session.scalars(query.order_by(*SPAN_ORDER).limit(limit + 1)))
    more = len(spans) > limit
    spans = spans[:limit]
    levels, with_children = _tree(session, trace.id)
    said = said_about(session, [trace.id], hidden)[trace.id]
    views = [
        SpanView(
            span, levels.get(span.span_id, 0), span.span_id in with_children, on_span(said, span.span_id)
        )
        for span in spans
    ]
    return views, _span_token(spans[-1]) if more else None


def get_span(session: Session, actor: Actor, trace_ref: str, span_key: str, hidden: Hidden) -> SpanView:
    try:
        target = find_target(session, actor, trace_ref, span_key, "read")
    except NotFound:
        if trace_id_of(trace_ref) is None:
            raise trace_not_found(actor, trace_ref) from None
        _trace(session, actor, trace_ref)  # a trace the caller can't see is named as such
        raise
    span = target.span
    if span is None:
        raise span_not_found(actor, span_key)
    levels, with_children = _tree(session, target.trace.id)
    said = said_about(session, [target.trace.id], hidden)[target.trace.id]
    return SpanView(
        span, levels.get(span.span_id, 0), span.span_id in with_children, on_span(said, span.span_id)
    )


# ------------------------------------------------------------------------------------------------ search

# Fields a filter may name, beside `metadata.<key>`; metadata keys the SDK's examples use by name.
_COLUMNS: dict[str, Any] = {
    "status": Trace.status,
    "agent_version": Trace.agent_version,
    "external_id": Trace.external_id,
}
_METADATA_NAMES = ("identity_id", "session_id", "thread_id")
FILTER_FIELDS = (
    "status, agent (or agent.name), agent.id, agent_version, external_id, project_id, trace_id, "
    "identity_id, session_id, thread_id, metadata.<key>"
)
_POSITIVE = ("eq", "in", "=", "==")
_NEGATIVE = ("neq", "not_in", "ne", "!=")


def _uuids(values: Sequence[str], name: str) -> list[uuid.UUID]:
    try:
        return [uuid.UUID(value) for value in values]
    except ValueError:
        raise Invalid(
            f"filters: {name} takes ids, and one of {values} is not.", details={"field": "filters"}
        ) from None


def _metadata_key(name: str) -> str | None:
    """The metadata key a filter field names (`metadata.<key>`, or one the SDK names bare), else None."""
    if name in _METADATA_NAMES:
        return name
    if name.startswith("metadata.") and len(name) > len("metadata."):
        return name.removeprefix("metadata.")
    return None


def _one_of(column: Any, values: Sequence[Any]) -> ColumnElement[bool]:
    """`column = v` for one value (an index then walks in order past it), `IN` for more."""
    return cast(ColumnElement[bool], column == values[0] if len(values) == 1 else column.in_(values))


@dataclass(frozen=True)
class _Scope:
    """Where a search looks: the projects the actor can read that its filters leave (a walk of each), and
    the metadata keys indexed and ready in all of these."""

    project_ids: list[uuid.UUID]
    indexed: set[str]

    def uses_index(self, key: str, values: Sequence[str]) -> bool:
        return key in self.indexed and metadata_index.indexable(values)


def _condition(condition: TraceFilterIn, scope: _Scope, unindexed: list[str]) -> ColumnElement[bool]:
    name, values = condition.field, condition.values
    if condition.op not in (*_POSITIVE, *_NEGATIVE):
        raise Invalid(
            f'filters: the operator "{condition.op}" is not one of eq, in, neq, not_in.',
            details={"field": "filters"},
        )
    negated = condition.op in _NEGATIVE
    key = _metadata_key(name)
    matched: ColumnElement[bool]
    if name in _COLUMNS:
        matched = _COLUMNS[name].in_(values)
    elif name in ("agent", "agent.name", "agent_name"):
        matched = Trace.agent_id.in_(select(Agent.id).where(Agent.name.in_(values)))
    elif name in ("agent.id", "agent_id"):
        matched = Trace.agent_id.in_(_uuids(values, name))
    elif name == "project_id":
        matched = Trace.project_id.in_(_uuids(values, name))
    elif name in ("trace_id", "id"):
        matched = Trace.id.in_(_uuids(values, name))
    elif key is not None and values and scope.uses_index(key, values):
        # Already the filter's answer either way: a run without the key matches neither.
        return Trace.id.in_(metadata_index.matching_runs(scope.project_ids, key, values, negated=negated))
    elif key is not None:
        if values:
            unindexed.append(name)
        matched = metadata_index.metadata_text(key).in_(values)
    else:
        raise Invalid(
            f'filters: "{name}" is not a field traces are searched by; these are: {FILTER_FIELDS}.',
            details={"field": "filters"},
        )
    if not values:
        matched = false()
    return not_(matched) if negated else matched


def _scope(session: Session, actor: Actor, body: TraceSearchIn) -> _Scope:
    """The projects a search reads (those the actor can read, narrowed by project_id filters it must
    meet), and which of the metadata keys it filters on each of them has indexed and ready."""
    project_ids = [project.id for project, _ in visible_projects(session, actor)]
    filters = body.filters or []
    if body.filter_operator != "or":
        for condition in filters:
            if condition.field == "project_id" and condition.op in _POSITIVE:
                named = set(_uuids(condition.values, condition.field))
                project_ids = [project_id for project_id in project_ids if project_id in named]
    keys = {key for condition in filters if (key := _metadata_key(condition.field)) is not None}
    return _Scope(project_ids, metadata_index.ready_keys(session, project_ids, keys))


def _driver(body: TraceSearchIn, scope: _Scope) -> TraceFilterIn | None:
    """The filter a search may walk the side table's index for, in the list's order: an indexed
    metadata equality every answer must meet (the first, when there are several)."""
    if body.filter_operator == "or" and len(body.filters or []) > 1:
        return None
    for condition in body.filters or []:
        key = _metadata_key(condition.field)
        if (
            key is not None
            and condition.op in _POSITIVE
            and condition.values
            and scope.uses_index(key, condition.values)
        ):
            return condition
    return None


@dataclass(frozen=True)
class Found:
    """A page of a search, the token of the next page (None on the last), and the metadata filters it
    had to evaluate on every run's JSON, since no ready index served them."""

    views: list[TraceView]
    token: str | None
    unindexed: list[str]


def search(session: Session, actor: Actor, body: TraceSearchIn, hidden: Hidden) -> Found:
    """Traces the actor can read that started in [from, to), newest first unless sorted otherwise.

    A filter on a metadata key the projects index (and have ready) reads the side table; one of them
    that every answer must meet drives the search, its index walked in the list's order. The page is read
    as keys first, a walk of each project merged (`keyset.merged`), then its rows.
    """
    if body.to <= body.from_:
        raise Invalid("to must be later than from.", details={"field": "to"})
    order = _order(body)
    scope = _scope(session, actor, body)
    driver = _driver(body, scope)
    unindexed: list[str] = []
    where = _narrowed(body, scope, driver, unindexed)
    walk, key, project = _walk(driver)
    cursor = _cursor(body.page_token, order) if body.page_token else None
    where.extend(window(key, body.from_, body.to, cursor, descending=order == "desc"))
    walks = [walk.where(condition, *where) for condition in each_project(scope.project_ids, project)]
    dialect = session.get_bind().dialect.name
    page = merged(walks, key, descending=order == "desc", limit=body.limit + 1, dialect=dialect)
    keys = session.execute(page).all()
    traces = traces_in_order(session, [trace_id for _, trace_id in keys[: body.limit]])
    more = len(keys) > body.limit
    token = encode_cursor(traces[-1].started_at.isoformat(), str(traces[-1].id), order) if more else None
    return Found(_views(session, traces, hidden), token, unindexed)


def _order(body: TraceSearchIn) -> str:
    """`desc` (newest first) or `asc`, as the search's last sort says; only the start time sorts."""
    order = "desc"
    for sort in body.sort or []:
        if sort.field not in ("started_at", "start_time"):
            raise Invalid(
                f'sort: traces are sorted by started_at, not "{sort.field}".', details={"field": "sort"}
            )
        order = sort.order
    return order


def _narrowed(
    body: TraceSearchIn, scope: _Scope, driver: TraceFilterIn | None, unindexed: list[str]
) -> list[ColumnElement[bool]]:
    """What every walk of a search keeps, within a project: listed runs its filters (but the driver,
    which its walk reads) and its text query keep. The filters walked without an index go to `unindexed`."""
    where: list[ColumnElement[bool]] = [LISTED]
    conditions = [
        _condition(condition, scope, unindexed) for condition in body.filters or [] if condition is not driver
    ]
    if conditions:
        where.append(or_(*conditions) if body.filter_operator == "or" else and_(true(), *conditions))
    if body.query:
        text = body.query.lower()
        where.append(
            or_(
                func.lower(Trace.title).contains(text, autoescape=True),
                func.lower(Trace.external_id).contains(text, autoescape=True),
            )
        )
    return where


def _walk(driver: TraceFilterIn | None) -> tuple[Walk, tuple[Column, Column], Column]:
    """What each walk of a search reads, its key (start time, run id) and the project column it is walked
    by: the runs' (project, started) index, or with a driver the side table's index of the driver's key
    and values, joined to the runs."""
    if driver is None:
        return select(Trace.started_at, Trace.id), (Trace.started_at, Trace.id), Trace.project_id
    values = metadata_index.VALUES.c
    walk = (
        select(values.started_at, values.run_id)
        .select_from(Trace)
        .join(metadata_index.VALUES, values.run_id == Trace.id)
        .where(values.key == _metadata_key(driver.field), _one_of(values.value, driver.values))
    )
    return walk, (values.started_at, values.run_id), values.project_id


def _cursor(page_token: str, order: str) -> tuple[datetime, uuid.UUID]:
    """The (start time, id) a page token carries; refused when it is not one or was sorted the other way."""
    at_text, after, token_order = decode_cursor(page_token, 3)
    try:
        at, after_id = datetime.fromisoformat(at_text), uuid.UUID(after)
    except ValueError:
        raise Invalid(
            f'"{page_token}" is not a page_token this search gave out.', details={"field": "page_token"}
        ) from None
    if token_order != order:
        raise Invalid(
            "page_token: it belongs to a search sorted the other way.", details={"field": "page_token"}
        )
    return at, after_id
