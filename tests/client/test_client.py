"""The Python client against a real server over real HTTP, on both stores; and the client alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from redline.client import (
    AuthError,
    Client,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    Page,
    RedlineError,
    ServerError,
)
from tests.liveserver import LiveServer
from tests.samples import make_run

START = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def new_caller(admin: Client, live_server: LiveServer, name: str, role: str | None) -> Client:
    """A client for a new user holding `role` in the default project (None: no membership)."""
    user = admin.users.create(name)
    if role is not None:
        admin.members.set(live_server.project_id, user["id"], role)
    return live_server.client(admin.users.create_token(user["id"], name="t")["token"])


# ------------------------------------------------------------------------------------------- runs


def test_create_one_run_and_read_it_back(admin: Client, live_server: LiveServer) -> None:
    created = admin.runs.create(
        make_run(live_server.project_id, externalId="ext-1", startedAt=START.isoformat())
    )
    assert created["externalId"] == "ext-1"
    assert created["agentName"] == "support-agent"
    assert created["stepCount"] == 5
    assert [step["index"] for step in created["steps"]] == [0, 1, 2, 3, 4]
    assert created["steps"][2]["toolInput"] == {"order_id": "1182"}
    assert datetime.fromisoformat(created["startedAt"]) == START
    assert admin.runs.get(created["id"]) == created


def test_create_a_batch_and_read_each_back(admin: Client, live_server: LiveServer) -> None:
    runs = [make_run(live_server.project_id, externalId=f"batch-{i}", title=f"run {i}") for i in range(3)]
    answer = admin.runs.create_batch(runs)
    assert answer["count"] == 3
    assert [item["externalId"] for item in answer["data"]] == ["batch-0", "batch-1", "batch-2"]
    assert not any(item["replaced"] for item in answer["data"])
    for i, item in enumerate(answer["data"]):
        fetched = admin.runs.get(item["id"])
        assert fetched["title"] == f"run {i}"
        assert fetched["agentId"] == item["agentId"]
        assert len(fetched["steps"]) == item["stepCount"] == 5
    # Sending an external id again replaces that run rather than adding one.
    again = admin.runs.create_batch([make_run(live_server.project_id, externalId="batch-0", title="redone")])
    assert again["data"][0] == {**answer["data"][0], "replaced": True}
    assert admin.runs.get(answer["data"][0]["id"])["title"] == "redone"


def test_erase_keeps_the_run_but_blanks_its_content(admin: Client, live_server: LiveServer) -> None:
    created = admin.runs.create(make_run(live_server.project_id))
    erased = admin.runs.erase(created["id"])
    assert erased["id"] == created["id"]
    assert erased["status"] == "completed"
    assert "erasedAt" in erased
    assert [step["content"] for step in erased["steps"]] == [""] * 5
    assert "toolInput" not in erased["steps"][1]
    assert "input" not in admin.runs.get(created["id"])


def test_list_follows_cursors_newest_first(admin: Client, live_server: LiveServer) -> None:
    ids_oldest_first = [
        admin.runs.create(
            make_run(live_server.project_id, startedAt=(START + timedelta(minutes=i)).isoformat())
        )["id"]
        for i in range(5)
    ]
    newest_first = list(reversed(ids_oldest_first))

    listed = list(admin.runs.list(live_server.project_id, limit=2))
    assert [run["id"] for run in listed] == newest_first
    assert "steps" not in listed[0]
    started = [datetime.fromisoformat(run["startedAt"]) for run in listed]
    assert started == sorted(started, reverse=True)

    # The same walk by hand, page by page: 2 + 2 + 1.
    pages: list[Page] = [admin.runs.page(live_server.project_id, limit=2)]
    while pages[-1].has_more:
        assert pages[-1].next_cursor is not None
        pages.append(admin.runs.page(live_server.project_id, limit=2, cursor=pages[-1].next_cursor))
    assert [len(page.data) for page in pages] == [2, 2, 1]
    assert pages[-1].next_cursor is None
    assert [run["id"] for page in pages for run in page.data] == newest_first


def test_list_walks_runs_that_started_at_the_same_time(admin: Client, live_server: LiveServer) -> None:
    # One batch without startedAt: all three share the server's clock, so the id breaks the tie.
    answer = admin.runs.create_batch([make_run(live_server.project_id) for _ in range(3)])
    listed = [run["id"] for run in admin.runs.list(limit=1)]
    assert sorted(listed) == sorted(item["id"] for item in answer["data"])
    assert listed == sorted(listed, reverse=True)


def test_list_filters(admin: Client, live_server: LiveServer) -> None:
    project = live_server.project_id
    at = [(START + timedelta(hours=i)).isoformat() for i in range(4)]
    answer = admin.runs.create_batch(
        [
            make_run(project, status="completed", startedAt=at[0]),
            make_run(project, status="failed", startedAt=at[1]),
            make_run(project, status="cancelled", agent="billing-agent", agentVersion="v2", startedAt=at[2]),
            make_run(project, status="failed", agent="billing-agent", startedAt=at[3]),
        ]
    )
    ids = [item["id"] for item in answer["data"]]
    billing_id = answer["data"][2]["agentId"]

    def listed(**filters: Any) -> list[str]:
        return [run["id"] for run in admin.runs.list(project, **filters)]

    assert listed(status="failed") == [ids[3], ids[1]]
    assert listed(status=["completed", "cancelled"]) == [ids[2], ids[0]]
    assert listed(agent="billing-agent") == [ids[3], ids[2]]
    assert listed(agent_id=billing_id) == [ids[3], ids[2]]
    assert listed(agent="billing-agent", status="failed") == [ids[3]]
    assert listed(agent_version="v2") == [ids[2]]
    assert listed(since=START + timedelta(hours=1), until=START + timedelta(hours=3)) == [ids[2], ids[1]]
    assert listed(since=at[3]) == [ids[3]]
    assert listed(agent="nobody") == []


def test_list_a_sessions_runs(admin: Client, live_server: LiveServer) -> None:
    """`session_id` lists one conversation's runs, newest first: named by `sessionId` or, as tracers
    do, by `metadata.session_id`; a run of another session or of none is left out."""
    project = live_server.project_id
    at = [(START + timedelta(minutes=i)).isoformat() for i in range(4)]
    answer = admin.runs.create_batch(
        [
            make_run(project, sessionId="chat-5521", startedAt=at[0]),
            make_run(project, sessionId="chat-7000", startedAt=at[1]),
            make_run(project, metadata={"session_id": "chat-5521"}, startedAt=at[2]),
            make_run(project, startedAt=at[3]),
        ]
    )
    ids = [item["id"] for item in answer["data"]]
    session = list(admin.runs.list(project_id=project, session_id="chat-5521"))
    assert [run["id"] for run in session] == [ids[2], ids[0]]
    assert {run["sessionId"] for run in session} == {"chat-5521"}
    page = admin.runs.page(project, session_id="chat-7000", status="completed")
    assert [run["id"] for run in page.data] == [ids[1]]
    assert list(admin.runs.list(project, session_id="chat-0")) == []


# --------------------------------------------------------------------------------------- identity


def test_me_projects_users_and_members(admin: Client, live_server: LiveServer) -> None:
    me = admin.me()
    assert me["id"] == live_server.admin_id
    assert me["workspaceAdmin"] is True

    made = [admin.projects.create(f"project-{i}") for i in range(3)]
    assert all(project["role"] == "admin" for project in made)
    # A page size of 1 makes the iterator walk four pages.
    listed = list(admin.projects.list(limit=1))
    assert sorted(project["id"] for project in listed) == sorted(
        [live_server.project_id, *(project["id"] for project in made)]
    )

    reviewer = admin.users.create("rita", reviewer_role="senior")
    service = admin.users.create("ingest-bot", kind="service")
    assert reviewer["reviewerRole"] == "senior"
    assert service["kind"] == "service"
    assert {user["name"] for user in admin.users.list(limit=1)} == {"admin", "rita", "ingest-bot"}

    membership = admin.members.set(made[0]["id"], service["id"], "write")
    assert membership == {"projectId": made[0]["id"], "userId": service["id"], "role": "write"}
    with live_server.client(admin.users.create_token(service["id"])["token"]) as bot:
        assert [(p["id"], p["role"]) for p in bot.projects.list()] == [(made[0]["id"], "write")]
        admin.members.remove(made[0]["id"], service["id"])
        assert list(bot.projects.list()) == []
    with pytest.raises(NotFoundError) as caught:
        admin.members.remove(made[0]["id"], service["id"])
    assert caught.value.kind == "member"


def test_a_revoked_token_is_refused(admin: Client, live_server: LiveServer) -> None:
    user = admin.users.create("temp")
    issued = admin.users.create_token(user["id"], name="laptop")
    assert issued["name"] == "laptop"
    assert issued["userId"] == user["id"]
    assert issued["token"].startswith(issued["prefix"])
    with live_server.client(issued["token"]) as temp:
        assert temp.me()["tokenId"] == issued["id"]
        admin.tokens.revoke(issued["id"])
        with pytest.raises(AuthError) as caught:
            temp.me()
    assert caught.value.status == 401
    assert caught.value.code == "auth-invalid"


# ----------------------------------------------------------------------------------------- errors


def test_a_bad_token_is_an_auth_error(live_server: LiveServer) -> None:
    with live_server.client("rl_not_a_real_token_000000") as stranger, pytest.raises(AuthError) as caught:
        stranger.runs.get("00000000-0000-0000-0000-000000000000")
    error = caught.value
    assert error.status == 401
    assert error.code == "auth-invalid"
    assert "revoked" in error.message
    assert error.request_id
    assert isinstance(error, RedlineError)


def test_a_missing_run_is_not_found(admin: Client) -> None:
    missing = "8a1c5b52-1f2e-4c3d-9a7b-6e5f4d3c2b1a"
    with pytest.raises(NotFoundError) as caught:
        admin.runs.get(missing)
    error = caught.value
    assert (error.status, error.code, error.kind) == (404, "run-not-found", "run")
    assert error.details == {"id": missing}
    assert missing in error.message
    assert error.request_id
    # An id that is not even a UUID names nothing either.
    with pytest.raises(NotFoundError) as caught:
        admin.runs.get("not-a-uuid")
    assert caught.value.kind == "run"
    # An id is one path segment: "../projects" can't turn the request into GET /v1/projects.
    with pytest.raises(NotFoundError):
        admin.runs.get("../projects")


def test_bad_input_names_the_field(admin: Client, live_server: LiveServer) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        admin.runs.create(make_run(live_server.project_id, status="exploded"))
    error = caught.value
    assert error.status == 400
    assert error.code == "bad-input"
    assert error.message.startswith("status:")
    assert error.details["field"] == "status"

    with pytest.raises(InvalidRequestError) as caught:
        admin.runs.create_batch(
            [make_run(live_server.project_id), make_run(live_server.project_id, steps=[{}])]
        )
    assert caught.value.details == {"field": "steps[0].role", "index": 1}

    with pytest.raises(InvalidRequestError) as caught:
        list(admin.runs.list(status=["failed", "bogus"]))
    assert caught.value.details == {"field": "status"}
    assert "bogus" in caught.value.message

    with pytest.raises(InvalidRequestError) as caught:
        list(admin.runs.list(since=datetime(2025, 1, 1)))  # noqa: DTZ001 - no timezone: refused
    assert caught.value.details == {"field": "since"}


def test_a_read_only_member_may_not_write(admin: Client, live_server: LiveServer) -> None:
    with new_caller(admin, live_server, "reader", "read") as reader:
        assert list(reader.runs.list(live_server.project_id)) == []
        with pytest.raises(AuthError) as caught:
            reader.runs.create(make_run(live_server.project_id))
        assert caught.value.status == 403
        assert caught.value.code == "permission-denied"
        with pytest.raises(AuthError) as caught:
            reader.projects.create("mine")
        assert caught.value.status == 403
    assert list(admin.runs.list()) == []


def test_a_taken_project_name_is_a_conflict(admin: Client) -> None:
    admin.projects.create("shared")
    with pytest.raises(ConflictError) as caught:
        admin.projects.create("shared")
    error = caught.value
    assert (error.status, error.code) == (409, "project-name-taken")
    assert '"shared"' in error.message


# ------------------------------------------------------------------------------------ construction


def test_url_and_token_come_from_the_environment(
    live_server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDLINE_URL", live_server.url + "/")
    monkeypatch.setenv("REDLINE_TOKEN", "rl_test_admin_token_0123456789")
    with Client() as client:
        assert client.base_url == live_server.url
        assert client.me()["id"] == live_server.admin_id
        assert "rl_test" not in repr(client)
    # Arguments win over the environment.
    with Client(live_server.url, token="rl_wrong_token_0000000000") as client, pytest.raises(AuthError):
        client.me()


def test_missing_url_or_token_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDLINE_URL", raising=False)
    monkeypatch.delenv("REDLINE_TOKEN", raising=False)
    with pytest.raises(ValueError, match="REDLINE_URL"):
        Client(token="rl_x")
    with pytest.raises(ValueError, match="REDLINE_TOKEN"):
        Client("http://127.0.0.1:1")
    monkeypatch.setenv("REDLINE_TOKEN", "")
    with pytest.raises(ValueError, match="REDLINE_TOKEN"):
        Client("http://127.0.0.1:1")


def test_imports_without_the_server_dependencies() -> None:
    script = textwrap.dedent(
        """
        import json, sys

        BLOCKED = ("sqlalchemy", "fastapi", "starlette", "pydantic", "pydantic_settings", "alembic",
                   "orjson", "click", "psycopg", "uvicorn")

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ImportError(f"{name} is blocked")
                return None

        sys.meta_path.insert(0, Block())
        import redline.client
        from redline.client import Client

        with Client("http://127.0.0.1:1", token="rl_x") as client:
            client.runs, client.projects, client.users, client.tokens, client.members
        print(json.dumps(sorted(m for m in sys.modules if m == "redline" or m.startswith("redline."))))
        """
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("REDLINE_")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False, env=env
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert all(name == "redline" or name.startswith("redline.client") for name in loaded), loaded


def test_public_surface() -> None:
    import redline.client

    assert sorted(redline.client.__all__) == [
        "AuthError",
        "Client",
        "ConflictError",
        "InvalidRequestError",
        "NotFoundError",
        "Page",
        "RedlineError",
        "ServerError",
    ]


# ---------------------------------------------------------------- the wire, against a mock transport


def mock_client(handler: Any) -> Client:
    return Client("http://redline.test/base/", token="rl_secret", transport=httpx.MockTransport(handler))


def test_sends_the_token_user_agent_and_query() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"data": [], "hasMore": False})

    with mock_client(handler) as client:
        page = client.runs.page(
            "p1", status=["failed", "cancelled"], since=START, until="2025-04-01T00:00:00Z", cursor="abc"
        )
    assert page == Page(data=[], has_more=False, next_cursor=None)
    [request] = seen
    assert request.headers["Authorization"] == "Bearer rl_secret"
    assert request.headers["User-Agent"].startswith("redline-python/")
    assert request.url.path == "/base/v1/runs"
    assert dict(request.url.params) == {
        "projectId": "p1",
        "status": "failed,cancelled",
        "since": "2025-03-01T12:00:00+00:00",
        "until": "2025-04-01T00:00:00Z",
        "limit": "50",
        "cursor": "abc",
    }


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            413,
            {"error": {"code": "payload-too-large", "message": "Too big.", "requestId": "r1"}},
            InvalidRequestError,
        ),
        (403, {"error": {"code": "permission-denied", "message": "No.", "requestId": "r1"}}, AuthError),
        (500, {"error": {"code": "internal", "message": "Oops.", "requestId": "r1"}}, ServerError),
        (418, {"error": {"code": "teapot", "message": "Short and stout.", "requestId": "r1"}}, ServerError),
    ],
)
def test_maps_statuses_to_classes(status: int, body: dict[str, Any], expected: type[RedlineError]) -> None:
    with (
        mock_client(lambda request: httpx.Response(status, json=body)) as client,
        pytest.raises(expected) as caught,
    ):
        client.me()
    error = caught.value
    assert type(error) is expected
    assert (error.status, error.code, error.message, error.request_id) == (
        status,
        body["error"]["code"],
        body["error"]["message"],
        "r1",
    )
    assert "r1" in str(error)


def test_a_body_that_is_not_json_is_a_server_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="<html>Bad Gateway</html>", headers={"X-Request-Id": "proxy-1"})

    with mock_client(handler) as client, pytest.raises(ServerError) as caught:
        client.runs.get("r")
    error = caught.value
    assert (error.status, error.code, error.request_id) == (502, "http-502", "proxy-1")
    assert "Bad Gateway" in error.message

    # A 404 from something that isn't Redline is not a NotFoundError: nothing says what wasn't found.
    with mock_client(lambda request: httpx.Response(404, text="nope")) as client, pytest.raises(ServerError):
        client.runs.get("r")
    with (
        mock_client(lambda request: httpx.Response(200, text="not json")) as client,
        pytest.raises(ServerError),
    ):
        client.me()


def test_list_fetches_a_page_only_when_iteration_reaches_it() -> None:
    cursors: list[str | None] = []
    pages = {
        None: {"data": [{"id": "a"}, {"id": "b"}], "hasMore": True, "nextCursor": "c1"},
        "c1": {"data": [{"id": "c"}], "hasMore": True, "nextCursor": "c2"},
        "c2": {"data": [{"id": "d"}], "hasMore": False},
    }

    def handler(request: httpx.Request) -> httpx.Response:
        cursor = request.url.params.get("cursor")
        cursors.append(cursor)
        return httpx.Response(200, json=pages[cursor])

    with mock_client(handler) as client:
        runs = client.runs.list(agent="support", limit=2)
        assert cursors == []
        assert next(runs) == {"id": "a"}
        assert next(runs) == {"id": "b"}
        assert cursors == [None]
        assert [run["id"] for run in runs] == ["c", "d"]
        assert cursors == [None, "c1", "c2"]
