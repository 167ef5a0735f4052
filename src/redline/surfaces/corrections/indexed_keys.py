"""A project's indexed metadata keys on the corrections surface
(/v1/projects/{projectId}/indexed-metadata-keys): declare, list, read (with the backfill's progress)
and remove the metadata keys searches walk an index for. docs/api-runs.md describes them."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import Field
from starlette.responses import Response

from redline.db import Database
from redline.identity.service import Actor
from redline.jsonio import iso
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.openapi import CONFLICT_RESPONSES, ERROR_RESPONSES
from redline.surfaces.corrections.wire import project_id
from redline.surfaces.responses import JSONBody
from redline.traces import metadata_index
from redline.traces.metadata_index import KeyView
from redline.traces.schemas import WireModel

router = APIRouter(
    prefix="/v1/projects/{projectId}/indexed-metadata-keys", tags=["runs"], responses=ERROR_RESPONSES
)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]


class IndexedKeyIn(WireModel):
    key: str = Field(min_length=1, max_length=metadata_index.MAX_KEY_LENGTH)


def key_dict(view: KeyView) -> dict[str, Any]:
    row = view.row
    body: dict[str, Any] = {
        "key": row.key,
        "state": row.state,
        "runsDone": row.runs_done,
        "runsTotal": row.runs_total,
        "progress": round(view.progress, 4),
        "declaredAt": iso(row.declared_at),
    }
    if row.ready_at is not None:
        body["readyAt"] = iso(row.ready_at)
    return body


@router.get("", summary="The metadata keys the project indexes, with each one's backfill")
def list_keys(projectId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.read() as session:
        views = metadata_index.list_keys(session, actor, project_id(projectId))
        answer = {"data": [key_dict(view) for view in views], "hasMore": False}
    return JSONBody(answer)


@router.post(
    "",
    status_code=201,
    summary="Index a metadata key (project admins); its runs are indexed in the background",
    responses=CONFLICT_RESPONSES,
)
def declare_key(projectId: str, body: IndexedKeyIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.write() as session:
        answer = key_dict(metadata_index.declare_key(session, actor, project_id(projectId), body.key))
    return JSONBody(answer, status_code=201)


@router.get("/{key:path}", summary="One indexed metadata key and how far its backfill has got")
def get_key(projectId: str, key: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.read() as session:
        answer = key_dict(metadata_index.get_key(session, actor, project_id(projectId), key))
    return JSONBody(answer)


@router.delete("/{key:path}", status_code=204, summary="Stop indexing a metadata key (project admins)")
def remove_key(projectId: str, key: str, actor: ActorDep, db: DatabaseDep) -> Response:  # noqa: N803
    with db.write() as session:
        metadata_index.remove_key(session, actor, project_id(projectId), key)
    return Response(status_code=204)
