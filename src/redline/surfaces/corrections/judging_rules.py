"""Judging rules on the corrections surface (/v1/projects/{projectId}/judging-rules), for the kindgi 0.1.10
client: a judging rule is a queue rule by its earlier name, so each route is the queue-rules route's
(`queue_rules.py`, `results.py`), reading and answering `judgeClassId` and `live` where those say
`correctorGroupId` and `pinned`, and refusing in the judgments era's words (`judgments_era`)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import Field, field_validator

from redline.db import Database
from redline.db.paging import DEFAULT_LIMIT, MAX_LIMIT
from redline.identity.service import Actor
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections import judgments_era as era
from redline.surfaces.corrections import queue_rules, results
from redline.surfaces.corrections.idempotent import IdempotencyKey
from redline.surfaces.corrections.judgments_era import JudgmentsEraRoute, reworded
from redline.surfaces.corrections.openapi import CONFLICT_RESPONSES, ERROR_RESPONSES
from redline.surfaces.corrections.queue_rules import QueueRuleChange, QueueRuleIn
from redline.surfaces.responses import JSONBody

router = APIRouter(
    prefix="/v1",
    tags=["judging rules (kindgi 0.1.10)"],
    responses=ERROR_RESPONSES,
    route_class=JudgmentsEraRoute,
)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]
Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT)]

RULES = "/projects/{projectId}/judging-rules"
RULE = f"{RULES}/{{ruleId}}"


def _pinned(when: Any) -> Any:
    """`when` as sent, with `live` read as today's `pinned`."""
    if isinstance(when, dict) and isinstance(when.get("versions"), list):
        return {**when, "versions": era.pinned_versions(when["versions"])}
    return when


class JudgingRuleIn(QueueRuleIn):
    """A new rule in the old words: the judge class it wants is `judgeClassId`."""

    corrector_group_id: uuid.UUID | None = Field(None, alias="judgeClassId")
    _live = field_validator("when", mode="before")(_pinned)


class JudgingRuleChange(QueueRuleChange):
    """A new version in the old words; `judgeClassId: null` makes any judgment do."""

    corrector_group_id: uuid.UUID | None = Field(None, alias="judgeClassId")
    _live = field_validator("when", mode="before")(_pinned)


@router.get(RULES, summary="A project's live judging rules (each its newest version), oldest first")
def list_rules(
    projectId: str,  # noqa: N803 - the wire's name
    actor: ActorDep,
    db: DatabaseDep,
    limit: Limit = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> JSONBody:
    return reworded(queue_rules.list_rules(projectId, actor, db, limit, cursor), era.page(era.rule))


@router.post(
    RULES,
    status_code=201,
    summary="Make a judging rule: it queues completed runs for judgment as they end",
    responses=CONFLICT_RESPONSES,
)
def create_rule(
    projectId: str,  # noqa: N803
    body: JudgingRuleIn,
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    return reworded(queue_rules.create_rule(projectId, body, actor, db, key), era.rule)


@router.get(
    f"{RULES}/preview",
    summary="How many of the project's recent runs a rule would have queued (its sample, not its cap)",
)
def preview(projectId: str, actor: ActorDep, db: DatabaseDep, asked: queue_rules.PreviewDep) -> JSONBody:  # noqa: N803
    return queue_rules.preview(projectId, actor, db, replace(asked, when=_pinned(asked.when)))


@router.get(RULE, summary="A judging rule's newest version, with the runs it has waiting")
def get_rule(projectId: str, ruleId: str, actor: ActorDep, db: DatabaseDep) -> JSONBody:  # noqa: N803
    return reworded(queue_rules.get_rule(projectId, ruleId, actor, db), era.rule)


@router.patch(
    RULE,
    summary="Change a judging rule: writes its next version",
    responses=CONFLICT_RESPONSES,
)
def update_rule(
    projectId: str,  # noqa: N803
    ruleId: str,  # noqa: N803
    body: JudgingRuleChange,
    actor: ActorDep,
    db: DatabaseDep,
    key: IdempotencyKey = None,
) -> JSONBody:
    return reworded(queue_rules.update_rule(projectId, ruleId, body, actor, db, key), era.rule)


@router.get(f"{RULE}/versions", summary="Every version of a judging rule, newest first, with what it changed")
def rule_versions(
    projectId: str,  # noqa: N803
    ruleId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    limit: Limit = DEFAULT_LIMIT,
    cursor: str | None = None,
) -> JSONBody:
    answer = queue_rules.rule_versions(projectId, ruleId, actor, db, limit, cursor)
    return reworded(answer, era.page(era.rule_version))


# Its answer, `{ruleId, unregistered}`, is the same in both eras: the queue rules' handler itself.
router.post(
    f"{RULE}/unregister",
    summary="Stop a judging rule: it queues nothing more; its versions and queued runs stay",
    responses=CONFLICT_RESPONSES,
)(queue_rules.unregister_rule)


@router.get(f"{RULE}/results", summary="A judging rule's results: per rule version and agent version")
def rule_results(
    projectId: str,  # noqa: N803
    ruleId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    since: results.Since = None,
) -> JSONBody:
    return reworded(results.rule_results(projectId, ruleId, actor, db, since), era.results)
