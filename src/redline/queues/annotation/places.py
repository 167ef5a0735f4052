"""Several reviewers per item: each person's place in an item, held while they work on it, and when the
item counts as reviewed.

An item of a queue has `reviewers_per_item` places, numbered 0 to N - 1. A person takes one when they
open the item (a hold, live for the queue's `hold_minutes` and renewed by each save) and keeps it once
they have reviewed it; a skip takes none. A hold nobody renews lapses by itself: a read compares
`held_until` with now, so nothing has to clear it for the place to be free again.

Claiming is safe under concurrency on both stores without any check that could race:

- the place is a row, and the unique key on (item, slot) admits one row per place: two people taking
  the last place both insert its slot, and `INSERT … ON CONFLICT DO NOTHING` lets exactly one of them
  have it (on PostgreSQL the second waits for the first to commit and then inserts nothing); the loser
  tries the next free place, or finds none;
- a lapsed hold is taken over by deleting it only while it is still lapsed (`DELETE … WHERE held_until
  <= now`), then inserting as above, so of two people after the same lapsed place one deletes it and
  one insert wins;
- renewing one's own hold is an `UPDATE` of one's own row while it is still a hold: if someone took the
  lapsed place away in between, nothing is renewed and the renewal claims afresh.

So no item ever has more people than places, and no two live holds of different people share a place.
Each write first reads the queue's settings under `FOR KEY SHARE` (PostgreSQL; SQLite's write
transactions are serial already), which a change of `reviewers_per_item` waits for (`FOR UPDATE`), so the
number of places never changes under a claim. Reading where an item stands never locks anything.

An item is reviewed once N distinct people are done with it: with one reviewer per item, a saved value
is a review (the annotation-queues document: "Selecting a value saves immediately and marks the Trace as
reviewed"); with more, a person is done once they have saved a value for every key the queue asks, since
their reviews are compared with each other's. The item's `reviewed_at` and the queue's `reviewed_count`
keep meaning "fully reviewed", so every reader of them reads the same as before.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import ColumnElement, Select, Table, delete, exists, func, select, update
from sqlalchemy.orm import Session, aliased

from redline.annotations.models import Annotation
from redline.db import insert_ignoring_conflicts, utcnow
from redline.errors import Conflict
from redline.identity.service import Actor
from redline.queues import holds
from redline.queues.annotation.items import lock_queue, recount
from redline.queues.holds import HELD as HELD
from redline.queues.models import Queue, QueueItem, QueueItemReviewer
from redline.traces.models import Span

REVIEWED, SKIPPED = "reviewed", "skipped"
# The queue's places, claimed by the code both queues share (queues/holds.py).
ROWS = holds.PlaceRows(QueueItemReviewer, item="item_id", scope="queue_id", kept=REVIEWED)
# How many candidates "next" reads at a time; one is usually enough, the rest serve lost races.
CANDIDATES = 8
NO_PLACE = "annotation-queue-item-taken"

_REVIEWERS = cast(Table, QueueItemReviewer.__table__)
Mine = aliased(QueueItemReviewer, name="mine")
Other = aliased(QueueItemReviewer, name="other")


@dataclass(frozen=True)
class Settings:
    places: int
    hold: timedelta


@dataclass(frozen=True)
class Standing:
    """Where an item stands for one person: their own part (held, reviewed, skipped or none), until when
    they hold it, how many people are done with it and how many others hold it now, of how many places."""

    mine: str | None
    held_until: datetime | None
    done: int
    held_by_others: int
    places: int

    @property
    def open_to_me(self) -> bool:
        """Whether the person has a place in it or could take one now."""
        if self.mine in (HELD, REVIEWED):
            return True
        return self.done + self.held_by_others < self.places


def settings(session: Session, queue_id: uuid.UUID) -> Settings:
    """The queue's places and hold, read under FOR KEY SHARE, which a change of places waits for."""
    places, minutes = session.execute(
        select(Queue.reviewers_per_item, Queue.hold_minutes)
        .where(Queue.id == queue_id)
        .with_for_update(read=True, key_share=True)
    ).one()
    return Settings(places, timedelta(minutes=minutes))


def _own(item_id: uuid.UUID, principal_id: uuid.UUID | None, state: str) -> list[ColumnElement[bool]]:
    return holds.own(ROWS, item_id, principal_id, state)


def _change_own_hold(item_id: uuid.UUID, principal_id: uuid.UUID | None, **values: Any) -> Any:
    return holds.change_own_hold(ROWS, item_id, principal_id, **values)


def _occupies(row: Any, now: datetime) -> ColumnElement[bool]:
    """A row that takes a place now: a review, or a hold that has not lapsed."""
    return holds.occupies(ROWS, row, now)


# ---------------------------------------------------------------------------------------------- reading


def standing(session: Session, actor: Actor, item: QueueItem, places: int) -> Standing:
    """Where the item stands for the actor, read without a lock."""
    now = utcnow()
    mine: str | None = None
    held_until: datetime | None = None
    done = held_by_others = 0
    rows = session.execute(
        select(QueueItemReviewer.principal_id, QueueItemReviewer.state, QueueItemReviewer.held_until).where(
            QueueItemReviewer.item_id == item.id
        )
    )
    for principal_id, state, until in rows:
        live_hold = state == HELD and until is not None and until > now
        if principal_id == actor.principal_id:
            if state in (REVIEWED, SKIPPED):
                mine = state
            elif live_hold:
                mine, held_until = HELD, until
        elif live_hold:
            held_by_others += 1
        if state == REVIEWED:
            done += 1
    return Standing(mine, held_until, done, held_by_others, places)


def _row(session: Session, item_id: uuid.UUID, principal_id: uuid.UUID) -> tuple[str, Any] | None:
    found = session.execute(
        select(QueueItemReviewer.state, QueueItemReviewer.held_until).where(
            QueueItemReviewer.item_id == item_id, QueueItemReviewer.principal_id == principal_id
        )
    ).first()
    return None if found is None else (found[0], found[1])


# ---------------------------------------------------------------------------------------------- claiming


def _take(
    session: Session,
    queue: Queue,
    item_id: uuid.UUID,
    principal_id: uuid.UUID,
    held: Settings,
    *,
    unskip: bool,
) -> str | None:
    """The person's part in the item after trying to hold it: REVIEWED (their place is theirs for good),
    HELD (held or renewed until now + the hold), SKIPPED (they passed it over and `unskip` is off), or
    None when every place is taken by others."""
    now = utcnow()
    until = now + held.hold
    mine = _row(session, item_id, principal_id)
    if mine is not None and mine[0] == REVIEWED:
        return REVIEWED
    if mine is not None and mine[0] == HELD and holds.renew(session, ROWS, item_id, principal_id, until):
        return HELD
    if mine is not None and mine[0] == SKIPPED:
        if not unskip:
            return SKIPPED
        session.execute(
            delete(QueueItemReviewer)
            .where(*_own(item_id, principal_id, SKIPPED))
            .execution_options(synchronize_session=False)
        )
    mine_held = {"principal_id": principal_id, "queue_id": queue.id, "state": HELD, "held_until": until}
    if holds.claim(session, ROWS, item_id, held.places, now, mine_held):
        return HELD
    # No place left; unless the person's own other request took one meanwhile.
    again = _row(session, item_id, principal_id)
    return again[0] if again is not None and again[0] in (HELD, REVIEWED) else None


def _let_go_of_others(session: Session, queue: Queue, principal_id: uuid.UUID, item_id: uuid.UUID) -> None:
    """A person holds one item of a queue at a time: opening another lets go of their other holds there
    (their reviews and skips stay)."""
    holds.let_go_of_others(session, ROWS, queue.id, principal_id, item_id)


def hold(session: Session, actor: Actor, queue: Queue, item: QueueItem) -> Standing:
    """Hold the item for the actor (or renew their hold), if a place is free, letting go of their other
    holds in the queue; where it then stands. An item the actor skipped stays skipped: saving a value on
    it takes it up again."""
    assert actor.principal_id is not None
    held = settings(session, queue.id)
    if _take(session, queue, item.id, actor.principal_id, held, unskip=False) == HELD:
        _let_go_of_others(session, queue, actor.principal_id, item.id)
    return standing(session, actor, item, held.places)


def no_place(places: int) -> Conflict:
    return Conflict(
        f"This item has all the reviewers it asks for ({places}), or its last places are held by others "
        "for now: take the next item instead.",
        code=NO_PLACE,
    )


def _open_items(
    queue_id: uuid.UUID, principal_id: uuid.UUID, places: int, now: datetime
) -> Select[QueueItem]:
    """The queue's items a person could take a place in now, in queue order: not fully reviewed, not
    reviewed or skipped by them, with fewer than `places` others reviewing or holding them."""
    done_or_skipped = exists().where(
        Mine.item_id == QueueItem.id, Mine.principal_id == principal_id, Mine.state.in_((REVIEWED, SKIPPED))
    )
    others = (
        select(func.count())
        .select_from(Other)
        .where(Other.item_id == QueueItem.id, Other.principal_id != principal_id, _occupies(Other, now))
        .scalar_subquery()
    )
    return (
        select(QueueItem)
        .where(
            QueueItem.queue_id == queue_id, QueueItem.reviewed_at.is_(None), ~done_or_skipped, others < places
        )
        .order_by(QueueItem.seq)
    )


def claim_next(
    session: Session, actor: Actor, queue: Queue, after_seq: int | None = None
) -> QueueItem | None:
    """The actor's next item after `after_seq` (none: from the start), held for them: the first, in queue
    order, they could take a place in. One lost to someone quicker is passed over for the one after."""
    assert actor.principal_id is not None
    held = settings(session, queue.id)
    cursor = after_seq
    while True:
        query = _open_items(queue.id, actor.principal_id, held.places, utcnow())
        if cursor is not None:
            query = query.where(QueueItem.seq > cursor)
        candidates = list(session.scalars(query.limit(CANDIDATES)))
        if not candidates:
            return None
        for item in candidates:
            if _take(session, queue, item.id, actor.principal_id, held, unskip=False) == HELD:
                _let_go_of_others(session, queue, actor.principal_id, item.id)
                return item
            cursor = item.seq


def skip(session: Session, actor: Actor, queue: Queue, item: QueueItem) -> Standing:
    """The actor passes the item over: their hold, if any, is let go, and the item never comes up in their
    "next" again (others' still). A review already made can't be skipped."""
    assert actor.principal_id is not None
    held = settings(session, queue.id)
    now = utcnow()
    mine = _row(session, item.id, actor.principal_id)
    if mine is not None and mine[0] == REVIEWED:
        raise Conflict(
            "You have reviewed this item already: a review is not skipped.", code="already-reviewed"
        )
    if mine is None:
        session.execute(
            insert_ignoring_conflicts(_REVIEWERS, session.get_bind().dialect.name).values(
                item_id=item.id,
                principal_id=actor.principal_id,
                queue_id=queue.id,
                slot=None,
                state=SKIPPED,
                skipped_at=now,
            )
        )
    session.execute(
        _change_own_hold(
            item.id, actor.principal_id, state=SKIPPED, slot=None, held_until=None, skipped_at=now
        )
    )
    return standing(session, actor, item, held.places)


# ------------------------------------------------------------------------------------------------ saving


def take_for_saving(session: Session, actor: Actor, queue: Queue, item: QueueItem) -> Settings:
    """Before a reviewer's values are saved: their place in the item, held (renewed) or theirs already. A
    save on an item they skipped takes it up again; one on an item without a free place is refused."""
    assert actor.principal_id is not None
    held = settings(session, queue.id)
    if _take(session, queue, item.id, actor.principal_id, held, unskip=True) not in (HELD, REVIEWED):
        raise no_place(held.places)
    return held


def _has_every_key(session: Session, actor: Actor, item: QueueItem, keys: Sequence[str]) -> bool:
    """Whether the actor has a value of their own on the item's trace (or span) for each of `keys`."""
    if not keys:
        return True
    if item.trace_id is None:
        return False
    on_span: ColumnElement[bool] = Annotation.span_id.is_(None)
    if item.span_key:
        span_pk = session.scalar(
            select(Span.id).where(Span.trace_id == item.trace_id, Span.span_id == item.span_key)
        )
        on_span = Annotation.span_id == span_pk
    said = session.scalar(
        select(func.count(func.distinct(Annotation.key))).where(
            Annotation.trace_id == item.trace_id,
            on_span,
            Annotation.author_id == actor.principal_id,
            Annotation.key.in_(list(keys)),
            Annotation.parent_id.is_(None),
            Annotation.source == "human",
            Annotation.meta["identity_id"].as_string().is_(None),
        )
    )
    return (said or 0) >= len(set(keys))


def after_saving(
    session: Session,
    actor: Actor,
    queue: Queue,
    item: QueueItem,
    held: Settings,
    key_ids: Sequence[str],
    asked_keys: Sequence[str],
) -> None:
    """After a reviewer's values are saved: the keys used, and whether the reviewer (then the item) is done.

    The item's row is locked first (FOR NO KEY UPDATE, which the places' inserts don't wait for), so two
    reviewers finishing the last places at once count their reviews one after the other and the item
    is marked reviewed once, by the one whose review made it so.
    """
    session.execute(select(QueueItem.id).where(QueueItem.id == item.id).with_for_update(key_share=True))
    session.refresh(item)
    used = list(item.used_review_key_ids or [])
    used.extend(key_id for key_id in key_ids if key_id not in used)
    item.used_review_key_ids = used
    now = utcnow()
    if held.places == 1 or _has_every_key(session, actor, item, asked_keys):
        session.execute(
            _change_own_hold(item.id, actor.principal_id, state=REVIEWED, held_until=None, reviewed_at=now)
        )
    if item.reviewed_at is not None:
        return
    done = session.scalar(
        select(func.count())
        .select_from(QueueItemReviewer)
        .where(QueueItemReviewer.item_id == item.id, QueueItemReviewer.state == REVIEWED)
    )
    if (done or 0) >= held.places:
        item.reviewed_by = actor.principal_id
        item.reviewed_at = now
        session.execute(
            update(Queue).where(Queue.id == item.queue_id).values(reviewed_count=Queue.reviewed_count + 1)
        )


# ------------------------------------------------------------------------------------- changing the places


def change_places(session: Session, queue: Queue, places: int) -> None:
    """Give every item of the queue `places` places, and set which are fully reviewed by it: raising the
    number leaves items with fewer people to the reviewers again, lowering it marks those with enough.

    Fewer places than a live hold or a review already occupies are refused, so no item ever has more
    people than places; lapsed holds in the places that go are let go. The queue's row is locked first
    (FOR UPDATE), so this waits for every claim in progress and no claim starts until it is done.
    """
    lock_queue(session, queue.id)
    queue.reviewers_per_item = places
    session.flush()
    now = utcnow()
    in_queue = QueueItemReviewer.queue_id == queue.id
    highest = session.scalar(
        select(func.max(QueueItemReviewer.slot)).where(in_queue, _occupies(QueueItemReviewer, now))
    )
    if highest is not None and highest >= places:
        raise Conflict(
            f"reviewers_per_item: at least {highest + 1} now, since an item has that many people reviewing "
            "or holding it.",
            details={"field": "reviewers_per_item"},
            code="annotation-queue-places-taken",
        )
    session.execute(
        delete(QueueItemReviewer)
        .where(in_queue, QueueItemReviewer.slot >= places)
        .execution_options(synchronize_session=False)
    )
    reviews = (
        select(func.count()).select_from(Other).where(Other.item_id == QueueItem.id, Other.state == REVIEWED)
    )
    last = (
        select(Other.reviewed_at, Other.principal_id)
        .where(Other.item_id == QueueItem.id, Other.state == REVIEWED)
        .order_by(Other.reviewed_at.desc(), Other.principal_id)
        .limit(1)
    )
    in_this_queue = QueueItem.queue_id == queue.id
    session.execute(
        update(QueueItem)
        .where(in_this_queue, QueueItem.reviewed_at.is_not(None), reviews.scalar_subquery() < places)
        .values(reviewed_at=None, reviewed_by=None)
        .execution_options(synchronize_session=False)
    )
    session.execute(
        update(QueueItem)
        .where(in_this_queue, QueueItem.reviewed_at.is_(None), reviews.scalar_subquery() >= places)
        .values(
            reviewed_at=last.with_only_columns(Other.reviewed_at).scalar_subquery(),
            reviewed_by=last.with_only_columns(Other.principal_id).scalar_subquery(),
        )
        .execution_options(synchronize_session=False)
    )
    recount(session, queue.id)
    session.refresh(queue, ["items_count", "reviewed_count"])
