"""Identity on the corrections surface: me, projects, users, tokens, memberships and agents."""

from __future__ import annotations

from typing import Any

from tests.conftest import ADMIN_TOKEN, Harness


def _error(answer: Any) -> dict[str, Any]:
    body: dict[str, Any] = answer.json()["error"]
    return body


def test_me_describes_the_caller(harness: Harness) -> None:
    me = harness.client.get("/v1/me", headers=harness.admin).json()
    assert me["id"] == harness.admin_id
    assert me["name"] == "admin"
    assert me["kind"] == "user"
    assert me["reviewerRole"] == "admin"
    assert me["workspaceAdmin"] is True


def test_projects_list_shows_the_callers_role(harness: Harness) -> None:
    made = harness.client.post("/v1/projects", json={"name": "billing"}, headers=harness.admin)
    assert made.status_code == 201
    project = made.json()
    assert project["role"] == "admin"
    writer = harness.caller("writer", role="write", project_id=project["id"])
    listed = harness.client.get("/v1/projects", headers=writer).json()
    assert listed == {"data": [{**project, "role": "write"}], "hasMore": False}
    admin_view = harness.client.get("/v1/projects", headers=harness.admin).json()
    assert [p["name"] for p in admin_view["data"]] == ["default", "billing"]


def test_project_pages_follow_the_cursor(harness: Harness) -> None:
    for i in range(4):
        harness.client.post("/v1/projects", json={"name": f"p{i}"}, headers=harness.admin)
    first = harness.client.get("/v1/projects", params={"limit": 2}, headers=harness.admin).json()
    second = harness.client.get(
        "/v1/projects", params={"limit": 2, "cursor": first["nextCursor"]}, headers=harness.admin
    ).json()
    third = harness.client.get(
        "/v1/projects", params={"limit": 2, "cursor": second["nextCursor"]}, headers=harness.admin
    ).json()
    names = [p["name"] for page in (first, second, third) for p in page["data"]]
    assert names == ["default", "p0", "p1", "p2", "p3"]
    assert third["hasMore"] is False


def test_only_workspace_admins_create_projects_and_users(harness: Harness) -> None:
    member = harness.caller("member", role="admin")
    refused = harness.client.post("/v1/projects", json={"name": "x"}, headers=member)
    assert refused.status_code == 403
    assert _error(refused)["message"] == "Only a workspace admin can create projects."
    refused = harness.client.post("/v1/users", json={"name": "x", "kind": "user"}, headers=member)
    assert refused.status_code == 403


def test_names_are_unique(harness: Harness) -> None:
    taken = harness.client.post("/v1/projects", json={"name": "default"}, headers=harness.admin)
    assert taken.status_code == 409
    assert _error(taken)["code"] == "project-name-taken"
    harness.client.post("/v1/users", json={"name": "ann", "kind": "user"}, headers=harness.admin)
    again = harness.client.post("/v1/users", json={"name": "ann", "kind": "service"}, headers=harness.admin)
    assert again.status_code == 409


def test_users_and_services(harness: Harness) -> None:
    user = harness.client.post(
        "/v1/users", json={"name": "sam", "kind": "user", "reviewerRole": "senior"}, headers=harness.admin
    ).json()
    assert user["reviewerRole"] == "senior"
    service = harness.client.post(
        "/v1/users", json={"name": "ci", "kind": "service"}, headers=harness.admin
    ).json()
    assert "reviewerRole" not in service
    refused = harness.client.post(
        "/v1/users", json={"name": "bot", "kind": "service", "reviewerRole": "admin"}, headers=harness.admin
    )
    assert refused.status_code == 400
    assert _error(refused)["details"]["field"] == "reviewerRole"
    bad_kind = harness.client.post("/v1/users", json={"name": "z", "kind": "robot"}, headers=harness.admin)
    assert _error(bad_kind)["details"]["field"] == "kind"
    names = [u["name"] for u in harness.client.get("/v1/users", headers=harness.admin).json()["data"]]
    assert names == ["admin", "sam", "ci"]


def test_tokens_are_shown_once_hashed_and_revocable(harness: Harness) -> None:
    user = harness.client.post(
        "/v1/users", json={"name": "kim", "kind": "user"}, headers=harness.admin
    ).json()
    made = harness.client.post(
        f"/v1/users/{user['id']}/tokens", json={"name": "laptop"}, headers=harness.admin
    )
    assert made.status_code == 201
    token = made.json()
    assert token["token"].startswith(token["prefix"])
    headers = {"Authorization": f"Bearer {token['token']}"}
    assert harness.client.get("/v1/me", headers=headers).json()["name"] == "kim"
    listed = harness.client.get(f"/v1/users/{user['id']}/tokens", headers=harness.admin).json()["data"]
    assert [t["id"] for t in listed] == [token["id"]]
    assert "token" not in listed[0]
    assert listed[0]["lastUsedAt"]
    with harness.db.read() as session:
        from sqlalchemy import text

        stored = session.execute(text("SELECT secret_hash FROM tokens")).scalars().all()
    assert token["token"] not in stored
    assert harness.client.delete(f"/v1/tokens/{token['id']}", headers=headers).status_code == 204
    assert harness.client.get("/v1/me", headers=headers).status_code == 401
    listed = harness.client.get(f"/v1/users/{user['id']}/tokens", headers=harness.admin).json()["data"]
    assert listed[0]["revokedAt"]


def test_a_user_may_not_touch_someone_elses_tokens(harness: Harness) -> None:
    member = harness.caller("member", role="read")
    admin_tokens = harness.client.get(f"/v1/users/{harness.admin_id}/tokens", headers=member)
    assert admin_tokens.status_code == 403
    first = harness.client.get(f"/v1/users/{harness.admin_id}/tokens", headers=harness.admin).json()["data"][
        0
    ]
    assert harness.client.delete(f"/v1/tokens/{first['id']}", headers=member).status_code == 403
    assert harness.client.get("/v1/me", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}).status_code == 200


def test_memberships(harness: Harness) -> None:
    user = harness.client.post(
        "/v1/users", json={"name": "lee", "kind": "user"}, headers=harness.admin
    ).json()
    path = f"/v1/projects/{harness.project_id}/members/{user['id']}"
    answer = harness.client.put(path, json={"role": "write"}, headers=harness.admin)
    assert answer.json() == {"projectId": harness.project_id, "userId": user["id"], "role": "write"}
    assert harness.client.put(path, json={"role": "owner"}, headers=harness.admin).status_code == 400
    assert (
        harness.client.put(path, json={"role": "publish"}, headers=harness.admin).json()["role"] == "publish"
    )
    assert harness.client.delete(path, headers=harness.admin).status_code == 204
    missing = harness.client.delete(path, headers=harness.admin)
    assert missing.status_code == 404
    writer = harness.caller("writer", role="write")
    assert harness.client.put(path, json={"role": "read"}, headers=writer).status_code == 403
    bad = harness.client.put(
        f"/v1/projects/nope/members/{user['id']}", json={"role": "read"}, headers=harness.admin
    )
    assert _error(bad)["message"] == '"nope" isn\'t a project id'


def test_agents_are_registered_and_pinned(harness: Harness) -> None:
    run = harness.client.post("/v1/runs", json=harness.run(), headers=harness.admin).json()
    agents = harness.client.get(f"/v1/projects/{harness.project_id}/agents", headers=harness.admin).json()[
        "data"
    ]
    assert agents == [{"id": run["agentId"], "projectId": harness.project_id, "name": "support-agent"}]
    pinned = harness.client.patch(
        f"/v1/agents/{run['agentId']}", json={"pinnedVersion": "v2"}, headers=harness.admin
    )
    assert pinned.json()["pinnedVersion"] == "v2"
    writer = harness.caller("writer", role="write")
    refused = harness.client.patch(
        f"/v1/agents/{run['agentId']}", json={"pinnedVersion": "v3"}, headers=writer
    )
    assert refused.status_code == 403
    unpinned = harness.client.patch(
        f"/v1/agents/{run['agentId']}", json={"pinnedVersion": None}, headers=harness.admin
    )
    assert "pinnedVersion" not in unpinned.json()


def test_an_unexpected_error_is_a_500_without_a_stack_trace(harness: Harness) -> None:
    from sqlalchemy import text

    # Annotations may point at spans: PostgreSQL drops what depends on the table along with it.
    cascade = " CASCADE" if harness.db.dialect_name == "postgresql" else ""
    with harness.db.write() as session:
        session.execute(text(f"DROP TABLE spans{cascade}"))
    answer = harness.client.post(
        "/v1/runs", json=harness.run(spans=[{"spanId": "a", "name": "n"}]), headers=harness.admin
    )
    assert answer.status_code == 500
    error = _error(answer)
    assert error["code"] == "internal"
    assert "Traceback" not in answer.text
    assert "spans" not in error["message"]
    assert error["requestId"] == answer.headers["x-request-id"]
