"""Queueing, claiming and ending jobs. Each function runs inside the caller's transaction; the worker
(`worker.py`) keeps each step short, so a long job never holds a transaction open while it computes.

Claiming takes the oldest claimable job with `SELECT … FOR UPDATE SKIP LOCKED` on PostgreSQL, so any
number of workers share the table and never take the same job; SQLite serialises writers, so the same
statement (without the lock clause, which SQLite has no need of) is just as safe there.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, func, select, update
from sqlalchemy.orm import Session

from redline.db import bulk_insert, in_chunks, new_id, utcnow
from redline.errors import NotFound
from redline.jobs.models import DONE, FAILED, QUEUED, RUNNING, Job

# How long a failed attempt waits before the next: the first retry soon, later ones further apart.
RETRY_BASE_SECONDS = 5.0


@dataclass(frozen=True)
class Claimed:
    """A job a worker holds: what it is and what it works on, without the session that read it."""

    id: uuid.UUID
    kind: str
    payload: dict[str, Any]
    attempt: int
    max_attempts: int

    @property
    def last_attempt(self) -> bool:
        return self.attempt >= self.max_attempts


def enqueue(
    session: Session,
    kind: str,
    payload: dict[str, Any],
    *,
    subject: str | None = None,
    max_attempts: int = 3,
    run_after: datetime | None = None,
) -> Job:
    """A new queued job, written with the caller's transaction: it exists exactly when what asked for it
    does. `subject` names what it is about, for `waiting`; `run_after` holds it back until then."""
    job = Job(
        id=new_id(), kind=kind, state=QUEUED, payload=payload, subject=subject, max_attempts=max_attempts
    )
    job.created_at = utcnow()
    job.run_after = run_after or job.created_at
    job.attempts = 0
    session.add(job)
    session.flush()
    return job


def waiting(session: Session, kind: str, subject: str) -> bool:
    """Whether a job of this kind about this subject is queued and not yet claimed: work that covers
    everything new when it runs (scoring a project's new traces) needs queueing only once."""
    query = select(Job.id).where(Job.kind == kind, Job.subject == subject, Job.state == QUEUED).limit(1)
    return session.scalar(query) is not None


def schedule(session: Session, kind: str, due: Mapping[str, tuple[dict[str, Any], datetime]]) -> None:
    """One waiting job of `kind` per subject, due when `due` says: a subject's waiting job is put off to
    its new time, a subject without one gets one. Work that should happen once things go quiet (a run
    settling after its last span) is put off this way on every arrival."""
    if not due:
        return
    waiting_ids: dict[str, uuid.UUID] = {}
    subjects = list(due)
    for chunk in in_chunks(subjects):
        query = select(Job.subject, Job.id).where(
            Job.kind == kind, Job.state == QUEUED, Job.subject.in_(chunk)
        )
        waiting_ids.update((subject, job_id) for subject, job_id in session.execute(query) if subject)
    table = cast(Table, Job.__table__)
    if waiting_ids:
        session.execute(
            update(table).where(table.c.id == bindparam("b_id")).values(run_after=bindparam("v_run_after")),
            [{"b_id": job_id, "v_run_after": due[subject][1]} for subject, job_id in waiting_ids.items()],
        )
    now = utcnow()
    bulk_insert(
        session,
        table,
        [
            {
                "id": new_id(),
                "kind": kind,
                "state": QUEUED,
                "payload": payload,
                "subject": subject,
                "result": None,
                "error": None,
                "progress": None,
                "progress_note": None,
                "attempts": 0,
                "max_attempts": 3,
                "run_after": run_after,
                "claimed_by": None,
                "heartbeat_at": None,
                "created_at": now,
                "started_at": None,
                "finished_at": None,
            }
            for subject, (payload, run_after) in due.items()
            if subject not in waiting_ids
        ],
    )


def latest(session: Session, kind: str, subject: str, state: str) -> Job | None:
    """The newest job of this kind about this subject in this state: a recurring job's last run, or the
    one waiting to run next."""
    query = (
        select(Job)
        .where(Job.kind == kind, Job.subject == subject, Job.state == state)
        .order_by(Job.created_at.desc(), Job.id.desc())
        .limit(1)
    )
    return session.scalars(query).first()


def keep_newest_done(session: Session, kind: str, subject: str) -> None:
    """Delete the done jobs of this kind about this subject but the newest: where each run's result
    replaces the last one's (a figure computed again), the table keeps one, not one per run."""
    newest = latest(session, kind, subject, DONE)
    if newest is not None:
        session.execute(
            delete(Job).where(
                Job.kind == kind, Job.subject == subject, Job.state == DONE, Job.id != newest.id
            )
        )


def waiting_count(session: Session, kind: str) -> int:
    """How many jobs of `kind` wait to be run: a backlog callers may refuse to add to."""
    query = select(func.count()).select_from(Job).where(Job.kind == kind, Job.state == QUEUED)
    return session.scalar(query) or 0


def get(session: Session, job_id: uuid.UUID) -> Job:
    job = session.get(Job, job_id)
    if job is None:
        raise NotFound("job", job_id)
    return job


def claimable(session: Session, kinds: frozenset[str], now: datetime | None = None) -> bool:
    """Whether a job of these kinds waits: a read, so an idle worker's polling takes no write lock."""
    now = now or utcnow()
    query = select(Job.id).where(Job.state == QUEUED, Job.run_after <= now, Job.kind.in_(kinds)).limit(1)
    return session.scalar(query) is not None


def claim(
    session: Session, worker: str, kinds: frozenset[str], now: datetime | None = None
) -> Claimed | None:
    """The oldest claimable job of these kinds, now running under `worker`; None when none waits."""
    now = now or utcnow()
    job = session.scalars(
        select(Job)
        .where(Job.state == QUEUED, Job.run_after <= now, Job.kind.in_(kinds))
        .order_by(Job.created_at, Job.id)
        .limit(1)
        .with_for_update(skip_locked=True)
    ).first()
    if job is None:
        return None
    job.state = RUNNING
    job.attempts += 1
    job.claimed_by = worker
    job.heartbeat_at = now
    job.started_at = job.started_at or now
    job.progress = 0.0
    job.progress_note = None
    session.flush()
    return Claimed(job.id, job.kind, dict(job.payload), job.attempts, job.max_attempts)


def _still_mine(session: Session, job_id: uuid.UUID, worker: str, **values: Any) -> bool:
    updated = session.execute(
        update(Job).where(Job.id == job_id, Job.state == RUNNING, Job.claimed_by == worker).values(**values)
    )
    return bool(updated.rowcount)  # type: ignore[attr-defined]


def beat(session: Session, job_id: uuid.UUID, worker: str) -> bool:
    """The heartbeat: the worker holding the job is alive. False when the job is no longer its own
    (taken back after its heartbeat stopped), so it can stop working on it."""
    return _still_mine(session, job_id, worker, heartbeat_at=utcnow())


def report(session: Session, job_id: uuid.UUID, worker: str, progress: float, note: str | None) -> bool:
    """Progress (0–1) and what the job is doing, with a heartbeat; False as `beat` says."""
    fraction = max(0.0, min(1.0, progress))
    return _still_mine(session, job_id, worker, progress=fraction, progress_note=note, heartbeat_at=utcnow())


def finish(session: Session, job_id: uuid.UUID, worker: str, result: dict[str, Any]) -> bool:
    """The job done with its result; False when it was no longer this worker's."""
    return _still_mine(
        session, job_id, worker, state=DONE, result=result, progress=1.0, error=None, finished_at=utcnow()
    )


def fail(session: Session, job_id: uuid.UUID, worker: str, error: str, *, retry: bool) -> str | None:
    """The attempt failed: queued again after a pause when `retry` and attempts remain, else failed for
    good with `error`. Answers the job's new state (None when it was no longer this worker's)."""
    job = session.scalars(select(Job).where(Job.id == job_id).with_for_update()).first()
    if job is None or job.state != RUNNING or job.claimed_by != worker:
        return None
    now = utcnow()
    job.error = error
    job.claimed_by = None
    if retry and job.attempts < job.max_attempts:
        job.state = QUEUED
        job.run_after = now + timedelta(seconds=RETRY_BASE_SECONDS * 2 ** (job.attempts - 1))
    else:
        job.state = FAILED
        job.finished_at = now
    session.flush()
    return job.state


def take_back_stale(session: Session, stale_after: timedelta) -> list[Job]:
    """Running jobs whose heartbeat stopped more than `stale_after` ago (their worker died or hung): queued
    again while attempts remain, else failed. Answers the jobs taken back."""
    cutoff = utcnow() - stale_after
    stale = list(
        session.scalars(
            select(Job)
            .where(Job.state == RUNNING, Job.heartbeat_at < cutoff)
            .with_for_update(skip_locked=True)
        )
    )
    for job in stale:
        lost = f"its worker ({job.claimed_by}) stopped reporting during attempt {job.attempts}"
        job.claimed_by = None
        job.error = lost
        if job.attempts < job.max_attempts:
            job.state = QUEUED
            job.run_after = utcnow()
        else:
            job.state = FAILED
            job.finished_at = utcnow()
    session.flush()
    return stale
