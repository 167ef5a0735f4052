"""Identity on the corrections surface: who am I, projects, users, tokens and memberships."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import Field
from sqlalchemy.orm import Session
from starlette.responses import Response

from redline.db import Database
from redline.db.paging import DEFAULT_LIMIT, MAX_LIMIT, page_of_sorted
from redline.errors import Invalid
from redline.identity import service as identity
from redline.identity.models import Membership, Principal, Project, Token
from redline.identity.service import Actor, PrincipalKind, ProjectRole, ReviewerRole
from redline.jsonio import iso
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.openapi import CONFLICT_RESPONSES, ERROR_RESPONSES
from redline.surfaces.corrections.wire import page_body, project_id
from redline.surfaces.responses import JSONBody
from redline.traces.schemas import WireModel
from redline.web.addresses import path_id

router = APIRouter(prefix="/v1", tags=["identity"], responses=ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]
Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT)]


class ProjectIn(WireModel):
    name: str = Field(min_length=1, max_length=200)


class ProjectSettingsIn(WireModel):
    sort_end_user_corrections: bool


class UserIn(WireModel):
    name: str = Field(min_length=1, max_length=200)
    kind: PrincipalKind
    reviewer_role: ReviewerRole | None = None
    workspace_admin: bool = False
    installation_admin: bool = False


class TokenIn(WireModel):
    name: str = Field("api", min_length=1, max_length=200)


class MemberIn(WireModel):
    role: ProjectRole


def user_dict(principal: Principal) -> dict[str, Any]:
    body = {
        "id": str(principal.id),
        "name": principal.name,
        "kind": principal.kind,
        "workspaceAdmin": principal.workspace_admin,
        "installationAdmin": principal.installation_admin,
        "createdAt": iso(principal.created_at),
    }
    if principal.reviewer_role is not None:
        body["reviewerRole"] = principal.reviewer_role
    return body


def token_dict(token: Token) -> dict[str, Any]:
    body = {
        "id": str(token.id),
        "userId": str(token.principal_id),
        "name": token.name,
        "prefix": token.prefix,
        "createdAt": iso(token.created_at),
    }
    for key, value in (("lastUsedAt", token.last_used_at), ("revokedAt", token.revoked_at)):
        if value is not None:
            body[key] = iso(value)
    return body


def project_dict(project: Project, role: str, default_id: uuid.UUID | None) -> dict[str, Any]:
    """A project with the caller's role in it, and the fields kindgi's client requires of one: its
    workspace as `tenantId`; its name as its `slug` (names are unique in a workspace, which is what a
    slug is for); whether it is the Default (`identity.default_project_id`); and `updatedAt`, which is
    `createdAt`, as Redline keeps no time of a project's last change."""
    created = iso(project.created_at)
    return {
        "id": str(project.id),
        "tenantId": str(project.workspace_id),
        "name": project.name,
        "slug": project.name,
        "isDefault": project.id == default_id,
        "role": role,
        "sortEndUserCorrections": project.sort_end_user_corrections,
        "createdAt": created,
        "updatedAt": created,
    }


def member_dict(membership: Membership) -> dict[str, Any]:
    return {
        "projectId": str(membership.project_id),
        "userId": str(membership.principal_id),
        "role": membership.role,
    }


@router.get("/me", summary="Who the token belongs to")
def me(actor: ActorDep) -> JSONBody:
    body: dict[str, Any] = {
        "id": str(actor.principal_id),
        "name": actor.name,
        "kind": actor.kind,
        "workspaceId": str(actor.workspace_id),
        "workspaceAdmin": actor.workspace_admin,
        "installationAdmin": actor.installation_admin,
        "tokenId": str(actor.token_id),
    }
    if actor.reviewer_role is not None:
        body["reviewerRole"] = actor.reviewer_role
    return JSONBody(body)


@router.get("/projects", summary="The projects the caller can see, with the caller's role in each")
def list_projects(
    actor: ActorDep,
    db: DatabaseDep,
    limit: Limit = DEFAULT_LIMIT,
    cursor: str | None = None,
    name_contains: Annotated[
        str | None, Query(alias="nameContains", description="Only projects whose name holds this text")
    ] = None,
    org_id: Annotated[str | None, Query(alias="orgId", description="Refused: Redline has no orgs")] = None,
) -> JSONBody:
    if org_id is not None:
        raise Invalid("orgId: Redline has no orgs; leave it out.", details={"field": "orgId"})
    with db.read() as session:
        visible = identity.visible_projects(session, actor)
        default_id = identity.default_project_id(session, actor.workspace_id)
    if name_contains is not None:
        visible = [(project, role) for project, role in visible if name_contains in project.name]
    page = page_of_sorted(visible, limit, cursor, lambda pair: str(pair[0].id))
    items = [project_dict(project, role, default_id) for project, role in page.items]
    return JSONBody(page_body(page, items))


@router.post(
    "/projects", status_code=201, summary="Create a project (workspace admins)", responses=CONFLICT_RESPONSES
)
def create_project(body: ProjectIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        project = identity.create_project(session, actor, body.name)
        answer = project_dict(project, "admin", identity.default_project_id(session, actor.workspace_id))
    return JSONBody(answer, status_code=201)


def _project_answer(session: Session, actor: Actor, project: Project) -> JSONBody:
    role = identity.project_role(session, actor, project) or "admin"
    return JSONBody(project_dict(project, role, identity.default_project_id(session, actor.workspace_id)))


# Before /projects/{projectId}, which would take "default" for an id.
@router.get("/projects/default", summary="The workspace's Default project: its first")
def get_default_project(actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.read() as session:
        return _project_answer(session, actor, identity.default_project(session, actor))


@router.get("/projects/{projectId}", summary="One project, with the caller's role in it")
def get_project(projectId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.read() as session:
        project = identity.require_project_role(session, actor, project_id(projectId), "read")
        return _project_answer(session, actor, project)


@router.patch("/projects/{projectId}", summary="Change a project's settings (project admins)")
def change_project(projectId: str, body: ProjectSettingsIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.write() as session:
        project = identity.set_sort_end_user_corrections(
            session, actor, project_id(projectId), body.sort_end_user_corrections
        )
        return _project_answer(session, actor, project)


@router.get("/users", summary="The workspace's users and services")
def list_users(
    actor: ActorDep, db: DatabaseDep, limit: Limit = DEFAULT_LIMIT, cursor: str | None = None
) -> JSONBody:
    with db.read() as session:
        users = identity.list_users(session, actor)
    page = page_of_sorted(users, limit, cursor, lambda principal: str(principal.id))
    return JSONBody(page_body(page, [user_dict(principal) for principal in page.items]))


@router.post(
    "/users",
    status_code=201,
    summary="Add a user or a service (workspace admins)",
    responses=CONFLICT_RESPONSES,
)
def create_user(body: UserIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        principal = identity.create_user(
            session,
            actor,
            name=body.name,
            kind=body.kind,
            reviewer_role=body.reviewer_role,
            workspace_admin=body.workspace_admin,
            installation_admin=body.installation_admin,
        )
    return JSONBody(user_dict(principal), status_code=201)


@router.post("/users/{userId}/tokens", status_code=201, summary="Make a token; its secret is answered once")
def create_token(userId: str, actor: ActorDep, db: DatabaseDep, body: TokenIn | None = None) -> JSONBody:  # noqa: N803
    with db.write() as session:
        issued = identity.create_token(session, actor, path_id(userId, "user"), (body or TokenIn()).name)
    return JSONBody({**token_dict(issued.token), "token": issued.secret}, status_code=201)


@router.get("/users/{userId}/tokens", summary="A user's tokens, by prefix; secrets are never shown again")
def list_tokens(userId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.read() as session:
        tokens = identity.list_tokens(session, actor, path_id(userId, "user"))
    return JSONBody({"data": [token_dict(token) for token in tokens], "hasMore": False})


@router.delete("/tokens/{tokenId}", status_code=204, summary="Revoke a token")
def revoke_token(tokenId: str, actor: ActorDep, db: DatabaseDep) -> Response:  # noqa: N803
    with db.write() as session:
        identity.revoke_token(session, actor, path_id(tokenId, "token"))
    return Response(status_code=204)


@router.put("/projects/{projectId}/members/{userId}", summary="Give a user a role in a project")
def set_member(projectId: str, userId: str, body: MemberIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.write() as session:
        membership = identity.set_member(
            session, actor, project_id(projectId), path_id(userId, "user"), body.role
        )
        answer = member_dict(membership)
    return JSONBody(answer)


@router.delete(
    "/projects/{projectId}/members/{userId}", status_code=204, summary="Take a user out of a project"
)
def remove_member(projectId: str, userId: str, actor: ActorDep, db: DatabaseDep) -> Response:  # noqa: N803
    with db.write() as session:
        identity.remove_member(session, actor, project_id(projectId), path_id(userId, "user"))
    return Response(status_code=204)
