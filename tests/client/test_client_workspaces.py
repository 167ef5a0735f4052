"""Workspaces through the clients against a live server: Redline's client for installation admins,
and the stashai client's workspace scope."""

from __future__ import annotations

import re

import pytest
from cli.client import StashClient, StashError

from redline.client import AuthError, ConflictError, NotFoundError
from tests.conftest import ADMIN_TOKEN
from tests.liveserver import LiveServer


def test_an_installation_admin_runs_workspaces_from_the_client(live_server: LiveServer) -> None:
    with live_server.client() as root:
        made = root.workspaces.create("acme", admin_name="wile")
        assert [item["name"] for item in root.workspaces.list()] == ["default", "acme"]
        assert root.workspaces.get("acme")["id"] == made["id"]
        with pytest.raises(ConflictError, match=re.escape('The workspace name "acme" is taken.')):
            root.workspaces.create("acme")
        with live_server.client(made["token"]) as acme:
            assert acme.me()["workspaceId"] == made["id"]
            with pytest.raises(AuthError, match=re.escape("Only an installation admin can list workspaces.")):
                list(acme.workspaces.list())
            acme.projects.create("roadrunner")
        lines = list(root.workspaces.export("acme"))
        assert lines[0]["workspace"]["name"] == "acme"
        assert sorted(line["row"]["name"] for line in lines[1:] if line["table"] == "projects") == [
            "default",
            "roadrunner",
        ]
        assert root.workspaces.delete(made["id"])["deleted"]["projects"] == 2
        with pytest.raises(NotFoundError):
            root.workspaces.get("acme")


def test_the_stashai_client_works_in_its_tokens_workspace_only(live_server: LiveServer) -> None:
    with live_server.client() as root:
        own = root.me()["workspaceId"]
        other = root.workspaces.create("acme")["id"]
    with StashClient(live_server.url, api_key=ADMIN_TOKEN, scope=own) as stash:
        assert stash._get("/api/v1/rm/traces")["total"] == 0
    with (
        StashClient(live_server.url, api_key=ADMIN_TOKEN, scope=other) as stash,
        pytest.raises(StashError) as refused,
    ):
        stash._get("/api/v1/rm/traces")
    assert str(refused.value) == (
        f"[404] Workspace {other} not found: a token works in its own workspace only ({own})."
    )
