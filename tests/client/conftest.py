"""A real Redline server on a free localhost port, over a fresh database on each backend, per test."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
import uvicorn
from cli.client import StashClient
from orq_ai_sdk import Orq

from redline.app import create_app
from redline.client import Client
from redline.config import Settings
from redline.db import Database
from tests.conftest import ADMIN_TOKEN, bootstrap_admin

STARTUP_TIMEOUT_S = 10.0


@dataclass
class LiveServer:
    """Where the server listens, and the first-start admin's project and id."""

    url: str
    project_id: str
    admin_id: str

    def client(self, token: str = ADMIN_TOKEN) -> Client:
        return Client(self.url, token=token, timeout=10.0)


@pytest.fixture
def live_server(db: Database, database_url: str) -> Iterator[LiveServer]:
    first = bootstrap_admin(db)
    app = create_app(Settings(database_url=database_url), db)
    # The socket is bound here and handed to uvicorn, so no other process can take the port in between.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            sock.close()
            pytest.fail("the uvicorn server did not start")
        time.sleep(0.01)
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", str(first.project.id), str(first.admin.id))
    finally:
        server.should_exit = True
        thread.join(timeout=STARTUP_TIMEOUT_S)
        sock.close()
        assert not thread.is_alive(), "the uvicorn server did not stop"


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
