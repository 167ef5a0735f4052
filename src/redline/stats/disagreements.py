"""Where an annotation queue's reviewers disagree: per item and review key, how far their values differ,
most first, with each value, who gave it and the value an admin settled (`queues.annotation.adjudication`),
so a lead can settle them. Items where everyone gave the same value are not listed.

How far values differ, one figure from 0 to 1 that compares across keys and numbers of reviewers:

- a categorical key: the share of the item's values that are not its most common value (three people
  saying a, b and c: 2/3; a, a and b: 1/3; two people apart: 1/2). A multi-select's value is the set of
  options chosen, in any order.
- a range key: the spread, highest value less lowest, as a share of the key's scale (max less min): 1 and
  5 on a 1–5 scale is 1, 3 and 4 is 0.25. A share of the values would call 1 and 5 no further apart
  than 3 and 4.

Rows are ordered by that figure, most apart first; then by how many distinct values the item has (a
three-way split before a two-way one at the same share); then in queue order, then in the order of the
queue's keys. Free text is left out, as agreement leaves it out: two texts can say the same thing in
other words, so their differences measure nothing.

Computed by the store in one grouped statement over the queue's review values (items, then each item's
values grouped by value): nothing is loaded but the page, whose values and names are then read for its
rows alone. The list is an admin's (the admin role in the queue's project): it shows every reviewer's
values, which a reviewer of a blind queue must not read before saving their own (docs/api-queues-datasets.md).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Float, String, case, cast, exists, func, literal, select
from sqlalchemy.orm import Session

from redline.annotations.models import Annotation
from redline.db import in_chunks, parse_id
from redline.db.id_pages import IdPage, no_such_edge, rows_page
from redline.db.json_values import json_holds_text, json_number, json_text
from redline.errors import Invalid
from redline.identity.service import Actor, principal_names
from redline.queues.annotation.adjudication import queue_review_key
from redline.queues.annotation.items import on_the_item
from redline.queues.annotation.service import queue_for, review_keys
from redline.queues.models import Queue, QueueAdjudication, QueueItem
from redline.reviews.kinds import REVIEW_VALUE
from redline.reviews.models import ReviewKey
from redline.stats.agreement_counts import Reviewer
from redline.traces.models import Trace

# Between an item's id and a key in a row's id: no key has it (keys are letters, digits, "_", "." and "-").
ID_APART = ":"
TEXT_KEY = (
    'key: "{key}" is free text: two texts can say the same thing in other words, so its values are not '
    "compared and it has no disagreements."
)


@dataclass(frozen=True)
class GivenValue:
    """One reviewer's value on the item under the key."""

    reviewer: Reviewer
    value: Any


@dataclass(frozen=True)
class Disagreement:
    """One item's values under one key, where they differ. `spread` (highest less lowest) is a range
    key's; `difference` is the figure the list is ordered by (module docstring)."""

    item: QueueItem
    trace_name: str | None
    review_key: ReviewKey
    difference: float
    distinct_values: int
    values_count: int
    spread: float | None
    values: list[GivenValue]
    adjudication: QueueAdjudication | None

    @property
    def id(self) -> str:
        return f"{self.item.id}{ID_APART}{self.review_key.key}"


@dataclass(frozen=True)
class Found:
    """One row of the grouped statement: which item and key, and how far apart."""

    item_id: uuid.UUID
    key: str
    difference: float
    distinct_values: int
    values_count: int
    spread: float | None


def _chosen(review_key: ReviewKey) -> ColumnElement[str]:
    """A multi-select's value as the options it holds, one 0 or 1 each in the key's order, so two sets
    chosen in other orders compare equal."""
    marks = [
        case((json_holds_text(Annotation.value, option["value"]), "1"), else_="0")
        for option in review_key.options or []
    ]
    chosen: ColumnElement[str] = literal("")
    for mark in marks:
        chosen = chosen + mark
    return chosen


def _compared(measured: list[ReviewKey]) -> ColumnElement[str]:
    """A value as it is compared with the others of its item: a range key's number (3 and 3.0 alike), a
    multi-select's set of options, otherwise its JSON text."""
    whens: list[tuple[ColumnElement[bool], ColumnElement[str]]] = [
        (Annotation.key == review_key.key, cast(json_number(Annotation.value), String))
        for review_key in measured
        if review_key.type == "range"
    ]
    whens += [
        (Annotation.key == review_key.key, _chosen(review_key))
        for review_key in measured
        if review_key.type == "categorical" and review_key.multiple
    ]
    return case(*whens, else_=json_text(Annotation.value)) if whens else json_text(Annotation.value)


def _by_key(measured: list[ReviewKey], column: ColumnElement[str], values: dict[str, Any]) -> Any:
    """A CASE giving each key's entry of `values` (NULL for a key without one)."""
    whens = [(column == key, literal(value)) for key, value in values.items()]
    return case(*whens, else_=None) if whens else literal(None)


def _statement(
    queue: Queue, measured: list[ReviewKey], only_open: bool, one: tuple[uuid.UUID, str] | None = None
) -> Any:
    """The disagreements of the queue under the measured keys, as a subquery with the columns `Found`
    has, `seq` and `position` (the key's place in the queue), and `rank_difference` and `rank_distinct`
    (both negated, so the list's order is every column ascending). `one` keeps one item and key."""
    conditions = [
        QueueItem.queue_id == queue.id,
        REVIEW_VALUE,
        Annotation.key.in_([review_key.key for review_key in measured]),
        on_the_item(),
    ]
    if one is not None:
        conditions += [QueueItem.id == one[0], Annotation.key == one[1]]
    # The value as compared is worked out before any grouping: PostgreSQL would not see an expression
    # with bound parameters in GROUP BY as the same one in the select list.
    said = (
        select(
            QueueItem.id.label("item_id"),
            QueueItem.seq.label("seq"),
            Annotation.key.label("key"),
            _compared(measured).label("compared"),
            json_number(Annotation.value).label("number"),
        )
        .select_from(QueueItem)
        .join(Annotation, Annotation.trace_id == QueueItem.trace_id)
        .where(*conditions)
        .subquery("said")
    )
    per_value = (
        select(
            said.c.item_id,
            said.c.seq,
            said.c.key,
            func.count().label("given"),
            func.min(said.c.number).label("low"),
            func.max(said.c.number).label("high"),
        )
        .group_by(said.c.item_id, said.c.seq, said.c.key, said.c.compared)
        .subquery("per_value")
    )
    per_item = (
        select(
            per_value.c.item_id,
            per_value.c.seq,
            per_value.c.key,
            func.count().label("distinct_values"),
            func.sum(per_value.c.given).label("values_count"),
            func.max(per_value.c.given).label("most_common"),
            func.min(per_value.c.low).label("low"),
            func.max(per_value.c.high).label("high"),
        )
        .group_by(per_value.c.item_id, per_value.c.seq, per_value.c.key)
        .having(func.count() >= 2)
        .subquery("per_item")
    )
    scales = {
        review_key.key: float((review_key.max or 0) - (review_key.min or 0))
        for review_key in measured
        if review_key.type == "range"
    }
    spread = (
        case((per_item.c.key.in_(list(scales)), per_item.c.high - per_item.c.low), else_=None)
        if scales
        else cast(literal(None), Float)
    )
    share_apart = 1.0 - cast(per_item.c.most_common, Float) / cast(per_item.c.values_count, Float)
    difference = (
        case(
            (per_item.c.key.in_(list(scales)), spread / _by_key(measured, per_item.c.key, scales)),
            else_=share_apart,
        )
        if scales
        else share_apart
    )
    positions = {review_key.key: position for position, review_key in enumerate(measured)}
    query = select(
        per_item.c.item_id,
        per_item.c.key,
        difference.label("difference"),
        per_item.c.distinct_values,
        per_item.c.values_count,
        spread.label("spread"),
        per_item.c.seq,
        _by_key(measured, per_item.c.key, positions).label("position"),
        (-difference).label("rank_difference"),
        (-per_item.c.distinct_values).label("rank_distinct"),
    )
    if only_open:
        query = query.where(
            ~exists().where(
                QueueAdjudication.item_id == per_item.c.item_id,
                QueueAdjudication.review_key_id == ReviewKey.id,
                ReviewKey.id.in_([review_key.id for review_key in measured]),
                ReviewKey.key == per_item.c.key,
            )
        )
    return query.subquery("measured")


def _order(measured: Any) -> list[Any]:
    return [measured.c.rank_difference, measured.c.rank_distinct, measured.c.seq, measured.c.position]


def _found(row: Any) -> Found:
    return Found(
        row.item_id,
        str(row.key),
        float(row.difference),
        int(row.distinct_values),
        int(row.values_count),
        float(row.spread) if row.spread is not None else None,
    )


def _measured_keys(session: Session, actor: Actor, queue: Queue, key: str | None) -> list[ReviewKey]:
    """The keys the list covers: the one asked for (one of the queue's, and not free text), else every
    key of the queue but its text ones, in the queue's order."""
    if key is not None:
        review_key = queue_review_key(session, actor, queue, key)
        if review_key.type == "text":
            raise Invalid(TEXT_KEY.format(key=key), details={"field": "key"})
        return [review_key]
    return [review_key for review_key in review_keys(session, queue) if review_key.type != "text"]


def _edge_of(session: Session, queue: Queue, measured: list[ReviewKey], only_open: bool) -> Any:
    """How `rows_page` finds the sort key of the row an edge id names (`<item id>:<key>`)."""
    keys = {review_key.key for review_key in measured}

    def edge(ident: str, field: str) -> tuple[Any, ...]:
        item_text, _, key = ident.partition(ID_APART)
        item_id = parse_id(item_text)
        if item_id is None or key not in keys:
            raise no_such_edge(field, ident)
        one = _statement(queue, measured, only_open, (item_id, key))
        row = session.execute(select(*_order(one))).first()
        if row is None:
            raise no_such_edge(field, ident)
        return tuple(row)

    return edge


def _given(session: Session, found: list[Found]) -> dict[tuple[uuid.UUID, str], list[GivenValue]]:
    """Every value on the page's items under their keys, with who gave it (a principal's name as it is
    now), each item's in order of name."""
    wanted = {(one.item_id, one.key) for one in found}
    rows: list[Any] = []
    for chunk in in_chunks(sorted({one.item_id for one in found}, key=str)):
        rows += session.execute(
            select(
                QueueItem.id,
                Annotation.key,
                Annotation.author_id,
                Annotation.author_name,
                Annotation.meta["identity_id"].as_string(),
                Annotation.value,
            )
            .join(Annotation, Annotation.trace_id == QueueItem.trace_id)
            .where(
                QueueItem.id.in_(chunk),
                REVIEW_VALUE,
                Annotation.key.in_(sorted({key for _, key in wanted})),
                on_the_item(),
            )
        ).all()
    names = principal_names(session, [row[2] for row in rows if row[2] is not None])
    given: dict[tuple[uuid.UUID, str], list[GivenValue]] = {pair: [] for pair in wanted}
    for item_id, key, author_id, author_name, identity, value in rows:
        if (item_id, key) in wanted:
            name = names.get(author_id, author_name) if author_id is not None else author_name
            given[(item_id, key)].append(GivenValue(Reviewer(author_id, identity, name), value))
    for values in given.values():
        values.sort(key=lambda one: ((one.reviewer.name or "").casefold(), one.reviewer.identity_id or ""))
    return given


def _rows(session: Session, measured: list[ReviewKey], found: list[Found]) -> list[Disagreement]:
    """The page's rows with their items, traces' names, values and adjudications: a few reads for the
    page alone."""
    item_ids = sorted({one.item_id for one in found}, key=str)
    items: dict[uuid.UUID, QueueItem] = {}
    settled: dict[tuple[uuid.UUID, uuid.UUID], QueueAdjudication] = {}
    for chunk in in_chunks(item_ids):
        items.update(
            (item.id, item) for item in session.scalars(select(QueueItem).where(QueueItem.id.in_(chunk)))
        )
        settled.update(
            ((row.item_id, row.review_key_id), row)
            for row in session.scalars(select(QueueAdjudication).where(QueueAdjudication.item_id.in_(chunk)))
        )
    names: dict[uuid.UUID | None, str | None] = {}
    trace_ids = sorted({item.trace_id for item in items.values() if item.trace_id is not None}, key=str)
    for chunk in in_chunks(trace_ids):
        rows = session.execute(select(Trace.id, Trace.title, Trace.external_id).where(Trace.id.in_(chunk)))
        names.update((trace_id, title or external_id) for trace_id, title, external_id in rows)
    keys = {review_key.key: review_key for review_key in measured}
    given = _given(session, found)
    return [
        Disagreement(
            item=items[one.item_id],
            trace_name=names.get(items[one.item_id].trace_id) if items[one.item_id].trace_id else None,
            review_key=keys[one.key],
            difference=one.difference,
            distinct_values=one.distinct_values,
            values_count=one.values_count,
            spread=one.spread,
            values=given[(one.item_id, one.key)],
            adjudication=settled.get((one.item_id, keys[one.key].id)),
        )
        for one in found
    ]


def disagreements(
    session: Session,
    actor: Actor,
    queue_id: uuid.UUID,
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
    key: str | None = None,
    only_open: bool = False,
) -> IdPage[Disagreement]:
    """A page of the queue's disagreements, most apart first (module docstring), for an admin of its
    project. `key` keeps one review key's; `only_open` those with no settled value yet. A row's id is
    `<item id>:<key>`, as `starting_after` and `ending_before` take it."""
    queue = queue_for(session, actor, queue_id, "admin")
    measured = _measured_keys(session, actor, queue, key)
    if not measured:
        return rows_page(
            lambda _: [],
            select(literal(1)),
            [],
            _edge_of(session, queue, measured, only_open),
            limit=limit,
            starting_after=starting_after,
            ending_before=ending_before,
        )
    table = _statement(queue, measured, only_open)
    page: IdPage[Found] = rows_page(
        lambda paged: [_found(row) for row in session.execute(paged)],
        select(table),
        _order(table),
        _edge_of(session, queue, measured, only_open),
        limit=limit,
        starting_after=starting_after,
        ending_before=ending_before,
        descending=False,
    )
    return IdPage(_rows(session, measured, page.items), page.has_more)
