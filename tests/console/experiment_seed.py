"""Experiments the console's tests share, seeded over /v2 as a harness would (plain HTTP with the admin's
token): the project's human reviews (`queue_seed.DEFINITIONS`: rating, defects, helpfulness, note), a
dataset of five countries and two experiments of it, each result bringing its run inline (system
instructions, the question, a function call and its result, the answer; a model span with its usage and
cost) and two evaluators' results (boolean `exact`, number `length`).

A (capitals-v1, geo-bot 1.0) answers Japan wrong and fails on Peru (a timeout, no evaluator); B
(capitals-v2, geo-bot 2.0) answers every one right. By `exact`, A loses Japan and ties France, Kenya and
Chile (Peru is scored in B only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.console.queue_seed import define_reviews, ok, post_ok

CAPITALS = (
    ("France", "Paris"),
    ("Japan", "Tokyo"),
    ("Peru", "Lima"),
    ("Kenya", "Nairobi"),
    ("Chile", "Santiago"),
)
A_ANSWERS = {"Japan": "Kyoto"}
A_FAILS = "Peru"
SYSTEM = "You answer with the capital city of the country asked about."


@dataclass
class SeededExperiments:
    dataset_id: str
    datapoint_ids: list[str]
    a: str
    b: str
    a_results: list[str]
    b_results: list[str]
    keys: dict[str, str]


def _run(country: str, answer: str, *, failed: bool = False) -> dict[str, Any]:
    """A run as a result sends it inline: the whole interaction and a model span."""
    steps: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"What is the capital of {country}?"},
        {
            "role": "assistant",
            "content": "",
            "tool_name": "lookup_capital",
            "tool_input": {"country": country},
            "tool_call_id": "call_1",
        },
        {
            "role": "tool",
            "content": f'{{"capital": "{answer}"}}',
            "tool_name": "lookup_capital",
            "tool_call_id": "call_1",
        },
    ]
    if not failed:
        steps.append({"role": "assistant", "content": answer})
    span = {
        "span_id": "llm",
        "kind": "chat_completion",
        "name": "answer",
        "attributes": {
            "model": "gpt-4o-mini",
            "usage": {"prompt_tokens": 120, "completion_tokens": 8},
            "cost": 0.0004,
        },
        "started_at": "2026-12-06T10:00:00Z",
        "ended_at": "2026-12-06T10:00:01.250Z",
    }
    return {
        "output": None if failed else answer,
        "status": "failed" if failed else "completed",
        "started_at": "2026-12-06T10:00:00Z",
        "ended_at": "2026-12-06T10:00:01.250Z",
        "steps": steps,
        "spans": [span],
    }


def _result(datapoint_id: str, country: str, answer: str, expected: str, failed: bool) -> dict[str, Any]:
    if failed:
        return {
            "datapoint_id": datapoint_id,
            "run": _run(country, answer, failed=True),
            "error": "TimeoutError: the model took too long",
        }
    return {
        "datapoint_id": datapoint_id,
        "run": _run(country, answer),
        "evaluations": [
            {"evaluator": "exact", "output_type": "boolean", "value": answer == expected},
            {
                "evaluator": "length",
                "output_type": "number",
                "value": len(answer),
                "explanation": "characters",
            },
        ],
    }


def seed_experiments(http: Any, project_id: str) -> SeededExperiments:
    keys = define_reviews(http, project_id)
    dataset = post_ok(http, "/v2/datasets", {"display_name": "Capitals"})
    points = post_ok(
        http,
        f"/v2/datasets/{dataset['_id']}/datapoints/bulk",
        {"items": [{"inputs": {"country": country}, "expected_output": city} for country, city in CAPITALS]},
    )
    point_ids = [point["_id"] for point in points]
    made = {}
    for name, version, answers, fails in (
        ("capitals-v1", "1.0", A_ANSWERS, A_FAILS),
        ("capitals-v2", "2.0", {}, None),
    ):
        experiment = post_ok(
            http,
            "/v2/experiments",
            {"display_name": name, "dataset_id": dataset["_id"], "agent": "geo-bot", "version": version},
        )
        results = [
            _result(point, country, answers.get(country, city), city, country == fails)
            for point, (country, city) in zip(point_ids, CAPITALS, strict=True)
        ]
        recorded = post_ok(http, f"/v2/experiments/{experiment['_id']}/results", {"results": results})["data"]
        made[name] = (experiment["_id"], [result["_id"] for result in recorded])
    (a, a_results), (b, b_results) = made["capitals-v1"], made["capitals-v2"]
    return SeededExperiments(dataset["_id"], point_ids, a, b, a_results, b_results, keys)


def review(http: Any, experiment_id: str, result_id: str, **values: Any) -> dict[str, Any]:
    """Values for the experiment's review keys on a result, as the API's review route saves them."""
    annotations = [{"key": key, "value": value} for key, value in values.items()]
    answer: dict[str, Any] = ok(
        http.post(
            f"/v2/experiments/{experiment_id}/results/{result_id}/annotations",
            json={"annotations": annotations},
        )
    )
    return answer


def result_values(http: Any, experiment_id: str, result_id: str) -> dict[str, tuple[Any, bool]]:
    """The values for human reviews on a result's run: each key's value and whether it was made in the
    experiment, as the API answers them."""
    found = ok(http.get(f"/v2/experiments/{experiment_id}/results/{result_id}"))
    return {said["key"]: (said["value"], said["made_in_experiment"]) for said in found["annotations"]}
