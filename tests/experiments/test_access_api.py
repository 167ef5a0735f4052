"""Who may do what to an experiment, on every /v2/experiments route on both stores: `read` in its
project reads (results, summary, comparison, preferences), `write` changes; a caller with no role in
the project gets the route's 404 sentence (never a 403 that would confirm the experiment exists), one
with `read` a 403 on a change, and a request without a token a 401."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import Harness
from tests.experiments.helpers import EXPERIMENTS, RATING, dataset, define, error, experiment, inline, record


@dataclass(frozen=True)
class Scene:
    experiment_id: str
    other_id: str
    result_id: str
    datapoint_id: str
    dataset_id: str


def _scene(harness: Harness) -> Scene:
    define(harness, RATING)
    dataset_id, points = dataset(harness, 2)
    a = experiment(harness, dataset_id, "a")["_id"]
    b = experiment(harness, dataset_id, "b")["_id"]
    [result] = record(harness, a, [inline(points[0], "x")])
    record(harness, b, [inline(points[0], "y")])
    return Scene(a, b, result["_id"], points[0], dataset_id)


def _routes(scene: Scene) -> list[tuple[str, str, dict[str, Any] | None, str]]:
    """Every operation: method, path, body and the role it needs."""
    one = f"{EXPERIMENTS}/{scene.experiment_id}"
    pair = f"{one}/compare/{scene.other_id}"
    return [
        ("GET", one, None, "read"),
        ("GET", f"{one}/results", None, "read"),
        ("GET", f"{one}/results/{scene.result_id}", None, "read"),
        ("GET", f"{pair}?evaluator=exact", None, "read"),
        ("GET", f"{pair}/preferences", None, "read"),
        ("POST", f"{one}/results", {"results": [inline(scene.datapoint_id, "z")]}, "write"),
        (
            "POST",
            f"{one}/results/{scene.result_id}/annotations",
            {"annotations": [{"key": "rating", "value": "good"}]},
            "write",
        ),
        ("DELETE", f"{one}/results/{scene.result_id}/annotations", {"keys": ["rating"]}, "write"),
        ("POST", f"{pair}/preferences", {"datapoint_id": scene.datapoint_id, "choice": "a"}, "write"),
        ("POST", f"{one}/finish", None, "write"),
        ("DELETE", one, None, "write"),
    ]


def _call(
    harness: Harness, method: str, path: str, body: dict[str, Any] | None, headers: dict[str, str]
) -> Any:
    return harness.client.request(method, path, json=body, headers=headers)


def test_a_stranger_finds_nothing_and_a_reader_only_reads(harness: Harness) -> None:
    scene = _scene(harness)
    stranger = harness.caller("stranger")
    reader = harness.caller("reader", role="read")
    workspace = harness.client.get("/v1/me", headers=harness.admin).json()["workspaceId"]
    for method, path, body, needed in _routes(scene):
        refused = _call(harness, method, path, body, stranger)
        assert error(refused, 404) == (
            f"Experiment with id {scene.experiment_id} for workspace {workspace} was not found."
        ), (method, path)
        as_reader = _call(harness, method, path, body, reader)
        if needed == "read":
            assert as_reader.status_code == 200, (method, path, as_reader.text)
        else:
            assert error(as_reader, 403) == 'This needs the write role in project "default"; you have read.'
    assert (
        error(harness.client.get(EXPERIMENTS), 401)
        == "Missing bearer token: send Authorization: Bearer <token>."
    )


def test_a_reader_lists_and_a_stranger_lists_none(harness: Harness) -> None:
    scene = _scene(harness)
    reader = harness.caller("reader", role="read")
    stranger = harness.caller("stranger")
    listed = harness.client.get(EXPERIMENTS, headers=reader).json()["data"]
    assert {item["_id"] for item in listed} == {scene.experiment_id, scene.other_id}
    assert harness.client.get(EXPERIMENTS, headers=stranger).json()["data"] == []


@pytest.mark.parametrize("role", [None, "read"])
def test_making_one_takes_writing_the_datasets_project(harness: Harness, role: str | None) -> None:
    dataset_id, _ = dataset(harness, 1)
    caller = harness.caller("someone", role=role)
    body = {"display_name": "x", "dataset_id": dataset_id, "agent": "support"}
    answer = harness.client.post(EXPERIMENTS, json=body, headers=caller)
    if role is None:
        workspace = harness.client.get("/v1/me", headers=harness.admin).json()["workspaceId"]
        assert error(answer, 404) == f"Dataset with id {dataset_id} for workspace {workspace} was not found."
    else:
        assert error(answer, 403) == 'This needs the write role in project "default"; you have read.'
    writer = harness.caller("writer", role="write")
    assert harness.client.post(EXPERIMENTS, json=body, headers=writer).status_code == 200
