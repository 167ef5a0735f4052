"""An experiment's results over HTTP on both stores: every refusal of a batch with its sentence, recording a
datapoint again, pages in datapoint order, reviewing a result (one store of annotations: they show on the
trace like any other, and the experiment knows which were made in it), and the summary."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from redline.identity.models import Principal
from redline.identity.service import Actor
from redline.reviews import annotate
from redline.reviews.schemas import ValueIn
from tests.conftest import Harness
from tests.experiments.helpers import (
    EXPERIMENTS,
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


def _post(harness: Harness, experiment_id: str, results: list[dict[str, Any]]) -> Any:
    return harness.client.post(
        f"{EXPERIMENTS}/{experiment_id}/results", json={"results": results}, headers=harness.admin
    )


def test_a_batch_is_refused_whole_with_the_reason(harness: Harness) -> None:
    dataset_id, points = dataset(harness, 2)
    made = experiment(harness, dataset_id)["_id"]
    _, others = dataset(harness, 1)
    ws = workspace(harness)
    cases: list[tuple[list[dict[str, Any]], int, str]] = [
        (
            [inline(points[0], "a"), inline(points[0], "b")],
            400,
            f"results[1].datapoint_id: {points[0]} is also results[0]; send one result for each datapoint.",
        ),
        ([inline(others[0], "a")], 404, f"Datapoint with id {others[0]} for workspace {ws} was not found."),
        ([inline("nope", "a")], 404, f"Datapoint with id nope for workspace {ws} was not found."),
        (
            [{"datapoint_id": points[0], "trace_id": "no-such-run"}],
            404,
            f"Trace with id no-such-run for workspace {ws} was not found.",
        ),
        (
            [{"datapoint_id": points[0]}],
            400,
            "results[0]: a result names its run by trace_id or sends it as run, and not both",
        ),
        (
            [inline(points[0], "a", trace_id="x")],
            400,
            "results[0]: a result names its run by trace_id or sends it as run, and not both",
        ),
        (
            [inline(points[0], "a", evaluations=[evaluation("exact", "yes")])],
            400,
            "results[0].evaluations[0].value: an evaluator with output_type boolean gives true or false.",
        ),
        (
            [inline(points[0], "a", evaluations=[evaluation("exact", True), evaluation("exact", False)])],
            400,
            'results[0].evaluations[1].evaluator: "exact" is named twice; send one result per evaluator.',
        ),
        (
            [
                {
                    "datapoint_id": points[0],
                    "run": {"started_at": "2026-11-02T00:00:00Z", "ended_at": "2026-11-01T00:00:00Z"},
                }
            ],
            400,
            "results[0].run: ended_at is before started_at",
        ),
        (
            [inline(points[0], "a", metrics={"input_tokens": 2**31})],
            400,
            "results[0].metrics.input_tokens: Input should be less than or equal to 2147483647",
        ),
        ([], 400, "results: List should have at least 1 item after validation, not 0"),
    ]
    for results, status, message in cases:
        assert error(_post(harness, made, results), status) == message, results
    too_many = [inline(points[0], "a")] * 1001
    assert error(_post(harness, made, too_many), 400) == (
        "results: List should have at most 1000 items after validation, not 1001"
    )
    assert ok(harness.client.get(f"{EXPERIMENTS}/{made}", headers=harness.admin))["results_count"] == 0
    assert ok(harness.client.get("/v1/runs", headers=harness.admin))["data"] == []


def test_recording_a_datapoint_again_replaces_its_result(harness: Harness) -> None:
    dataset_id, points = dataset(harness, 2)
    made = experiment(harness, dataset_id)["_id"]
    first, _ = record(harness, made, [inline(points[0], "a", error="boom"), inline(points[1], "b")])
    assert ok(harness.client.get(f"{EXPERIMENTS}/{made}", headers=harness.admin))["errored_count"] == 1
    [again] = record(harness, made, [inline(points[0], "fixed", evaluations=[evaluation("exact", True)])])
    assert again["_id"] == first["_id"]
    assert (again["output"], again["error"]) == ("fixed", None)
    assert again["trace_id"] != first["trace_id"]
    counts = ok(harness.client.get(f"{EXPERIMENTS}/{made}", headers=harness.admin))
    assert (counts["results_count"], counts["errored_count"]) == (2, 0)
    # An evaluator recorded again on the same run changes its result in place.
    [third] = record(
        harness,
        made,
        [
            {
                "datapoint_id": points[0],
                "trace_id": again["trace_id"],
                "evaluations": [evaluation("exact", False)],
            }
        ],
    )
    assert [(e["_id"], e["value"]) for e in third["evaluations"]] == [(again["evaluations"][0]["_id"], False)]
    [fourth] = record(
        harness,
        made,
        [
            {
                "datapoint_id": points[0],
                "trace_id": again["trace_id"],
                "evaluations": [evaluation("exact", 0.5, "number")],
            }
        ],
    )
    assert [(e["output_type"], e["value"]) for e in fourth["evaluations"]] == [("number", 0.5)]


def test_a_finished_experiment_takes_no_more_results(harness: Harness) -> None:
    dataset_id, points = dataset(harness, 1)
    made = experiment(harness, dataset_id)["_id"]
    ok(harness.client.post(f"{EXPERIMENTS}/{made}/finish", headers=harness.admin))
    assert error(_post(harness, made, [inline(points[0], "a")]), 409) == (
        f"Experiment {made} is finished: it takes no more results."
    )


def test_results_page_in_datapoint_order(harness: Harness) -> None:
    dataset_id, points = dataset(harness, 5)
    made = experiment(harness, dataset_id)["_id"]
    record(harness, made, [inline(point, n) for n, point in reversed(list(enumerate(points)))])
    path = f"{EXPERIMENTS}/{made}/results"
    first = ok(harness.client.get(path, params={"limit": 2}, headers=harness.admin))
    assert [r["datapoint_id"] for r in first["data"]] == points[:2]
    assert first["has_more"] is True
    rest = ok(
        harness.client.get(
            path, params={"limit": 10, "starting_after": first["data"][-1]["_id"]}, headers=harness.admin
        )
    )
    assert [r["output"] for r in rest["data"]] == [2, 3, 4]
    assert rest["has_more"] is False
    back = ok(
        harness.client.get(
            path, params={"limit": 2, "ending_before": rest["data"][0]["_id"]}, headers=harness.admin
        )
    )
    assert [r["output"] for r in back["data"]] == [0, 1]
    one = ok(harness.client.get(f"{path}/{first['data'][0]['_id']}", headers=harness.admin))
    assert one == first["data"][0]
    missing = harness.client.get(f"{path}/{points[0]}", headers=harness.admin)
    assert (
        error(missing, 404)
        == f"Experiment result with id {points[0]} for workspace {workspace(harness)} was not found."
    )


def test_reviews_are_annotations_of_the_run_and_the_experiment_knows_its_own(harness: Harness) -> None:
    define(harness, RATING, SCORE)
    dataset_id, points = dataset(harness, 2)
    made = experiment(harness, dataset_id)["_id"]
    spans = [{"span_id": "llm", "name": "answer"}]
    results = record(
        harness, made, [{"datapoint_id": p, "run": {"output": "x", "spans": spans}} for p in points]
    )
    trace_id = results[0]["trace_id"]
    path = f"{EXPERIMENTS}/{made}/results/{results[0]['_id']}/annotations"
    reviewed = ok(
        harness.client.post(
            path, json={"annotations": [{"key": "rating", "value": "good"}]}, headers=harness.admin
        )
    )
    on_span = ok(
        harness.client.post(
            path,
            json={"span_id": "llm", "annotations": [{"key": "score", "value": 4}]},
            headers=harness.admin,
        )
    )
    # Said on the trace directly, outside the experiment: it shows on the result, not as made there.
    ok(
        harness.client.post(
            f"/v2/traces/{trace_id}/spans/llm/annotation",
            json={"annotations": [{"key": "rating", "value": "bad"}]},
            headers=harness.admin,
        )
    )
    got = ok(harness.client.get(f"{EXPERIMENTS}/{made}/results/{results[0]['_id']}", headers=harness.admin))
    said = {(a["key"], a["span_id"], a["value"], a["made_in_experiment"]) for a in got["annotations"]}
    assert said == {
        ("rating", None, "good", True),
        ("rating", "llm", "bad", False),
        ("score", "llm", 4, True),
    }
    assert reviewed["annotations"][0]["author_name"] == "admin"
    assert {a["key"] for a in on_span["annotations"]} == {"rating", "score"}
    trace = ok(harness.client.get(f"/v3/traces/{trace_id}", headers=harness.admin))["trace"]
    assert {(a["key"], a["value"]) for a in trace["annotations"]} >= {("rating", "good"), ("score", 4)}

    summary = ok(harness.client.get(f"{EXPERIMENTS}/{made}", headers=harness.admin))["summary"]
    assert summary["reviewed_count"] == 1
    assert summary["reviews"] == [
        {"key": "rating", "count": 2, "results": 1, "made_in_experiment": 1, "mean": None},
        {"key": "score", "count": 1, "results": 1, "made_in_experiment": 1, "mean": 4.0},
    ]

    # Deleting the experiment leaves the runs and what was said about them.
    ok(harness.client.delete(f"{EXPERIMENTS}/{made}", headers=harness.admin), 204)
    after = ok(harness.client.get(f"/v3/traces/{trace_id}", headers=harness.admin))["trace"]
    assert after["annotations"] == trace["annotations"]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (
            {"annotations": [{"parent_annotation_id": "x", "value": False}]},
            400,
            "Correcting an evaluator result is not available in an experiment's review.",
        ),
        (
            {"annotations": [{"key": "rating", "value": "poor"}]},
            400,
            "Invalid value: poor. Valid options are: good, bad.",
        ),
        ({"annotations": []}, 400, "annotations: send at least one annotation."),
    ],
)
def test_a_review_is_refused_with_the_documents_sentence(
    harness: Harness, body: dict[str, Any], status: int, message: str
) -> None:
    define(harness, RATING)
    dataset_id, points = dataset(harness, 1)
    made = experiment(harness, dataset_id)["_id"]
    [result] = record(harness, made, [inline(points[0], "x")])
    answer = harness.client.post(
        f"{EXPERIMENTS}/{made}/results/{result['_id']}/annotations", json=body, headers=harness.admin
    )
    assert error(answer, status) == message


def test_the_summary_sums_evaluators_and_figures(harness: Harness) -> None:
    dataset_id, points = dataset(harness, 4)
    made = experiment(harness, dataset_id)["_id"]
    record(
        harness,
        made,
        [
            inline(
                points[0], "a", evaluations=[evaluation("exact", True), evaluation("score", 0.5, "number")]
            ),
            inline(
                points[1], "b", evaluations=[evaluation("exact", False), evaluation("score", 1, "number")]
            ),
            inline(
                points[2],
                "c",
                evaluations=[evaluation("exact", True), evaluation("tone", "calm", "categorical")],
            ),
            inline(points[3], "d", error="boom"),
        ],
    )
    summary = ok(harness.client.get(f"{EXPERIMENTS}/{made}", headers=harness.admin))["summary"]
    assert summary["evaluations"] == [
        {"evaluator": "exact", "output_type": "boolean", "count": 3, "mean": pytest.approx(2 / 3)},
        {"evaluator": "score", "output_type": "number", "count": 2, "mean": 0.75},
        {"evaluator": "tone", "output_type": "categorical", "count": 1, "mean": None},
    ]
    assert (summary["results_count"], summary["errored_count"], summary["reviewed_count"]) == (4, 1, 0)
    assert summary["metrics"]["input_tokens"] == {"count": 0, "mean": None, "total": None, "max": None}


def test_the_list_filters_by_dataset_agent_and_state(harness: Harness) -> None:
    first, _ = dataset(harness, 1)
    second, _ = dataset(harness, 1)
    one = experiment(harness, first, "one")
    two = experiment(harness, first, "two", agent=None, flow="triage")
    three = experiment(harness, second, "three")
    ok(harness.client.post(f"{EXPERIMENTS}/{three['_id']}/finish", headers=harness.admin))

    def listed(**params: Any) -> list[str]:
        page = ok(harness.client.get(EXPERIMENTS, params=params, headers=harness.admin))
        return [item["display_name"] for item in page["data"]]

    assert listed() == ["three", "two", "one"]
    assert listed(dataset_id=first) == ["two", "one"]
    assert listed(dataset_id="not-an-id") == []
    assert listed(agent="triage") == ["two"]
    assert listed(state="finished") == ["three"]
    assert listed(state="running", agent="support") == ["one"]
    assert listed(project_id=harness.project_id, limit=1) == ["three"]
    page = ok(
        harness.client.get(
            EXPERIMENTS, params={"limit": 1, "starting_after": three["_id"]}, headers=harness.admin
        )
    )
    assert ([item["_id"] for item in page["data"]], page["has_more"]) == ([two["_id"]], True)
    bad = harness.client.get(EXPERIMENTS, params={"state": "done"}, headers=harness.admin)
    assert error(bad, 400) == "state: Input should be 'running' or 'finished'"
    assert one["flow"] is None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"agent": "a", "flow": "f"}, "flow: an experiment runs an agent or a flow, not both."),
        ({"agent": None}, "agent: name the agent (or the flow) the experiment runs."),
        (
            {"human_review_ids": ["nope"]},
            "human_review_ids: nope is not a human review of this experiment's project.",
        ),
        ({"display_name": ""}, "display_name: String should have at least 1 character"),
    ],
)
def test_an_experiment_must_make_sense(harness: Harness, fields: dict[str, Any], message: str) -> None:
    dataset_id, _ = dataset(harness, 1)
    body = {"display_name": "x", "dataset_id": dataset_id, "agent": "support", **fields}
    assert error(harness.client.post(EXPERIMENTS, json=body, headers=harness.admin), 400) == message


def test_an_experiment_outlives_its_dataset_and_its_datapoints(harness: Harness) -> None:
    dataset_id, points = dataset(harness, 2)
    made = experiment(harness, dataset_id)["_id"]
    record(harness, made, [inline(point, "x") for point in points])
    ok(harness.client.delete(f"/v2/datasets/{dataset_id}/datapoints/{points[0]}", headers=harness.admin), 204)
    ok(harness.client.delete(f"/v2/datasets/{dataset_id}", headers=harness.admin), 204)
    kept = ok(harness.client.get(f"{EXPERIMENTS}/{made}/results", headers=harness.admin))["data"]
    assert [(r["datapoint_id"], r["inputs"], r["expected_output"]) for r in kept] == [
        (points[0], {"n": 0}, "answer 0"),
        (points[1], {"n": 1}, "answer 1"),
    ]
    assert ok(harness.client.get(f"{EXPERIMENTS}/{made}", headers=harness.admin))["dataset_id"] == dataset_id
    refused = _post(harness, made, [inline(points[1], "again")])
    assert (
        error(refused, 404)
        == f"Datapoint with id {points[1]} for workspace {workspace(harness)} was not found."
    )


def test_the_runs_metadata_counts_for_a_figure_no_span_gives(harness: Harness) -> None:
    dataset_id, points = dataset(harness, 1)
    made = experiment(harness, dataset_id)["_id"]
    run = {"output": "x", "metadata": {"usage": {"prompt_tokens": 7, "completion_tokens": 2}, "cost": 0.5}}
    [result] = record(harness, made, [{"datapoint_id": points[0], "run": run}])
    assert result["metrics"] == {
        "latency_ms": None,
        "input_tokens": 7,
        "output_tokens": 2,
        "total_tokens": 9,
        "cost": 0.5,
    }


def test_a_result_shows_people_s_corrections_of_its_evaluator_results(harness: Harness) -> None:
    dataset_id, points = dataset(harness, 1)
    made = experiment(harness, dataset_id)["_id"]
    [result] = record(harness, made, [inline(points[0], "x", evaluations=[evaluation("exact", False)])])
    [judged] = result["evaluations"]
    # On the run itself, which the span annotation route can't name: through the service it calls.
    correction = ValueIn(parent_annotation_id=judged["_id"], value=True, explanation="It is right.")
    with harness.db.write() as session:
        actor = Actor.of(session.get_one(Principal, uuid.UUID(harness.admin_id)))
        annotate.save_values(session, actor, result["trace_id"], "", [correction])
    again = ok(harness.client.get(f"{EXPERIMENTS}/{made}/results/{result['_id']}", headers=harness.admin))
    [shown] = again["evaluations"]
    assert [(c["parent_annotation_id"], c["value"], c["explanation"]) for c in shown["corrections"]] == [
        (judged["_id"], True, "It is right.")
    ]
    assert again["annotations"] == []


def test_ids_that_are_none_of_ours_name_nothing(harness: Harness) -> None:
    ws = workspace(harness)
    missing = harness.client.get(f"{EXPERIMENTS}/nope/results", headers=harness.admin)
    assert error(missing, 404) == f"Experiment with id nope for workspace {ws} was not found."
    body = {"display_name": "x", "dataset_id": "nope", "agent": "a"}
    assert error(harness.client.post(EXPERIMENTS, json=body, headers=harness.admin), 404) == (
        f"Dataset with id nope for workspace {ws} was not found."
    )
    dataset_id, points = dataset(harness, 1)
    made = experiment(harness, dataset_id)["_id"]
    spans = [{"span_id": "s", "name": "a"}, {"span_id": "s", "name": "b"}]
    twice = _post(harness, made, [{"datapoint_id": points[0], "run": {"spans": spans}}])
    assert error(twice, 400) == 'results[0].run: span_id "s" appears twice'


def test_a_reviewer_takes_back_values_on_the_run_or_a_span(harness: Harness) -> None:
    define(harness, RATING, SCORE)
    dataset_id, points = dataset(harness, 1)
    made = experiment(harness, dataset_id)["_id"]
    spans = [{"span_id": "llm", "name": "answer"}]
    [result] = record(harness, made, [{"datapoint_id": points[0], "run": {"output": "x", "spans": spans}}])
    path = f"{EXPERIMENTS}/{made}/results/{result['_id']}/annotations"
    values = {"annotations": [{"key": "rating", "value": "good"}, {"key": "score", "value": 3}]}
    ok(harness.client.post(path, json=values, headers=harness.admin))
    ok(harness.client.post(path, json={**values, "span_id": "llm"}, headers=harness.admin))
    on_run = ok(
        harness.client.request("DELETE", path, json={"keys": ["rating", "score"]}, headers=harness.admin)
    )
    assert sorted((a["key"], a["span_id"]) for a in on_run["annotations"]) == [
        ("rating", "llm"),
        ("score", "llm"),
    ]
    on_span = ok(
        harness.client.request(
            "DELETE", path, json={"keys": ["score"], "span_id": "llm"}, headers=harness.admin
        )
    )
    assert [(a["key"], a["span_id"]) for a in on_span["annotations"]] == [("rating", "llm")]
    assert error(harness.client.request("DELETE", path, headers=harness.admin), 400) == (
        'The body is empty: name the keys whose values to take back as {"keys": [...]}.'
    )
    assert error(harness.client.request("DELETE", path, json={"keys": []}, headers=harness.admin), 400) == (
        "Name the keys whose values to remove, or the parent_annotation_ids whose corrections to remove."
    )
