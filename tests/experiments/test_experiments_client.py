"""Redline's client against a real server over HTTP on both stores: `client.experiments` call by call,
the harness `redline.client.experiments.run` (concurrency, failures, evaluators, progress), and
docs/experiments.md's example run as written with only the host and the token changed."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from redline.client import Client, ConflictError, InvalidRequestError, NotFoundError
from redline.client import experiments as client_experiments
from redline.client.experiments import run
from tests.conftest import ADMIN_TOKEN
from tests.doccommands import python_blocks
from tests.liveserver import LiveServer, live_server

__all__ = ["live_server"]

PAGE = Path(__file__).resolve().parents[2] / "docs" / "experiments.md"


@pytest.fixture
def admin(live_server: LiveServer) -> Iterator[Client]:
    with live_server.client() as client:
        yield client


def _dataset(admin: Client, count: int) -> tuple[str, list[str]]:
    dataset = admin.datasets.create("numbers")
    points = admin.datasets.create_datapoints(
        dataset["_id"], [{"inputs": {"n": n}, "expected_output": str(n * 2)} for n in range(count)]
    )
    return dataset["_id"], [point["_id"] for point in points]


def test_the_docs_example_runs_as_written(live_server: LiveServer, admin: Client) -> None:
    [code] = [
        block.text
        for block in python_blocks(PAGE.read_text())
        if "from redline.client.experiments" in block.text
    ]
    code = code.replace('"http://127.0.0.1:8000"', f'"{live_server.url}"').replace(
        '"rl_…"', f'"{ADMIN_TOKEN}"'
    )
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        exec(compile(code, str(PAGE), "exec"), {"__name__": "__main__"})
    assert printed.getvalue().splitlines() == ["finished 3 1", "{'exact': 0.5, 'length': 5.0}", "1 0 1"]
    by_name = {
        experiment["display_name"]: experiment for experiment in admin.experiments.list(agent="geo-bot")
    }
    assert sorted(by_name) == ["capitals-v1", "capitals-v2"]
    failed = [r for r in admin.experiments.list_results(by_name["capitals-v1"]["_id"]) if r["error"]]
    assert [(r["inputs"], r["error"], r["run_status"]) for r in failed] == [
        ({"country": "Peru"}, "TimeoutError: the model took too long", "failed")
    ]


def test_every_call_of_client_experiments(admin: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset_id, points = _dataset(admin, 3)
    rating = admin.human_reviews.create("rating", "categorical", options=["good", "bad"])
    a = admin.experiments.create(
        "a",
        dataset_id=dataset_id,
        agent="bot",
        version="1",
        metadata={"commit": "abc"},
        human_review_ids=[rating["_id"]],
    )
    b = admin.experiments.create("b", dataset_id=dataset_id, flow="pipeline", description="flow run")
    assert (a["human_review_ids"], b["flow"], b["description"]) == ([rating["_id"]], "pipeline", "flow run")
    # Longer lists go in parts, each a request of its own.
    monkeypatch.setattr(client_experiments, "MAX_RESULTS_PER_CALL", 2)
    made = admin.experiments.add_results(
        a["_id"],
        [
            {
                "datapoint_id": point,
                "run": {"output": str(n * 2)},
                "evaluations": [{"evaluator": "exact", "output_type": "boolean", "value": n != 1}],
            }
            for n, point in enumerate(points)
        ],
    )
    assert [result["datapoint_id"] for result in made] == points
    evaluations = [{"evaluator": "exact", "output_type": "boolean", "value": True}]
    admin.experiments.add_results(
        b["_id"], [{"datapoint_id": points[1], "run": {"output": "2"}, "evaluations": evaluations}]
    )
    assert [r["_id"] for r in admin.experiments.list_results(a["_id"], limit=2)] == [r["_id"] for r in made]
    page = admin.experiments.page_results(a["_id"], limit=2)
    assert (len(page.data), page.next_cursor) == (2, made[1]["_id"])
    assert admin.experiments.get_result(a["_id"], made[0]["_id"])["output"] == "0"
    reviewed = admin.experiments.review(a["_id"], made[0]["_id"], [{"key": "rating", "value": "good"}])
    assert [(x["key"], x["made_in_experiment"]) for x in reviewed["annotations"]] == [("rating", True)]
    assert admin.experiments.take_back(a["_id"], made[2]["_id"], ["rating"])["annotations"] == []

    compared = admin.experiments.compare(a["_id"], b["_id"], evaluator="exact", limit=2)
    assert [row["mark"] for row in compared["data"]] == [None, "worse"]
    assert compared["summary"]["losses"] == 1
    rows = list(
        admin.experiments.compared_datapoints(a["_id"], b["_id"], key="rating", value="good", limit=1)
    )
    assert [row["datapoint_id"] for row in rows] == points
    lower = admin.experiments.compare(a["_id"], b["_id"], evaluator="exact", higher_is_better=False)
    assert lower["summary"]["wins"] == 1

    preference = admin.experiments.prefer(b["_id"], a["_id"], points[1], "b")
    assert (preference["experiment_a_id"], preference["choice"]) == (b["_id"], "b")
    assert [p["choice"] for p in admin.experiments.list_preferences(a["_id"], b["_id"])] == ["a"]

    assert [e["_id"] for e in admin.experiments.list(dataset_id=dataset_id)] == [b["_id"], a["_id"]]
    assert admin.experiments.page(agent="pipeline").data[0]["_id"] == b["_id"]
    assert admin.experiments.finish(a["_id"])["state"] == "finished"
    assert admin.experiments.get(a["_id"])["summary"]["reviewed_count"] == 1
    with pytest.raises(ConflictError, match=f"Experiment {a['_id']} is finished: it takes no more results."):
        admin.experiments.add_results(a["_id"], [{"datapoint_id": points[0], "run": {}}])
    with pytest.raises(InvalidRequestError, match="Compare by one thing"):
        admin.experiments.compare(a["_id"], b["_id"])
    admin.experiments.delete(b["_id"])
    with pytest.raises(NotFoundError) as missing:
        admin.experiments.get(b["_id"])
    assert missing.value.message.startswith(f"Experiment with id {b['_id']} for workspace")


def _double(inputs: dict[str, Any]) -> Any:
    n = inputs["n"]
    if n == 3:
        raise ValueError("three is unlucky")
    if n == 4:
        return datetime(2026, 1, 1, tzinfo=UTC)  # not JSON: recorded as its text
    return str(n * 2)


def _exact(inputs: Any, output: Any, expected: Any) -> tuple[str, bool, str]:
    return "exact", output == expected, "compared as text"


def _tone(inputs: Any, output: Any, expected: Any) -> tuple[str, str, None, str] | None:
    return None if inputs["n"] == 0 else ("tone", "plain", None, "text")


def _fussy(inputs: Any, output: Any, expected: Any) -> tuple[str, float, None]:
    if inputs["n"] == 2:
        raise KeyError("missing")
    return "score", 0.5, None


def test_the_harness_records_every_datapoint_whatever_fails(live_server: LiveServer, admin: Client) -> None:
    dataset_id, points = _dataset(admin, 6)
    shown = io.StringIO()
    finished = run(
        {"_id": dataset_id},
        _double,
        name="doubling",
        agent="doubler",
        version="1",
        evaluators=[_exact, _tone, _fussy],
        concurrency=3,
        client=admin,
        batch_size=2,
        progress=shown,
        metadata={"commit": "abc"},
    )
    assert (finished["state"], finished["metadata"]) == ("finished", {"commit": "abc"})
    assert (finished["results_count"], finished["errored_count"]) == (6, 2)
    results = {r["inputs"]["n"]: r for r in admin.experiments.list_results(finished["_id"], limit=200)}
    assert results[3]["error"] == "ValueError: three is unlucky"
    assert results[3]["run_status"] == "failed"
    assert results[2]["error"] == "evaluator _fussy failed: KeyError: 'missing'"
    assert results[4]["output"] == "2026-01-01 00:00:00+00:00"
    assert {(e["evaluator"], e["output_type"], e["value"]) for e in results[1]["evaluations"]} == {
        ("exact", "boolean", True),
        ("tone", "text", "plain"),
        ("score", "number", 0.5),
    }
    assert [e["evaluator"] for e in results[0]["evaluations"]] == ["exact", "score"]
    assert results[0]["metrics"]["latency_ms"] is not None
    lines = shown.getvalue().splitlines()
    assert lines[-1] == "doubling: 6/6 datapoints, 2 errored"
    assert len(lines) == 6
    assert [d["_id"] for d in admin.datasets.list_datapoints(dataset_id)] == points[::-1]


def test_the_harness_takes_its_server_from_the_environment(
    live_server: LiveServer, admin: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset_id, _ = _dataset(admin, 2)
    monkeypatch.setenv("REDLINE_URL", live_server.url)
    monkeypatch.setenv("REDLINE_TOKEN", ADMIN_TOKEN)
    finished = run(dataset_id, lambda inputs: str(inputs["n"] * 2), name="env", agent="a", progress=False)
    assert (finished["results_count"], finished["errored_count"]) == (2, 0)
    with pytest.raises(ValueError, match="concurrency is 1 or more"):
        run(dataset_id, str, name="x", agent="a", concurrency=0, client=admin)
