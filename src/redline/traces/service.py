"""Rules for runs: storing them (one or a batch, all or nothing), read, list, erase, and pinning versions.

Storing is all this domain does with an arriving run: who is told of it (queue rules, automations,
auto-scoring) is `redline.ingest`'s business, above this one.

Ingest writes with Core bulk inserts rather than ORM units of work: a batch of 1,000 runs carries
20,000 steps, and per-object bookkeeping would cost more than the database does.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, cast

from sqlalchemy import (
    ColumnElement,
    Row,
    Select,
    Table,
    and_,
    bindparam,
    delete,
    false,
    func,
    not_,
    select,
    update,
)
from sqlalchemy.orm import Session

from redline.db import Unindexed, bulk_insert, in_chunks, insert_ignoring_conflicts, new_id, utcnow
from redline.db.keyset import merged, past, window
from redline.db.paging import Page, check_limit, decode_time_cursor, time_cursor
from redline.db.wire_text import Column
from redline.errors import Invalid, NotFound
from redline.identity.service import (
    Actor,
    ProjectRole,
    in_project,
    require_project_role,
    visible_projects,
)
from redline.traces import counts, metadata_index
from redline.traces.edits import Edited, StepEdit
from redline.traces.erasure import erase_contents
from redline.traces.models import Agent, AgentVersion, Flow, Span, Step, Trace
from redline.traces.schemas import RunIn, StepIn
from redline.traces.session_ids import session_id_of

# Spans in time order; those without a start first on both stores (their NULL order differs), ties by id.
_SPAN_ORDER = (Span.started_at.asc().nulls_first(), Span.span_id)


# Runs a list shows: all but those hidden because no span of theirs is about AI (otlp-ingest §8.4).
# An equality (the column is NOT NULL): what both stores prove a listed-only partial index from.
LISTED = Trace.hidden == false()
# Runs rules, automations, scoring and learning may act on: listed, and settled (a run assembled from
# OTLP spans settles once its trace has gone quiet, so nothing acts on half a trace).
RULES_SEE = and_(LISTED, Trace.settled_at.is_not(None))


@dataclass(frozen=True)
class IngestedRun:
    id: uuid.UUID
    external_id: str | None
    agent_id: uuid.UUID | None
    flow_id: uuid.UUID | None
    step_count: int
    replaced: bool


@dataclass
class RunView:
    """A run with what it came from and, when asked for, its steps and spans."""

    trace: Trace
    agent_name: str | None
    flow_name: str | None
    steps: list[Step] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)


@dataclass(frozen=True)
class RunFilters:
    project_id: uuid.UUID | None = None
    agent_id: uuid.UUID | None = None
    agent: str | None = None
    flow_id: uuid.UUID | None = None
    agent_version: str | None = None
    session_id: str | None = None
    statuses: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    # (key, value) pairs a run's metadata must hold, each compared as `metadata_index.metadata_text`.
    metadata: tuple[tuple[str, str], ...] = ()
    # True keeps the runs that have one, False those that have none, None both: the kept counts'.
    has_ratings: bool | None = None
    has_comments: bool | None = None
    has_corrections: bool | None = None


def _bad_run(index: int, field_name: str, message: str) -> Invalid:
    return Invalid(f"runs[{index}].{field_name}: {message}", details={"index": index, "field": field_name})


# ------------------------------------------------------------------------------------------------ ingest


def register_producers(
    session: Session, model: type[Agent] | type[Flow], wanted: set[tuple[uuid.UUID, str]]
) -> dict[tuple[uuid.UUID, str], uuid.UUID]:
    """Ids of agents (or flows) by (project, name), registering the names seen for the first time."""
    if not wanted:
        return {}
    rows = [{"id": new_id(), "project_id": p, "name": n, "created_at": utcnow()} for p, n in wanted]
    dialect = session.get_bind().dialect.name
    session.execute(insert_ignoring_conflicts(cast(Table, model.__table__), dialect), rows)
    found: dict[tuple[uuid.UUID, str], uuid.UUID] = {}
    names = sorted({n for _, n in wanted})
    for chunk in in_chunks(names):
        for row in session.execute(
            select(model.id, model.project_id, model.name).where(model.name.in_(chunk))
        ):
            if (row.project_id, row.name) in wanted:
                found[(row.project_id, row.name)] = row.id
    return found


def _check_producer_ids(
    session: Session, model: type[Agent] | type[Flow], runs: Sequence[RunIn], attr: str, label: str
) -> None:
    """An agentId or flowId must name one of the run's own project."""
    wanted = {(getattr(run, attr), run.project_id) for run in runs if getattr(run, attr) is not None}
    if not wanted:
        return
    ids = sorted({i for i, _ in wanted}, key=str)
    known: set[tuple[uuid.UUID, uuid.UUID]] = set()
    for chunk in in_chunks(ids):
        known.update(session.execute(select(model.id, model.project_id).where(model.id.in_(chunk))).all())
    for index, run in enumerate(runs):
        ident = getattr(run, attr)
        if ident is not None and (ident, run.project_id) not in known:
            raise _bad_run(index, label, f'No {label[:-2]} "{ident}" in project "{run.project_id}".')


def pinned_versions(session: Session, agent_ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
    """The versions the given agents pin, for runs that don't say which version they ran."""
    pinned: dict[uuid.UUID, str] = {}
    for chunk in in_chunks(sorted(agent_ids, key=str)):
        rows = session.execute(
            select(Agent.id, Agent.pinned_version).where(
                Agent.id.in_(chunk), Agent.pinned_version.is_not(None)
            )
        )
        pinned.update({row.id: row.pinned_version for row in rows})
    return pinned


def _existing_by_external_id(
    session: Session, runs: Sequence[RunIn]
) -> dict[tuple[uuid.UUID, str], uuid.UUID]:
    keys = {(run.project_id, run.external_id) for run in runs if run.external_id is not None}
    if not keys:
        return {}
    found: dict[tuple[uuid.UUID, str], uuid.UUID] = {}
    external_ids = sorted({e for _, e in keys})
    for chunk in in_chunks(external_ids):
        rows = session.execute(
            select(Trace.id, Trace.project_id, Trace.external_id).where(Trace.external_id.in_(chunk))
        )
        for row in rows:
            if (row.project_id, row.external_id) in keys:
                found[(row.project_id, row.external_id)] = row.id
    return found


def _check_external_ids_unique(runs: Sequence[RunIn]) -> None:
    first_at: dict[tuple[uuid.UUID, str], int] = {}
    for index, run in enumerate(runs):
        if run.external_id is None:
            continue
        key = (run.project_id, run.external_id)
        if key in first_at:
            raise _bad_run(
                index, "externalId", f'"{run.external_id}" is also runs[{first_at[key]}]: send each run once.'
            )
        first_at[key] = index


@dataclass
class _Writes:
    """The rows an ingest writes: new ones inserted, those of replaced runs changed in place."""

    new_traces: list[dict[str, Any]] = field(default_factory=list)
    replaced_traces: list[dict[str, Any]] = field(default_factory=list)
    new_steps: list[dict[str, Any]] = field(default_factory=list)
    changed_steps: list[dict[str, Any]] = field(default_factory=list)
    # Steps of replaced runs whose role changed: they go, with what was said about them.
    dropped_steps: list[dict[str, Any]] = field(default_factory=list)
    # (trace, new step count) of replaced runs that had more steps than they have now.
    trimmed: list[dict[str, Any]] = field(default_factory=list)
    # The ids of every step that goes (dropped or trimmed): what was said about them goes with them.
    gone_steps: list[uuid.UUID] = field(default_factory=list)
    # Kept steps whose words changed: the quotes on them are looked for again.
    edits: list[StepEdit] = field(default_factory=list)
    spans: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class _KnownStep:
    id: uuid.UUID
    role: str
    content: str


def _known_steps(session: Session, trace_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, dict[int, _KnownStep]]:
    """The steps the given traces have now, by trace and index: what a re-import may keep."""
    found: dict[uuid.UUID, dict[int, _KnownStep]] = {trace_id: {} for trace_id in trace_ids}
    for chunk in in_chunks(trace_ids):
        query = select(Step.trace_id, Step.index, Step.id, Step.role, Step.content).where(
            Step.trace_id.in_(chunk)
        )
        for trace_id, index, step_id, role, content in session.execute(query):
            found[trace_id][index] = _KnownStep(step_id, role, content)
    return found


def _add_steps(
    writes: _Writes, trace_id: uuid.UUID, steps: Sequence[StepIn], kept: dict[int, _KnownStep]
) -> None:
    """A run's steps as rows. A replaced run keeps a step (its id, and so the annotations on it) where
    the same role is at the same index: the step was edited, and when its words changed, the quotes on it
    are looked for in the new ones (`edits`). A step whose role changed is a new step, and what was said
    about the old one goes with it, since it was said about another message."""
    for index, step in enumerate(steps):
        row: dict[str, Any] = {
            "role": step.role,
            "content": step.content,
            "tool_name": step.tool_name,
            "tool_input": step.tool_input,
            "tool_call_id": step.tool_call_id,
            "metadata": step.metadata,
        }
        known = kept.get(index)
        if known is not None and known.role == step.role:
            row["b_id"] = known.id
            writes.changed_steps.append(row)
            if known.content != step.content:
                writes.edits.append(StepEdit(known.id, known.id, step.content))
        else:
            if known is not None:
                writes.dropped_steps.append({"b_id": known.id})
                writes.gone_steps.append(known.id)
            row.update(id=new_id(), trace_id=trace_id, index=index)
            writes.new_steps.append(row)
    trimmed = [known.id for index, known in kept.items() if index >= len(steps)]
    if trimmed:
        writes.trimmed.append({"b_trace_id": trace_id, "b_count": len(steps)})
        writes.gone_steps.extend(trimmed)


@dataclass(frozen=True)
class StoredRuns:
    """What a store wrote: each run's outcome, in the order given, and the trace rows as written (new
    ones, and replaced ones keyed `b_id`), for what consumes arriving runs."""

    runs: list[IngestedRun]
    rows: list[dict[str, Any]]


# Told of the steps a replaced run is about to lose, so what was said about them leaves the run's counts:
# the annotations domain answers, through the caller, since traces sits below it.
Dropping = Callable[[Session, Sequence[uuid.UUID]], None]


def store_runs(
    session: Session,
    actor: Actor,
    runs: Sequence[RunIn],
    *,
    source_format: str = "native",
    dropping: Dropping,
    edited: Edited,
) -> StoredRuns:
    """Store runs with their steps and spans; a run whose external id exists replaces that run's content.

    A replaced run keeps its id and the ids of its steps at the indexes it still has with the same role;
    `dropping` hears of the others before they go, and `edited` of the kept steps whose words changed,
    once the new words are written.
    All or nothing: the first broken run raises before anything is written that the caller's
    transaction would keep.
    """
    for project_id in {run.project_id for run in runs}:
        require_project_role(session, actor, project_id, "write")
    _check_external_ids_unique(runs)
    _check_producer_ids(session, Agent, runs, "agent_id", "agentId")
    _check_producer_ids(session, Flow, runs, "flow_id", "flowId")

    agents = register_producers(session, Agent, {(r.project_id, r.agent) for r in runs if r.agent})
    flows = register_producers(session, Flow, {(r.project_id, r.flow) for r in runs if r.flow})
    existing = _existing_by_external_id(session, runs)
    old_steps = _known_steps(session, list(existing.values())) if existing else {}
    agent_ids = [run.agent_id or (agents[(run.project_id, run.agent)] if run.agent else None) for run in runs]
    unversioned = {a for a, run in zip(agent_ids, runs, strict=True) if a and run.agent_version is None}
    pinned = pinned_versions(session, unversioned) if unversioned else {}

    now = utcnow()
    writes = _Writes()
    results: list[IngestedRun] = []
    for run, agent_id in zip(runs, agent_ids, strict=True):
        key = (run.project_id, run.external_id) if run.external_id is not None else None
        replaced_id = existing.get(key) if key else None
        trace_id = replaced_id or new_id()
        flow_id = run.flow_id or (flows[(run.project_id, run.flow)] if run.flow else None)
        version, version_source = run.agent_version, run.version_source
        if version is None and agent_id in pinned:
            version, version_source = pinned[agent_id], version_source or "pinned"
        row = {
            "project_id": run.project_id,
            "external_id": run.external_id,
            "session_id": session_id_of(run.session_id, run.metadata),
            "agent_id": agent_id,
            "flow_id": flow_id,
            "agent_version": version,
            "version_source": version_source,
            "status": run.status,
            "dry_run": run.dry_run,
            "title": run.title,
            "source_format": source_format,
            "input": run.input,
            "output": run.output,
            "metadata": run.metadata,
            "started_at": run.started_at or now,
            "ended_at": run.ended_at,
            "step_count": len(run.steps),
            "updated_at": now,
            "erased_at": None,
            # A run sent whole is complete as it arrives: listed, and settled for rules and scoring.
            "hidden": False,
            "settled_at": now,
        }
        if replaced_id:
            writes.replaced_traces.append({"b_id": replaced_id, **row})
        else:
            writes.new_traces.append({"id": trace_id, "created_at": now, **row})
        _add_steps(writes, trace_id, run.steps, old_steps.get(trace_id, {}))
        writes.spans.extend(
            {
                "id": new_id(),
                "trace_id": trace_id,
                "span_id": span.span_id,
                "parent_span_id": span.parent_span_id,
                "kind": span.kind,
                "name": span.name,
                "attributes": span.attributes,
                "started_at": span.started_at,
                "ended_at": span.ended_at,
            }
            for span in run.spans
        )
        results.append(
            IngestedRun(trace_id, run.external_id, agent_id, flow_id, len(run.steps), replaced_id is not None)
        )

    _write(session, writes, dropping)
    if writes.edits:
        edited(session, writes.edits)
    metadata_index.reindex(session, {run.project_id for run in runs}, [result.id for result in results])
    return StoredRuns(results, [*writes.new_traces, *writes.replaced_traces])


def _update_many(session: Session, table: Table, rows: list[dict[str, Any]]) -> None:
    """One UPDATE by `b_id` run for every row (executemany), setting the row's other keys."""
    if not rows:
        return
    values: dict[str, Any] = {key: bindparam(key) for key in rows[0] if key != "b_id"}
    session.execute(update(table).where(table.c.id == bindparam("b_id")).values(values), rows)


def _write(session: Session, writes: _Writes, dropping: Dropping) -> None:
    traces, steps, spans = (cast(Table, model.__table__) for model in (Trace, Step, Span))
    if writes.gone_steps:
        dropping(session, writes.gone_steps)
    if writes.replaced_traces:
        replaced_ids = [row["b_id"] for row in writes.replaced_traces]
        # A run sent whole is listed: a replaced one that was hidden (an OTLP run) joins its list.
        counts.show_or_hide(session, dict.fromkeys(replaced_ids, False))
        for chunk in in_chunks(replaced_ids):
            session.execute(delete(spans).where(spans.c.trace_id.in_(chunk)))
        if writes.trimmed:
            session.execute(
                delete(steps).where(
                    steps.c.trace_id == bindparam("b_trace_id"), steps.c.index >= bindparam("b_count")
                ),
                writes.trimmed,
            )
        if writes.dropped_steps:
            session.execute(delete(steps).where(steps.c.id == bindparam("b_id")), writes.dropped_steps)
        _update_many(session, steps, writes.changed_steps)
        _update_many(session, traces, writes.replaced_traces)
    bulk_insert(session, traces, writes.new_traces)
    counts.add_listed(session, Counter(row["project_id"] for row in writes.new_traces))
    bulk_insert(session, steps, writes.new_steps)
    bulk_insert(session, spans, writes.spans)


# -------------------------------------------------------------------------------------------------- read


class Produced(Protocol):
    """Anything that names the agent or flow it came from: a trace, a queue item, a correction."""

    @property
    def agent_id(self) -> uuid.UUID | None: ...

    @property
    def flow_id(self) -> uuid.UUID | None: ...


def producer_names(
    session: Session, traces: Sequence[Produced]
) -> tuple[dict[uuid.UUID, str], dict[uuid.UUID, str]]:
    """The names of the traces' agents and flows (or those of anything else `Produced`), by id, in a
    query for each kind."""
    return names_of_producers(
        session, {t.agent_id for t in traces if t.agent_id}, {t.flow_id for t in traces if t.flow_id}
    )


def names_of_producers(
    session: Session, agent_ids: Collection[uuid.UUID], flow_ids: Collection[uuid.UUID]
) -> tuple[dict[uuid.UUID, str], dict[uuid.UUID, str]]:
    """The names of these agents and flows, by id, in a query for each kind (none for no ids)."""
    agents = (
        dict(session.execute(select(Agent.id, Agent.name).where(Agent.id.in_(list(agent_ids)))).all())
        if agent_ids
        else {}
    )
    flows = (
        dict(session.execute(select(Flow.id, Flow.name).where(Flow.id.in_(list(flow_ids)))).all())
        if flow_ids
        else {}
    )
    return agents, flows


def readable_trace(
    session: Session, actor: Actor, run_id: uuid.UUID, needed: ProjectRole, missing: NotFound | None = None
) -> Trace:
    """The trace, if the actor holds `needed` in its project; not found if the actor can't see it (in
    `missing`'s sentence, for a caller that asked for something of the trace).

    The trace and its project come in one query: every annotation and read starts here.
    """
    return in_project(session, actor, Trace, run_id, needed, missing or NotFound("run", run_id))


def _full_view(session: Session, trace: Trace) -> RunView:
    [view] = views_of(session, [trace], with_steps=True, with_spans=True)
    return view


def get_run(session: Session, actor: Actor, run_id: uuid.UUID) -> RunView:
    """One run with its steps and spans; not found when it is outside what the actor can read."""
    return _full_view(session, readable_trace(session, actor, run_id, "read"))


# What placing a span on the run's tree and time axis reads: no attributes, events or links.
_OUTLINE = (
    Span.span_id, Span.parent_span_id, Span.name, Span.started_at, Span.ended_at, Span.start_ns, Span.end_ns
)  # fmt: skip


# A span's outline: the columns of `_OUTLINE`, in order.
OutlineRow = Row[str, str | None, str, datetime | None, datetime | None, int | None, int | None]


def span_outline(session: Session, trace: Trace) -> Sequence[OutlineRow]:
    """Every span of a run that `readable_trace` gave, without its contents (`_OUTLINE`): what one span's
    panel needs of the others, its place among them, far cheaper than the spans themselves."""
    return session.execute(select(*_OUTLINE).where(Span.trace_id == trace.id)).all()


def run_span(session: Session, trace: Trace, span_id: str) -> Span | None:
    """One span of a run that `readable_trace` gave, by its span id (the run's unique key)."""
    return session.scalars(select(Span).where(Span.trace_id == trace.id, Span.span_id == span_id)).first()


# What a span's row on the trace page reads (`console.trace_tree.TreeSpan`): its outline, kind, figures
# and attributes, without its events, links or stored OTLP fields, as plain rows rather than objects.
_FIGURES = (
    *_OUTLINE, Span.id, Span.kind, Span.attributes, Span.model, Span.input_tokens, Span.output_tokens,
    Span.cost, Span.error, Span.status_code,
)  # fmt: skip


def span_ids_of(session: Session, row_ids: Collection[uuid.UUID | None]) -> dict[uuid.UUID, str]:
    """The span ids of these span rows (by their row ids; None, an annotation on no span, is left out):
    what the annotations on a run's spans name."""
    wanted = [row_id for row_id in row_ids if row_id is not None]
    if not wanted:
        return {}
    query = select(Span.id, Span.span_id).where(Span.id.in_(wanted))
    return dict(session.execute(query).tuples().all())


# Up to how many span ids `span_figures` names in its query; past that it reads the whole run, which is
# then the cheaper plan and stays under every store's limit of bound parameters.
_NAMED_SPANS = 500


def span_figures(
    session: Session, trace: Trace, span_ids: Collection[str] | None = None
) -> Sequence[Row[Any]]:
    """Spans of a run that `readable_trace` gave, as the trace page's rows read them (`_FIGURES`), in the
    run's span order: those of `span_ids` (with others when there are many of them: the caller picks),
    or all with None."""
    query = select(*_FIGURES).where(Span.trace_id == trace.id).order_by(*_SPAN_ORDER)
    if span_ids is not None and len(span_ids) <= _NAMED_SPANS:
        query = query.where(Span.span_id.in_(span_ids))
    return session.execute(query).all()


# The runs list's order (newest first) and its cursor's key.
_STARTED = (Trace.started_at, Trace.id)


def _filtered(
    projects: ColumnElement[bool],
    filters: RunFilters,
    cursor: tuple[datetime, uuid.UUID] | None,
    said: Sequence[ColumnElement[bool]] = (),
) -> Select[datetime, uuid.UUID]:
    """The (started_at, id) of the runs of `projects` the filters keep, newest first past `cursor` (the
    page's start; None for the first); `said` are the conditions on metadata and on what was said."""
    query = select(*_STARTED).where(projects, LISTED, *said)
    if filters.agent_id:
        query = query.where(Trace.agent_id == filters.agent_id)
    if filters.agent:
        query = query.join(Agent, Agent.id == Trace.agent_id).where(Agent.name == filters.agent)
    if filters.flow_id:
        query = query.where(Trace.flow_id == filters.flow_id)
    if filters.agent_version:
        query = query.where(Trace.agent_version == filters.agent_version)
    if filters.session_id:
        # With the project's equality, a range of ix_traces_project_session_started in the list's order.
        query = query.where(Trace.session_id == filters.session_id)
    if filters.statuses:
        query = query.where(Trace.status.in_(filters.statuses))
    return query.where(*window(_STARTED, filters.since, filters.until, cursor, descending=True))


def list_runs(
    session: Session, actor: Actor, filters: RunFilters, *, limit: int = 50, cursor: str | None = None
) -> Page[RunView]:
    """Runs newest first (by start time), without steps and spans; one project or all the actor sees.

    The page is read as keys first, a walk of each project merged (`keyset.merged`), then its rows.
    """
    check_limit(limit)
    if filters.project_id is not None:
        project_ids = [require_project_role(session, actor, filters.project_id, "read").id]
    else:
        project_ids = [project.id for project, _ in visible_projects(session, actor)]
    edge = decode_time_cursor(cursor) if cursor else None
    said = _said_conditions(session, project_ids, filters)
    walks = [_filtered(condition, filters, edge, said) for condition in each_project(project_ids)]
    dialect = session.get_bind().dialect.name
    keys = session.execute(merged(walks, _STARTED, descending=True, limit=limit + 1, dialect=dialect)).all()
    more = len(keys) > limit
    traces = traces_in_order(session, [row.id for row in keys[:limit]])
    views = views_of(session, traces)
    next_cursor = time_cursor(traces[-1].started_at, traces[-1].id) if more else None
    return Page(views, next_cursor)


def _said_conditions(
    session: Session, project_ids: Sequence[uuid.UUID], filters: RunFilters
) -> list[ColumnElement[bool]]:
    """The list's conditions on metadata and on what was said about a run. A metadata key every project
    indexes (and has ready) is read from the side table; any other from each run's JSON. "Has ratings"
    and the like read the run's kept counts, each a walk of its partial index when wanted."""
    ready = metadata_index.ready_keys(session, project_ids, {key for key, _ in filters.metadata})
    where: list[ColumnElement[bool]] = []
    for key, value in filters.metadata:
        if key in ready and metadata_index.indexable([value]):
            where.append(Trace.id.in_(metadata_index.matching_runs(project_ids, key, [value], negated=False)))
        else:
            where.append(metadata_index.metadata_text(key) == value)
    for name, wanted in (
        ("rated", filters.has_ratings),
        ("commented", filters.has_comments),
        ("corrected", filters.has_corrections),
    ):
        if wanted is not None:
            where.append(counts.has_said(name) if wanted else not_(counts.has_said(name)))
    return where


def views_of(
    session: Session, traces: Sequence[Trace], *, with_steps: bool = False, with_spans: bool = False
) -> list[RunView]:
    """These traces as views, in their order, with their producers' names and (when asked) their steps
    and spans: a query for each, however many traces (never one per trace)."""
    agents, flows = producer_names(session, traces)
    ids = [t.id for t in traces]
    steps: dict[uuid.UUID, list[Step]] = {i: [] for i in ids}
    spans: dict[uuid.UUID, list[Span]] = {i: [] for i in ids}
    if with_steps and ids:
        query = select(Step).where(Step.trace_id.in_(ids)).order_by(Step.trace_id, Step.index)
        for step in session.scalars(query):
            steps[step.trace_id].append(step)
    if with_spans and ids:
        for span in session.scalars(select(Span).where(Span.trace_id.in_(ids)).order_by(*_SPAN_ORDER)):
            spans[span.trace_id].append(span)
    return [
        RunView(
            t,
            agents.get(t.agent_id) if t.agent_id else None,
            flows.get(t.flow_id) if t.flow_id else None,
            steps[t.id],
            spans[t.id],
        )
        for t in traces
    ]


def traces_in_order(session: Session, trace_ids: Sequence[uuid.UUID]) -> list[Trace]:
    """These traces, in the order given: the rows of a page read as keys first (those gone since left out)."""
    found = {trace.id: trace for trace in session.scalars(select(Trace).where(Trace.id.in_(trace_ids)))}
    return [found[trace_id] for trace_id in trace_ids if trace_id in found]


# Projects whose walks a list merges into one (`keyset.merged`); a caller who sees more projects (with
# runs, for `newest_traces`) than this gets one walk of them all, filtered by project.
MAX_MERGED_PROJECTS = 32


def each_project(
    project_ids: Sequence[uuid.UUID], column: Column = Trace.project_id
) -> list[ColumnElement[bool]]:
    """The project condition of each walk of a list over these projects: one project a walk, so each walk
    is a range of its index the store merges with the others in order; past MAX_MERGED_PROJECTS (or with
    none) a single walk of them all. `column` is the project of the table the walks drive from."""
    if not project_ids or len(project_ids) > MAX_MERGED_PROJECTS:
        return [column.in_(project_ids)]
    return [column == project_id for project_id in project_ids]


def newest_traces(session: Session, actor: Actor, *, limit: int, offset: int) -> tuple[list[Trace], int]:
    """A page of the traces of every project the actor can read, newest first (by when they were
    stored, then id, so the order holds as traces are re-imported), and how many there are in all.

    The total is the sum of the projects' kept counts, never a count of rows. The page is read as
    (created_at, id) keys first, from an index alone: each project's listed runs are one backward walk
    of a partial index on (project, created_at, id), and the store merges the walks (SQLite's MERGE,
    PostgreSQL's Merge Append), so an offset costs the index entries it skips and nothing is sorted.
    Then only the page's rows are read. An offset past the end is an empty page however large it is,
    so it never reaches the database.
    """
    listed = counts.listed_counts(session, [project.id for project, _ in visible_projects(session, actor)])
    project_ids = sorted((p for p, n in listed.items() if n > 0), key=str)
    total = sum(listed.values())
    if offset >= total:
        return [], total
    dialect = session.get_bind().dialect.name
    page = session.execute(_newest_keys(project_ids, limit, offset, dialect))
    return traces_in_order(session, [row.id for row in page]), total


def _newest_keys(
    project_ids: Sequence[uuid.UUID], limit: int, offset: int, dialect: str
) -> Select[datetime, uuid.UUID]:
    """The (created_at, id) of these projects' listed runs, newest stored first, the page at `offset`
    (see `newest_traces`)."""
    key = (Trace.created_at, Trace.id)
    if len(project_ids) > MAX_MERGED_PROJECTS:
        # The project and the flag checked on each row, so SQLite walks (created_at, id) rather than read
        # every listed run of the projects to sort them.
        walks = [
            select(*key).where(
                Unindexed(Trace.project_id.expression).in_(project_ids),
                Unindexed(Trace.hidden.expression) == false(),
            )
        ]
    else:
        walks = [select(*key).where(condition, LISTED) for condition in each_project(project_ids)]
    return merged(walks, key, descending=True, limit=limit, offset=offset, dialect=dialect)


def runs_by_external_id(
    session: Session, actor: Actor, project_id: uuid.UUID, external_ids: Collection[str]
) -> dict[str, Trace]:
    """The project's runs with these external ids, by external id (those it has; the rest are left out)."""
    require_project_role(session, actor, project_id, "read")
    found: dict[str, Trace] = {}
    for chunk in in_chunks(sorted(set(external_ids))):
        query = select(Trace).where(Trace.project_id == project_id, Trace.external_id.in_(chunk))
        found.update((trace.external_id, trace) for trace in session.scalars(query) if trace.external_id)
    return found


def step_total(session: Session, run_ids: Sequence[uuid.UUID]) -> int:
    """How many steps these runs have in all: what an import reports it stored."""
    total = 0
    for chunk in in_chunks(run_ids):
        total += (
            session.scalar(select(func.coalesce(func.sum(Trace.step_count), 0)).where(Trace.id.in_(chunk)))
            or 0
        )
    return total


def project_run_count(session: Session, actor: Actor, project_id: uuid.UUID) -> int:
    """How many runs a project holds: what an export of them will write."""
    require_project_role(session, actor, project_id, "read")
    return counts.listed_counts(session, [project_id]).get(project_id, 0)


def iter_project_runs(
    session: Session, actor: Actor, project_id: uuid.UUID, chunk: int = 200
) -> Iterator[RunView]:
    """Every run of a project with steps and spans, oldest first, fetched a chunk at a time."""
    require_project_role(session, actor, project_id, "read")
    last: tuple[datetime, uuid.UUID] | None = None
    while True:
        query = select(Trace).where(Trace.project_id == project_id, LISTED)
        if last is not None:
            query = query.where(past((Trace.started_at, Trace.id), last, descending=False))
        traces = list(session.scalars(query.order_by(Trace.started_at, Trace.id).limit(chunk)))
        if not traces:
            return
        yield from views_of(session, traces, with_steps=True, with_spans=True)
        session.expunge_all()
        last = (traces[-1].started_at, traces[-1].id)


# ------------------------------------------------------------------------------------------------- erase


def erase_run(session: Session, actor: Actor, run_id: uuid.UUID) -> RunView:
    """Remove a run's content (input, output, metadata, step and span content), keeping what identifies it.

    Takes the project's admin role: erasure is a data-protection act, not an everyday edit.
    """
    trace = readable_trace(session, actor, run_id, "admin")
    erase_contents(session, trace.project_id, [trace.id])
    session.expire_all()
    return _full_view(session, session.get_one(Trace, run_id))


# ------------------------------------------------------------------------------------------------ agents


def list_agents(session: Session, actor: Actor, project_id: uuid.UUID) -> list[Agent]:
    require_project_role(session, actor, project_id, "read")
    return list(session.scalars(select(Agent).where(Agent.project_id == project_id).order_by(Agent.name)))


def _agent_for(session: Session, actor: Actor, agent_id: uuid.UUID, needed: ProjectRole) -> Agent:
    """The agent, if the actor holds `needed` in its project; not found if the actor can't see it."""
    return in_project(session, actor, Agent, agent_id, needed, NotFound("agent", agent_id))


def declare_tools(
    session: Session, actor: Actor, agent_id: uuid.UUID, version: str, tools: list[str]
) -> AgentVersion:
    """Record the tools a version of an agent may call; corrections of its runs may name only these."""
    agent = _agent_for(session, actor, agent_id, "publish")
    declared = session.get(AgentVersion, (agent.id, version))
    if declared is None:
        declared = AgentVersion(agent_id=agent.id, version=version, tools=tools, updated_at=utcnow())
        session.add(declared)
    else:
        declared.tools = tools
        declared.updated_at = utcnow()
    session.flush()
    return declared


def declared_tools(session: Session, actor: Actor, agent_id: uuid.UUID, version: str) -> AgentVersion:
    agent = _agent_for(session, actor, agent_id, "read")
    declared = session.get(AgentVersion, (agent.id, version))
    if declared is None:
        raise NotFound(
            "agent-version", version, f'Agent "{agent_id}" has declared nothing for version "{version}".'
        )
    return declared


def pin_agent_version(session: Session, actor: Actor, agent_id: uuid.UUID, version: str | None) -> Agent:
    """Set (or with None, clear) the version runs of this agent use when they don't name one."""
    agent = _agent_for(session, actor, agent_id, "publish")
    agent.pinned_version = version
    session.flush()
    return agent
