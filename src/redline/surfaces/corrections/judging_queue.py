"""The judging queue on the corrections surface (/v1/projects/{projectId}/judging-queue), for the kindgi
0.1.10 client: it is the expert queue by its earlier name, so each route is the expert-queue route's
(`expert_queue.py`), reading `judgeClassId` and the state `judged`, answering each item in the judgments
era's words and refusing in them (`judgments_era`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from redline.db import Database
from redline.db.paging import DEFAULT_LIMIT
from redline.identity.service import Actor
from redline.queues.expert.listing import QueueFilters
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections import expert_queue
from redline.surfaces.corrections import judgments_era as era
from redline.surfaces.corrections.expert_queue import DismissIn
from redline.surfaces.corrections.idempotent import IdempotencyKey
from redline.surfaces.corrections.judgments_era import JudgmentsEraRoute, reworded
from redline.surfaces.corrections.openapi import CONFLICT_RESPONSES, ERROR_RESPONSES
from redline.surfaces.corrections.queue_filters import filters_reading
from redline.surfaces.responses import JSONBody

router = APIRouter(
    prefix="/v1",
    tags=["judging queue (kindgi 0.1.10)"],
    responses=ERROR_RESPONSES,
    route_class=JudgmentsEraRoute,
)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]

QUEUE = "/projects/{projectId}/judging-queue"


@router.get(QUEUE, summary="Runs in the judging queue, oldest first, with the total the filters match")
def list_items(
    projectId: str,  # noqa: N803 - the wire's name
    actor: ActorDep,
    db: DatabaseDep,
    filters: Annotated[QueueFilters, Depends(filters_reading("judgeClassId", era.JUDGED))],
    limit: Annotated[int, Query(description="0 to 200; 0 answers only the total")] = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> JSONBody:
    answer = expert_queue.list_items(projectId, actor, db, filters, limit, cursor)
    return reworded(answer, era.page(era.queue_item))


@router.post(
    f"{QUEUE}/{{runId}}/dismiss",
    summary="Take a run not worth judging out of the judging queue, with an optional reason",
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
    return reworded(expert_queue.dismiss(projectId, runId, actor, db, body, key), era.queue_item)


@router.post(
    f"{QUEUE}/{{runId}}/reopen",
    summary="Put a dismissed run back in the judging queue",
    responses=CONFLICT_RESPONSES,
)
def reopen(
    projectId: str,  # noqa: N803
    runId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    return reworded(expert_queue.reopen(projectId, runId, actor, db, key), era.queue_item)
