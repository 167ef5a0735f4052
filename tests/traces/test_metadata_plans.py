"""The plan a declared-key search runs: a walk of the side table's index in the list's order, never the
traces' JSON and never a sort, on a store big enough for the planners to mean it (20,000 runs, ANALYZE;
PostgreSQL also with sequential scans off, since it scans small tables whatever their indexes), in one
project and merged over two."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, event, insert
from sqlalchemy.engine import Connection

from redline.traces.models import Trace
from tests.conftest import Harness, run_waiting_jobs

RUNS = 20_000
CUSTOMERS = 20


def _seed(harness: Harness) -> str:
    """RUNS runs over two projects (the harness's and a second, alternating in time), both indexing
    `customer_id`; the second project's id."""
    second = harness.client.post("/v1/projects", json={"name": "second"}, headers=harness.admin)
    assert second.status_code == 201, second.text
    projects = [uuid.UUID(harness.project_id), uuid.UUID(second.json()["id"])]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [
        {
            "id": uuid.uuid4(),
            "project_id": projects[n % 2],
            "external_id": f"r{n}",
            "status": "completed",
            "source_format": "native",
            "metadata": {"customer_id": f"c{n % CUSTOMERS}", "n": n},
            "started_at": start + timedelta(seconds=n),
            "settled_at": start,
        }
        for n in range(RUNS)
    ]
    with harness.db.write() as session:
        session.execute(insert(cast(Table, Trace.__table__)), rows)
    for project in projects:
        made = harness.client.post(
            f"/v1/projects/{project}/indexed-metadata-keys",
            json={"key": "customer_id"},
            headers=harness.admin,
        )
        assert made.status_code == 201, made.text
    assert run_waiting_jobs(harness.db) == 2
    with harness.db.engine.begin() as connection:
        connection.exec_driver_sql("ANALYZE")
    return str(projects[1])


def _search_statement(harness: Harness, filters: list[dict[str, Any]]) -> tuple[str, Any]:
    """The statement a real search sent that reads the traces, with its parameters."""
    seen: list[tuple[str, Any]] = []

    def keep(
        conn: Connection, cursor: Any, statement: str, parameters: Any, context: Any, many: bool
    ) -> None:
        if "FROM traces" in statement and "ORDER BY" in statement:
            seen.append((statement, parameters))

    event.listen(harness.db.engine, "before_cursor_execute", keep)
    try:
        body = {"from": "2000-01-01T00:00:00Z", "to": "2100-01-01T00:00:00Z", "limit": 50, "filters": filters}
        answer = harness.client.post("/v3/traces/search", json=body, headers=harness.admin)
    finally:
        event.remove(harness.db.engine, "before_cursor_execute", keep)
    assert answer.status_code == 200, answer.text
    assert len(answer.json()["data"]) == 50
    [found] = seen
    return found


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def _check_walks_the_side_table(harness: Harness, backend: str, statement: str, parameters: Any) -> None:
    """The statement walks the side table's index (one walk, or one a project merged) and sorts nothing."""
    with harness.db.engine.connect() as connection:
        if backend == "sqlite":
            plan = [
                row[3] for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
            ]
            assert any(
                "run_metadata_values USING" in step and "ix_run_metadata_values_lookup" in step
                for step in plan
            ), plan
            assert not any("TEMP B-TREE" in step for step in plan), plan
            assert not any(step.startswith("SCAN traces") for step in plan), plan
        else:
            connection.exec_driver_sql("SET enable_seqscan = off")
            [[document]] = connection.exec_driver_sql(f"EXPLAIN (FORMAT JSON) {statement}", parameters).all()
            nodes = list(_nodes((json.loads(document) if isinstance(document, str) else document)[0]["Plan"]))
            kinds = [node["Node Type"] for node in nodes]
            assert any(node.get("Index Name") == "ix_run_metadata_values_lookup" for node in nodes), kinds
            assert "Sort" not in kinds, kinds
            assert not any(
                node.get("Relation Name") == "traces" and "Seq" in node["Node Type"] for node in nodes
            )


def test_a_declared_key_search_walks_the_side_tables_index(harness: Harness, backend: str) -> None:
    second = _seed(harness)
    # The contrast that makes the plan below mean something: a key not declared reads the runs' JSON.
    undeclared, _ = _search_statement(harness, [{"field": "metadata.n", "op": "neq", "values": ["-1"]}])
    assert "run_metadata_values" not in undeclared
    assert ("json_extract" if backend == "sqlite" else "->>") in undeclared.lower()
    customer = {"field": "metadata.customer_id", "values": ["c7"]}
    # Both projects (the admin reads every one): a walk of each project's range of the index, merged.
    statement, parameters = _search_statement(harness, [customer])
    assert "UNION ALL" in statement
    _check_walks_the_side_table(harness, backend, statement, parameters)
    # One project: one walk.
    statement, parameters = _search_statement(
        harness, [customer, {"field": "project_id", "values": [second]}]
    )
    assert "UNION ALL" not in statement
    _check_walks_the_side_table(harness, backend, statement, parameters)
