"""Counts of live corrections by status, kept as the corrections change (see CorrectionTally)."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.corrections.models import Correction, CorrectionTally
from redline.db import add_to_counts

COUNTED = ("open", "being-fixed", "with-owner", "fixed", "wont-fix", "removed")


def scope_key(project_id: uuid.UUID, producer_id: uuid.UUID | None = None) -> str:
    return f"{project_id}/{producer_id}" if producer_id is not None else str(project_id)


def _keys(correction: Correction) -> list[str]:
    keys = [scope_key(correction.project_id)]
    producer = correction.agent_id or correction.flow_id
    if producer is not None:
        keys.append(scope_key(correction.project_id, producer))
    return keys


def add(session: Session, changes: Iterable[tuple[Correction, str, int]]) -> None:
    """Add each (correction, status, delta) to its project's and its agent's or flow's counts.

    The rows are changed in one sorted order, whatever the order of `changes`: two transactions moving
    corrections opposite ways (open → with-owner and back) would otherwise lock the same rows in opposite
    orders and deadlock on PostgreSQL.
    """
    deltas: dict[tuple[str, str], int] = defaultdict(int)
    for correction, status, delta in changes:
        for key in _keys(correction):
            deltas[(key, status)] += delta
    rows = [
        {"scope_key": key, "status": status, "count": delta}
        for (key, status), delta in sorted(deltas.items())
        if delta != 0
    ]
    add_to_counts(session, CorrectionTally.__table__, "count", rows)


def moved(session: Session, correction: Correction, old_status: str) -> None:
    if old_status != correction.status:
        add(session, [(correction, old_status, -1), (correction, correction.status, +1)])


def read(session: Session, key: str) -> dict[str, int]:
    rows = session.execute(
        select(CorrectionTally.status, CorrectionTally.count).where(CorrectionTally.scope_key == key)
    )
    found: dict[str, int] = {row[0]: row[1] for row in rows}
    return {status: int(found.get(status, 0)) for status in COUNTED}
