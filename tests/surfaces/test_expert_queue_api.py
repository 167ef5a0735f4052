"""The expert queue on /v1/projects/{projectId}/expert-queue, over HTTP against the real app on both
stores: what an item shows, how it closes with several rules and groups, the filters and totals,
`forMe`, `can`, dismissing and reopening, and erasure."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from redline.groups import service as groups
from redline.groups.schemas import GroupIn
from redline.identity.models import Principal
from redline.identity.service import Actor
from tests.conftest import Harness


def _queue(harness: Harness, *tail: str) -> str:
    return "/".join([f"/v1/projects/{harness.project_id}/expert-queue", *tail])


def _page(harness: Harness, headers: dict[str, str] | None = None, **params: Any) -> dict[str, Any]:
    answer = harness.client.get(_queue(harness), params=params, headers=headers or harness.admin)
    assert answer.status_code == 200, answer.text
    page: dict[str, Any] = answer.json()
    return page


def _ids(harness: Harness, headers: dict[str, str] | None = None, **params: Any) -> list[str]:
    return [item["runId"] for item in _page(harness, headers, **params)["data"]]


def _error(answer: Any, status: int, code: str, message: str | None = None) -> None:
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert error["code"] == code
    if message is not None:
        assert error["message"] == message


def _run(harness: Harness, **fields: Any) -> dict[str, Any]:
    answer = harness.client.post("/v1/runs", json=harness.run(**fields), headers=harness.admin)
    assert answer.status_code == 201, answer.text
    run: dict[str, Any] = answer.json()
    return run


def _rule(harness: Harness, name: str, **body: Any) -> str:
    answer = harness.client.post(
        f"/v1/projects/{harness.project_id}/queue-rules", json={"name": name, **body}, headers=harness.admin
    )
    assert answer.status_code == 201, answer.text
    rule_id: str = answer.json()["ruleId"]
    return rule_id


def _group(harness: Harness, name: str, scope: dict[str, Any] | None = None, **fields: Any) -> str:
    with harness.db.write() as session:
        admin = Actor.of(session.get_one(Principal, uuid.UUID(harness.admin_id)))
        body = GroupIn.model_validate(
            {"scope": scope or {"kind": "project", "projectId": harness.project_id}, "name": name, **fields}
        )
        return str(groups.create(session, admin, body).group.id)


def _correct(harness: Harness, run_id: str, headers: dict[str, str] | None = None, **fields: Any) -> None:
    body = {"runId": run_id, "answer": "right", **fields}
    answer = harness.client.post("/v1/corrections", json=body, headers=headers or harness.admin)
    assert answer.status_code == 201, answer.text


def _me(harness: Harness, headers: dict[str, str]) -> str:
    me = harness.client.get("/v1/me", headers=headers).json()
    principal_id: str = me.get("id") or me["principal"]["id"]
    return principal_id


def _post(
    harness: Harness, run_id: str, action: str, headers: dict[str, str] | None = None, **kw: Any
) -> Any:
    return harness.client.post(_queue(harness, run_id, action), headers=headers or harness.admin, **kw)


# -------------------------------------------------------------------------------------------- an item


def test_an_item_shows_the_run_its_rules_and_the_corrections_so_far_and_closes_when_each_rule_has_its(
    harness: Harness,
) -> None:
    expert = _group(harness, "expert", assertableBy={"principalKinds": ["service"]})
    bot = harness.caller("bot", role="write", kind="service")
    wants_expert = _rule(harness, "Support sample", correctorGroupId=expert)
    wants_any = _rule(harness, "Everything")
    run = _run(harness, agentVersion="1.0.0", endedAt="2026-11-03T12:00:00Z")

    [item] = _page(harness)["data"]
    expected_rules = sorted(
        [
            {"ruleId": wants_expert, "version": 1, "name": "Support sample"},
            {"ruleId": wants_any, "version": 1, "name": "Everything"},
        ],
        key=lambda rule: str(rule["ruleId"]),
    )
    assert item == {
        "runId": run["id"],
        "projectId": harness.project_id,
        "agentId": run["agentId"],
        "agentVersion": "1.0.0",
        "flowId": "",
        "runStatus": "completed",
        "completedAt": "2026-11-03T12:00:00+00:00",
        "rules": expected_rules,
        "wantedGroupIds": [expert],
        "anyCorrection": True,
        "progress": {"total": 0, "byGroup": []},
        "addedAt": item["addedAt"],
        "state": "open",
        "can": {"dismiss": True, "reopen": False},
    }

    # Any correction satisfies the rule that wants any; the expert's rule still waits.
    _correct(harness, run["id"])
    [item] = _page(harness)["data"]
    assert item["state"] == "open"
    assert item["progress"] == {"total": 1, "byGroup": [{"correctorGroupId": None, "count": 1}]}

    _correct(harness, run["id"], bot, correctorGroupId=expert)
    [item] = _page(harness)["data"]
    assert item["state"] == "corrected"
    assert item["closedBy"] == _me(harness, bot)
    assert datetime.fromisoformat(item["closedAt"]) >= datetime.fromisoformat(item["addedAt"])
    assert item["progress"] == {
        "total": 2,
        "byGroup": [{"correctorGroupId": None, "count": 1}, {"correctorGroupId": expert, "count": 1}],
    }
    assert item["can"] == {"dismiss": False, "reopen": False}


def test_an_item_names_each_rule_as_at_the_version_that_queued_it(harness: Harness) -> None:
    rule_id = _rule(harness, "Echo half")
    _run(harness)
    answer = harness.client.patch(
        f"/v1/projects/{harness.project_id}/queue-rules/{rule_id}",
        json={"name": "Echo all"},
        headers=harness.admin,
    )
    assert answer.status_code == 200, answer.text
    _run(harness)
    assert [item["rules"] for item in _page(harness)["data"]] == [
        [{"ruleId": rule_id, "version": 1, "name": "Echo half"}],
        [{"ruleId": rule_id, "version": 2, "name": "Echo all"}],
    ]


def test_a_replaced_or_removed_correction_is_not_progress(harness: Harness) -> None:
    expert = _group(harness, "expert", assertableBy={"principalKinds": ["service"]})
    _rule(harness, "Support sample", correctorGroupId=expert)
    run = _run(harness)
    _correct(harness, run["id"], answer="wrong", why="curt")
    _correct(harness, run["id"])  # replaces the first
    writer = harness.caller("writer", role="write")
    made = harness.client.post(
        "/v1/corrections", json={"runId": run["id"], "answer": "right"}, headers=writer
    )
    assert made.status_code == 201, made.text
    assert _page(harness)["data"][0]["progress"]["total"] == 2
    removed = harness.client.post(f"/v1/corrections/{made.json()['id']}/unregister", headers=writer)
    assert removed.status_code == 200, removed.text
    assert _page(harness)["data"][0]["progress"] == {
        "total": 1,
        "byGroup": [{"correctorGroupId": None, "count": 1}],
    }


def test_an_erased_runs_waiting_item_closes_as_erased(harness: Harness) -> None:
    _rule(harness, "Everything")
    run = _run(harness)
    assert harness.client.post(f"/v1/runs/{run['id']}/erase", headers=harness.admin).status_code == 200
    [item] = _page(harness)["data"]
    assert item["state"] == "erased"
    assert "closedAt" in item
    assert "closedBy" not in item
    assert item["can"] == {"dismiss": False, "reopen": False}
    assert not {"input", "output", "metadata", "steps"} & set(item)
    assert _ids(harness, state="erased") == [run["id"]]


# --------------------------------------------------------------------------------- filters and totals


def test_the_queue_filters_counts_and_pages_oldest_first(harness: Harness) -> None:
    expert = _group(harness, "expert", assertableBy={"principalKinds": ["service"]})
    support = _run(harness, status="running")["agentId"]
    wants_expert = _rule(harness, "Support sample", when={"agentIds": [support]}, correctorGroupId=expert)
    wants_any = _rule(harness, "Everything")
    start = datetime.now(UTC) - timedelta(seconds=1)
    runs = [_run(harness, agent=agent) for agent in ("support-agent", "billing-agent") * 2]
    ids = [run["id"] for run in runs]
    billing = runs[1]["agentId"]
    assert _post(harness, ids[1], "dismiss").status_code == 200
    _correct(harness, ids[3])

    everything = _page(harness)
    assert [item["runId"] for item in everything["data"]] == ids
    assert (everything["total"], everything["hasMore"]) == (4, False)
    assert "nextCursor" not in everything
    assert _ids(harness, state="open") == [ids[0], ids[2]]
    assert _ids(harness, state="dismissed") == [ids[1]]
    assert _ids(harness, state="corrected") == [ids[3]]
    assert _ids(harness, state="open,dismissed") == ids[:3]
    assert _ids(harness, state=["open", "corrected"]) == [ids[0], ids[2], ids[3]]
    assert _ids(harness, ruleId=wants_expert) == [ids[0], ids[2]]
    assert _ids(harness, ruleId=wants_any) == ids
    assert _ids(harness, agentId=billing) == [ids[1], ids[3]]
    assert _ids(harness, correctorGroupId=expert) == [ids[0], ids[2]]
    assert _ids(harness, addedAfter=start.isoformat()) == ids
    assert _ids(harness, addedAfter=(start + timedelta(hours=1)).isoformat()) == []
    assert _ids(harness, closedAfter=start.isoformat()) == [ids[1], ids[3]]
    assert _ids(harness, state="open", agentId=support) == [ids[0], ids[2]]

    assert _page(harness, limit=0) == {"data": [], "hasMore": False, "total": 4}
    assert _page(harness, limit=0, state="open", closedAfter=start.isoformat())["total"] == 0
    seen: list[str] = []
    cursor: str | None = None
    while True:
        page = _page(harness, None, limit=3, cursor=cursor) if cursor else _page(harness, limit=3)
        assert page["total"] == 4
        seen.extend(item["runId"] for item in page["data"])
        if not page["hasMore"]:
            break
        cursor = page["nextCursor"]
    assert seen == ids


def test_for_me_keeps_the_items_the_caller_can_close(harness: Harness) -> None:
    expert = _group(harness, "expert", assertableBy={"principalKinds": ["service"]})
    support = _run(harness, status="running")["agentId"]
    billing = _run(harness, agent="billing-agent", status="running")["agentId"]
    billing_only = _group(
        harness, "billing", scope={"kind": "agent", "projectId": harness.project_id, "agentId": billing}
    )
    _rule(harness, "Support sample", when={"agentIds": [support]}, correctorGroupId=expert)
    _rule(harness, "Billing reviewers", correctorGroupId=billing_only)
    bot = harness.caller("bot", role="write", kind="service")
    reader = harness.caller("reader", role="read")
    support_run = _run(harness)
    billing_run = _run(harness, agent="billing-agent")

    # The admin may give the billing group on billing's runs, but never the services' expert group,
    # nor the billing group on another agent's runs.
    assert _ids(harness, forMe="true") == [billing_run["id"]]
    assert _ids(harness, bot, forMe="true") == [support_run["id"], billing_run["id"]]
    assert _page(harness, reader, forMe="true") == {"data": [], "hasMore": False, "total": 0}
    assert _page(harness, reader)["total"] == 2

    # The support run still waits for the billing group, which nobody can give on it.
    _correct(harness, support_run["id"], bot, correctorGroupId=expert)
    assert _ids(harness, bot, forMe="true") == [billing_run["id"]]
    _correct(harness, billing_run["id"], correctorGroupId=billing_only)
    assert _ids(harness, forMe="true") == []
    assert _ids(harness, bot, forMe="true") == []
    assert _ids(harness, state="open") == [support_run["id"]]


def test_a_rule_without_a_group_waits_for_anyone_who_may_correct(harness: Harness) -> None:
    _rule(harness, "Everything")
    run = _run(harness)
    writer = harness.caller("writer", role="write")
    assert _ids(harness, writer, forMe="true") == [run["id"]]
    _post(harness, run["id"], "dismiss")
    assert _ids(harness, writer, forMe="true") == []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"state": "waiting"}, 'state: "waiting" is not one of open, corrected, dismissed, erased.'),
        ({"limit": 201}, "limit is from 0 to 200."),
        ({"limit": -1}, "limit is from 0 to 200."),
        ({"ruleId": "x"}, 'ruleId: "x" is not an id.'),
        ({"agentId": "x"}, 'agentId: "x" is not an id.'),
        ({"correctorGroupId": "x"}, 'correctorGroupId: "x" is not an id.'),
        (
            {"addedAfter": "2026-01-01T00:00:00"},
            'addedAfter: "2026-01-01T00:00:00" needs a timezone, such as Z or +00:00.',
        ),
        ({"closedAfter": "soon"}, 'closedAfter: "soon" is not an ISO 8601 time.'),
        ({"cursor": "nope"}, '"nope" is not a cursor this list gave out.'),
    ],
)
def test_a_broken_filter_is_refused(harness: Harness, params: dict[str, Any], message: str) -> None:
    _error(
        harness.client.get(_queue(harness), params=params, headers=harness.admin), 400, "bad-input", message
    )


def test_reading_the_queue_takes_read_access_to_its_project(harness: Harness) -> None:
    _rule(harness, "Everything")
    _run(harness)
    reader = harness.caller("reader", role="read")
    [item] = _page(harness, reader)["data"]
    assert item["can"] == {"dismiss": False, "reopen": False}
    _error(harness.client.get(_queue(harness), headers=harness.caller("stranger")), 404, "project-not-found")
    _error(
        harness.client.get("/v1/projects/nope/expert-queue", headers=harness.admin),
        400,
        "bad-input",
        '"nope" isn\'t a project id',
    )
    _error(
        harness.client.get(f"/v1/projects/{uuid.uuid4()}/expert-queue", headers=harness.admin),
        404,
        "project-not-found",
    )


# ---------------------------------------------------------------------------------- dismiss and reopen


def test_dismiss_takes_a_run_out_and_reopen_puts_it_back(harness: Harness) -> None:
    _rule(harness, "Everything")
    run_id = _run(harness)["id"]
    headers = {**harness.admin, "Idempotency-Key": "dismiss-1"}
    dismissed = _post(harness, run_id, "dismiss", headers, json={"reason": "A test order"})
    assert dismissed.status_code == 200, dismissed.text
    item = dismissed.json()
    assert (item["state"], item["reason"], item["closedBy"]) == (
        "dismissed",
        "A test order",
        harness.admin_id,
    )
    assert item["can"] == {"dismiss": False, "reopen": True}
    assert item == _page(harness)["data"][0]
    replayed = _post(harness, run_id, "dismiss", headers, json={"reason": "A test order"})
    assert replayed.json() == item
    assert replayed.headers["Idempotent-Replayed"] == "true"

    _error(
        _post(harness, run_id, "dismiss"),
        409,
        "queue-item-not-open",
        f'Run "{run_id}" is dismissed in the expert queue: only open items can be dismissed.',
    )
    reopened = _post(harness, run_id, "reopen")
    assert reopened.status_code == 200, reopened.text
    item = reopened.json()
    assert item["state"] == "open"
    assert not {"reason", "closedAt", "closedBy"} & set(item)
    assert item["can"] == {"dismiss": True, "reopen": False}
    _error(
        _post(harness, run_id, "reopen"),
        409,
        "queue-item-not-open",
        f'Run "{run_id}" is open in the expert queue: only dismissed items can be reopened.',
    )
    # Without a body, and without a reason.
    assert "reason" not in _post(harness, run_id, "dismiss").json()


def test_dismiss_and_reopen_take_write_access_and_a_queued_run(harness: Harness) -> None:
    _rule(harness, "Everything", when={"versions": ["v1"]})
    run_id = _run(harness)["id"]
    never_queued = _run(harness, agentVersion="v2")["id"]
    reader = harness.caller("reader", role="read")
    _error(_post(harness, run_id, "dismiss", reader), 403, "permission-denied")
    _error(_post(harness, run_id, "reopen", reader), 403, "permission-denied")
    for ident in (never_queued, str(uuid.uuid4())):
        _error(
            _post(harness, ident, "dismiss"),
            404,
            "queue-item-not-found",
            f'Run "{ident}" is not in the expert queue of this project.',
        )
    _error(_post(harness, "abc", "reopen"), 404, "queue-item-not-found")
    _error(
        _post(harness, run_id, "dismiss", json={"reason": "x" * 501}),
        400,
        "bad-input",
        "reason: String should have at most 500 characters",
    )
    _error(_post(harness, run_id, "dismiss", json={"why": "x"}), 400, "bad-input", "Unknown field(s): why.")
    assert _page(harness)["data"][0]["state"] == "open"
