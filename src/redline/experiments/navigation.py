"""Stepping through an experiment's results on its review screen: "Response 7 of 20 · 12 reviewed", next
(J) and previous (K), in datapoint order (the order the results page and the comparison walk).

The total is the experiment's own counter; the next or previous result is one seek on the index on
(experiment_id, datapoint_id), walking on while a filter turns results down: "only unreviewed" (its run
is not among `reviewed.reviewed_runs`, a set read once per step) and "only where an evaluator failed"
(`evaluator_failed`, a subquery through the index on the run's annotations). The position is a count
over the same index from the start of the experiment to the result. A step walks as many results as the
filter passes over: 1,000 reviewed ones in a row cost a few milliseconds (bench/README.md).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from redline.annotations.models import Annotation
from redline.db import row_exists
from redline.db.json_values import json_number
from redline.experiments.models import Experiment, ExperimentResult
from redline.experiments.results import result_of
from redline.experiments.reviewed import reviewed_counts, reviewed_runs
from redline.identity.service import Actor
from redline.reviews.kinds import EVALUATOR_RESULT

Direction = Literal["current", "next", "previous"]


@dataclass(frozen=True)
class Only:
    """Which results a step lands on: every one, or only those not reviewed yet in the experiment, or
    only those an evaluator failed; both together keep the results that are both."""

    unreviewed: bool = False
    failed: bool = False


# Every result: no filter.
EVERY = Only()


@dataclass(frozen=True)
class Place:
    """Where a reviewer is: the result (None past either end, or in an experiment with none), its 1-based
    position among all the experiment's results, and the experiment's totals."""

    result: ExperimentResult | None
    position: int | None
    total: int
    reviewed: int


def evaluator_failed(result: Any) -> ColumnElement[bool]:
    """Whether an evaluator failed the result (a row of `result`): one of its own boolean results on the
    result's run said false. A number, a category or a text says nothing of failing; a person's
    correction of the result does not change what the evaluator said."""
    return row_exists(
        Annotation.trace_id == result.run_id,
        EVALUATOR_RESULT,
        Annotation.output_type == "boolean",
        json_number(Annotation.value) == 0,
    )


def _conditions(experiment: Experiment, only: Only) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = [ExperimentResult.experiment_id == experiment.id]
    if only.unreviewed:
        conditions.append(ExperimentResult.run_id.not_in(reviewed_runs(experiment.id)))
    if only.failed:
        conditions.append(evaluator_failed(ExperimentResult))
    return conditions


def _neighbour(
    session: Session, experiment: Experiment, datapoint_id: uuid.UUID | None, direction: Direction, only: Only
) -> ExperimentResult | None:
    column = ExperimentResult.datapoint_id
    query = select(ExperimentResult).where(*_conditions(experiment, only))
    if direction == "previous":
        if datapoint_id is not None:
            query = query.where(column < datapoint_id)
        query = query.order_by(column.desc())
    else:
        if datapoint_id is not None:
            query = query.where(column > datapoint_id)
        query = query.order_by(column.asc())
    return session.scalars(query.limit(1)).first()


def place_of(session: Session, experiment: Experiment, result: ExperimentResult | None) -> Place:
    reviewed = reviewed_counts(session, [experiment.id])[experiment.id]
    if result is None:
        return Place(None, None, experiment.results_count, reviewed)
    position = session.scalar(
        select(func.count())
        .select_from(ExperimentResult)
        .where(
            ExperimentResult.experiment_id == experiment.id,
            ExperimentResult.datapoint_id <= result.datapoint_id,
        )
    )
    return Place(result, int(position or 0), experiment.results_count, reviewed)


def step(
    session: Session,
    actor: Actor,
    experiment: Experiment,
    *,
    result_id: uuid.UUID | None = None,
    direction: Direction = "current",
    only: Only = EVERY,
) -> Place:
    """The result a reviewer lands on in the experiment (already read as the caller may: `experiment_for`
    with "read"), with its place.

    From `result_id`, `next` and `previous` go one result along among those `only` keeps; `current` is
    that result itself. Without a result, `current` and `next` start at the first result `only` keeps,
    `previous` at the last. Past either end the result is None and the totals still come back.
    """
    if result_id is None:
        start: Direction = "previous" if direction == "previous" else "next"
        return place_of(session, experiment, _neighbour(session, experiment, None, start, only))
    here = result_of(session, actor, experiment, result_id)
    if direction == "current":
        return place_of(session, experiment, here)
    return place_of(session, experiment, _neighbour(session, experiment, here.datapoint_id, direction, only))
