"""What the agreement between corrector groups is computed from, counted by the store: one grouped
statement over the live corrections of the runs some queue rules queued (`group_agreement.py` puts the
figures together).

A group's verdict on a run is its members' majority: each live correction (`COUNTED`) made under the
group says right (`marked_right`: it found nothing wrong) or wrong, and the group says what more of them
said. That is the group's weighted majority as a rule's results weigh corrections, since every
correction of one group weighs the group's weight. A tie says nothing for that group on that run.
Corrections made under no group are one more voice, "no group", as the results list them.

The statement goes from each group's verdict on each run, to each run's verdicts as one JSON array of
`"<group>:<verdict>"` (runs with verdicts of two groups or more), to how many runs of each rule had
each combination: what comes back is a few rows per rule, never a run each. Each run's verdicts are
formed once, whichever rules queued it, and then counted under each of them.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import orjson
from sqlalchemy import ColumnElement, String, and_, case, cast, func, literal, select
from sqlalchemy.orm import Session

from redline.corrections.models import COUNTED, Correction
from redline.db import in_chunks
from redline.db.json_values import json_texts_array
from redline.queues.models import ExpertItemRule

RIGHT, WRONG = "right", "wrong"


@dataclass(frozen=True)
class GroupsSaid:
    """How many of a rule's runs had exactly these groups giving these verdicts (None: no group)."""

    rule_id: uuid.UUID
    said: list[tuple[uuid.UUID | None, str]]
    runs: int


def _queued(rule_ids: Sequence[uuid.UUID], since_day: str | None) -> ColumnElement[bool]:
    """A run these rules queued, from `since_day` when given, as the results count them."""
    queued = ExpertItemRule.rule_id.in_(rule_ids)
    return queued if since_day is None else and_(queued, ExpertItemRule.day >= since_day)


def _verdict(right: ColumnElement[int], counted: ColumnElement[int]) -> ColumnElement[str]:
    """A group's verdict as JSON text, `"<group id or nothing>:right"`: ids need no escaping."""
    group = func.coalesce(cast(Correction.corrector_group_id, String), "")
    said = case((right * 2 > counted, literal(RIGHT)), else_=literal(WRONG))
    return literal('"') + group + ":" + said + '"'


def group_verdicts(
    session: Session, rule_ids: Sequence[uuid.UUID], since_day: str | None
) -> list[GroupsSaid]:
    """Per rule, how many of its runs (queued from `since_day` when given) with the verdicts of two
    groups or more had each combination of verdicts; combinations the store listed in other orders
    merged."""
    merged: Counter[tuple[uuid.UUID, tuple[str, ...]]] = Counter()
    for chunk in in_chunks(list(rule_ids)):
        queued = _queued(chunk, since_day)
        right = func.sum(case((Correction.marked_right, 1), else_=0))
        per_group = (
            select(Correction.run_id.label("run_id"), _verdict(right, func.count()).label("verdict"))
            .where(Correction.run_id.in_(select(ExpertItemRule.run_id).where(queued)), COUNTED)
            .group_by(Correction.run_id, Correction.corrector_group_id)
            .having(right * 2 != func.count())
            .subquery("per_group")
        )
        per_run = (
            select(per_group.c.run_id, json_texts_array(per_group.c.verdict).label("said"))
            .group_by(per_group.c.run_id)
            .having(func.count() >= 2)
            .subquery("per_run")
        )
        # Each run's verdicts counted under each rule that queued it, found by the rules' key (run, rule).
        rows = session.execute(
            select(ExpertItemRule.rule_id, per_run.c.said, func.count())
            .select_from(per_run)
            .join(ExpertItemRule, and_(ExpertItemRule.run_id == per_run.c.run_id, queued))
            .group_by(ExpertItemRule.rule_id, per_run.c.said)
        )
        for rule_id, text, runs in rows:
            merged[(rule_id, tuple(sorted(orjson.loads(text))))] += int(runs)
    return [
        GroupsSaid(rule_id, [_read(verdict) for verdict in said], runs)
        for (rule_id, said), runs in merged.items()
    ]


def _read(verdict: str) -> tuple[uuid.UUID | None, str]:
    group, _, said = verdict.rpartition(":")
    return (uuid.UUID(group) if group else None), said
