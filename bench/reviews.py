"""The reviews surface at volume: span annotations, an automation at ingest, and stepping through a big queue.

For each store (--store sqlite|postgresql|both) a fresh store (a temporary SQLite file, or the database
`redline_bench_reviews` made again through --postgres-url) and one real `redline serve` on it
(`_server.py`, as `annotations.py` starts it), then, by --parts:

1. **annotate**: --traces runs with three spans each (root, llm, tool) through POST /v1/runs/batch; ten
   human reviews defined through POST /v2/human-reviews (categorical, multi-select, range and text:
   `KEYS`); then --requests `POST /v2/traces/{trace_id}/spans/{span_id}/annotation`, each with a value
   for all ten keys and an `identity_id` of 200 end users, first one after another on one connection,
   then as many more over --clients connections at once (`_load.py`'s light client: bytes made before
   the clock, one asyncio loop). Requests/s, p50/p99, and the CPU the server (all its processes) and
   the bench spent per request.
2. **automation**: two projects; one gets a queue with an automation of five filters (metadata equals,
   contains, exists and a numeric gt, plus agent and status). --runs runs are sent to each project in
   batches of --batch-size through POST /v1/runs/batch, the two projects' batches alternating so both
   see the same load; the overhead per trace is the difference of their mean batch times divided by the
   batch size. The queue must then hold exactly the runs the filters match (computed here in Python).
3. **navigation**: a queue of --items items (whole traces of the automation part's plain project, or
   as many small runs ingested for it) seeded straight into `queue_items` with `redline.db.bulk_insert`,
   a third of them reviewed, into a queue made through the API, its counters set by `queues.items.recount`;
   then --steps `GET /v2/annotation-queues/{id}/review?item_id&direction=next|previous[&unreviewed=true]`
   from random items, one after another; p50/p99. Every answer's position and totals are checked
   against the seeded order.

`load` is the 1-minute load average when each measure ended. The exit status is 1 if a SQLite target
is missed or a check fails; PostgreSQL is shown against the same targets.

    python bench/reviews.py                              # both stores, all parts (~10 minutes)
    python bench/reviews.py --store sqlite --parts annotate --requests 2000
    python bench/reviews.py --help
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlencode

import httpx
import orjson
from sqlalchemy import Table, select, text

from _load import raw_request, send_all
from _report import Figure, latency_ms, print_figures, print_table, requests_figure
from _server import (
    DEFAULT_POSTGRES_URL,
    Server,
    Store,
    cpu_spent,
    fresh_store,
    new_project,
    project_id,
    serve,
    store_kinds,
)
from ingest import batch_bodies
from redline.db import Database, bulk_insert, make_engine
from redline.identity.models import Principal
from redline.queues.annotation.items import recount
from redline.queues.models import QueueItem
from redline.traces.models import Trace

PARTS = ("annotate", "automation", "navigation")
ANNOTATE_ROUTE = "/v2/traces/{trace_id}/spans/{span_id}/annotation"
REVIEW_ROUTE = "/v2/annotation-queues/{queue_id}/review"
STARTED = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
SPAN_IDS = ("root", "llm", "tool")
# Not `_server.py`'s `redline_bench`: the other benches drop and make that one, and they may run at the
# same time on a shared machine.
REVIEWS_DATABASE = "redline_bench_reviews"
END_USERS = 200
SEED_CHUNK = 5_000
REVIEWED_SHARE = 1 / 3

# Targets of the issue, for SQLite on this machine; PostgreSQL is reported against the same numbers.
TARGET_ANNOTATIONS_PER_SECOND = 500.0
TARGET_NAVIGATION_P99_MS = 20.0

DEFECTS = ["grammatical", "spelling", "hallucination", "repetition", "inappropriate", "off_topic"]
TOPICS = ["billing", "shipping", "refund", "account", "other"]
# Ten review keys, a mix of every type: what a support team defines.
KEYS: list[dict[str, Any]] = [
    {"key": "rating", "type": "categorical", "options": ["good", "bad"]},
    {"key": "defects", "type": "categorical", "options": DEFECTS, "multiple": True},
    {"key": "tone", "type": "categorical", "options": ["friendly", "neutral", "curt", "rude"]},
    {"key": "topics", "type": "categorical", "options": TOPICS, "multiple": True},
    {"key": "resolved", "type": "categorical", "options": ["yes", "no", "partly"]},
    {"key": "score", "type": "range", "min": 0, "max": 10},
    {"key": "confidence", "type": "range", "min": 0, "max": 1},
    {"key": "helpfulness", "type": "range", "min": 1, "max": 5},
    {"key": "summary", "type": "text"},
    {"key": "fix", "type": "text"},
]
SUMMARIES = [
    "Answered the refund question and gave the timeline.",
    "Guessed the delivery date instead of looking it up.",
    "Polite, but buried the answer under three paragraphs.",
    "Asked for the order number twice.",
    "Right policy, wrong tone for a customer who had waited a week.",
]
FIXES = [
    "Call get_tracking before promising a date.",
    "Lead with the answer; one sentence of apology is enough.",
    "Refunds over $200 need a supervisor: say so.",
    "Nothing to fix.",
]


def timed_requests(
    store: Store,
    server: Server,
    requests: Sequence[tuple[str, str, bytes | None]],
    clients: int,
    measure: str,
) -> Figure:
    """(method, path, body) over `clients` keep-alive connections at once; every answer must be 200."""
    target = server.load_target()
    raw = [raw_request(target, method, path, body) for method, path, body in requests]
    with cpu_spent(server.pid) as cpu:
        latencies, seconds = send_all(target, raw, clients)
    return requests_figure(
        store.kind,
        measure,
        latencies,
        seconds,
        note=f"CPU per request: server {cpu.server / len(latencies) * 1000:.2f} ms, "
        f"bench {cpu.bench / len(latencies) * 1000:.2f} ms",
    )


# ------------------------------------------------------------------------------------------------- runs


def make_run(
    number: int, rng: random.Random, *, with_spans: bool, metadata: dict[str, Any]
) -> dict[str, Any]:
    """A short support run: a question, an answer, and (for annotating) a root, an llm and a tool span."""
    started = STARTED + timedelta(seconds=7 * number)
    run: dict[str, Any] = {
        "externalId": f"bench-{number:07d}",
        "agent": "support-agent",
        "agentVersion": rng.choice(["1.4.0", "1.5.0"]),
        "status": "failed" if rng.random() < 0.1 else "completed",
        "input": {"message": f"Where is order {1000 + number}?"},
        "output": {"message": "It ships tomorrow."},
        "startedAt": started.isoformat(),
        "endedAt": (started + timedelta(seconds=3)).isoformat(),
        "metadata": metadata,
        "steps": [
            {"role": "user", "content": f"Where is order {1000 + number}?"},
            {"role": "assistant", "content": "It ships tomorrow."},
        ],
    }
    if with_spans:
        at = started.isoformat()
        run["spans"] = [
            {"spanId": "root", "kind": "agent", "name": "support-agent", "startedAt": at},
            {
                "spanId": "llm",
                "parentSpanId": "root",
                "kind": "chat_completion",
                "name": "answer",
                "startedAt": at,
            },
            {
                "spanId": "tool",
                "parentSpanId": "root",
                "kind": "tool",
                "name": "lookup_order",
                "startedAt": at,
            },
        ]
    return run


def post_batches(client: httpx.Client, project: str, runs: Sequence[dict[str, Any]], size: int) -> list[str]:
    """The runs through POST /v1/runs/batch; their ids, in order."""
    ids: list[str] = []
    for body in batch_bodies(runs, project, size):
        answer = client.post("/v1/runs/batch", content=body, headers={"Content-Type": "application/json"})
        if answer.status_code != 201:
            raise RuntimeError(f"POST /v1/runs/batch answered {answer.status_code}: {answer.text[:500]}")
        ids.extend(item["id"] for item in answer.json()["data"])
    return ids


# ---------------------------------------------------------------------------------------------- annotate


def _values(rng: random.Random) -> list[dict[str, Any]]:
    return [
        {"key": "rating", "value": rng.choice(["good", "good", "bad"])},
        {"key": "defects", "value": rng.sample(DEFECTS, rng.randrange(1, 4))},
        {"key": "tone", "value": rng.choice(["friendly", "neutral", "curt", "rude"])},
        {"key": "topics", "value": rng.sample(TOPICS, rng.randrange(1, 3))},
        {"key": "resolved", "value": [rng.choice(["yes", "no", "partly"])]},  # a one-item list
        {"key": "score", "value": rng.randrange(0, 11)},
        {"key": "confidence", "value": round(rng.random(), 2)},
        {"key": "helpfulness", "value": rng.randrange(1, 6)},
        {"key": "summary", "value": rng.choice(SUMMARIES)},
        {"key": "fix", "value": rng.choice(FIXES)},
    ]


def annotation_requests(
    trace_ids: Sequence[str], count: int, seed: int
) -> list[tuple[str, str, bytes | None]]:
    rng = random.Random(seed)
    requests: list[tuple[str, str, bytes | None]] = []
    for _ in range(count):
        path = ANNOTATE_ROUTE.format(trace_id=rng.choice(trace_ids), span_id=rng.choice(SPAN_IDS))
        body = {"annotations": _values(rng), "metadata": {"identity_id": f"user-{rng.randrange(END_USERS)}"}}
        requests.append(("POST", path, orjson.dumps(body)))
    return requests


def bench_annotate(store: Store, server: Server, args: argparse.Namespace, log: Any) -> list[Figure]:
    rng = random.Random(1)
    with server.client() as client:
        project = project_id(client)
        for definition in KEYS:
            made = client.post("/v2/human-reviews", json={**definition, "project_id": project})
            if made.status_code != 200:
                raise RuntimeError(f"POST /v2/human-reviews answered {made.status_code}: {made.text[:300]}")
        runs = [make_run(n, rng, with_spans=True, metadata={}) for n in range(args.traces)]
        print(f"{store.kind}: {args.traces:,} runs with 3 spans each ...", file=log)
        trace_ids = post_batches(client, project, runs, args.batch_size)
    figures = []
    for clients, seed in ((1, 2), (args.clients, 3)):
        print(f"{store.kind}: {args.requests:,} annotation requests, {clients} client(s) ...", file=log)
        requests = annotation_requests(trace_ids, args.requests, seed)
        figure = timed_requests(
            store,
            server,
            requests,
            clients,
            f"annotate 10 values, {clients} client{'s' if clients > 1 else ''}",
        )
        if clients > 1:
            figure.target = f">= {TARGET_ANNOTATIONS_PER_SECOND:.0f} req/s"
            figure.met = bool(figure.rate and figure.rate >= TARGET_ANNOTATIONS_PER_SECOND)
        figures.append(figure)
    return figures


# -------------------------------------------------------------------------------------------- automation


def _metadata(rng: random.Random) -> dict[str, Any]:
    """Metadata whose every field the automation looks at varies, so each filter rejects some runs."""
    metadata: dict[str, Any] = {
        "tier": rng.choice(["vip", "vip", "pro", "free"]),
        "tags": rng.sample(["refund", "shipping", "billing", "urgent"], rng.randrange(1, 3)),
        "order_total": round(rng.uniform(5, 400), 2),
        "locale": rng.choice(["en-GB", "de-DE", "fr-FR"]),
    }
    if rng.random() < 0.8:
        metadata["customer_id"] = f"c-{rng.randrange(100_000)}"
    return metadata


AUTOMATION_FILTERS: dict[str, Any] = {
    "status": ["completed"],
    "metadata": [
        {"path": "tier", "op": "equals", "value": "vip"},
        {"path": "tags", "op": "contains", "value": "refund"},
        {"path": "customer_id", "op": "exists"},
        {"path": "order_total", "op": "gt", "value": 100},
    ],
}


def _expected_match(run: dict[str, Any]) -> bool:
    """What the automation should take, computed here independently of the server's engine."""
    meta = run["metadata"]
    return (
        run["status"] == "completed"
        and meta["tier"] == "vip"
        and "refund" in meta["tags"]
        and meta.get("customer_id") is not None
        and meta["order_total"] > 100
    )


def _queue(client: httpx.Client, name: str, project: str) -> str:
    """An annotation queue made through the API, as a person makes one; its id."""
    made = client.post(
        "/v2/annotation-queues", json={"display_name": name, "description": "", "project_id": project}
    )
    if made.status_code != 200:
        raise RuntimeError(f"POST /v2/annotation-queues answered {made.status_code}: {made.text[:300]}")
    ident: str = made.json()["_id"]
    return ident


@dataclass
class Automated:
    """What the automation part leaves for the navigation part: the plain project's traces."""

    plain_project: str
    plain_trace_ids: list[str]


def bench_automation(
    store: Store, server: Server, args: argparse.Namespace, log: Any
) -> tuple[list[Figure], Automated, bool]:
    rng = random.Random(4)
    with server.client() as client:
        plain, automated = new_project(client, "plain"), new_project(client, "automated")
        # One run each first, untimed: the agent exists (the automation names it) and both projects are warm.
        warm = [make_run(0, rng, with_spans=False, metadata=_metadata(rng)) for _ in range(2)]
        post_batches(client, plain, [{**warm[0], "externalId": "warm"}], 1)
        post_batches(client, automated, [{**warm[1], "externalId": "warm", "status": "failed"}], 1)
        agents = client.get(f"/v1/projects/{automated}/agents").json()["data"]
        queue = _queue(client, "VIP refunds", automated)
        rule = client.post(
            f"/v2/annotation-queues/{queue}/automations",
            json={"name": "vip refunds", "filters": {**AUTOMATION_FILTERS, "agent_ids": [agents[0]["id"]]}},
        )
        if rule.status_code != 200:
            raise RuntimeError(f"the automation was refused: {rule.text[:300]}")
        print(f"{store.kind}: {args.runs:,} runs into each of two projects, one automated ...", file=log)
        runs = [make_run(n, rng, with_spans=False, metadata=_metadata(rng)) for n in range(args.runs)]
        bodies = {
            name: batch_bodies(runs, ident, args.batch_size)
            for name, ident in (("plain", plain), ("automated", automated))
        }
        spent: dict[str, list[float]] = {"plain": [], "automated": []}
        plain_ids: list[str] = []
        for number in range(len(bodies["plain"])):
            # Alternate which goes first, so neither always follows the other's checkpoint.
            order = ("plain", "automated") if number % 2 == 0 else ("automated", "plain")
            for name in order:
                started = time.perf_counter()
                answer = client.post(
                    "/v1/runs/batch",
                    content=bodies[name][number],
                    headers={"Content-Type": "application/json"},
                )
                spent[name].append(time.perf_counter() - started)
                if answer.status_code != 201:
                    raise RuntimeError(
                        f"POST /v1/runs/batch answered {answer.status_code}: {answer.text[:300]}"
                    )
                if name == "plain":
                    plain_ids.extend(item["id"] for item in answer.json()["data"])
        held = client.get(f"/v2/annotation-queues/{queue}").json()["metadata"]["items_count"]
    expected = sum(_expected_match(run) for run in runs)
    ok = held == expected
    figures = []
    means = {name: statistics.mean(times) for name, times in spent.items()}
    for name in ("plain", "automated"):
        times = spent[name]
        figures.append(
            Figure(
                store=store.kind,
                measure=f"ingest, {'5-filter automation' if name == 'automated' else 'no automation'}",
                count=len(times) * args.batch_size,
                seconds=round(sum(times), 2),
                rate=round(len(times) * args.batch_size / sum(times), 1),
                p50_ms=latency_ms(times)[0],
                p99_ms=latency_ms(times)[1],
                note=f"batches of {args.batch_size}; p50/p99 per batch"
                + (
                    f"; queued {held:,} (expected {expected:,}{'' if ok else ', MISMATCH'})"
                    if name == "automated"
                    else ""
                ),
            )
        )
    overhead_us = (means["automated"] - means["plain"]) / args.batch_size * 1e6
    share = (means["automated"] - means["plain"]) / means["plain"] * 100
    figures.append(
        Figure(
            store=store.kind,
            measure="automation overhead per trace",
            count=args.runs,
            seconds=round(sum(spent["automated"]) - sum(spent["plain"]), 2),
            rate=None,
            note=f"{overhead_us:.1f} µs per trace ({share:+.1f} % of a plain batch's mean)",
        )
    )
    return figures, Automated(plain, plain_ids), ok


# -------------------------------------------------------------------------------------------- navigation


def seed_queue(
    db: Database, queue_id: str, trace_ids: Sequence[str], rng: random.Random
) -> list[tuple[str, bool]]:
    """One item per trace in the (empty) queue, a third reviewed, straight into `queue_items`; then the
    queue's counters set from them by `queues.items.recount`. Answers (item id, reviewed) in seq order.

    Not `queues.items.insert_items`, which adds items unreviewed only (each checked for a duplicate
    first): the navigation wants a third of them reviewed, as in a queue people are working through."""
    now = datetime.now(UTC)
    queue = uuid.UUID(queue_id)
    with db.write() as session:
        admin = session.scalars(select(Principal).order_by(Principal.created_at)).first()
        assert admin is not None
        rows = []
        for seq, trace_id in enumerate(trace_ids, start=1):
            reviewed = rng.random() < REVIEWED_SHARE
            rows.append(
                {
                    "id": uuid.uuid4(),
                    "queue_id": queue,
                    "seq": seq,
                    "type": "span",
                    "trace_id": uuid.UUID(trace_id),
                    "span_key": "",
                    "datapoint_id": None,
                    "added_by_rules": None,
                    "added_by": admin.id,
                    "added_at": now,
                    "used_review_key_ids": [] if reviewed else None,
                    "reviewed_by": admin.id if reviewed else None,
                    "reviewed_at": now if reviewed else None,
                }
            )
        # A foreign key's column takes its type from the table it names; `Trace` imported above makes
        # sure `traces` is known, so `bulk_insert` binds `trace_id` as the UUID it is.
        assert Trace.__table__ is not None
        table = cast(Table, QueueItem.__table__)
        for start in range(0, len(rows), SEED_CHUNK):
            bulk_insert(session, table, rows[start : start + SEED_CHUNK])
        recount(session, queue)
    if db.dialect_name == "postgresql":
        with db.engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE"))
    return [(str(row["id"]), row["reviewed_at"] is not None) for row in rows]


def _expected_place(
    items: Sequence[tuple[str, bool]], index: int, direction: str, unreviewed: bool
) -> int | None:
    """The 0-based index the step lands on, or None past the end."""
    step = 1 if direction == "next" else -1
    at = index + step
    while 0 <= at < len(items):
        if not unreviewed or not items[at][1]:
            return at
        at += step
    return None


def _steps(
    store: Store,
    server: Server,
    queue_id: str,
    items: Sequence[tuple[str, bool]],
    count: int,
    rng: random.Random,
    measure: str,
) -> tuple[Figure, bool]:
    """`count` random next/previous steps, half of them to unreviewed items only, timed one after
    another; then 200 of them again, each answer checked against `items` (the queue in seq order)."""
    reviewed = sum(done for _, done in items)
    steps = [
        (rng.randrange(len(items)), rng.choice(["next", "previous"]), rng.random() < 0.5)
        for _ in range(count)
    ]
    path = REVIEW_ROUTE.format(queue_id=queue_id)

    def query(index: int, direction: str, unreviewed: bool) -> str:
        params = {"item_id": items[index][0], "direction": direction}
        if unreviewed:
            params["unreviewed"] = "true"
        return f"{path}?{urlencode(params)}"

    requests: list[tuple[str, str, bytes | None]] = [("GET", query(*step), None) for step in steps]
    figure = timed_requests(store, server, requests, 1, measure)
    figure.target = f"p99 < {TARGET_NAVIGATION_P99_MS:.0f} ms"
    figure.met = bool(figure.p99_ms is not None and figure.p99_ms < TARGET_NAVIGATION_P99_MS)
    wrong = 0
    with server.client() as client:
        for index, direction, unreviewed in steps[:200]:
            place = client.get(query(index, direction, unreviewed)).json()
            landed = _expected_place(items, index, direction, unreviewed)
            want = (
                items[landed][0] if landed is not None else None,
                landed + 1 if landed is not None else None,
                len(items),
                reviewed,
            )
            got = (
                place["item"]["_id"] if place["item"] else None,
                place["position"],
                place["total"],
                place["reviewed"],
            )
            wrong += got != want
    figure.note += f"; 200 answers checked, {wrong} wrong" + (" (MISMATCH)" if wrong else "")
    return figure, wrong == 0


def bench_navigation(
    store: Store,
    server: Server,
    db: Database,
    args: argparse.Namespace,
    automated: Automated | None,
    log: Any,
) -> tuple[list[Figure], bool]:
    """The queue as seeded (numbered without gaps, as a queue nothing was taken out of), then with every
    500th item taken out through the API, so each position is counted over the index."""
    rng = random.Random(5)
    with server.client() as client:
        if automated is not None and len(automated.plain_trace_ids) >= args.items:
            project, trace_ids = automated.plain_project, automated.plain_trace_ids[: args.items]
        else:
            project = new_project(client, "navigation")
            print(f"{store.kind}: {args.items:,} runs for the queue ...", file=log)
            runs = [make_run(n, rng, with_spans=False, metadata={}) for n in range(args.items)]
            trace_ids = post_batches(client, project, runs, args.batch_size)
        queue_id = _queue(client, "Everything", project)
    print(f"{store.kind}: seeding a queue of {len(trace_ids):,} items ...", file=log)
    items = seed_queue(db, queue_id, trace_ids, rng)
    print(f"{store.kind}: {args.steps:,} next/previous steps, no gaps ...", file=log)
    dense, dense_ok = _steps(
        store, server, queue_id, items, args.steps, rng, f"queue next/previous, {len(items):,} items"
    )
    gone = set(range(250, len(items), 500))
    with server.client() as client:
        removed = client.post(
            f"/v2/annotation-queues/{queue_id}/items/remove",
            json={"span_ids": [trace_ids[index] for index in sorted(gone)]},
        )
        if removed.status_code != 204:
            raise RuntimeError(f"remove items answered {removed.status_code}: {removed.text[:300]}")
    left = [item for index, item in enumerate(items) if index not in gone]
    print(f"{store.kind}: {args.steps:,} next/previous steps, {len(gone)} gaps ...", file=log)
    gaps, gaps_ok = _steps(
        store,
        server,
        queue_id,
        left,
        args.steps,
        rng,
        f"queue next/previous, {len(left):,} items, {len(gone)} gaps",
    )
    return [dense, gaps], dense_ok and gaps_ok


# ------------------------------------------------------------------------------------------------ driver


def bench_store(store: Store, args: argparse.Namespace, work: Path) -> tuple[list[Figure], bool]:
    log = sys.stderr
    figures: list[Figure] = []
    checks = True
    db = Database(make_engine(store.url))
    try:
        with serve(store, work / f"serve-{store.kind}.log", args.workers) as server:
            if "annotate" in args.parts:
                figures.extend(bench_annotate(store, server, args, log))
            automated = None
            if "automation" in args.parts:
                found, automated, ok = bench_automation(store, server, args, log)
                figures.extend(found)
                checks = checks and ok
            if "navigation" in args.parts:
                found, ok = bench_navigation(store, server, db, args, automated, log)
                figures.extend(found)
                checks = checks and ok
    finally:
        db.dispose()
    return figures, checks


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument(
        "--parts", default=",".join(PARTS), help=f"comma-separated, any of {', '.join(PARTS)}"
    )
    parser.add_argument("--traces", type=int, default=2_000, help="runs to annotate (3 spans each)")
    parser.add_argument("--requests", type=int, default=10_000, help="annotation requests per client setting")
    parser.add_argument("--clients", type=int, default=8, help="concurrent connections for the second run")
    parser.add_argument("--runs", type=int, default=100_000, help="runs sent to each project (automation)")
    parser.add_argument("--batch-size", type=int, default=1_000)
    parser.add_argument("--items", type=int, default=100_000, help="items in the navigated queue")
    parser.add_argument("--steps", type=int, default=1_000, help="next/previous requests")
    parser.add_argument(
        "--workers", type=int, default=1, help="server processes: `redline serve --workers N`"
    )
    parser.add_argument(
        "--postgres-url", default=DEFAULT_POSTGRES_URL, help="admin URL; the bench db is made there"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    args.parts = [part.strip() for part in args.parts.split(",") if part.strip()]
    if unknown := set(args.parts) - set(PARTS):
        parser.error(f"unknown --parts {', '.join(sorted(unknown))}")
    if min(args.traces, args.requests, args.clients, args.runs, args.batch_size, args.items, args.steps) < 1:
        parser.error("counts must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Each chosen store on a fresh store; exit 1 if a SQLite target is missed or a check fails."""
    args = parse_args(argv)
    kinds = store_kinds(args.store)
    figures: list[Figure] = []
    checks = True
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as folder:
        for kind in kinds:
            with fresh_store(kind, args.postgres_url, REVIEWS_DATABASE) as store:
                found, ok = bench_store(store, args, Path(folder))
            figures.extend(found)
            checks = checks and ok
            # Each store's figures as soon as it is done, so a failure later loses none of them.
            print_table(found, file=sys.stderr, memory=False, align=False)
    print_figures(figures, args.json, memory=False, align=False)
    missed = [f for f in figures if f.store == "sqlite" and f.met is False]
    return 1 if missed or not checks else 0


if __name__ == "__main__":
    raise SystemExit(main())
