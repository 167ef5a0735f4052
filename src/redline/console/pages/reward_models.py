"""Improve › Reward models: the workspace's reward models and, for one, its record and the exact pairs it
was built with, through `learning.service` as the rm surface's /reward-models routes read them.

A model is queued, then trains in the background (`learning.training`): the page shows the stored status
and its sentence as they are, how far training has got while it runs, and metrics once it has them.
Pairs are paged by offset, the only paging the service offers for them (a model keeps its pairs in one
stored order). "View learning" is the model's own page of what the LLM made of each assistant action and
the feedback about it (rm-annotations.txt), paged the same way; those findings are shown, never turned
into comments.
"""

from __future__ import annotations

import json
import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from redline.console.areas import Area
from redline.console.deps import Db, Viewer
from redline.console.nav import Crumb
from redline.console.paging import offset_page_links
from redline.learning import service as learning
from redline.learning.models import FeedbackAssessment
from redline.learning.prompts import call_line

router = APIRouter()
PAIRS_PER_PAGE = 25
ASSESSMENTS_PER_PAGE = 25
AREA = Area("reward-models", "models", (Crumb("Improve"),))


@router.get("/reward-models")
def reward_models_page(request: Request, who: Viewer, db: Db) -> Response:
    with db.read() as session:
        models = learning.list_models(session, who.actor)
        traces = learning.trace_counts(session, [model.id for model in models])
    return AREA.page(
        request,
        who,
        "list",
        "Reward models",
        Crumb("Reward models"),
        models=models,
        traces=traces,
    )


@router.get("/reward-models/{model_id}")
def reward_model_page(
    request: Request,
    model_id: uuid.UUID,
    who: Viewer,
    db: Db,
    offset: Annotated[int, Query(ge=0, le=learning.MAX_PAIRS_LIMIT)] = 0,
) -> Response:
    with db.read() as session:
        model = learning.get_model(session, who.actor, model_id)
        trace_count = learning.trace_count(session, model.id)
        progress = learning.progress_of(session, model)
        pairs, total = learning.pairs_page(session, who.actor, model.id, limit=PAIRS_PER_PAGE, offset=offset)
    return AREA.page(
        request,
        who,
        "detail",
        f"Reward model {model.name}",
        Crumb("Reward models", "/ui/reward-models"),
        Crumb(model.name),
        model=model,
        trace_count=trace_count,
        progress=progress,
        pairs=pairs,
        total=total,
        offset=offset,
        config=json.dumps(model.training_config, indent=2, ensure_ascii=False),
        metrics=json.dumps(model.metrics, indent=2, ensure_ascii=False) if model.metrics else None,
        **offset_page_links(request, offset, PAIRS_PER_PAGE, total),
    )


@router.get("/reward-models/{model_id}/learning")
def learning_page(
    request: Request,
    model_id: uuid.UUID,
    who: Viewer,
    db: Db,
    offset: Annotated[int, Query(ge=0, le=learning.MAX_PAIRS_LIMIT)] = 0,
) -> Response:
    with db.read() as session:
        model = learning.get_model(session, who.actor, model_id)
        found, total = learning.assessments_page(
            session, who.actor, model.id, limit=ASSESSMENTS_PER_PAGE, offset=offset
        )
    feedback = (model.metrics or {}).get("feedback")
    return AREA.page(
        request,
        who,
        "learning",
        f"View learning: {model.name}",
        Crumb("Reward models", "/ui/reward-models"),
        Crumb(model.name, f"/ui/reward-models/{model.id}"),
        Crumb("View learning"),
        model=model,
        assessments=[(assessment, alternative_text(assessment)) for assessment in found],
        total=total,
        offset=offset,
        feedback=feedback if isinstance(feedback, dict) else None,
        pairs_per_page=PAIRS_PER_PAGE,
        **offset_page_links(request, offset, ASSESSMENTS_PER_PAGE, total),
    )


def alternative_text(assessment: FeedbackAssessment) -> str | None:
    """The alternative as one line: a text as written, a call as rendering writes one."""
    alternative = assessment.alternative
    if isinstance(alternative, dict):
        return call_line(str(alternative.get("tool")), dict(alternative.get("args") or {}))
    return alternative if isinstance(alternative, str) else None
