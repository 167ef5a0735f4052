"""What an experiment's page says of it as a whole: how many results, how many erred or were reviewed,
its figures, each evaluator's results and each review key's values. Every number is one aggregate query
in the store over the experiment's results (their index) and their runs' annotations (by run), never
the rows loaded into Python.

An evaluator's `mean` is the share of `true` for a boolean one and the mean for a number one (none for
categorical and text ones); a review key's `mean` is the mean of a range key's values.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import distinct, func, select
from sqlalchemy.orm import Session

from redline.annotations.hidden import Hidden
from redline.annotations.models import Annotation
from redline.db.json_values import json_number
from redline.experiments.models import ExperimentAnnotation, ExperimentResult
from redline.experiments.reviewed import reviewed_counts
from redline.experiments.service import ExperimentView, experiment_for, view
from redline.identity.service import Actor
from redline.queues.annotation.blind import hidden_from
from redline.reviews.kinds import EVALUATOR_RESULT, REVIEW_VALUE


@dataclass(frozen=True)
class Figure:
    """One figure over the results that recorded it: how many did, their mean and total, the largest."""

    count: int
    mean: float | None
    total: float | None
    max: float | None


@dataclass(frozen=True)
class EvaluatorSummary:
    evaluator: str
    output_type: str | None
    count: int
    mean: float | None


@dataclass(frozen=True)
class KeySummary:
    """A review key's values on the results' runs: how many, on how many results, how many were made in
    this experiment, and the mean of a range key's."""

    key: str
    count: int
    results: int
    made_here: int
    mean: float | None


@dataclass(frozen=True)
class Summary:
    results_count: int
    errored_count: int
    reviewed_count: int
    figures: dict[str, Figure]
    evaluators: list[EvaluatorSummary]
    reviews: list[KeySummary]


FIGURES = ("latency_ms", "input_tokens", "output_tokens", "total_tokens", "cost")


def _figures(session: Session, experiment_id: uuid.UUID) -> tuple[int, int, dict[str, Figure]]:
    columns = [getattr(ExperimentResult, name) for name in FIGURES]
    row = session.execute(
        select(
            func.count(ExperimentResult.id),
            func.count(ExperimentResult.error),
            *(
                aggregate(column)
                for column in columns
                for aggregate in (func.count, func.avg, func.sum, func.max)
            ),
        ).where(ExperimentResult.experiment_id == experiment_id)
    ).one()
    figures = {}
    for number, name in enumerate(FIGURES):
        count, mean, total, largest = row[2 + 4 * number : 6 + 4 * number]
        figures[name] = Figure(
            count=int(count),
            mean=float(mean) if mean is not None else None,
            total=float(total) if total is not None else None,
            max=float(largest) if largest is not None else None,
        )
    return int(row[0]), int(row[1]), figures


def _evaluators(session: Session, experiment_id: uuid.UUID) -> list[EvaluatorSummary]:
    rows = session.execute(
        select(Annotation.key, Annotation.output_type, func.count(), func.avg(json_number(Annotation.value)))
        .select_from(ExperimentResult)
        .join(Annotation, Annotation.trace_id == ExperimentResult.run_id)
        .where(
            ExperimentResult.experiment_id == experiment_id,
            EVALUATOR_RESULT,
        )
        .group_by(Annotation.key, Annotation.output_type)
        .order_by(Annotation.key, Annotation.output_type)
    )
    return [
        EvaluatorSummary(
            str(key),
            output_type,
            int(count),
            float(mean) if mean is not None and output_type in ("boolean", "number") else None,
        )
        for key, output_type, count, mean in rows
    ]


def _reviews(session: Session, experiment_id: uuid.UUID, hidden: Hidden) -> list[KeySummary]:
    here = (
        select(ExperimentAnnotation.annotation_id)
        .where(ExperimentAnnotation.experiment_id == experiment_id)
        .subquery()
    )
    rows = session.execute(
        select(
            Annotation.key,
            func.count(),
            func.count(distinct(ExperimentResult.id)),
            func.count(here.c.annotation_id),
            func.avg(json_number(Annotation.value)),
        )
        .select_from(ExperimentResult)
        .join(Annotation, Annotation.trace_id == ExperimentResult.run_id)
        .outerjoin(here, here.c.annotation_id == Annotation.id)
        .where(
            ExperimentResult.experiment_id == experiment_id,
            REVIEW_VALUE,
            *hidden.shown(),
        )
        .group_by(Annotation.key)
        .order_by(Annotation.key)
    )
    return [
        KeySummary(str(key), int(count), int(results), int(made), float(mean) if mean is not None else None)
        for key, count, results, made, mean in rows
    ]


def _reviewed(session: Session, experiment_id: uuid.UUID) -> int:
    """Results with at least one annotation made while reviewing the experiment (by their runs)."""
    return reviewed_counts(session, [experiment_id])[experiment_id]


def summary_of(session: Session, experiment_id: uuid.UUID, hidden: Hidden) -> Summary:
    """The experiment's figures; the values `hidden` from the reader (blind review) count in none."""
    results, errored, figures = _figures(session, experiment_id)
    return Summary(
        results_count=results,
        errored_count=errored,
        reviewed_count=_reviewed(session, experiment_id),
        figures=figures,
        evaluators=_evaluators(session, experiment_id),
        reviews=_reviews(session, experiment_id, hidden),
    )


def experiment_summary(
    session: Session, actor: Actor, experiment_id: uuid.UUID | str
) -> tuple[ExperimentView, Summary]:
    """The experiment with its summary; the read role is enough."""
    experiment = experiment_for(session, actor, experiment_id, "read")
    return view(session, experiment), summary_of(session, experiment.id, hidden_from(session, actor))
