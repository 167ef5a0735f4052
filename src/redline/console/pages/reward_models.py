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

import uuid
from typing import Annotated

from fastapi import APIRouter, Form, Query, Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from redline.console import traces_listing as listing
from redline.console.areas import Area
from redline.console.deps import Changer, Db, Viewer
from redline.console.forms import refusal
from redline.console.model_form import ModelForm, new_model
from redline.console.nav import Crumb
from redline.console.pages.traces import HAS_FILTERS, STATUSES
from redline.console.paging import offset_page_links
from redline.console.session import SignedIn
from redline.console.trace_filters import FILTER_PARAMS
from redline.db.id_pages import MAX_LIMIT
from redline.errors import RedlineError
from redline.identity.service import holds, visible_projects
from redline.learning import figures
from redline.learning import service as learning
from redline.learning.models import FeedbackAssessment
from redline.learning.prompts import call_line
from redline.queues.annotation import service as queues

router = APIRouter()
PAIRS_PER_PAGE = 25
ASSESSMENTS_PER_PAGE = 25
AREA = Area("reward-models", "models", (Crumb("Improve"),))


def _list_page(
    request: Request,
    who: SignedIn,
    db: Db,
    form: ModelForm,
    *,
    error: str | None = None,
    status_code: int = 200,
) -> Response:
    with db.read() as session:
        models = learning.list_models(session, who.actor)
        traces = learning.trace_counts(session, [model.id for model in models])
        projects = visible_projects(session, who.actor)
        can_create = any(holds(role, "write") for _, role in projects)
        agents = listing.agent_names(session, who.actor) if can_create else []
        _, queue_views = queues.list_queues(session, who.actor, limit=MAX_LIMIT) if can_create else (None, [])
    return AREA.page(
        request,
        who,
        "list",
        "Reward models",
        Crumb("Reward models"),
        models=models,
        traces=traces,
        can_create=can_create,
        values=form.model_dump(),
        projects=[(str(p.id), p.name) for p, _ in projects],
        many_projects=len(projects) > 1,
        agents=agents,
        statuses=STATUSES,
        has_filters=HAS_FILTERS,
        queues=[(str(view.queue.id), view.queue.name) for view in queue_views],
        pairings=[(rule, words[:1].upper() + words[1:]) for rule, words in figures.PAIRING_WORDS.items()],
        error=error,
        status_code=status_code,
    )


@router.get("/reward-models")
def reward_models_page(request: Request, who: Viewer, db: Db) -> Response:
    """The models, and for an editor the new-model form, its filter taken from the address: the traces
    list's "Train a reward model" link brings its filter here."""
    asked = {name: request.query_params.get(name) or "" for name in FILTER_PARAMS}
    return _list_page(request, who, db, ModelForm(**asked))


@router.post("/reward-models")
def create_model(request: Request, who: Changer, db: Db, form: Annotated[ModelForm, Form()]) -> Response:
    """Create a model through the service the API uses, then show its page: it is queued, and the
    worker of `redline serve` trains it."""
    try:
        with db.write() as session:
            model_id = new_model(session, who.actor, form, feedback_llm=request.app.state.llm_configured)
    except RedlineError as error:
        return _list_page(request, who, db, form, **refusal(error))
    return RedirectResponse(f"/ui/reward-models/{model_id}", status_code=303)


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
        pairs=[(pair, figures.kind_text(pair.kind)) for pair in pairs],
        total=total,
        offset=offset,
        config=figures.config_figures(model.training_config),
        metrics=figures.metric_figures(model.metrics) if model.metrics else None,
        **offset_page_links(request, offset, PAIRS_PER_PAGE, total),
    )


@router.get("/reward-models/{model_id}/status")
def reward_model_status(model_id: uuid.UUID, who: Viewer, db: Db) -> JSONResponse:
    """Where training has got, for the model page's script to follow while it is queued or training."""
    with db.read() as session:
        model = learning.get_model(session, who.actor, model_id)
        progress = learning.progress_of(session, model)
    return JSONResponse({"status": model.status, "detail": model.status_detail, "progress": progress})


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
