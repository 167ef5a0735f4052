"""Two experiments of one dataset side by side, datapoint by datapoint: each datapoint's two results
(outputs, evaluator results, annotations), its score in each by a chosen evaluator or review key, and a
mark saying whether experiment A did better, worse or the same as experiment B there; and over all
datapoints, A's wins, losses and ties with the mean paired difference and its 95% range
(`stats.paired`).

A result's score is the mean, over what its run holds of the chosen thing:

- `evaluator`: that evaluator's own results (corrections aside) of output type boolean (true 1, false 0)
  or number;
- `key` of a range review: the values people gave;
- `key` of a categorical review with `value`: 1 for each value that is (or, multi-valued, holds) that
  option and 0 for any other, so the score is the share of reviews saying it.

Higher is better unless `higher_is_better` is false (a latency-like number, a defect). A datapoint
scores in a comparison only when both results have a score; the others are counted, unmarked. Every
count and sum is one aggregate query over the two experiments' results and their runs' annotations: the
scores are never loaded into Python, only those of a page's datapoints.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, case, func, literal, select
from sqlalchemy.orm import Session, aliased
from sqlalchemy.sql.elements import ColumnElement

from redline.annotations.models import Annotation
from redline.db import parse_id
from redline.db.json_values import json_holds_text, json_number
from redline.errors import Invalid
from redline.experiments.models import Experiment, ExperimentResult
from redline.experiments.results import ResultView, views_of
from redline.experiments.service import comparable
from redline.identity.service import Actor
from redline.queues.annotation.blind import hidden_from
from redline.reviews.kinds import EVALUATOR_RESULT, REVIEW_VALUE
from redline.reviews.service import by_keys, key_not_found
from redline.stats.paired import PairedDifference, paired_difference

BETTER, WORSE, SAME = "better", "worse", "same"
_NUMERIC_RESULTS = ("boolean", "number")


@dataclass(frozen=True)
class Criterion:
    """What decides better and worse: an evaluator, or a review key (with the option that counts, for a
    categorical one); and which way is better."""

    evaluator: str | None = None
    key: str | None = None
    value: str | None = None
    higher_is_better: bool = True


@dataclass(frozen=True)
class ComparisonSummary:
    """Over every datapoint of either experiment: how many each has, how many both, how many scored in
    both, and of those A's wins, losses and ties, the mean scores and the mean paired difference A − B
    with its 95% range."""

    datapoints: int
    in_both: int
    only_a: int
    only_b: int
    compared: int
    wins: int
    losses: int
    ties: int
    mean_a: float | None
    mean_b: float | None
    difference: PairedDifference | None


@dataclass(frozen=True)
class ComparedRow:
    datapoint_id: uuid.UUID
    a: ResultView | None
    b: ResultView | None
    score_a: float | None
    score_b: float | None
    mark: str | None


@dataclass(frozen=True)
class Comparison:
    experiment_a: Experiment
    experiment_b: Experiment
    criterion: Criterion
    summary: ComparisonSummary
    rows: list[ComparedRow]
    has_more: bool


# ------------------------------------------------------------------------------------------- the score


@dataclass(frozen=True)
class _Scoring:
    """Which annotations of a result's run count, and each one's score."""

    conditions: list[ColumnElement[bool]]
    score: ColumnElement[Any]


def _by_evaluator(name: str) -> _Scoring:
    """An evaluator's own results of output type boolean or number."""
    return _Scoring(
        [EVALUATOR_RESULT, Annotation.key == name, Annotation.output_type.in_(_NUMERIC_RESULTS)],
        json_number(Annotation.value),
    )


def _check_evaluator(session: Session, experiments: Sequence[Experiment], name: str) -> None:
    """Refuse an evaluator that can't decide: one whose results on these experiments' runs are all of
    another output type than boolean and number. Asked only when no datapoint scored in both, since a
    score in both says it can."""
    kinds = set(
        session.scalars(
            select(Annotation.output_type)
            .select_from(ExperimentResult)
            .join(Annotation, Annotation.trace_id == ExperimentResult.run_id)
            .where(
                ExperimentResult.experiment_id.in_([experiment.id for experiment in experiments]),
                EVALUATOR_RESULT,
                Annotation.key == name,
            )
            .distinct()
        )
    )
    other = sorted(str(kind) for kind in kinds - set(_NUMERIC_RESULTS))
    if other and not kinds & set(_NUMERIC_RESULTS):
        raise Invalid(
            f'The evaluator "{name}" gives {" and ".join(other)} results: compare by an evaluator that '
            "gives boolean or number results, or by a human review.",
            details={"field": "evaluator"},
        )


def _by_key(session: Session, actor: Actor, experiment: Experiment, criterion: Criterion) -> _Scoring:
    """A review key of the experiment's project: a range one's values, or a categorical one's share of
    the option `value`."""
    key = str(criterion.key)
    definition = by_keys(session, experiment.project_id, [key]).get(key)
    if definition is None:
        raise key_not_found(actor, key)
    # The values blind review hides from the actor count for nobody's score they read.
    conditions: list[ColumnElement[bool]] = [
        REVIEW_VALUE,
        Annotation.key == key,
        *hidden_from(session, actor).shown(),
    ]
    if definition.type == "range":
        if criterion.value is not None:
            raise Invalid(
                f'value: the human review "{key}" is a range; value names an option of a categorical one.',
                details={"field": "value"},
            )
        return _Scoring(conditions, json_number(Annotation.value))
    if definition.type != "categorical":
        raise Invalid(
            f'The human review "{key}" is text: compare by a categorical or range human review, or by an '
            "evaluator.",
            details={"field": "key"},
        )
    options = [option["value"] for option in definition.options or []]
    if criterion.value is None:
        raise Invalid(
            f'The human review "{key}" is categorical: name the option that counts as value '
            f"(one of: {', '.join(options)}).",
            details={"field": "value"},
        )
    if criterion.value not in options:
        raise Invalid(
            f"Invalid value: {criterion.value}. Valid options are: {', '.join(options)}.",
            details={"field": "value"},
        )
    holds = json_holds_text(Annotation.value, literal(criterion.value))
    return _Scoring(conditions, case((holds, 1.0), else_=0.0))


def _scoring(session: Session, actor: Actor, experiment: Experiment, criterion: Criterion) -> _Scoring:
    if (criterion.evaluator is None) == (criterion.key is None):
        raise Invalid(
            "Compare by one thing: evaluator=<name> or key=<human review key>.",
            details={"field": "evaluator"},
        )
    if criterion.evaluator is not None:
        if criterion.value is not None:
            raise Invalid(
                "value: it names an option of a categorical human review, not an evaluator's result.",
                details={"field": "value"},
            )
        return _by_evaluator(criterion.evaluator)
    return _by_key(session, actor, experiment, criterion)


def _score_of(scoring: _Scoring, result: Any) -> Any:
    """The score of one result (a row of `result`, an alias of the results): the mean over its run's
    annotations that count, null when none do. Every annotation that counts has a score: the values were
    checked against their type when saved (`reviews.values`).

    A subquery per result, so both stores read each result's annotations through the index on their run,
    whatever they know of the tables: joining the annotations to the results (and one experiment's
    aggregate to the other's) is what a planner without statistics (a PostgreSQL table not yet analyzed)
    made a loop over every annotation, or every pair of datapoints."""
    return (
        select(func.avg(scoring.score))
        .where(Annotation.trace_id == result.run_id, *scoring.conditions)
        .correlate(result)
        .scalar_subquery()
    )


def _float(value: Any) -> float | None:
    """A score as the store's driver gave it (PostgreSQL's numeric as a Decimal) as a float."""
    return float(value) if value is not None else None


def _mark(score_a: float | None, score_b: float | None, higher_is_better: bool) -> str | None:
    if score_a is None or score_b is None:
        return None
    if score_a == score_b:
        return SAME
    return BETTER if (score_a > score_b) == higher_is_better else WORSE


# --------------------------------------------------------------------------------------------- summary


def _summary(
    session: Session, a: Experiment, b: Experiment, scoring: _Scoring, higher_is_better: bool
) -> ComparisonSummary:
    """One pass over the datapoints both experiments have (each result of A with B's by the unique index
    on experiment and datapoint), each with its two scores: the differences are summed by the store."""
    result_a, result_b = aliased(ExperimentResult), aliased(ExperimentResult)
    paired = (
        select(_score_of(scoring, result_a).label("score_a"), _score_of(scoring, result_b).label("score_b"))
        .select_from(result_a)
        .join(result_b, and_(result_b.experiment_id == b.id, result_b.datapoint_id == result_a.datapoint_id))
        .where(result_a.experiment_id == a.id)
        # Materialized: the sums below name each score several times, and a subquery merged into them
        # ran its run's lookup once for every mention (PostgreSQL took eight times as long).
        .cte("paired")
        .prefix_with("MATERIALIZED")
    )
    # Null unless both have a score: the sums and counts below leave those datapoints out.
    difference = paired.c.score_a - paired.c.score_b
    scored = difference.is_not(None)
    row = session.execute(
        select(
            func.count(),
            func.count(difference),
            func.sum(case((difference > 0, 1), else_=0)),
            func.sum(case((difference < 0, 1), else_=0)),
            func.sum(difference),
            func.sum(difference * difference),
            func.avg(case((scored, paired.c.score_a))),
            func.avg(case((scored, paired.c.score_b))),
        )
    ).one()
    both, compared, higher, lower = (int(value or 0) for value in row[:4])
    return ComparisonSummary(
        datapoints=a.results_count + b.results_count - both,
        in_both=both,
        only_a=a.results_count - both,
        only_b=b.results_count - both,
        compared=compared,
        wins=higher if higher_is_better else lower,
        losses=lower if higher_is_better else higher,
        ties=compared - higher - lower,
        mean_a=_float(row[6]),
        mean_b=_float(row[7]),
        difference=paired_difference(compared, float(row[4] or 0.0), float(row[5] or 0.0)),
    )


# ------------------------------------------------------------------------------------------------ page


def _page_ids(
    session: Session,
    a: Experiment,
    b: Experiment,
    *,
    limit: int,
    starting_after: str | None,
    ending_before: str | None,
) -> tuple[list[uuid.UUID], bool]:
    """The datapoints of a page, in datapoint order, over the datapoints either experiment has: each
    side's next `limit + 1` in its index order, merged; a page's edge is a datapoint's id."""
    if starting_after and ending_before:
        raise Invalid("Give starting_after or ending_before, not both.", details={"field": "ending_before"})
    forward = ending_before is None
    edge_text = starting_after or ending_before
    edge: uuid.UUID | None = None
    if edge_text:
        field = "starting_after" if starting_after else "ending_before"
        edge = parse_id(edge_text)
        known = (
            session.scalar(
                select(ExperimentResult.id)
                .where(
                    ExperimentResult.experiment_id.in_([a.id, b.id]), ExperimentResult.datapoint_id == edge
                )
                .limit(1)
            )
            if edge is not None
            else None
        )
        if known is None:
            raise Invalid(f"{field}: no item has the id {edge_text}.", details={"field": field})
    found: set[uuid.UUID] = set()
    column = ExperimentResult.datapoint_id
    for experiment in (a, b):
        query = select(column).where(ExperimentResult.experiment_id == experiment.id)
        if edge is not None:
            query = query.where(column > edge if forward else column < edge)
        found.update(session.scalars(query.order_by(column if forward else column.desc()).limit(limit + 1)))
    ordered = sorted(found, reverse=not forward)
    page = ordered[:limit]
    return (page if forward else page[::-1]), len(ordered) > limit


def _rows(
    session: Session,
    actor: Actor,
    a: Experiment,
    b: Experiment,
    scoring: _Scoring,
    datapoint_ids: list[uuid.UUID],
    higher_is_better: bool,
) -> list[ComparedRow]:
    results: list[tuple[ExperimentResult, Any]] = [
        (result, score)
        for result, score in session.execute(
            select(ExperimentResult, _score_of(scoring, ExperimentResult)).where(
                ExperimentResult.experiment_id.in_([a.id, b.id]),
                ExperimentResult.datapoint_id.in_(datapoint_ids),
            )
        )
    ]
    sides: list[dict[uuid.UUID, tuple[ResultView, float | None]]] = []
    for experiment in (a, b):
        mine = [(result, score) for result, score in results if result.experiment_id == experiment.id]
        views = views_of(session, actor, experiment, [result for result, _ in mine])
        sides.append(
            {
                view.result.datapoint_id: (view, _float(score))
                for view, (_, score) in zip(views, mine, strict=True)
            }
        )
    rows = []
    for datapoint_id in datapoint_ids:
        view_a, score_a = sides[0].get(datapoint_id, (None, None))
        view_b, score_b = sides[1].get(datapoint_id, (None, None))
        rows.append(
            ComparedRow(
                datapoint_id, view_a, view_b, score_a, score_b, _mark(score_a, score_b, higher_is_better)
            )
        )
    return rows


def compare(
    session: Session,
    actor: Actor,
    experiment_id: uuid.UUID | str,
    other_id: uuid.UUID | str,
    criterion: Criterion,
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
) -> Comparison:
    """Experiment A (`experiment_id`) against B (`other_id`), of one dataset: the summary over every
    datapoint and a page of datapoints, each with both results, both scores and A's mark. Reading both
    experiments is enough."""
    a, b = comparable(session, actor, experiment_id, other_id, "read")
    scoring = _scoring(session, actor, a, criterion)
    summary = _summary(session, a, b, scoring, criterion.higher_is_better)
    if criterion.evaluator is not None and summary.compared == 0:
        _check_evaluator(session, [a, b], criterion.evaluator)
    page, has_more = _page_ids(
        session, a, b, limit=limit, starting_after=starting_after, ending_before=ending_before
    )
    rows = _rows(session, actor, a, b, scoring, page, criterion.higher_is_better)
    return Comparison(a, b, criterion, summary, rows, has_more)
