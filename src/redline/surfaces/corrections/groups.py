"""Corrector groups on the corrections surface (/v1/corrector-groups): make, list, read, change and
remove them. docs/corrector-groups.md describes the object and each route."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from sqlalchemy.orm import Session

from redline.db import Database
from redline.db.paging import DEFAULT_LIMIT, MAX_LIMIT
from redline.groups import service as groups
from redline.groups.schemas import GroupChange, GroupIn
from redline.identity.service import Actor
from redline.jsonio import iso
from redline.queues.expert import group_views
from redline.queues.expert.group_views import WantedGroupView, WantingRule
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.idempotent import IdempotencyKey, answer_once
from redline.surfaces.corrections.openapi import CONFLICT_RESPONSES, ERROR_RESPONSES
from redline.surfaces.corrections.wire import page_body, query_id
from redline.surfaces.responses import JSONBody
from redline.web.addresses import path_id

router = APIRouter(prefix="/v1", tags=["corrector groups"], responses=ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]
KIND = "corrector-group"


def _scope(view: WantedGroupView) -> dict[str, str]:
    group = view.group
    if group.scope_kind == groups.WORKSPACE:
        return {"kind": groups.TENANT}
    scope = {"kind": group.scope_kind, "projectId": str(group.project_id)}
    if group.agent_id is not None:
        scope["agentId"] = str(group.agent_id)
    return scope


def _assertable_by(view: WantedGroupView) -> dict[str, Any] | None:
    """The restriction; whom it names only for admins of the group's scope, how many for the others."""
    restriction = view.group.assertable_by
    if restriction is None:
        return None
    shown = dict(restriction)
    if not view.sees_principals and "principalIds" in shown:
        shown["principalCount"] = len(shown.pop("principalIds"))
    return shown


def _wanted_by(rules: list[WantingRule]) -> list[dict[str, str]]:
    return [{"ruleId": str(rule.rule_id), "name": rule.name} for rule in rules]


def group_dict(view: WantedGroupView) -> dict[str, Any]:
    group = view.group
    body: dict[str, Any] = {
        "id": str(group.id),
        "tenantId": str(group.workspace_id),
        "scope": _scope(view),
        "name": group.name,
        "weight": group.weight,
    }
    if group.description is not None:
        body["description"] = group.description
    restriction = _assertable_by(view)
    if restriction is not None:
        body["assertableBy"] = restriction
    body["createdAt"] = iso(group.created_at)
    body["updatedAt"] = iso(group.updated_at)
    if group.unregistered_at is not None:
        body["unregisteredAt"] = iso(group.unregistered_at)
    body["wantedBy"] = _wanted_by(view.wanted_by)
    return body


@router.post(
    "/corrector-groups",
    status_code=201,
    summary="Make a corrector group: who may correct as it, where it applies, what it weighs",
    responses=CONFLICT_RESPONSES,
)
def create_group(body: GroupIn, actor: ActorDep, db: DatabaseDep, key: IdempotencyKey = None) -> JSONBody:
    def work(session: Session) -> tuple[int, object]:
        return 201, group_dict(group_views.create(session, actor, body))

    return answer_once(
        db, actor, key, "POST /v1/corrector-groups", body.model_dump(mode="json", exclude_unset=True), work
    )


def list_filters(
    scope_kind: Annotated[
        str | None, Query(alias="scopeKind", description="tenant (or workspace), project or agent")
    ] = None,
    project_id: Annotated[
        str | None,
        Query(
            alias="projectId",
            description="The groups that apply to this project's runs: the workspace's, the project's "
            "and its agents'",
        ),
    ] = None,
    agent_id: Annotated[
        str | None,
        Query(
            alias="agentId",
            description="The groups that apply to this agent's runs: the workspace's, its project's "
            "and its own",
        ),
    ] = None,
) -> groups.GroupFilters:
    """The list's filters, parsed from the query (the judge classes' list takes the same)."""
    return groups.GroupFilters(
        scope_kind=scope_kind,
        project_id=query_id(project_id, "projectId"),
        agent_id=query_id(agent_id, "agentId"),
    )


FiltersDep = Annotated[groups.GroupFilters, Depends(list_filters)]


@router.get("/corrector-groups", summary="Live corrector groups the caller can read, oldest first")
def list_groups(
    actor: ActorDep,
    db: DatabaseDep,
    filters: FiltersDep,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> JSONBody:
    with db.read() as session:
        page = group_views.list_groups(session, actor, filters, limit=limit, cursor=cursor)
        items = [group_dict(view) for view in page.items]
    return JSONBody(page_body(page, items))


@router.get("/corrector-groups/{correctorGroupId}", summary="One corrector group, live or removed")
def get_group(correctorGroupId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.read() as session:
        body = group_dict(group_views.get(session, actor, path_id(correctorGroupId, KIND)))
    return JSONBody(body)


@router.patch(
    "/corrector-groups/{correctorGroupId}",
    summary="Change the fields sent; assertableBy: null lifts the restriction",
    responses=CONFLICT_RESPONSES,
)
def change_group(
    correctorGroupId: str,  # noqa: N803
    body: GroupChange,
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    ident = path_id(correctorGroupId, KIND)

    def work(session: Session) -> tuple[int, object]:
        return 200, group_dict(group_views.change(session, actor, ident, body))

    operation = f"PATCH /v1/corrector-groups/{ident}"
    return answer_once(db, actor, key, operation, body.model_dump(mode="json", exclude_unset=True), work)


@router.post(
    "/corrector-groups/{correctorGroupId}/unregister",
    summary="Remove a group: no new correction can name it; the answer names the rules that want it",
    responses=CONFLICT_RESPONSES,
)
def remove_group(
    correctorGroupId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    ident = path_id(correctorGroupId, KIND)

    def work(session: Session) -> tuple[int, object]:
        view = group_views.remove(session, actor, ident)
        return 200, {
            "correctorGroupId": str(ident),
            "unregistered": True,
            "wantedBy": _wanted_by(view.wanted_by),
        }

    return answer_once(db, actor, key, f"POST /v1/corrector-groups/{ident}/unregister", None, work)
