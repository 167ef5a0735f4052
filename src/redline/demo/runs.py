"""Part 1: the support agent's runs, and what later parts need to know of each of them.

Runs already in the project (by their external ids) are left as they are, so running the demo again
adds only what is missing. What the later parts know of a run is read back from the store, not from
the generator, so they act on the runs as stored, whichever demo made them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from redline.db import Database
from redline.identity.service import Actor
from redline.ingest import runs as ingest
from redline.traces import service as traces
from redline.traces.demo import demo_runs
from redline.traces.models import Trace

DEFAULT_COUNT = 200
# The refund-like conversations, by the start of their title (`traces.demo`).
REFUND_TITLES = ("Refund request", "Return request", "Damaged item")


@dataclass(frozen=True)
class DemoRun:
    """One demo run as stored: what the corrections, reviews and ratings of it go by."""

    id: uuid.UUID
    external_id: str
    agent_id: uuid.UUID | None
    version: str | None
    status: str
    title: str
    quality: str | None
    flaw: str | None
    erased: bool
    started_at: datetime

    @property
    def completed(self) -> bool:
        """Completed with its output still there: only such a run can be corrected or rated."""
        return self.status == "completed" and not self.erased

    @property
    def good(self) -> bool:
        return self.quality == "good"

    @property
    def order_id(self) -> str:
        """The order the conversation is about: the title's end (`Refund request · AC-123456`)."""
        return self.title.rsplit(" · ", 1)[-1]

    @property
    def about_a_refund(self) -> bool:
        return self.title.startswith(REFUND_TITLES)

    @classmethod
    def of(cls, trace: Trace) -> DemoRun:
        metadata: dict[str, Any] = trace.meta or {}
        return cls(
            id=trace.id,
            external_id=trace.external_id or "",
            agent_id=trace.agent_id,
            version=trace.agent_version,
            status=trace.status,
            title=trace.title or "",
            quality=metadata.get("quality"),
            flaw=metadata.get("flaw"),
            erased=trace.erased_at is not None,
            started_at=trace.started_at,
        )


@dataclass(frozen=True)
class Runs:
    """The demo's runs in external-id order, and how many of them this time added."""

    runs: list[DemoRun]
    added: int

    def sentence(self, project: str) -> str:
        kept = len(self.runs) - self.added
        return (
            f'Runs: {len(self.runs)} support-agent runs in project "{project}" '
            f"({self.added} added, {kept} already there)."
        )


def completed(runs: Sequence[DemoRun]) -> list[DemoRun]:
    return [run for run in runs if run.completed]


def seed_runs(db: Database, actor: Actor, project_id: uuid.UUID, *, count: int, now: datetime) -> Runs:
    """Store the demo's runs the project doesn't have yet, in one transaction."""
    wanted = demo_runs(project_id, count=count, now=now)
    external_ids = [run.external_id for run in wanted if run.external_id]
    with db.write() as session:
        there = traces.runs_by_external_id(session, actor, project_id, external_ids)
        missing = [run for run in wanted if run.external_id not in there]
        if missing:
            ingest.record_runs(session, actor, missing, source_format="demo")
        stored = traces.runs_by_external_id(session, actor, project_id, external_ids)
        found = [DemoRun.of(stored[external_id]) for external_id in external_ids]
    return Runs(found, len(missing))
