"""The jobs table: one row per piece of background work (training a reward model, scoring, …)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Float, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base, JSONDocument, UTCDateTime, new_id, utcnow

QUEUED = "queued"
RUNNING = "running"
DONE = "done"
FAILED = "failed"
STATES = (QUEUED, RUNNING, DONE, FAILED)


class Job(Base):
    """One piece of background work and where it stands.

    A job is queued in the same transaction as what asked for it, so nothing asked for is lost when a
    process dies; a worker claims it (`running`, with its name and a heartbeat), reports progress, and
    ends it `done` with a result or `failed` with the reason. A running job whose heartbeat stops is
    taken back and tried again, up to `max_attempts`.
    """

    __tablename__ = "jobs"
    __table_args__ = (
        Index("ix_jobs_claimable", "state", "run_after", "created_at"),
        Index("ix_jobs_kind_subject_state", "kind", "subject", "state"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(60))
    state: Mapped[str] = mapped_column(String(12), default=QUEUED)
    # What the job works on, e.g. {"reward_model_id": "…"}: ids, never the data itself.
    payload: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
    # What the job is about, for work that needs queueing only once at a time ("project:<id>").
    subject: Mapped[str | None] = mapped_column(String(120))
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    error: Mapped[str | None] = mapped_column(Text)
    # 0.0–1.0 and a few words on what it is doing, while it runs.
    progress: Mapped[float | None] = mapped_column(Float)
    progress_note: Mapped[str | None] = mapped_column(String(200))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer, default=3)
    # Not claimed before this time: a job tried again waits a little first.
    run_after: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    claimed_by: Mapped[str | None] = mapped_column(String(120))
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
