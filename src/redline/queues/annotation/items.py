"""Putting traces into a queue and taking them out: the writes every way in shares (a person's
add_items, an automation at ingest), so items are numbered, de-duplicated and counted one way.

Each write locks the queue's row first (PostgreSQL; SQLite's write transactions are serial already), so
two writers never number items alike, and the queue's `items_count` and `reviewed_count` stay equal to
what its items say. Whatever deletes items some other way (a future purge of traces) calls `recount`.

Kept free of the traces service, which calls into the automations at ingest.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, case, delete, func, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.util import AliasedClass

from redline.annotations.models import Annotation
from redline.db import in_chunks, insert_ignoring_conflicts, new_id, utcnow
from redline.queues.models import Queue, QueueItem
from redline.traces.models import Span

# The span key of an item that is a whole trace rather than one of its spans.
WHOLE_TRACE = ""


def on_the_item(item: type[QueueItem] | AliasedClass[QueueItem] = QueueItem) -> ColumnElement[bool]:
    """The annotation is on the item's own place (its trace is matched apart): on the trace itself for a
    whole trace (none of its spans), on its span for a span item. A value's span is looked up by its key
    only when it has one. `item` is an alias where the statement has another QueueItem of its own."""
    # Correlated by name: inside an EXISTS over the items (blind.py) the annotation is two levels out.
    span_key = (
        select(Span.span_id).where(Span.id == Annotation.span_id).correlate(Annotation).scalar_subquery()
    )
    return case((Annotation.span_id.is_(None), WHOLE_TRACE), else_=span_key) == item.span_key


def lock_queue(session: Session, queue_id: uuid.UUID) -> None:
    session.execute(select(Queue.id).where(Queue.id == queue_id).with_for_update())


def existing_keys(
    session: Session, queue_id: uuid.UUID, trace_ids: Sequence[uuid.UUID]
) -> set[tuple[uuid.UUID | None, str]]:
    """(trace, span key) of the queue's items on these traces."""
    found: set[tuple[uuid.UUID | None, str]] = set()
    for chunk in in_chunks(sorted(set(trace_ids), key=str)):
        rows = session.execute(
            select(QueueItem.trace_id, QueueItem.span_key).where(
                QueueItem.queue_id == queue_id, QueueItem.trace_id.in_(chunk)
            )
        )
        found.update((trace_id, span_key) for trace_id, span_key in rows)
    return found


def insert_items(session: Session, queue_id: uuid.UUID, rows: Sequence[dict[str, Any]]) -> int:
    """Append items to a queue, numbered after its last; an item already there (same trace and span) is
    skipped, so nothing is ever added twice. Returns how many were added.

    Each row gives `type`, `trace_id`, `span_key`, `datapoint_id`, `added_by_rules`, `added_by`.
    """
    if not rows:
        return 0
    lock_queue(session, queue_id)
    there = existing_keys(session, queue_id, [row["trace_id"] for row in rows])
    new: list[dict[str, Any]] = []
    for row in rows:
        key = (row["trace_id"], row["span_key"])
        if key not in there:
            there.add(key)
            new.append(row)
    if not new:
        return 0
    top = session.scalar(select(func.max(QueueItem.seq)).where(QueueItem.queue_id == queue_id)) or 0
    now = utcnow()
    full = [
        {
            "id": new_id(),
            "queue_id": queue_id,
            "seq": top + offset + 1,
            "added_at": now,
            "used_review_key_ids": None,
            "reviewed_by": None,
            "reviewed_at": None,
            **row,
        }
        for offset, row in enumerate(new)
    ]
    dialect = session.get_bind().dialect.name
    # The unique key stays the last word, should anything bypass the lock.
    session.execute(insert_ignoring_conflicts(cast(Table, QueueItem.__table__), dialect), full)
    session.execute(
        update(Queue).where(Queue.id == queue_id).values(items_count=Queue.items_count + len(full))
    )
    return len(full)


def delete_items(session: Session, queue_id: uuid.UUID, where: ColumnElement[bool] | None = None) -> int:
    """Take out the queue's items matching `where` (all of them without it), keeping the counts right.
    Returns how many went."""
    lock_queue(session, queue_id)
    condition = QueueItem.queue_id == queue_id
    if where is not None:
        condition = condition & where
    gone, gone_reviewed = session.execute(
        select(func.count(), func.count(QueueItem.reviewed_at)).where(condition)
    ).one()
    if gone:
        session.execute(delete(QueueItem).where(condition))
        session.execute(
            update(Queue)
            .where(Queue.id == queue_id)
            .values(
                items_count=Queue.items_count - gone,
                reviewed_count=Queue.reviewed_count - gone_reviewed,
            )
        )
    return int(gone)


def recount(session: Session, queue_id: uuid.UUID) -> None:
    """Set the queue's counts from its items: for whatever removed items without `delete_items`."""
    items, reviewed = session.execute(
        select(func.count(), func.count(QueueItem.reviewed_at)).where(QueueItem.queue_id == queue_id)
    ).one()
    session.execute(
        update(Queue).where(Queue.id == queue_id).values(items_count=items, reviewed_count=reviewed)
    )


def touch_queue(session: Session, queue_id: uuid.UUID, by: uuid.UUID | None) -> None:
    """A change to a queue's items is a change to the queue: its `updated` and `updated_by_id` say so."""
    session.execute(update(Queue).where(Queue.id == queue_id).values(updated_at=utcnow(), updated_by=by))
