"""The console's traces list: a page of traces with what was said about each, filtered and sorted.

The rm surface's `newest_traces` pages by offset over one fixed order and `list_runs` has one order;
the console's list sorts by a column, filters on whether people rated, commented on or corrected a
trace, and must stay fast on 100,000 traces. So a page here is a keyset page on (sort key, id), read as
plain columns (never a trace's input and output, which are most of its row), and only the rows on the
page are counted: counting every trace to sort by a count would read every annotation, so counts are
filters ("has ratings"), not sort keys.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import ColumnElement, func, not_, select
from sqlalchemy.orm import Session

from redline.annotations.service import TraceCounts, counts
from redline.corrections.models import COUNTED, Correction
from redline.db.keyset import merged, past, window
from redline.db.paging import check_limit, decode_cursor, encode_cursor
from redline.errors import Invalid
from redline.identity.service import Actor, readable_project_ids
from redline.sentences import listed
from redline.traces.counts import has_said, listed_counts
from redline.traces.models import Agent, Trace
from redline.traces.service import LISTED, each_project, producer_names

SortKey = Literal["started", "steps", "status"]
# The columns a list may sort by: each is a column of the trace itself, so a page is one ordered walk.
SORT_KEYS: tuple[SortKey, ...] = ("started", "steps", "status")
DEFAULT_SORT = "-started"
_SORT_COLUMNS: dict[str, Any] = {
    "started": Trace.started_at,
    "steps": Trace.step_count,
    "status": Trace.status,
}

# Ids read per query when walking every trace a filter matches.
MATCHING_PAGE = 1_000
# A name list for a filter: more agents than this is no longer a list to pick from.
MAX_AGENT_NAMES = 500


@dataclass(frozen=True)
class ListFilters:
    """What narrows the list; None leaves a filter out. `has_*` True keeps traces that have one, False
    those that have none. `since` is inclusive and `until` exclusive, on the start time."""

    project_id: uuid.UUID | None = None
    agent: str | None = None
    version: str | None = None
    status: str | None = None
    has_ratings: bool | None = None
    has_comments: bool | None = None
    has_corrections: bool | None = None
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True)
class TraceRow:
    """One line of the list: the trace's own facts and the counts of what was said about it."""

    id: uuid.UUID
    project_id: uuid.UUID
    external_id: str | None
    title: str | None
    agent_name: str | None
    flow_name: str | None
    version: str | None
    status: str
    started_at: datetime
    ended_at: datetime | None
    step_count: int
    said: TraceCounts
    corrections: int
    # A trained reward model's latest score, which the console adds (scores are the learning domain's,
    # above this one); None while no model has scored the trace (never made up).
    latest_score: float | None = None


@dataclass(frozen=True)
class TracePage:
    rows: list[TraceRow]
    # Cursors of the pages either side, None where there is none.
    before: str | None
    after: str | None


def parse_sort(sort: str | None) -> tuple[SortKey, bool]:
    """The column and whether it descends, from `started` / `-started`; anything else is bad input."""
    text = sort or DEFAULT_SORT
    key = text.removeprefix("-")
    if key not in SORT_KEYS:
        raise Invalid(
            f'sort: the list sorts by {listed(SORT_KEYS, "or")} (a "-" before one reverses the order); '
            f'"{key}" is not one of them.',
            details={"field": "sort"},
        )
    return key, text.startswith("-")


def _has(condition: ColumnElement[bool], wanted: bool | None) -> ColumnElement[bool] | None:
    if wanted is None:
        return None
    return condition if wanted else not_(condition)


def _conditions(
    session: Session, projects: list[uuid.UUID], filters: ListFilters
) -> list[ColumnElement[bool]]:
    """The WHERE of the list over these projects, read in id order or counted."""
    return [Trace.project_id.in_(projects), *_narrowed(session, projects, filters)]


def _narrowed(
    session: Session, projects: list[uuid.UUID], filters: ListFilters, *, windowed: bool = True
) -> list[ColumnElement[bool]]:
    """The WHERE of the list within a project's runs (without the since/until window unless `windowed`).
    An agent is matched by its ids (few), so the (agent, started) index serves."""
    where: list[ColumnElement[bool]] = [LISTED]
    if filters.agent:
        agent_ids = list(
            session.scalars(
                select(Agent.id).where(Agent.project_id.in_(projects), Agent.name == filters.agent)
            )
        )
        where.append(Trace.agent_id.in_(agent_ids))
    if filters.version:
        where.append(Trace.agent_version == filters.version)
    if filters.status:
        where.append(Trace.status == filters.status)
    if windowed:
        where.extend(window((Trace.started_at,), filters.since, filters.until, None, descending=True))
    # Each "has" reads the trace's own kept counts (`redline.traces.counts`); "has one" is a walk of its
    # partial index, newest first, rather than a probe of every trace for an annotation.
    rated, commented, corrected = (has_said(name) for name in ("rated", "commented", "corrected"))
    for condition, wanted in (
        (rated, filters.has_ratings),
        (commented, filters.has_comments),
        (corrected, filters.has_corrections),
    ):
        has = _has(condition, wanted)
        if has is not None:
            where.append(has)
    return where


def _cursor_of(key: SortKey, row: Any) -> str:
    value = getattr(row, _SORT_COLUMNS[key].key)
    return encode_cursor(value.isoformat() if isinstance(value, datetime) else str(value), str(row.id))


def _decode(key: SortKey, cursor: str) -> tuple[Any, uuid.UUID]:
    value, ident = decode_cursor(cursor, 2)
    try:
        parsed: Any = (
            datetime.fromisoformat(value) if key == "started" else int(value) if key == "steps" else value
        )
        return parsed, uuid.UUID(ident)
    except ValueError:
        raise Invalid(
            f'"{cursor}" is not a cursor this list gave out.', details={"field": "cursor"}
        ) from None


_COLUMNS = (
    Trace.id,
    Trace.project_id,
    Trace.external_id,
    Trace.title,
    Trace.agent_id,
    Trace.flow_id,
    Trace.agent_version,
    Trace.status,
    Trace.started_at,
    Trace.ended_at,
    Trace.step_count,
)


def list_traces(
    session: Session,
    actor: Actor,
    filters: ListFilters,
    *,
    sort: str | None = None,
    limit: int = 50,
    after: str | None = None,
    before: str | None = None,
) -> TracePage:
    """A page of the traces the actor can read, sorted by `sort` (`-started`, newest first, by default)
    with ties in id order, after the cursor `after` or before the cursor `before`."""
    check_limit(limit)
    key, descending = parse_sort(sort)
    column = _SORT_COLUMNS[key]
    projects = readable_project_ids(session, actor, filters.project_id)
    where = _narrowed(session, projects, filters, windowed=False)
    # Reading backwards (the page before a cursor) walks the same order reversed, then turns it round.
    backwards = before is not None and after is None
    walk_descending = descending != backwards
    cursor = before if backwards else after
    edge = _decode(key, cursor) if cursor else None
    bounds = (filters.since, filters.until)
    if key == "started":
        where.extend(window((column, Trace.id), *bounds, edge, descending=walk_descending))
    else:
        where.extend(window((Trace.started_at,), *bounds, None, descending=walk_descending))
        if edge is not None:
            where.append(past((column, Trace.id), edge, descending=walk_descending))
    # A walk of each project's index in the sort's order, merged.
    walks = [select(*_COLUMNS).where(condition, *where) for condition in each_project(projects)]
    dialect = session.get_bind().dialect.name
    page = merged(walks, (column, Trace.id), descending=walk_descending, limit=limit + 1, dialect=dialect)
    rows = list(session.execute(page))
    more = len(rows) > limit
    rows = rows[:limit]
    if backwards:
        rows.reverse()
    has_before = more if backwards else cursor is not None
    has_after = True if backwards else more
    return TracePage(
        _with_counts(session, rows),
        _cursor_of(key, rows[0]) if rows and has_before else None,
        _cursor_of(key, rows[-1]) if rows and has_after else None,
    )


def matching_ids(
    session: Session, actor: Actor, filters: ListFilters, *, page: int = MATCHING_PAGE
) -> Iterator[uuid.UUID]:
    """The id of every trace the list shows with these filters, in id order, read `page` ids per query
    (a keyset walk on the primary key): "all matching the filter" may be every trace of the store, and
    only its ids are ever read, a page at a time."""
    where = _conditions(session, readable_project_ids(session, actor, filters.project_id), filters)
    last: uuid.UUID | None = None
    while True:
        query = select(Trace.id).where(*where)
        if last is not None:
            query = query.where(Trace.id > last)
        ids = list(session.scalars(query.order_by(Trace.id).limit(page)))
        yield from ids
        if len(ids) < page:
            return
        last = ids[-1]


def whole_list(filters: ListFilters) -> bool:
    """Whether the filters leave the list whole (nothing but a project): its count is then kept."""
    return replace(filters, project_id=None) == ListFilters()


def count_matching(session: Session, actor: Actor, filters: ListFilters, *, most: int | None = None) -> int:
    """How many traces the list shows with these filters. The whole list (no filter but the project) is
    the projects' kept counts, read in one small query however many runs they hold; a filtered list is
    counted in SQL, and with `most` no further than `most + 1` rows (more than `most` then reads as
    `most + 1`), so a page that only names the count never counts a million rows."""
    projects = readable_project_ids(session, actor, filters.project_id)
    if whole_list(filters):
        return sum(listed_counts(session, projects).values())
    matching = select(Trace.id).where(*_conditions(session, projects, filters))
    if most is not None:
        matching = matching.limit(most + 1)
    return int(session.scalar(select(func.count()).select_from(matching.subquery())) or 0)


def _with_counts(session: Session, rows: Sequence[Any]) -> list[TraceRow]:
    """The page's rows with their counts and producers' names, in a query for each (never one per row)."""
    ids = [row.id for row in rows]
    said = counts(session, ids)
    corrected = correction_counts(session, ids)
    agents, flows = producer_names(session, rows)
    return [
        TraceRow(
            id=row.id,
            project_id=row.project_id,
            external_id=row.external_id,
            title=row.title,
            agent_name=agents.get(row.agent_id) if row.agent_id else None,
            flow_name=flows.get(row.flow_id) if row.flow_id else None,
            version=row.agent_version,
            status=row.status,
            started_at=row.started_at,
            ended_at=row.ended_at,
            step_count=row.step_count,
            said=said.get(row.id, TraceCounts()),
            corrections=corrected.get(row.id, 0),
        )
        for row in rows
    ]


def correction_counts(session: Session, trace_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, int]:
    """Live corrections (neither replaced nor removed) per run, in one aggregate query."""
    if not trace_ids:
        return {}
    rows = session.execute(
        select(Correction.run_id, func.count())
        .where(Correction.run_id.in_(list(trace_ids)), COUNTED)
        .group_by(Correction.run_id)
    )
    return {run_id: int(count) for run_id, count in rows}


def agent_names(session: Session, actor: Actor, project_id: uuid.UUID | None = None) -> list[str]:
    """The names of the agents of the projects the actor can read, for the list's agent filter."""
    projects = readable_project_ids(session, actor, project_id)
    return list(
        session.scalars(
            select(Agent.name)
            .where(Agent.project_id.in_(projects))
            .distinct()
            .order_by(Agent.name)
            .limit(MAX_AGENT_NAMES)
        )
    )
