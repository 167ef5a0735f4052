"""Annotations at volume: creating them over HTTP, the NDJSON export, and building training pairs.

For each store (--store sqlite|postgresql|both) this makes a fresh store, starts a real `redline serve`
on it (`_server.py`, as `ingest.py` does), ingests --traces support conversations through
POST /v1/runs/batch (`ingest.py`'s runs), then:

1. seeds --seeded annotations (10 per trace by default) straight into the `annotations` table from this
   process, through SQLAlchemy Core (`redline.db.bulk_insert`): posting 100,000 over HTTP would take
   minutes and measure nothing the creates below don't;
2. export: GET /api/v1/rm/export/annotations streamed with httpx, lines counted as the bytes arrive,
   while the server's resident memory is sampled (before, and the peak during);
3. pairs: `redline.learning.pairs.rating_pairs(session, trace_ids, max_pairs)` over every trace, in this
   process against the same store, with Python's default cyclic GC and again with the one
   `redline serve` sets; then POST /api/v1/rm/reward-models with the same trace ids;
4. creates: --creates POST /api/v1/rm/traces/{id}/annotations one after another over one connection,
   then as many again over --clients connections at once; then as many GET /healthz over as many,
   the floor of what the server and this client do at all. --client light (default) is `_load.py`,
   keep-alive connections on one asyncio loop; --client httpx, a thread per connection with its own
   httpx.Client. --workers N starts `redline serve --workers N`.

Request bodies and seeded rows come from random.Random, so two invocations send the same bytes.

    python bench/annotations.py                          # 10,000 traces, 100,000 annotations, both stores
    python bench/annotations.py --store sqlite --json
    python bench/annotations.py --parts pairs --traces 2000 --seeded 20000
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import httpx
import orjson
from sqlalchemy import Table, func, select, text

from _load import CONNECT_PAUSE_SECONDS, raw_request, send_all
from _report import Figure, add_note, exit_status, print_figures, requests_figure
from _server import (
    DEFAULT_POSTGRES_URL,
    MIB,
    CpuSpent,
    PeakRss,
    Server,
    Store,
    cpu_spent,
    fresh_store,
    project_id,
    serve,
    store_kinds,
    tree_rss,
)
from ingest import STARTED, batch_bodies, make_runs, post_batches
from redline.annotations.models import Annotation
from redline.annotations.schemas import QuoteIn
from redline.annotations.service import resolve_quote
from redline.cli.context import tune_gc_for_bulk_work
from redline.db import Database, bulk_insert, make_engine
from redline.identity import service as identity
from redline.identity.models import Principal
from redline.learning.pairs import rating_pairs
from redline.traces.models import Step, Trace

PREFIX = "/api/v1/rm"
CREATE_ROUTE = PREFIX + "/traces/{trace_id}/annotations"
EXPORT_ROUTE = PREFIX + "/export/annotations"
REWARD_MODELS_ROUTE = PREFIX + "/reward-models"
ROUTES_OF_PART = {
    "export": [EXPORT_ROUTE],
    "pairs": [REWARD_MODELS_ROUTE],
    "creates": [CREATE_ROUTE],
}
PARTS = ("export", "pairs", "creates")
# The export's line, as wire-clients.md §2.3 and rm-annotations.txt give it, in their order.
EXPORT_FIELDS = [
    "trace_id", "trace_external_id", "step_index", "rating", "comment", "quote", "label_error",
    "label_error_note", "author", "created_at",
]  # fmt: skip

# Targets of the issue, for SQLite on this machine; PostgreSQL is reported against the same numbers.
TARGET_CREATES_PER_SECOND = 800.0
TARGET_EXPORT_ROWS_PER_SECOND = 50_000.0
TARGET_PAIRS_SECONDS = 5.0
# "Flat" memory: the export may not grow the server by more than this, whatever its size (100,000
# lines are ~27 MiB of NDJSON; holding them, or their ORM objects, would show as hundreds of MiB).
FLAT_GROWTH_MIB = 20.0
SEED_CHUNK = 5_000
ROUTE_POLL_SECONDS = 60.0

REVIEWERS = ["Priya Raman", "Tomás Ferreira", "Hannah Okafor"]
COMMENTS = [
    "Promised a refund without checking the policy first.",
    "Called issue_refund before lookup_order; the amount was never verified.",
    "Good: looked the order up before answering and quoted the tracking status exactly.",
    "Too long. The customer asked one question and got four paragraphs.",
    "Shared the last four digits only, as the policy requires. Nicely handled.",
    "Refund over 200 dollars issued without a supervisor.",
    "Guessed the delivery date instead of calling get_tracking.",
    "Apologised, explained the delay and offered the replacement: exactly right.",
    "Asked for the order number twice although the customer had already given it.",
    "The tone is fine but the return label was never actually sent.",
    "Wrong tool: search_kb would have answered the policy question without an order look-up.",
    "Confirmed the address change in writing as asked.",
]
LABEL_ERROR_NOTES = [
    "Policy allows refunds on damaged items; this was correct.",
    "Rated the wrong step: the mistake is two turns later.",
    "The customer confirmed the order number earlier in the thread.",
]


# ---------------------------------------------------------------------------------------------- routes


def missing_routes(server: Server, wanted: Sequence[str]) -> list[str]:
    """The wanted paths the running server's OpenAPI document doesn't have."""
    with server.client() as client:
        response = client.get("/openapi.json")
        response.raise_for_status()
        paths = response.json().get("paths", {})
    return [path for path in wanted if path not in paths]


def wait_for_routes(wanted: Sequence[str], minutes: float, postgres_url: str, work: Path) -> None:
    """A server from the current tree on a throwaway SQLite store, started again every minute until its
    OpenAPI document has every wanted route (a server loads the code once, at start)."""
    deadline = time.monotonic() + minutes * 60
    while True:
        with fresh_store("sqlite", postgres_url) as store, serve(store, work / "serve-routes.log") as server:
            missing = missing_routes(server, wanted)
        if not missing:
            return
        if time.monotonic() >= deadline:
            raise SystemExit(f"the server has no {', '.join(missing)}: run with fewer --parts or later")
        print(f"waiting for {', '.join(missing)} ...", file=sys.stderr)
        time.sleep(ROUTE_POLL_SECONDS)


# ---------------------------------------------------------------------------------------------- traces


@dataclass
class Corpus:
    """The ingested traces as the bench needs them: ids in ingest order, and their steps by role."""

    trace_ids: list[uuid.UUID]
    # Per trace, in ingest order: (step id, index, role) of every step.
    steps: list[list[tuple[uuid.UUID, int, str]]]
    contents: list[list[str]]


def ingest(server: Server, runs: list[dict[str, Any]], db: Database) -> Corpus:
    """The runs through POST /v1/runs/batch, then their ids and steps read back from the store."""
    with server.client() as client:
        post_batches(client, batch_bodies(runs, project_id(client), 1_000))
    with db.read() as session:
        by_external = dict(session.execute(select(Trace.external_id, Trace.id)).all())
        trace_ids = [by_external[run["externalId"]] for run in runs]
        position = {trace_id: number for number, trace_id in enumerate(trace_ids)}
        steps: list[list[tuple[uuid.UUID, int, str]]] = [[] for _ in runs]
        query = select(Step.trace_id, Step.id, Step.index, Step.role).order_by(Step.index)
        for trace_id, step_id, index, role in session.execute(query):
            steps[position[trace_id]].append((step_id, index, role))
    contents = [[step["content"] for step in run["steps"]] for run in runs]
    return Corpus(trace_ids, steps, contents)


def _rated_step(rng: random.Random, steps: list[tuple[uuid.UUID, int, str]]) -> tuple[uuid.UUID, int]:
    """A step people rate: an assistant's reply or call, now and then a tool's result; never the system."""
    assistant = [(step_id, index) for step_id, index, role in steps if role == "assistant"]
    others = [(step_id, index) for step_id, index, role in steps if role not in ("assistant", "system")]
    pool = assistant if assistant and (not others or rng.random() < 0.85) else others
    return rng.choice(pool)


def _quote(rng: random.Random, content: str) -> dict[str, Any] | None:
    """A span of 20-60 characters starting at a word, with 16 characters of context either side, as the
    app sends it, plus the offsets the service stores: its own `resolve_quote`'s (the conversations
    repeat sentences, so the same anchor may stand earlier in the step)."""
    starts = [i + 1 for i, char in enumerate(content[:-80]) if char == " "]
    if not starts:
        return None
    start = rng.choice(starts)
    end = start + rng.randrange(20, 60)
    quote = QuoteIn(
        text=content[start:end], prefix=content[max(0, start - 16) : start], suffix=content[end : end + 16]
    )
    start, end = resolve_quote(content, quote)
    return {**quote.model_dump(), "start": start, "end": end}


# --------------------------------------------------------------------------------------------- seeding


def _authors(db: Database) -> list[tuple[uuid.UUID, str]]:
    """The bench admin and three reviewers, made through the identity service like `redline users add`."""
    with db.write() as session:
        operator = identity.operator(session)
        for name in REVIEWERS:
            identity.create_user(session, operator, name=name, kind="user")
        return [(principal.id, principal.name) for principal in session.scalars(select(Principal))]


def seed_rows(corpus: Corpus, count: int, authors: list[tuple[uuid.UUID, str]]) -> list[dict[str, Any]]:
    """`count` annotations spread evenly over the traces, as a team of reviewers leaves them.

    Each trace leans good or bad (its ratings agree 80 % of the time), a fifth rate the whole trace and
    the rest one step, a third carry a comment (a fifth of those quote the step), 5 % are comments
    only, 2 % are flagged as label errors. Written a few minutes to three days after the run.
    """
    rng = random.Random(1)
    rows: list[dict[str, Any]] = []
    traces = len(corpus.trace_ids)
    for number in range(count):
        trace = number % traces
        lean = 1 if (trace * 7919) % 5 < 3 else -1
        trace_id = corpus.trace_ids[trace]
        step_id: uuid.UUID | None = None
        index = 0
        quote: dict[str, Any] | None = None
        comment: str | None = None
        if rng.random() >= 0.2:
            step_id, index = _rated_step(rng, corpus.steps[trace])
        rating: int | None = lean if rng.random() < 0.8 else -lean
        if rng.random() < 1 / 3:
            comment = rng.choice(COMMENTS)
            if step_id is not None and rng.random() < 0.2:
                quote = _quote(rng, corpus.contents[trace][index])
            if rng.random() < 0.15:
                rating = None
        flagged = rng.random() < 0.02
        author_id, author_name = rng.choice(authors)
        created = STARTED + timedelta(
            seconds=37 * trace + rng.randrange(300, 3 * 86_400), microseconds=number
        )
        rows.append(
            {
                "id": uuid.UUID(int=rng.getrandbits(128), version=4),
                "trace_id": trace_id,
                "step_id": step_id,
                "rating": rating,
                "comment": comment,
                "quote": quote,
                "label_error": flagged,
                "label_error_note": rng.choice(LABEL_ERROR_NOTES) if flagged else None,
                "author_id": author_id,
                "author_name": author_name,
                "created_at": created,
                "updated_at": created,
            }
        )
    return rows


def seed(db: Database, rows: list[dict[str, Any]]) -> float:
    """The rows into the annotations table in one transaction; seconds taken. PostgreSQL is analysed
    afterwards, as autovacuum would soon do on a live store, so its plans see the real row counts."""
    table = cast(Table, Annotation.__table__)
    started = time.perf_counter()
    with db.write() as session:
        for start in range(0, len(rows), SEED_CHUNK):
            bulk_insert(session, table, rows[start : start + SEED_CHUNK])
    if db.dialect_name == "postgresql":
        with db.engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE"))
    return time.perf_counter() - started


def annotation_count(db: Database) -> int:
    with db.read() as session:
        return int(session.scalar(select(func.count()).select_from(Annotation)) or 0)


# ---------------------------------------------------------------------------------------------- export


def bench_export(store: Store, server: Server, expected: int) -> Figure:
    """The whole export streamed; lines counted per chunk as they arrive, memory sampled meanwhile."""
    before = tree_rss(server.pid) / MIB
    rss = PeakRss(server.pid)
    lines = size = 0
    head = last = b""
    first_byte: float | None = None
    with server.client() as client:
        rss.start()
        started = time.perf_counter()
        with client.stream("GET", EXPORT_ROUTE) as response:
            if response.status_code != 200:
                raise RuntimeError(f"export answered {response.status_code}: {response.read()[:500]!r}")
            media_type = response.headers.get("content-type", "")
            for chunk in response.iter_bytes():
                if first_byte is None:
                    first_byte = time.perf_counter() - started
                lines += chunk.count(b"\n")
                size += len(chunk)
                if len(head) < 4096:
                    head += chunk[:4096]
                last = (last + chunk)[-4096:]
        seconds = time.perf_counter() - started
    peak = rss.stop()
    first = orjson.loads(head.split(b"\n", 1)[0])
    final = orjson.loads(last.rstrip(b"\n").rsplit(b"\n", 1)[-1])
    problems = []
    if lines != expected:
        problems.append(f"MISMATCH {lines:,} lines, expected {expected:,}")
    if list(first) != EXPORT_FIELDS or list(final) != EXPORT_FIELDS:
        problems.append(f"MISMATCH fields {list(first)}")
    if not media_type.startswith("application/x-ndjson"):
        problems.append(f"MISMATCH content-type {media_type}")
    growth = peak - before
    rate = lines / seconds
    return Figure(
        store=store.kind,
        measure="export NDJSON",
        count=lines,
        seconds=round(seconds, 2),
        rate=round(rate, 1),
        rss_before_mib=round(before, 1),
        rss_peak_mib=round(peak, 1),
        target=f">= {TARGET_EXPORT_ROWS_PER_SECOND:,.0f} rows/s, < +{FLAT_GROWTH_MIB:.0f} MiB",
        met=rate >= TARGET_EXPORT_ROWS_PER_SECOND and growth < FLAT_GROWTH_MIB and not problems,
        note="; ".join(
            [
                f"{size / MIB:.1f} MiB, first byte {(first_byte or 0) * 1000:.0f} ms, +{growth:.1f} MiB",
                *problems,
            ]
        ),
    )


# ----------------------------------------------------------------------------------------------- pairs


@contextmanager
def collector(server_tuning: bool) -> Iterator[list[float]]:
    """The cyclic GC as a process building pairs would have it, and its pauses (seconds, appended).

    This process holds every generated run (millions of tracked objects) that a server or a CLI
    command would not: they are frozen out of the collector's way either way. With `server_tuning`
    the collector is also set as `redline serve` sets it (`tune_gc_for_bulk_work`: a young-generation
    threshold of 50,000 instead of 700); both are undone afterwards.
    """
    pauses: list[float] = []
    began = [0.0]

    def watch(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
        else:
            pauses.append(time.perf_counter() - began[0])

    thresholds = gc.get_threshold()
    gc.collect()
    gc.freeze()
    if server_tuning:
        tune_gc_for_bulk_work()
    gc.callbacks.append(watch)
    try:
        yield pauses
    finally:
        gc.callbacks.remove(watch)
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def bench_pairs(
    store: Store, db: Database, trace_ids: list[uuid.UUID], max_pairs: int, repeat: int, server_gc: bool
) -> Figure:
    """rating_pairs in this process, `repeat` times each in its own read transaction; the median counts."""
    times: list[float] = []
    made = 0
    with collector(server_gc) as pauses:
        for _ in range(repeat):
            with db.read() as session:
                started = time.perf_counter()
                made = len(rating_pairs(session, trace_ids, max_pairs=max_pairs))
                times.append(time.perf_counter() - started)
    seconds = statistics.median(times)
    return Figure(
        store=store.kind,
        measure="pairs, in-process" + (", server GC" if server_gc else ""),
        count=made,
        seconds=round(seconds, 2),
        rate=None,
        target=f"< {TARGET_PAIRS_SECONDS:.0f} s",
        met=seconds < TARGET_PAIRS_SECONDS and made == max_pairs,
        note=f"{len(trace_ids):,} traces; runs {', '.join(f'{t:.2f}' for t in times)} s; "
        f"GC pauses {sum(pauses) / repeat:.2f} s a run",
    )


def bench_reward_model(
    store: Store, server: Server, trace_ids: list[uuid.UUID], max_pairs: int, repeat: int
) -> Figure:
    """POST /reward-models with every trace, `repeat` times (each makes a model); the median counts."""
    body = orjson.dumps(
        {
            "name": "bench",
            "trace_ids": [str(trace_id) for trace_id in trace_ids],
            "training_config": {"max_pairs": max_pairs, "input_version": 3, "rubric": ["Resolve the issue"]},
        }
    )
    times: list[float] = []
    made = 0
    before = tree_rss(server.pid) / MIB
    rss = PeakRss(server.pid)
    rss.start()
    with server.client() as client:
        for _ in range(repeat):
            started = time.perf_counter()
            response = client.post(
                REWARD_MODELS_ROUTE, content=body, headers={"Content-Type": "application/json"}
            )
            times.append(time.perf_counter() - started)
            if response.status_code not in (200, 201):
                raise RuntimeError(f"reward-models answered {response.status_code}: {response.text[:500]}")
            made = int(response.json()["num_pairs"])
    peak = rss.stop()
    seconds = statistics.median(times)
    return Figure(
        store=store.kind,
        measure="POST reward-models",
        count=made,
        seconds=round(seconds, 2),
        rate=None,
        rss_before_mib=round(before, 1),
        rss_peak_mib=round(peak, 1),
        target=f"< {TARGET_PAIRS_SECONDS:.0f} s",
        met=seconds < TARGET_PAIRS_SECONDS and made == max_pairs,
        note=f"{len(trace_ids):,} traces, body {len(body) / 1024:.0f} KiB; runs "
        + ", ".join(f"{t:.2f}" for t in times)
        + " s",
    )


# --------------------------------------------------------------------------------------------- creates


def create_requests(corpus: Corpus, count: int, seed_value: int) -> list[tuple[str, bytes]]:
    """(path, body) of `count` creates over random traces: a rating always, a comment half the time,
    a step (never the system prompt) 70 % of the time. Serialised before any clock starts."""
    rng = random.Random(seed_value)
    requests = []
    for _ in range(count):
        trace = rng.randrange(len(corpus.trace_ids))
        step_id = str(_rated_step(rng, corpus.steps[trace])[0]) if rng.random() < 0.7 else None
        body = {
            "rating": rng.choice([1, -1]),
            "comment": rng.choice(COMMENTS) if rng.random() < 0.5 else None,
            "step_id": step_id,
        }
        path = CREATE_ROUTE.format(trace_id=corpus.trace_ids[trace])
        requests.append((path, orjson.dumps(body)))
    return requests


def _send_all(
    client: httpx.Client, requests: Sequence[tuple[str, bytes | None]], latencies: list[float]
) -> None:
    """Each request in turn (a body is a POST, None a GET), its round trip appended to `latencies`."""
    headers = {"Content-Type": "application/json"}
    for path, body in requests:
        sent = time.perf_counter()
        response = client.request("GET" if body is None else "POST", path, content=body, headers=headers)
        latencies.append(time.perf_counter() - sent)
        if response.status_code != 200:
            raise RuntimeError(f"{path} answered {response.status_code}: {response.text[:500]}")


def _send_light(
    server: Server, requests: Sequence[tuple[str, bytes | None]], clients: int
) -> tuple[list[float], float]:
    """The requests through `_load.py`'s client: `clients` keep-alive connections on one asyncio loop."""
    target = server.load_target()
    raw = [raw_request(target, "GET" if body is None else "POST", path, body) for path, body in requests]
    return send_all(target, raw, clients)


def bench_requests(
    store: Store,
    server: Server,
    requests: Sequence[tuple[str, bytes | None]],
    clients: int,
    measure: str,
    client_kind: str,
) -> Figure:
    """The requests from `clients` clients, each with its share of the requests, released together; wall
    time from the release to the last answer. `client_kind` "light" is `_load.py` (one asyncio loop,
    bytes made before the clock); "httpx" is a thread per client, each with its own httpx.Client."""
    if client_kind == "light":
        with cpu_spent(server.pid) as cpu:
            every, seconds = _send_light(server, requests, clients)
        return _request_figure(store, measure, every, seconds, cpu, client_kind)
    shares = [requests[number::clients] for number in range(clients)]
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors: list[BaseException] = []
    ready = threading.Barrier(clients + 1)

    opening = threading.Lock()

    def worker(number: int) -> None:
        with server.client() as client:
            # The connection is open before the clock starts; one at a time, as in `_load.py`, so the
            # connections spread over a server's workers.
            with opening:
                client.get("/healthz")
                time.sleep(CONNECT_PAUSE_SECONDS)
            ready.wait()
            try:
                _send_all(client, shares[number], latencies[number])
            except (httpx.HTTPError, RuntimeError) as error:
                errors.append(error)

    threads = [threading.Thread(target=worker, args=(number,)) for number in range(clients)]
    for thread in threads:
        thread.start()
    ready.wait()
    with cpu_spent(server.pid) as cpu:
        started = time.perf_counter()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - started
    if errors:
        raise RuntimeError(f"{len(errors)} client(s) failed; the first: {errors[0]}")
    every = [latency for share in latencies for latency in share]
    return _request_figure(store, measure, every, seconds, cpu, client_kind)


def _request_figure(
    store: Store, measure: str, every: list[float], seconds: float, cpu: CpuSpent, client_kind: str
) -> Figure:
    return requests_figure(
        store.kind,
        measure,
        every,
        seconds,
        note=f"CPU per request: server {cpu.server / len(every) * 1000:.2f} ms, "
        f"{client_kind} client {cpu.bench / len(every) * 1000:.2f} ms",
    )


def bench_creates(
    store: Store, server: Server, requests: list[tuple[str, bytes]], clients: int, client_kind: str
) -> Figure:
    """POST /traces/{id}/annotations from `clients` clients; the target applies to the concurrent run."""
    figure = bench_requests(
        store, server, requests, clients, f"create, {clients} client{'s' if clients > 1 else ''}", client_kind
    )
    if clients > 1:
        figure.target = f">= {TARGET_CREATES_PER_SECOND:.0f} req/s"
        figure.met = (figure.rate or 0.0) >= TARGET_CREATES_PER_SECOND
    return figure


def bench_floor(store: Store, server: Server, count: int, clients: int, client_kind: str) -> Figure:
    """GET /healthz from as many clients: no token, no store, a sync handler like the creates'. What
    the server's processes, uvicorn and these clients can do at all on this machine, for scale."""
    figure = bench_requests(
        store, server, [("/healthz", None)] * count, clients, f"GET /healthz, {clients} clients", client_kind
    )
    figure.note = f"floor: no auth, no store; {figure.note}"
    return figure


# ----------------------------------------------------------------------------------------------- store


def bench_store(
    store: Store, args: argparse.Namespace, runs: list[dict[str, Any]], work: Path
) -> list[Figure]:
    """Everything on one fresh store, in an order that keeps each measure's data exact: the export and
    the pairs see the seeded annotations only, the creates come last."""
    log = sys.stderr
    figures: list[Figure] = []
    db = Database(make_engine(store.url))
    try:
        with serve(store, work / f"serve-{store.kind}.log", args.workers) as server:
            started = time.perf_counter()
            corpus = ingest(server, runs, db)
            print(
                f"{store.kind}: ingested {len(runs):,} runs in {time.perf_counter() - started:.1f} s",
                file=log,
            )
            rows = seed_rows(corpus, args.seeded, _authors(db))
            seconds = seed(db, rows)
            print(f"{store.kind}: seeded {len(rows):,} annotations in {seconds:.1f} s", file=log)
            del rows
            if "export" in args.parts:
                print(f"{store.kind}: export ...", file=log)
                figures.append(bench_export(store, server, args.seeded))
            if "pairs" in args.parts:
                print(f"{store.kind}: pairs in-process ...", file=log)
                for server_gc in (False, True):
                    figures.append(
                        bench_pairs(store, db, corpus.trace_ids, args.max_pairs, args.repeat, server_gc)
                    )
                print(f"{store.kind}: POST reward-models ...", file=log)
                figures.append(
                    bench_reward_model(store, server, corpus.trace_ids, args.max_pairs, args.repeat)
                )
            if "creates" in args.parts:
                print(f"{store.kind}: creates, 1 client ...", file=log)
                figures.append(
                    bench_creates(store, server, create_requests(corpus, args.creates, 2), 1, args.client)
                )
                print(f"{store.kind}: creates, {args.clients} clients ...", file=log)
                figures.append(
                    bench_creates(
                        store, server, create_requests(corpus, args.creates, 3), args.clients, args.client
                    )
                )
                figures.append(bench_floor(store, server, args.creates, args.clients, args.client))
            stored = annotation_count(db)
    finally:
        db.dispose()
    expected = args.seeded + (2 * args.creates if "creates" in args.parts else 0)
    add_note(figures, "" if stored == expected else f"MISMATCH stored {stored:,}, expected {expected:,}")
    print(f"{store.kind}: server peak RSS over the whole run {server.peak_mib:.0f} MiB", file=log)
    return figures


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--traces", type=int, default=10_000, help="runs ingested first, per store")
    parser.add_argument("--steps", type=int, default=20, help="steps per run (about 500 bytes each)")
    parser.add_argument("--seeded", type=int, default=100_000, help="annotations seeded by SQL")
    parser.add_argument("--creates", type=int, default=5_000, help="annotations posted per client setting")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients for the second creates")
    parser.add_argument("--max-pairs", type=int, default=4_000, help="the pairs' cap")
    parser.add_argument("--repeat", type=int, default=3, help="pair builds per store (the median counts)")
    parser.add_argument(
        "--parts",
        default=",".join(PARTS),
        help=f"comma-separated, any of {', '.join(PARTS)} (default all); pairs includes POST reward-models",
    )
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument(
        "--workers", type=int, default=1, help="server processes: `redline serve --workers N` (default 1)"
    )
    parser.add_argument(
        "--client",
        choices=["light", "httpx"],
        default="light",
        help="the creates' client: light (_load.py, one asyncio loop) or httpx (a thread per client)",
    )
    parser.add_argument(
        "--postgres-url", default=DEFAULT_POSTGRES_URL, help="admin URL; the bench db is made there"
    )
    parser.add_argument(
        "--wait-for-routes",
        type=float,
        default=0.0,
        metavar="MINUTES",
        help="if the server lacks a route, start one from the current tree every minute until it has them",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    args = parser.parse_args(argv)
    args.parts = [part.strip() for part in args.parts.split(",") if part.strip()]
    if unknown := set(args.parts) - set(PARTS):
        parser.error(f"unknown --parts {', '.join(sorted(unknown))}")
    if min(args.traces, args.steps, args.seeded, args.creates, args.clients, args.repeat, args.workers) < 1:
        parser.error(
            "--traces, --steps, --seeded, --creates, --clients, --repeat and --workers must be at least 1"
        )
    if args.steps < 3:
        parser.error("--steps must be at least 3 (a system prompt, a question, a reply to rate)")
    return args


def main(argv: list[str] | None = None) -> int:
    """Every chosen store on a fresh store of its own; exit 1 if a target is missed or a count is off."""
    args = parse_args(argv)
    kinds = store_kinds(args.store)
    log = sys.stderr
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as folder:
        work = Path(folder)
        wanted = [route for part in args.parts for route in ROUTES_OF_PART[part]]
        wait_for_routes(wanted, args.wait_for_routes, args.postgres_url, work)
        print(f"generating {args.traces:,} runs x {args.steps} steps ...", file=log)
        runs = make_runs(args.traces, args.steps)
        for kind in kinds:
            with fresh_store(kind, args.postgres_url) as store:
                figures.extend(bench_store(store, args, runs, work))
    print_figures(figures, args.json)
    return exit_status(figures)


if __name__ == "__main__":
    sys.exit(main())
