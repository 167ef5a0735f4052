"""The TypeScript clients against a real server on loopback (tests.liveserver), each through its own
script (tests/clients_ts/nodeclients.py says how they are installed and run)."""

from __future__ import annotations

import pytest

from tests.clients_ts import nodeclients
from tests.liveserver import live_server

__all__ = ["live_server"]


@pytest.fixture(scope="session")
def ts_clients() -> None:
    """The pinned clients installed, once a session; without Node, a skip saying why (a failure in CI)."""
    missing = nodeclients.node_missing()
    if missing is not None:
        if nodeclients.required():
            pytest.fail(f"{nodeclients.REQUIRED_VARIABLE} is set, but {missing}")
        pytest.skip(f"the TypeScript clients need Node: {missing}")
    nodeclients.install()
