"""The tallies a queue rule's results and trends are read from."""

from __future__ import annotations

import uuid

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base


class RuleResultTally(Base):
    """One count of a rule version's results, for one agent version and one day.

    Every event that changes a result (a run queued or skipped by the cap, an item closing or reopening,
    a correction made, replaced or removed on a queued run) adds to these rows in its own transaction,
    so results and trends read a few hundred rows however many corrections there are.

    `day` is the UTC day the run was queued (or skipped by the cap): a period ("the last 30 days") is
    the runs a rule queued in it, with every correction they have. `measure` names the count:
    `added`, `open`, `corrected`, `dismissed`, `erased`, `skippedByCap`, `runsWithCorrections`,
    `corrections:<group id>` and `yes:<group id>` (the group id empty for corrections without one).
    """

    __tablename__ = "rule_result_tallies"

    rule_id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    rule_version: Mapped[int] = mapped_column(Integer, primary_key=True)
    # "" for runs that report no version.
    agent_version: Mapped[str] = mapped_column(String(200), primary_key=True)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)
    measure: Mapped[str] = mapped_column(String(60), primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)
