"""A queue rule's results: for each version of the rule and each agent version, what it queued, where
those runs stand and what their corrections say, read from the tallies kept on write.

Never pooled: each version of a rule samples its own `when`, so each rule version × agent version is a
group of its own, and nothing here adds one to another.
"""

from __future__ import annotations

import re
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from redline.groups import service as groups
from redline.identity.service import Actor
from redline.queues import tallies
from redline.queues.expert import rules as expert_rules
from redline.stats.confidence import Counted, weighted_share

# A correction made under no group counts once.
NO_GROUP_WEIGHT = 1.0

# Each plain count's measure, and the field of `ResultGroup` it fills.
_COUNTS = {
    **{state: state for state in tallies.STATE_MEASURES},
    tallies.SKIPPED_BY_CAP: "skipped_by_cap",
    tallies.RUNS_WITH_CORRECTIONS: "runs_with_corrections",
}


@dataclass(frozen=True)
class GroupTally:
    """The corrections made under one corrector group (None: under none), and how many marked it right."""

    corrector_group_id: uuid.UUID | None
    weight: float
    corrections: int
    yes: int


@dataclass
class ResultGroup:
    """One rule version × agent version ("" when the runs report none)."""

    rule_id: uuid.UUID
    rule_version: int
    agent_version: str
    added: int = 0
    open: int = 0
    corrected: int = 0
    dismissed: int = 0
    erased: int = 0
    skipped_by_cap: int = 0
    runs_with_corrections: int = 0
    by_group: list[GroupTally] = field(default_factory=list)

    @property
    def corrections(self) -> int:
        return sum(group.corrections for group in self.by_group)

    @property
    def counted(self) -> list[Counted]:
        return [Counted(group.weight, group.corrections, group.yes) for group in self.by_group]

    @property
    def yes_share(self) -> float | None:
        """Σ(weight × yes) / Σ(weight × corrections): per correction, weighted by its group."""
        return weighted_share(self.counted)


@dataclass(frozen=True)
class RuleResults:
    """A rule's result groups; how far its corrector groups agree is served beside them
    (`group_agreement_served.rule_agreement`)."""

    project_id: uuid.UUID
    rule_id: uuid.UUID
    since_day: str | None
    groups: list[ResultGroup]


def version_order(version: str) -> tuple[tuple[int, int | str], ...]:
    """Versions in their natural order (1.9.0 before 1.10.0), "" (no version) first."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", version) if part
    )


def _group_order(tally: GroupTally) -> tuple[bool, str]:
    # Corrections without a group first, then by group id, as the document's example has them.
    return (tally.corrector_group_id is not None, str(tally.corrector_group_id or ""))


def result_groups(
    session: Session, rule_ids: Sequence[uuid.UUID], *, since_day: str | None = None
) -> list[ResultGroup]:
    """The results of these rules, ordered by rule, rule version, then agent version; for the runs
    queued on or after `since_day` (a UTC `YYYY-MM-DD`) when given.

    A summed read of the tallies: a few rows per rule version × agent version × group, however many
    corrections there are.
    """
    found: dict[tuple[uuid.UUID, int, str], ResultGroup] = {}
    by_group: dict[tuple[uuid.UUID, int, str], dict[uuid.UUID | None, list[int]]] = defaultdict(
        lambda: defaultdict(lambda: [0, 0])
    )
    for row in tallies.read(session, rule_ids, since_day=since_day):
        key = (row.rule_id, row.rule_version, row.agent_version)
        result = found.setdefault(key, ResultGroup(row.rule_id, row.rule_version, row.agent_version))
        if row.measure in _COUNTS:
            setattr(result, _COUNTS[row.measure], int(row.count))
        elif row.measure.startswith(tallies.CORRECTIONS):
            by_group[key][tallies.group_of_measure(row.measure)][0] += int(row.count)
        elif row.measure.startswith(tallies.YES):
            by_group[key][tallies.group_of_measure(row.measure)][1] += int(row.count)
    weights = groups.weights(
        session, sorted({group for counts in by_group.values() for group in counts if group is not None})
    )
    for key, counts in by_group.items():
        found[key].by_group = sorted(
            (
                GroupTally(
                    group,
                    NO_GROUP_WEIGHT if group is None else weights.get(group, NO_GROUP_WEIGHT),
                    corrections,
                    yes,
                )
                for group, (corrections, yes) in counts.items()
                # A group whose every correction was replaced or removed has nothing left to say.
                if corrections > 0
            ),
            key=_group_order,
        )
    return sorted(
        found.values(),
        key=lambda result: (str(result.rule_id), result.rule_version, version_order(result.agent_version)),
    )


def rule_results(
    session: Session, actor: Actor, project_id: uuid.UUID, rule_id: uuid.UUID, *, since_day: str | None = None
) -> RuleResults:
    """A rule's results, stopped or not, for anyone who may read its project."""
    expert_rules.get_rule(session, actor, project_id, rule_id)
    return RuleResults(project_id, rule_id, since_day, result_groups(session, [rule_id], since_day=since_day))
