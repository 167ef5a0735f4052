"""Queue rules on the corrections surface (/v1/projects/{projectId}/queue-rules): make, list, read and
change them (each change a new version), their versions, stopping one, and trying one on recent runs
(`preview`) or queueing its recent matches (`queue-recent`). A rule's results are in results.py."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import AwareDatetime
from sqlalchemy.orm import Session

from redline.db import Database
from redline.db.paging import DEFAULT_LIMIT, MAX_LIMIT
from redline.identity.service import Actor
from redline.queues.expert import rules as expert_rules
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.idempotent import IdempotencyKey, answer_once
from redline.surfaces.corrections.openapi import CONFLICT_RESPONSES, ERROR_RESPONSES
from redline.surfaces.corrections.wire import page_body, project_id, query_id, query_list, rule_path
from redline.surfaces.responses import JSONBody
from redline.traces.schemas import StrictWireModel

router = APIRouter(prefix="/v1", tags=["queue rules"], responses=ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]

RULES = "/projects/{projectId}/queue-rules"


class QueueRuleIn(StrictWireModel):
    """A new rule. The service checks the values, with the sentences the CLI gives too."""

    name: str
    when: dict[str, Any] | None = None
    sample: float | None = None
    max_open: int | None = None
    corrector_group_id: uuid.UUID | None = None
    # Redline's addition: how many distinct correctors' corrections the rule wants (1 to 20, default 1).
    correctors_wanted: int | None = None
    enabled: bool | None = None


class QueueRuleChange(StrictWireModel):
    """A new version: only the fields sent change; `maxOpen: null` lifts the cap and
    `correctorGroupId: null` makes any correction do."""

    name: str | None = None
    when: dict[str, Any] | None = None
    sample: float | None = None
    max_open: int | None = None
    corrector_group_id: uuid.UUID | None = None
    correctors_wanted: int | None = None
    enabled: bool | None = None


class QueueRecentIn(StrictWireModel):
    last: int | None = None
    since: AwareDatetime | None = None


def _sent(body: QueueRuleIn | QueueRuleChange) -> dict[str, Any]:
    """The fields the client sent, by the service's names; a null sent on create is as good as absent."""
    fields = {name: getattr(body, name) for name in body.model_fields_set}
    if isinstance(body, QueueRuleIn):
        fields = {name: value for name, value in fields.items() if value is not None}
    return fields


@router.get(RULES, summary="A project's live queue rules (each its newest version), oldest first")
def list_rules(
    projectId: str,  # noqa: N803 - the wire's name
    actor: ActorDep,
    db: DatabaseDep,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> JSONBody:
    project = project_id(projectId)
    with db.read() as session:
        page = expert_rules.list_rules(session, actor, project, limit=limit, cursor=cursor)
        items = [expert_rules.view_dict(view) for view in page.items]
    return JSONBody(page_body(page, items))


@router.post(
    RULES,
    status_code=201,
    summary="Make a queue rule: it picks completed runs for the expert queue as they end",
    responses=CONFLICT_RESPONSES,
)
def create_rule(
    projectId: str,  # noqa: N803
    body: QueueRuleIn,
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    project = project_id(projectId)

    def work(session: Session) -> tuple[int, object]:
        return 201, expert_rules.view_dict(expert_rules.create_rule(session, actor, project, _sent(body)))

    sent = body.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return answer_once(db, actor, key, f"POST /v1/projects/{project}/queue-rules", sent, work)


def preview_ask(
    agent_ids: Annotated[list[str] | None, Query(alias="agentIds", description="Comma-separated")] = None,
    flow_ids: Annotated[list[str] | None, Query(alias="flowIds", description="Comma-separated")] = None,
    versions: Annotated[list[str] | None, Query(description="Comma-separated versions, or `pinned`")] = None,
    status: Annotated[list[str] | None, Query(description="`completed`, the only one taken")] = None,
    include_dry_runs: Annotated[bool | None, Query(alias="includeDryRuns")] = None,
    sample: Annotated[float | None, Query(description="The share of matches, 0 < s ≤ 1")] = None,
    last: Annotated[int, Query(description="How many of the newest runs, up to 500")] = (
        expert_rules.PREVIEW_LAST
    ),
    rule_id: Annotated[
        str | None, Query(alias="ruleId", description="Sample as this rule does (its when, without any)")
    ] = None,
) -> expert_rules.PreviewAsk:
    """The rule a preview tries, from the query: `when`'s fields comma-separated, as in the body."""
    lists = {"agentIds": agent_ids, "flowIds": flow_ids, "versions": versions, "status": status}
    when: dict[str, Any] = {
        name: list(query_list(value)) for name, value in lists.items() if value is not None
    }
    if include_dry_runs is not None:
        when["includeDryRuns"] = include_dry_runs
    return expert_rules.PreviewAsk(
        when=when or None, sample=sample, last=last, rule_id=query_id(rule_id, "ruleId")
    )


PreviewDep = Annotated[expert_rules.PreviewAsk, Depends(preview_ask)]


@router.get(
    f"{RULES}/preview",
    summary="How many of the project's recent runs a rule would have queued (its sample, not its cap)",
)
def preview(projectId: str, actor: ActorDep, db: DatabaseDep, asked: PreviewDep) -> JSONBody:  # noqa: N803
    project = project_id(projectId)
    with db.read() as session:
        found = expert_rules.preview(session, actor, project, asked)
    return JSONBody({"considered": found.considered, "matched": found.matched, "estimate": found.estimate})


@router.get(f"{RULES}/{{ruleId}}", summary="A queue rule's newest version, with the runs it has waiting")
def get_rule(projectId: str, ruleId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    project, rule = rule_path(projectId, ruleId)
    with db.read() as session:
        body = expert_rules.view_dict(expert_rules.get_rule(session, actor, project, rule))
    return JSONBody(body)


@router.patch(
    f"{RULES}/{{ruleId}}",
    summary="Change a queue rule: writes its next version; runs queued from then on count toward it",
    responses=CONFLICT_RESPONSES,
)
def update_rule(
    projectId: str,  # noqa: N803
    ruleId: str,  # noqa: N803
    body: QueueRuleChange,
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    project, rule = rule_path(projectId, ruleId)

    def work(session: Session) -> tuple[int, object]:
        return 200, expert_rules.view_dict(
            expert_rules.update_rule(session, actor, project, rule, _sent(body))
        )

    sent = body.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return answer_once(db, actor, key, f"PATCH /v1/projects/{project}/queue-rules/{rule}", sent, work)


@router.get(
    f"{RULES}/{{ruleId}}/versions",
    summary="Every version of a queue rule, newest first: who wrote it, when, and what it changed",
)
def rule_versions(
    projectId: str,  # noqa: N803
    ruleId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> JSONBody:
    project, rule = rule_path(projectId, ruleId)
    with db.read() as session:
        page = expert_rules.versions(session, actor, project, rule, limit=limit, cursor=cursor)
        items = [expert_rules.version_dict(view) for view in page.items]
    return JSONBody(page_body(page, items))


@router.post(
    f"{RULES}/{{ruleId}}/unregister",
    summary="Stop a queue rule: it queues nothing more; its versions and queued runs stay",
    responses=CONFLICT_RESPONSES,
)
def unregister_rule(
    projectId: str,  # noqa: N803
    ruleId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    project, rule = rule_path(projectId, ruleId)

    def work(session: Session) -> tuple[int, object]:
        expert_rules.unregister(session, actor, project, rule)
        return 200, {"ruleId": str(rule), "unregistered": True}

    return answer_once(
        db, actor, key, f"POST /v1/projects/{project}/queue-rules/{rule}/unregister", None, work
    )


@router.post(
    f"{RULES}/{{ruleId}}/queue-recent",
    summary="Queue a rule's matches among the project's recent runs, sampled as it samples, uncapped",
    responses=CONFLICT_RESPONSES,
)
def queue_recent(
    projectId: str,  # noqa: N803
    ruleId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    body: QueueRecentIn | None = None,
    key: IdempotencyKey = None,
) -> JSONBody:
    project, rule = rule_path(projectId, ruleId)
    asked = body or QueueRecentIn()

    def work(session: Session) -> tuple[int, object]:
        outcome = expert_rules.queue_recent(session, actor, project, rule, last=asked.last, since=asked.since)
        return 200, {
            "queued": outcome.queued,
            "alreadyQueued": outcome.already_queued,
            "alreadyReviewed": outcome.already_reviewed,
        }

    sent = asked.model_dump(mode="json", by_alias=True, exclude_unset=True)
    operation = f"POST /v1/projects/{project}/queue-rules/{rule}/queue-recent"
    return answer_once(db, actor, key, operation, sent, work)
