"""Queue rules on /v1/projects/{projectId}/queue-rules, over HTTP against the real app on both stores:
making, reading and changing them (versions and what each changed), stopping them, what a rule matches
as runs complete, and trying one on recent runs (`preview`) or catching it up (`queue-recent`)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from redline.groups import service as groups
from redline.groups.schemas import GroupIn
from redline.identity.models import Principal
from redline.identity.service import Actor
from redline.queues.matching import sampled
from tests.conftest import Harness


def _rules_path(harness: Harness, *tail: str) -> str:
    return "/".join([f"/v1/projects/{harness.project_id}/queue-rules", *tail])


def _create(harness: Harness, headers: dict[str, str] | None = None, **body: Any) -> Any:
    return harness.client.post(
        _rules_path(harness), json={"name": "everything", **body}, headers=headers or harness.admin
    )


def _made(harness: Harness, **body: Any) -> dict[str, Any]:
    answer = _create(harness, **body)
    assert answer.status_code == 201, answer.text
    made: dict[str, Any] = answer.json()
    return made


def _patch(harness: Harness, rule_id: str, headers: dict[str, str] | None = None, **body: Any) -> Any:
    return harness.client.patch(_rules_path(harness, rule_id), json=body, headers=headers or harness.admin)


def _error(answer: Any, status: int, code: str, message: str | None = None) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    error: dict[str, Any] = answer.json()["error"]
    assert error["code"] == code
    if message is not None:
        assert error["message"] == message
    return error


def _run(harness: Harness, **fields: Any) -> dict[str, Any]:
    answer = harness.client.post("/v1/runs", json=harness.run(**fields), headers=harness.admin)
    assert answer.status_code == 201, answer.text
    run: dict[str, Any] = answer.json()
    return run


def _items(harness: Harness, **params: Any) -> list[dict[str, Any]]:
    answer = harness.client.get(
        f"/v1/projects/{harness.project_id}/expert-queue",
        params={"limit": 200, **params},
        headers=harness.admin,
    )
    assert answer.status_code == 200, answer.text
    items: list[dict[str, Any]] = answer.json()["data"]
    return items


def _queued(harness: Harness, **params: Any) -> list[str]:
    return [item["runId"] for item in _items(harness, **params)]


def _group(harness: Harness, name: str) -> str:
    with harness.db.write() as session:
        admin = Actor.of(session.get_one(Principal, uuid.UUID(harness.admin_id)))
        body = GroupIn.model_validate(
            {"scope": {"kind": "project", "projectId": harness.project_id}, "name": name}
        )
        return str(groups.create(session, admin, body).group.id)


def _agent_id(harness: Harness) -> str:
    agent_id: str = _run(harness, status="running")["agentId"]
    return agent_id


# --------------------------------------------------------------------------------------- make and read


def test_a_rule_is_made_read_and_listed_oldest_first(harness: Harness) -> None:
    agent_id = _agent_id(harness)
    group_id = _group(harness, "expert")
    made = _made(
        harness,
        name="Support sample",
        when={
            "agentIds": [agent_id],
            "versions": ["pinned"],
            "status": ["completed"],
            "includeDryRuns": True,
        },
        sample=0.1,
        maxOpen=5,
        correctorGroupId=group_id,
    )
    assert made == {
        "ruleId": made["ruleId"],
        "projectId": harness.project_id,
        "version": 1,
        "name": "Support sample",
        "when": {
            "agentIds": [agent_id],
            "versions": ["pinned"],
            "status": ["completed"],
            "includeDryRuns": True,
        },
        "sample": 0.1,
        "maxOpen": 5,
        "correctorGroupId": group_id,
        "enabled": True,
        "createdBy": harness.admin_id,
        "createdAt": made["createdAt"],
        "openItems": 0,
    }
    plain = _made(harness, name="Everything")
    assert plain["when"] == {}
    assert plain["sample"] == 1.0
    assert plain["enabled"] is True
    assert "maxOpen" not in plain
    assert "correctorGroupId" not in plain
    assert "unregisteredAt" not in plain

    fetched = harness.client.get(_rules_path(harness, made["ruleId"]), headers=harness.admin)
    assert fetched.status_code == 200
    assert fetched.json() == made

    listed = harness.client.get(_rules_path(harness), headers=harness.admin).json()
    assert listed == {"data": [made, plain], "hasMore": False}
    first = harness.client.get(_rules_path(harness), params={"limit": 1}, headers=harness.admin).json()
    assert [rule["ruleId"] for rule in first["data"]] == [made["ruleId"]]
    assert first["hasMore"] is True
    rest = harness.client.get(
        _rules_path(harness), params={"limit": 1, "cursor": first["nextCursor"]}, headers=harness.admin
    ).json()
    assert rest == {"data": [plain], "hasMore": False}


def test_a_rule_is_made_once_under_one_idempotency_key(harness: Harness) -> None:
    headers = {**harness.admin, "Idempotency-Key": "rule-1"}
    first = _create(harness, headers, name="Once")
    again = _create(harness, headers, name="Once")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert len(harness.client.get(_rules_path(harness), headers=harness.admin).json()["data"]) == 1
    _error(_create(harness, headers, name="Other"), 409, "idempotency-key-body-mismatch")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "x", "colour": "red", "size": 3}, "Unknown field(s): colour, size."),
        ({"name": " "}, "name: a name of 1 to 200 characters."),
        ({"name": "x" * 201}, "name: a name of 1 to 200 characters."),
        (
            {"when": {"agentIds": [str(uuid.UUID(int=1))], "flowIds": [str(uuid.UUID(int=2))]}},
            "when: give agentIds or flowIds, not both.",
        ),
        ({"when": {"agentIds": []}}, "when.agentIds: a list of 1 to 50 ids."),
        ({"when": {"agentIds": ["a1"]}}, 'when.agentIds[0]: "a1" is not an id.'),
        (
            {"when": {"agentIds": [str(uuid.UUID(int=7))]}},
            f'when.agentIds[0]: no agent "{uuid.UUID(int=7)}" in this project.',
        ),
        (
            {"when": {"flowIds": [str(uuid.UUID(int=7))]}},
            f'when.flowIds[0]: no flow "{uuid.UUID(int=7)}" in this project.',
        ),
        (
            {"when": {"status": ["failed"]}},
            'when.status: only ["completed"]: only a completed run can be corrected.',
        ),
        (
            {"when": {"status": ["completed", "failed"]}},
            'when.status: only ["completed"]: only a completed run can be corrected.',
        ),
        (
            {"when": {"versions": ["pinned", "1.0"]}},
            'when.versions: "pinned" stands alone: it follows the pinned version.',
        ),
        ({"when": {"includeDryRuns": "yes"}}, "when.includeDryRuns: true or false."),
        ({"when": {"colour": 1}}, "when: unknown field(s): colour."),
        ({"sample": 0}, "sample: a share of matching runs, more than 0 and at most 1 (0.05 for 5%)."),
        ({"sample": 1.5}, "sample: a share of matching runs, more than 0 and at most 1 (0.05 for 5%)."),
        ({"maxOpen": 0}, "maxOpen: a whole number from 1 to 10,000, or null for no cap."),
        ({"maxOpen": 10_001}, "maxOpen: a whole number from 1 to 10,000, or null for no cap."),
    ],
)
def test_a_broken_rule_is_refused_with_its_sentence(
    harness: Harness, body: dict[str, Any], message: str
) -> None:
    error = _error(_create(harness, **body), 400, "bad-input", message)
    assert error["issues"][0]["message"] == message
    assert harness.client.get(_rules_path(harness), headers=harness.admin).json()["data"] == []


def test_a_rule_needs_a_name_a_project_and_a_group_it_can_want(harness: Harness) -> None:
    answer = harness.client.post(_rules_path(harness), json={}, headers=harness.admin)
    _error(answer, 400, "bad-input", "name: Field required")
    answer = harness.client.post("/v1/projects/nope/queue-rules", json={"name": "x"}, headers=harness.admin)
    _error(answer, 400, "bad-input", '"nope" isn\'t a project id')
    unknown = str(uuid.uuid4())
    answer = harness.client.post(
        f"/v1/projects/{unknown}/queue-rules", json={"name": "x"}, headers=harness.admin
    )
    _error(answer, 404, "project-not-found")
    _error(_create(harness, correctorGroupId=str(uuid.uuid4())), 404, "corrector-group-not-found")


def test_reading_takes_read_access_and_changing_takes_write(harness: Harness) -> None:
    rule = _made(harness)
    reader = harness.caller("reader", role="read")
    stranger = harness.caller("stranger")
    assert harness.client.get(_rules_path(harness), headers=reader).status_code == 200
    assert harness.client.get(_rules_path(harness, rule["ruleId"]), headers=reader).status_code == 200
    assert harness.client.get(_rules_path(harness, "preview"), headers=reader).status_code == 200
    _error(_create(harness, reader), 403, "permission-denied")
    _error(_patch(harness, rule["ruleId"], reader, name="x"), 403, "permission-denied")
    for tail in ("unregister", "queue-recent"):
        answer = harness.client.post(_rules_path(harness, rule["ruleId"], tail), headers=reader)
        _error(answer, 403, "permission-denied")
    _error(harness.client.get(_rules_path(harness), headers=stranger), 404, "project-not-found")
    writer = harness.caller("writer", role="write")
    assert _create(harness, writer).status_code == 201


def test_an_unknown_rule_is_not_found(harness: Harness) -> None:
    unknown = str(uuid.uuid4())
    for path in (_rules_path(harness, unknown), _rules_path(harness, unknown, "versions")):
        _error(
            harness.client.get(path, headers=harness.admin),
            404,
            "queue-rule-not-found",
            f'No queue rule "{unknown}" in this project.',
        )
    _error(
        harness.client.get(_rules_path(harness, "abc"), headers=harness.admin),
        404,
        "queue-rule-not-found",
        'No queue rule "abc" in this project.',
    )
    _error(_patch(harness, unknown, name="x"), 404, "queue-rule-not-found")
    # A rule of another project isn't one of this project's.
    rule = _made(harness)
    project = harness.client.post("/v1/projects", json={"name": "other"}, headers=harness.admin).json()
    answer = harness.client.get(
        f"/v1/projects/{project['id']}/queue-rules/{rule['ruleId']}", headers=harness.admin
    )
    _error(answer, 404, "queue-rule-not-found")


# ------------------------------------------------------------------------------------ change, versions


def test_a_change_writes_a_version_and_the_versions_say_what_changed(harness: Harness) -> None:
    group_id = _group(harness, "expert")
    rule = _made(harness, name="Echo half", sample=0.5, maxOpen=5)
    rule_id = rule["ruleId"]
    writer = harness.caller("writer", role="write")
    second = _patch(harness, rule_id, writer, maxOpen=None, correctorGroupId=group_id)
    assert second.status_code == 200, second.text
    v2 = second.json()
    assert (v2["version"], v2["name"], v2["sample"], v2["correctorGroupId"]) == (
        2,
        "Echo half",
        0.5,
        group_id,
    )
    assert "maxOpen" not in v2
    assert v2["createdBy"] != harness.admin_id
    v3 = _patch(harness, rule_id, name="Echo all", sample=1, correctorGroupId=None).json()
    assert (v3["version"], v3["name"], v3["sample"]) == (3, "Echo all", 1.0)
    assert "correctorGroupId" not in v3
    assert harness.client.get(_rules_path(harness, rule_id), headers=harness.admin).json() == v3

    versions = harness.client.get(_rules_path(harness, rule_id, "versions"), headers=harness.admin).json()
    assert versions["hasMore"] is False
    assert [v["version"] for v in versions["data"]] == [3, 2, 1]
    assert [v["createdBy"] for v in versions["data"]] == [harness.admin_id, v2["createdBy"], harness.admin_id]
    assert versions["data"][0]["changes"] == [
        {"field": "name", "from": "Echo half", "to": "Echo all"},
        {"field": "sample", "from": 0.5, "to": 1.0},
        {"field": "correctorGroupId", "from": group_id, "to": None},
    ]
    assert versions["data"][1]["changes"] == [
        {"field": "maxOpen", "from": 5, "to": None},
        {"field": "correctorGroupId", "from": None, "to": group_id},
    ]
    assert versions["data"][2]["changes"] == []
    assert versions["data"][2]["maxOpen"] == 5
    assert "openItems" not in versions["data"][2]

    # A page's last version still says what it changed from the one on the next page.
    first = harness.client.get(
        _rules_path(harness, rule_id, "versions"), params={"limit": 2}, headers=harness.admin
    ).json()
    assert [v["version"] for v in first["data"]] == [3, 2]
    assert first["hasMore"] is True
    assert first["data"][1]["changes"] == versions["data"][1]["changes"]
    rest = harness.client.get(
        _rules_path(harness, rule_id, "versions"),
        params={"limit": 2, "cursor": first["nextCursor"]},
        headers=harness.admin,
    ).json()
    assert [v["version"] for v in rest["data"]] == [1]
    assert rest["hasMore"] is False


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {},
            "Send at least one of name, when, sample, maxOpen, correctorGroupId, correctorsWanted and "
            "enabled.",
        ),
        ({"name": None}, "name: can't be null: only maxOpen and correctorGroupId can be removed."),
        ({"when": None}, "when: can't be null: only maxOpen and correctorGroupId can be removed."),
        ({"sample": None}, "sample: can't be null: only maxOpen and correctorGroupId can be removed."),
        ({"maxOpen": -1}, "maxOpen: a whole number from 1 to 10,000, or null for no cap."),
        (
            {"when": {"status": ["cancelled"]}},
            'when.status: only ["completed"]: only a completed run can be corrected.',
        ),
        ({"scope": "x"}, "Unknown field(s): scope."),
    ],
)
def test_a_broken_change_is_refused_and_writes_no_version(
    harness: Harness, body: dict[str, Any], message: str
) -> None:
    rule = _made(harness)
    _error(_patch(harness, rule["ruleId"], **body), 400, "bad-input", message)
    versions = harness.client.get(
        _rules_path(harness, rule["ruleId"], "versions"), headers=harness.admin
    ).json()
    assert [v["version"] for v in versions["data"]] == [1]


def test_a_change_applies_to_runs_completed_after_it(harness: Harness) -> None:
    rule = _made(harness, when={"versions": ["v1"]})
    first = _run(harness)
    _patch(harness, rule["ruleId"], when={"versions": ["v2"]})
    _run(harness)  # v1: no longer matched
    third = _run(harness, agentVersion="v2")
    assert _queued(harness) == [first["id"], third["id"]]
    items = harness.client.get(
        f"/v1/projects/{harness.project_id}/expert-queue", headers=harness.admin
    ).json()
    assert [item["rules"][0]["version"] for item in items["data"]] == [1, 2]
    assert (
        harness.client.get(_rules_path(harness, rule["ruleId"]), headers=harness.admin).json()["openItems"]
        == 2
    )


# ------------------------------------------------------------------------------------------- unregister


def test_an_unregistered_rule_queues_nothing_more_and_keeps_what_it_queued(harness: Harness) -> None:
    rule = _made(harness)
    rule_id = rule["ruleId"]
    before = _run(harness)
    headers = {**harness.admin, "Idempotency-Key": "stop"}
    stopped = harness.client.post(_rules_path(harness, rule_id, "unregister"), headers=headers)
    assert stopped.status_code == 200
    assert stopped.json() == {"ruleId": rule_id, "unregistered": True}
    replayed = harness.client.post(_rules_path(harness, rule_id, "unregister"), headers=headers)
    assert replayed.json() == stopped.json()
    assert replayed.headers["Idempotent-Replayed"] == "true"

    _run(harness)
    assert _queued(harness) == [before["id"]]
    fetched = harness.client.get(_rules_path(harness, rule_id), headers=harness.admin).json()
    assert "unregisteredAt" in fetched
    assert fetched["openItems"] == 1
    assert harness.client.get(_rules_path(harness), headers=harness.admin).json()["data"] == []
    versions = harness.client.get(_rules_path(harness, rule_id, "versions"), headers=harness.admin).json()
    assert [v["version"] for v in versions["data"]] == [1]

    sentence = f'Queue rule "{rule_id}" is unregistered: it queues nothing more and can\'t be changed.'
    _error(_patch(harness, rule_id, name="again"), 409, "queue-rule-unregistered", sentence)
    again = harness.client.post(_rules_path(harness, rule_id, "unregister"), headers=harness.admin)
    _error(again, 409, "queue-rule-unregistered", sentence)
    recent = harness.client.post(_rules_path(harness, rule_id, "queue-recent"), headers=harness.admin)
    _error(recent, 409, "queue-rule-unregistered", sentence)


def test_a_disabled_rule_queues_nothing_until_enabled(harness: Harness) -> None:
    rule = _made(harness, enabled=False)
    _run(harness)
    assert _queued(harness) == []
    _patch(harness, rule["ruleId"], enabled=True)
    later = _run(harness)
    assert _queued(harness) == [later["id"]]


# -------------------------------------------------------------------------------------- what it matches


def test_an_agent_rule_takes_the_agents_own_completed_runs_only(harness: Harness) -> None:
    agent_id = _agent_id(harness)
    _made(harness, when={"agentIds": [agent_id]})
    own = _run(harness)
    _run(harness, agent=None, flow="checkout-flow")
    _run(harness, agent="billing-agent")
    _run(harness, status="failed")
    _run(harness, dryRun=True)
    assert _queued(harness) == [own["id"]]


def test_a_flow_rule_takes_the_flows_runs(harness: Harness) -> None:
    flow_id = _run(harness, agent=None, flow="checkout-flow", status="running")["flowId"]
    _made(harness, when={"flowIds": [flow_id]})
    _run(harness)
    flow_run = _run(harness, agent=None, flow="checkout-flow")
    assert _queued(harness) == [flow_run["id"]]
    [item] = harness.client.get(
        f"/v1/projects/{harness.project_id}/expert-queue", headers=harness.admin
    ).json()["data"]
    assert item["flowId"] == flow_id
    assert "agentId" not in item


def test_dry_runs_are_taken_only_when_the_rule_includes_them(harness: Harness) -> None:
    rule = _made(harness)
    _run(harness, dryRun=True)
    assert _queued(harness) == []
    _patch(harness, rule["ruleId"], when={"includeDryRuns": True})
    dry = _run(harness, dryRun=True)
    assert _queued(harness) == [dry["id"]]


def test_pinned_takes_runs_that_ran_the_pinned_version(harness: Harness) -> None:
    agent_id = _agent_id(harness)
    _made(harness, when={"agentIds": [agent_id], "versions": ["pinned"]})
    pinned = _run(harness, versionSource="pinned")
    _run(harness, versionSource="named")
    _run(harness)  # doesn't say how its version was chosen
    answer = harness.client.patch(
        f"/v1/agents/{agent_id}", json={"pinnedVersion": "v7"}, headers=harness.admin
    )
    assert answer.status_code == 200, answer.text
    follows_pin = _run(harness, agentVersion=None)
    assert _queued(harness) == [pinned["id"], follows_pin["id"]]


def test_named_versions_take_those_versions_exactly(harness: Harness) -> None:
    _made(harness, when={"versions": ["1.0.0", "1.1.0"]})
    runs = [_run(harness, agentVersion=version) for version in ("1.0.0", "1.0", "1.1.0", "2.0.0")]
    assert _queued(harness) == [runs[0]["id"], runs[2]["id"]]


# ---------------------------------------------------------------------------------------------- preview


def _preview(harness: Harness, headers: dict[str, str] | None = None, **params: Any) -> Any:
    return harness.client.get(
        _rules_path(harness, "preview"), params=params, headers=headers or harness.admin
    )


def test_preview_counts_recent_matches_with_the_sample_and_no_cap(harness: Harness) -> None:
    runs = [_run(harness) for _ in range(30)]
    for _ in range(5):
        _run(harness, agent="billing-agent")
    _run(harness, status="failed")
    erased = _run(harness)
    assert harness.client.post(f"/v1/runs/{erased['id']}/erase", headers=harness.admin).status_code == 200
    agent_id = runs[0]["agentId"]

    whole = _preview(harness).json()
    assert whole == {"considered": 36, "matched": 35, "estimate": True}
    mine = _preview(harness, agentIds=agent_id).json()
    assert mine == {"considered": 36, "matched": 30, "estimate": True}
    assert _preview(harness, agentIds=agent_id, sample=0.5).json() == {
        "considered": 36,
        "matched": 15,
        "estimate": True,
    }
    assert _preview(harness, last=10, agentIds=agent_id).json()["considered"] == 10
    assert _preview(harness, status="completed", versions="v1", includeDryRuns="true").json()["matched"] == 35

    # With a rule, the sample is drawn as the rule draws it: what the rule itself would take.
    rule = _made(harness, when={"agentIds": [agent_id]}, sample=0.5, maxOpen=1)
    rule_uuid = uuid.UUID(rule["ruleId"])
    taken = sum(1 for run in runs if sampled(rule_uuid, uuid.UUID(run["id"]), 0.5))
    assert 0 < taken < 30
    assert _preview(harness, ruleId=rule["ruleId"]).json() == {
        "considered": 36,
        "matched": taken,
        "estimate": False,
    }
    quarter = sum(1 for run in runs if sampled(rule_uuid, uuid.UUID(run["id"]), 0.25))
    by_rule = _preview(harness, ruleId=rule["ruleId"], sample=0.25, agentIds=agent_id).json()
    assert by_rule == {"considered": 36, "matched": quarter, "estimate": False}
    # ... and what queue-recent then queues, cap or no cap.
    recent = harness.client.post(
        _rules_path(harness, rule["ruleId"], "queue-recent"), json={"last": 36}, headers=harness.admin
    )
    assert recent.json() == {"queued": taken, "alreadyQueued": 0, "alreadyReviewed": 0}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"last": 501}, "last: from 1 to 500 runs."),
        ({"last": 0}, "last: from 1 to 500 runs."),
        ({"sample": 2}, "sample: a share of matching runs, more than 0 and at most 1 (0.05 for 5%)."),
        ({"status": "failed"}, 'when.status: only ["completed"]: only a completed run can be corrected.'),
        ({"agentIds": "x"}, 'when.agentIds[0]: "x" is not an id.'),
        ({"ruleId": "x"}, 'ruleId: "x" is not an id.'),
    ],
)
def test_a_broken_preview_is_refused(harness: Harness, params: dict[str, Any], message: str) -> None:
    _error(_preview(harness, **params), 400, "bad-input", message)


def test_preview_of_an_unknown_rule_is_not_found(harness: Harness) -> None:
    _error(_preview(harness, ruleId=str(uuid.uuid4())), 404, "queue-rule-not-found")


# ----------------------------------------------------------------------------------------- queue-recent


def _recent(harness: Harness, rule_id: str, **body: Any) -> dict[str, Any]:
    answer = harness.client.post(
        _rules_path(harness, rule_id, "queue-recent"), json=body, headers=harness.admin
    )
    assert answer.status_code == 200, answer.text
    counts: dict[str, Any] = answer.json()
    return counts


def test_queue_recent_counts_each_match_once_in_three_ways(harness: Harness) -> None:
    runs = [_run(harness) for _ in range(4)]
    _run(harness, status="failed")
    rule = _made(harness)
    rule_id = rule["ruleId"]
    # Corrected before anything queued it: there is nothing left to wait for.
    made = harness.client.post(
        "/v1/corrections", json={"runId": runs[0]["id"], "answer": "right"}, headers=harness.admin
    )
    assert made.status_code == 201, made.text

    assert _recent(harness, rule_id) == {"queued": 3, "alreadyQueued": 0, "alreadyReviewed": 1}
    assert _queued(harness) == [run["id"] for run in runs[1:][::-1]]
    dismissed = harness.client.post(
        f"/v1/projects/{harness.project_id}/expert-queue/{runs[1]['id']}/dismiss", headers=harness.admin
    )
    assert dismissed.status_code == 200, dismissed.text
    assert _recent(harness, rule_id, last=1000) == {"queued": 0, "alreadyQueued": 2, "alreadyReviewed": 2}
    # An erased run isn't a match: it is in none of the three.
    assert harness.client.post(f"/v1/runs/{runs[2]['id']}/erase", headers=harness.admin).status_code == 200
    assert _recent(harness, rule_id) == {"queued": 0, "alreadyQueued": 1, "alreadyReviewed": 2}
    # Queued for this rule too, even on an item already waiting for another.
    other = _made(harness, name="other")
    assert _recent(harness, other["ruleId"]) == {"queued": 1, "alreadyQueued": 0, "alreadyReviewed": 2}
    [item] = _items(harness, state="open")
    assert [rule["ruleId"] for rule in item["rules"]] == [rule_id, other["ruleId"]]


def test_queue_recent_ignores_the_cap(harness: Harness) -> None:
    for _ in range(3):
        _run(harness)
    capped = _made(harness, maxOpen=1)
    assert _recent(harness, capped["ruleId"]) == {"queued": 3, "alreadyQueued": 0, "alreadyReviewed": 0}
    assert (
        harness.client.get(_rules_path(harness, capped["ruleId"]), headers=harness.admin).json()["openItems"]
        == 3
    )
    # ... and the rule then adds nothing at run end until fewer than maxOpen wait.
    _run(harness)
    assert len(_queued(harness)) == 3


def test_queue_recent_takes_the_last_runs_those_since_or_the_last_of_those(harness: Harness) -> None:
    now = datetime.now(UTC)
    old = [
        _run(
            harness,
            startedAt=(now - timedelta(days=3, minutes=i)).isoformat(),
            endedAt=(now - timedelta(days=3)).isoformat(),
        )
        for i in range(3)
    ]
    new = [
        _run(
            harness,
            startedAt=(now - timedelta(hours=1, minutes=i)).isoformat(),
            endedAt=(now - timedelta(minutes=30)).isoformat(),
        )
        for i in range(3)
    ]
    rule = _made(harness)
    since = (now - timedelta(days=1)).isoformat()
    assert _recent(harness, rule["ruleId"], since=since, last=2)["queued"] == 2
    assert set(_queued(harness)) == {new[0]["id"], new[1]["id"]}
    assert _recent(harness, rule["ruleId"], since=since) == {
        "queued": 1,
        "alreadyQueued": 2,
        "alreadyReviewed": 0,
    }
    assert _recent(harness, rule["ruleId"], last=4) == {"queued": 1, "alreadyQueued": 3, "alreadyReviewed": 0}
    assert set(_queued(harness)) == {run["id"] for run in [*new, old[0]]}
    future = (now + timedelta(days=1)).isoformat()
    assert _recent(harness, rule["ruleId"], since=future) == {
        "queued": 0,
        "alreadyQueued": 0,
        "alreadyReviewed": 0,
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"last": 1001}, "last: from 1 to 1,000 runs."),
        ({"last": 0}, "last: from 1 to 1,000 runs."),
        ({"since": "2026-01-01T00:00:00"}, "since: Input should have timezone info"),
        ({"until": "2026-01-01T00:00:00Z"}, "Unknown field(s): until."),
    ],
)
def test_a_broken_queue_recent_is_refused(harness: Harness, body: dict[str, Any], message: str) -> None:
    rule = _made(harness)
    answer = harness.client.post(
        _rules_path(harness, rule["ruleId"], "queue-recent"), json=body, headers=harness.admin
    )
    _error(answer, 400, "bad-input", message)
