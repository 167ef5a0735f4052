"""Retention: a project keeps its runs' content for so many days after each run started, then a pass
erases it, as erasing a run on request does (`erasure.erase_contents`): what people said stays.

The pass is a background job per project (`ingest.retention` runs it): the project's oldest runs whose
content is still there, `RETENTION_BATCH` at a time, each batch its own short transaction, so the server
answers meanwhile and a pass stopped half-way loses nothing but time. A pass that has erased everything
due books the next one `PASS_EVERY` later; setting a project's retention books one at once.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.db import utcnow
from redline.errors import Invalid
from redline.identity.models import Project
from redline.identity.service import Actor, require_project_role
from redline.jobs import service as jobs
from redline.jobs.models import DONE, QUEUED
from redline.traces.erasure import erase_contents
from redline.traces.models import Trace

RETENTION_JOB = "retention"
# Runs erased per transaction: short enough that writers never wait long behind one.
RETENTION_BATCH = 1_000
# How often a project's pass looks for runs that became due: retention is in days, so an hour late at most.
PASS_EVERY = timedelta(hours=1)
# A century: longer is keeping for good, which is what no retention says.
MAX_RETENTION_DAYS = 36_500


@dataclass(frozen=True)
class Retention:
    """A project's retention as people read it: how long, what is due now, and how its passes go."""

    days: int | None
    # Runs that started before this have their content erased (or soon will).
    cutoff: datetime | None
    last_pass_at: datetime | None
    last_pass_erased: int | None
    next_pass_at: datetime | None


def cutoff_for(days: int, now: datetime | None = None) -> datetime:
    """When a run must have started to keep its content today."""
    return (now or utcnow()) - timedelta(days=days)


def not_days() -> Invalid:
    """What every path (API, CLI, console) says of a retention that is not one."""
    return Invalid(
        f"retentionDays: give a whole number of days from 1 to {MAX_RETENTION_DAYS:,}, "
        "or none to keep runs for good.",
        details={"field": "retentionDays"},
    )


def check_days(days: int | None) -> int | None:
    """The days as given, if they are a retention: a whole number of days from 1 to a century, or None."""
    if days is not None and not 1 <= days <= MAX_RETENTION_DAYS:
        raise not_days()
    return days


def set_retention(session: Session, actor: Actor, project_id: uuid.UUID, days: int | None) -> Project:
    """Keep the project's runs' content `days` days (None: for good); a project admin's choice, since what
    a pass erases cannot come back. A pass is booked at once, so runs already due go soon."""
    project = require_project_role(session, actor, project_id, "admin")
    project.retention_days = check_days(days)
    if days is not None:
        book_pass(session, project.id, utcnow())
    session.flush()
    return project


def book_pass(session: Session, project_id: uuid.UUID, when: datetime) -> None:
    """The project's next pass, due `when` (a pass already waiting is moved there)."""
    jobs.schedule(session, RETENTION_JOB, {str(project_id): ({"project_id": str(project_id)}, when)})


def get_retention(session: Session, actor: Actor, project_id: uuid.UUID) -> Retention:
    """The project's retention and how its passes go; anyone who can read the project may see it."""
    project = require_project_role(session, actor, project_id, "read")
    last = jobs.latest(session, RETENTION_JOB, str(project.id), DONE)
    waiting = jobs.latest(session, RETENTION_JOB, str(project.id), QUEUED)
    days = project.retention_days
    return Retention(
        days=days,
        cutoff=cutoff_for(days) if days is not None else None,
        last_pass_at=last.finished_at if last else None,
        last_pass_erased=int((last.result or {}).get("erased", 0)) if last else None,
        next_pass_at=waiting.run_after if waiting and days is not None else None,
    )


def days_kept(session: Session, project_id: uuid.UUID) -> int | None:
    """The project's retention in days, as a pass reads it before each batch (None: keep for good)."""
    return session.scalar(select(Project.retention_days).where(Project.id == project_id))


def erase_expired(
    session: Session, project_id: uuid.UUID, before: datetime, size: int = RETENTION_BATCH
) -> list[uuid.UUID]:
    """Erase the content of the project's oldest `size` runs that started before `before` and still have
    it; their ids. A walk of the index of runs not yet erased, so earlier batches cost it nothing."""
    query = (
        select(Trace.id)
        .where(Trace.project_id == project_id, Trace.erased_at.is_(None), Trace.started_at < before)
        .order_by(Trace.started_at, Trace.id)
        .limit(size)
    )
    run_ids = list(session.scalars(query))
    if run_ids:
        erase_contents(session, project_id, run_ids)
    return run_ids
