"""Corrections › Trends: per rule, by its latest version, the weighted share of people's corrections
that marked each agent version right, over all time or the last 90 or 30 days — `stats.trends`' figures
and sentences as they are, drawn as a server-side SVG chart (`trend_chart`).

Every count opens the counts behind it: `?counts=<rule>` opens that rule's results in the period
(`stats.results`), each rule version × agent version with its queue and, per corrector group, its
corrections and how many marked the answer right; then the agreement between corrector groups on the
rule's runs as a table (`group_agreement`): the rule's figures on trends, the same runs, whose sentences
each rule's card says after the sentence of when the job worker computed them (or that it is computing
them: the page then asks it to, after its read, as the API does).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from fastapi import APIRouter, Request
from starlette.responses import Response

from redline.console.corrections_section import section_page
from redline.console.forms import form_id
from redline.console.group_agreement import AgreementRow, agreement_rows
from redline.console.projects import ProjectChoice
from redline.console.session import SignedIn
from redline.console.trend_chart import Chart, chart
from redline.db import Database
from redline.groups import service as groups
from redline.stats import trends as trend_service
from redline.stats.results import GroupTally, ResultGroup, rule_results
from redline.stats.stored_figures import ask_if_wanted
from redline.stats.trends import RuleTrend

router = APIRouter()
TAB = "trends"
# The address's `period`, and what the page calls it.
PERIODS: tuple[tuple[str, str], ...] = (("all", "All time"), ("90d", "Last 90 days"), ("30d", "Last 30 days"))


@dataclass(frozen=True)
class RuleCounts:
    """The counts behind one rule's trend: its results in the period, with its groups' names, and the
    agreement between its corrector groups."""

    results: list[ResultGroup]
    group_names: dict[uuid.UUID, str]
    agreement: list[AgreementRow]

    def by_group(self, result: ResultGroup) -> list[tuple[str, GroupTally]]:
        """A result's tallies by group name, those under no group first."""
        named = [(self._name(tally.corrector_group_id), tally) for tally in result.by_group]
        return sorted(named, key=lambda pair: (pair[1].corrector_group_id is not None, pair[0]))

    def _name(self, group_id: uuid.UUID | None) -> str:
        if group_id is None:
            return "No group"
        return self.group_names.get(group_id, "a removed group")


@dataclass(frozen=True)
class ShownTrend:
    trend: RuleTrend
    chart: Chart
    counts: RuleCounts | None


def show(request: Request, who: SignedIn, db: Database, choice: ProjectChoice) -> Response:
    period = request.query_params.get("period") or PERIODS[0][0]
    opened = form_id(request.query_params.get("counts"), "counts")
    if choice.project is None:
        return section_page(request, who, TAB, choice, periods=PERIODS, period=period, said=None, shown=[])
    with db.read() as session:
        said = trend_service.trends(session, who.actor, choice.project.id, period)
        shown = []
        for trend in said.rules:
            counts = None
            if trend.rule_id == opened:
                found = rule_results(
                    session, who.actor, choice.project.id, trend.rule_id, since_day=said.since_day
                )
                named = {tally.corrector_group_id for result in found.groups for tally in result.by_group}
                counts = RuleCounts(
                    found.groups,
                    groups.names(session, {group for group in named if group}),
                    agreement_rows(trend.agreement),
                )
            shown.append(ShownTrend(trend, chart(trend.latest.lines), counts))
    ask_if_wanted(db, said.asking)
    return section_page(request, who, TAB, choice, periods=PERIODS, period=period, said=said, shown=shown)
