"""An error no console handler answers: the console's own error page (or JSON for its scripts), 500 for
a failure, 503 for a store that stayed busy or unreachable; never Starlette's bare "Internal Server
Error"."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import OperationalError

from redline.console.errors import STORE_BUSY_PAGE, UNEXPECTED_PAGE
from redline.db import Database
from tests.conftest import Harness
from tests.console.conftest import console_client, shown


class PageFault(RuntimeError):
    """What the forced failure raises: nothing in the console expects it."""


def _fault(*_: object, **__: object) -> None:
    raise PageFault("forced by the test")


def _busy(*_: object, **__: object) -> None:
    raise OperationalError("SELECT 1", {}, Exception("database is locked"))


@pytest.mark.parametrize(
    ("failure", "status", "message", "code"),
    [(_fault, 500, UNEXPECTED_PAGE, "internal"), (_busy, 503, STORE_BUSY_PAGE, "unavailable")],
    ids=["failure", "busy store"],
)
def test_an_unexpected_error_is_the_consoles_own_page(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, failure: object, status: int, message: str, code: str
) -> None:
    console_client(harness)
    monkeypatch.setattr(Database, "read", failure)
    answer = harness.client.get("/ui/traces")
    assert answer.status_code == status
    assert "<title>Something went wrong" in answer.text
    assert shown(message) in answer.text
    scripted = harness.client.get("/ui/traces", headers={"Accept": "application/json"})
    assert (scripted.status_code, scripted.json()) == (
        status,
        {"message": message, "code": code, "details": {}},
    )
