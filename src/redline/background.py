"""The background work this Redline does, and the job worker that does it: one list of job kinds,
shared by `redline serve` (a worker on a thread beside the app) and `redline worker` (one alone)."""

from __future__ import annotations

from redline.config import Settings
from redline.db import Database
from redline.jobs.worker import JobKind, JobWorker
from redline.learning.autoscore import SCORING
from redline.learning.training import TRAINING

JOB_KINDS: tuple[JobKind, ...] = (TRAINING, SCORING)


def job_worker(database: Database, settings: Settings) -> JobWorker:
    return JobWorker(database, JOB_KINDS, poll_seconds=settings.job_poll_seconds)
