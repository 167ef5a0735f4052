"""Runs on the corrections surface: native ingest, reading, listing and erasing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from redline.db import Database
from redline.db.paging import DEFAULT_LIMIT, MAX_LIMIT
from redline.errors import Invalid
from redline.identity.service import Actor
from redline.ingest import runs as ingest
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.openapi import ERROR_RESPONSES
from redline.surfaces.corrections.wire import (
    page_body,
    project_id,
    query_id,
    query_list,
    query_time,
    scope_project,
)
from redline.surfaces.responses import JSONBody
from redline.traces import service as traces
from redline.traces.native import run_to_dict
from redline.traces.schemas import RUN_STATUSES, RunBatchIn, RunIn
from redline.web import metrics
from redline.web.addresses import path_id

router = APIRouter(prefix="/v1/runs", tags=["runs"], responses=ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]


@router.post("", status_code=201, summary="Store one run with its steps and spans")
def create_run(run: RunIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session, _as_one_run():
        [stored] = ingest.record_runs(session, actor, [run])
        view = traces.get_run(session, actor, stored.id)
        body = run_to_dict(view, tenant_id=actor.workspace_id)
    metrics.runs_ingested(1)
    return JSONBody(body, status_code=201)


@contextmanager
def _as_one_run() -> Iterator[None]:
    """The service numbers runs as in a batch; a single run's error names just the field."""
    try:
        yield
    except Invalid as error:
        if "index" not in error.details:
            raise
        field = error.details["field"]
        prefix = f"runs[{error.details['index']}]."
        raise Invalid(error.message.removeprefix(prefix), details={"field": field}) from None


@router.post("/batch", status_code=201, summary="Store up to 1,000 runs in one transaction, all or nothing")
def create_runs(batch: RunBatchIn, actor: ActorDep, db: DatabaseDep) -> JSONBody:
    with db.write() as session:
        stored = ingest.record_runs(session, actor, batch.runs)
    metrics.runs_ingested(len(stored))
    data = [
        {
            key: value
            for key, value in {
                "id": str(run.id),
                "externalId": run.external_id,
                "agentId": str(run.agent_id) if run.agent_id else None,
                "flowId": str(run.flow_id) if run.flow_id else None,
                "stepCount": run.step_count,
                "replaced": run.replaced,
            }.items()
            if value is not None
        }
        for run in stored
    ]
    return JSONBody({"data": data, "count": len(data)}, status_code=201)


@router.get("", summary="List runs newest first, without steps and spans")
def list_runs(
    actor: ActorDep,
    db: DatabaseDep,
    project_id_: Annotated[str | None, Query(alias="projectId")] = None,
    agent_id: Annotated[str | None, Query(alias="agentId")] = None,
    agent: Annotated[str | None, Query(description="An agent's name")] = None,
    flow_id: Annotated[str | None, Query(alias="flowId")] = None,
    agent_version: Annotated[str | None, Query(alias="agentVersion")] = None,
    session_id: Annotated[
        str | None, Query(alias="sessionId", description="One session (conversation), by its id")
    ] = None,
    status: Annotated[
        list[str] | None, Query(description=f"One or more of {', '.join(RUN_STATUSES)}, comma-separated")
    ] = None,
    scope_kind: Annotated[
        str | None, Query(alias="scopeKind", description="tenant or project: kindgi's client's projectId")
    ] = None,
    scope_id: Annotated[str | None, Query(alias="scopeId", description="With scopeKind=project")] = None,
    since: Annotated[str | None, Query(description="Runs started at or after this ISO 8601 time")] = None,
    until: Annotated[str | None, Query(description="Runs started before this ISO 8601 time")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> JSONBody:
    statuses = query_list(status)
    unknown = [s for s in statuses if s not in RUN_STATUSES]
    if unknown:
        raise Invalid(
            f'status: "{unknown[0]}" is not one of {", ".join(RUN_STATUSES)}.', details={"field": "status"}
        )
    scoped = scope_project(scope_kind, scope_id)
    if scoped is not None and project_id_ is not None:
        raise Invalid(
            "Give projectId or scopeKind=project with scopeId, not both.", details={"field": "scopeId"}
        )
    filters = traces.RunFilters(
        project_id=project_id(project_id_) if project_id_ is not None else scoped,
        agent_id=query_id(agent_id, "agentId"),
        agent=agent,
        flow_id=query_id(flow_id, "flowId"),
        agent_version=agent_version,
        session_id=session_id,
        statuses=statuses,
        since=query_time(since, "since"),
        until=query_time(until, "until"),
    )
    with db.read() as session:
        page = traces.list_runs(session, actor, filters, limit=limit, cursor=cursor)
        items = [run_to_dict(view, tenant_id=actor.workspace_id, with_content=False) for view in page.items]
    return JSONBody(page_body(page, items))


@router.get("/{runId}", summary="One run with its steps and spans")
def get_run(runId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803 - the wire's name
    with db.read() as session:
        view = traces.get_run(session, actor, path_id(runId, "run"))
        body: dict[str, Any] = run_to_dict(view, tenant_id=actor.workspace_id)
    return JSONBody(body)


@router.post("/{runId}/erase", summary="Erase a run's content; ids, agent, version, status and times stay")
def erase_run(runId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803 - the wire's name
    with db.write() as session:
        view = ingest.erase_run(session, actor, path_id(runId, "run"))
        body = run_to_dict(view, tenant_id=actor.workspace_id)
    return JSONBody(body)
