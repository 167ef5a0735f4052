"""The real stashai client (0.1.480, package `cli`) against a live server, on both stores: annotating
through its MCP tools, flagging a label, training a reward model, and its errors as StashError."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from cli.client import StashClient, StashError

from redline.client import Client
from tests.liveserver import LiveServer
from tests.samples import make_run

RM = "/api/v1/rm"
ANSWER = 4


def _trace(admin: Client, live_server: LiveServer, answer: str | None = None) -> dict[str, Any]:
    run = make_run(live_server.project_id)
    if answer is not None:
        run["steps"][ANSWER]["content"] = answer
    return admin.runs.create(run)


def _rate(stash: StashClient, trace_id: str, rating: int) -> dict[str, Any]:
    answer: dict[str, Any] = stash._post(f"{RM}/traces/{trace_id}/annotations", json={"rating": rating})
    return answer


def test_annotate_a_trace_and_a_step_with_the_mcp_tool(
    mcp: ModuleType, stash: StashClient, admin: Client, live_server: LiveServer
) -> None:
    run = _trace(admin, live_server)
    whole = json.loads(mcp.stash_annotate_trace(run["id"], "Never checked the policy"))
    assert (whole["trace_id"], whole["step_id"], whole["comment"]) == (
        run["id"],
        None,
        "Never checked the policy",
    )
    assert (whole["rating"], whole["label_error"], whole["author_name"]) == (None, False, "admin")

    step_id = run["steps"][ANSWER]["id"]
    on_step = json.loads(mcp.stash_annotate_trace(run["id"], "Too curt", step_id=step_id))
    assert (on_step["step_id"], on_step["comment"]) == (step_id, "Too curt")

    listed = stash._get(f"{RM}/traces/{run['id']}/annotations")
    assert [annotation["id"] for annotation in listed] == [whole["id"], on_step["id"]]


def test_flag_a_label_error_and_export_it(stash: StashClient, admin: Client, live_server: LiveServer) -> None:
    run = _trace(admin, live_server)
    made = _rate(stash, run["id"], -1)
    note = "Policy allows refunds on damaged items"
    flagged = stash._patch(
        f"{RM}/annotations/{made['id']}", json={"label_error": True, "label_error_note": note}
    )
    assert (flagged["label_error"], flagged["label_error_note"], flagged["rating"]) == (True, note, -1)

    exported = stash._request("GET", f"{RM}/export/annotations")
    assert exported.headers["content-type"] == "application/x-ndjson"
    [line] = [json.loads(text) for text in exported.text.splitlines()]
    assert (line["trace_id"], line["label_error"], line["label_error_note"]) == (run["id"], True, note)

    stash._delete(f"{RM}/annotations/{made['id']}")
    with pytest.raises(StashError) as gone:
        stash._patch(f"{RM}/annotations/{made['id']}", json={"rating": 1})
    assert str(gone.value) == "[404] Annotation not found"


def test_train_a_reward_model_from_rated_traces(
    mcp: ModuleType, stash: StashClient, admin: Client, live_server: LiveServer
) -> None:
    runs = [_trace(admin, live_server), _trace(admin, live_server, "No."), _trace(admin, live_server, "Bye.")]
    for run, rating in zip(runs, (1, -1, -1), strict=True):
        _rate(stash, run["id"], rating)
    criteria = ["Checks the order before refunding"]
    model = json.loads(mcp.stash_train_reward_model("support-rm", [run["id"] for run in runs], criteria))
    assert (model["name"], model["status"], model["num_pairs"], model["trace_count"]) == (
        "support-rm",
        "queued",
        2,
        3,
    )
    assert model["training_config"] == {"input_version": 3, "rubric": criteria}
    # The client uses the returned id at once.
    assert stash._get(f"{RM}/reward-models/{model['id']}") == model
    pairs = stash._get(f"{RM}/reward-models/{model['id']}/pairs", limit=10, offset=0)
    assert pairs["total"] == 2


def test_a_broken_rule_is_a_stash_error_with_the_documents_sentence(
    mcp: ModuleType, stash: StashClient, admin: Client, live_server: LiveServer
) -> None:
    run = _trace(admin, live_server)
    with pytest.raises(StashError) as empty:
        mcp.stash_annotate_trace(run["id"], "")
    assert str(empty.value) == "[422] an annotation needs a rating, a comment, or both"
    assert empty.value.status_code == 422

    with pytest.raises(StashError) as system:
        stash._post(
            f"{RM}/traces/{run['id']}/annotations", json={"step_id": run["steps"][0]["id"], "rating": 1}
        )
    assert str(system.value) == "[422] system steps can be commented on but not rated"

    with pytest.raises(StashError) as too_few:
        mcp.stash_train_reward_model("rm", [run["id"]], [])
    assert str(too_few.value).startswith(
        "[422] training needs at least 2 usable pairs; the selected traces give 0"
    )

    missing = "00000000-0000-4000-8000-000000000000"
    with pytest.raises(StashError) as unknown:
        mcp.stash_train_reward_model("rm", [missing], [])
    assert str(unknown.value) == f"[404] Trace {missing} not found"


def test_without_a_key_the_client_gets_a_401(live_server: LiveServer, admin: Client) -> None:
    run = _trace(admin, live_server)
    with StashClient(live_server.url) as anonymous, pytest.raises(StashError) as refused:
        anonymous._post(f"{RM}/traces/{run['id']}/annotations", json={"comment": "hi", "step_id": None})
    assert str(refused.value) == "[401] Missing bearer token: send Authorization: Bearer <token>."
