"""Reward models on the rm surface over HTTP, on both stores: made from the selected traces' ratings,
with the exact pairs kept and paged, and visible only to whoever may read every trace behind them."""

from __future__ import annotations

import uuid
from typing import Any

from redline.identity import service as identity
from redline.identity import workspaces
from redline.identity.models import Principal
from tests.conftest import Harness

RM = "/api/v1/rm"
MODEL_KEYS = {
    "id",
    "name",
    "base_model",
    "compute",
    "epochs",
    "max_pairs",
    "status",
    "status_detail",
    "num_pairs",
    "metrics",
    "error",
    "training_config",
    "pairing",
    "created_at",
    "started_at",
    "finished_at",
    "trace_count",
    "progress",
}
# The trace of rm-annotations.txt's "Trace format" (tests/samples.py), rendered as the document shows it.
REFUND_TEXT = (
    "user: I want a refund for order 1182\n\n"
    'assistant → lookup_order({"order_id": "1182"})\n\n'
    'tool: {"status": "delivered"}\n\n'
    "assistant: Your order was delivered on May 3."
)
ANSWER = 4


def _trace(harness: Harness, answer: str | None = None) -> dict[str, Any]:
    """A stored run; `answer` replaces its last step's text, so traces render apart."""
    run = harness.run()
    if answer is not None:
        run["steps"][ANSWER]["content"] = answer
    stored = harness.client.post("/v1/runs", json=run, headers=harness.admin)
    assert stored.status_code == 201, stored.text
    body: dict[str, Any] = stored.json()
    return body


def _rate(harness: Harness, run: dict[str, Any], rating: int, step: int | None = None) -> dict[str, Any]:
    step_id = run["steps"][step]["id"] if step is not None else None
    answer = harness.client.post(
        f"{RM}/traces/{run['id']}/annotations",
        json={"step_id": step_id, "rating": rating},
        headers=harness.admin,
    )
    assert answer.status_code == 200, answer.text
    annotation: dict[str, Any] = answer.json()
    return annotation


def _create(harness: Harness, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    return harness.client.post(f"{RM}/reward-models", json=body, headers=headers or harness.admin)


def _model(harness: Harness, name: str, runs: list[dict[str, Any]], **config: Any) -> dict[str, Any]:
    body = {"name": name, "trace_ids": [run["id"] for run in runs], "training_config": config}
    answer = _create(harness, body)
    assert answer.status_code == 200, answer.text
    model: dict[str, Any] = answer.json()
    return model


def _pairs(
    harness: Harness,
    model_id: str,
    params: dict[str, int] | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    return harness.client.get(
        f"{RM}/reward-models/{model_id}/pairs", params=params, headers=headers or harness.admin
    )


def _detail(answer: Any, status: int) -> str:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert list(body) == ["detail"], body
    return str(body["detail"])


def _rated_three(harness: Harness) -> list[dict[str, Any]]:
    """A chosen trace and two rejected ones: two trace-level pairs."""
    good, bad, worse = _trace(harness), _trace(harness, "I can't help."), _trace(harness, "Go away.")
    _rate(harness, good, 1)
    _rate(harness, bad, -1)
    _rate(harness, worse, -1)
    return [good, bad, worse]


def test_a_model_from_rated_traces_is_queued_with_its_pairs(harness: Harness) -> None:
    runs = _rated_three(harness)
    config = {"input_version": 3, "rubric": ["Checks the order before refunding"], "epochs": 2}
    model = _model(harness, "support-rm", runs, **config)
    assert set(model) == MODEL_KEYS
    assert uuid.UUID(model["id"])
    assert (model["name"], model["status"], model["num_pairs"], model["trace_count"]) == (
        "support-rm",
        "queued",
        2,
        3,
    )
    assert model["status_detail"] == "Queued for training."
    assert model["progress"] == {"fraction": 0.0, "note": None}
    assert model["training_config"] == config
    assert (model["max_pairs"], model["epochs"], model["compute"]) == (4000, 2, "cpu")
    # No pairing named: the document's rule, which says how many of its pairs share a context.
    assert model["pairing"] == "every_pair"
    assert model["metrics"] == {"pairs_by_kind": {"same_context": 2, "cross": 0, "preference": 0}}
    assert (model["error"], model["started_at"], model["finished_at"]) == (None, None, None)
    assert model["created_at"].endswith("+00:00")


def test_max_pairs_caps_the_pairs_and_must_be_sensible(harness: Harness) -> None:
    runs = _rated_three(harness)
    also_good = _trace(harness, "Sure, refunded.")
    _rate(harness, also_good, 1)
    every = _model(harness, "all", [*runs, also_good])
    assert (every["num_pairs"], every["max_pairs"]) == (4, 4000)
    capped = _model(harness, "capped", [*runs, also_good, runs[0]], max_pairs=2)
    assert (capped["num_pairs"], capped["max_pairs"], capped["trace_count"]) == (2, 2, 4)
    assert capped["training_config"] == {"max_pairs": 2}
    ids = [run["id"] for run in runs]
    for wrong in (1, 100_001, "10", 2.5, True):
        refused = _create(harness, {"name": "m", "trace_ids": ids, "training_config": {"max_pairs": wrong}})
        assert _detail(refused, 422) == "training_config.max_pairs is a whole number from 2 to 100000", wrong


def test_an_unknown_trace_is_named_in_a_404(harness: Harness) -> None:
    runs = _rated_three(harness)
    missing = str(uuid.uuid4())
    answer = _create(harness, {"name": "m", "trace_ids": [runs[0]["id"], missing, runs[1]["id"]]})
    assert _detail(answer, 404) == f"Trace {missing} not found"
    malformed = _create(harness, {"name": "m", "trace_ids": ["trace-1"]})
    assert _detail(malformed, 422).startswith("trace_ids[0]: Input should be a valid UUID")
    assert harness.client.get(f"{RM}/reward-models", headers=harness.admin).json() == {"reward_models": []}


def test_fewer_than_two_usable_pairs_is_refused(harness: Harness) -> None:
    good, bad = _trace(harness), _trace(harness, "No.")
    _rate(harness, good, 1)
    flagged = _rate(harness, bad, -1)
    one_pair = _create(harness, {"name": "m", "trace_ids": [good["id"], bad["id"]]})
    assert _detail(one_pair, 422) == (
        "training needs at least 2 usable pairs; the selected traces give 1: rate whole traces or steps "
        "+ and − (flagged ratings and ratings that cancel don't count), or correct their runs' answers "
        "(with what they should have said) or decisions"
    )
    harness.client.patch(
        f"{RM}/annotations/{flagged['id']}", json={"label_error": True}, headers=harness.admin
    )
    none = _create(harness, {"name": "m", "trace_ids": [good["id"], bad["id"]], "training_config": None})
    assert "the selected traces give 0" in _detail(none, 422)
    assert "at least 1 character" in _detail(_create(harness, {"name": "", "trace_ids": []}), 422)


def test_the_pairs_endpoint_shows_the_texts_and_where_they_came_from(harness: Harness) -> None:
    good, bad, worse = _rated_three(harness)
    good_step = _rate(harness, good, 1, step=ANSWER)
    bad_step = _rate(harness, bad, -1, step=ANSWER)
    model = _model(harness, "m", [good, bad, worse])
    assert model["num_pairs"] == 3

    page = _pairs(harness, model["id"])
    assert page.status_code == 200, page.text
    assert page.json()["total"] == 3
    pairs = page.json()["pairs"]
    assert [pair["position"] for pair in pairs] == [0, 1, 2]
    assert sorted(pair["granularity"] for pair in pairs) == ["step", "trace", "trace"]
    assert {pair["source"] for pair in pairs} == {"rating"}

    [step_pair] = [pair for pair in pairs if pair["granularity"] == "step"]
    assert step_pair["chosen"] == REFUND_TEXT
    assert step_pair["rejected"] == REFUND_TEXT.replace("Your order was delivered on May 3.", "I can't help.")
    assert step_pair["source_ids"] == {
        "chosen": {
            "trace_id": good["id"],
            "step_id": good["steps"][ANSWER]["id"],
            "annotation_ids": [good_step["id"]],
            "reviewers": [{"id": harness.admin_id, "name": "admin"}],
        },
        "rejected": {
            "trace_id": bad["id"],
            "step_id": bad["steps"][ANSWER]["id"],
            "annotation_ids": [bad_step["id"]],
            "reviewers": [{"id": harness.admin_id, "name": "admin"}],
        },
    }
    trace_pairs = [pair for pair in pairs if pair["granularity"] == "trace"]
    assert {pair["chosen"] for pair in trace_pairs} == {REFUND_TEXT}
    assert {pair["source_ids"]["rejected"]["trace_id"] for pair in trace_pairs} == {bad["id"], worse["id"]}
    assert all("step_id" not in pair["source_ids"]["chosen"] for pair in trace_pairs)

    second = _pairs(harness, model["id"], {"limit": 1, "offset": 1}).json()
    assert second == {"pairs": [pairs[1]], "total": 3}
    assert _pairs(harness, model["id"], {"offset": 3}).json() == {"pairs": [], "total": 3}
    for bad_params in ({"limit": 0}, {"limit": 1001}, {"offset": -1}):
        assert _detail(_pairs(harness, model["id"], bad_params), 422).startswith(
            next(iter(bad_params)) + ": "
        )


def test_list_newest_first_and_get_one(harness: Harness) -> None:
    runs = _rated_three(harness)
    first = _model(harness, "first", runs)
    second = _model(harness, "second", runs)
    listed = harness.client.get(f"{RM}/reward-models", headers=harness.admin)
    assert listed.status_code == 200, listed.text
    assert [model["name"] for model in listed.json()["reward_models"]] == ["second", "first"]
    assert listed.json()["reward_models"][1] == first
    fetched = harness.client.get(f"{RM}/reward-models/{second['id']}", headers=harness.admin)
    assert fetched.json() == second
    for unknown in (str(uuid.uuid4()), "not-a-uuid"):
        answer = harness.client.get(f"{RM}/reward-models/{unknown}", headers=harness.admin)
        assert _detail(answer, 404) == "Reward model not found"
        assert _detail(_pairs(harness, unknown), 404) == "Reward model not found"


def _stranger(harness: Harness) -> dict[str, str]:
    with harness.db.write() as session:
        other = workspaces.new_workspace(session, "other")
        stranger = Principal(name="stranger", kind="user", workspace_id=other.id, workspace_admin=True)
        session.add(stranger)
        session.flush()
        secret = identity.create_token(session, identity.Actor.of(stranger), stranger.id, "t").secret
    return {"Authorization": f"Bearer {secret}"}


def test_only_those_who_may_read_its_traces_see_a_model(harness: Harness) -> None:
    runs = _rated_three(harness)
    model = _model(harness, "private", runs)
    for headers in (_stranger(harness), harness.caller("outsider")):
        assert harness.client.get(f"{RM}/reward-models", headers=headers).json() == {"reward_models": []}
        answer = harness.client.get(f"{RM}/reward-models/{model['id']}", headers=headers)
        assert _detail(answer, 404) == "Reward model not found"
        assert _detail(_pairs(harness, model["id"], headers=headers), 404) == "Reward model not found"
        refused = _create(harness, {"name": "copy", "trace_ids": [runs[0]["id"]]}, headers)
        assert _detail(refused, 404) == f"Trace {runs[0]['id']} not found"
    reader = harness.caller("reader", role="read")
    assert [
        m["id"] for m in harness.client.get(f"{RM}/reward-models", headers=reader).json()["reward_models"]
    ] == [model["id"]]


def test_without_a_token_the_routes_answer_401(harness: Harness) -> None:
    for method, path in [
        ("POST", "/reward-models"),
        ("GET", "/reward-models"),
        ("GET", f"/reward-models/{uuid.uuid4()}"),
        ("GET", f"/reward-models/{uuid.uuid4()}/pairs"),
    ]:
        answer = harness.client.request(method, RM + path, json={"name": "m", "trace_ids": []})
        assert _detail(answer, 401) == "Missing bearer token: send Authorization: Bearer <token>."
