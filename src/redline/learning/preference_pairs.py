"""Preference pairs people state directly (issue 26): an experiment comparison's "A better", "B better"
or "tie" on one datapoint (`experiments/models.py`, `ExperimentPreference`) is a same-context pair of the
two runs, whole traces, their context the datapoint both answer.

Both runs must be among the traces the model learns from, and neither erased. Several people's choices
on the same two runs are summed as ratings are: A counts +1, B −1, a tie 0; the side the sum favours
is chosen, and a sum of zero makes no pair. Each pair records every choice behind it (`preference_ids`)
and who made them (`reviewers`), and a training config's rules (`pair_rules.py`) judge it by how many of
those people chose its way.

Pairs are in the order of their texts' digests, so the same choices on re-imported runs give the same
pairs in the same order.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, aliased

from redline.db import in_chunks
from redline.experiments.models import ExperimentPreference
from redline.learning.contexts import datapoint_context
from redline.learning.pair_rules import NO_RULES, Agreement, PairRules, Removed
from redline.learning.pairing import PREFERENCE
from redline.learning.pairs import Pair, steps_by_trace
from redline.traces.models import Trace
from redline.traces.render import render_trace

SOURCE = "comparison"
_VOTE = {"a": 1, "b": -1, "tie": 0}


@dataclass
class _Choices:
    """Every person's choice between two runs on one datapoint."""

    datapoint_id: uuid.UUID
    experiment_ids: list[str | None]
    sum: int = 0
    ids: list[str] = field(default_factory=list)
    reviewers: list[dict[str, str | None]] = field(default_factory=list)
    votes: list[int] = field(default_factory=list)

    def agreement(self) -> Agreement:
        way = 1 if self.sum > 0 else -1
        return Agreement(len(self.votes), sum(1 for vote in self.votes if vote == way))


def _choices(session: Session, trace_ids: Sequence[uuid.UUID]) -> dict[tuple[uuid.UUID, uuid.UUID], _Choices]:
    """The choices on pairs of the given, unerased runs, oldest first, per (run A, run B)."""
    asked = set(trace_ids)
    run_a, run_b = aliased(Trace), aliased(Trace)
    query = (
        select(ExperimentPreference)
        .join(run_a, run_a.id == ExperimentPreference.run_a_id)
        .join(run_b, run_b.id == ExperimentPreference.run_b_id)
        .where(run_a.erased_at.is_(None), run_b.erased_at.is_(None))
    )
    rows: list[ExperimentPreference] = []
    for chunk in in_chunks(sorted(asked)):
        rows.extend(session.scalars(query.where(ExperimentPreference.run_a_id.in_(chunk))))
    rows = [row for row in rows if row.run_b_id in asked]
    rows.sort(key=lambda row: (row.created_at, row.id.int))
    found: dict[tuple[uuid.UUID, uuid.UUID], _Choices] = {}
    for row in rows:
        experiments = [None if e is None else str(e) for e in (row.experiment_a_id, row.experiment_b_id)]
        choices = found.setdefault((row.run_a_id, row.run_b_id), _Choices(row.datapoint_id, experiments))
        choices.sum += _VOTE[row.choice]
        choices.votes.append(_VOTE[row.choice])
        choices.ids.append(str(row.id))
        choices.reviewers.append(
            {"id": None if row.principal_id is None else str(row.principal_id), "name": row.author_name}
        )
    return found


def preference_pairs(
    session: Session,
    trace_ids: Sequence[uuid.UUID],
    limit: int,
    rules: PairRules = NO_RULES,
    removed: Removed | None = None,
) -> list[Pair]:
    """The pairs the choices between the given traces make (module doc), at most `limit`, of those `rules`
    keep; what each rule removed is added to `removed`."""
    kept: list[tuple[uuid.UUID, uuid.UUID, _Choices]] = []
    for (run_a, run_b), choices in _choices(session, trace_ids).items():
        if choices.sum == 0:
            continue
        rule = rules.first_removing((choices.agreement(),))
        if rule is not None:
            if removed is not None:
                removed[rule] += 1
            continue
        better, worse = (run_a, run_b) if choices.sum > 0 else (run_b, run_a)
        kept.append((better, worse, choices))
    steps = steps_by_trace(session, {run for better, worse, _ in kept for run in (better, worse)})
    texts = {run: render_trace(rows) for run, rows in steps.items()}
    kept.sort(key=lambda pick: (_digest(texts[pick[0]]), _digest(texts[pick[1]])))
    return [_pair(better, worse, choices, texts) for better, worse, choices in kept[: max(limit, 0)]]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _pair(better: uuid.UUID, worse: uuid.UUID, choices: _Choices, texts: dict[uuid.UUID, str]) -> Pair:
    source_ids: dict[str, Any] = {
        "preference_ids": choices.ids,
        "reviewers": choices.reviewers,
        "experiment_ids": choices.experiment_ids,
        "datapoint_id": str(choices.datapoint_id),
        "chosen": {"trace_id": str(better)},
        "rejected": {"trace_id": str(worse)},
    }
    return Pair(
        granularity="trace",
        chosen=texts[better],
        rejected=texts[worse],
        source=SOURCE,
        source_ids=source_ids,
        kind=PREFERENCE,
        context_id=datapoint_context(choices.datapoint_id),
    )
