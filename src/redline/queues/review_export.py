"""What the annotation export adds to a person's review value (issue 23, "What training and exports do
with it"): who gave it, and each annotation queue it was given in with the item's adjudicated value
under its key, so a team can compute agreement, or anything else, from the export alone.

A value doesn't record the queue it was saved in: it belongs to a queue when its key is one of the
queue's review keys and its place (the trace, or one span of it) is one of the queue's items
(`annotation.items.on_the_item`), as the agreement counts it. One value may so belong to several
queues. The queues are read in the export's own statement, a correlated subquery per review value
(the items by trace, indexed), never a query per line; other lines skip it.

Each queue is `{"queue_id", "queue_name", "adjudication"}`, ordered by name then id; `adjudication` is
`{"value", "note", "decided_by", "decided_by_name", "decided_at"}` or null.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, String, and_, case, func, literal_column, select, type_coerce
from sqlalchemy.dialects.postgresql import aggregate_order_by

from redline.annotations.export import LineAddition
from redline.annotations.models import Annotation
from redline.db.wire_text import time_text, uuid_text
from redline.queues.annotation.items import on_the_item
from redline.queues.models import Queue, QueueAdjudication, QueueItem, QueueReviewKey
from redline.reviews.kinds import REVIEW_VALUE
from redline.reviews.models import ReviewKey

# The fields a review value's line adds, after the document's, in this order.
REVIEW_FIELDS = ("key", "value", "author_id", "identity_id", "queues")
QUEUE_FIELDS = ("queue_id", "queue_name", "adjudication")
ADJUDICATION_FIELDS = ("value", "note", "decided_by", "decided_by_name", "decided_at")


def review_addition(dialect: str) -> LineAddition:
    """A review value's key and value, its reviewer (`author` is already the name) and its queues."""
    sqlite = dialect == "sqlite"
    value = type_coerce(Annotation.value, String) if sqlite else Annotation.value.expression
    return LineAddition(
        applies=REVIEW_VALUE,
        fields=(
            ("key", Annotation.key.expression, False),
            ("value", value, True),
            ("author_id", uuid_text(Annotation.author_id, dialect), False),
            ("identity_id", Annotation.meta["identity_id"].as_string(), False),
            ("queues", _queues(dialect), True),
        ),
    )


def _queues(dialect: str) -> ColumnElement[Any]:
    """The value's queues as one JSON array (`[]` for none), ordered by name then id."""
    places = (
        select(
            uuid_text(Queue.id, dialect).label("queue_id"),
            Queue.name.label("queue_name"),
            QueueAdjudication.item_id.label("settled"),
            QueueAdjudication.value.label("value"),
            QueueAdjudication.note.label("note"),
            uuid_text(QueueAdjudication.decided_by, dialect).label("decided_by"),
            QueueAdjudication.decided_by_name.label("decided_by_name"),
            time_text(QueueAdjudication.decided_at, dialect).label("decided_at"),
        )
        .select_from(QueueItem)
        .join(Queue, Queue.id == QueueItem.queue_id)
        .join(QueueReviewKey, QueueReviewKey.queue_id == QueueItem.queue_id)
        .join(ReviewKey, and_(ReviewKey.id == QueueReviewKey.review_key_id, ReviewKey.key == Annotation.key))
        .outerjoin(
            QueueAdjudication,
            and_(QueueAdjudication.item_id == QueueItem.id, QueueAdjudication.review_key_id == ReviewKey.id),
        )
        .where(QueueItem.trace_id == Annotation.trace_id, on_the_item())
        .correlate(Annotation)
    )
    if dialect == "sqlite":
        # SQLite before 3.44 orders no aggregate: the rows come ordered from a subquery instead.
        ordered = places.order_by(Queue.name, Queue.id).subquery("places")
        entry = _entry(func.json_object, ordered.c, func.json(ordered.c.value))
        return select(func.json_group_array(entry)).select_from(ordered).scalar_subquery()
    entry = _entry(func.json_build_object, places.selected_columns, places.selected_columns.value)
    listed = func.json_agg(aggregate_order_by(entry, Queue.name, Queue.id))
    return func.coalesce(places.with_only_columns(listed).scalar_subquery(), literal_column("'[]'::json"))


def _entry(build: Any, columns: Any, value: ColumnElement[Any]) -> ColumnElement[Any]:
    """One queue as a JSON object, built with the store's `build` (json_object, json_build_object)."""
    adjudication = build(
        *("value", value),
        *("note", columns.note),
        *("decided_by", columns.decided_by),
        *("decided_by_name", columns.decided_by_name),
        *("decided_at", columns.decided_at),
    )
    settled = case((columns.settled.is_not(None), adjudication), else_=None)
    entry: ColumnElement[Any] = build(
        "queue_id", columns.queue_id, "queue_name", columns.queue_name, "adjudication", settled
    )
    return entry
