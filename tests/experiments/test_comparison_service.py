"""The comparison's summary, computed by the store, equals the one computed from the scores themselves,
whatever the datapoints, their scores (booleans or numbers, some missing, some only on one side), the
direction and the page size: checked with hypothesis on both stores, through the services."""

from __future__ import annotations

import math
import statistics
import uuid
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.datasets import service as datasets
from redline.datasets.schemas import DatapointIn, DatasetIn
from redline.db import Database
from redline.experiments import service as experiments
from redline.experiments.schemas import ExperimentIn, ResultIn
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.ingest.experiment_results import record_results
from redline.stats.comparison import Criterion, compare
from redline.stats.paired import t_quantile
from tests.conftest import bootstrap_admin


@dataclass(frozen=True)
class Side:
    """One experiment's result of a datapoint: absent, present without a score, or with one."""

    present: bool
    score: float | None


def _side(kind: str) -> st.SearchStrategy[Side]:
    value = st.booleans() if kind == "boolean" else st.integers(min_value=0, max_value=4).map(float)
    return st.one_of(
        st.just(Side(False, None)),
        st.just(Side(True, None)),
        value.map(lambda score: Side(True, float(score))),
    )


@st.composite
def scenes(draw: st.DrawFn) -> tuple[str, list[tuple[Side, Side]], bool, int]:
    kind = draw(st.sampled_from(["boolean", "number"]))
    pairs = draw(st.lists(st.tuples(_side(kind), _side(kind)), min_size=0, max_size=12))
    return kind, pairs, draw(st.booleans()), draw(st.integers(min_value=1, max_value=5))


def _results(points: list[str], sides: list[Side], kind: str) -> list[ResultIn]:
    made = []
    for point, side in zip(points, sides, strict=True):
        if not side.present:
            continue
        value: object = side.score if kind == "number" else bool(side.score)
        evaluations = (
            [{"evaluator": "judge", "output_type": kind, "value": value}] if side.score is not None else []
        )
        made.append(
            ResultIn.model_validate(
                {"datapoint_id": point, "run": {"output": "x"}, "evaluations": evaluations}
            )
        )
    return made


def _experiment(
    db: Database, actor: Actor, dataset_id: uuid.UUID, name: str, results: list[ResultIn]
) -> uuid.UUID:
    with db.write() as session:
        body = ExperimentIn(display_name=name, dataset_id=str(dataset_id), agent="bot")
        made = experiments.create_experiment(session, actor, body).experiment.id
        if results:
            record_results(session, actor, made, results)
    return made


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scene=scenes())
def test_the_summary_is_the_scores_summed_up(
    db: Database, scene: tuple[str, list[tuple[Side, Side]], bool, int]
) -> None:
    kind, pairs, higher_is_better, limit = scene
    bootstrap_admin(db)
    with db.write() as session:
        actor = identity.operator(session)
        dataset_id = datasets.create_dataset(session, actor, DatasetIn(display_name="d")).dataset.id
        points = [
            str(point.id)
            for point in datasets.create_datapoints(
                session, actor, dataset_id, [DatapointIn(inputs={"n": n}) for n in range(len(pairs))]
            )
        ]
    a = _experiment(db, actor, dataset_id, "a", _results(points, [pair[0] for pair in pairs], kind))
    b = _experiment(db, actor, dataset_id, "b", _results(points, [pair[1] for pair in pairs], kind))

    criterion = Criterion(evaluator="judge", higher_is_better=higher_is_better)
    rows = []
    after: str | None = None
    with db.read() as session:
        while True:
            found = compare(session, actor, a, b, criterion, limit=limit, starting_after=after)
            rows += found.rows
            if not found.has_more:
                break
            after = str(found.rows[-1].datapoint_id)
    summary = found.summary

    both = [(x.score, y.score) for x, y in pairs if x.present and y.present]
    scored = [(x, y) for x, y in both if x is not None and y is not None]
    differences = [x - y for x, y in scored]
    better = sum(d > 0 for d in differences) if higher_is_better else sum(d < 0 for d in differences)
    worse = sum(d < 0 for d in differences) if higher_is_better else sum(d > 0 for d in differences)
    assert (summary.compared, summary.wins, summary.losses, summary.ties) == (
        len(scored),
        better,
        worse,
        len(scored) - better - worse,
    )
    assert summary.in_both == len(both)
    assert summary.only_a == sum(x.present and not y.present for x, y in pairs)
    assert summary.only_b == sum(y.present and not x.present for x, y in pairs)
    assert summary.datapoints == sum(x.present or y.present for x, y in pairs)
    assert [str(row.datapoint_id) for row in rows] == [
        point for point, (x, y) in zip(points, pairs, strict=True) if x.present or y.present
    ]
    marks = [row.mark for row in rows if row.mark is not None]
    assert (marks.count("better"), marks.count("worse"), marks.count("same")) == (
        better,
        worse,
        len(scored) - better - worse,
    )
    if not differences:
        assert summary.difference is None
        return
    assert summary.difference is not None
    assert summary.difference.mean == pytest.approx(statistics.fmean(differences))
    if len(differences) > 1:
        half = (
            t_quantile(0.975, len(differences) - 1)
            * statistics.stdev(differences)
            / math.sqrt(len(differences))
        )
        assert summary.difference.high == pytest.approx(summary.difference.mean + half, abs=1e-9)
    assert summary.mean_a == pytest.approx(statistics.fmean(x for x, _ in scored))
