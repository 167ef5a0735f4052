"""What the experiments' HTTP tests share: a dataset with datapoints, experiments of it, results recorded
over /v2, and the reviews surface's error body read with its status."""

from __future__ import annotations

from typing import Any

from tests.conftest import Harness

EXPERIMENTS = "/v2/experiments"
RATING = {"key": "rating", "display_name": "Rating", "type": "categorical", "options": ["good", "bad"]}
SCORE = {"key": "score", "display_name": "Score", "type": "range", "min": 0, "max": 10}
NOTE = {"key": "note", "display_name": "Note", "type": "text"}
# A model call that names its usage and cost, as tracers put them in a span's attributes.
LLM_SPAN = {
    "span_id": "llm",
    "kind": "chat_completion",
    "name": "answer",
    "attributes": {"usage": {"prompt_tokens": 12, "completion_tokens": 5}, "cost": 0.25},
    "started_at": "2026-11-01T10:00:00Z",
    "ended_at": "2026-11-01T10:00:01Z",
}


def ok(answer: Any, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json() if status != 204 else None


def error(answer: Any, status: int) -> str:
    """The sentence of a /v2 refusal, checking its status and the body's shape."""
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["code"] == status
    message: str = body["message"]
    return message


def dataset(harness: Harness, count: int, headers: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """A dataset of `count` datapoints (inputs {"n": n}, expected "answer n"), and their ids in order."""
    made = ok(harness.client.post("/v2/datasets", json={"display_name": "Capitals"}, headers=harness.admin))
    points = [{"inputs": {"n": n}, "expected_output": f"answer {n}"} for n in range(count)]
    added = ok(
        harness.client.post(
            f"/v2/datasets/{made['_id']}/datapoints/bulk", json={"items": points}, headers=harness.admin
        )
    )
    return made["_id"], [point["_id"] for point in added]


def experiment(harness: Harness, dataset_id: str, name: str = "v1", **fields: Any) -> dict[str, Any]:
    body = {"display_name": name, "dataset_id": dataset_id, "agent": "support", "version": name, **fields}
    made: dict[str, Any] = ok(harness.client.post(EXPERIMENTS, json=body, headers=harness.admin))
    return made


def inline(datapoint_id: str, output: Any, **fields: Any) -> dict[str, Any]:
    """A result bringing its run inline."""
    return {"datapoint_id": datapoint_id, "run": {"output": output}, **fields}


def record(harness: Harness, experiment_id: str, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    answer = ok(
        harness.client.post(
            f"{EXPERIMENTS}/{experiment_id}/results", json={"results": results}, headers=harness.admin
        )
    )
    assert answer["object"] == "list"
    assert answer["has_more"] is False
    made: list[dict[str, Any]] = answer["data"]
    return made


def define(harness: Harness, *definitions: dict[str, Any]) -> dict[str, str]:
    """Human reviews of the harness's project, their ids by key."""
    ids = {}
    for definition in definitions:
        made = ok(harness.client.post("/v2/human-reviews", json=definition, headers=harness.admin))
        ids[made["key"]] = made["_id"]
    return ids


def evaluation(evaluator: str, value: Any, output_type: str = "boolean") -> dict[str, Any]:
    return {"evaluator": evaluator, "output_type": output_type, "value": value}


def workspace(harness: Harness) -> str:
    """The workspace id a not-found sentence names."""
    found: str = ok(harness.client.get("/v1/me", headers=harness.admin))["workspaceId"]
    return found
