"""Reward models on the rm surface: make one from selected traces' ratings, list them, read one, and
page through the exact pairs it was built with (rm-annotations.txt, "From annotations to training pairs").
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.orm import Session

from redline.config import Settings
from redline.db import Database
from redline.identity.service import Actor
from redline.jsonio import iso
from redline.learning import autoscore, exports, scoring
from redline.learning import service as learning
from redline.learning.models import ProjectScoring, RewardModel
from redline.surfaces.auth import current_actor, database
from redline.surfaces.responses import JSONBody
from redline.surfaces.rm.openapi import RM_ERROR_RESPONSES
from redline.surfaces.rm.scope import scope_of_token
from redline.surfaces.rm.wire import PREFIX, assessment_dict, reward_model_dict, score_dict
from redline.web.addresses import path_id

router = APIRouter(
    prefix=PREFIX, tags=["rm"], responses=RM_ERROR_RESPONSES, dependencies=[Depends(scope_of_token)]
)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]

DEFAULT_PAIRS_LIMIT = 100
MAX_PAIRS_PAGE = 1000
# A model has an assessment per assistant step of up to 10,000 traces: no list is longer than this.
MAX_OFFSET = 10_000_000
MAX_TRACES = learning.MAX_TRACES


class RewardModelIn(BaseModel):
    """What the stashai client sends. `training_config` is kept as sent, keys this release doesn't know
    included (`input_version`, `rubric`): the client's newer fields must not make the request fail."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1, max_length=200)
    trace_ids: list[uuid.UUID] = Field(max_length=MAX_TRACES)
    training_config: dict[str, Any] | None = None


def _shown(session: Session, model: RewardModel, trace_count: int) -> dict[str, Any]:
    return reward_model_dict(model, trace_count, learning.progress_of(session, model))


async def llm_configured(request: Request) -> bool:
    """Whether training adds feedback-derived pairs: then creation may start with fewer than two."""
    settings: Settings = request.app.state.settings
    return settings.llm_configured


@router.post("/reward-models", summary="Queue a reward model built from the selected traces' feedback")
def create_reward_model(
    body: RewardModelIn,
    actor: ActorDep,
    db: DatabaseDep,
    feedback_llm: Annotated[bool, Depends(llm_configured)],
) -> JSONBody:
    with db.write() as session:
        model = learning.create(
            session,
            actor,
            name=body.name,
            trace_ids=body.trace_ids,
            config=body.training_config or {},
            feedback_llm=feedback_llm,
        )
        answer = reward_model_dict(
            model, learning.trace_count(session, model.id), learning.progress_of(session, model)
        )
    return JSONBody(answer)


@router.get("/reward-models", summary="The workspace's reward models, newest first")
def list_reward_models(actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        models = learning.list_models(session, actor)
        counts = learning.trace_counts(session, [model.id for model in models])
        answer = [
            reward_model_dict(model, counts[model.id], learning.progress_of(session, model))
            for model in models
        ]
    return JSONBody({"reward_models": answer})


@router.get("/reward-models/{model_id}", summary="One reward model")
def get_reward_model(model_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        model = learning.get_model(session, actor, path_id(model_id, "reward-model"))
        answer = reward_model_dict(
            model, learning.trace_count(session, model.id), learning.progress_of(session, model)
        )
    return JSONBody(answer)


class ScoreIn(BaseModel):
    trace_ids: list[uuid.UUID] = Field(min_length=1, max_length=scoring.MAX_TRACES_PER_CALL)


@router.post(
    "/reward-models/{model_id}/score", summary="Score traces with a ready model, each action credited"
)
def score_traces(model_id: str, body: ScoreIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        model_key = path_id(model_id, "reward-model")
        scores = scoring.score_traces(session, actor, model_key, body.trace_ids)
        name = learning.get_model(session, actor, model_key).name
        answer = [score_dict(scoring.Scored(score, name)) for score in scores]
    return JSONBody({"scores": answer})


@router.get("/reward-models/{model_id}/pairs", summary="The pairs a model was built with, in stored order")
def list_pairs(
    model_id: str,
    actor: ActorDep,
    db: DatabaseDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAIRS_PAGE)] = DEFAULT_PAIRS_LIMIT,
    # No model keeps more pairs than this, so a larger offset could only give an empty page.
    offset: Annotated[int, Query(ge=0, le=learning.MAX_PAIRS_LIMIT)] = 0,
) -> JSONBody:
    with db.read() as session:
        pairs, total = learning.pairs_page(
            session, actor, path_id(model_id, "reward-model"), limit=limit, offset=offset
        )
        answer = [exports.pair_record(pair) for pair in pairs]
    return JSONBody({"pairs": answer, "total": total})


@router.get(
    "/reward-models/{model_id}/learning",
    summary="View learning: what the LLM made of each assistant action and the feedback about it",
)
def list_assessments(
    model_id: str,
    actor: ActorDep,
    db: DatabaseDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAIRS_PAGE)] = DEFAULT_PAIRS_LIMIT,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> JSONBody:
    with db.read() as session:
        found, total = learning.assessments_page(
            session, actor, path_id(model_id, "reward-model"), limit=limit, offset=offset
        )
        answer = [assessment_dict(assessment) for assessment in found]
    return JSONBody({"assessments": answer, "total": total})


class ScoringIn(BaseModel):
    """A ready model to score every new trace of the project with, or null for none."""

    reward_model_id: uuid.UUID | None


def _scoring_dict(session: Session, project_id: uuid.UUID, scoring: ProjectScoring | None) -> dict[str, Any]:
    if scoring is None:
        return {
            "project_id": str(project_id),
            "reward_model_id": None,
            "reward_model_name": None,
            "since": None,
        }
    model = session.get_one(RewardModel, scoring.reward_model_id)
    return {
        "project_id": str(project_id),
        "reward_model_id": str(model.id),
        "reward_model_name": model.name,
        "since": iso(scoring.since),
    }


@router.get(
    "/projects/{project_id}/scoring", summary="The model that scores the project's new traces, if any"
)
def get_scoring(project_id: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        key = path_id(project_id, "project")
        answer = _scoring_dict(session, key, autoscore.active_model(session, actor, key))
    return JSONBody(answer)


@router.put(
    "/projects/{project_id}/scoring", summary="Score the project's new traces with a ready model (admins)"
)
def set_scoring(project_id: str, body: ScoringIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        key = path_id(project_id, "project")
        scoring = autoscore.set_active_model(session, actor, key, body.reward_model_id)
        answer = _scoring_dict(session, key, scoring)
    return JSONBody(answer)
