"""An unexpected error on any surface: the surface's own error body with the request id, a 500, and the
connection stays usable for the client's next request (uvicorn closes a connection whose request raised,
so a pooled client's next request used to fail with a reset).

The error is forced by making the store fail to open a session; a real server on a socket, one
`http.client` connection per surface, so a closed connection shows as a failed second request.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest

from redline.db import Database
from tests.conftest import ADMIN_TOKEN
from tests.liveserver import CLIENT_TIMEOUT_S, LiveServer, live_server

__all__ = ["live_server"]

INTERNAL = "Something went wrong on our side; the request id identifies it in the server's log."


def _corrections_body(body: dict[str, Any], request_id: str) -> None:
    assert body == {"error": {"code": "internal", "message": INTERNAL, "requestId": request_id}}


def _otlp_body(body: dict[str, Any], request_id: str) -> None:
    assert body == {"code": 13, "message": INTERNAL}


def _rm_body(body: dict[str, Any], request_id: str) -> None:
    assert body == {"detail": INTERNAL}


def _reviews_body(body: dict[str, Any], request_id: str) -> None:
    assert body == {"message": INTERNAL, "code": 500}


def _datasets_body(body: dict[str, Any], request_id: str) -> None:
    """The reviews surface's shape, the status as text (what @orq-ai/node reads on /v2/datasets)."""
    assert body == {"message": INTERNAL, "code": "500"}


SPAN = {
    "traceId": "0123456789abcdef0123456789abcdef",
    "spanId": "0123456789abcdef",
    "name": "agent",
    "startTimeUnixNano": "1790000000000000000",
    "endTimeUnixNano": "1790000001000000000",
}
OTLP_EXPORT = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": [SPAN]}]}]}

# (method, path, body, what the 500's body must be): one route of each surface that reads the store.
SURFACES: list[tuple[str, str, dict[str, Any] | None, Callable[[dict[str, Any], str], None]]] = [
    ("POST", "/v1/traces", OTLP_EXPORT, _otlp_body),
    ("GET", "/v1/projects", None, _corrections_body),
    ("GET", "/api/v1/rm/traces", None, _rm_body),
    ("GET", "/v2/datasets", None, _datasets_body),
    ("GET", "/v2/annotation-queues", None, _reviews_body),
    (
        "POST",
        "/v3/traces/search",
        {"from": "2026-01-01T00:00:00Z", "to": "2027-01-01T00:00:00Z"},
        _reviews_body,
    ),
]


class StoreDown(RuntimeError):
    """What the forced failure raises: nothing in Redline expects it."""


def _fail(*_: object, **__: object) -> None:
    raise StoreDown("forced by the test")


@pytest.mark.parametrize(("method", "path", "body", "shape"), SURFACES, ids=[row[1] for row in SURFACES])
def test_an_unexpected_error_answers_in_the_surface_shape_and_keeps_the_connection(
    live_server: LiveServer,
    monkeypatch: pytest.MonkeyPatch,
    method: str,
    path: str,
    body: dict[str, Any] | None,
    shape: Callable[[dict[str, Any], str], None],
) -> None:
    address = urlsplit(live_server.url)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=CLIENT_TIMEOUT_S)
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}
    payload = json.dumps(body) if body is not None else None
    try:
        monkeypatch.setattr(Database, "read", _fail)
        monkeypatch.setattr(Database, "write", _fail)
        connection.request(method, path, payload, {**headers, "X-Request-Id": "forced-1"})
        failed = connection.getresponse()
        answer = json.loads(failed.read())
        assert failed.status == 500
        assert failed.getheader("X-Request-Id") == "forced-1"
        assert failed.getheader("Connection") != "close"
        shape(answer, "forced-1")
        used = connection.sock
        monkeypatch.undo()
        connection.request(method, path, payload, headers)
        again = connection.getresponse()
        again.read()
        assert again.status == 200
        assert connection.sock is used, "the server closed the connection after the error"
    finally:
        connection.close()


def test_an_unexpected_error_is_logged_with_its_request_id(
    live_server: LiveServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    address = urlsplit(live_server.url)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=CLIENT_TIMEOUT_S)
    monkeypatch.setattr(Database, "read", _fail)
    try:
        with caplog.at_level("ERROR", logger="redline.http"):
            connection.request(
                "GET",
                "/v1/projects",
                headers={"Authorization": f"Bearer {ADMIN_TOKEN}", "X-Request-Id": "logged-1"},
            )
            connection.getresponse().read()
    finally:
        connection.close()
    [record] = [record for record in caplog.records if record.name == "redline.http"]
    assert record.getMessage() == "unexpected error handling GET /v1/projects (request logged-1)"
    assert record.exc_info is not None
    assert record.exc_info[0] is StoreDown
