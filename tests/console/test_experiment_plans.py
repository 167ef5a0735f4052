"""The experiments pages of the console read indexes, never a big table whole, on both stores: the list
(newest first, sorted by a figure, by how many were reviewed), a step of the review screen (plain, only
unreviewed past the reviewed ones, only where an evaluator failed), the screen, a save, and the
comparison. The store holds two experiments of one dataset, the first reviewed in part, and is never
analyzed: SQLite's plan of each statement, and PostgreSQL's with `enable_seqscan` off (a Seq Scan then
means no index can serve it), as tests/store/test_query_plans.py asks. What PostgreSQL without
statistics makes of them at 10,000 results (bench/console_experiments.py) is in bench/README.md: it once
planned the list's figures and the filters' tests as a walk of every annotation for each result."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from starlette.testclient import TestClient

from redline.app import create_app
from redline.config import Settings
from redline.db import Database, make_engine
from tests.conftest import ADMIN_TOKEN, bootstrap_admin, database_copy
from tests.store.queryplans import captured, explain, faults

RESULTS = 600
REVIEWED = 200
BIG_TABLES = ("experiment_results", "annotations", "traces", "experiment_annotations")
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@dataclass
class Store:
    db: Database
    client: TestClient
    a: str
    b: str
    results: list[str]
    csrf: str


def _ok(answer: Any) -> Any:
    assert answer.status_code == 200, answer.text
    return answer.json()


def _seed(client: TestClient) -> tuple[str, str, list[str]]:
    _ok(
        client.post(
            "/v2/human-reviews",
            json={
                "key": "rating",
                "display_name": "Rating",
                "type": "categorical",
                "options": ["good", "bad"],
            },
            headers=ADMIN,
        )
    )
    dataset = _ok(client.post("/v2/datasets", json={"display_name": "d"}, headers=ADMIN))
    items = [{"inputs": {"n": n}} for n in range(RESULTS)]
    path = f"/v2/datasets/{dataset['_id']}/datapoints/bulk"
    points = [point["_id"] for point in _ok(client.post(path, json={"items": items}, headers=ADMIN))]
    rng = random.Random(0)
    made: list[tuple[str, list[str]]] = []
    for name in ("a", "b"):
        body = {"display_name": name, "dataset_id": dataset["_id"], "agent": "bot"}
        experiment = _ok(client.post("/v2/experiments", json=body, headers=ADMIN))["_id"]
        sent = [
            {
                "datapoint_id": point,
                "run": {"output": "x", "spans": [{"span_id": "llm", "name": "answer"}]},
                "evaluations": [
                    {"evaluator": "exact", "output_type": "boolean", "value": rng.random() < 0.5}
                ],
            }
            for point in points
        ]
        recorded = _ok(
            client.post(f"/v2/experiments/{experiment}/results", json={"results": sent}, headers=ADMIN)
        )
        made.append((experiment, [result["_id"] for result in recorded["data"]]))
    (a, results), (b, _) = made
    for result in results[:REVIEWED]:
        body = {"annotations": [{"key": "rating", "value": rng.choice(["good", "bad"])}]}
        _ok(client.post(f"/v2/experiments/{a}/results/{result}/annotations", json=body, headers=ADMIN))
    return a, b, results


@pytest.fixture(scope="module")
def store(backend: str, template: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    with database_copy(backend, template, tmp_path_factory.mktemp("experiment-pages")) as url:
        db = Database(make_engine(url))
        bootstrap_admin(db)
        settings = Settings(database_url=url, max_body_bytes=16 * 1024 * 1024)
        with TestClient(create_app(settings, db), raise_server_exceptions=False) as client:
            a, b, results = _seed(client)
            signed = client.post(
                "/ui/sign-in", data={"token": ADMIN_TOKEN, "next": "/ui/traces"}, follow_redirects=False
            )
            assert signed.status_code == 303
            page = client.get("/ui/experiments").text
            csrf = page.split('<meta name="csrf-token" content="', 1)[1].split('"', 1)[0]
            yield Store(db, client, a, b, results, csrf)
        db.dispose()


def _pages(store: Store) -> dict[str, Any]:
    review = f"/ui/experiments/{store.a}/review"
    middle = store.results[RESULTS // 2]
    save = f"/ui/experiments/{store.a}/results/{middle}/review"
    headers = {"X-CSRF-Token": store.csrf, "Accept": "application/json"}
    return {
        "list": lambda: store.client.get("/ui/experiments"),
        "list by a figure": lambda: store.client.get("/ui/experiments?sort=-share:rating%3Dgood"),
        "list by reviewed": lambda: store.client.get("/ui/experiments?sort=reviewed"),
        "J": lambda: store.client.get(f"{review}?result={middle}&go=next"),
        "J, only unreviewed past the reviewed": lambda: store.client.get(
            f"{review}?result={store.results[0]}&go=next&unreviewed=1"
        ),
        "J, only where an evaluator failed": lambda: store.client.get(
            f"{review}?result={middle}&go=next&failed=1"
        ),
        "the screen": lambda: store.client.get(f"{review}?result={middle}"),
        "a save": lambda: store.client.post(save, json={"key": "rating", "value": "good"}, headers=headers),
        "the comparison": lambda: store.client.get(f"/ui/experiments/{store.a}/compare?with={store.b}"),
    }


@pytest.mark.parametrize(
    "page",
    [
        "list",
        "list by a figure",
        "list by reviewed",
        "J",
        "J, only unreviewed past the reviewed",
        "J, only where an evaluator failed",
        "the screen",
        "a save",
        "the comparison",
    ],
)
def test_the_experiments_pages_read_indexes(store: Store, page: str) -> None:
    with captured(store.db.engine) as sent:
        answer = _pages(store)[page]()
    assert answer.status_code in (200, 303), answer.text
    found: list[str] = []
    with store.db.engine.connect() as connection:
        for statement in sent:
            plan = explain(connection, statement, seqscan=False)
            found += [f"{fault}\n{plan}" for fault in faults(plan, BIG_TABLES, ordered=False)]
    assert not found, "\n\n".join(found)
