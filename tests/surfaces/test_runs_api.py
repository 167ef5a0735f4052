"""Runs on the corrections surface, driven over HTTP against the real app on both stores."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.conftest import Harness


def _post(harness: Harness, path: str, body: Any, headers: dict[str, str] | None = None) -> Any:
    return harness.client.post(path, json=body, headers=headers or harness.admin)


def _error(answer: Any) -> dict[str, Any]:
    body: dict[str, Any] = answer.json()["error"]
    assert body["requestId"] == answer.headers["x-request-id"]
    return body


def test_create_and_read_back_a_run(harness: Harness) -> None:
    answer = _post(harness, "/v1/runs", harness.run(externalId="ext-1", dryRun=True))
    assert answer.status_code == 201, answer.text
    run = answer.json()
    assert run["externalId"] == "ext-1"
    # Named as kindgi's client can read it too: no `agent` in an answer, and `flowId` always there.
    assert (run["agentName"], "agent" in run, run["flowId"], run["flowVersion"]) == (
        "support-agent",
        False,
        "",
        "",
    )
    assert run["agentId"]
    assert run["tenantId"] == harness.client.get("/v1/me", headers=harness.admin).json()["workspaceId"]
    assert run["dryRun"] is True
    assert [step["index"] for step in run["steps"]] == [0, 1, 2, 3, 4]
    assert run["steps"][2]["toolInput"] == {"order_id": "1182"}
    assert run["steps"][3]["toolCallId"] == "call_1"
    fetched = harness.client.get(f"/v1/runs/{run['id']}", headers=harness.admin)
    assert fetched.status_code == 200
    assert fetched.json() == run


def test_a_run_keeps_its_spans_and_times(harness: Harness) -> None:
    spans = [
        {"spanId": "root", "kind": "agent", "name": "support-agent", "startedAt": "2026-11-01T10:00:00Z"},
        {
            "spanId": "s1",
            "parentSpanId": "root",
            "kind": "tool",
            "name": "lookup_order",
            "attributes": {"order_id": "1182"},
            "startedAt": "2026-11-01T10:00:01+00:00",
            "endedAt": "2026-11-01T10:00:02+00:00",
        },
    ]
    run = _post(
        harness,
        "/v1/runs",
        harness.run(spans=spans, startedAt="2026-11-01T12:00:00+02:00", endedAt="2026-11-01T10:00:05Z"),
    ).json()
    assert run["startedAt"] == "2026-11-01T10:00:00+00:00"
    assert run["spans"][1]["parentSpanId"] == "root"
    assert run["spans"][1]["attributes"] == {"order_id": "1182"}
    assert run["spans"][1]["endedAt"] == "2026-11-01T10:00:02+00:00"


def test_a_flow_run_registers_the_flow(harness: Harness) -> None:
    body = harness.run(flow="triage", agent=None)
    del body["agent"]
    run = _post(harness, "/v1/runs", body).json()
    assert (run["flowName"], run["flowVersion"], "flow" in run) == ("triage", "v1", False)
    again = _post(harness, "/v1/runs", {**body, "flow": None, "flowId": run["flowId"]}).json()
    assert again["flowId"] == run["flowId"]


def test_reposting_an_external_id_replaces_the_run(harness: Harness) -> None:
    first = _post(harness, "/v1/runs", harness.run(externalId="ext-1")).json()
    second = _post(
        harness,
        "/v1/runs",
        harness.run(externalId="ext-1", status="failed", steps=[{"role": "user", "content": "hi"}]),
    ).json()
    assert second["id"] == first["id"]
    assert second["status"] == "failed"
    assert [s["content"] for s in second["steps"]] == ["hi"]
    listed = harness.client.get("/v1/runs", headers=harness.admin).json()
    assert [r["id"] for r in listed["data"]] == [first["id"]]


def test_batch_stores_every_run(harness: Harness) -> None:
    runs = [harness.run(externalId=f"b-{i}") for i in range(5)]
    answer = _post(harness, "/v1/runs/batch", {"runs": runs})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["count"] == 5
    assert [r["externalId"] for r in body["data"]] == [f"b-{i}" for i in range(5)]
    assert all(r["stepCount"] == 5 and r["replaced"] is False for r in body["data"])
    again = _post(harness, "/v1/runs/batch", {"runs": runs[:2]}).json()
    assert [r["replaced"] for r in again["data"]] == [True, True]


def test_a_bad_run_in_a_batch_writes_nothing_and_names_index_and_field(harness: Harness) -> None:
    runs = [harness.run(externalId=f"b-{i}") for i in range(4)]
    runs[2]["steps"][1]["role"] = "bot"
    answer = _post(harness, "/v1/runs/batch", {"runs": runs})
    assert answer.status_code == 400
    error = _error(answer)
    assert error["code"] == "bad-input"
    assert error["details"] == {"field": "steps[1].role", "index": 2}
    assert error["message"].startswith("runs[2].steps[1].role: ")
    assert harness.client.get("/v1/runs", headers=harness.admin).json()["data"] == []


def test_a_batch_failing_in_the_service_writes_nothing(harness: Harness) -> None:
    runs = [harness.run(externalId="same"), harness.run(externalId="other"), harness.run(externalId="same")]
    answer = _post(harness, "/v1/runs/batch", {"runs": runs})
    assert answer.status_code == 400
    assert _error(answer)["details"] == {"index": 2, "field": "externalId"}
    unknown_agent = [harness.run(), harness.run(agent=None, agentId="00000000-0000-0000-0000-000000000001")]
    answer = _post(harness, "/v1/runs/batch", {"runs": unknown_agent})
    assert answer.status_code == 400
    assert _error(answer)["details"] == {"index": 1, "field": "agentId"}
    assert harness.client.get("/v1/runs", headers=harness.admin).json()["data"] == []


def test_batch_limits(harness: Harness) -> None:
    assert _post(harness, "/v1/runs/batch", {"runs": []}).status_code == 400
    many = {"runs": [{"projectId": harness.project_id, "status": "completed"}] * 1001}
    answer = _post(harness, "/v1/runs/batch", many)
    assert answer.status_code == 400
    assert "1000" in _error(answer)["message"]


@pytest.mark.parametrize(
    ("change", "field", "fragment"),
    [
        ({"status": "done"}, "status", "'running'"),
        ({"projectId": "acme"}, "projectId", '"acme" isn\'t a project id'),
        ({"agentVersoin": "v2"}, "agentVersoin", "Extra inputs are not permitted"),
        ({"flow": "triage"}, "body", "a run comes from an agent or a flow, not both"),
        ({"startedAt": "2026-11-01T10:00:00"}, "startedAt", "timezone"),
        ({"steps": [{"role": "user", "content": 5}]}, "steps[0].content", "string"),
        ({"steps": [{"role": "user", "toolInput": {"a": 1}}]}, "steps[0]", "toolInput needs toolName"),
        (
            {"spans": [{"spanId": "a", "name": "x"}, {"spanId": "a", "name": "y"}]},
            "body",
            '"a" appears twice',
        ),
    ],
)
def test_bad_runs_are_refused_naming_the_field(
    harness: Harness, change: dict[str, Any], field: str, fragment: str
) -> None:
    answer = _post(harness, "/v1/runs", harness.run(**change))
    assert answer.status_code == 400, answer.text
    error = _error(answer)
    assert error["code"] == "bad-input"
    assert fragment in error["message"]
    assert error["details"]["field"] == field


def test_project_id_sentence_is_verbatim(harness: Harness) -> None:
    answer = _post(harness, "/v1/runs", harness.run(projectId="acme"))
    assert _error(answer)["message"] == 'projectId: "acme" isn\'t a project id'
    answer = harness.client.get("/v1/runs", params={"projectId": "acme"}, headers=harness.admin)
    assert answer.status_code == 400
    assert _error(answer)["message"] == '"acme" isn\'t a project id'


def test_malformed_json_is_a_400(harness: Harness) -> None:
    answer = harness.client.post(
        "/v1/runs", content=b'{"projectId": ', headers={**harness.admin, "content-type": "application/json"}
    )
    assert answer.status_code == 400
    error = _error(answer)
    assert error["code"] == "bad-input"
    assert error["message"].startswith("The body is not valid JSON")


def test_a_body_over_the_limit_is_a_413(harness: Harness) -> None:
    big = harness.run(input={"blob": "x" * (harness.settings.max_body_bytes + 10)})
    answer = _post(harness, "/v1/runs", big)
    assert answer.status_code == 413
    assert _error(answer)["code"] == "payload-too-large"

    def chunks() -> Any:
        for _ in range(20):
            yield b"x" * 100_000

    streamed = harness.client.post("/v1/runs/batch", content=chunks(), headers=harness.admin)
    assert streamed.status_code == 413
    assert harness.client.get("/v1/runs", headers=harness.admin).json()["data"] == []


def test_unknown_runs_are_404(harness: Harness) -> None:
    for run_id in ("00000000-0000-0000-0000-000000000009", "not-a-uuid"):
        answer = harness.client.get(f"/v1/runs/{run_id}", headers=harness.admin)
        assert answer.status_code == 404
        error = _error(answer)
        assert error["code"] == "run-not-found"
        assert error["message"] == f'No run "{run_id}".'
    unknown_project = harness.run(projectId="00000000-0000-0000-0000-00000000000a")
    assert _post(harness, "/v1/runs", unknown_project).status_code == 404


def test_every_route_needs_a_token(harness: Harness) -> None:
    for method, path in [
        ("GET", "/v1/runs"),
        ("POST", "/v1/runs"),
        ("GET", "/v1/me"),
        ("GET", "/v1/projects"),
    ]:
        answer = harness.client.request(method, path, json={})
        assert answer.status_code == 401, path
        assert _error(answer)["code"] == "auth-missing"
    wrong = harness.client.get("/v1/runs", headers={"Authorization": "Bearer rl_nope"})
    assert wrong.status_code == 401
    assert _error(wrong)["code"] == "auth-invalid"


def test_roles_decide_what_a_member_may_do(harness: Harness) -> None:
    reader = harness.caller("reader", role="read")
    writer = harness.caller("writer", role="write")
    outsider = harness.caller("outsider")
    refused = _post(harness, "/v1/runs", harness.run(), reader)
    assert refused.status_code == 403
    assert _error(refused)["code"] == "permission-denied"
    run = _post(harness, "/v1/runs", harness.run(), writer).json()
    assert harness.client.get(f"/v1/runs/{run['id']}", headers=reader).status_code == 200
    assert harness.client.get(f"/v1/runs/{run['id']}", headers=outsider).status_code == 404
    assert harness.client.get("/v1/runs", headers=outsider).json()["data"] == []
    assert harness.client.post(f"/v1/runs/{run['id']}/erase", headers=writer).status_code == 403


def test_another_workspace_never_sees_ids(harness: Harness) -> None:
    from redline.identity import service as identity
    from redline.identity import workspaces
    from redline.identity.models import Principal

    run = _post(harness, "/v1/runs", harness.run()).json()
    with harness.db.write() as session:
        other = workspaces.new_workspace(session, "other")
        stranger = Principal(name="stranger", kind="user", workspace_id=other.id, workspace_admin=True)
        session.add(stranger)
        session.flush()
        actor = identity.Actor.of(stranger)
        secret = identity.create_token(session, actor, stranger.id, "t").secret
    headers = {"Authorization": f"Bearer {secret}"}
    for method, path in [
        ("GET", f"/v1/runs/{run['id']}"),
        ("POST", f"/v1/runs/{run['id']}/erase"),
        ("GET", f"/v1/runs?projectId={harness.project_id}"),
        ("PUT", f"/v1/projects/{harness.project_id}/members/{harness.admin_id}"),
    ]:
        answer = harness.client.request(method, path, headers=headers, json={"role": "read"})
        assert answer.status_code == 404, (method, path, answer.text)
    assert _post(harness, "/v1/runs", harness.run(), headers).status_code == 404


def test_erase_removes_content_and_keeps_identity(harness: Harness) -> None:
    spans = [{"spanId": "s", "name": "lookup_order", "attributes": {"secret": "x"}}]
    run = _post(
        harness, "/v1/runs", harness.run(externalId="e", metadata={"email": "a@b"}, spans=spans)
    ).json()
    answer = harness.client.post(f"/v1/runs/{run['id']}/erase", headers=harness.admin)
    assert answer.status_code == 200
    erased = harness.client.get(f"/v1/runs/{run['id']}", headers=harness.admin).json()
    for gone in ("input", "output", "metadata"):
        assert gone not in erased
    assert all(step["content"] == "" and "toolInput" not in step for step in erased["steps"])
    assert "attributes" not in erased["spans"][0]
    for kept in ("id", "externalId", "agentId", "agentVersion", "status", "startedAt"):
        assert erased[kept] == run[kept]
    assert [s["id"] for s in erased["steps"]] == [s["id"] for s in run["steps"]]
    assert erased["erasedAt"]
    assert erased["updatedAt"] != run["updatedAt"]


def test_list_filters_and_pages_newest_first(harness: Harness) -> None:
    made = []
    for i in range(7):
        made.append(
            _post(
                harness,
                "/v1/runs",
                harness.run(
                    startedAt=f"2026-11-0{i + 1}T10:00:00Z",
                    status="failed" if i % 3 == 0 else "completed",
                    agentVersion="v2" if i % 2 else "v1",
                    agent="support-agent" if i < 5 else "billing-agent",
                ),
            ).json()
        )
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        page = harness.client.get("/v1/runs", params=params, headers=harness.admin).json()
        seen += [r["id"] for r in page["data"]]
        assert "steps" not in page["data"][0]
        if not page["hasMore"]:
            assert "nextCursor" not in page
            break
        cursor = page["nextCursor"]
    assert seen == [r["id"] for r in reversed(made)]

    def ids(**params: Any) -> list[str]:
        answer = harness.client.get("/v1/runs", params=params, headers=harness.admin)
        assert answer.status_code == 200, answer.text
        return [r["id"] for r in answer.json()["data"]]

    assert ids(status="failed") == [made[6]["id"], made[3]["id"], made[0]["id"]]
    assert ids(status="failed,cancelled", agentVersion="v2") == [made[3]["id"]]
    assert ids(agent="billing-agent") == [made[6]["id"], made[5]["id"]]
    assert ids(agentId=made[6]["agentId"]) == [made[6]["id"], made[5]["id"]]
    assert ids(since="2026-11-06T00:00:00Z") == [made[6]["id"], made[5]["id"]]
    assert ids(until="2026-11-02T00:00:00+00:00") == [made[0]["id"]]
    assert ids(projectId=harness.project_id, limit=1) == [made[6]["id"]]
    assert ids(scopeKind="project", scopeId=harness.project_id, limit=1) == [made[6]["id"]]
    assert ids(scopeKind="tenant", limit=1) == [made[6]["id"]]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "done"}, "status"),
        ({"since": "yesterday"}, "since"),
        ({"until": "2026-11-01T00:00:00"}, "until"),
        ({"cursor": "bogus"}, "cursor"),
        ({"agentId": "x"}, "agentId"),
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
        ({"scopeKind": "org", "scopeId": "x"}, "scopeKind"),
        ({"scopeKind": "project"}, "scopeId"),
        ({"scopeKind": "project", "scopeId": "x"}, "projectId"),
        (
            {"scopeKind": "project", "scopeId": str(uuid.uuid4()), "projectId": str(uuid.uuid4())},
            "scopeId",
        ),
    ],
)
def test_bad_list_parameters_are_400(harness: Harness, params: dict[str, Any], field: str) -> None:
    answer = harness.client.get("/v1/runs", params=params, headers=harness.admin)
    assert answer.status_code == 400, answer.text
    assert _error(answer)["details"]["field"] == field


def test_unknown_routes_answer_in_the_surface_shape(harness: Harness) -> None:
    answer = harness.client.get("/v1/nothing-here", headers=harness.admin)
    assert answer.status_code == 404
    assert _error(answer)["code"] == "route-not-found"
    rm = harness.client.get("/api/v1/rm/nothing", headers=harness.admin)
    assert rm.status_code == 404
    assert set(rm.json()) == {"detail"}
    reviews = harness.client.get("/v2/nothing", headers=harness.admin)
    assert reviews.json()["code"] == 404
    assert "message" in reviews.json()


def test_any_json_number_round_trips(harness: Harness) -> None:
    huge = 123456789012345678901234567890
    body = harness.run(input={"id": huge, "ratio": 0.1, "nested": [{"n": -(2**70)}]})
    answer = harness.client.post("/v1/runs", json=body, headers=harness.admin)
    assert answer.status_code == 201, answer.text
    fetched = harness.client.get(f"/v1/runs/{answer.json()['id']}", headers=harness.admin).json()
    assert fetched["input"] == {"id": huge, "ratio": 0.1, "nested": [{"n": -(2**70)}]}


def test_a_run_without_a_version_takes_the_pinned_one(harness: Harness) -> None:
    first = harness.client.post("/v1/runs", json=harness.run(), headers=harness.admin).json()
    harness.client.patch(
        f"/v1/agents/{first['agentId']}", json={"pinnedVersion": "v7"}, headers=harness.admin
    )
    body = harness.run()
    del body["agentVersion"]
    pinned = harness.client.post("/v1/runs", json=body, headers=harness.admin).json()
    assert (pinned["agentVersion"], pinned["versionSource"]) == ("v7", "pinned")
    named = harness.client.post(
        "/v1/runs", json=harness.run(agentVersion="v8", versionSource="named"), headers=harness.admin
    ).json()
    assert (named["agentVersion"], named["versionSource"]) == ("v8", "named")
    batch = harness.client.post(
        "/v1/runs/batch",
        json={"runs": [body, {**body, "agent": None, "agentId": first["agentId"]}]},
        headers=harness.admin,
    ).json()
    for item in batch["data"]:
        run = harness.client.get(f"/v1/runs/{item['id']}", headers=harness.admin).json()
        assert run["agentVersion"] == "v7"


def test_nul_characters_are_refused_on_both_stores(harness: Harness) -> None:
    runs = [harness.run(), harness.run()]
    runs[1]["steps"][1]["content"] = "refund\x00please"
    answer = _post(harness, "/v1/runs/batch", {"runs": runs})
    assert answer.status_code == 400
    error = _error(answer)
    assert error["message"] == "runs[1].steps[1].content: text may not contain the NUL character (\\u0000)."
    assert error["details"] == {"index": 1, "field": "steps[1].content"}
    keyed = _post(harness, "/v1/runs", harness.run(metadata={"order_id": {"a\x00": 1}}))
    assert _error(keyed)["details"] == {"field": "metadata.order_id.a\x00"}
    listed = harness.client.get("/v1/runs", params={"agent": "x\x00"}, headers=harness.admin)
    assert _error(listed)["details"] == {"field": "agent"}
    escaped_backslash = _post(harness, "/v1/runs", harness.run(title="C:\\u0000"))
    assert escaped_backslash.status_code == 201
    assert harness.client.get("/v1/runs", headers=harness.admin).json()["data"][0]["title"] == "C:\\u0000"


@pytest.mark.parametrize("value", [5, 1.5, True, "1182", 123456789012345678901234567890, [1, "a"], None])
def test_a_bare_json_value_round_trips_as_output(harness: Harness, value: Any) -> None:
    answer = harness.client.post(
        "/v1/runs", json=harness.run(output=value, input=value), headers=harness.admin
    )
    assert answer.status_code == 201, answer.text
    fetched = harness.client.get(f"/v1/runs/{answer.json()['id']}", headers=harness.admin).json()
    assert fetched.get("output") == value
    assert fetched.get("input") == value


def test_a_single_runs_service_error_names_just_the_field(harness: Harness) -> None:
    body = harness.run(agent=None, agentId="00000000-0000-0000-0000-000000000001")
    answer = _post(harness, "/v1/runs", body)
    assert answer.status_code == 400
    error = _error(answer)
    assert error["details"] == {"field": "agentId"}
    assert error["message"].startswith("agentId: No agent")
