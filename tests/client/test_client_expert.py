"""`client.queue_rules` and `client.expert_queue`: the real client against a real server over HTTP on both
stores, and what it sends (an Idempotency-Key, nulls only where asked) against a mock."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from redline.client import AuthError, Client, ConflictError, InvalidRequestError, NotFoundError
from redline.queues.matching import sampled
from tests.client.test_client import new_caller
from tests.liveserver import LiveServer
from tests.samples import make_run


def _run(admin: Client, live_server: LiveServer, **fields: Any) -> dict[str, Any]:
    return admin.runs.create(make_run(live_server.project_id, **fields))


def test_rules_are_made_changed_versioned_and_stopped(admin: Client, live_server: LiveServer) -> None:
    project = live_server.project_id
    agent_id = _run(admin, live_server, status="running")["agentId"]
    rule = admin.queue_rules.create(
        project, name="Echo half", when={"agentIds": [agent_id]}, sample=0.5, max_open=5
    )
    assert (rule["version"], rule["sample"], rule["maxOpen"], rule["openItems"]) == (1, 0.5, 5, 0)
    rule_id = rule["ruleId"]
    everything = admin.queue_rules.create(project, name="Everything", enabled=False)
    assert everything["enabled"] is False
    assert admin.queue_rules.get(project, rule_id) == rule
    assert [r["ruleId"] for r in admin.queue_rules.list(project, limit=1)] == [rule_id, everything["ruleId"]]
    first = admin.queue_rules.page(project, limit=1)
    assert first.has_more
    assert admin.queue_rules.page(project, limit=1, cursor=first.next_cursor).data == [everything]

    # Only what is passed changes; None lifts the cap, which is sent as null.
    changed = admin.queue_rules.update(project, rule_id, max_open=None, name="Echo all")
    assert (changed["version"], changed["name"], changed["sample"]) == (2, "Echo all", 0.5)
    assert "maxOpen" not in changed
    versions = list(admin.queue_rules.versions(project, rule_id, limit=1))
    assert [v["version"] for v in versions] == [2, 1]
    assert versions[0]["changes"] == [
        {"field": "name", "from": "Echo half", "to": "Echo all"},
        {"field": "maxOpen", "from": 5, "to": None},
    ]
    assert versions[1]["changes"] == []

    assert admin.queue_rules.unregister(project, rule_id) == {"ruleId": rule_id, "unregistered": True}
    assert [r["ruleId"] for r in admin.queue_rules.list(project)] == [everything["ruleId"]]
    with pytest.raises(ConflictError) as stopped:
        admin.queue_rules.update(project, rule_id, name="again")
    assert stopped.value.code == "queue-rule-unregistered"


def test_refusals_come_back_as_the_servers_sentences(admin: Client, live_server: LiveServer) -> None:
    project = live_server.project_id
    with pytest.raises(InvalidRequestError) as bad:
        admin.queue_rules.create(project, name="x", when={"status": ["failed"]})
    assert bad.value.message == 'when.status: only ["completed"]: only a completed run can be corrected.'
    with pytest.raises(InvalidRequestError) as bad:
        admin.queue_rules.create(project, name="x", sample=0)
    assert bad.value.details == {"field": "sample"}
    with pytest.raises(NotFoundError) as missing:
        admin.queue_rules.get(project, str(uuid.uuid4()))
    assert missing.value.kind == "queue-rule"
    with pytest.raises(NotFoundError) as missing:
        admin.expert_queue.dismiss(project, str(uuid.uuid4()))
    assert missing.value.kind == "queue-item"
    with pytest.raises(InvalidRequestError) as bad:
        admin.queue_rules.preview("nope")
    assert bad.value.message == '"nope" isn\'t a project id'
    reader = new_caller(admin, live_server, "reader", "read")
    with reader, pytest.raises(AuthError) as denied:
        reader.queue_rules.create(project, name="x")
    assert denied.value.code == "permission-denied"


def test_preview_and_queue_recent(admin: Client, live_server: LiveServer) -> None:
    project = live_server.project_id
    runs = [_run(admin, live_server) for _ in range(20)]
    _run(admin, live_server, agent="billing-agent")
    agent_id = runs[0]["agentId"]
    estimate = admin.queue_rules.preview(project, agent_ids=[agent_id], sample=0.5, last=15)
    assert estimate == {"considered": 15, "matched": 7, "estimate": True}
    assert admin.queue_rules.preview(project, include_dry_runs=True)["matched"] == 21

    rule = admin.queue_rules.create(project, name="Half", when={"agentIds": [agent_id]}, sample=0.5)
    taken = [run["id"] for run in runs if sampled(uuid.UUID(rule["ruleId"]), uuid.UUID(run["id"]), 0.5)]
    exact = admin.queue_rules.preview(project, rule_id=rule["ruleId"])
    assert exact == {"considered": 21, "matched": len(taken), "estimate": False}

    since = datetime.now(UTC) - timedelta(hours=1)
    counts = admin.queue_rules.queue_recent(project, rule["ruleId"], since=since)
    assert counts == {"queued": len(taken), "alreadyQueued": 0, "alreadyReviewed": 0}
    again = admin.queue_rules.queue_recent(project, rule["ruleId"], last=1000)
    assert again == {"queued": 0, "alreadyQueued": len(taken), "alreadyReviewed": 0}
    assert sorted(item["runId"] for item in admin.expert_queue.list(project)) == sorted(taken)

    results = admin.queue_rules.results(project, rule["ruleId"])
    assert results["ruleId"] == rule["ruleId"]
    assert [group["added"] for group in results["groups"]] == [len(taken)]


def test_the_expert_queue_lists_counts_dismisses_and_reopens(admin: Client, live_server: LiveServer) -> None:
    project = live_server.project_id
    rule = admin.queue_rules.create(project, name="Everything")
    runs = [_run(admin, live_server) for _ in range(3)]
    ids = [run["id"] for run in runs]
    assert [item["runId"] for item in admin.expert_queue.list(project, limit=2)] == ids
    page = admin.expert_queue.page(project, limit=2)
    assert [item["runId"] for item in page.data] == ids[:2]
    assert page.has_more
    assert admin.expert_queue.count(project) == 3

    dismissed = admin.expert_queue.dismiss(project, ids[0], reason="A test order")
    assert (dismissed["state"], dismissed["reason"]) == ("dismissed", "A test order")
    assert dismissed["can"] == {"dismiss": False, "reopen": True}
    with pytest.raises(ConflictError) as twice:
        admin.expert_queue.dismiss(project, ids[0])
    assert twice.value.code == "queue-item-not-open"
    admin.corrections.create(run_id=ids[1], answer="right")

    assert admin.expert_queue.count(project, state="open") == 1
    assert admin.expert_queue.count(project, state=["dismissed", "corrected"]) == 2
    assert [i["runId"] for i in admin.expert_queue.list(project, state="corrected")] == [ids[1]]
    assert [i["runId"] for i in admin.expert_queue.list(project, for_me=True)] == [ids[2]]
    assert [i["runId"] for i in admin.expert_queue.list(project, rule_id=rule["ruleId"])] == ids
    assert [i["runId"] for i in admin.expert_queue.list(project, agent_id=runs[0]["agentId"])] == ids
    now = datetime.now(UTC)
    assert admin.expert_queue.count(project, closed_after=now - timedelta(hours=1)) == 2
    assert admin.expert_queue.count(project, added_after=now + timedelta(hours=1)) == 0

    reopened = admin.expert_queue.reopen(project, ids[0])
    assert reopened["state"] == "open"
    assert "reason" not in reopened
    assert admin.expert_queue.count(project, state="open") == 2
    with pytest.raises(InvalidRequestError) as bad:
        admin.expert_queue.count(project, state="waiting")
    assert bad.value.message == 'state: "waiting" is not one of open, corrected, dismissed, erased.'


def test_writes_send_a_key_and_only_the_fields_asked_for() -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"ok": True, "total": 0, "queued": 0})

    with Client("http://redline.test", token="rl_x", transport=httpx.MockTransport(handler)) as client:
        client.queue_rules.create("p", name="n", idempotency_key="k1")
        client.queue_rules.update("p", "r", corrector_group_id=None, sample=0.2)
        client.queue_rules.unregister("p", "r")
        client.queue_rules.queue_recent("p", "r", last=10)
        client.expert_queue.dismiss("p", "run")
        client.expert_queue.reopen("p", "run")
        client.queue_rules.preview("p", agent_ids=["a", "b"], include_dry_runs=False, sample=0.5)
        client.expert_queue.count("p", for_me=True, state=["open", "dismissed"])
    create, update, unregister, recent, dismiss, reopen, preview, count = sent
    assert create.headers["Idempotency-Key"] == "k1"
    assert json.loads(create.content) == {"name": "n"}
    assert json.loads(update.content) == {"sample": 0.2, "correctorGroupId": None}
    assert (update.method, update.url.path) == ("PATCH", "/v1/projects/p/queue-rules/r")
    assert all(
        str(uuid.UUID(request.headers["Idempotency-Key"])) == request.headers["Idempotency-Key"]
        for request in (update, unregister, recent, dismiss, reopen)
    )
    assert unregister.url.path == "/v1/projects/p/queue-rules/r/unregister"
    assert json.loads(recent.content) == {"last": 10}
    assert json.loads(dismiss.content) == {}
    assert reopen.url.path == "/v1/projects/p/expert-queue/run/reopen"
    assert dict(preview.url.params) == {"agentIds": "a,b", "includeDryRuns": "false", "sample": "0.5"}
    assert "Idempotency-Key" not in preview.headers
    assert dict(count.url.params) == {"state": "open,dismissed", "forMe": "true", "limit": "0"}


def test_several_correctors_hold_take_the_next_and_show_their_progress(
    admin: Client, live_server: LiveServer
) -> None:
    project = live_server.project_id
    rule = admin.queue_rules.create(project, name="Pairs", correctors_wanted=2)
    assert rule["correctorsWanted"] == 2
    assert (
        admin.queue_rules.update(project, rule["ruleId"], correctors_wanted=1).get("correctorsWanted") is None
    )
    admin.queue_rules.update(project, rule["ruleId"], correctors_wanted=2)
    run_id = _run(admin, live_server)["id"]
    ana, ben, cy = (new_caller(admin, live_server, name, "write") for name in ("ana", "ben", "cy"))
    with ana, ben, cy:
        taken = ana.expert_queue.next(project)
        assert (taken["item"]["runId"], taken["hold"]["state"], taken["hold"]["places"]) == (
            run_id,
            "held",
            2,
        )
        assert ben.expert_queue.hold(project, run_id)["hold"]["takenByOthers"] == 1
        with pytest.raises(ConflictError) as taken_already:
            cy.expert_queue.hold(project, run_id)
        assert taken_already.value.code == "queue-item-taken"
        assert cy.expert_queue.next(project) == {"item": None, "hold": None}
        progress = admin.expert_queue.progress(project)
    assert (progress["waiting"], progress["held"]) == (1, 1)
    assert [(one["name"], one["corrected"], one["held"]) for one in progress["correctors"]] == [
        ("ana", 0, 1),
        ("ben", 0, 1),
    ]
