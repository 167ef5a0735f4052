"""Figures too costly to compute within a request: the job worker computes them and keeps them as its job's
result, and a request serves the newest with its as-of time. One mechanism for every such figure: a large
annotation queue's agreement (`agreement_job.py`, `agreement_served.py`) and the agreement between
corrector groups on trends and a rule's results (`group_agreement_job.py`, `group_agreement_served.py`).

A kind of stored figures (`StoredKind`) says what its jobs compute from their payload, what they are about
(the subject: one job at a time per subject), and what a request locks before it asks for one. Asking for
figures while a job about the same subject is queued or running asks for nothing: that job covers what
changed (`ask_for_figures`). Each run deletes the figures before the last one, so the jobs table holds at
most two per subject (the newest and the one it replaced), not one per run.

A result says when it was computed (`computed_at`, taken before anything is read: what changes while the
job counts makes the figure stale, never left out unseen) beside what the kind keeps to tell cheaply
whether it still holds; each kind tests that itself, and every kind recomputes a figure older than
`REFRESH_AFTER`, since a change in place can leave no trace as cheap to find.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from redline.db import Database, utcnow
from redline.jobs import service as jobs
from redline.jobs.models import DONE, RUNNING
from redline.jobs.service import Claimed
from redline.jobs.worker import JobKind, Reporter

log = logging.getLogger("redline.stats")

# How a served figure came to be: computed for this answer, kept by the job worker, or not yet computed.
LIVE, STORED, COMPUTING = "live", "stored", "computing"
# A stored figure older than this is computed again (`agreement_words.TOO_OLD` and
# `group_agreement_served.TOO_OLD` say it in words).
REFRESH_AFTER = timedelta(hours=1)

Payload = dict[str, Any]


@dataclass(frozen=True)
class StoredKind:
    """One kind of stored figures: its job's name, what the job says it is doing, what a payload is about
    (`subject`), the figures and what they rest on for a payload (`compute`, in a read; it may raise
    `JobFailed`), and what a request locks before it asks for a job (`lock`), so two at once queue one."""

    job: str
    doing: str
    subject: Callable[[Payload], str]
    compute: Callable[[Session, Payload], dict[str, Any]]
    lock: Callable[[Session, Payload], None]

    def job_kind(self) -> JobKind:
        """The worker's kind for these figures: compute, keep the result, forget the one before last."""

        def run(db: Database, claimed: Claimed, report: Reporter) -> dict[str, Any]:
            report(0.0, self.doing, force=True)
            computed_at = utcnow()
            with db.read() as session:
                result = {"computed_at": computed_at.isoformat(), **self.compute(session, claimed.payload)}
            with db.write() as session:
                jobs.keep_newest_done(session, self.job, self.subject(claimed.payload))
            return result

        def gave_up(session: Session, payload: Payload, error: str) -> None:
            # Nothing to mark: the last figure stays served, and the next reader finding it stale asks again.
            log.error("computing %s gave up: %s", self.subject(payload), error)

        return JobKind(self.job, run, gave_up)


@dataclass(frozen=True)
class Asking:
    """Figures of one kind for one payload: what a request asks the job worker for."""

    kind: StoredKind
    payload: Payload

    @property
    def subject(self) -> str:
        return self.kind.subject(self.payload)


@dataclass(frozen=True)
class Stored:
    """The newest figures the job worker kept for a subject, and when they were computed."""

    result: dict[str, Any]
    computed_at: datetime


def in_flight(session: Session, asking: Asking) -> bool:
    """Whether a job about this subject is queued or running: it will count what changed."""
    return jobs.waiting(session, asking.kind.job, asking.subject) or (
        jobs.latest(session, asking.kind.job, asking.subject, RUNNING) is not None
    )


def stored(session: Session, asking: Asking) -> Stored | None:
    """The newest figures kept for the subject; None before the first are computed."""
    job = jobs.latest(session, asking.kind.job, asking.subject, DONE)
    if job is None or job.result is None:
        return None
    return Stored(job.result, datetime.fromisoformat(job.result["computed_at"]))


def too_old(computed_at: datetime) -> bool:
    return utcnow() - computed_at > REFRESH_AFTER


def wanted(session: Session, asking: Asking, missing_or_stale: bool) -> Asking | None:
    """What to ask the job worker for (in a write the caller opens: a fresh answer writes nothing): these
    figures when they are missing or stale and no job about them is queued or running already."""
    return asking if missing_or_stale and not in_flight(session, asking) else None


def ask_if_wanted(db: Database, asking: Asking | None) -> None:
    """At the edge, after the read that served the figures: ask for a job in a short write of its own,
    when the read found figures wanted (`wanted`); nothing otherwise."""
    if asking is not None:
        with db.write() as session:
            ask_for_figures(session, asking)


def ask_for_figures(session: Session, asking: Asking) -> bool:
    """A job to compute the figures, unless one about the same subject is queued or running; True when
    one was queued. What the kind locks is locked first, so two requests at once queue one job."""
    asking.kind.lock(session, asking.payload)
    if in_flight(session, asking):
        return False
    jobs.enqueue(session, asking.kind.job, asking.payload, subject=asking.subject)
    return True
