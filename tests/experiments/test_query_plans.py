"""An experiment's results page, its summary and a comparison read indexes, never a big table whole, on
both stores: a store holding three experiments of one dataset (two compared, one beside them) is ANALYZEd
once per module, and each request's SQL is explained as tests/store/test_query_plans.py explains the
lists'. A page must sort none of its rows, and a page after a cursor must start its index range there."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import text
from starlette.testclient import TestClient

from redline.app import create_app
from redline.config import Settings
from redline.db import Database, make_engine
from tests.conftest import ADMIN_TOKEN, bootstrap_admin, database_copy
from tests.store.queryplans import Plan, Statement, captured, explain, faults, seeks

RESULTS = 2_000
OTHER_RESULTS = 4_000
BIG_TABLES = ("experiment_results", "annotations", "traces")
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@dataclass
class Store:
    db: Database
    client: TestClient
    a: str
    b: str
    deep_result: str
    deep_datapoint: str


def _ok(answer: Any) -> Any:
    assert answer.status_code == 200, answer.text
    return answer.json()


def _record(client: TestClient, experiment_id: str, points: list[str], rng: random.Random) -> None:
    for start in range(0, len(points), 1000):
        results = [
            {
                "datapoint_id": point,
                "run": {"output": "x", "spans": [{"span_id": "llm", "name": "answer"}]},
                "evaluations": [
                    {"evaluator": "exact", "output_type": "boolean", "value": rng.random() < 0.5},
                    {"evaluator": "score", "output_type": "number", "value": rng.random()},
                ],
            }
            for point in points[start : start + 1000]
        ]
        _ok(client.post(f"/v2/experiments/{experiment_id}/results", json={"results": results}, headers=ADMIN))


@pytest.fixture(scope="module")
def store(backend: str, template: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    with database_copy(backend, template, tmp_path_factory.mktemp("experiment-plans")) as url:
        db = Database(make_engine(url))
        bootstrap_admin(db)
        settings = Settings(database_url=url, max_body_bytes=16 * 1024 * 1024)
        with TestClient(create_app(settings, db), raise_server_exceptions=False) as client:
            dataset = _ok(client.post("/v2/datasets", json={"display_name": "d"}, headers=ADMIN))
            points: list[str] = []
            for start in range(0, OTHER_RESULTS, 1000):
                items = [{"inputs": {"n": n}} for n in range(start, start + 1000)]
                path = f"/v2/datasets/{dataset['_id']}/datapoints/bulk"
                points += [p["_id"] for p in _ok(client.post(path, json={"items": items}, headers=ADMIN))]
            made = [
                _ok(
                    client.post(
                        "/v2/experiments",
                        json={"display_name": name, "dataset_id": dataset["_id"], "agent": "bot"},
                        headers=ADMIN,
                    )
                )["_id"]
                for name in ("a", "b", "other")
            ]
            rng = random.Random(0)
            for experiment_id, count in zip(made, (RESULTS, RESULTS, OTHER_RESULTS), strict=True):
                _record(client, experiment_id, points[:count], rng)
            with db.write() as session:
                session.execute(text("ANALYZE"))
            page = _ok(client.get(f"/v2/experiments/{made[0]}/results", params={"limit": 200}, headers=ADMIN))
            for _ in range(RESULTS * 3 // 4 // 200 - 1):
                after = page["data"][-1]["_id"]
                page = _ok(
                    client.get(
                        f"/v2/experiments/{made[0]}/results",
                        params={"limit": 200, "starting_after": after},
                        headers=ADMIN,
                    )
                )
            deep = page["data"][-1]
            yield Store(db, client, made[0], made[1], deep["_id"], deep["datapoint_id"])
        db.dispose()


@dataclass(frozen=True)
class Case:
    name: str
    request: Callable[[Store], Any]
    # The table a page of the case reads in order (None: the case reads no page, only aggregates).
    page_of: str | None = None
    # Whether the page starts after a cursor, which its index range must start at.
    deep: bool = False


def _get(path: str, **params: Any) -> Callable[[Store], Any]:
    def request(store: Store) -> Any:
        return _ok(store.client.get(path.format(a=store.a, b=store.b), params=params, headers=ADMIN))

    return request


def _deep_results(store: Store) -> Any:
    path = f"/v2/experiments/{store.a}/results"
    return _ok(
        store.client.get(path, params={"limit": 50, "starting_after": store.deep_result}, headers=ADMIN)
    )


def _deep_comparison(store: Store) -> Any:
    path = f"/v2/experiments/{store.a}/compare/{store.b}"
    params: dict[str, Any] = {"evaluator": "exact", "limit": 50, "starting_after": store.deep_datapoint}
    return _ok(store.client.get(path, params=params, headers=ADMIN))


CASES = [
    Case("results, page 1", _get("/v2/experiments/{a}/results", limit=50), "experiment_results"),
    Case("results, deep", _deep_results, "experiment_results", deep=True),
    Case("summary", _get("/v2/experiments/{a}")),
    Case(
        "comparison, page 1", _get("/v2/experiments/{a}/compare/{b}", evaluator="exact"), "experiment_results"
    ),
    Case("comparison, deep", _deep_comparison, "experiment_results", deep=True),
]


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)


def _starts_at_cursor(plan: Plan) -> bool:
    """The page's read of the results starts at the cursor: its index range (SQLite's SEARCH constraint,
    PostgreSQL's Index Cond) bounds the datapoint id, alone (a datapoint has one result, so the unique
    index on (experiment_id, datapoint_id) orders a page) or with the result's id."""
    bounds = ("datapoint_id>?", "datapoint_id<?", "(datapoint_id,id)>?", "(datapoint_id,id)<?")
    if plan.sqlite is not None:
        return any(
            detail.startswith("SEARCH experiment_results ") and any(bound in detail for bound in bounds)
            for detail in plan.sqlite
        )
    return seeks(plan, "experiment_results", ("datapoint_id", "id")) or any(
        node.get("Relation Name") == "experiment_results"
        and re.search(r"\(datapoint_id [<>]", node.get("Index Cond", "")) is not None
        for node in _nodes(plan.postgresql or {})
    )


def _plans(connection: Any, statement: Statement, *, page: bool) -> list[Plan]:
    """As tests/store/test_query_plans.py asks: PostgreSQL with `enable_seqscan` off (a Seq Scan then
    means no index can serve the statement), and a page's natural plan too, which must not sort."""
    if connection.dialect.name == "sqlite":
        return [explain(connection, statement)]
    forced = explain(connection, statement, seqscan=False)
    return [forced, explain(connection, statement)] if page else [forced]


def _faults(store: Store, case: Case) -> list[str]:
    with captured(store.db.engine) as sent:
        case.request(store)
    pages = [statement for statement in sent if case.page_of and statement.is_page_of(case.page_of)]
    if case.page_of and not pages:
        return ["no page among:\n" + "\n".join(statement.sql for statement in sent)]
    found: list[str] = []
    with store.db.engine.connect() as connection:
        for statement in sent:
            ordered = statement in pages
            for plan in _plans(connection, statement, page=ordered):
                found += [f"{fault}\n{plan}" for fault in faults(plan, BIG_TABLES, ordered=ordered)]
        for plan in _plans(connection, pages[-1], page=True) if case.deep else []:
            if not _starts_at_cursor(plan):
                found.append(f"the cursor is no index range\n{plan}")
    return found


def test_experiment_reads_walk_indexes(store: Store) -> None:
    failed = {case.name: found for case in CASES if (found := _faults(store, case))}
    assert not failed, "\n\n".join(f"{name}: " + "\n".join(found) for name, found in failed.items())
