"""The clients as their users build them, each against a real server on loopback (tests.liveserver)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from cli.client import StashClient
from kindgi.client import Kindgi
from orq_ai_sdk import Orq

from redline.client import Client
from tests.conftest import ADMIN_TOKEN
from tests.liveserver import LiveServer, live_server

__all__ = ["live_server"]


@pytest.fixture
def admin(live_server: LiveServer) -> Iterator[Client]:
    """A client holding the workspace admin's token."""
    with live_server.client() as client:
        yield client


@pytest.fixture
def stash(live_server: LiveServer) -> Iterator[StashClient]:
    """The client as a script would build it: a base URL and an API key."""
    with StashClient(live_server.url, api_key=ADMIN_TOKEN) as client:
        yield client


@pytest.fixture
def mcp(live_server: LiveServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    """The MCP tools, configured only by the environment: an empty home, so no ~/.stash file interferes."""
    monkeypatch.setenv("STASH_URL", live_server.url)
    monkeypatch.setenv("STASH_API_KEY", ADMIN_TOKEN)
    monkeypatch.setenv("STASH_SCOPE", "")
    monkeypatch.setenv("HOME", str(tmp_path))
    from cli import config, mcp_server

    # The config module fixes its path at first import, which may have happened under another HOME.
    monkeypatch.setattr(config, "USER_CONFIG_FILE", tmp_path / ".stash" / "config.json")
    tools: ModuleType = mcp_server
    return tools


@pytest.fixture
def orq(live_server: LiveServer) -> Iterator[Orq]:
    """The orq-ai-sdk client as its documents build it, with only the host and the key changed."""
    with Orq(api_key=ADMIN_TOKEN, server_url=live_server.url) as client:
        yield client


@pytest.fixture
def kindgi(live_server: LiveServer) -> Iterator[Kindgi]:
    """The kindgi 0.1.10 client as wire-clients.md §3.8 builds it, with only the host and the token
    changed; without retries, so what the server answered is what the test sees."""
    with Kindgi(live_server.url, token=ADMIN_TOKEN, max_retries=0) as client:
        yield client
