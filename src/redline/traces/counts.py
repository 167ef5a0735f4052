"""Counts kept on write: how many runs each project lists, and what was said about each run.

A list's `total` and its "has ratings" filters read these rather than counting rows: at a million runs
a `COUNT(*)` or a probe per run costs what the store holds, not what the page shows. So every path
that makes a run, shows or hides one, or says something about one adds its change here, in the
transaction that made it. Each is an atomic `count + delta`, never a read-modify-write, so concurrent
writers add up rather than overwrite each other.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Table, bindparam, event, literal_column, select, update
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from redline.db import add_to_counts, in_chunks
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
    rows = [
        {"b_id": run_id, "b_rated": said.rated, "b_commented": said.commented, "b_corrected": said.corrected}
        for run_id, said in sorted(changes.items(), key=lambda item: str(item[0]))
        if said != Said()
    ]
    if rows:
        session.connection().execute(_ADD_SAID, rows)


_ADD_SAID = (
    update(_TRACES)
    .where(_TRACES.c.id == bindparam("b_id"))
    .values(
        rated_count=_TRACES.c.rated_count + bindparam("b_rated"),
        comment_count=_TRACES.c.comment_count + bindparam("b_commented"),
        correction_count=_TRACES.c.correction_count + bindparam("b_corrected"),
    )
)
