"""`GET /metrics`, in-process: off unless asked for, behind its own token, and counting requests by route
template and status, runs and spans ingested, busy-store answers, and jobs by state.

The counters live for the whole test process (as in a server), so the tests compare before and after.
`redline serve` summing several processes' counts is tested in tests/cli/test_serve.py.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from redline.app import create_app
from redline.config import Settings
from redline.db import Database
from tests.conftest import ADMIN_TOKEN, Harness, bootstrap_admin
from tests.samples import make_run
from tests.storelocks import store_locked

METRICS_TOKEN = "metrics-scraper-secret"


@pytest.fixture
def measured(db: Database, database_url: str) -> Iterator[Harness]:
    first = bootstrap_admin(db)
    settings = Settings(database_url=database_url, metrics=True, metrics_token=METRICS_TOKEN)
    with TestClient(create_app(settings, db), raise_server_exceptions=False) as client:
        yield Harness(client, db, settings, str(first.project.id), str(first.admin.id))


def _figures(harness: Harness) -> dict[str, float]:
    """Each sample line of the scrape, `name{labels}` to its value."""
    answer = harness.client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=")
    figures = {}
    for line in answer.text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            figures[name] = float(value)
    return figures


def _grew(before: dict[str, float], after: dict[str, float], name: str) -> float:
    return after.get(name, 0.0) - before.get(name, 0.0)


def test_requests_runs_and_jobs_are_counted(measured: Harness) -> None:
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    before = _figures(measured)
    created = measured.client.post("/v1/runs", json=make_run(measured.project_id), headers=admin)
    run_id = created.json()["id"]
    batch = {"runs": [make_run(measured.project_id, title=f"Batch {n}") for n in range(3)]}
    assert measured.client.post("/v1/runs/batch", json=batch, headers=admin).status_code == 201
    assert measured.client.get(f"/v1/runs/{run_id}", headers=admin).status_code == 200
    assert measured.client.get("/v1/runs/not-an-id", headers=admin).status_code == 404
    assert measured.client.get("/made/up/path").status_code == 404
    after = _figures(measured)
    route = 'redline_http_requests_total{method="GET",route="/v1/runs/{runId}",status="%s"}'
    assert _grew(before, after, route % "200") == 1
    assert _grew(before, after, route % "404") == 1
    assert (
        _grew(before, after, 'redline_http_requests_total{method="GET",route="unmatched",status="404"}') == 1
    )
    assert (
        _grew(before, after, 'redline_http_requests_total{method="POST",route="/v1/runs",status="201"}') == 1
    )
    assert _grew(before, after, "redline_runs_ingested_total") == 4
    latency = 'redline_http_request_duration_seconds_count{method="POST",route="/v1/runs"}'
    assert _grew(before, after, latency) == 1
    assert re.search(
        r'^redline_jobs\{state="queued"\} \d', "\n".join(f"{k} {v}" for k, v in after.items()), re.M
    )


def test_the_metrics_take_their_own_token_and_only_it(measured: Harness) -> None:
    for headers in ({}, {"Authorization": f"Bearer {ADMIN_TOKEN}"}, {"Authorization": "Bearer wrong"}):
        refused = measured.client.get("/metrics", headers=headers)
        assert refused.status_code == 401
        assert (
            refused.json()["error"]["message"]
            == "GET /metrics needs REDLINE_METRICS_TOKEN as its bearer token."
        )


def test_metrics_are_off_unless_asked_for_and_need_a_token(harness: Harness) -> None:
    answer = harness.client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert answer.status_code == 404
    with pytest.raises(ValidationError, match="needed when REDLINE_METRICS is on"):
        Settings(metrics=True)


def test_waits_for_sqlite_write_lock_are_counted_by_who_held_it(
    measured: Harness, backend: str, database_url: str
) -> None:
    """A write that met another writer of this process (the turn `Database.write` takes), then one that
    met another connection holding SQLite's lock (BEGIN IMMEDIATE waiting in the busy handler), each
    counted once when it got the lock. PostgreSQL takes row locks: neither wait exists there."""
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    waits = 'redline_sqlite_lock_wait_seconds_count{held_by="%s"}'
    before = _figures(measured)
    with measured.db.write():
        writer = threading.Thread(
            target=lambda: measured.client.post("/v1/runs", json=make_run(measured.project_id), headers=admin)
        )
        writer.start()
        time.sleep(0.2)
    writer.join()
    with store_locked(database_url, backend, "traces"):
        outside = threading.Thread(
            target=lambda: measured.client.post("/v1/runs", json=make_run(measured.project_id), headers=admin)
        )
        outside.start()
        time.sleep(0.2)
    outside.join()
    after = _figures(measured)
    if backend == "sqlite":
        assert _grew(before, after, waits % "this-process") == 1
        assert _grew(before, after, waits % "another-connection") == 1
        assert after['redline_sqlite_lock_wait_seconds_sum{held_by="another-connection"}'] >= 0.1
    else:
        assert _grew(before, after, waits % "this-process") == 0
        assert _grew(before, after, waits % "another-connection") == 0
    assert (
        _grew(before, after, 'redline_http_requests_total{method="POST",route="/v1/runs",status="201"}') == 2
    )
