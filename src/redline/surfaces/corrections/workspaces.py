"""Workspaces on the corrections surface: the installation's tenants, for installation admins."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import Field
from starlette.responses import StreamingResponse

from redline.db import Database
from redline.db.paging import DEFAULT_LIMIT, MAX_LIMIT, page_of_sorted
from redline.identity import workspaces
from redline.identity.models import Workspace
from redline.identity.service import Actor
from redline.jsonio import iso
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.identity import user_dict
from redline.surfaces.corrections.openapi import CONFLICT_RESPONSES, ERROR_RESPONSES
from redline.surfaces.corrections.wire import page_body
from redline.surfaces.responses import JSONBody, NDJSONStream, in_chunks_of_bytes
from redline.tenancy import service as tenancy
from redline.tenancy.export import export_lines
from redline.traces.schemas import WireModel

router = APIRouter(prefix="/v1", tags=["workspaces"], responses=ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]
Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT)]


class WorkspaceIn(WireModel):
    name: str = Field(min_length=1, max_length=200)
    admin_name: str = Field("admin", min_length=1, max_length=200, description="Its first admin's user name")
    project_name: str = Field("default", min_length=1, max_length=200, description="Its first project's name")


def workspace_dict(
    workspace: Workspace, projects: int | None = None, users: int | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": str(workspace.id),
        "name": workspace.name,
        "createdAt": iso(workspace.created_at),
    }
    if projects is not None:
        body["projectCount"] = projects
        body["userCount"] = users
    return body


@router.get("/workspaces", summary="The installation's workspaces, oldest first (installation admins)")
def list_workspaces(
    actor: ActorDep, db: DatabaseDep, limit: Limit = DEFAULT_LIMIT, cursor: str | None = None
) -> JSONBody:
    with db.read() as session:
        summaries = workspaces.list_workspaces(session, actor)
    page = page_of_sorted(summaries, limit, cursor, lambda summary: str(summary.workspace.id))
    items = [workspace_dict(item.workspace, item.projects, item.users) for item in page.items]
    return JSONBody(page_body(page, items))


@router.post(
    "/workspaces",
    status_code=201,
    summary="Make a workspace with a first project and admin; the admin's token is answered once",
    responses=CONFLICT_RESPONSES,
)
def create_workspace(body: WorkspaceIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        made = workspaces.create_workspace(
            session, actor, body.name, admin_name=body.admin_name, project_name=body.project_name
        )
        answer = {
            **workspace_dict(made.workspace),
            "project": {"id": str(made.project.id), "name": made.project.name},
            "admin": user_dict(made.admin),
            "token": made.admin_secret,
        }
    return JSONBody(answer, status_code=201)


@router.get("/workspaces/{workspaceId}", summary="One workspace, by id or name (installation admins)")
def get_workspace(workspaceId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.read() as session:
        workspace = workspaces.workspace_for(session, actor, workspaceId, "see workspaces")
        summary = workspaces.summary_of(session, workspace)
        return JSONBody(workspace_dict(workspace, summary.projects, summary.users))


@router.delete(
    "/workspaces/{workspaceId}",
    summary="Delete a workspace with everything in it (installation admins; not the caller's own)",
    responses=CONFLICT_RESPONSES,
)
def delete_workspace(workspaceId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.write() as session:
        deleted = tenancy.remove_workspace(session, actor, workspaceId)
    return JSONBody(
        {
            "name": deleted.name,
            "deleted": {"projects": deleted.projects, "runs": deleted.runs, "rows": deleted.rows},
        }
    )


@router.get(
    "/workspaces/{workspaceId}/export",
    # Documented as a plain stream with its 200's own media type, so its errors stay documented as JSON.
    response_class=StreamingResponse,
    responses={200: {"content": {NDJSONStream.media_type: {}}}},
    summary="Everything in a workspace, one row per line, read at one moment (installation admins)",
)
def export_workspace(workspaceId: str, actor: ActorDep, db: DatabaseDep) -> NDJSONStream:  # noqa: N803
    with db.write() as session:
        workspace_id = tenancy.workspace_to_export(session, actor, workspaceId).id
    return NDJSONStream(_export(db, workspace_id))


def _export(db: Database, workspace_id: uuid.UUID) -> Iterator[bytes]:
    """The lines, read in one transaction opened here: the response streams after the handler returns."""
    with db.read() as session:
        workspace = session.get(Workspace, workspace_id)
        if workspace is None:  # deleted between the check and the read
            return
        yield from in_chunks_of_bytes(export_lines(session, workspace))
