"""What corrections mean, on the corrections surface: a queue rule's results
(`GET /v1/projects/{projectId}/queue-rules/{ruleId}/results`) and the Trends page's figures and sentences
(`GET /v1/projects/{projectId}/trends`). docs/results-trends.md describes both answers."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from redline.db import Database
from redline.identity.service import Actor
from redline.queues.tallies import day_of
from redline.stats import results, trends
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.openapi import ERROR_RESPONSES
from redline.surfaces.corrections.wire import project_id, query_time, rule_path
from redline.surfaces.responses import JSONBody

router = APIRouter(prefix="/v1", tags=["results"], responses=ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]


def _since_day(value: str | None) -> str | None:
    """The first UTC day counted: a date (`2026-11-01`) as it is, a time (with its timezone) by its UTC
    day, since runs are counted by the day they were queued."""
    if value is None:
        return None
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        pass
    parsed = query_time(value, "since")  # in UTC, or refused when UTC cannot hold it
    return day_of(parsed) if parsed else None


def _optional(value: Any) -> Any:
    """Group ids and versions as the wire has them: None for "none"."""
    return str(value) if value else None


def result_dict(group: results.ResultGroup) -> dict[str, Any]:
    return {
        "ruleVersion": group.rule_version,
        "agentVersion": _optional(group.agent_version),
        "added": group.added,
        "open": group.open,
        "corrected": group.corrected,
        "dismissed": group.dismissed,
        "erased": group.erased,
        "skippedByCap": group.skipped_by_cap,
        "corrections": group.corrections,
        "runsWithCorrections": group.runs_with_corrections,
        "yesShare": group.yes_share,
        "byGroup": [
            {
                "correctorGroupId": _optional(tally.corrector_group_id),
                "corrections": tally.corrections,
                "yes": tally.yes,
            }
            for tally in group.by_group
        ],
    }


@router.get(
    "/projects/{projectId}/queue-rules/{ruleId}/results",
    summary="A queue rule's results: per rule version and agent version, never pooled",
)
def rule_results(
    projectId: str,  # noqa: N803
    ruleId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    since: Annotated[
        str | None,
        Query(description="Only the runs queued on or after this UTC day (an ISO 8601 date, or a time)"),
    ] = None,
) -> JSONBody:
    project, rule = rule_path(projectId, ruleId)
    first_day = _since_day(since)
    with db.read() as session:
        found = results.rule_results(session, actor, project, rule, since_day=first_day)
        body: dict[str, Any] = {"ruleId": str(found.rule_id)}
        if found.since_day is not None:
            body["since"] = found.since_day
        body["groups"] = [result_dict(group) for group in found.groups]
    return JSONBody(body)


def _line_dict(line: trends.Line) -> dict[str, Any]:
    figures = line.estimate
    return {
        "agentVersion": _optional(line.agent_version),
        "corrections": line.corrections,
        "runsCorrected": line.runs_corrected,
        "enough": line.enough,
        "share": figures.share if figures else None,
        "range": [figures.low, figures.high] if figures else None,
        "effectiveCorrections": figures.effective_n if figures else None,
        "sentence": line.sentence,
    }


def _block_dict(block: trends.Block) -> dict[str, Any]:
    return {
        "ruleVersion": block.rule_version,
        "lines": [_line_dict(line) for line in block.lines],
        "comparisons": block.comparisons,
        "skippedByCap": block.skipped_by_cap,
        "capNote": block.cap_note,
        "sentences": block.sentences,
    }


def trends_dict(found: trends.Trends) -> dict[str, Any]:
    return {
        "projectId": str(found.project_id),
        "period": found.period,
        "since": found.since_day,
        "minCorrections": trends.MIN_CORRECTIONS,
        "weights": [
            {"correctorGroupId": str(group.id), "name": group.name, "weight": group.weight}
            for group in found.weights
        ],
        "weightsSentence": found.weights_sentence,
        "rules": [
            {
                "ruleId": str(rule.rule_id),
                "name": rule.name,
                "latest": _block_dict(rule.latest),
                "earlier": [_block_dict(block) for block in rule.earlier],
                "earlierNote": rule.earlier_note,
            }
            for rule in found.rules
        ],
    }


@router.get(
    "/projects/{projectId}/trends",
    summary="Per rule, by its latest version, the weighted share marked right of each agent version",
)
def project_trends(
    projectId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    period: Annotated[str, Query(description="all, 90d or 30d: the runs queued in it")] = "all",
) -> JSONBody:
    with db.read() as session:
        found = trends.trends(session, actor, project_id(projectId), period)
        body = trends_dict(found)
    return JSONBody(body)
