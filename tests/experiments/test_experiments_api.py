"""/v2/experiments over HTTP on both stores: making, listing, reading with its summary, finishing and
deleting experiments, in the reviews surface's conventions (snake_case, `_id`, `{"message", "code"}`,
id-edged pages), and who may do what."""

from __future__ import annotations

import uuid

from tests.conftest import Harness
from tests.experiments.helpers import (
    EXPERIMENTS,
    LLM_SPAN,
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

EXPERIMENT_FIELDS = {
    "_id",
    "display_name",
    "description",
    "project_id",
    "workspace_id",
    "dataset_id",
    "dataset_version",
    "agent",
    "flow",
    "version",
    "metadata",
    "state",
    "human_review_ids",
    "results_count",
    "errored_count",
    "created_by_id",
    "updated_by_id",
    "created",
    "updated",
    "finished",
}


def test_an_experiment_is_made_of_a_dataset_read_finished_and_deleted(harness: Harness) -> None:
    dataset_id, _ = dataset(harness, 2)
    made = experiment(
        harness,
        dataset_id,
        "refunds-v2",
        description="Shorter prompt",
        metadata={"git_commit": "4f2a9c1", "config": {"temperature": 0.2}},
    )
    assert set(made) == EXPERIMENT_FIELDS
    assert made["display_name"] == "refunds-v2"
    assert (made["agent"], made["flow"], made["version"]) == ("support", None, "refunds-v2")
    assert made["metadata"] == {"git_commit": "4f2a9c1", "config": {"temperature": 0.2}}
    assert (made["project_id"], made["dataset_id"]) == (harness.project_id, dataset_id)
    # The dataset was made (version 0) then given its datapoints (version 1): pinned at 1.
    assert made["dataset_version"] == 1
    assert (made["state"], made["finished"], made["results_count"]) == ("running", None, 0)
    assert made["created_by_id"] == harness.admin_id
    got = ok(harness.client.get(f"{EXPERIMENTS}/{made['_id']}", headers=harness.admin))
    assert {name: got[name] for name in EXPERIMENT_FIELDS} == made
    assert got["summary"]["results_count"] == 0

    finished = ok(harness.client.post(f"{EXPERIMENTS}/{made['_id']}/finish", headers=harness.admin))
    assert finished["state"] == "finished"
    assert finished["finished"] is not None
    again = ok(harness.client.post(f"{EXPERIMENTS}/{made['_id']}/finish", headers=harness.admin))
    assert again["finished"] == finished["finished"]

    assert ok(harness.client.delete(f"{EXPERIMENTS}/{made['_id']}", headers=harness.admin), 204) is None
    gone = harness.client.get(f"{EXPERIMENTS}/{made['_id']}", headers=harness.admin)
    assert error(gone, 404) == (
        f"Experiment with id {made['_id']} for workspace {workspace(harness)} was not found."
    )


def test_results_record_runs_inline_or_by_id_and_copy_the_datapoint(harness: Harness) -> None:
    dataset_id, points = dataset(harness, 3)
    made = experiment(harness, dataset_id)
    existing = ok(
        harness.client.post(
            "/v1/runs",
            json=harness.run(externalId="otel-trace-1", spans=[{"spanId": "s", "name": "s"}]),
            headers=harness.admin,
        ),
        201,
    )
    results = record(
        harness,
        made["_id"],
        [
            inline(points[0], "answer 0", evaluations=[evaluation("exact", True)]),
            {"datapoint_id": points[1], "trace_id": existing["id"], "metrics": {"latency_ms": 1500.0}},
            {"datapoint_id": points[2], "trace_id": "otel-trace-1", "error": "TimeoutError: took too long"},
        ],
    )
    first, second, third = results
    assert first["inputs"] == {"n": 0}
    assert first["expected_output"] == "answer 0"
    assert first["output"] == "answer 0"
    assert first["run_status"] == "completed"
    assert [(e["evaluator"], e["output_type"], e["value"]) for e in first["evaluations"]] == [
        ("exact", "boolean", True)
    ]
    assert second["trace_id"] == existing["id"]
    assert second["metrics"]["latency_ms"] == 1500.0
    assert third["trace_id"] == existing["id"]
    assert third["error"] == "TimeoutError: took too long"

    run = ok(harness.client.get(f"/v1/runs/{first['trace_id']}", headers=harness.admin))
    assert (run["agentName"], run["agentVersion"], run["dryRun"], run["input"]) == (
        "support",
        "v1",
        True,
        {"n": 0},
    )

    counts = ok(harness.client.get(f"{EXPERIMENTS}/{made['_id']}", headers=harness.admin))
    assert (counts["results_count"], counts["errored_count"]) == (3, 1)
    changed = harness.client.patch(
        f"/v2/datasets/{dataset_id}/datapoints/{points[0]}",
        json={"expected_output": "something else"},
        headers=harness.admin,
    )
    assert changed.status_code == 200
    page = ok(harness.client.get(f"{EXPERIMENTS}/{made['_id']}/results", headers=harness.admin))
    assert page["data"][0]["expected_output"] == "answer 0"


def test_figures_come_from_the_run_unless_the_harness_gives_its_own(harness: Harness) -> None:
    dataset_id, points = dataset(harness, 2)
    made = experiment(harness, dataset_id)
    run = {
        "output": "x",
        "started_at": "2026-11-01T10:00:00Z",
        "ended_at": "2026-11-01T10:00:02Z",
        "spans": [LLM_SPAN, {**LLM_SPAN, "span_id": "llm2"}],
    }
    measured, given = record(
        harness,
        made["_id"],
        [
            {"datapoint_id": points[0], "run": run},
            {"datapoint_id": points[1], "run": run | {"external_id": "b"}, "metrics": {"cost": 1.5}},
        ],
    )
    assert measured["metrics"] == {
        "latency_ms": 2000.0,
        "input_tokens": 24,
        "output_tokens": 10,
        "total_tokens": 34,
        "cost": 0.5,
    }
    assert given["metrics"]["cost"] == 1.5
    assert given["metrics"]["input_tokens"] == 24
    summary = ok(harness.client.get(f"{EXPERIMENTS}/{made['_id']}", headers=harness.admin))["summary"]
    assert summary["metrics"]["cost"] == {"count": 2, "mean": 1.0, "total": 2.0, "max": 1.5}
    assert summary["metrics"]["latency_ms"]["mean"] == 2000.0


def test_review_keys_offered_are_chosen_and_a_deleted_key_leaves_its_values(harness: Harness) -> None:
    keys = define(harness, RATING, SCORE)
    dataset_id, points = dataset(harness, 1)
    made = experiment(harness, dataset_id, human_review_ids=[keys["score"], keys["rating"]])
    assert made["human_review_ids"] == [keys["score"], keys["rating"]]
    [result] = record(harness, made["_id"], [inline(points[0], "a")])
    reviewed = ok(
        harness.client.post(
            f"{EXPERIMENTS}/{made['_id']}/results/{result['_id']}/annotations",
            json={"annotations": [{"key": "rating", "value": "good"}, {"key": "score", "value": 7}]},
            headers=harness.admin,
        )
    )
    assert {(a["key"], a["value"], a["made_in_experiment"]) for a in reviewed["annotations"]} == {
        ("rating", "good", True),
        ("score", 7, True),
    }
    assert (
        ok(harness.client.delete(f"/v2/human-reviews/{keys['rating']}", headers=harness.admin), 204) is None
    )
    after = ok(harness.client.get(f"{EXPERIMENTS}/{made['_id']}", headers=harness.admin))
    assert after["human_review_ids"] == [keys["score"]]
    kept = ok(
        harness.client.get(f"{EXPERIMENTS}/{made['_id']}/results/{result['_id']}", headers=harness.admin)
    )
    assert {a["key"] for a in kept["annotations"]} == {"rating", "score"}
    refused = harness.client.post(
        f"{EXPERIMENTS}/{made['_id']}/results/{result['_id']}/annotations",
        json={"annotations": [{"key": "rating", "value": "bad"}]},
        headers=harness.admin,
    )
    assert error(refused, 404) == (
        f'The human review with key "rating" for workspace {workspace(harness)} was not found.'
    )
    assert uuid.UUID(result["_id"])
