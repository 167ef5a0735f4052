"""Scoring traces with a ready reward model: a score for the trace and a credit for each assistant
action (rm-annotations.txt, action credit), kept as the trace's scores apart from its annotations.

A model's bytes are read from the store and loaded once per process (a few models are kept loaded), so
scoring a trace costs the model's own work, not a load each time.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from redline.db import Unindexed, in_chunks, new_id, utcnow
from redline.errors import Conflict, Invalid
from redline.identity.service import Actor
from redline.learning import rewardmodel
from redline.learning.models import RewardModel, RewardModelArtifact, TraceScore
from redline.learning.service import get_model, readable_traces
from redline.traces.models import Step, Trace

MAX_TRACES_PER_CALL = 100
# Models kept loaded in a process: scoring usually uses the project's one active model.
LOADED_MODELS = 4


class _Loaded:
    """The last few models loaded, by id: a model's bytes never change once it is ready."""

    def __init__(self) -> None:
        self._models: OrderedDict[uuid.UUID, rewardmodel.Scorer] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session: Session, model: RewardModel) -> rewardmodel.Scorer:
        with self._lock:
            if model.id in self._models:
                self._models.move_to_end(model.id)
                return self._models[model.id]
        artifact = session.get_one(RewardModelArtifact, model.id)
        try:
            scorer = rewardmodel.load(artifact.kind, artifact.blob)
        except rewardmodel.TrainingRefused as refused:
            raise Conflict(str(refused), code="reward-model-unreadable") from None
        with self._lock:
            self._models[model.id] = scorer
            while len(self._models) > LOADED_MODELS:
                self._models.popitem(last=False)
        return scorer


_LOADED = _Loaded()


def ready(model: RewardModel) -> RewardModel:
    if model.status != "ready":
        raise Conflict(
            f"reward model {model.id} is {model.status}, not ready: only a trained model scores traces",
            code="reward-model-not-ready",
        )
    return model


def _steps(session: Session, trace_id: uuid.UUID) -> list[Step]:
    return list(session.scalars(select(Step).where(Step.trace_id == trace_id).order_by(Step.index)))


def score_trace(session: Session, model: RewardModel, trace_id: uuid.UUID) -> TraceScore:
    """Score one trace with a ready model and keep the score; access is the caller's to check."""
    scorer = _LOADED.get(session, ready(model))
    steps = _steps(session, trace_id)
    credits = scorer.credits(steps)
    exact = all(credit.exact for credit in credits)
    # Exact credits add up to the score (`StepCredit.exact`): summing them spares scoring the trace again.
    score = sum((credit.credit for credit in credits), 0.0) if exact else scorer.score(steps)
    scored = TraceScore(
        id=new_id(),
        trace_id=trace_id,
        reward_model_id=model.id,
        score=float(score),
        credits=[
            {
                "step_id": str(steps[credit.index].id),
                "index": steps[credit.index].index,
                "credit": credit.credit,
            }
            for credit in credits
        ],
        exact=exact,
        scored_at=utcnow(),
    )
    session.add(scored)
    session.flush()
    return scored


def score_traces(
    session: Session, actor: Actor, model_id: uuid.UUID, trace_ids: Sequence[uuid.UUID]
) -> list[TraceScore]:
    """Score the given traces (each readable by the actor) with a ready model the actor can read."""
    if not trace_ids:
        raise Invalid("trace_ids names at least one trace", details={"field": "trace_ids"})
    if len(trace_ids) > MAX_TRACES_PER_CALL:
        raise Invalid(
            f"trace_ids names at most {MAX_TRACES_PER_CALL} traces per call", details={"field": "trace_ids"}
        )
    model = ready(get_model(session, actor, model_id))
    return [score_trace(session, model, trace_id) for trace_id in readable_traces(session, actor, trace_ids)]


@dataclass(frozen=True)
class Scored:
    """A trace's latest score and the model that gave it."""

    score: TraceScore
    model_name: str

    @property
    def credit_mean(self) -> float | None:
        credits = [entry["credit"] for entry in self.score.credits]
        return sum(credits) / len(credits) if credits else None


def latest_scores(session: Session, trace_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Scored]:
    """Each trace's latest score, for a list of traces in a few queries (none for traces never scored)."""
    found: dict[uuid.UUID, Scored] = {}
    for chunk in in_chunks(list(dict.fromkeys(trace_ids))):
        newest = (
            select(TraceScore.trace_id, func.max(TraceScore.scored_at).label("at"))
            .where(TraceScore.trace_id.in_(chunk))
            .group_by(TraceScore.trace_id)
            .subquery()
        )
        rows = session.execute(
            select(TraceScore, RewardModel.name)
            .join(newest, (newest.c.trace_id == TraceScore.trace_id) & (newest.c.at == TraceScore.scored_at))
            .join(RewardModel, RewardModel.id == TraceScore.reward_model_id)
        )
        for score, name in rows:
            found[score.trace_id] = Scored(score, name)
    return found


def scores_of(session: Session, trace_id: uuid.UUID) -> list[Scored]:
    """Every score a trace has, newest first; access is the caller's to check."""
    rows = session.execute(
        select(TraceScore, RewardModel.name)
        .join(RewardModel, RewardModel.id == TraceScore.reward_model_id)
        .where(TraceScore.trace_id == trace_id)
        .order_by(TraceScore.scored_at.desc(), TraceScore.id.desc())
    )
    return [Scored(score, name) for score, name in rows]


def scored_counts(session: Session, project_ids: Sequence[uuid.UUID]) -> list[tuple[str, int]]:
    """How many of the projects' traces each reward model has scored, most first (by name among equals):
    what the traces list says of its Latest score column. Access to the projects is the caller's to
    check; a model that scored none of them is not named."""
    if not project_ids:
        return []
    scored = func.count(func.distinct(TraceScore.trace_id))
    rows = session.execute(
        select(RewardModel.name, scored)
        .join(TraceScore, TraceScore.reward_model_id == RewardModel.id)
        .join(Trace, Trace.id == TraceScore.trace_id)
        # Checked on the traces the scores name: SQLite would otherwise walk every trace of the projects
        # (150 ms at a million) to find the scored ones, on every view of the traces list.
        .where(Unindexed(Trace.project_id.expression).in_(list(project_ids)))
        .group_by(RewardModel.id, RewardModel.name)
        .order_by(scored.desc(), RewardModel.name)
    )
    return [(name, int(count)) for name, count in rows]
