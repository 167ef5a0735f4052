"""People's places in a queue's items, held while they work on one: the rule the annotation queues
(annotation/places.py) and the expert queue (expert/places.py) share, and the statements that claim a
place safely under concurrency on both stores.

A place is a row of (item, person) with a `slot`, 0 to the item's places - 1; a unique key on (item,
slot) admits one row per place. A person holds a place (state `held`, live while `held_until` is ahead)
or keeps it for good once done with the item (the queue's own state: `reviewed`, `corrected`). A hold
nobody renews lapses by itself: a read compares `held_until` with now, so nothing has to clear it.

- Claiming inserts the slot with `INSERT … ON CONFLICT DO NOTHING`: of two people taking the last place
  exactly one insert wins (on PostgreSQL the second waits for the first to commit, then inserts nothing)
  and the loser tries the next free place, or finds none.
- A lapsed hold is taken over by deleting it only while it is still lapsed (`DELETE … WHERE held_until
  <= now`), then inserting as above.
- Renewing one's own hold is an `UPDATE` of one's own row while it is still a hold.

So no item has more people than places, and no place is held by two people at once. Reading where an
item stands never locks anything. Each queue keeps its rows in a table of its own (their items are of
different tables), described by a `PlaceRows`; the column names the two share are `principal_id`,
`slot`, `state` and `held_until`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, and_, case, delete, func, or_, select, update
from sqlalchemy.orm import Session

from redline.db import insert_ignoring_conflicts

HELD = "held"
# How long an opened item is held unless its queue says otherwise: an annotation queue's default, and
# the expert queue's hold.
DEFAULT_HOLD_MINUTES = 10


@dataclass(frozen=True)
class PlaceRows:
    """A queue's table of places: its mapped class, the names of its columns naming the item and the
    queue the item is in (the scope a person holds one item of at a time), and the state of a place kept
    for good."""

    model: Any
    item: str
    scope: str
    kept: str

    @property
    def table(self) -> Table:
        return cast(Table, self.model.__table__)

    def item_of(self, row: Any) -> Any:
        """The item column of the model or of an alias of it."""
        return getattr(row, self.item)


def count_where(condition: ColumnElement[bool]) -> ColumnElement[int]:
    """How many of a group's rows meet `condition`: per-person progress counts each state in one grouped
    read."""
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)


def live_hold(row: Any, now: datetime) -> ColumnElement[bool]:
    """A row that is a hold not lapsed at `now` (of the model or an alias of it)."""
    return and_(row.state == HELD, row.held_until > now)


def occupies(rows: PlaceRows, row: Any, now: datetime) -> ColumnElement[bool]:
    """A row that takes a place now: kept for good, or a hold that has not lapsed."""
    return or_(row.state == rows.kept, live_hold(row, now))


def own(rows: PlaceRows, item_id: uuid.UUID, principal_id: uuid.UUID | None, state: str) -> list[Any]:
    """The person's row in the item, while it is still in `state`: what a change of their own part
    touches, so that a row someone else changed in between is left as it is."""
    model = rows.model
    return [rows.item_of(model) == item_id, model.principal_id == principal_id, model.state == state]


def change_own_hold(
    rows: PlaceRows, item_id: uuid.UUID, principal_id: uuid.UUID | None, **values: Any
) -> Any:
    """An UPDATE of the person's hold on the item, while it is still their hold."""
    return (
        update(rows.model)
        .where(*own(rows, item_id, principal_id, HELD))
        .values(**values)
        .execution_options(synchronize_session=False)
    )


def renew(
    session: Session, rows: PlaceRows, item_id: uuid.UUID, principal_id: uuid.UUID, until: datetime
) -> bool:
    """Move the person's own hold on to `until`; False when it is no hold of theirs any more."""
    renewed = session.execute(change_own_hold(rows, item_id, principal_id, held_until=until))
    return bool(renewed.rowcount == 1)  # type: ignore[attr-defined]


def claim(
    session: Session,
    rows: PlaceRows,
    item_id: uuid.UUID,
    places: int,
    now: datetime,
    values: dict[str, Any],
) -> bool:
    """Take the first free place of the item's `places` (a lapsed hold's place counts as free) with a row
    of `values` (the person, their state and times; the item and slot are filled in); False when every
    place is taken."""
    model = rows.model
    taken = {
        slot: (state, until)
        for slot, state, until in session.execute(
            select(model.slot, model.state, model.held_until).where(
                rows.item_of(model) == item_id, model.slot.is_not(None)
            )
        )
    }
    dialect = session.get_bind().dialect.name
    for slot in range(places):
        if slot in taken:
            state, until = taken[slot]
            if state != HELD or until is None or until > now:
                continue
            # A lapsed hold: gone only if it is still lapsed when this runs (nobody renewed or took it).
            session.execute(
                delete(model)
                .where(
                    rows.item_of(model) == item_id,
                    model.slot == slot,
                    model.state == HELD,
                    model.held_until <= now,
                )
                .execution_options(synchronize_session=False)
            )
        # RETURNING says whether the row went in: a driver's rowcount for ON CONFLICT may be -1.
        inserted = session.execute(
            insert_ignoring_conflicts(rows.table, dialect)
            .values(**{rows.item: item_id, "slot": slot, **values})
            .returning(model.slot)
        ).first()
        if inserted is not None:
            return True
    return False


def let_go_of_others(
    session: Session, rows: PlaceRows, scope_id: uuid.UUID, principal_id: uuid.UUID, item_id: uuid.UUID
) -> None:
    """A person holds one item of a queue at a time, the one they have open: opening another lets go of
    their other holds there (what they kept stays)."""
    model = rows.model
    session.execute(
        delete(model)
        .where(
            getattr(model, rows.scope) == scope_id,
            model.principal_id == principal_id,
            model.state == HELD,
            rows.item_of(model) != item_id,
        )
        .execution_options(synchronize_session=False)
    )
