"""The audit log on the corrections surface: GET /v1/audit-events, for workspace admins."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from redline.audit import service as audit
from redline.db import Database
from redline.db.paging import DEFAULT_LIMIT, MAX_LIMIT
from redline.identity.service import Actor
from redline.jsonio import iso
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.openapi import ERROR_RESPONSES
from redline.surfaces.corrections.wire import page_body, project_id, query_list, query_time
from redline.surfaces.responses import JSONBody

router = APIRouter(prefix="/v1", tags=["audit"], responses=ERROR_RESPONSES)


@router.get("/audit-events", summary="What was done, by whom and when, newest first (workspace admins)")
def list_audit_events(
    actor: Annotated[Actor, Depends(current_actor)],
    db: Annotated[Database, Depends(database)],
    kind: Annotated[list[str] | None, Query(description="Event kinds, repeated or comma-separated")] = None,
    project_id_: Annotated[str | None, Query(alias="projectId")] = None,
    since: Annotated[str | None, Query(description="At or after this ISO 8601 time")] = None,
    until: Annotated[str | None, Query(description="Before this ISO 8601 time")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> JSONBody:
    filters = audit.AuditFilters(
        kinds=query_list(kind),
        project_id=project_id(project_id_) if project_id_ is not None else None,
        since=query_time(since, "since"),
        until=query_time(until, "until"),
    )
    with db.read() as session:
        page = audit.list_events(session, actor, filters, limit=limit, cursor=cursor)
        items = [
            {
                "id": str(event.id),
                "kind": event.kind,
                **({"projectId": str(event.project_id)} if event.project_id else {}),
                "actor": {
                    "kind": event.actor_kind,
                    **({"id": str(event.actor_id)} if event.actor_id else {}),
                },
                "data": event.data,
                "at": iso(event.at),
            }
            for event in page.items
        ]
    return JSONBody(page_body(page, items))
