"""The tools that read what corrections say: a queue rule's results, per rule version and agent
version, and a project's trends, with the sentences the console's Trends page says
(docs/results-trends.md)."""

from __future__ import annotations

import uuid
from datetime import date
from typing import Annotated, Literal

from pydantic import Field
from sqlalchemy.orm import Session

from redline.identity import service as identity
from redline.identity.service import Actor
from redline.mcp.arguments import ProjectRef
from redline.mcp.tool import Answered, Arguments, Tool
from redline.queues.expert import rules
from redline.stats import results, trends
from redline.stats.group_agreement_served import rule_agreement
from redline.stats.wire import rule_results_dict, trends_dict


class RuleResults(Arguments):
    project: ProjectRef
    rule_id: Annotated[uuid.UUID, Field(description="The queue rule's id (trends names each live rule).")]
    since: Annotated[
        date | None, Field(description="Only the runs queued on or after this UTC day (YYYY-MM-DD).")
    ] = None


def rule_results(session: Session, actor: Actor, asked: RuleResults) -> Answered:
    project = identity.find_project(session, actor, asked.project).id
    rule = rules.view_dict(rules.get_rule(session, actor, project, asked.rule_id))
    since = asked.since.isoformat() if asked.since else None
    found = results.rule_results(session, actor, project, asked.rule_id, since_day=since)
    agreement = rule_agreement(session, found)
    return Answered({"rule": rule, **rule_results_dict(found, agreement)}, agreement.asking)


RULE_RESULTS = Tool(
    name="rule_results",
    title="Read a queue rule's results",
    description=(
        "A queue rule (what it picks for the expert queue, its sample and cap) and its results: for each "
        "version of the rule and each agent version, how many runs it queued, where they stand (open, "
        "corrected, dismissed, erased, skipped by the cap), the corrections they got by corrector group, "
        "and yesShare, the weighted share of corrections that found nothing wrong. Never pooled across "
        "versions. Then agreement: how far the corrector groups agree on the runs it queued "
        "(Krippendorff's alpha with a 95% range, Cohen's kappa per pair of groups, in sentences), as the "
        "job worker last computed it: state stored with computedAt and stale, or computing (ask again "
        "in a moment)."
    ),
    arguments=RuleResults,
    call=rule_results,
)


class Trends(Arguments):
    project: ProjectRef
    period: Annotated[
        Literal["all", "90d", "30d"], Field(description="The runs queued in this period: all, 90d or 30d.")
    ] = "all"


def project_trends(session: Session, actor: Actor, asked: Trends) -> Answered:
    project = identity.find_project(session, actor, asked.project).id
    found = trends.trends(session, actor, project, asked.period)
    return Answered(trends_dict(found), found.asking)


TRENDS = Tool(
    name="trends",
    title="Read a project's trends",
    description=(
        "Per live queue rule of a project, by its latest version: the weighted share of corrections that "
        "marked each agent version right, with a 95% range, said in sentences (a version shows from "
        "minCorrections corrections; two versions are compared only when their ranges are apart), the "
        "corrector groups' weights, earlier rule versions apart, and how far the corrector groups agree "
        "on each rule's runs (as the job worker last computed it, with state, computedAt and stale). Use "
        "it to tell whether a new agent version does better."
    ),
    arguments=Trends,
    call=project_trends,
)
