"""A project's retention on the corrections surface (/v1/projects/{projectId}/retention): how many days
its runs keep their content, set by its admins, with how the background passes go. docs/retention.md
describes it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import StrictInt

from redline.db import Database
from redline.identity.service import Actor
from redline.jsonio import iso
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.openapi import ERROR_RESPONSES
from redline.surfaces.corrections.wire import project_id
from redline.surfaces.responses import JSONBody
from redline.traces import retention
from redline.traces.retention import Retention
from redline.traces.schemas import WireModel

router = APIRouter(prefix="/v1/projects/{projectId}/retention", tags=["runs"], responses=ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]


class RetentionIn(WireModel):
    # Checked by the service, so every path (API, CLI, console) says the same sentence.
    retention_days: StrictInt | None


def retention_dict(kept: Retention) -> dict[str, Any]:
    body: dict[str, Any] = {"retentionDays": kept.days}
    for name, value in (
        ("cutoff", kept.cutoff),
        ("lastPassAt", kept.last_pass_at),
        ("nextPassAt", kept.next_pass_at),
    ):
        body[name] = iso(value) if value is not None else None
    body["lastPassErased"] = kept.last_pass_erased
    return body


@router.get("", summary="How long the project keeps its runs' content, and how its retention passes go")
def get_retention(projectId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.read() as session:
        answer = retention_dict(retention.get_retention(session, actor, project_id(projectId)))
    return JSONBody(answer)


@router.put("", summary="Keep the project's runs' content so many days, or for good (project admins)")
def set_retention(projectId: str, body: RetentionIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    target = project_id(projectId)
    with db.write() as session:
        retention.set_retention(session, actor, target, body.retention_days)
        answer = retention_dict(retention.get_retention(session, actor, target))
    return JSONBody(answer)
