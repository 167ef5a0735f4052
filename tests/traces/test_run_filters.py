"""The runs list's filters on metadata and on what was said about a run (`traces.RunFilters`), which the
MCP server's `search_runs` and `export_runs` use: a metadata value read from the side table when the key
is indexed and ready, from each run's JSON otherwise, with the same answer; "has ratings", "has
comments" and "has corrections" from the kept counts, both ways."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from redline.identity import service as identity
from redline.identity.service import Actor
from redline.traces import service as traces
from redline.traces.service import RunFilters
from tests.conftest import ADMIN_TOKEN, Harness, run_waiting_jobs
from tests.samples import make_run


def _runs(harness: Harness) -> dict[str, str]:
    made = {}
    for name, tier, minute in (("gold", "gold", 1), ("silver", "silver", 2), ("plain", None, 3)):
        run = make_run(
            harness.project_id,
            externalId=name,
            startedAt=f"2026-11-02T10:0{minute}:00Z",
            metadata={"tier": tier, "seats": minute} if tier else None,
        )
        answer = harness.client.post("/v1/runs", json=run, headers=harness.admin)
        assert answer.status_code == 201, answer.text
        made[name] = answer.json()["id"]
    return made


def _admin(harness: Harness) -> Actor:
    with harness.db.read() as session:
        actor, _ = identity.authenticate(session, ADMIN_TOKEN)
    return actor


@contextmanager
def _statements(harness: Harness) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(*arguments: Any) -> None:
        seen.append(str(arguments[2]))

    event.listen(harness.db.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(harness.db.engine, "before_cursor_execute", record)


def _listed(harness: Harness, actor: Actor, **filters: Any) -> list[str]:
    with harness.db.read() as session:
        page = traces.list_runs(
            session, actor, RunFilters(project_id=uuid.UUID(harness.project_id), **filters)
        )
        return [str(view.trace.external_id) for view in page.items]


def test_metadata_answers_alike_from_the_json_and_from_a_ready_index(harness: Harness) -> None:
    _runs(harness)
    actor = _admin(harness)
    asked = {"metadata": (("tier", "gold"),)}
    with _statements(harness) as seen:
        assert _listed(harness, actor, **asked) == ["gold"]
    assert not any("run_metadata_values" in statement for statement in seen)
    assert _listed(harness, actor, metadata=(("seats", "2"),)) == ["silver"]
    assert _listed(harness, actor, metadata=(("tier", "gold"), ("seats", "2"))) == []

    path = f"/v1/projects/{harness.project_id}/indexed-metadata-keys"
    assert harness.client.post(path, json={"key": "tier"}, headers=harness.admin).status_code == 201
    assert run_waiting_jobs(harness.db) == 1
    with _statements(harness) as seen:
        assert _listed(harness, actor, **asked) == ["gold"]
    assert any("run_metadata_values" in statement for statement in seen)
    assert _listed(harness, actor, metadata=(("tier", "bronze"),)) == []


def test_what_was_said_narrows_both_ways(harness: Harness) -> None:
    made = _runs(harness)
    rm = "/api/v1/rm/traces"
    harness.client.post(f"{rm}/{made['gold']}/annotations", json={"rating": 1}, headers=harness.admin)
    harness.client.post(
        f"{rm}/{made['silver']}/annotations", json={"comment": "Terse"}, headers=harness.admin
    )
    correction = {"runId": made["plain"], "answer": "right"}
    assert harness.client.post("/v1/corrections", json=correction, headers=harness.admin).status_code == 201
    actor = _admin(harness)
    assert _listed(harness, actor, has_ratings=True) == ["gold"]
    assert _listed(harness, actor, has_ratings=False) == ["plain", "silver"]
    assert _listed(harness, actor, has_comments=True) == ["silver"]
    assert _listed(harness, actor, has_corrections=True) == ["plain"]
    assert _listed(harness, actor, has_corrections=False, has_comments=False) == ["gold"]
