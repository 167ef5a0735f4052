"""Counts kept on write: how many runs each project lists, and what was said about each run.

A list's `total` and its "has ratings" filters read these rather than counting rows: at a million runs
a `COUNT(*)` or a probe per run costs what the store holds, not what the page shows. So every path
that makes a run, shows or hides one, or says something about one adds its change here, in the
transaction that made it. Each is an atomic `count + delta`, never a read-modify-write, so concurrent
writers add up rather than overwrite each other.
"""

from __future__ import annotations

import functools
import uuid
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, Update, bindparam, event, literal_column, select, update
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from redline.db import StoredId, StoredIds, add_to_counts, execute_many, in_chunks
from redline.traces.models import SAID_COUNTS, ProjectRunCount, Trace

_TRACES = cast(Table, Trace.__table__)
_COUNTS = cast(Table, ProjectRunCount.__table__)


def has_said(name: str) -> ColumnElement[bool]:
    """The condition a run has had a rating (`rated`), comment or correction, as its partial index
    spells it: with the 0 a literal, not a parameter, so both stores can prove the index applies."""
    return _TRACES.c[SAID_COUNTS[name]] > literal_column("0")


# The listed-run deltas of a session's transaction, written just before it commits.
_PENDING_LISTED = "redline.listed_deltas"


def add_listed(session: Session, deltas: Mapping[uuid.UUID, int]) -> None:
    """Add to the projects' listed-run counts when the transaction commits.

    A project's count row is the one row every write into the project updates. Written at once, its lock
    would be held from the first run stored to the commit, so concurrent batches into one project would
    take turns for all that time (on PostgreSQL), and a transaction holding it while waiting for a run's
    lock another one holds could deadlock with it. Written last, it is the last lock a transaction takes
    (in project order), held only for the commit.
    """
    pending: Counter[uuid.UUID] = session.info.setdefault(_PENDING_LISTED, Counter())
    pending.update(deltas)


@event.listens_for(Session, "before_commit")
def _write_listed(session: Session) -> None:
    pending: Counter[uuid.UUID] | None = session.info.pop(_PENDING_LISTED, None)
    if pending:
        rows = [
            {"project_id": p, "listed": d} for p, d in sorted(pending.items(), key=lambda i: str(i[0])) if d
        ]
        add_to_counts(session, _COUNTS, "listed", rows)


@event.listens_for(Session, "after_rollback")
def _forget_listed(session: Session) -> None:
    session.info.pop(_PENDING_LISTED, None)


def show_or_hide(session: Session, hidden_by_run: Mapping[uuid.UUID, bool]) -> None:
    """Set each run's `hidden`, counting the runs that changed in or out of their project's list.

    Only rows whose flag changes are updated, and the count is of the rows the store says changed
    (RETURNING), so two transactions showing the same run count it once.
    """
    deltas: Counter[uuid.UUID] = Counter()
    for hidden in (False, True):
        ids = sorted((run for run, wanted in hidden_by_run.items() if wanted is hidden), key=str)
        for chunk in in_chunks(ids):
            changed = session.execute(
                update(_TRACES)
                .where(_TRACES.c.id.in_(chunk), _TRACES.c.hidden == (not hidden))
                .values(hidden=hidden)
                .returning(_TRACES.c.project_id)
            ).scalars()
            for project_id in changed:
                deltas[project_id] += -1 if hidden else 1
    add_listed(session, deltas)


def listed_counts(session: Session, project_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, int]:
    """The listed-run count of each of these projects that has one (a project without is at zero), as
    committed: a write transaction's own changes are added when it commits."""
    found: dict[uuid.UUID, int] = {}
    for chunk in in_chunks(sorted(project_ids, key=str)):
        rows = session.execute(
            select(ProjectRunCount.project_id, ProjectRunCount.listed).where(
                ProjectRunCount.project_id.in_(chunk)
            )
        )
        found.update({project_id: int(listed) for project_id, listed in rows})
    return found


@dataclass(frozen=True)
class Said:
    """A change to what was said about one run: unflagged ratings, comments, live corrections."""

    rated: int = 0
    commented: int = 0
    corrected: int = 0

    def __add__(self, other: Said) -> Said:
        return Said(
            self.rated + other.rated, self.commented + other.commented, self.corrected + other.corrected
        )

    def __sub__(self, other: Said) -> Said:
        return self + -other

    def __neg__(self) -> Said:
        return Said(-self.rated, -self.commented, -self.corrected)


def add_said(session: Session, changes: Mapping[uuid.UUID, Said]) -> None:
    """Add each run's change to its counts, in run order (two writers lock the rows alike)."""
    _add_said(session, changes, as_text=False)


def add_said_by_stored_id(session: Session, ids: StoredIds, changes: Mapping[StoredId, Said]) -> None:
    """`add_said` for bulk work that keeps its run ids in the driver's form (`StoredIds`)."""
    _add_said(session, changes, as_text=ids.as_text)


def _add_said(session: Session, changes: Mapping[Any, Said], *, as_text: bool) -> None:
    moved = [(run_id, said) for run_id, said in changes.items() if said != Said()]
    if not moved:
        return
    # Only the counts that move are set: each count is in a partial index's condition, and SQLite
    # rewrites the index entry of every column an UPDATE sets, whether or not its value changed.
    counts = tuple(name for name in SAID_COUNTS if any(getattr(said, name) for _, said in moved))
    # Hex digits and a UUID's text sort alike, so writers of either form lock rows in the same order.
    moved.sort(key=lambda item: StoredIds.hex(item[0]))
    rows = [
        {"b_id": run_id, **{f"b_{name}": getattr(said, name) for name in counts}} for run_id, said in moved
    ]
    execute_many(session.connection(), _add_said_statement(counts, as_text), rows)


@functools.lru_cache(maxsize=16)
def _add_said_statement(counts: tuple[str, ...], as_text: bool) -> Update:
    """The UPDATE that adds these of Said's fields to a run's counts, the run named by its id (in the
    driver's form when `as_text`)."""
    run_id = StoredIds(as_text).column(_TRACES.c.id)
    return (
        update(_TRACES)
        .where(run_id == bindparam("b_id"))
        .values({SAID_COUNTS[name]: _TRACES.c[SAID_COUNTS[name]] + bindparam(f"b_{name}") for name in counts})
    )
