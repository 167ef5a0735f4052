"""GET /v2/experiments/{id}/compare/{other_id} and the preferences between two experiments' outputs, over
HTTP on both stores: each datapoint's two results and A's mark by an evaluator or a human review, the
summary's wins, losses, ties and paired 95% range, pages, and every refusal with its sentence."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Harness
from tests.experiments.helpers import (
    EXPERIMENTS,
    NOTE,
    RATING,
    SCORE,
    dataset,
    define,
    error,
    evaluation,
    experiment,
    inline,
    ok,
    record,
    workspace,
)


def _compare(harness: Harness, a: str, b: str, **params: Any) -> dict[str, Any]:
    answer: dict[str, Any] = ok(
        harness.client.get(f"{EXPERIMENTS}/{a}/compare/{b}", params=params, headers=harness.admin)
    )
    return answer


def _two(harness: Harness, count: int) -> tuple[str, str, list[str]]:
    dataset_id, points = dataset(harness, count)
    return experiment(harness, dataset_id, "v2")["_id"], experiment(harness, dataset_id, "v1")["_id"], points


def _review(harness: Harness, experiment_id: str, result_id: str, **values: Any) -> None:
    body = {"annotations": [{"key": key, "value": value} for key, value in values.items()]}
    path = f"{EXPERIMENTS}/{experiment_id}/results/{result_id}/annotations"
    ok(harness.client.post(path, json=body, headers=harness.admin))


def test_datapoints_are_marked_by_an_evaluator_and_summed_up(harness: Harness) -> None:
    a, b, points = _two(harness, 5)
    # A against B on datapoints 0-3: right/wrong, wrong/right, right/right, wrong/wrong; 4 only in A.
    marks_a = [True, False, True, False, True]
    marks_b = [False, True, True, False]
    record(
        harness,
        a,
        [
            inline(p, f"a{n}", evaluations=[evaluation("exact", m)])
            for n, (p, m) in enumerate(zip(points, marks_a, strict=True))
        ],
    )
    record(
        harness,
        b,
        [
            inline(p, f"b{n}", evaluations=[evaluation("exact", m)])
            for n, (p, m) in enumerate(zip(points, marks_b, strict=False))
        ],
    )
    compared = _compare(harness, a, b, evaluator="exact")
    assert compared["object"] == "list"
    assert compared["has_more"] is False
    rows = compared["data"]
    assert [row["datapoint_id"] for row in rows] == points
    assert [row["mark"] for row in rows] == ["better", "worse", "same", "same", None]
    first = rows[0]
    assert first["_id"] == points[0]
    assert (first["inputs"], first["expected_output"]) == ({"n": 0}, "answer 0")
    assert (first["a"]["output"], first["a"]["score"], first["b"]["output"], first["b"]["score"]) == (
        "a0",
        1.0,
        "b0",
        0.0,
    )
    assert rows[4]["b"] is None
    summary = compared["summary"]
    assert summary["by"] == {"evaluator": "exact"}
    assert (summary["experiment_a_id"], summary["experiment_b_id"]) == (a, b)
    assert {name: summary[name] for name in ("datapoints", "in_both", "only_a", "only_b", "compared")} == {
        "datapoints": 5,
        "in_both": 4,
        "only_a": 1,
        "only_b": 0,
        "compared": 4,
    }
    assert (summary["wins"], summary["losses"], summary["ties"]) == (1, 1, 2)
    assert (summary["mean_a"], summary["mean_b"]) == (0.5, 0.5)
    difference = summary["difference"]
    # Differences 1, -1, 0, 0: mean 0, s = sqrt(2/3), t(0.975, 3) = 3.182446...
    assert difference["mean"] == 0
    assert difference["high"] == pytest.approx(3.182446305 * (2 / 3) ** 0.5 / 2, abs=1e-6)
    assert difference["low"] == pytest.approx(-difference["high"])
    assert difference["method"] == "paired t interval, 95%"

    turned = _compare(harness, a, b, evaluator="exact", higher_is_better="false")
    assert [row["mark"] for row in turned["data"]] == ["worse", "better", "same", "same", None]
    assert (turned["summary"]["wins"], turned["summary"]["losses"]) == (1, 1)


def test_a_categorical_review_compares_by_the_share_of_an_option(harness: Harness) -> None:
    define(harness, RATING, SCORE, NOTE)
    a, b, points = _two(harness, 2)
    results_a = record(harness, a, [inline(point, "a") for point in points])
    results_b = record(harness, b, [inline(point, "b") for point in points])
    _review(harness, a, results_a[0]["_id"], rating="good", score=8)
    _review(harness, b, results_b[0]["_id"], rating="bad", score=9)
    _review(harness, a, results_a[1]["_id"], rating="bad")
    by_rating = _compare(harness, a, b, key="rating", value="good")
    assert [row["mark"] for row in by_rating["data"]] == ["better", None]
    assert by_rating["summary"]["by"] == {"key": "rating", "value": "good"}
    assert by_rating["summary"]["difference"] == {
        "mean": 1.0,
        "low": None,
        "high": None,
        "method": "paired t interval, 95%",
    }
    by_score = _compare(harness, a, b, key="score")
    assert [row["mark"] for row in by_score["data"]] == ["worse", None]
    assert by_score["data"][0]["a"]["score"] == 8


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "Compare by one thing: evaluator=<name> or key=<human review key>."),
        (
            {"evaluator": "exact", "key": "rating"},
            "Compare by one thing: evaluator=<name> or key=<human review key>.",
        ),
        (
            {"evaluator": "exact", "value": "good"},
            "value: it names an option of a categorical human review, not an evaluator's result.",
        ),
        (
            {"key": "note"},
            'The human review "note" is text: compare by a categorical or range human review, or by an '
            "evaluator.",
        ),
        (
            {"key": "rating"},
            'The human review "rating" is categorical: name the option that counts as value '
            "(one of: good, bad).",
        ),
        ({"key": "rating", "value": "poor"}, "Invalid value: poor. Valid options are: good, bad."),
        (
            {"key": "score", "value": "7"},
            'value: the human review "score" is a range; value names an option of a categorical one.',
        ),
        (
            {"evaluator": "tone"},
            'The evaluator "tone" gives categorical results: compare by an evaluator that gives boolean or '
            "number results, or by a human review.",
        ),
    ],
)
def test_what_decides_is_one_thing_that_can_score(
    harness: Harness, params: dict[str, str], message: str
) -> None:
    define(harness, RATING, SCORE, NOTE)
    a, b, points = _two(harness, 1)
    record(harness, a, [inline(points[0], "a", evaluations=[evaluation("tone", "polite", "categorical")])])
    answer = harness.client.get(f"{EXPERIMENTS}/{a}/compare/{b}", params=params, headers=harness.admin)
    assert error(answer, 400) == message


def test_a_key_the_project_does_not_define_is_not_found(harness: Harness) -> None:
    a, b, _ = _two(harness, 1)
    answer = harness.client.get(
        f"{EXPERIMENTS}/{a}/compare/{b}", params={"key": "tone"}, headers=harness.admin
    )
    assert (
        error(answer, 404)
        == f'The human review with key "tone" for workspace {workspace(harness)} was not found.'
    )


def test_only_experiments_of_one_dataset_compare(harness: Harness) -> None:
    a = experiment(harness, dataset(harness, 1)[0])["_id"]
    b = experiment(harness, dataset(harness, 1)[0])["_id"]
    answer = harness.client.get(
        f"{EXPERIMENTS}/{a}/compare/{b}", params={"evaluator": "x"}, headers=harness.admin
    )
    assert error(answer, 400) == (
        f"Experiments {a} and {b} ran different datasets: only experiments of one dataset compare, "
        "datapoint by datapoint."
    )


def test_the_comparison_pages_by_datapoint_over_both_experiments(harness: Harness) -> None:
    a, b, points = _two(harness, 7)
    record(harness, a, [inline(point, "a") for point in points[:5]])
    record(harness, b, [inline(point, "b") for point in points[2:]])
    seen: list[str] = []
    after: str | None = None
    while True:
        params = {"evaluator": "exact", "limit": 3, **({"starting_after": after} if after else {})}
        page = _compare(harness, a, b, **params)
        seen += [row["_id"] for row in page["data"]]
        assert page["summary"]["datapoints"] == 7
        if not page["has_more"]:
            break
        after = page["data"][-1]["_id"]
    assert seen == points
    before = _compare(harness, a, b, evaluator="exact", limit=2, ending_before=points[4])
    assert [row["_id"] for row in before["data"]] == points[2:4]
    assert before["has_more"] is True
    stray = harness.client.get(
        f"{EXPERIMENTS}/{a}/compare/{b}",
        params={"evaluator": "exact", "starting_after": "nope"},
        headers=harness.admin,
    )
    assert error(stray, 400) == "starting_after: no item has the id nope."


# ------------------------------------------------------------------------------------------ preferences


def test_a_preference_is_one_per_person_per_datapoint_per_pair(harness: Harness) -> None:
    a, b, points = _two(harness, 2)
    results_a = record(harness, a, [inline(point, "a") for point in points])
    results_b = record(harness, b, [inline(point, "b") for point in points])
    path = f"{EXPERIMENTS}/{a}/compare/{b}/preferences"
    made = ok(
        harness.client.post(path, json={"datapoint_id": points[0], "choice": "a"}, headers=harness.admin)
    )
    assert {
        name: made[name]
        for name in ("experiment_a_id", "experiment_b_id", "trace_a_id", "trace_b_id", "choice")
    } == {
        "experiment_a_id": a,
        "experiment_b_id": b,
        "trace_a_id": results_a[0]["trace_id"],
        "trace_b_id": results_b[0]["trace_id"],
        "choice": "a",
    }
    assert (made["author_id"], made["author_name"], made["project_id"]) == (
        harness.admin_id,
        "admin",
        harness.project_id,
    )
    # From the other side of the pair, "a" is B's output: the same record, changed to prefer B.
    turned = ok(
        harness.client.post(
            f"{EXPERIMENTS}/{b}/compare/{a}/preferences",
            json={"datapoint_id": points[0], "choice": "a"},
            headers=harness.admin,
        )
    )
    assert (turned["_id"], turned["experiment_a_id"], turned["choice"]) == (made["_id"], b, "a")
    listed = ok(harness.client.get(path, headers=harness.admin))
    assert [(p["_id"], p["choice"], p["trace_a_id"]) for p in listed["data"]] == [
        (made["_id"], "b", results_a[0]["trace_id"])
    ]
    tie = ok(
        harness.client.post(path, json={"datapoint_id": points[1], "choice": "tie"}, headers=harness.admin)
    )
    assert tie["choice"] == "tie"
    assert len(ok(harness.client.get(path, headers=harness.admin))["data"]) == 2

    # Deleting an experiment keeps the preferences as pairs of runs.
    ok(harness.client.delete(f"{EXPERIMENTS}/{b}", headers=harness.admin), 204)
    assert ok(harness.client.get(f"/v1/runs/{results_a[0]['trace_id']}", headers=harness.admin), 200)


def test_a_preference_needs_a_result_on_both_sides(harness: Harness) -> None:
    a, b, points = _two(harness, 2)
    record(harness, a, [inline(points[0], "a")])
    record(harness, b, [inline(points[1], "b")])
    path = f"{EXPERIMENTS}/{a}/compare/{b}/preferences"
    for datapoint_id, experiment_id in ((points[1], a), (points[0], b)):
        answer = harness.client.post(
            path, json={"datapoint_id": datapoint_id, "choice": "b"}, headers=harness.admin
        )
        assert error(answer, 400) == (
            f"datapoint_id: {datapoint_id} has no result in experiment {experiment_id}; a preference is "
            "between two results of one datapoint."
        )
    itself = harness.client.post(
        f"{EXPERIMENTS}/{a}/compare/{a}/preferences",
        json={"datapoint_id": points[0], "choice": "a"},
        headers=harness.admin,
    )
    assert error(itself, 400) == "A preference is between two experiments: name another one."
    bad = harness.client.post(path, json={"datapoint_id": points[0], "choice": "both"}, headers=harness.admin)
    assert error(bad, 400) == "choice: Input should be 'a', 'b' or 'tie'"
