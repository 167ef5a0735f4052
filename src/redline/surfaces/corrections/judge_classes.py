"""Judge classes on the corrections surface (/v1/judge-classes), for the kindgi 0.1.10 client: a judge
class is a corrector group by its earlier name, the same object, so each route is the corrector-groups
route's (`groups.py`), answered and refused in the judgments era's words (`judgments_era`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from redline.db import Database
from redline.db.paging import DEFAULT_LIMIT, MAX_LIMIT
from redline.groups.schemas import GroupChange, GroupIn
from redline.identity.service import Actor
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections import groups
from redline.surfaces.corrections import judgments_era as era
from redline.surfaces.corrections.idempotent import IdempotencyKey
from redline.surfaces.corrections.judgments_era import JudgmentsEraRoute, renamed, reworded
from redline.surfaces.corrections.openapi import CONFLICT_RESPONSES, ERROR_RESPONSES
from redline.surfaces.responses import JSONBody

router = APIRouter(
    prefix="/v1",
    tags=["judge classes (kindgi 0.1.10)"],
    responses=ERROR_RESPONSES,
    route_class=JudgmentsEraRoute,
)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]
CLASS = "/judge-classes/{judgeClassId}"


@router.post(
    "/judge-classes",
    status_code=201,
    summary="Make a judge class (a corrector group): who may judge as it, where, with what weight",
    responses=CONFLICT_RESPONSES,
)
def create_class(body: GroupIn, actor: ActorDep, db: DatabaseDep, key: IdempotencyKey = None) -> JSONBody:
    return reworded(groups.create_group(body, actor, db, key), era.judge_class)


@router.get("/judge-classes", summary="Live judge classes the caller can read, oldest first")
def list_classes(
    actor: ActorDep,
    db: DatabaseDep,
    filters: groups.FiltersDep,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> JSONBody:
    return reworded(groups.list_groups(actor, db, filters, limit, cursor), era.page(era.judge_class))


@router.get(CLASS, summary="One judge class, live or retired")
def get_class(judgeClassId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    return reworded(groups.get_group(judgeClassId, actor, db), era.judge_class)


@router.patch(
    CLASS,
    summary="Change the fields sent; assertableBy: null lifts the restriction",
    responses=CONFLICT_RESPONSES,
)
def change_class(
    judgeClassId: str,  # noqa: N803
    body: GroupChange,
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    return reworded(groups.change_group(judgeClassId, body, actor, db, key), era.judge_class)


@router.post(
    f"{CLASS}/unregister",
    summary="Retire a judge class: no new judgment can name it; judgments that did keep it",
    responses=CONFLICT_RESPONSES,
)
def remove_class(
    judgeClassId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    return reworded(groups.remove_group(judgeClassId, actor, db, key), renamed)
