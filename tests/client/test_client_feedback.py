"""The Redline client's rm-surface resources (traces, annotations, reward models) against a live server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from redline.background import JOB_KINDS
from redline.client import Client, ConflictError, InvalidRequestError, NotFoundError
from redline.db import Database
from redline.jobs.worker import JobWorker
from tests.conftest import ADMIN_TOKEN
from tests.liveserver import LiveServer

STASH_JSONL = "\n".join(
    json.dumps(
        {
            "id": f"ticket-{i}",
            "title": f"Refund {i}",
            "steps": [
                {"role": "system", "content": "Be kind."},
                {"role": "user", "content": f"Refund order {i}?"},
                {
                    "role": "assistant",
                    "content": f"Sure! I've issued a full refund to your card for order {i}.",
                },
            ],
        }
    )
    for i in range(3)
)


@pytest.fixture
def admin(live_server: LiveServer) -> Iterator[Client]:
    with live_server.client() as client:
        yield client


def test_import_list_and_read_traces(admin: Client) -> None:
    imported = admin.traces.import_text(STASH_JSONL)
    assert (imported["format"], imported["imported"]) == ("stash", 3)
    listed = list(admin.traces.list(page_size=2))
    assert {t["id"] for t in listed} == set(imported["trace_ids"])
    trace = admin.traces.get(imported["trace_ids"][0])
    assert [step["role"] for step in trace["steps"]] == ["system", "user", "assistant"]
    with pytest.raises(InvalidRequestError) as refused:
        admin.traces.import_text("{}", format="langfuse")
    assert refused.value.status == 422
    assert refused.value.message.startswith("unknown format 'langfuse'")


def test_annotate_change_export_and_delete(admin: Client) -> None:
    [trace_id] = admin.traces.import_text(STASH_JSONL.splitlines()[0])["trace_ids"]
    step = admin.traces.get(trace_id)["steps"][2]
    quoted = admin.annotations.create(
        trace_id,
        step_id=step["id"],
        comment="Promised a refund without checking the policy",
        quote={"text": "I've issued a full refund", "prefix": "Sure! ", "suffix": " to your card"},
    )
    assert quoted["quote"]["start"] == len("Sure! ")
    rated = admin.annotations.create(trace_id, rating=-1)
    flagged = admin.annotations.change(rated["id"], label_error=True, label_error_note="Policy allows it")
    assert (flagged["label_error"], flagged["rating"]) == (True, -1)
    assert [a["id"] for a in admin.annotations.list(trace_id)] == [quoted["id"], rated["id"]]
    lines = list(admin.annotations.export())
    assert [line["label_error"] for line in lines] == [False, True]
    assert lines[0]["step_index"] == 2
    with pytest.raises(InvalidRequestError) as refused:
        admin.annotations.create(trace_id)
    assert refused.value.message == "an annotation needs a rating, a comment, or both"
    admin.annotations.delete(quoted["id"])
    with pytest.raises(NotFoundError) as gone:
        admin.annotations.change(quoted["id"], comment="again")
    assert gone.value.message == "Annotation not found"


def test_reward_models_keep_their_pairs(admin: Client) -> None:
    trace_ids = admin.traces.import_text(STASH_JSONL)["trace_ids"]
    for trace_id, rating in zip(trace_ids, (1, -1, -1), strict=True):
        admin.annotations.create(trace_id, rating=rating)
    model = admin.reward_models.create("refunds", trace_ids, {"input_version": 3, "rubric": ["polite"]})
    assert (model["status"], model["num_pairs"], model["trace_count"]) == ("queued", 2, 3)
    assert model["training_config"]["rubric"] == ["polite"]
    assert admin.reward_models.get(model["id"]) == model
    assert [m["id"] for m in admin.reward_models.list()] == [model["id"]]
    pairs = list(admin.reward_models.pairs(model["id"], page_size=1))
    assert len(pairs) == 2
    assert {pair["granularity"] for pair in pairs} == {"trace"}
    # Three different questions: no same-context pair, so cross pairs fill up to min_pairs (200).
    assert [(pair["kind"], pair["context_id"]) for pair in pairs] == [("cross", None)] * 2
    assert model["metrics"]["pairs_by_kind"] == {"same_context": 0, "cross": 2, "preference": 0}
    with pytest.raises(InvalidRequestError) as too_few:
        admin.reward_models.create("one", trace_ids[:2])
    assert too_few.value.status == 422
    assert "at least 2 usable pairs" in too_few.value.message


def test_a_trained_model_scores_traces_and_a_project_new_ones(
    admin: Client, live_server: LiveServer, db: Database
) -> None:
    trace_ids = admin.traces.import_text(STASH_JSONL)["trace_ids"]
    for trace_id, rating in zip(trace_ids, (1, -1, -1), strict=True):
        admin.annotations.create(trace_id, rating=rating)
    model = admin.reward_models.create("refunds", trace_ids)
    with pytest.raises(ConflictError) as not_ready:
        admin.reward_models.score(model["id"], trace_ids[:1])
    assert not_ready.value.message == (
        f"reward model {model['id']} is queued, not ready: only a trained model scores traces"
    )
    while JobWorker(db, JOB_KINDS).run_once():
        pass
    assert admin.reward_models.get(model["id"])["status"] == "ready"
    [scored] = admin.reward_models.score(model["id"], trace_ids[:1])
    assert (scored["trace_id"], scored["reward_model_name"]) == (trace_ids[0], "refunds")
    assert admin.reward_models.active(live_server.project_id)["reward_model_id"] is None
    made = admin.reward_models.activate(live_server.project_id, model["id"])
    assert made["reward_model_id"] == model["id"]
    assert admin.reward_models.activate(live_server.project_id, None)["reward_model_id"] is None


def test_the_client_asks_for_same_context_pairs_first_unless_told(
    admin: Client, live_server: LiveServer
) -> None:
    """Redline's client names `same_context_first`; the rm API's own default stays every_pair."""
    trace_ids = admin.traces.import_text(STASH_JSONL)["trace_ids"]
    for trace_id, rating in zip(trace_ids, (1, -1, -1), strict=True):
        admin.annotations.create(trace_id, rating=rating)
    ours = admin.reward_models.create("ours", trace_ids, {"max_pairs": 10})
    assert ours["pairing"] == "same_context_first"
    assert ours["training_config"] == {"pairing": "same_context_first", "max_pairs": 10}
    stored = httpx.get(
        f"{live_server.url}/api/v1/rm/reward-models/{ours['id']}",
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    ).json()
    assert (stored["pairing"], stored["training_config"]["pairing"]) == (
        "same_context_first",
        "same_context_first",
    )
    told = admin.reward_models.create("document", trace_ids, {"pairing": "every_pair"})
    assert (told["pairing"], told["training_config"]) == ("every_pair", {"pairing": "every_pair"})
    bare = httpx.post(
        f"{live_server.url}/api/v1/rm/reward-models",
        json={"name": "bare", "trace_ids": trace_ids},
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    ).json()
    assert (bare["pairing"], bare["training_config"]) == ("every_pair", {})
    with pytest.raises(InvalidRequestError) as refused:
        admin.reward_models.create("odd", trace_ids, {"min_pairs": -1})
    assert refused.value.message == "training_config.min_pairs is a whole number from 0 to 100000"
