"""Inter-reviewer agreement at volume: GET /v2/annotation-queues/{id}/agreement over a queue of 100,000
items with three reviewers each, SQLite and PostgreSQL: served stored, and the job that computes it.

For each store (--store sqlite|postgresql|both) this makes a fresh, migrated store and, in this process
(the figures are the app's and the store's, not a network's), through the real app (Starlette's
TestClient) as a client would call it:

1. the review keys through POST /v2/human-reviews: `rating` (categorical: good, ok, bad), `helpfulness`
   (range 1–5, whole numbers) and `defects` (categorical, several of four options); --keys says how many
   of them, in that order, the queue is reviewed with (default 1: three reviewers' values on each item);
2. --reviewers people (8) through the identity service, as `redline users add` makes them;
3. --items runs (100,000) through the ingest service, 1,000 a transaction, as POST /v1/runs/batch does,
   and a queue holding each as a whole trace (the queues service, as the console's paste form does);
4. three of the people, drawn for each item, each saving a value for each key: seeded straight into the
   `annotations` table with `redline.db.bulk_insert` as `save_values` writes them (posting 300,000
   reviews over HTTP would take many minutes and measure nothing else). Each item has a true value;
   a reviewer gives it 80% of the time, else any value (`random.Random(7)`). PostgreSQL is ANALYZEd
   afterwards, as autovacuum soon would;
5. the agreement as the server answers it, the queue being above REDLINE_AGREEMENT_LIVE_ITEMS (set to 0
   here, whatever --items is): the first request (being computed) once; the `queue-agreement` job run
   --jobs (3) times, each timed (`stats/agreement_job.py`); then the stored figures, 3 times untimed and
   --repeat (20) times: p50/p99; then the same once 5,000 values were saved elsewhere since (the most
   the stale check looks through, `agreement_served.CHECKED`). **Target: p99 < 500 ms.**
   --live computes the figures in each request instead (the limit raised above every queue), as a
   queue within the limit is answered: what the limit is chosen from.
   --plans prints the store's plan of the statement it runs (`stats/agreement_counts.py`).

    python bench/agreement.py                          # both stores, about 8 minutes
    python bench/agreement.py --keys 3                 # three keys: 900,000 values
    python bench/agreement.py --store sqlite --items 20000 --plans
    python bench/agreement.py --live --items 5000      # counted in the request, at the default limit
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from datetime import timedelta
from typing import Any, cast

from sqlalchemy import Table, event, select, text
from sqlalchemy.engine import Connection

from _report import Figure, exit_status, print_figures, requests_figure
from _server import DEFAULT_POSTGRES_URL, fresh_store, store_kinds
from queues import Bench
from redline.annotations.models import Annotation
from redline.db import bulk_insert, utcnow
from redline.identity import service as identity
from redline.identity.models import Principal
from redline.ingest import runs as ingest
from redline.jobs.worker import JobWorker
from redline.queues.annotation import service as queues
from redline.stats import agreement_job
from redline.stats.agreement_served import CHECKED
from redline.traces.models import Trace
from redline.traces.schemas import RunIn

BENCH_DATABASE = "redline_bench_agreement"
TARGET_P99_MS = 500.0
# --live: a limit no queue here is above.
LIVE_ABOVE_EVERYTHING = 10**9
BATCH = 1_000
SEED_CHUNK = 20_000
PER_ITEM = 3
TRUE_SHARE = 0.8
KEYS: list[dict[str, Any]] = [
    {"key": "rating", "display_name": "Rating", "type": "categorical", "options": ["good", "ok", "bad"]},
    {"key": "helpfulness", "display_name": "Helpfulness", "type": "range", "min": 1, "max": 5},
    {
        "key": "defects",
        "display_name": "Defects",
        "type": "categorical",
        "options": ["grammar", "spelling", "hallucination", "off_topic"],
        "multiple": True,
    },
]


def call(bench: Bench, method: str, path: str, **kwargs: Any) -> Any:
    """A request to the app as the admin; its answer's JSON, which must be a 200's."""
    answer = bench.app.request(method, path, headers=bench.headers, **kwargs)
    assert answer.status_code == 200, answer.text
    return answer.json()


# --------------------------------------------------------------------------------------------- seeding


def _queue(bench: Bench, keys: int) -> str:
    ids = [
        call(bench, "POST", "/v2/human-reviews", json={**key, "project_id": str(bench.project_id)})["_id"]
        for key in KEYS[:keys]
    ]
    queue = call(
        bench,
        "POST",
        "/v2/annotation-queues",
        json={"display_name": "Agreement", "description": "", "project_id": str(bench.project_id)},
    )
    call(bench, "PATCH", f"/v2/annotation-queues/{queue['_id']}", json={"human_review_ids": ids})
    return str(queue["_id"])


def _people(bench: Bench, count: int) -> list[tuple[uuid.UUID, str]]:
    with bench.db.write() as session:
        operator = identity.operator(session)
        made = [
            identity.create_user(session, operator, name=f"reviewer {n + 1}", kind="user")
            for n in range(count)
        ]
        return [(principal.id, principal.name) for principal in made]


def _runs(bench: Bench, count: int, queue_id: str) -> list[uuid.UUID]:
    """`count` runs recorded 1,000 a transaction, each put in the queue as a whole trace."""
    started = utcnow() - timedelta(days=1)
    for start in range(0, count, BATCH):
        runs = [
            RunIn.model_validate(
                {
                    "projectId": str(bench.project_id),
                    "agent": "support-agent",
                    "status": "completed",
                    "externalId": f"run-{number}",
                    "startedAt": (started + timedelta(seconds=number)).isoformat(),
                }
            )
            for number in range(start, min(count, start + BATCH))
        ]
        with bench.db.write() as session:
            admin = identity.Actor.of(session.get_one(Principal, bench.admin_id))
            made = ingest.record_runs(session, admin, runs)
            queues.add_traces(session, admin, uuid.UUID(queue_id), [str(run.id) for run in made])
    with bench.db.read() as session:
        return list(session.scalars(select(Trace.id).order_by(Trace.started_at)))


def _value(key: dict[str, Any], rng: random.Random) -> Any:
    if key["type"] == "range":
        return rng.randint(int(key["min"]), int(key["max"]))
    if key.get("multiple"):
        return rng.sample(key["options"], rng.randint(1, 2))
    return rng.choice(key["options"])


def _row(
    ident: uuid.UUID, trace_id: uuid.UUID, author: tuple[uuid.UUID, str], key: str, value: Any, now: Any
) -> dict[str, Any]:
    """One review value as `save_values` writes it."""
    author_id, author_name = author
    return {
        "id": ident,
        "trace_id": trace_id,
        "step_id": None,
        "span_id": None,
        "rating": None,
        "comment": None,
        "quote": None,
        "label_error": False,
        "label_error_note": None,
        "metadata": None,
        "author_id": author_id,
        "author_name": author_name,
        "created_at": now,
        "updated_at": now,
        "key": key,
        "value": value,
        "explanation": None,
        "source": "human",
        "output_type": None,
        "parent_id": None,
    }


def _annotations(
    traces: list[uuid.UUID], people: list[tuple[uuid.UUID, str]], keys: int
) -> list[dict[str, Any]]:
    """Three people's values on each trace, for each key: the trace's true value 80% of the time."""
    rng = random.Random(7)
    now = utcnow()
    rows = []
    for trace_id in traces:
        truth = [_value(key, rng) for key in KEYS[:keys]]
        for person in rng.sample(people, PER_ITEM):
            for key, true_value in zip(KEYS[:keys], truth, strict=True):
                said = true_value if rng.random() < TRUE_SHARE else _value(key, rng)
                ident = uuid.UUID(int=rng.getrandbits(128), version=4)
                rows.append(_row(ident, trace_id, person, key["key"], said, now))
    return rows


def seed(bench: Bench, args: argparse.Namespace) -> tuple[str, int, float]:
    """The queue, its runs and its values; the queue's id, the values seeded and the seconds taken."""
    started = time.perf_counter()
    queue_id = _queue(bench, args.keys)
    people = _people(bench, args.reviewers)
    traces = _runs(bench, args.items, queue_id)
    rows = _annotations(traces, people, args.keys)
    table = cast(Table, Annotation.__table__)
    with bench.db.write() as session:
        for start in range(0, len(rows), SEED_CHUNK):
            bulk_insert(session, table, rows[start : start + SEED_CHUNK])
    if bench.db.dialect_name == "postgresql":
        with bench.db.engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE"))
    return queue_id, len(rows), time.perf_counter() - started


# ------------------------------------------------------------------------------------------- measuring


def plans(bench: Bench, path: str) -> None:
    """The store's plan of each statement the agreement runs on the annotations, printed."""
    caught: list[tuple[str, Any]] = []

    def catch(conn: Connection, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if "annotations" in statement and statement.lstrip().upper().startswith(("SELECT", "WITH")):
            caught.append((statement, parameters))

    event.listen(bench.db.engine, "before_cursor_execute", catch)
    try:
        call(bench, "GET", path)
    finally:
        event.remove(bench.db.engine, "before_cursor_execute", catch)
    explain = "EXPLAIN QUERY PLAN " if bench.db.dialect_name == "sqlite" else "EXPLAIN ANALYZE "
    with bench.db.engine.connect() as connection:
        for statement, parameters in caught:
            print(f"--- {statement}\n", file=sys.stderr)
            found = connection.exec_driver_sql(explain + statement, parameters)
            for row in found:
                print("   ", " | ".join(str(cell) for cell in row), file=sys.stderr)


def _timed_requests(bench: Bench, path: str, repeat: int) -> tuple[list[float], float, float, Any]:
    """`repeat` requests after 3 untimed: their latencies, the wall seconds, this process's CPU ms a
    request, and the last answer."""
    for _ in range(3):
        call(bench, "GET", path)
    latencies = []
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeat):
        begun = time.perf_counter()
        answer = call(bench, "GET", path)
        latencies.append(time.perf_counter() - begun)
    # The app and SQLite run in this process, so its CPU is the request's (PostgreSQL's own is not in it):
    # a figure that moves less with the machine's other work than the wall time does.
    cpu_ms = (time.process_time() - cpu) * 1000 / repeat
    return latencies, time.perf_counter() - started, cpu_ms, answer


def _request_figure(kind: str, measure: str, timed: tuple[list[float], float, float, Any]) -> Figure:
    latencies, seconds, cpu_ms, _ = timed
    figure = requests_figure(
        kind, measure, latencies, seconds, f"this process's CPU {cpu_ms:,.0f} ms a request"
    )
    figure.target = f"p99 < {TARGET_P99_MS:.0f} ms"
    figure.met = figure.p99_ms is not None and figure.p99_ms < TARGET_P99_MS
    return figure


def _run_job(bench: Bench, queue_id: str) -> float:
    """Ask for the queue's figures as a stale answer does, and run the job: its seconds."""
    with bench.db.write() as session:
        agreement_job.ask_for_figures(session, uuid.UUID(queue_id), None)
    begun = time.perf_counter()
    assert JobWorker(bench.db, [agreement_job.COMPUTING_AGREEMENT]).run_once()
    return time.perf_counter() - begun


def _values_elsewhere(bench: Bench, count: int) -> None:
    """`count` values saved after the figures were computed under a key the queue doesn't ask: what
    the stale check looks through (at most `CHECKED`) and finds nothing in, its costliest answer."""
    with bench.db.read() as session:
        traces = list(session.scalars(select(Trace.id).order_by(Trace.started_at).limit(count)))
        admin = session.get_one(Principal, bench.admin_id)
        author = (admin.id, admin.name)
    now = utcnow()
    rows = [_row(uuid.uuid4(), trace_id, author, "elsewhere", "x", now) for trace_id in traces]
    with bench.db.write() as session:
        bulk_insert(session, cast(Table, Annotation.__table__), rows)


def measure_live(bench: Bench, kind: str, queue_id: str, repeat: int) -> tuple[list[Figure], Any]:
    """The figures computed in each request (--live: the limit raised above the queue)."""
    timed = _timed_requests(bench, f"/v2/annotation-queues/{queue_id}/agreement", repeat)
    assert timed[3]["state"] == "live", timed[3]["state"]
    return [_request_figure(kind, "GET …/agreement, computed live", timed)], timed[3]


def measure_served(
    bench: Bench, kind: str, queue_id: str, repeat: int, jobs: int
) -> tuple[list[Figure], Any]:
    """The first answer (being computed), the job's run `jobs` times, the stored figures served, and
    served again once `CHECKED` values were saved elsewhere since."""
    path = f"/v2/annotation-queues/{queue_id}/agreement"
    begun = time.perf_counter()
    first = call(bench, "GET", path)
    first_ms = (time.perf_counter() - begun) * 1000
    assert first["state"] == "computing", first["state"]
    runs = [_run_job(bench, queue_id) for _ in range(jobs)]
    stored = _timed_requests(bench, path, repeat)
    assert (stored[3]["state"], stored[3]["stale"]) == ("stored", False), stored[3]["state_sentence"]
    _values_elsewhere(bench, CHECKED)
    checked = _timed_requests(bench, path, repeat)
    assert (checked[3]["state"], checked[3]["stale"]) == ("stored", False), checked[3]["state_sentence"]
    job = Figure(
        store=kind,
        measure="the job that computes them",
        count=len(runs),
        seconds=round(sum(runs), 2),
        rate=None,
        p50_ms=round(statistics.median(runs) * 1000),
        p99_ms=round(max(runs) * 1000),
        note=f"the first answer, being computed, took {first_ms:,.0f} ms; p99 is the slowest run",
    )
    return [
        _request_figure(kind, "GET …/agreement, stored", stored),
        _request_figure(kind, f"GET …/agreement, stored, {CHECKED:,} values elsewhere since", checked),
        job,
    ], stored[3]


def bench_store(kind: str, args: argparse.Namespace) -> list[Figure]:
    with fresh_store(kind, args.postgres_url, BENCH_DATABASE) as store:
        bench = Bench(store.url)
        try:
            print(f"{kind}: {args.items:,} items, {PER_ITEM} reviewers each ...", file=sys.stderr)
            queue_id, values, seconds = seed(bench, args)
            print(f"{kind}: seeded {values:,} values in {seconds:.0f} s", file=sys.stderr)
            if args.plans:
                plans(bench, f"/v2/annotation-queues/{queue_id}/agreement")
            if args.live:
                figures, answer = measure_live(bench, kind, queue_id, args.repeat)
            else:
                figures, answer = measure_served(bench, kind, queue_id, args.repeat, args.jobs)
        finally:
            bench.app.close()
            bench.db.dispose()
    said = [key["sentences"][0] for key in answer["keys"]]
    counts = {key["items"] for key in answer["keys"]}
    for figure in figures:
        figure.note = f"{args.keys} keys, {values:,} values; {figure.note}"
    figures[0].note += "; " + " | ".join(said)
    if counts != {args.items}:
        figures[0].note += f"; MISMATCH: items {sorted(counts)}, expected {args.items:,}"
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--reviewers", type=int, default=8)
    parser.add_argument("--keys", type=int, choices=(1, 2, 3), default=1)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=3, help="how many times the job is run and timed")
    parser.add_argument(
        "--live", action="store_true", help="compute the figures in each request, as a small queue's are"
    )
    parser.add_argument("--plans", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    # Read by the app's settings when `Bench` makes it: with --live every queue is counted in the request,
    # otherwise every queue is the job's, whatever --items is.
    os.environ["REDLINE_AGREEMENT_LIVE_ITEMS"] = str(LIVE_ABOVE_EVERYTHING if args.live else 0)
    figures = []
    for kind in store_kinds(args.store):
        done = bench_store(kind, args)
        print_figures(done, args.json, memory=False)
        figures += done
    return exit_status(figures)


if __name__ == "__main__":
    raise SystemExit(main())
