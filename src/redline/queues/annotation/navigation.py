"""Stepping through a queue on the review screen: "Item 7 of 43, 12 reviewed", next (J) and previous (K).

The totals are the queue's own counters (kept by `items.py`); the next or previous item is one index
seek on (queue_id, seq), or on (queue_id, reviewed_at, seq) for the next unreviewed one; the position is
arithmetic while the queue has no gaps (items are numbered in the order they came, so a queue nothing
was taken out of is numbered without holes), and otherwise a count over (queue_id, seq) from whichever
end of the queue is nearer, so at most half the queue's index entries. On SQLite a 100,000-item queue
answers in a few milliseconds either way (bench/README.md, "Reviews").
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from redline.errors import Conflict
from redline.identity.service import Actor
from redline.queues.annotation import places
from redline.queues.annotation.places import Standing
from redline.queues.annotation.reviewers import require_reviewer, reviews_queue
from redline.queues.annotation.service import item_of, queue_for
from redline.queues.models import Queue, QueueItem

Direction = Literal["current", "next", "previous"]


@dataclass(frozen=True)
class Place:
    """Where a reviewer is: the item (None past either end), its 1-based position, and the queue's totals."""

    item: QueueItem | None
    position: int | None
    total: int
    reviewed: int


def _count(session: Session, queue_id: uuid.UUID, *where: ColumnElement[bool]) -> int:
    found = session.scalar(
        select(func.count()).select_from(QueueItem).where(QueueItem.queue_id == queue_id, *where)
    )
    return found or 0


def place_of(session: Session, queue: Queue, item: QueueItem | None) -> Place:
    total, reviewed = queue.items_count, queue.reviewed_count
    if item is None:
        return Place(None, None, total, reviewed)
    # Two statements: SQLite reads a lone min() or max() off the index's end, but not both at once.
    in_queue = QueueItem.queue_id == queue.id
    first = session.scalar(select(func.min(QueueItem.seq)).where(in_queue)) or item.seq
    last = session.scalar(select(func.max(QueueItem.seq)).where(in_queue)) or item.seq
    if last - first + 1 == total:
        # No gaps (nothing taken out between the ends): seqs are unique per queue, so as many items as
        # the span of seqs means every seq in it is there, and the position is arithmetic.
        position = item.seq - first + 1
    elif item.seq - first <= last - item.seq:
        position = _count(session, queue.id, QueueItem.seq <= item.seq)
    else:
        position = total - _count(session, queue.id, QueueItem.seq > item.seq)
    return Place(item, position, total, reviewed)


def _neighbour(
    session: Session, queue: Queue, seq: int | None, direction: Direction, unreviewed_only: bool
) -> QueueItem | None:
    query = select(QueueItem).where(QueueItem.queue_id == queue.id)
    if unreviewed_only:
        query = query.where(QueueItem.reviewed_at.is_(None))
    if direction == "previous":
        if seq is not None:
            query = query.where(QueueItem.seq < seq)
        query = query.order_by(QueueItem.seq.desc())
    else:
        if seq is not None:
            query = query.where(QueueItem.seq > seq)
        query = query.order_by(QueueItem.seq.asc())
    return session.scalars(query.limit(1)).first()


def step(
    session: Session,
    actor: Actor,
    queue_id: uuid.UUID,
    *,
    item_id: uuid.UUID | None = None,
    direction: Direction = "current",
    unreviewed_only: bool = False,
) -> Place:
    """The item a reviewer lands on, with its place.

    From `item_id`, `next` and `previous` go one item along (only to unreviewed ones with
    `unreviewed_only`); `current` is that item itself. Without an item, `current` and `next` start at the
    first item (the first unreviewed one), `previous` at the last. Past either end the item is None and
    the totals still come back, so the screen can say "All 43 reviewed".
    """
    queue = queue_for(session, actor, queue_id, "read")
    if item_id is None:
        target = _neighbour(
            session, queue, None, "previous" if direction == "previous" else "next", unreviewed_only
        )
        return place_of(session, queue, target)
    here = item_of(session, actor, queue, item_id)
    if direction == "current":
        return place_of(session, queue, here)
    return place_of(session, queue, _neighbour(session, queue, here.seq, direction, unreviewed_only))


# ------------------------------------------------------------------------------- a reviewer's own places


@dataclass(frozen=True)
class Held:
    """Where a reviewer is, and their part in the item there (None past the end)."""

    place: Place
    standing: Standing | None


def _reviewing(session: Session, actor: Actor, queue_id: uuid.UUID) -> Queue:
    """The queue, for an actor who may review it: write in its project, and one of its reviewers."""
    queue = queue_for(session, actor, queue_id, "write")
    require_reviewer(session, actor, queue)
    return queue


def take_next(
    session: Session, actor: Actor, queue_id: uuid.UUID, *, item_id: uuid.UUID | None = None
) -> Held:
    """The reviewer's next item after `item_id` (none: from the queue's start), held for them: the first
    they have not reviewed or skipped, not fully reviewed, with a place free of others' holds and
    reviews. Past the last such item the place's item is None."""
    queue = _reviewing(session, actor, queue_id)
    after = item_of(session, actor, queue, item_id).seq if item_id is not None else None
    item = places.claim_next(session, actor, queue, after)
    place = place_of(session, queue, item)
    return Held(place, places.standing(session, actor, item, queue.reviewers_per_item) if item else None)


def hold_item(session: Session, actor: Actor, queue_id: uuid.UUID, item_id: uuid.UUID) -> Held:
    """Hold this item for the reviewer (renew their hold), refused (409) when it has no place for them:
    all taken by others, or skipped by them (saving a value takes a skipped item up again)."""
    queue = _reviewing(session, actor, queue_id)
    item = item_of(session, actor, queue, item_id)
    standing = places.hold(session, actor, queue, item)
    if standing.mine == places.SKIPPED:
        raise Conflict(
            "You skipped this item: save a value on it to review it after all.",
            code="annotation-item-skipped",
        )
    if standing.mine not in (places.HELD, places.REVIEWED):
        raise places.no_place(standing.places)
    return Held(place_of(session, queue, item), standing)


def skip_item(session: Session, actor: Actor, queue_id: uuid.UUID, item_id: uuid.UUID) -> Held:
    """The reviewer passes this item over: it leaves their "next" (not the others'), their hold goes."""
    queue = _reviewing(session, actor, queue_id)
    item = item_of(session, actor, queue, item_id)
    standing = places.skip(session, actor, queue, item)
    return Held(place_of(session, queue, item), standing)


# ------------------------------------------------------------------------------ the console's review screen


def open_item(session: Session, actor: Actor, queue_id: uuid.UUID, item_id: uuid.UUID) -> None:
    """The review screen opened on an item: held for the actor if they may review the queue and a place
    is free; otherwise nothing happens (the screen says where the item stands)."""
    queue = queue_for(session, actor, queue_id, "read")
    if reviews_queue(session, actor, queue):
        places.hold(session, actor, queue, item_of(session, actor, queue, item_id))


def next_for_reviewer(
    session: Session, actor: Actor, queue_id: uuid.UUID, item_id: uuid.UUID | None = None
) -> tuple[bool, QueueItem | None]:
    """Whether the actor may review the queue, and if so their next item after `item_id`, held for them
    (`take_next`; None when nothing is left for them)."""
    queue = queue_for(session, actor, queue_id, "read")
    if not reviews_queue(session, actor, queue):
        return False, None
    after = item_of(session, actor, queue, item_id).seq if item_id is not None else None
    return True, places.claim_next(session, actor, queue, after)
