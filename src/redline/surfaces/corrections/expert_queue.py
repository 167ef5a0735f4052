"""The expert queue on the corrections surface (/v1/projects/{projectId}/expert-queue): the runs waiting
for a correction, oldest first with the total the filters match, and dismissing or reopening one; and
Redline's additions for several correctors per run: holding a run's place, taking the next run, and each
corrector's progress (docs/queue-rules.md, "Several correctors per run")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import Field
from sqlalchemy.orm import Session

from redline.db import Database
from redline.db.paging import DEFAULT_LIMIT
from redline.identity.service import Actor
from redline.jsonio import iso
from redline.queues.expert import engine as expert
from redline.queues.expert import holding
from redline.queues.expert import listing as expert_listing
from redline.queues.expert.progress import progress, progress_dict
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.idempotent import IdempotencyKey, answer_once
from redline.surfaces.corrections.openapi import CONFLICT_RESPONSES, ERROR_RESPONSES
from redline.surfaces.corrections.queue_filters import filters_reading
from redline.surfaces.corrections.wire import page_body, project_id
from redline.surfaces.responses import JSONBody
from redline.traces.schemas import StrictWireModel
from redline.web.addresses import path_id

router = APIRouter(prefix="/v1", tags=["expert queue"], responses=ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]

QUEUE = "/projects/{projectId}/expert-queue"
MAX_REASON = 500


class DismissIn(StrictWireModel):
    reason: str | None = Field(None, max_length=MAX_REASON)


FiltersDep = Annotated[
    expert_listing.QueueFilters, Depends(filters_reading("correctorGroupId", expert.CORRECTED))
]


@router.get(QUEUE, summary="Runs in the expert queue, oldest first, with the total the filters match")
def list_items(
    projectId: str,  # noqa: N803 - the wire's name
    actor: ActorDep,
    db: DatabaseDep,
    filters: FiltersDep,
    limit: Annotated[int, Query(description="0 to 200; 0 answers only the total")] = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> JSONBody:
    project = project_id(projectId)
    with db.read() as session:
        page, total = expert_listing.list_items(session, actor, project, filters, limit=limit, cursor=cursor)
        items = [expert_listing.item_dict(view) for view in page.items]
    return JSONBody({**page_body(page, items), "total": total})


def _held(held: holding.Held | None) -> dict[str, object]:
    """A run held for the caller and where it stands for them, or nulls when nothing is left for them."""
    if held is None:
        return {"item": None, "hold": None}
    standing = held.standing
    hold: dict[str, object] = {"state": standing.mine}
    if standing.held_until is not None:
        hold["heldUntil"] = iso(standing.held_until)
    hold.update({"places": standing.places, "takenByOthers": standing.taken_by_others})
    return {"item": expert_listing.item_dict(held.view), "hold": hold}


@router.get(f"{QUEUE}/progress", summary="Each corrector's corrected and held runs in the expert queue")
def queue_progress(projectId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    project = project_id(projectId)
    with db.read() as session:
        body = progress_dict(progress(session, actor, project))
    return JSONBody(body)


@router.post(
    f"{QUEUE}/next",
    summary="Hold a place in your next run: the oldest waiting one you could take a place in",
    responses=CONFLICT_RESPONSES,
)
def take_next(
    projectId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    filters: FiltersDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    project = project_id(projectId)

    def work(session: Session) -> tuple[int, object]:
        return 200, _held(holding.claim_next(session, actor, project, filters))

    return answer_once(db, actor, key, f"POST /v1/projects/{project}/expert-queue/next", None, work)


@router.post(
    f"{QUEUE}/{{runId}}/hold",
    summary="Hold a place in a waiting run for you (or renew your hold); 409 when it has none for you",
    responses=CONFLICT_RESPONSES,
)
def hold(
    projectId: str,  # noqa: N803
    runId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    project, run = project_id(projectId), path_id(runId, "queue-item", expert.item_not_found)

    def work(session: Session) -> tuple[int, object]:
        return 200, _held(holding.hold(session, actor, project, run))

    return answer_once(db, actor, key, f"POST /v1/projects/{project}/expert-queue/{run}/hold", None, work)


@router.post(
    f"{QUEUE}/{{runId}}/dismiss",
    summary="Take a run not worth correcting out of the expert queue, with an optional reason",
    responses=CONFLICT_RESPONSES,
)
def dismiss(
    projectId: str,  # noqa: N803
    runId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    body: DismissIn | None = None,
    key: IdempotencyKey = None,
) -> JSONBody:
    project, run = project_id(projectId), path_id(runId, "queue-item", expert.item_not_found)
    reason = body.reason if body is not None else None

    def work(session: Session) -> tuple[int, object]:
        item = expert.dismiss(session, actor, project, run, reason)
        return 200, expert_listing.item_dict(expert_listing.item_view(session, actor, item))

    sent = body.model_dump(mode="json", exclude_unset=True) if body is not None else None
    return answer_once(db, actor, key, f"POST /v1/projects/{project}/expert-queue/{run}/dismiss", sent, work)


@router.post(
    f"{QUEUE}/{{runId}}/reopen",
    summary="Put a dismissed run back in the expert queue",
    responses=CONFLICT_RESPONSES,
)
def reopen(
    projectId: str,  # noqa: N803
    runId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    project, run = project_id(projectId), path_id(runId, "queue-item", expert.item_not_found)

    def work(session: Session) -> tuple[int, object]:
        item = expert.reopen(session, actor, project, run)
        return 200, expert_listing.item_dict(expert_listing.item_view(session, actor, item))

    return answer_once(db, actor, key, f"POST /v1/projects/{project}/expert-queue/{run}/reopen", None, work)
