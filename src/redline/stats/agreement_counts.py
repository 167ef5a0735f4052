"""What inter-reviewer agreement is computed from, counted by the store: one grouped statement over the
review values saved on an annotation queue's items (`agreement.py` puts the figures together).

A queue item is a trace, or one span of it (`QueueItem.span_key`); its values are the people's review
values (`reviews.kinds.REVIEW_VALUE`) on exactly that trace or span, one per person per key, since a
person who saves a value again replaces their own (`reviews.annotate.save_values`). A person is the
author together with the `identity_id` their request named, as `save_values` keeps them apart.

The statement lists each item's values under each key as one JSON array of `[who, value]` and groups
the items by that array: what comes back is how many items had each combination of who said what, never
an item each. A queue of 100,000 items reviewed by three of eight people on a three-option key has about
1,500 combinations (listed in up to six orders each, since neither store is asked to order an item's
values: SQLite before 3.44 can't, and PostgreSQL would sort every item). `value_patterns` merges them;
α needs only the values of each combination and κ only the pairs in it (`agreement_maths.py`).

The items are walked in their queue's `seq` order and each one's values found through the annotations'
trace index (`ix_annotations_trace_created`), so the store groups them by item as it goes.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import ColumnElement, String, and_, case, cast, func, literal, select
from sqlalchemy.orm import Session

from redline.annotations.hidden import Hidden
from redline.annotations.models import Annotation
from redline.db.json_values import json_quoted, json_text, json_texts_array
from redline.queues.annotation.items import on_the_item
from redline.queues.models import QueueItem
from redline.reviews.kinds import REVIEW_VALUE

# Between the parts of who said a value: no name or identity has it, and JSON escapes it.
APART = "\x1f"
# Before the name of an author with no principal (the local operator, or one since removed).
NAMED = "~"


@dataclass(frozen=True)
class Reviewer:
    """One person as the agreement tells them apart: a principal (None for the local operator, or one
    since removed, who is told apart by name) and the identity their request named."""

    author_id: uuid.UUID | None
    identity_id: str | None
    name: str | None = None

    @classmethod
    def read(cls, who: str) -> Reviewer:
        author, _, identity = who.partition(APART)
        if author.startswith(NAMED):
            return cls(None, identity or None, author.removeprefix(NAMED))
        return cls(uuid.UUID(author), identity or None)


@dataclass(frozen=True)
class Said:
    """How many of the queue's items had exactly these people saying these values under one key (a
    list of options as a tuple)."""

    key: str
    said: list[tuple[Reviewer, Any]]
    items: int


def _element() -> ColumnElement[str]:
    """One value as `[who, value]` in JSON text, who being the principal's id, or `~` and the name for
    none, then the identity if any (`Reviewer.read`). A principal's id needs no escaping, so the common
    case (no metadata) quotes it without asking the store to."""
    author = cast(Annotation.author_id, String)
    identity = Annotation.meta["identity_id"].as_string()
    who = func.coalesce(author, NAMED + Annotation.author_name) + func.coalesce(APART + identity, "")
    plain = and_(Annotation.meta.is_(None), Annotation.author_id.is_not(None))
    quoted = case((plain, literal('"') + author + '"'), else_=json_quoted(who))
    return literal("[") + quoted + "," + json_text(Annotation.value) + "]"


def _frozen(value: Any) -> Any:
    """A JSON value as a dictionary key: lists as tuples."""
    return tuple(_frozen(item) for item in value) if isinstance(value, list) else value


def value_patterns(session: Session, queue_id: uuid.UUID, keys: Sequence[str], hidden: Hidden) -> list[Said]:
    """Per key, how many of the queue's items with two values or more had each combination of who said
    what: one statement, grouped per item and then per combination; combinations the store listed in
    other orders merged. The values `hidden` from the reader (blind review) are not counted."""
    if not keys:
        return []
    per_item = (
        select(Annotation.key.label("key"), json_texts_array(_element()).label("said"))
        .select_from(QueueItem)
        .join(Annotation, Annotation.trace_id == QueueItem.trace_id)
        .where(
            QueueItem.queue_id == queue_id,
            REVIEW_VALUE,
            Annotation.key.in_(list(keys)),
            on_the_item(),
            *hidden.shown(),
        )
        .group_by(QueueItem.seq, Annotation.key)
        .having(func.count() >= 2)
        .subquery("per_item")
    )
    rows = session.execute(
        select(per_item.c.key, per_item.c.said, func.count()).group_by(per_item.c.key, per_item.c.said)
    )
    merged: Counter[tuple[str, tuple[tuple[str, Any], ...]]] = Counter()
    for key, text, items in rows:
        listed = tuple(sorted((who, _frozen(value)) for who, value in orjson.loads(text)))
        merged[(str(key), listed)] += int(items)
    people = {who: Reviewer.read(who) for _, listed in merged for who, _ in listed}
    return [
        Said(key, [(people[who], value) for who, value in listed], items)
        for (key, listed), items in merged.items()
    ]
