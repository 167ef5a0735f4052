"""Keeping a queue rule's result tallies in step with the queue, and reading them back summed.

Whatever changes a result adds its deltas to a `Deltas` and writes them once, in key order, inside the
transaction that made the change: two writers touching the same rows take their row locks in the same
order (PostgreSQL), and every count is an atomic `count + delta`, never a read-modify-write.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from redline.db import add_to_counts, in_chunks
from redline.queues.models import RuleResultTally

STATE_MEASURES = ("added", "open", "corrected", "dismissed", "erased")
SKIPPED_BY_CAP = "skippedByCap"
RUNS_WITH_CORRECTIONS = "runsWithCorrections"
CORRECTIONS = "corrections:"
YES = "yes:"


@dataclass(frozen=True, order=True)
class Bucket:
    """Where a queued run counts: its rule's version, the agent version that ran, the day it was queued."""

    rule_id: uuid.UUID
    rule_version: int
    agent_version: str
    day: str


@dataclass(frozen=True)
class TallyRow:
    rule_id: uuid.UUID
    rule_version: int
    agent_version: str
    measure: str
    count: int


def day_of(at: datetime) -> str:
    """The UTC day a bucket is filed under, as `YYYY-MM-DD` (text sorts as the days do)."""
    return at.date().isoformat()


def group_key(group_id: uuid.UUID | None) -> str:
    return "" if group_id is None else str(group_id)


def group_of_measure(measure: str) -> uuid.UUID | None:
    """The corrector group a `corrections:`/`yes:` measure counts, None for corrections without one."""
    key = measure.split(":", 1)[1]
    return uuid.UUID(key) if key else None


class Deltas:
    """Changes to the tallies gathered during one change to the queue, written by `write`."""

    def __init__(self) -> None:
        self._counts: dict[tuple[Bucket, str], int] = defaultdict(int)

    def add(self, bucket: Bucket, measure: str, delta: int = 1) -> None:
        self._counts[(bucket, measure)] += delta

    def move(self, bucket: Bucket, from_state: str, to_state: str) -> None:
        self.add(bucket, from_state, -1)
        self.add(bucket, to_state, +1)

    def correction(self, bucket: Bucket, group_id: uuid.UUID | None, marked_right: bool, sign: int) -> None:
        """One live correction on a queued run, counted in (+1) or out (-1)."""
        key = group_key(group_id)
        self.add(bucket, CORRECTIONS + key, sign)
        if marked_right:
            self.add(bucket, YES + key, sign)

    def write(self, session: Session) -> None:
        rows = [
            {
                "rule_id": bucket.rule_id,
                "rule_version": bucket.rule_version,
                "agent_version": bucket.agent_version,
                "day": bucket.day,
                "measure": measure,
                "count": delta,
            }
            for (bucket, measure), delta in sorted(self._counts.items(), key=lambda pair: pair[0])
            if delta
        ]
        add_to_counts(session, RuleResultTally.__table__, "count", rows)
        self._counts.clear()


def read(session: Session, rule_ids: Sequence[uuid.UUID], *, since_day: str | None = None) -> list[TallyRow]:
    """Every measure of these rules by rule version and agent version, summed over the days from
    `since_day` (all days without it)."""
    found: list[TallyRow] = []
    table = RuleResultTally
    for chunk in in_chunks(list(rule_ids)):
        query = (
            select(
                table.rule_id, table.rule_version, table.agent_version, table.measure, func.sum(table.count)
            )
            .where(table.rule_id.in_(chunk))
            .group_by(table.rule_id, table.rule_version, table.agent_version, table.measure)
        )
        if since_day is not None:
            query = query.where(table.day >= since_day)
        found.extend(TallyRow(*row) for row in session.execute(query))
    return found
