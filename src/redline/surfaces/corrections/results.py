"""What corrections mean, on the corrections surface: a queue rule's results
(`GET /v1/projects/{projectId}/queue-rules/{ruleId}/results`) and the Trends page's figures and sentences
(`GET /v1/projects/{projectId}/trends`). docs/results-trends.md describes both answers. The agreement
between corrector groups in each is the job worker's, read in the request; when it is missing or stale, a
short write after the read asks for it to be computed again."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from redline.db import Database
from redline.identity.service import Actor
from redline.queues.tallies import day_of
from redline.stats import results, trends
from redline.stats.group_agreement_served import rule_agreement
from redline.stats.stored_figures import ask_if_wanted
from redline.stats.wire import rule_results_dict, trends_dict
from redline.surfaces.auth import current_actor, database
from redline.surfaces.corrections.openapi import ERROR_RESPONSES
from redline.surfaces.corrections.wire import project_id, query_time, rule_path
from redline.surfaces.responses import JSONBody

router = APIRouter(prefix="/v1", tags=["results"], responses=ERROR_RESPONSES)

ActorDep = Annotated[Actor, Depends(current_actor)]
DatabaseDep = Annotated[Database, Depends(database)]
Since = Annotated[
    str | None,
    Query(description="Only the runs queued on or after this UTC day (an ISO 8601 date, or a time)"),
]


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


@router.get(
    "/projects/{projectId}/queue-rules/{ruleId}/results",
    summary="A queue rule's results: per rule version and agent version, never pooled",
)
def rule_results(
    projectId: str,  # noqa: N803
    ruleId: str,  # noqa: N803
    actor: ActorDep,
    db: DatabaseDep,
    since: Since = None,
) -> JSONBody:
    project, rule = rule_path(projectId, ruleId)
    first_day = _since_day(since)
    with db.read() as session:
        found = results.rule_results(session, actor, project, rule, since_day=first_day)
        agreement = rule_agreement(session, found)
        body = rule_results_dict(found, agreement)
    ask_if_wanted(db, agreement.asking)
    return JSONBody(body)


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
    ask_if_wanted(db, found.asking)
    return JSONBody(body)
