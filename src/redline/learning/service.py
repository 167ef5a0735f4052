"""Reward-model records: which traces a model learns from, and the pairs it was built with.

Creating a model builds its pairs at once and keeps them, so what a model learned from can always be
shown, and queues its training job in the same transaction (`training.py`).
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any, TypeVar, cast

from sqlalchemy import Table, exists, func, select
from sqlalchemy.orm import Session

from redline.db import bulk_insert, in_chunks, new_id, utcnow
from redline.errors import Invalid, NotFound
from redline.identity.service import Actor, visible_projects
from redline.jobs.models import Job
from redline.learning import training
from redline.learning.correction_pairs import correction_pairs
from redline.learning.models import FeedbackAssessment, PreferencePair, RewardModel, RewardModelTrace
from redline.learning.pair_rules import NO_RULES, PAIRS_REMOVED, PairRules, Removed, removed_figures
from redline.learning.pairing import DOCUMENT_RULE, KINDS, PAIRS_BY_KIND, Pairing
from redline.learning.pairs import DEFAULT_MAX_PAIRS, Pair, rating_pairs
from redline.learning.preference_pairs import preference_pairs
from redline.traces.models import Trace

MIN_PAIRS = 2
_Kept = TypeVar("_Kept", PreferencePair, FeedbackAssessment)
MAX_PAIRS_LIMIT = 100_000
# The most traces one model learns from: every way of making one (the API, the console) caps its
# selection here, so an oversized one is answered with a sentence instead of a long wait.
MAX_TRACES = 10_000


def max_pairs_of(config: dict[str, Any]) -> int:
    value = config.get("max_pairs", DEFAULT_MAX_PAIRS)
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_PAIRS <= value <= MAX_PAIRS_LIMIT:
        raise Invalid(
            f"training_config.max_pairs is a whole number from {MIN_PAIRS} to {MAX_PAIRS_LIMIT}",
            details={"field": "training_config.max_pairs"},
        )
    return value


def readable_traces(session: Session, actor: Actor, trace_ids: Sequence[uuid.UUID]) -> list[uuid.UUID]:
    """The traces, in the order given without repeats, each one the actor can read.

    A model may name tens of thousands of traces, so access is checked a chunk of them per query
    against the projects the actor can read (found once), rather than by `readable_trace` per
    trace: its SELECTs per trace made the access check half of POST /reward-models over 10,000 traces
    (bench/README.md). The outcome is `readable_trace`'s: any role in a project reads its traces, an
    erased trace is still found (it gives no targets), and a trace that is missing or in a project the
    actor can't see is not found, the first such one in the order given being the one named.
    """
    unique = list(dict.fromkeys(trace_ids))
    readable = [project.id for project, _ in visible_projects(session, actor)]
    for chunk in in_chunks(unique):
        found = set(
            session.scalars(select(Trace.id).where(Trace.id.in_(chunk), Trace.project_id.in_(readable)))
        )
        for trace_id in chunk:
            if trace_id not in found:
                raise NotFound("run", trace_id, f"Trace {trace_id} not found")
    return unique


def pairing_of(config: dict[str, Any]) -> Pairing:
    """The pairing rule a training config names (`pairing.py`), or a sentence saying what is wrong."""
    return Pairing.of(config, max_pairs_limit=MAX_PAIRS_LIMIT)


def preview_pairs(
    session: Session,
    actor: Actor,
    trace_ids: Sequence[uuid.UUID],
    max_pairs: int = DEFAULT_MAX_PAIRS,
    pairing: Pairing = DOCUMENT_RULE,
) -> list[Pair]:
    """The pairs a model of these traces would be built with, without making one."""
    return feedback_pairs(session, readable_traces(session, actor, trace_ids), max_pairs, pairing=pairing)


def feedback_pairs(
    session: Session,
    trace_ids: Sequence[uuid.UUID],
    max_pairs: int,
    rules: PairRules = NO_RULES,
    removed: Removed | None = None,
    pairing: Pairing = DOCUMENT_RULE,
) -> list[Pair]:
    """The traces' pairs by source — explicit ratings (issue 7's first), people's stated preferences,
    then corrections — capped at `max_pairs` in all, of those `rules` keep (what each removed is added
    to `removed`). The other sources are found first: with `same_context_first`, the ratings' cross
    pairs only fill up to `min_pairs` counting them."""
    counted = Removed() if removed is None else removed
    preferred = preference_pairs(session, trace_ids, max_pairs, rules, counted)
    corrected = correction_pairs(session, trace_ids, max_pairs, rules, counted)
    others = len(preferred) + len(corrected)
    rated = rating_pairs(session, trace_ids, max_pairs, rules, counted, pairing, others=others)
    return (rated + preferred + corrected)[:max_pairs]


def pairs_by_kind(pairs: Sequence[Pair]) -> dict[str, int]:
    """How many pairs of each kind (`pairing.KINDS`, every kind named, 0 included)."""
    counts = Counter(pair.kind for pair in pairs)
    return {kind: counts[kind] for kind in KINDS}


def create(
    session: Session,
    actor: Actor,
    *,
    name: str,
    trace_ids: Sequence[uuid.UUID],
    config: dict[str, Any],
    feedback_llm: bool = False,
) -> RewardModel:
    """A queued reward model with its rating and correction pairs.

    Fewer than two of those is refused, unless an LLM is configured (`feedback_llm`): then training
    adds the feedback-derived pairs first (`assessments.py`), which may make up the count, and the
    job fails with the reason if they don't. Refusing here would turn away exactly the traces whose
    only feedback is comments and user corrections.

    The config's `adjudicated_only` and `min_agreement` keep only settled pairs (`pair_rules.py`); the
    model's metrics say how many each removed (`pairs_removed`) from now on, and keep saying it once
    trained.
    """
    max_pairs = max_pairs_of(config)
    rules = PairRules.of(config)
    pairing = pairing_of(config)
    traces = readable_traces(session, actor, trace_ids)
    removed = Removed()
    pairs = feedback_pairs(session, traces, max_pairs, rules, removed, pairing)
    if len(pairs) < MIN_PAIRS and not feedback_llm:
        raise Invalid(
            f"training needs at least {MIN_PAIRS} usable pairs; the selected traces give {len(pairs)}: "
            "rate whole traces or steps + and − (flagged ratings and ratings that cancel don't count), "
            "or correct their runs' answers (with what they should have said) or decisions",
            details={"field": "trace_ids", "pairs": len(pairs)},
        )
    epochs = config.get("epochs", 1)
    model = RewardModel(
        id=new_id(),
        workspace_id=actor.workspace_id,
        name=name,
        status="queued",
        base_model=config.get("base_model") if isinstance(config.get("base_model"), str) else None,
        compute="cpu",
        epochs=epochs if isinstance(epochs, int) and not isinstance(epochs, bool) and epochs > 0 else 1,
        max_pairs=max_pairs,
        num_pairs=len(pairs),
        training_config=config,
        metrics={
            PAIRS_BY_KIND: pairs_by_kind(pairs),
            **({PAIRS_REMOVED: removed_figures(rules, removed)} if rules.named() else {}),
        },
        created_by=actor.principal_id,
        created_at=utcnow(),
    )
    session.add(model)
    session.flush()
    training.queue_training(session, model)
    bulk_insert(
        session,
        cast(Table, RewardModelTrace.__table__),
        [{"reward_model_id": model.id, "trace_id": trace_id} for trace_id in traces],
    )
    bulk_insert(
        session,
        cast(Table, PreferencePair.__table__),
        [
            {
                "id": new_id(),
                "reward_model_id": model.id,
                "position": position,
                "granularity": pair.granularity,
                "source": pair.source,
                "chosen": pair.chosen,
                "rejected": pair.rejected,
                "source_ids": pair.source_ids,
                "kind": pair.kind,
                "context_id": pair.context_id,
            }
            for position, pair in enumerate(pairs)
        ],
    )
    return model


def _hidden_from(session: Session, actor: Actor) -> Any:
    """Models built from any trace in a project the actor can't read: their pairs would show it."""
    readable = [project.id for project, _ in visible_projects(session, actor)]
    return exists(
        select(RewardModelTrace.trace_id)
        .join(Trace, Trace.id == RewardModelTrace.trace_id)
        .where(RewardModelTrace.reward_model_id == RewardModel.id, Trace.project_id.not_in(readable))
    )


def list_models(session: Session, actor: Actor) -> list[RewardModel]:
    query = select(RewardModel).where(
        RewardModel.workspace_id == actor.workspace_id, ~_hidden_from(session, actor)
    )
    return list(session.scalars(query.order_by(RewardModel.created_at.desc(), RewardModel.id.desc())))


def get_model(session: Session, actor: Actor, model_id: uuid.UUID) -> RewardModel:
    model = session.scalar(
        select(RewardModel).where(
            RewardModel.id == model_id,
            RewardModel.workspace_id == actor.workspace_id,
            ~_hidden_from(session, actor),
        )
    )
    if model is None:
        raise NotFound("reward-model", model_id)
    return model


def trace_counts(session: Session, model_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, int]:
    """How many traces each model learns from, in one grouped query for a whole list of models."""
    if not model_ids:
        return {}
    rows = session.execute(
        select(RewardModelTrace.reward_model_id, func.count())
        .where(RewardModelTrace.reward_model_id.in_(list(model_ids)))
        .group_by(RewardModelTrace.reward_model_id)
    )
    found = {model_id: int(count) for model_id, count in rows}
    return {model_id: found.get(model_id, 0) for model_id in model_ids}


def trace_count(session: Session, model_id: uuid.UUID) -> int:
    query = (
        select(func.count()).select_from(RewardModelTrace).where(RewardModelTrace.reward_model_id == model_id)
    )
    return int(session.scalar(query) or 0)


def pairs_of(session: Session, actor: Actor, model_id: uuid.UUID) -> list[PreferencePair]:
    model = get_model(session, actor, model_id)
    return list(
        session.scalars(
            select(PreferencePair)
            .where(PreferencePair.reward_model_id == model.id)
            .order_by(PreferencePair.position)
        )
    )


def pairs_page(
    session: Session, actor: Actor, model_id: uuid.UUID, *, limit: int, offset: int
) -> tuple[list[PreferencePair], int]:
    """One page of a model's pairs in their stored order, and how many it has: a model may keep up to
    MAX_PAIRS_LIMIT pairs of whole transcripts, too many to load for a page of them."""
    return _kept_page(session, actor, model_id, PreferencePair, limit=limit, offset=offset)


def assessments_page(
    session: Session, actor: Actor, model_id: uuid.UUID, *, limit: int, offset: int
) -> tuple[list[FeedbackAssessment], int]:
    """One page of what the LLM made of the model's traces ("View learning"), in the order assessed,
    and how many there are. Read as the model is: whoever may see the model sees these."""
    return _kept_page(session, actor, model_id, FeedbackAssessment, limit=limit, offset=offset)


def _kept_page(
    session: Session, actor: Actor, model_id: uuid.UUID, kept: type[_Kept], *, limit: int, offset: int
) -> tuple[list[_Kept], int]:
    """A page of what a model keeps in order (its pairs, its assessments), and how many it keeps."""
    model = get_model(session, actor, model_id)
    of_model = kept.reward_model_id == model.id
    page = session.scalars(select(kept).where(of_model).order_by(kept.position).limit(limit).offset(offset))
    total = session.scalar(select(func.count()).select_from(kept).where(of_model))
    return list(page), int(total or 0)


def progress_of(session: Session, model: RewardModel) -> tuple[float, str | None] | None:
    """How far a model's training has got (0–1, and what it is doing), while it is queued or training."""
    if model.status not in ("queued", "training") or model.job_id is None:
        return None
    job = session.get(Job, model.job_id)
    if job is None:
        return None
    return (job.progress or 0.0, job.progress_note)
