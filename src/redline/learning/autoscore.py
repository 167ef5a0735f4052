"""A project's active reward model, and scoring each new trace with it in the background.

Setting a project's active model (its admins, a ready model) means: every trace stored in the project
from then on is scored by it. Ingest never scores in its own transaction (a model's work has no place
in a write of a thousand runs); it queues one `score-new-traces` job per project, unless one already
waits, and the job scores every trace stored since the model became active that it hasn't scored since
the trace last changed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import and_, exists, select
from sqlalchemy.orm import Session

from redline.db import Database, utcnow
from redline.identity.service import Actor, require_project_role
from redline.jobs import service as jobs
from redline.jobs.service import Claimed
from redline.jobs.worker import JobKind, Reporter
from redline.learning.models import ProjectScoring, RewardModel, TraceScore
from redline.learning.scoring import ready, score_trace
from redline.learning.service import get_model
from redline.traces.models import Trace
from redline.traces.service import RULES_SEE

SCORE_NEW = "score-new-traces"
# Traces scored per transaction: each commit keeps what is done, and a worker stopped loses at most this.
BATCH = 100


def active_model(session: Session, actor: Actor, project_id: uuid.UUID) -> ProjectScoring | None:
    """The project's active model, for anyone who may read the project."""
    require_project_role(session, actor, project_id, "read")
    return session.get(ProjectScoring, project_id)


def set_active_model(
    session: Session, actor: Actor, project_id: uuid.UUID, model_id: uuid.UUID | None
) -> ProjectScoring | None:
    """Make a ready model the project's active one (None: none), for the project's admins."""
    require_project_role(session, actor, project_id, "admin")
    current = session.get(ProjectScoring, project_id)
    if model_id is None:
        if current is not None:
            session.delete(current)
            session.flush()
        return None
    model = ready(get_model(session, actor, model_id))
    if current is None:
        current = ProjectScoring(project_id=project_id)
        session.add(current)
    if current.reward_model_id != model.id:
        current.reward_model_id, current.since = model.id, utcnow()
    current.set_by = actor.principal_id
    session.flush()
    return current


def on_ingest(session: Session, written: Iterable[Mapping[str, Any]]) -> None:
    """After runs are stored: a scoring job for each of their projects that has an active model."""
    project_ids = {row["project_id"] for row in written}
    if not project_ids:
        return
    active = select(ProjectScoring.project_id).where(ProjectScoring.project_id.in_(project_ids))
    for project_id in session.scalars(active):
        subject = f"project:{project_id}"
        if not jobs.waiting(session, SCORE_NEW, subject):
            jobs.enqueue(session, SCORE_NEW, {"project_id": str(project_id)}, subject=subject)


def _unscored(session: Session, scoring: ProjectScoring) -> list[uuid.UUID]:
    """The project's traces stored since the model became active that it hasn't scored since they last
    changed, oldest first, a batch of them."""
    scored = exists().where(
        and_(
            TraceScore.trace_id == Trace.id,
            TraceScore.reward_model_id == scoring.reward_model_id,
            TraceScore.scored_at >= Trace.updated_at,
        )
    )
    return list(
        session.scalars(
            select(Trace.id)
            .where(
                Trace.project_id == scoring.project_id, Trace.updated_at >= scoring.since, ~scored, RULES_SEE
            )
            .order_by(Trace.updated_at, Trace.id)
            .limit(BATCH)
        )
    )


def run(db: Database, claimed: Claimed, report: Reporter) -> dict[str, Any]:
    """The job: score the project's new traces a batch per transaction, until none is left."""
    project_id = uuid.UUID(str(claimed.payload["project_id"]))
    done = 0
    while True:
        with db.write() as session:
            # Locked: a second worker scoring the same project waits, then finds these traces scored.
            scoring = session.get(ProjectScoring, project_id, with_for_update=True)
            if scoring is None:
                return {"scored": done, "note": "the project has no active model any more"}
            model = session.get_one(RewardModel, scoring.reward_model_id)
            batch = _unscored(session, scoring)
            for trace_id in batch:
                score_trace(session, model, trace_id)
        done += len(batch)
        if len(batch) < BATCH:
            return {"scored": done}
        report(0.0, f"{done} traces scored")


def gave_up(session: Session, payload: dict[str, Any], error: str) -> None:
    """Nothing to mark: the traces stay unscored, and the next ingest queues the job again."""


SCORING = JobKind(SCORE_NEW, run, gave_up)
