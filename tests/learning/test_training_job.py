"""A reward model from rated traces to scores, over HTTP on both stores: made `queued` with its job,
trained by a worker (`training` → `ready`, or `failed` with the reason), then scoring traces with a
credit per assistant action, read back on the trace, its evaluation and its summary; and a project's
active model scoring the project's new traces in the background."""

from __future__ import annotations

import copy
import uuid
from typing import Any

from sqlalchemy import delete, func, select

from redline.jobs.models import DONE, FAILED, QUEUED, Job
from redline.learning.models import PreferencePair
from tests.conftest import Harness, run_waiting_jobs
from tests.samples import REFUND_STEPS

RM = "/api/v1/rm"
# Steps of a refund run that refunds before looking the order up: the faulty action is step 2.
REFUND_FIRST = copy.deepcopy(REFUND_STEPS)
REFUND_FIRST[2].update(toolName="issue_refund", toolInput={"order_id": "1182", "amount": 40})
REFUND_FIRST[3]["content"] = '{"refunded": true}'
REFUND_FIRST[4]["content"] = "I've issued a full refund to your card."


def _ok(answer: Any, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json()


def _detail(answer: Any, status: int) -> str:
    assert answer.status_code == status, answer.text
    return str(answer.json()["detail"])


def _run(harness: Harness, steps: list[dict[str, Any]], number: int) -> dict[str, Any]:
    run = harness.run(steps=copy.deepcopy(steps))
    run["steps"][1]["content"] = f"I want a refund for order {1000 + number}"
    stored: dict[str, Any] = _ok(harness.client.post("/v1/runs", json=run, headers=harness.admin), 201)
    return stored


def _rated_runs(harness: Harness, count: int = 6) -> tuple[list[str], list[str]]:
    """`count` runs that look the order up first, rated +, and `count` that refund first, rated −."""
    good: list[str] = []
    bad: list[str] = []
    for number in range(count):
        for steps, rating, kept in ((REFUND_STEPS, 1, good), (REFUND_FIRST, -1, bad)):
            run = _run(harness, steps, number)
            body = {"rating": rating}
            _ok(harness.client.post(f"{RM}/traces/{run['id']}/annotations", json=body, headers=harness.admin))
            kept.append(run["id"])
    return good, bad


def _model(harness: Harness, trace_ids: list[str], name: str = "refunds") -> dict[str, Any]:
    body = {"name": name, "trace_ids": trace_ids}
    made: dict[str, Any] = _ok(harness.client.post(f"{RM}/reward-models", json=body, headers=harness.admin))
    return made


def _get_model(harness: Harness, model_id: str) -> dict[str, Any]:
    found: dict[str, Any] = _ok(harness.client.get(f"{RM}/reward-models/{model_id}", headers=harness.admin))
    return found


def _work(harness: Harness) -> int:
    return run_waiting_jobs(harness.db)


def _trained(harness: Harness) -> tuple[dict[str, Any], list[str], list[str]]:
    good, bad = _rated_runs(harness)
    model = _model(harness, good + bad)
    assert _work(harness) == 1
    return _get_model(harness, model["id"]), good, bad


def test_a_model_trains_in_the_background_and_records_its_figures(harness: Harness) -> None:
    good, bad = _rated_runs(harness)
    model = _model(harness, good + bad)
    assert (model["status"], model["status_detail"]) == ("queued", "Queued for training.")
    assert model["progress"] == {"fraction": 0.0, "note": None}
    with harness.db.read() as session:
        job = session.scalars(select(Job)).one()
        assert (job.kind, job.state, job.payload) == (
            "train-reward-model",
            QUEUED,
            {"reward_model_id": model["id"]},
        )

    assert _work(harness) == 1
    ready = _get_model(harness, model["id"])
    assert ready["status"] == "ready"
    assert ready["status_detail"] == "Ready: trained as hashed-ngram-bt."
    assert ready["progress"] is None
    assert ready["error"] is None
    assert ready["started_at"] is not None
    assert ready["finished_at"] >= ready["started_at"]
    metrics = ready["metrics"]
    assert metrics["pairs"]["train"] + metrics["pairs"]["validation"] <= model["num_pairs"]
    assert metrics["pairs"]["validation"] > 0
    assert metrics["validation"]["accuracy"] is not None
    with harness.db.read() as session:
        assert session.scalars(select(Job.state)).one() == DONE


def test_scores_credit_each_action_and_show_on_the_trace(harness: Harness) -> None:
    model, good, bad = _trained(harness)
    body = {"trace_ids": [good[0], bad[0]]}
    scored = _ok(
        harness.client.post(f"{RM}/reward-models/{model['id']}/score", json=body, headers=harness.admin)
    )
    better, worse = scored["scores"]
    assert (better["trace_id"], worse["trace_id"]) == (good[0], bad[0])
    assert better["score"] > worse["score"]
    for score in (better, worse):
        assert score["reward_model_id"] == model["id"]
        assert score["reward_model_name"] == "refunds"
        assert score["exact"] is True
        # The assistant's actions only: the tool call (step 2) and the answer (step 4).
        assert [action["index"] for action in score["actions"]] == [2, 4]
        assert abs(sum(action["credit"] for action in score["actions"]) - score["score"]) < 1e-6
    # The refund issued before the look-up is the bad trace's lowest-credit action.
    assert min(worse["actions"], key=lambda action: action["credit"])["index"] == 2

    trace = _ok(harness.client.get(f"{RM}/traces/{bad[0]}", headers=harness.admin))
    assert trace["latest_score"] == {
        "reward_model_id": model["id"],
        "reward_model_name": "refunds",
        "score": worse["score"],
    }
    assert trace["action_credit"]["count"] == 2
    assert trace["action_credit"]["revision"] == worse["id"]
    assert trace["action_scores"] == worse["actions"]
    assert [run["id"] for run in trace["scoring_runs"]] == [worse["id"]]
    evaluation = _ok(harness.client.get(f"{RM}/workbench/traces/{bad[0]}/evaluation", headers=harness.admin))
    assert (evaluation["status"], evaluation["score"], evaluation["actions"]) == (
        "scored",
        worse["score"],
        worse["actions"],
    )
    listed = _ok(harness.client.get(f"{RM}/traces", headers=harness.admin))["traces"]
    summary = next(entry for entry in listed if entry["id"] == bad[0])
    assert summary["latest_score"]["score"] == worse["score"]
    unscored = next(entry for entry in listed if entry["id"] == good[1])
    assert (unscored["latest_score"], unscored["action_credit"]) == (None, None)


def test_only_a_ready_model_scores(harness: Harness) -> None:
    good, bad = _rated_runs(harness, 2)
    model = _model(harness, good + bad)
    answer = harness.client.post(
        f"{RM}/reward-models/{model['id']}/score", json={"trace_ids": [good[0]]}, headers=harness.admin
    )
    assert _detail(answer, 409) == (
        f"reward model {model['id']} is queued, not ready: only a trained model scores traces"
    )
    too_many = {"trace_ids": [str(uuid.uuid4()) for _ in range(101)]}
    answer = harness.client.post(
        f"{RM}/reward-models/{model['id']}/score", json=too_many, headers=harness.admin
    )
    assert answer.status_code == 422


def test_a_model_whose_pairs_are_gone_fails_with_the_reason(harness: Harness) -> None:
    good, bad = _rated_runs(harness, 2)
    model = _model(harness, good + bad)
    with harness.db.write() as session:
        session.execute(
            delete(PreferencePair).where(PreferencePair.reward_model_id == uuid.UUID(model["id"]))
        )
    assert _work(harness) == 1
    failed = _get_model(harness, model["id"])
    assert failed["status"] == "failed"
    assert failed["error"]
    assert failed["status_detail"] == f"Training failed: {failed['error']}"
    with harness.db.read() as session:
        job = session.scalars(select(Job)).one()
        assert (job.state, job.attempts, job.error) == (FAILED, 1, failed["error"])


def test_a_projects_active_model_scores_its_new_traces(harness: Harness) -> None:
    model, good, _ = _trained(harness)
    path = f"{RM}/projects/{harness.project_id}/scoring"
    assert _ok(harness.client.get(path, headers=harness.admin))["reward_model_id"] is None
    made = _ok(harness.client.put(path, json={"reward_model_id": model["id"]}, headers=harness.admin))
    assert (made["project_id"], made["reward_model_id"], made["reward_model_name"]) == (
        harness.project_id,
        model["id"],
        "refunds",
    )
    assert made["since"] is not None
    assert _ok(harness.client.get(path, headers=harness.admin)) == made

    # Two runs stored in two calls queue one job: it scores whatever is new when it runs.
    first, second = _run(harness, REFUND_STEPS, 50), _run(harness, REFUND_FIRST, 51)
    with harness.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Job).where(Job.state == QUEUED)) == 1
    assert _work(harness) == 1
    for run in (first, second):
        trace = _ok(harness.client.get(f"{RM}/traces/{run['id']}", headers=harness.admin))
        assert trace["latest_score"]["reward_model_id"] == model["id"]
    # Traces stored before the model became active are left alone.
    older = _ok(harness.client.get(f"{RM}/traces/{good[0]}", headers=harness.admin))
    assert older["latest_score"] is None

    cleared = _ok(harness.client.put(path, json={"reward_model_id": None}, headers=harness.admin))
    assert cleared["reward_model_id"] is None
    _run(harness, REFUND_STEPS, 52)
    assert _work(harness) == 0


def test_the_active_model_is_a_ready_one_set_by_an_admin(harness: Harness) -> None:
    good, bad = _rated_runs(harness, 2)
    queued = _model(harness, good + bad)
    path = f"{RM}/projects/{harness.project_id}/scoring"
    answer = harness.client.put(path, json={"reward_model_id": queued["id"]}, headers=harness.admin)
    assert _detail(answer, 409) == (
        f"reward model {queued['id']} is queued, not ready: only a trained model scores traces"
    )
    writer = harness.caller("a writer", role="write")
    answer = harness.client.put(path, json={"reward_model_id": None}, headers=writer)
    assert answer.status_code == 403
    assert _ok(harness.client.get(path, headers=writer))["reward_model_id"] is None
