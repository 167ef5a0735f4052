"""The retention pass as a job: erase a project's runs that are past its retention, a batch per
transaction, each batch's runs leaving the expert queue as an erased run does (`ingest.erase_run`),
then give the space back (SQLite) and book the next pass.

The project's retention is read again before every batch, so a pass stops as soon as someone turns
retention off, and a pass that is stopped half-way (a restart, a failure) leaves nothing half-erased:
each batch commits whole or not at all, and the next pass goes on from the oldest run still due.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from redline.db import Database, give_back_space, utcnow
from redline.jobs.service import Claimed
from redline.jobs.worker import JobKind, Reporter
from redline.queues import arrivals
from redline.traces import retention

log = logging.getLogger("redline.ingest")


def erase_due(session: Session, project_id: uuid.UUID, size: int = retention.RETENTION_BATCH) -> int | None:
    """One batch of the project's pass: how many runs it erased, or None when the project keeps its runs
    for good (now)."""
    days = retention.days_kept(session, project_id)
    if days is None:
        return None
    erased = retention.erase_expired(session, project_id, retention.cutoff_for(days), size)
    for run_id in erased:
        arrivals.on_erase(session, run_id)
    return len(erased)


def run_pass(
    db: Database,
    project_id: uuid.UUID,
    on_batch: Callable[[int], None] | None = None,
    size: int = retention.RETENTION_BATCH,
) -> dict[str, Any]:
    """Erase everything due in the project, `size` runs a batch (`on_batch` told how many so far after
    each); what it did."""
    erased, pages = 0, 0
    while True:
        with db.write() as session:
            batch = erase_due(session, project_id, size)
        if batch is None:
            return {"erased": erased, "pagesGivenBack": pages, "retention": False}
        erased += batch
        if batch:
            pages += give_back_space(db.engine)
            if on_batch is not None:
                on_batch(erased)
        if batch < size:
            with db.write() as session:
                retention.book_pass(session, project_id, utcnow() + retention.PASS_EVERY)
            return {"erased": erased, "pagesGivenBack": pages, "retention": True}


def _pass(db: Database, claimed: Claimed, reporter: Reporter) -> dict[str, Any]:
    def said(erased: int) -> None:
        reporter(0.0, f"{erased:,} runs erased")

    return run_pass(db, uuid.UUID(claimed.payload["project_id"]), said)


def _gave_up(session: Session, payload: dict[str, Any], error: str) -> None:
    """A pass that failed for good is logged and tried again at the next hour: retention must not stop."""
    log.error("retention pass of project %s gave up: %s", payload.get("project_id"), error)
    retention.book_pass(session, uuid.UUID(payload["project_id"]), utcnow() + retention.PASS_EVERY)


RETENTION_PASS = JobKind(retention.RETENTION_JOB, _pass, _gave_up)
