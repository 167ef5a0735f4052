"""The background job that indexes a newly declared metadata key over the runs its project already had:
a bounded batch per transaction, in (started_at, id) order, keeping its place and progress on the key's
row, so the server answers meanwhile and a retried job goes on where it stopped.

Writes keep a declared key from the moment it is declared; a batch re-copies each of its runs' values
(delete, then copy from the row), so a run written while the job runs is never indexed twice or stale.
On PostgreSQL a batch first locks its runs, in id order, so a concurrent write of one of them waits
for it (or it for the write) instead of both copying at once.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.db import Database, utcnow
from redline.db.keyset import past
from redline.jobs.service import Claimed
from redline.jobs.worker import JobKind, Reporter
from redline.traces.metadata_index import BACKFILL_JOB, BACKFILLING, READY, reindex_key
from redline.traces.models import IndexedMetadataKey, Trace

log = logging.getLogger("redline.traces")

# Runs indexed per transaction: short enough that writers never wait long behind one.
BACKFILL_BATCH = 1_000


def backfill_batch(
    session: Session, key_id: uuid.UUID, size: int = BACKFILL_BATCH
) -> IndexedMetadataKey | None:
    """Index the next `size` runs of the key's project; the key's row after it (None when the key was
    removed meanwhile). The batch that finds fewer than `size` runs makes the key ready."""
    row = session.scalars(
        select(IndexedMetadataKey).where(IndexedMetadataKey.id == key_id).with_for_update()
    ).first()
    if row is None or row.state != BACKFILLING:
        return row
    query = select(Trace.id, Trace.started_at).where(Trace.project_id == row.project_id)
    if row.after_started_at is not None and row.after_id is not None:
        after = (row.after_started_at, row.after_id)
        query = query.where(past((Trace.started_at, Trace.id), after, descending=False))
    batch = session.execute(query.order_by(Trace.started_at, Trace.id).limit(size)).all()
    run_ids = [run_id for run_id, _ in batch]
    if run_ids and session.get_bind().dialect.name == "postgresql":
        session.execute(select(Trace.id).where(Trace.id.in_(run_ids)).order_by(Trace.id).with_for_update())
    reindex_key(session, row.project_id, row.key, run_ids)
    row.runs_done += len(run_ids)
    if batch:
        row.after_id, row.after_started_at = batch[-1][0], batch[-1][1]
    if len(batch) < size:
        row.state = READY
        row.ready_at = utcnow()
        row.runs_total = max(row.runs_total, row.runs_done)
    session.flush()
    return row


def _backfill(db: Database, claimed: Claimed, reporter: Reporter) -> dict[str, Any]:
    key_id = uuid.UUID(claimed.payload["key_id"])
    while True:
        with db.write() as session:
            row = backfill_batch(session, key_id)
            if row is None:
                return {"indexed": False}
            done, total, state = row.runs_done, row.runs_total, row.state
        if state == READY:
            return {"indexed": True, "runs": done}
        reporter(done / total if total else 0.0, f"{done:,} of {total:,} runs indexed")


def _gave_up(session: Session, payload: dict[str, Any], error: str) -> None:
    """The key stays backfilling (searches on it stay unindexed, and say so); declaring it again retries."""
    log.error("indexing metadata key %s gave up: %s", payload.get("key_id"), error)


BACKFILLING_JOB = JobKind(BACKFILL_JOB, _backfill, _gave_up)
