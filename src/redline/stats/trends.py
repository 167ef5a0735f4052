"""The Trends page: per rule, by its latest version, the weighted share of corrections that marked each
agent version right, with the figures and the sentences that say them.

A rule's results are the input (stats/results.py), so a trend is what `results` says, put in words:

- a version shows from `MIN_CORRECTIONS` corrections; with fewer it says so;
- each shown version has its share, its corrections, the runs they come from and a 95% range
  (stats/confidence.py);
- a comparison only when two versions' ranges are apart;
- the weights in words, for the corrector groups that apply to the project;
- earlier versions of the rule shown apart, never added in, and the runs the cap kept out.
- how far the corrector groups agree on the runs the rule queued in the period, as the job worker last
  computed it for every rule at once (group_agreement_served.py), with its as-of time.

The sentences are built here, once, so the API, the console and the CLI say the same thing.
"""

from __future__ import annotations

import math
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.db import utcnow
from redline.errors import Invalid
from redline.groups import service as groups
from redline.groups.models import CorrectorGroup
from redline.identity.service import Actor, require_project_role
from redline.queues import versions as rule_versions
from redline.queues.models import QueueRule
from redline.queues.tallies import day_of
from redline.stats.confidence import Estimate, estimate
from redline.stats.group_agreement_served import trends_agreements
from redline.stats.results import ResultGroup, result_groups, version_order
from redline.stats.stored_figures import Asking

# The days each period reaches back, today included; "all" has no limit.
PERIODS: dict[str, int | None] = {"all": None, "90d": 90, "30d": 30}
# Fewer corrections than this make a range too wide to say anything.
MIN_CORRECTIONS = 10

EARLIER_NOTE = "Earlier versions of the rule are shown apart, never added in: each is a sample of its own."
NOTHING_YET = "No runs queued by this version of the rule in this period."


@dataclass(frozen=True)
class Line:
    """One agent version under one rule version."""

    agent_version: str
    corrections: int
    runs_corrected: int
    estimate: Estimate | None
    sentence: str

    @property
    def enough(self) -> bool:
        return self.corrections >= MIN_CORRECTIONS and self.estimate is not None


@dataclass(frozen=True)
class Block:
    """What one version of a rule says: a line per agent version, the comparisons and the cap's note."""

    rule_version: int
    lines: list[Line]
    comparisons: list[str]
    skipped_by_cap: int
    cap_note: str | None

    @property
    def sentences(self) -> list[str]:
        """What the page says of the version, in order."""
        lines = [line.sentence for line in self.lines] or [NOTHING_YET]
        return [*lines, *self.comparisons, *([self.cap_note] if self.cap_note else [])]


@dataclass(frozen=True)
class RuleTrend:
    """A rule's latest version, its earlier ones, and how far its corrector groups agree in the period (its
    `agreement` member, served: `group_agreement_served.py`)."""

    rule_id: uuid.UUID
    name: str
    latest: Block
    earlier: list[Block]
    agreement: dict[str, Any]

    @property
    def earlier_note(self) -> str | None:
        return EARLIER_NOTE if self.earlier else None


@dataclass(frozen=True)
class Trends:
    """The trends, and the agreement figures to ask the job worker for (missing or stale), in a write the
    caller opens after this read (`stored_figures.ask_for_figures`); None when none are."""

    project_id: uuid.UUID
    period: str
    since_day: str | None
    weights: list[CorrectorGroup]
    weights_sentence: str
    rules: list[RuleTrend]
    asking: Asking | None


def percent(share: float) -> int:
    """A share as a whole percentage, halves rounded up (not to even)."""
    return math.floor(share * 100 + 0.5)


def version_words(agent_version: str) -> str:
    return agent_version or "no version"


def line_sentence(agent_version: str, corrections: int, runs: int, figures: Estimate | None) -> str:
    """`1.1.0: about 95% marked right, from 12 corrections (12 runs corrected so far); range 64–100%`."""
    name = version_words(agent_version)
    if corrections < MIN_CORRECTIONS:
        return f"{name}: too few corrections to say ({corrections} so far)"
    if figures is None:
        return f"{name}: none of its {corrections} corrections count: their corrector groups weigh nothing"
    runs_words = "1 run corrected" if runs == 1 else f"{runs} runs corrected"
    return (
        f"{name}: about {percent(figures.share)}% marked right, from {corrections} corrections "
        f"({runs_words} so far); range {percent(figures.low)}–{percent(figures.high)}%"
    )


def comparisons(lines: Sequence[Line]) -> list[str]:
    """`1.1.0 is marked right more often than 1.0.0.` for each two shown versions whose ranges are apart;
    overlapping ranges say nothing, since the difference may be chance."""
    shown = [
        (line.agent_version, line.estimate) for line in lines if line.enough and line.estimate is not None
    ]
    said = []
    for index, (first, first_figures) in enumerate(shown):
        for second, second_figures in shown[index + 1 :]:
            if not first_figures.apart_from(second_figures):
                continue
            higher, lower = (first, second) if first_figures.low > second_figures.high else (second, first)
            said.append(f"{version_words(higher)} is marked right more often than {version_words(lower)}.")
    return said


def cap_note(skipped: int) -> str | None:
    if skipped <= 0:
        return None
    runs = "1 matched run wasn't" if skipped == 1 else f"{skipped} matched runs weren't"
    return (
        f"{runs} queued because the rule already had its most open runs waiting, "
        "so the queued ones lean toward quieter times."
    )


def _number(weight: float) -> str:
    """3.0 → "3", 2.5 → "2.5": a weight as people write it, never rounded."""
    return str(weight).removesuffix(".0")


def _article(name: str) -> str:
    """By the name's first letter, as written: "an expert", "a bot"."""
    return "an" if name[:1].lower() in ("a", "e", "i", "o", "u") else "a"


def weights_sentence(applying: Sequence[CorrectorGroup]) -> str:
    """`Weighted by corrector group: An expert's correction counts 3× one with no group; …`."""
    if not applying:
        return "Every correction counts the same: no corrector group applies to this project."
    clauses = []
    for group in applying:
        if group.weight == 1:
            counts = "counts the same as one with no group"
        elif group.weight == 0:
            counts = "doesn't count"
        else:
            counts = f"counts {_number(group.weight)}× one with no group"
        clauses.append(f"{_article(group.name)} {group.name}'s correction {counts}")
    said = "; ".join(clauses)
    return f"Weighted by corrector group: {said[:1].upper()}{said[1:]}."


def block(rule_version: int, results: Sequence[ResultGroup]) -> Block:
    """What one rule version says, from its result groups (one per agent version)."""
    lines = []
    for result in sorted(results, key=lambda result: version_order(result.agent_version)):
        if result.added <= 0:
            continue
        figures = estimate(result.counted)
        lines.append(
            Line(
                agent_version=result.agent_version,
                corrections=result.corrections,
                runs_corrected=result.runs_with_corrections,
                estimate=figures,
                sentence=line_sentence(
                    result.agent_version, result.corrections, result.runs_with_corrections, figures
                ),
            )
        )
    skipped = sum(result.skipped_by_cap for result in results)
    return Block(rule_version, lines, comparisons(lines), skipped, cap_note(skipped))


def since_day(period: str) -> str | None:
    """The first UTC day a period counts: "30d" is today and the 29 days before it."""
    if period not in PERIODS:
        raise Invalid(f'period: "{period}" is not one of {", ".join(PERIODS)}.', details={"field": "period"})
    days = PERIODS[period]
    return None if days is None else day_of(utcnow() - timedelta(days=days - 1))


def _live_rules(session: Session, project_id: uuid.UUID) -> list[QueueRule]:
    """The latest version of each expert-queue rule of the project that isn't removed."""
    return list(
        session.scalars(
            select(QueueRule)
            .where(
                QueueRule.project_id == project_id,
                QueueRule.queue_id.is_(None),
                rule_versions.LIVE,
            )
            .order_by(QueueRule.name, QueueRule.rule_id)
        )
    )


def trends(session: Session, actor: Actor, project_id: uuid.UUID, period: str = "all") -> Trends:
    """The project's trends over `period` (all, 90d or 30d): the runs its rules queued in it, with every
    live correction they have. Only live rules: a removed rule's results stay on its results route."""
    first_day = since_day(period)
    require_project_role(session, actor, project_id, "read")
    rules = _live_rules(session, project_id)
    by_version: dict[uuid.UUID, dict[int, list[ResultGroup]]] = defaultdict(lambda: defaultdict(list))
    rule_ids = [rule.rule_id for rule in rules]
    found = result_groups(session, rule_ids, since_day=first_day)
    agreements = trends_agreements(session, project_id, period, first_day, rule_ids, found)
    for result in found:
        by_version[result.rule_id][result.rule_version].append(result)
    said = []
    for rule in rules:
        versions = by_version[rule.rule_id]
        earlier = [
            block(version, versions[version])
            for version in sorted(versions, reverse=True)
            if version < rule.version
        ]
        said.append(
            RuleTrend(
                rule_id=rule.rule_id,
                name=rule.name,
                latest=block(rule.version, versions.get(rule.version, [])),
                earlier=[version for version in earlier if version.lines or version.skipped_by_cap],
                agreement=agreements.by_rule[rule.rule_id],
            )
        )
    applying = groups.applying_to_project(session, project_id)
    return Trends(
        project_id, period, first_day, applying, weights_sentence(applying), said, agreements.asking
    )
