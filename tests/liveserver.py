"""A real Redline server on a free localhost port, over a fresh database on each backend, per test.

Client tests and console tests both drive it: the clients over HTTP, the console through Chromium.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import uvicorn

from redline.app import create_app
from redline.client import Client
from redline.config import Settings
from redline.db import Database
from tests.conftest import ADMIN_TOKEN, bootstrap_admin

STARTUP_TIMEOUT_S = 10.0
# How long a test client waits for an answer before calling the server stalled.
CLIENT_TIMEOUT_S = 30.0


@dataclass
class LiveServer:
    """Where the server listens, and the first-start admin's project and id."""

    url: str
    project_id: str
    admin_id: str

    def client(self, token: str = ADMIN_TOKEN) -> Client:
        """Redline's client on this server. Its timeout is for a stalled server, not a slow one: on a CI
        machine whose two cores run both test workers and a browser, a plain create once took over 10 s."""
        return Client(self.url, token=token, timeout=CLIENT_TIMEOUT_S)


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
