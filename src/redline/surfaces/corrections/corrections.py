"""Corrections on the corrections surface (/v1/corrections): make, list, count, export, read, change,
remove, and test runs of a version on them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from sqlalchemy.orm import Session

from redline.corrections import service as corrections
from redline.corrections import testruns
from redline.corrections.schemas import CorrectionChange, CorrectionIn, TestRunIn
from redline.corrections.wire import correction_dict, with_run_copies
from redline.corrections.workflow import Change
from redline.db import Database
from redline.db.paging import DEFAULT_LIMIT, MAX_LIMIT
from redline.errors import Invalid
from redline.identity.service import Actor
from redline.jsonio import iso
from redline.queues.expert import correcting
from redline.surfaces.auth import BearerSecret, current_actor, database
from redline.surfaces.corrections.idempotent import IdempotencyKey, answer_once, answer_once_for_bearer
from redline.surfaces.corrections.openapi import CONFLICT_RESPONSES, ERROR_RESPONSES
from redline.surfaces.corrections.wire import page_body, project_id, query_id, query_list, query_time
from redline.surfaces.responses import JSONBody
from redline.web.addresses import path_id

router = APIRouter(prefix="/v1", tags=["corrections"], responses=ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]


def list_filters(
    run_id: Annotated[str | None, Query(alias="runId")] = None,
    agent_id: Annotated[str | None, Query(alias="agentId")] = None,
    agent_version: Annotated[str | None, Query(alias="agentVersion")] = None,
    flow_id: Annotated[str | None, Query(alias="flowId")] = None,
    corrector_group_id: Annotated[str | None, Query(alias="correctorGroupId")] = None,
    participant_id: Annotated[str | None, Query(alias="participantId")] = None,
    status: Annotated[
        list[str] | None,
        Query(
            description="open, being-fixed, with-owner, fixed, wont-fix, removed or not-fixed; "
            "repeated or comma-separated"
        ),
    ] = None,
    sorted_to: Annotated[
        list[str] | None,
        Query(alias="sortedTo", description="improve, developer, owner or none; repeated or comma-separated"),
    ] = None,
    source: Annotated[str, Query(alias="from", description="experts, end-users or all")] = "all",
    made_by: Annotated[
        str | None, Query(alias="madeBy", description="`me`: only your own corrections")
    ] = None,
    since: Annotated[str | None, Query(description="Made at or after this ISO 8601 time")] = None,
    until: Annotated[str | None, Query(description="Made before this ISO 8601 time")] = None,
    scope_kind: Annotated[str | None, Query(alias="scopeKind", description="`project`")] = None,
    scope_id: Annotated[str | None, Query(alias="scopeId", description="The project's id")] = None,
) -> corrections.CorrectionFilters:
    """The filters the list and the export share, parsed from the query."""
    if made_by not in (None, "me"):
        raise Invalid('madeBy: only "me" is understood.', details={"field": "madeBy"})
    if scope_kind not in (None, "project"):
        raise Invalid(
            'scopeKind: corrections are counted and listed by "project".', details={"field": "scopeKind"}
        )
    if scope_kind is not None and scope_id is None:
        raise Invalid("scopeKind needs scopeId.", details={"field": "scopeId"})
    return corrections.CorrectionFilters(
        project_id=project_id(scope_id) if scope_id is not None else None,
        run_id=query_id(run_id, "runId"),
        agent_id=query_id(agent_id, "agentId"),
        agent_version=agent_version,
        flow_id=query_id(flow_id, "flowId"),
        corrector_group_id=query_id(corrector_group_id, "correctorGroupId"),
        participant_id=participant_id,
        statuses=query_list(status),
        sorted_to=query_list(sorted_to),
        source=source,
        made_by_me=made_by == "me",
        since=query_time(since, "since"),
        until=query_time(until, "until"),
    )


FiltersDep = Annotated[corrections.CorrectionFilters, Depends(list_filters)]


@router.post(
    "/corrections",
    status_code=201,
    summary="Correct a run: one person's word on it",
    responses=CONFLICT_RESPONSES,
)
def create_correction(
    body: CorrectionIn, secret: BearerSecret, db: DatabaseDep, key: IdempotencyKey = None
) -> JSONBody:
    def work(session: Session, actor: Actor) -> tuple[int, object]:
        return 201, correction_dict(correcting.create(session, actor, body))

    sent = body.model_dump(mode="json", exclude_unset=True)
    return answer_once_for_bearer(db, secret, key, "POST /v1/corrections", sent, work)


@router.get("/corrections", summary="Corrections newest first, filtered, a page at a time")
def list_corrections(
    actor: ActorDep,
    db: DatabaseDep,
    filters: FiltersDep,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> JSONBody:
    with db.read() as session:
        page = corrections.list_corrections(session, actor, filters, limit=limit, cursor=cursor)
        items = [correction_dict(correction) for correction in page.items]
    return JSONBody(page_body(page, items))


@router.get("/corrections/counts", summary="A project's corrections (or one agent's) by status")
def count_corrections(
    actor: ActorDep,
    db: DatabaseDep,
    scope_kind: Annotated[str, Query(alias="scopeKind", description="`project`")],
    scope_id: Annotated[str, Query(alias="scopeId", description="The project's id")],
    agent_id: Annotated[str | None, Query(alias="agentId")] = None,
) -> JSONBody:
    if scope_kind != "project":
        raise Invalid('scopeKind: corrections are counted by "project".', details={"field": "scopeKind"})
    with db.read() as session:
        counted = corrections.counts(session, actor, project_id(scope_id), query_id(agent_id, "agentId"))
    return JSONBody(
        {
            "open": counted["open"],
            "beingFixed": counted["being-fixed"],
            "withOwner": counted["with-owner"],
            "fixed": counted["fixed"],
            "wontFix": counted["wont-fix"],
            "removed": counted["removed"],
        }
    )


@router.get("/corrections/{correctionId}", summary="One correction, live or replaced, with copies of its run")
def get_correction(correctionId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.read() as session:
        body = with_run_copies(corrections.get(session, actor, path_id(correctionId, "correction")))
    return JSONBody(body)


@router.patch(
    "/corrections/{correctionId}",
    summary="Re-sort a correction or set its status, with a link or a reason",
    responses=CONFLICT_RESPONSES,
)
def change_correction(
    correctionId: str,  # noqa: N803
    body: CorrectionChange,
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    ident = path_id(correctionId, "correction")
    asked = Change(sorted_to=body.sorted_to, status=body.status, link=body.link, reason=body.reason)

    def work(session: Session) -> tuple[int, object]:
        return 200, correction_dict(corrections.change(session, actor, ident, asked))

    operation = f"PATCH /v1/corrections/{ident}"
    return answer_once(db, actor, key, operation, body.model_dump(mode="json", exclude_unset=True), work)


@router.post(
    "/corrections/{correctionId}/unregister",
    summary="Remove a correction (its author, or a project admin); final",
    responses=CONFLICT_RESPONSES,
)
def remove_correction(
    correctionId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    ident = path_id(correctionId, "correction")

    def work(session: Session) -> tuple[int, object]:
        correcting.remove(session, actor, ident)
        return 200, {"correctionId": str(ident), "unregistered": True}

    return answer_once(db, actor, key, f"POST /v1/corrections/{ident}/unregister", None, work)


@router.post(
    "/projects/{projectId}/test-runs",
    status_code=201,
    summary="Record a version tried on corrections as test cases; fixes and reopens them",
    responses=CONFLICT_RESPONSES,
)
def create_test_run(
    projectId: str,  # noqa: N803
    body: TestRunIn,
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    project = project_id(projectId)

    def work(session: Session) -> tuple[int, object]:
        test_run = testruns.run(session, actor, project, body)
        return 201, {
            "id": str(test_run.id),
            "projectId": str(test_run.project_id),
            **({"agentId": str(test_run.agent_id)} if test_run.agent_id else {}),
            **({"flowId": str(test_run.flow_id)} if test_run.flow_id else {}),
            "version": test_run.version,
            "how": test_run.how,
            "expertsOnly": test_run.experts_only,
            "results": test_run.results,
            "createdAt": iso(test_run.created_at),
        }

    operation = f"POST /v1/projects/{project}/test-runs"
    return answer_once(db, actor, key, operation, body.model_dump(mode="json", exclude_unset=True), work)
