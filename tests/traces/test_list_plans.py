"""The rm list and the console's "has …" filters walk an index and sort nothing, on a store big enough
for the planners to mean it.

Plans on tiny tables mislead (PostgreSQL reads a small table whole), so 24,000 runs go in by bulk
insert over three projects, one in fifty with a rating, a comment and a correction, then ANALYZE. The
statements checked are the ones the app ran for real HTTP requests, caught as they went to the
driver, and explained on the same connection settings: SQLite's EXPLAIN QUERY PLAN must name the
index and no temporary B-tree; PostgreSQL's EXPLAIN (FORMAT JSON) must scan the index and hold no
Sort, with sequential scans allowed and with them off.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, insert

from redline.traces import service as traces
from redline.traces.models import ProjectRunCount, Trace
from tests.conftest import Harness
from tests.console.conftest import console_client

RUNS_PER_PROJECT = 8_000
SAID_EVERY = 50


def _seed(harness: Harness) -> list[str]:
    """Three projects of listed runs (the harness's and two more), stored a second apart, newest last."""
    projects = [harness.project_id]
    for name in ("second", "third"):
        made = harness.client.post("/v1/projects", json={"name": name}, headers=harness.admin)
        assert made.status_code == 201, made.text
        projects.append(made.json()["id"])
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows = []
    for n in range(RUNS_PER_PROJECT * len(projects)):
        said = int(n % SAID_EVERY == 0)
        at = start + timedelta(seconds=n)
        rows.append(
            {
                "id": uuid.uuid4(),
                "project_id": uuid.UUID(projects[n % len(projects)]),
                "external_id": f"run-{n}",
                "status": "completed",
                "dry_run": False,
                "source_format": "native",
                "started_at": at,
                "created_at": at,
                "updated_at": at,
                "step_count": 5,
                "hidden": n % 97 == 0,
                "rated_count": said,
                "comment_count": said,
                "correction_count": said,
            }
        )
    with harness.db.write() as session:
        session.execute(insert(Trace), rows)
        session.execute(
            insert(ProjectRunCount),
            [
                {
                    "project_id": uuid.UUID(p),
                    "listed": sum(1 for r in rows if str(r["project_id"]) == p and not r["hidden"]),
                }
                for p in projects
            ],
        )
    # VACUUM too on PostgreSQL, as autovacuum would have by then: it marks the pages all-visible, which
    # is what lets an index-only scan skip the table.
    analyze = "ANALYZE" if harness.db.dialect_name == "sqlite" else "VACUUM ANALYZE traces"
    with harness.db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql(analyze)
    return projects


@contextmanager
def _statements(harness: Harness) -> Iterator[list[tuple[str, Any]]]:
    """Every statement the app sends to the driver meanwhile, with its parameters."""
    caught: list[tuple[str, Any]] = []

    def catch(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        caught.append((statement, parameters))

    event.listen(harness.db.engine, "before_cursor_execute", catch)
    try:
        yield caught
    finally:
        event.remove(harness.db.engine, "before_cursor_execute", catch)


def _the_walk(caught: list[tuple[str, Any]], marker: str) -> tuple[str, Any]:
    [found] = [(s, p) for s, p in caught if "ORDER BY" in s and "LIMIT" in s and marker in s]
    return found


def _sqlite_plan(harness: Harness, statement: str, parameters: Any) -> list[str]:
    with harness.db.engine.connect() as connection:
        rows = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
    return [row[-1] for row in rows]


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def _postgres_plans(harness: Harness, statement: str, parameters: Any) -> list[list[dict[str, Any]]]:
    """The plan's nodes as chosen freely, then with sequential scans off."""
    plans = []
    with harness.db.engine.connect() as connection:
        for setting in ("on", "off"):
            connection.exec_driver_sql(f"SET enable_seqscan = {setting}")
            [[explained]] = connection.exec_driver_sql(f"EXPLAIN (FORMAT JSON) {statement}", parameters).all()
            plans.append(list(_nodes(explained[0]["Plan"])))
        connection.rollback()
    return plans


def _check(harness: Harness, found: tuple[str, Any], index: str, *, covering: bool = False) -> None:
    """The statement walks `index` (reading it alone, when `covering`) and sorts nothing."""
    statement, parameters = found
    if harness.db.dialect_name == "sqlite":
        plan = _sqlite_plan(harness, statement, parameters)
        used = f"COVERING INDEX {index}" if covering else f"INDEX {index}"
        assert any(used in line for line in plan), plan
        assert not any("TEMP B-TREE" in line for line in plan), plan
        assert not any(line.startswith("SCAN traces") and "INDEX" not in line for line in plan), plan
        return
    for nodes in _postgres_plans(harness, statement, parameters):
        kinds = [node["Node Type"] for node in nodes]
        assert "Sort" not in kinds, kinds
        assert "Incremental Sort" not in kinds, kinds
        assert index in {node.get("Index Name") for node in nodes}, kinds
        assert not covering or "Index Only Scan" in kinds, kinds
        assert "Seq Scan" not in kinds, kinds


def test_the_lists_walk_their_indexes_and_sort_nothing(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    projects = _seed(harness)
    listed = sum(1 for n in range(RUNS_PER_PROJECT * 3) if n % 97)

    def rm_page(offset: int) -> tuple[list[str], int]:
        answer = harness.client.get(f"/api/v1/rm/traces?limit=50&offset={offset}", headers=harness.admin)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        return [trace["external_id"] for trace in body["traces"]], body["total"]

    # Newest first over all three projects, merged: the last stored run leads, hidden ones left out.
    newest = [f"run-{n}" for n in range(RUNS_PER_PROJECT * 3 - 1, -1, -1) if n % 97]
    for offset in (0, 12_000):
        with _statements(harness) as caught:
            page, total = rm_page(offset)
        assert (page, total) == (newest[offset : offset + 50], listed)
        _check(harness, _the_walk(caught, "UNION ALL"), "ix_traces_listed_project_created", covering=True)

    # A caller who sees more projects than a merge takes walks every run newest first instead.
    monkeypatch.setattr(traces, "MAX_MERGED_PROJECTS", 2)
    with _statements(harness) as caught:
        assert rm_page(100) == (newest[100:150], listed)
    if harness.db.dialect_name == "sqlite":
        _check(harness, _the_walk(caught, "+traces.project_id"), "ix_traces_created")

    # One project's list is one walk of its own range.
    reader = harness.caller("reader", role="read", project_id=projects[1])
    with _statements(harness) as caught:
        answer = harness.client.get("/api/v1/rm/traces?limit=50&offset=2000", headers=reader)
    own = [name for name in newest if int(name.removeprefix("run-")) % 3 == 1]
    assert [t["external_id"] for t in answer.json()["traces"]] == own[2000:2050]
    assert answer.json()["total"] == len(own)
    walk = _the_walk(caught, "ORDER BY traces.created_at DESC")
    _check(harness, walk, "ix_traces_listed_project_created", covering=True)

    # The console's filters, in one project: a walk of only the runs that have one, newest first.
    console = console_client(harness).http
    for name, count in (
        ("rated", "rated_count"),
        ("commented", "comment_count"),
        ("corrected", "correction_count"),
    ):
        with _statements(harness) as caught:
            html = console.get(f"/ui/traces?project={harness.project_id}&{name}=yes").text
        # The project's newest run with one leads; its newest run of all has none.
        assert ">run-23850<" in html
        assert ">run-23997<" not in html
        _check(harness, _the_walk(caught, f"{count} > 0"), f"ix_traces_project_{name}_started")
