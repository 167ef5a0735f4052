"""The background work this Redline does, and the job worker that does it: one list of job kinds,
shared by `redline serve` (a worker on a thread beside the app) and `redline worker` (one alone).

Training is handed the LLM the settings name (`redline.adapters.llm`), if any: the learning services define
what they need of one and never speak HTTP themselves.
"""

from __future__ import annotations

from redline.adapters.llm import chat_model
from redline.config import Settings
from redline.db import Database
from redline.ingest.retention import RETENTION_PASS
from redline.ingest.settling import DERIVING, SETTLING
from redline.jobs.worker import JobKind, JobWorker
from redline.learning.autoscore import SCORING
from redline.learning.training import TRAINING, training_job
from redline.stats.agreement_job import COMPUTING_AGREEMENT
from redline.stats.group_agreement_job import COMPUTING_GROUP_AGREEMENT
from redline.traces.metadata_backfill import BACKFILLING_JOB

# The kinds with no LLM configured: feedback-derived alternatives skipped.
JOB_KINDS: tuple[JobKind, ...] = (
    TRAINING,
    SCORING,
    SETTLING,
    DERIVING,
    BACKFILLING_JOB,
    RETENTION_PASS,
    COMPUTING_AGREEMENT,
    COMPUTING_GROUP_AGREEMENT,
)


def job_kinds(settings: Settings) -> tuple[JobKind, ...]:
    """The job kinds, training wired to the LLM of these settings."""
    return (training_job(chat_model(settings)), *JOB_KINDS[1:])


def job_worker(database: Database, settings: Settings) -> JobWorker:
    return JobWorker(database, job_kinds(settings), poll_seconds=settings.job_poll_seconds)
