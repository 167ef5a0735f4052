"""A store another writer holds past the waits Redline allows: every surface answers 503 with Retry-After
in its own error shape, never 500, and the same request succeeds once the lock is gone.

The lock is held from outside the app, as another process would: SQLite's write lock (BEGIN IMMEDIATE
on another connection), or on PostgreSQL the tables the writes need, locked in EXCLUSIVE mode. The
app's store gives up quickly (50 ms on SQLite, `lock_timeout` 100 ms on PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from redline.app import create_app
from redline.config import Settings
from redline.surfaces.errors import STORE_BUSY
from tests.conftest import Harness, bootstrap_admin
from tests.samples import make_run
from tests.storelocks import impatient_database, store_locked
from tests.surfaces.test_reviews_api import SPANS


@pytest.fixture
def impatient(database_url: str, backend: str) -> Iterator[Harness]:
    """A harness whose store gives up on a lock within a tenth of a second."""
    db = impatient_database(database_url, backend)
    first = bootstrap_admin(db)
    settings = Settings(database_url=database_url)
    with TestClient(create_app(settings, db), raise_server_exceptions=False) as client:
        yield Harness(client, db, settings, str(first.project.id), str(first.admin.id))
    db.dispose()


def _run(harness: Harness) -> str:
    answer = harness.client.post(
        "/v1/runs", json=make_run(harness.project_id, spans=SPANS), headers=harness.admin
    )
    assert answer.status_code == 201, answer.text
    run_id: str = answer.json()["id"]
    return run_id


def _v1_body(request_id: str) -> dict[str, Any]:
    return {"error": {"code": "unavailable", "message": STORE_BUSY, "requestId": request_id}}


# Each surface's write (path and body, given a run), the body of its 503 (given the request id), and the
# status the write answers once the store is free.
WRITES: list[
    tuple[str, Callable[[Harness, str], tuple[str, dict[str, Any]]], Callable[[str], dict[str, Any]], int]
] = [
    ("/v1", lambda h, run: ("/v1/runs", make_run(h.project_id)), _v1_body, 201),
    (
        "rm",
        lambda h, run: (f"/api/v1/rm/traces/{run}/annotations", {"rating": 1}),
        lambda _: {"detail": STORE_BUSY},
        200,
    ),
    (
        "/v2",
        lambda h, run: (
            f"/v2/traces/{run}/spans/llm/evaluations",
            {"evaluator": "judge", "output_type": "number", "value": 1},
        ),
        lambda _: {"message": STORE_BUSY, "code": 503},
        200,
    ),
]


@pytest.mark.parametrize(("surface", "write", "busy_body", "done"), WRITES, ids=[row[0] for row in WRITES])
def test_a_held_store_answers_503_with_retry_after_then_the_write_goes_through(
    impatient: Harness,
    database_url: str,
    backend: str,
    surface: str,
    write: Callable[[Harness, str], tuple[str, dict[str, Any]]],
    busy_body: Callable[[str], dict[str, Any]],
    done: int,
) -> None:
    path, body = write(impatient, _run(impatient))
    with store_locked(database_url, backend, "traces, annotations"):
        busy = impatient.client.post(path, json=body, headers=impatient.admin)
    assert busy.status_code == 503, busy.text
    assert busy.headers["retry-after"] == "2"
    assert busy.json() == busy_body(busy.headers["x-request-id"])
    again = impatient.client.post(path, json=body, headers=impatient.admin)
    assert again.status_code == done, again.text
