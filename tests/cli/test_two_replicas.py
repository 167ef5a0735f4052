"""Two `redline serve` processes on one store, as two replicas behind a load balancer: they race at
their first start, and clients send the same work to both at once. The invariants are checked in SQL
afterwards: one workspace and one admin token printed; one correction per idempotency key; one live
correction per person and run; a queue rule's `maxOpen` never exceeded.

Both stores: PostgreSQL is the documented way to run replicas; two processes on one SQLite file are
supported too (docs/deployment.md), and must keep the same invariants.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import Any

import httpx
from sqlalchemy import text

from redline.db import Database, make_engine
from tests.cli.test_serve import TOKEN_LINE, serving
from tests.samples import make_run

CLIENTS = 8


@contextmanager
def _two_replicas(database_url: str) -> Iterator[list[tuple[str, list[str]]]]:
    """Both servers started at the same moment (their first start races), one process each."""
    with ExitStack() as stack:
        starts = [serving(database_url, "--workers", "1") for _ in range(2)]
        with ThreadPoolExecutor(2) as pool:
            entered = list(pool.map(lambda start: start.__enter__(), starts))
        for start in starts:
            stack.push(start.__exit__)
        yield [(base, lines) for base, lines, _ in entered]


def _sql(database_url: str, query: str, **values: Any) -> list[Any]:
    db = Database(make_engine(database_url))
    try:
        with db.engine.connect() as connection:
            return list(connection.execute(text(query), values).all())
    finally:
        db.dispose()


def _count_of(database_url: str, query: str, some_id: str) -> int:
    """A count whose query names an id as `CAST(column AS TEXT) IN (:dashed, :bare)`: PostgreSQL writes a
    UUID dashed, SQLite keeps its 32 hex digits."""
    [(count,)] = _sql(database_url, query, dashed=some_id, bare=some_id.replace("-", ""))
    return int(count)


def test_two_replicas_keep_every_invariant(database_url: str) -> None:
    with _two_replicas(database_url) as replicas:
        printed = [TOKEN_LINE.search("".join(lines)) for _, lines in replicas]
        tokens = [match.group(1) for match in printed if match]
        assert len(tokens) == 1, "exactly one replica makes the first workspace and prints its token"
        headers = {"Authorization": f"Bearer {tokens[0]}"}
        clients = [httpx.Client(base_url=base, headers=headers, timeout=30) for base, _ in replicas]
        try:
            _check_every_invariant(database_url, clients)
        finally:
            for client in clients:
                client.close()
    assert _sql(database_url, "SELECT count(*) FROM workspaces") == [(1,)]


def _check_every_invariant(database_url: str, clients: list[httpx.Client]) -> None:
    project_id = clients[0].get("/v1/projects").json()["data"][0]["id"]

    def run_id(title: str) -> str:
        answer = clients[0].post("/v1/runs", json=make_run(project_id, title=title))
        assert answer.status_code == 201, answer.text
        made: str = answer.json()["id"]
        return made

    # The same Idempotency-Key sent to both replicas at once: one correction, the same answer twice.
    keyed = [run_id(f"Keyed {n}") for n in range(CLIENTS)]

    def keyed_correction(n: int) -> tuple[int, int, str]:
        run, client = keyed[n // 2], clients[n % 2]
        body = {"runId": run, "answer": "wrong", "why": f"key {n // 2}"}
        answer = client.post("/v1/corrections", json=body, headers={"Idempotency-Key": f"key-{n // 2}"})
        return n // 2, answer.status_code, answer.json().get("id", answer.text)

    with ThreadPoolExecutor(CLIENTS) as pool:
        answers = list(pool.map(keyed_correction, range(2 * len(keyed))))
    assert {status for _, status, _ in answers} == {201}, answers
    for key in range(len(keyed)):
        assert len({made for k, _, made in answers if k == key}) == 1, answers
    per_run = _sql(database_url, "SELECT run_id, count(*) FROM corrections GROUP BY run_id")
    assert sorted(count for _, count in per_run) == [1] * len(keyed)

    # One person correcting one run through both replicas at once: one live correction, the rest history.
    contested = run_id("Contested")

    def correct_again(n: int) -> int:
        answer = clients[n % 2].post(
            "/v1/corrections", json={"runId": contested, "answer": "wrong", "why": f"take {n}"}
        )
        return answer.status_code

    with ThreadPoolExecutor(CLIENTS) as pool:
        assert set(pool.map(correct_again, range(4 * CLIENTS))) == {201}
    live = (
        "SELECT count(*) FROM corrections "
        "WHERE CAST(run_id AS TEXT) IN (:dashed, :bare) AND superseded_by IS NULL"
    )
    assert _count_of(database_url, live, contested) == 1

    # A queue rule capped at 3, with completed runs arriving through both replicas at once.
    rule = clients[0].post(f"/v1/projects/{project_id}/queue-rules", json={"name": "Capped", "maxOpen": 3})
    assert rule.status_code == 201, rule.text
    rule_id = rule.json()["ruleId"]

    def complete_run(n: int) -> int:
        answer = clients[n % 2].post("/v1/runs", json=make_run(project_id, title=f"Completed {n}"))
        return answer.status_code

    with ThreadPoolExecutor(CLIENTS) as pool:
        assert set(pool.map(complete_run, range(5 * CLIENTS))) == {201}
    shown = clients[1].get(f"/v1/projects/{project_id}/queue-rules/{rule_id}").json()
    assert shown["openItems"] == 3
    open_items = (
        "SELECT count(*) FROM expert_item_rules r JOIN expert_items i ON i.run_id = r.run_id "
        "WHERE CAST(r.rule_id AS TEXT) IN (:dashed, :bare) AND i.state = 'open'"
    )
    assert _count_of(database_url, open_items, rule_id) == 3
