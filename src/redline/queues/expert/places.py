"""Several correctors per run in the expert queue: how many places a run has, each corrector's place in
it (held while they correct it, kept once they have), and where a run stands for one corrector.

A rule wants `correctorsWanted` distinct correctors' corrections (1 unless it says more); a correction is
one person's word on a run, so each live correction is a corrector. A waiting run has `places`
(`ExpertItem.places`, kept by the engine in the transaction that moves the run): the correctors who have
corrected it in a place, and as many more as its rules still want (the most any one of its waiting rules
still wants), so a run never waits for a place nobody can take. A corrector takes a place by opening the
run (a hold, for `HOLD`, the annotation queues' default, renewed each time they open it again) and keeps
it by correcting it. A correction made without a hold takes a free place as it is saved; one made while
every place is held by others still counts (a correction is never refused), without a place.

Claiming is the annotation queues' (queues/holds.py): a unique key per place, so no run has more people
holding or keeping places than it has places, and no place is held twice. A claim reads the run's item
under FOR KEY SHARE (PostgreSQL; SQLite's writes are serial already), which the engine's FOR UPDATE of
the item waits for, so `places` never changes under a claim; places rows are always written last, after
the run, the item and the rules' counters (engine.py's order). Reading where a run stands locks nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, delete, func, select
from sqlalchemy.orm import Session, aliased

from redline.db import insert_ignoring_conflicts, utcnow
from redline.queues import holds
from redline.queues.holds import DEFAULT_HOLD_MINUTES
from redline.queues.holds import HELD as HELD
from redline.queues.models import ExpertItem, ExpertItemCorrector

CORRECTED = "corrected"
HOLD = timedelta(minutes=DEFAULT_HOLD_MINUTES)
ROWS = holds.PlaceRows(ExpertItemCorrector, item="run_id", scope="project_id", kept=CORRECTED)
Other = aliased(ExpertItemCorrector, name="other")


@dataclass(frozen=True)
class Need:
    """What one rule of a run wants: a correction of a group (None: any), from this many correctors."""

    group_id: uuid.UUID | None
    wanted: int
    satisfied: bool


def counting(need_group: uuid.UUID | None, groups: Iterable[uuid.UUID | None]) -> int:
    """How many of these live corrections (by their group) count toward a rule wanting `need_group`: one
    of that group, or any for a rule naming none."""
    return sum(1 for group in groups if need_group is None or group == need_group)


def still_wanted(need: Need, groups: Iterable[uuid.UUID | None]) -> int:
    """How many more correctors the rule waits for, given the run's live corrections (0 once it has them)."""
    return 0 if need.satisfied else max(0, need.wanted - counting(need.group_id, groups))


def places_for(needs: Iterable[Need], groups: Iterable[uuid.UUID | None], kept: int) -> int:
    """A waiting run's places: `kept` (correctors who corrected it in a place) and as many more as its
    most wanting rule still wants; at least one."""
    present = list(groups)
    return max(1, kept + max((still_wanted(need, present) for need in needs), default=0))


@dataclass(frozen=True)
class Standing:
    """Where a run stands for one corrector: their part (held, corrected or none), until when they hold it,
    how many others hold or keep places in it now, of how many places."""

    mine: str | None
    held_until: datetime | None
    taken_by_others: int
    places: int

    @property
    def free(self) -> int:
        return max(0, self.places - self.taken_by_others - (1 if self.mine else 0))


def standing(session: Session, principal_id: uuid.UUID | None, item: ExpertItem) -> Standing:
    """Where the run stands for this person, read without a lock."""
    now = utcnow()
    mine: str | None = None
    held_until: datetime | None = None
    others = 0
    rows = session.execute(
        select(
            ExpertItemCorrector.principal_id, ExpertItemCorrector.state, ExpertItemCorrector.held_until
        ).where(ExpertItemCorrector.run_id == item.run_id, ExpertItemCorrector.slot.is_not(None))
    )
    for who, state, until in rows:
        live = state == CORRECTED or (state == HELD and until is not None and until > now)
        if who == principal_id:
            if live:
                mine, held_until = state, (until if state == HELD else None)
        elif live:
            others += 1
    return Standing(mine, held_until, others, item.places)


def kept_places(session: Session, run_id: uuid.UUID) -> int:
    """How many correctors have corrected the run in a place."""
    found = session.scalar(
        select(func.count()).where(
            ExpertItemCorrector.run_id == run_id,
            ExpertItemCorrector.state == CORRECTED,
            ExpertItemCorrector.slot.is_not(None),
        )
    )
    return found or 0


# ---------------------------------------------------------------------------------------------- claiming


def lock_places(session: Session, run_id: uuid.UUID) -> int:
    """The run's places, its item read under FOR KEY SHARE: the engine's changes of it wait for the claim."""
    return session.execute(
        select(ExpertItem.places)
        .where(ExpertItem.run_id == run_id)
        .with_for_update(read=True, key_share=True)
    ).scalar_one()


def _part(session: Session, run_id: uuid.UUID, principal_id: uuid.UUID) -> str | None:
    return session.scalar(
        select(ExpertItemCorrector.state).where(
            ExpertItemCorrector.run_id == run_id, ExpertItemCorrector.principal_id == principal_id
        )
    )


def take(session: Session, item: ExpertItem, principal_id: uuid.UUID, places: int) -> str | None:
    """Hold a place of the run for the person, or renew their hold; what their part is then: HELD,
    CORRECTED (theirs for good), or None when every place is taken by others. Their holds of other runs
    of the project's queue are let go once they hold this one."""
    now = utcnow()
    until = now + HOLD
    mine = _part(session, item.run_id, principal_id)
    if mine == CORRECTED:
        return CORRECTED
    held = mine == HELD and holds.renew(session, ROWS, item.run_id, principal_id, until)
    if not held:
        values = {
            "principal_id": principal_id,
            "project_id": item.project_id,
            "state": HELD,
            "held_until": until,
        }
        held = holds.claim(session, ROWS, item.run_id, places, now, values)
    if not held:
        return None
    holds.let_go_of_others(session, ROWS, item.project_id, principal_id, item.run_id)
    return HELD


def corrected_by(session: Session, item: ExpertItem, principal_id: uuid.UUID) -> None:
    """The person's correction of the waiting run counts: their hold becomes their place for good, or a
    free place is taken for it, or (every place held by others) it is kept without one. The engine calls
    this with the item locked."""
    now = utcnow()
    kept = {"state": CORRECTED, "held_until": None, "corrected_at": now}
    changed = session.execute(holds.change_own_hold(ROWS, item.run_id, principal_id, **kept))
    if changed.rowcount or _part(session, item.run_id, principal_id) == CORRECTED:  # type: ignore[attr-defined]
        return
    mine = {"principal_id": principal_id, "project_id": item.project_id, **kept}
    if holds.claim(session, ROWS, item.run_id, item.places, now, mine):
        return
    dialect = session.get_bind().dialect.name
    session.execute(
        insert_ignoring_conflicts(ROWS.table, dialect).values(run_id=item.run_id, slot=None, **mine)
    )


def correction_gone(session: Session, run_id: uuid.UUID, principal_id: uuid.UUID) -> None:
    """The person's correction of a waiting run was removed: their place is free again."""
    session.execute(
        delete(ExpertItemCorrector)
        .where(*holds.own(ROWS, run_id, principal_id, CORRECTED))
        .execution_options(synchronize_session=False)
    )


# ----------------------------------------------------------------------------------------------- reading


def open_to(principal_id: uuid.UUID, now: datetime) -> ColumnElement[bool]:
    """Runs with a place this person could take now: not taken by others' live holds and kept places."""
    others = (
        select(func.count())
        .select_from(Other)
        .where(
            Other.run_id == ExpertItem.run_id,
            Other.principal_id != principal_id,
            Other.slot.is_not(None),
            holds.occupies(ROWS, Other, now),
        )
        .scalar_subquery()
    )
    return others < ExpertItem.places


def live_holds(
    session: Session, run_ids: list[uuid.UUID]
) -> dict[uuid.UUID, list[tuple[uuid.UUID, datetime]]]:
    """Who holds each of these runs now, and until when, soonest to lapse first."""
    found: dict[uuid.UUID, list[tuple[uuid.UUID, datetime]]] = {}
    if not run_ids:
        return found
    now = utcnow()
    rows = session.execute(
        select(ExpertItemCorrector.run_id, ExpertItemCorrector.principal_id, ExpertItemCorrector.held_until)
        .where(ExpertItemCorrector.run_id.in_(run_ids), holds.live_hold(ExpertItemCorrector, now))
        .order_by(ExpertItemCorrector.held_until, ExpertItemCorrector.principal_id)
    )
    for run_id, principal_id, until in rows:
        if until is not None:  # a live hold always has its time
            found.setdefault(run_id, []).append((principal_id, until))
    return found
