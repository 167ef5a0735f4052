"""The background half of OTLP ingest, as jobs: deriving large runs, and settling runs once their trace
has gone quiet (otlp-ingest §8.9), which is when queue rules, automations and auto-scoring first see
them. A settle job put off by later spans simply finds its run not yet due and waits again.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy.orm import Session

from redline.db import Database, utcnow
from redline.ingest import otlp
from redline.jobs import service as jobs
from redline.jobs.service import Claimed
from redline.jobs.worker import JobKind, Reporter

log = logging.getLogger("redline.ingest")


def _settle(db: Database, claimed: Claimed, reporter: Reporter) -> dict[str, Any]:
    run_id = uuid.UUID(claimed.payload["run_id"])
    now = utcnow()
    with db.write() as session:
        run = otlp.stored_run(session, run_id, settled=True)
        if run is None or run.trace.settled_at is not None:
            return {"settled": False}
        waits = claimed.payload["settle_seconds" if run.derived.has_root else "orphan_settle_seconds"]
        due = run.trace.updated_at + timedelta(seconds=float(waits))
        if now < due:
            jobs.schedule(session, otlp.SETTLE_JOB, {otlp.subject(run_id): (claimed.payload, due)})
            return {"settled": False, "due": due.isoformat()}
        otlp.settle(session, [run], now)
    return {"settled": True}


def _derive(db: Database, claimed: Claimed, reporter: Reporter) -> dict[str, Any]:
    run_id = uuid.UUID(claimed.payload["run_id"])
    with db.write() as session:
        run = otlp.stored_run(session, run_id, settled=False)
        if run is None:
            return {"derived": False}
        otlp.write(session, [run], utcnow(), settle=False)
    return {"derived": True, "steps": len(run.derived.steps)}


def _gave_up(session: Session, payload: dict[str, Any], error: str) -> None:
    """Nobody waits on these jobs: the failure is logged, and the run's next span schedules them again."""
    log.error("OTLP job for run %s gave up: %s", payload.get("run_id"), error)


SETTLING = JobKind(otlp.SETTLE_JOB, _settle, _gave_up)
DERIVING = JobKind(otlp.DERIVE_JOB, _derive, _gave_up)
