"""Training a reward model as a background job: `queued` → `training` (with progress) → `ready` or
`failed` with the reason (issue 7; DESIGN §4 jobs).

The job is queued in the transaction that makes the model, so a model is never left waiting for a job
that was lost. With an LLM configured it first adds the feedback-derived pairs (`assessments.py`) after
the rating and correction pairs creation kept; without one that source is skipped and the model's
metrics say so. It then reads the pairs kept with the model (the exact pairs, in stored order), trains
the chosen kind through `rewardmodel.train`, and stores what it made beside the model. Each step is
its own short transaction: training and the LLM's answers hold none open.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.db import Database, utcnow
from redline.jobs import service as jobs
from redline.jobs.service import Claimed
from redline.jobs.worker import JobFailed, JobKind, Reporter
from redline.learning import assessments, rewardmodel
from redline.learning.chat import ChatModel
from redline.learning.contexts import identities
from redline.learning.models import PreferencePair, RewardModel, RewardModelArtifact
from redline.learning.pair_rules import PAIRS_REMOVED
from redline.learning.pairing import PAIRS_BY_KIND

TRAIN_JOB = "train-reward-model"
# The metrics a model has from when its pairs were built, kept when training adds its own.
BUILT = (PAIRS_BY_KIND, PAIRS_REMOVED)
QUEUED_DETAIL = "Queued for training."


def queue_training(session: Session, model: RewardModel) -> None:
    """Queue the model's training job, with the transaction that makes the model."""
    job = jobs.enqueue(session, TRAIN_JOB, {"reward_model_id": str(model.id)})
    model.job_id = job.id
    model.status, model.status_detail = "queued", QUEUED_DETAIL


def _side_traces(source_ids: dict[str, Any] | None) -> Iterator[str]:
    """The traces a pair's two sides come from, as its `source_ids` name them."""
    sides = ((source_ids or {}).get("chosen") or {}, (source_ids or {}).get("rejected") or {})
    return (str(side["trace_id"]) for side in sides if side.get("trace_id"))


def trace_contents(session: Session, trace_ids: set[str]) -> dict[str, str]:
    """Each trace's identity by content: the SHA-256 of its rendered text (`contexts.identities`, the
    digest the pairs are ordered by); a trace with no steps has none.

    The split holds traces out by this rather than by the ids an import generated, so the same labels
    on re-imported traces give the same validation fifth and the same model (issue 26). Two traces of
    the same text are one, held out or trained together.
    """
    wanted = {(uuid.UUID(trace), None) for trace in trace_ids}
    return {
        str(trace): f"content:{identity.text}" for (trace, _), identity in identities(session, wanted).items()
    }


def _training_pairs(session: Session, model_id: uuid.UUID) -> list[rewardmodel.TrainingPair]:
    rows = session.execute(
        select(
            PreferencePair.chosen,
            PreferencePair.rejected,
            PreferencePair.granularity,
            PreferencePair.source,
            PreferencePair.source_ids,
        )
        .where(PreferencePair.reward_model_id == model_id)
        .order_by(PreferencePair.position)
    ).all()
    contents = trace_contents(
        session, {trace for *_, source_ids in rows for trace in _side_traces(source_ids)}
    )
    # What the split holds out together for a pair: its sides' traces, each by its content where it has
    # steps, else by its id.
    return [
        rewardmodel.TrainingPair(
            chosen,
            rejected,
            granularity,
            source,
            tuple(dict.fromkeys(contents.get(trace, trace) for trace in _side_traces(source_ids))),
        )
        for chosen, rejected, granularity, source, source_ids in rows
    ]


def _model(session: Session, payload: dict[str, Any]) -> RewardModel | None:
    return session.get(RewardModel, uuid.UUID(str(payload["reward_model_id"])))


def _too_few(count: int) -> str:
    return (
        f"training needs at least {rewardmodel.MIN_PAIRS} usable pairs; the ratings, corrections and "
        f"feedback-derived alternatives of the selected traces give {count} (View learning shows what the "
        "LLM made of the feedback)"
    )


def run(db: Database, claimed: Claimed, report: Reporter, chat: ChatModel | None = None) -> dict[str, Any]:
    """The job: add the feedback-derived pairs (when an LLM is configured), train the model on its kept
    pairs and store the result."""
    attempt = f"attempt {claimed.attempt} of {claimed.max_attempts}"
    with db.write() as session:
        model = _model(session, claimed.payload)
        if model is None:
            raise JobFailed("The reward model was deleted before it was trained.")
        model.status = "training"
        model.status_detail = (
            f"Assessing feedback with the LLM ({attempt})."
            if chat is not None
            else f"Training ({attempt}). {assessments.NOT_CONFIGURED}"
        )
        model.started_at, model.error = utcnow(), None
        model_id, epochs = model.id, model.epochs
        kind = model.training_config.get("model_kind")
        # What the pairs were when built (`service.create`): their kinds, what the config's rules removed.
        kept = {key: value for key, value in (model.metrics or {}).items() if key in BUILT}
    share = 0.0
    feedback: dict[str, Any] = {"status": "skipped", "detail": assessments.NOT_CONFIGURED}
    if chat is not None:
        share = 0.5
        feedback = assessments.assess(db, model_id, chat, lambda f, note: report(share * f, note))
        with db.write() as session:
            session.get_one(RewardModel, model_id).status_detail = f"Training ({attempt})."
    with db.read() as session:
        pairs = _training_pairs(session, model_id)
    if chat is not None and len(pairs) < rewardmodel.MIN_PAIRS:
        raise JobFailed(_too_few(len(pairs)))
    try:
        trained = rewardmodel.train(
            pairs,
            kind=kind if isinstance(kind, str) else None,
            epochs=epochs,
            report=lambda f, note: report(share + (1 - share) * f, note),
        )
    except rewardmodel.TrainingRefused as refused:
        raise JobFailed(str(refused)) from None
    metrics = {**trained.metrics, "feedback": feedback, **kept}
    with db.write() as session:
        model = session.get_one(RewardModel, model_id)
        session.merge(RewardModelArtifact(reward_model_id=model_id, kind=trained.kind, blob=trained.blob))
        model.status, model.status_detail = "ready", f"Ready: trained as {trained.kind}."
        model.base_model = model.base_model or trained.kind
        model.metrics, model.finished_at = metrics, utcnow()
    return {"reward_model_id": str(model_id), "kind": trained.kind, "metrics": metrics}


def gave_up(session: Session, payload: dict[str, Any], error: str) -> None:
    """The job failed for good: the model says so, with the reason."""
    model = _model(session, payload)
    if model is not None:
        model.status, model.error = "failed", error
        model.status_detail, model.finished_at = f"Training failed: {error}", utcnow()


def training_job(chat: ChatModel | None) -> JobKind:
    """The training job kind, with the LLM that assesses feedback (None: that source is skipped)."""
    return JobKind(TRAIN_JOB, functools.partial(run, chat=chat), gave_up)


TRAINING = training_job(None)
