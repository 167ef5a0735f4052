"""Judgments on the corrections surface (/v1/judgments), for the kindgi 0.1.10 client: make, list, read
and remove them. Each is a correction with one item (`redline.corrections.judgments`), kept in the one
corrections store; the routes say it as a judgment (`judgments_wire`) and refuse in the judgments era's
words (`judgments_era`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from sqlalchemy.orm import Session

from redline.corrections import judgments
from redline.corrections.service import CorrectionFilters
from redline.db import Database
from redline.db.paging import DEFAULT_LIMIT, MAX_LIMIT
from redline.errors import Invalid
from redline.identity.service import Actor
from redline.queues.expert import correcting
from redline.surfaces.auth import BearerSecret, current_actor, database
from redline.surfaces.corrections.idempotent import IdempotencyKey, answer_once, answer_once_for_bearer
from redline.surfaces.corrections.judgments_era import JudgmentsEraRoute
from redline.surfaces.corrections.judgments_wire import VERDICTS, JudgmentIn, judgment_dict, with_copies
from redline.surfaces.corrections.openapi import CONFLICT_RESPONSES, ERROR_RESPONSES
from redline.surfaces.corrections.wire import page_body, query_id, scope_project
from redline.surfaces.responses import JSONBody
from redline.web.addresses import path_id

router = APIRouter(
    prefix="/v1", tags=["judgments (kindgi 0.1.10)"], responses=ERROR_RESPONSES, route_class=JudgmentsEraRoute
)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]


@router.post(
    "/judgments",
    status_code=201,
    summary="Judge an item of a finished run's output, yes or no: a correction with one item",
    responses=CONFLICT_RESPONSES,
)
def create_judgment(
    body: JudgmentIn, secret: BearerSecret, db: DatabaseDep, key: IdempotencyKey = None
) -> JSONBody:
    def work(session: Session, actor: Actor) -> tuple[int, object]:
        return 201, judgment_dict(correcting.create(session, actor, body.correction()))

    sent = body.model_dump(mode="json", exclude_unset=True)
    return answer_once_for_bearer(db, secret, key, "POST /v1/judgments", sent, work)


@router.get("/judgments", summary="Live judgments (one-item corrections), newest first, a page at a time")
def list_judgments(
    actor: ActorDep,
    db: DatabaseDep,
    run_id: Annotated[str | None, Query(alias="runId")] = None,
    agent_id: Annotated[str | None, Query(alias="agentId")] = None,
    agent_version: Annotated[str | None, Query(alias="agentVersion")] = None,
    flow_id: Annotated[str | None, Query(alias="flowId")] = None,
    verdict: Annotated[str | None, Query(description="yes or no")] = None,
    judge_class_id: Annotated[str | None, Query(alias="judgeClassId")] = None,
    participant_id: Annotated[str | None, Query(alias="participantId")] = None,
    scope_kind: Annotated[str | None, Query(alias="scopeKind", description="tenant or project")] = None,
    scope_id: Annotated[str | None, Query(alias="scopeId", description="The project's id")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> JSONBody:
    if verdict not in (None, *VERDICTS):
        raise Invalid(f'verdict: "{verdict}" is not one of yes, no.', details={"field": "verdict"})
    filters = CorrectionFilters(
        project_id=scope_project(scope_kind, scope_id),
        run_id=query_id(run_id, "runId"),
        agent_id=query_id(agent_id, "agentId"),
        agent_version=agent_version,
        flow_id=query_id(flow_id, "flowId"),
        corrector_group_id=query_id(judge_class_id, "judgeClassId"),
        participant_id=participant_id,
    )
    item_verdict = VERDICTS[verdict] if verdict is not None else None
    with db.read() as session:
        page = judgments.list_judgments(
            session, actor, filters, item_verdict=item_verdict, limit=limit, cursor=cursor
        )
        items = [judgment_dict(correction) for correction in page.items]
    return JSONBody(page_body(page, items))


@router.get("/judgments/{judgmentId}", summary="One judgment, live or not, with copies of its run")
def get_judgment(judgmentId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    with db.read() as session:
        body = with_copies(judgments.get(session, actor, path_id(judgmentId, judgments.KIND)))
    return JSONBody(body)


@router.post(
    "/judgments/{judgmentId}/unregister",
    summary="Remove a judgment (its author, or a project admin): the correction is removed, for good",
    responses=CONFLICT_RESPONSES,
)
def remove_judgment(
    judgmentId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    ident = path_id(judgmentId, judgments.KIND)

    def work(session: Session) -> tuple[int, object]:
        judgments.get(session, actor, ident)  # through this path, only a judgment is removed
        correcting.remove(session, actor, ident)
        return 200, {"judgmentId": str(ident), "unregistered": True}

    return answer_once(db, actor, key, f"POST /v1/judgments/{ident}/unregister", None, work)
