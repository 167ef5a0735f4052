"""Redline at a million runs: ingest as the store grows, then every list, page, filter and search at each
checkpoint, with its query plan; deleting at size.

For each store (--store sqlite|postgresql|both) one real `redline serve` (`_server.py`) for the whole run:

1. **seed**: runs of 10 steps (a pool of `ingest.py`'s support conversations; 3 agents x 2 versions, 5 %
   failed, a `customer_id` among 10,000 customers and three other keys in metadata) through
   POST /v1/runs/batch, 1,000 runs a request, one request at a time; each slice of 10,000 runs is
   serialised before its clock starts. Run n starts 3 s after run n-1, so the store grows as a live one
   does: the newest runs arrive last. The ingest rate (runs/s, server CPU ms per run) per --window runs.
   A fixed slice of OTLP exports (`_otlp_traces.py`'s agent traces, 512 spans a request) is timed on the
   empty store and again at the end, so OTLP at size can be read against its empty-store rate.
2. **annotations**: before each checkpoint's reads, every k-th run of the oldest 30 % of the runs stored
   so far gets one rating or comment (k so that --annotations are made by the last checkpoint), through
   POST /api/v1/rm/traces/{id}/annotations (the rm surface has no batch path; anything kept on write is
   then kept as in production), `_load.py`'s light client over two connections. "Rated" is then always
   70 % deep, at every size.
3. **reads** at each --at checkpoint: every read --repeat times (after three untimed), one at a time on
   one keep-alive connection (one for the API with the bench token, one for the console with a session
   cookie): /v1/runs (first page; agent, status and since filters; cursor pages 10, 50 and 90 % deep,
   found by walking the cursors once, untimed), /api/v1/rm/traces (first page, --offsets), /v3 search
   (first page, 50 % deep, `metadata.customer_id` over all time), /ui/traces (each sort, a status filter,
   rated=yes), a run's detail and its trace page. The rows answered do not change with the size where
   they can help it: the searched customer has 40 runs among the first 1,000, the detail is run 500.
   p50/p99, server CPU per request, and the ratio of each p50 to the first checkpoint's. A row misses
   if p99 >= 100 ms (metadata search: 200 ms) or the ratio > 1.5 (offset pages are exempt from the
   ratio: their cost per 100,000 of offset is given). A read that is slow stops after --budget seconds
   once it has 5 timings (the row's count says so).
4. **plans** (--plans): each read made once more through the app in this process (Starlette's
   TestClient on the same store, so the very statements the server runs), every SELECT caught by a
   `before_cursor_execute` listener and explained with its parameters (SQLite `EXPLAIN QUERY PLAN`,
   PostgreSQL `EXPLAIN`); the list's main statement (the first page-limited read of `traces`) marked.
5. **delete** (--delete N): the oldest N runs through whatever removal path the tree has, one GET
   /v1/runs a second meanwhile; the store's size before and after.
6. **side by side** (--side-by-side, after the seeding server has stopped): a second store seeded to the
   first checkpoint as the first was (kept beside it with --reuse), a fresh server on each store, and
   every read timed on both in SIDE_BY_SIDE_ROUNDS rounds that alternate between them; then the batch
   API and OTLP on an empty store and on a copy of the seeded one (removed after: the kept store stays
   as its manifest says), alternated likewise after an untimed round. Each ratio is then one of timings
   seconds apart. The checkpoints' own compare timings up to an hour apart, in which a shared machine's
   speed moves: between the checkpoints of one run the same requests' server CPU grew 1.4-1.8x, and
   side by side the same stores were 0.9-1.1x apart (bench/README.md).

If the tree serves `/v1/projects/{projectId}/indexed-metadata-keys`, `customer_id` is declared indexed
before seeding (and waited on until ready); otherwise a note says the search is unindexed. PostgreSQL
is ANALYZEd at each checkpoint (as autovacuum would have by then); SQLite gets what Redline does itself.

--reuse DIR keeps the store (DIR/scale.db, or the PostgreSQL database `redline_scale`) and a manifest
of what it holds; a later run with the same shape seeds only what is missing. Checkpoints below what
the store already holds cannot be measured again and are skipped with a note.

    python bench/scale.py --store sqlite --runs 20000 --at 5000,20000 --offsets 1000,10000 --plans
    python bench/scale.py --reuse ~/redline-scale          # 1,000,000 runs, both stores
"""

from __future__ import annotations

import argparse
import random
import re
import sqlite3
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, closing, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode

import httpx
import orjson
import psycopg
from psycopg import sql
from sqlalchemy import Engine, bindparam, create_engine, event, text
from sqlalchemy.engine import make_url
from starlette.testclient import TestClient

from _load import raw_request, send_all
from _otlp_traces import export_bodies, in_end_order, make_traces
from _report import Figure, exit_status, latency_ms, print_figures, print_table, requests_figure
from _server import (
    BENCH_TOKEN,
    DEFAULT_POSTGRES_URL,
    MIB,
    Server,
    Store,
    cpu_spent,
    drop_database,
    fresh_store,
    libpq_url,
    project_id,
    serve,
    store_kinds,
)
from console import Answer as PageAnswer
from console import signed_in
from ingest import STARTED, batch_bodies, make_runs, post_batches
from otlp import SETTLE_SECONDS, send_bodies
from redline.app import create_app
from redline.config import Settings
from redline.db import Database, make_engine

KEPT_DATABASE = "redline_scale"
FRESH_DATABASE = "redline_bench_scale"
REPO = Path(__file__).resolve().parent.parent
# What a seeded store holds; a kept store whose manifest says otherwise is seeded again from nothing.
SHAPE_VERSION = 1
STEPS = 10
BATCH_RUNS = 1_000
SLICE_RUNS = 10_000
POOL_RUNS = 500
RUN_GAP = timedelta(seconds=3)
AGENTS = ("support-agent", "billing-agent", "returns-agent")
VERSIONS = ("2026.11.1", "2026.11.2")
CUSTOMERS = 10_000
CHANNELS = ("chat", "email", "voice")
REGIONS = ("eu-west", "us-east", "us-west", "ap-south")
# The searched customer: 40 runs among the first 1,000, so every size answers the same rows.
PROBE_CUSTOMER = "cust-probe"
PROBE_EVERY = 25
PROBE_BELOW = 1_000
DETAIL_RUN = 500
ANNOTATED_SHARE = 0.3
ANNOTATION_CONNECTIONS = 2
OTLP_SENDERS = 2
PAGE = 50
WALK_PAGE = 200
DEPTHS = (0.1, 0.5, 0.9)
WARM_UP = 3
MIN_TIMINGS = 5
# The side-by-side's rounds per read: each server answers --repeat / this many in a row, then the other.
SIDE_BY_SIDE_ROUNDS = 4
# Runs each store of the side-by-side ingest takes a round (ten batches).
SIDE_BY_SIDE_INGEST_RUNS = 10_000
SESSIONS_ON = "SELECT count(*) FROM pg_stat_activity WHERE datname = %s"
SESSIONS_END_SECONDS = 30.0
TARGET_MS = 100.0
TARGET_METADATA_MS = 200.0
TARGET_RATIO = 1.5
TARGET_INGEST_SHARE = 0.8
INDEXED_KEY = "customer_id"
INDEXED_KEYS_ROUTE = "/v1/projects/{projectId}/indexed-metadata-keys"
INDEX_READY_SECONDS = 600.0
UNINDEXED_HEADER = "Redline-Unindexed-Filters"
CONSOLE_SORTS = ("-started", "started", "-steps", "steps", "status", "-status")
MAIN_STATEMENT = re.compile(r"\bFROM traces\b.*\bLIMIT\b", re.IGNORECASE | re.DOTALL)
SQL_SHOWN = 1_000
# A long column list says nothing about the plan: it is shown as "…".
COLUMN_LIST = re.compile(r"^SELECT .{60,}? FROM ")
JSON = {"Content-Type": "application/json"}

# ------------------------------------------------------------------------------------------ the runs


def conversation_pool() -> list[dict[str, Any]]:
    """Conversations the runs take their steps, input and output from: `ingest.py`'s, made once."""
    return make_runs(POOL_RUNS, STEPS)


def started_at(number: int) -> datetime:
    return STARTED + RUN_GAP * number


def scale_run(number: int, pool: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Run `number`, the same at every invocation: its own random stream, so any slice can be made alone
    (a kept store resumes where it stopped)."""
    rng = random.Random(number)
    conversation = pool[number % len(pool)]
    started = started_at(number)
    probe = number < PROBE_BELOW and number % PROBE_EVERY == 0
    return {
        "externalId": f"scale-{number:07d}",
        "agent": AGENTS[number % len(AGENTS)],
        "agentVersion": VERSIONS[(number // len(AGENTS)) % len(VERSIONS)],
        "status": "failed" if rng.random() < 0.05 else "completed",
        "input": conversation["input"],
        "output": conversation["output"],
        "startedAt": started.isoformat(),
        "endedAt": (started + timedelta(seconds=rng.randrange(5, 600))).isoformat(),
        "metadata": {
            INDEXED_KEY: PROBE_CUSTOMER if probe else f"cust-{rng.randrange(CUSTOMERS):05d}",
            "channel": rng.choice(CHANNELS),
            "region": rng.choice(REGIONS),
            "priority": rng.randrange(1, 5),
        },
        "steps": conversation["steps"],
    }


# ----------------------------------------------------------------------------------- the kept store


@dataclass
class Manifest:
    """What a kept store holds: its shape (a store of another shape is seeded again) and how far each
    part of the seeding got."""

    shape: dict[str, Any]
    seeded: int = 0
    annotated_below: int = 0
    otlp_slices: int = 0


def shape_of(args: argparse.Namespace, indexed: bool) -> dict[str, Any]:
    return {
        "version": SHAPE_VERSION,
        "steps": STEPS,
        "annotate_every": annotate_every(args),
        "metadata_indexed": indexed,
        "otlp_traces": args.otlp_traces,
    }


def annotate_every(args: argparse.Namespace) -> int:
    """Every how many runs of the oldest 30 % one is annotated, so that the last checkpoint has
    --annotations of them."""
    return max(1, round(ANNOTATED_SHARE * int(max(args.at)) / max(1, int(args.annotations))))


class Kept:
    """The manifest's file, or none for a store made for this run alone."""

    def __init__(self, path: Path | None, manifest: Manifest):
        self.path = path
        self.manifest = manifest

    def save(self) -> None:
        if self.path is not None:
            self.path.write_bytes(orjson.dumps(asdict(self.manifest), option=orjson.OPT_INDENT_2))

    def spoil(self) -> None:
        """The store no longer holds what the manifest says (runs were removed): the next run seeds again."""
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def _read_manifest(path: Path) -> Manifest | None:
    if not path.exists():
        return None
    return Manifest(**orjson.loads(path.read_bytes()))


def _kept_postgres(admin_url: str, wipe: bool, database: str) -> Store:
    """The kept database, made if missing (or made again if `wipe`), never dropped after."""
    if wipe:
        drop_database(admin_url, database)
    with psycopg.connect(libpq_url(admin_url), autocommit=True) as admin:
        found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone()
        if found is None:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    url = make_url(admin_url).set(database=database).render_as_string(hide_password=False)
    return Store("postgresql", url)


@contextmanager
def scale_store(
    kind: str, args: argparse.Namespace, shape: dict[str, Any], part: str = ""
) -> Iterator[tuple[Store, Kept]]:
    """A fresh store removed afterwards, or with --reuse the kept one (seeded again if its manifest
    shows another shape). `part` names a second store beside the first (`_first`: the side-by-side's)."""
    if args.reuse is None:
        with fresh_store(kind, args.postgres_url, FRESH_DATABASE + part) as store:
            yield store, Kept(None, Manifest(shape))
        return
    folder: Path = args.reuse
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"manifest-{kind}{part}.json"
    found = _read_manifest(path)
    wipe = found is None or found.shape != shape
    if wipe:
        print(f"{kind}: no kept store{part} of this shape in {folder}: seeding from nothing", file=sys.stderr)
    if kind == "sqlite":
        database = folder / f"scale{part}.db"
        if wipe:
            for suffix in ("", "-wal", "-shm"):
                database.with_name(database.name + suffix).unlink(missing_ok=True)
        store = Store(kind, f"sqlite:///{database}")
    else:
        store = _kept_postgres(args.postgres_url, wipe, KEPT_DATABASE + part)
    kept = Kept(path, Manifest(shape) if wipe or found is None else found)
    kept.save()
    yield store, kept


# ----------------------------------------------------------------------------------------- seeding


@dataclass
class Window:
    """The ingest of one --window of runs, added up over the slices that fell in it."""

    first: int
    runs: int = 0
    seconds: float = 0.0
    server_cpu: float = 0.0
    latencies: list[float] = field(default_factory=list)

    def add(self, runs: int, seconds: float, server_cpu: float, latencies: list[float]) -> None:
        self.runs += runs
        self.seconds += seconds
        self.server_cpu += server_cpu
        self.latencies += latencies


def send_runs(
    server: Server,
    api: httpx.Client,
    project: str,
    numbers: range,
    pool: Sequence[dict[str, Any]],
    window: Window | None,
) -> None:
    """Runs `numbers` through POST /v1/runs/batch (their bodies made before the clock), added to
    `window` unless it is None."""
    bodies = batch_bodies([scale_run(number, pool) for number in numbers], project, BATCH_RUNS)
    with cpu_spent(server.pid) as cpu:
        seconds, latencies = post_batches(api, bodies)
    if window is not None:
        window.add(len(numbers), seconds, cpu.server, latencies)


def _ingest_figure(kind: str, window: Window) -> Figure:
    figure = requests_figure(
        kind,
        f"ingest runs {window.first:,}-{window.first + window.runs:,}",
        window.latencies,
        window.seconds,
        note=f"server CPU {window.server_cpu / window.runs * 1000:.2f} ms/run; p50/p99 per batch",
    )
    figure.count = window.runs
    figure.rate = round(window.runs / window.seconds, 1)
    return figure


def seed_runs(
    kind: str, server: Server, api: httpx.Client, project: str, kept: Kept, upto: int, window_runs: int
) -> list[Figure]:
    """Runs up to `upto` through POST /v1/runs/batch, a slice at a time (bodies made before its clock);
    a figure per window of runs."""
    figures: list[Figure] = []
    pool = conversation_pool()
    manifest = kept.manifest
    window = Window(manifest.seeded)
    while manifest.seeded < upto:
        end = min(upto, manifest.seeded + SLICE_RUNS, (manifest.seeded // window_runs + 1) * window_runs)
        send_runs(server, api, project, range(manifest.seeded, end), pool, window)
        manifest.seeded = end
        kept.save()
        if end % window_runs == 0 or end == upto:
            figure = _ingest_figure(kind, window)
            figures.append(figure)
            print(f"  {figure.measure}: {figure.rate:,.0f} runs/s", file=sys.stderr)
            window = Window(end)
    return figures


@dataclass(frozen=True)
class OtlpSent:
    """One slice of OTLP traces sent: its exports and spans, each export's round trip, the wall seconds,
    the server's CPU seconds, and what the server refused."""

    exports: int
    spans: int
    latencies: list[float]
    seconds: float
    server_cpu: float
    problems: list[str]

    def refused(self) -> None:
        if self.problems:
            raise RuntimeError(f"OTLP exports were refused: {self.problems[:3]}")


def send_otlp_slice(server: Server, number: int, traces: int) -> OtlpSent:
    """Slice `number` of `traces` traces (each slice its own part of one generated stream: OTLP ids are
    derived from the trace's, so a trace sent twice would replace, not add)."""
    made = make_traces(traces * (number + 1))[-traces:]
    bodies = export_bodies(in_end_order(made))
    with cpu_spent(server.pid) as cpu:
        seen, seconds = send_bodies(server, bodies, OTLP_SENDERS)
    spans = sum(len(trace) for trace in made)
    return OtlpSent(len(bodies), spans, seen.latencies, seconds, cpu.server, seen.problems)


def otlp_figure(kind: str, measure: str, sent: Sequence[OtlpSent]) -> Figure:
    """Slices sent, as one figure: spans/s over their wall time, the server's CPU per span."""
    spans, seconds = sum(one.spans for one in sent), sum(one.seconds for one in sent)
    server_cpu = sum(one.server_cpu for one in sent)
    figure = requests_figure(
        kind,
        measure,
        [latency for one in sent for latency in one.latencies],
        seconds,
        note=f"spans/s; server CPU {server_cpu / spans * 1000:.3f} ms/span",
    )
    figure.count, figure.rate = spans, round(spans / seconds, 1)
    return figure


def otlp_slice(server: Server, kind: str, kept: Kept, traces: int, when: str) -> Figure:
    """A fixed number of OTLP traces not sent to the kept store before, as a figure."""
    sent = send_otlp_slice(server, kept.manifest.otlp_slices, traces)
    kept.manifest.otlp_slices += 1
    kept.save()
    sent.refused()
    return otlp_figure(kind, f"OTLP {sent.exports} exports, {when}", [sent])


def annotate_oldest(server: Server, store: Store, kept: Kept, every: int, runs: int) -> Figure | None:
    """One rating or comment on every `every`-th run of the oldest 30 % of `runs`, those not done yet."""
    manifest = kept.manifest
    below = int(ANNOTATED_SHARE * runs)
    numbers = [n for n in range(manifest.annotated_below, below) if n % every == 0]
    if not numbers:
        return None
    ids = ids_of(store, numbers)
    target = server.load_target()
    requests = []
    for n in numbers:
        said: dict[str, Any] = {"rating": 1 if n % 2 else -1} if n // every % 3 else {"comment": "Too slow."}
        path = f"/api/v1/rm/traces/{ids[n]}/annotations"
        requests.append(raw_request(target, "POST", path, orjson.dumps(said)))
    with cpu_spent(server.pid) as cpu:
        latencies, seconds = send_all(target, requests, ANNOTATION_CONNECTIONS)
    manifest.annotated_below = below
    kept.save()
    return requests_figure(
        store.kind,
        f"rm annotations on runs {numbers[0]:,}-{numbers[-1]:,}",
        latencies,
        seconds,
        note=f"one per {every} runs; server CPU {cpu.server / len(latencies) * 1000:.2f} ms each",
    )


def ids_of(store: Store, numbers: Sequence[int]) -> dict[int, str]:
    """Run ids by run number, by SQL (the API lists runs but does not look them up by external id)."""
    query = text("SELECT id, external_id FROM traces WHERE external_id IN :ids").bindparams(
        bindparam("ids", expanding=True)
    )
    found: dict[int, str] = {}
    engine = create_engine(store.url)
    try:
        with engine.connect() as connection:
            for at in range(0, len(numbers), 500):
                chunk = {f"scale-{n:07d}": n for n in numbers[at : at + 500]}
                for ident, external in connection.execute(query, {"ids": list(chunk)}):
                    found[chunk[external]] = str(uuid.UUID(str(ident)))
    finally:
        engine.dispose()
    return found


def judge_against_first(figures: list[Figure], prefix: str, first_measure: str, target: str) -> None:
    """Every figure whose measure starts with `prefix` held to >= 80 % of the empty store's rate, when
    the empty store's figure (`first_measure` at its start) was measured in this run."""
    found = [f for f in figures if f.measure.startswith(prefix)]
    if not found or not found[0].measure.startswith(first_measure) or found[0].rate is None:
        return
    for figure in found[1:]:
        figure.target = target
        figure.met = figure.rate is not None and figure.rate >= TARGET_INGEST_SHARE * found[0].rate


def declare_indexed(api: httpx.Client, project: str, routes: set[str]) -> str:
    """Declares `customer_id` indexed where the tree can (and waits until its index is ready); the note
    the metadata search's rows carry either way."""
    if INDEXED_KEYS_ROUTE not in routes:
        print(f"  {INDEXED_KEYS_ROUTE} not served here: the metadata search runs unindexed", file=sys.stderr)
        return "no indexed metadata keys in this tree"
    route = INDEXED_KEYS_ROUTE.format(projectId=project)
    answer = api.post(route, json={"key": INDEXED_KEY})
    if answer.status_code not in (201, 409):
        raise RuntimeError(f"declaring {INDEXED_KEY} indexed answered {answer.status_code}: {answer.text}")
    deadline = time.monotonic() + INDEX_READY_SECONDS
    while (state := api.get(f"{route}/{INDEXED_KEY}").json().get("state")) != "ready":
        if time.monotonic() > deadline:
            return f"{INDEXED_KEY} declared indexed, still {state} after {INDEX_READY_SECONDS:.0f} s"
        time.sleep(1)
    return f"{INDEXED_KEY} declared indexed"


def served_routes(url: str) -> set[str]:
    """The paths the app of this tree serves (its OpenAPI document, made in-process)."""
    return set(create_app(Settings(database_url=url)).openapi()["paths"])


# ------------------------------------------------------------------------------------------- the reads


@dataclass(frozen=True)
class Read:
    """One request timed at a checkpoint; `name` is the same at every checkpoint, the path may not be
    (a cursor 50 % deep is another cursor at another size)."""

    name: str
    path: str
    console: bool = False
    body: dict[str, Any] | None = None
    target_ms: float = TARGET_MS
    # An rm offset page: exempt from the ratio, reported as its cost per 100,000 of offset.
    offset: int = 0


@dataclass
class Timed:
    read: Read
    latencies: list[float]
    seconds: float
    server_cpu_ms: float
    rows: int | None
    # It used up --budget before --repeat timings.
    stopped: bool
    # The filters the server says it searched without an index (its Redline-Unindexed-Filters header).
    unindexed: str | None


class Answer(PageAnswer, Protocol):
    """`console.py`'s answer of httpx or of Starlette's TestClient (built on another httpx), read whole."""

    @property
    def text(self) -> str: ...

    def json(self) -> Any: ...


def send(client: httpx.Client | TestClient, read: Read) -> Answer:
    """The read's request on the client (a real connection, or the app in this process); a 200 or it stops."""
    if read.body is None:
        answer = client.get(read.path)
    else:
        answer = client.post(read.path, content=orjson.dumps(read.body), headers=JSON)
    if answer.status_code != 200:
        raise RuntimeError(f"{read.name}: {read.path} answered {answer.status_code}: {answer.text[:300]}")
    return answer


def rows_in(answer: Answer) -> int | None:
    """How many rows an API answer holds (the console's pages are HTML: not counted)."""
    if not answer.headers.get("content-type", "").startswith("application/json"):
        return None
    body = answer.json()
    found = body.get("data", body.get("traces"))
    return len(found) if isinstance(found, list) else None


def time_read(server: Server, client: httpx.Client, read: Read, repeat: int, budget: float) -> Timed:
    """`repeat` requests one after another after WARM_UP untimed ones; a slow read stops once it has
    used `budget` seconds and has MIN_TIMINGS."""
    for _ in range(WARM_UP):
        answer = send(client, read)
    rows, unindexed = rows_in(answer), answer.headers.get(UNINDEXED_HEADER)
    latencies: list[float] = []
    started = time.perf_counter()
    with cpu_spent(server.pid) as cpu:
        while len(latencies) < repeat:
            sent = time.perf_counter()
            send(client, read)
            latencies.append(time.perf_counter() - sent)
            if time.perf_counter() - started > budget and len(latencies) >= MIN_TIMINGS:
                break
    seconds = time.perf_counter() - started
    stopped = len(latencies) < repeat
    return Timed(read, latencies, seconds, cpu.server / len(latencies) * 1000, rows, stopped, unindexed)


def walk_cursors(api: httpx.Client, depths: Sequence[int]) -> list[str]:
    """The cursor of GET /v1/runs that starts each depth, found by walking every page down to the
    deepest (untimed)."""
    found: list[str] = []
    seen, cursor = 0, None
    for depth in depths:
        while seen < depth:
            query = {"limit": min(WALK_PAGE, depth - seen), **({"cursor": cursor} if cursor else {})}
            page = send(api, Read("walk", f"/v1/runs?{urlencode(query)}")).json()
            seen += len(page["data"])
            cursor = page.get("nextCursor")
            if not cursor:
                raise RuntimeError(f"/v1/runs ended after {seen:,} runs, short of {depth:,}")
        found.append(cursor or "")
    return found


def walk_search(api: httpx.Client, body: dict[str, Any], depth: int) -> str:
    """The page token of the /v3 search that starts `depth` rows down (untimed)."""
    seen, token = 0, None
    while seen < depth:
        asked = {**body, "limit": min(WALK_PAGE, depth - seen), **({"page_token": token} if token else {})}
        page = send(api, Read("walk", "/v3/traces/search", body=asked)).json()
        seen += len(page["data"])
        token = page.get("next_page_token")
        if not token:
            raise RuntimeError(f"the /v3 search ended after {seen:,} traces, short of {depth:,}")
    return token or ""


def reads_at(api: httpx.Client, store: Store, runs: int, offsets: Sequence[int]) -> list[Read]:
    """Every read at this size; cursors and page tokens found first."""
    newest = started_at(runs - 1)
    since = (newest - timedelta(hours=1)).isoformat()
    deep = walk_cursors(api, [int(runs * depth) for depth in DEPTHS])
    everything = {
        "from": (STARTED - timedelta(days=1)).isoformat(),
        "to": (newest + timedelta(days=1)).isoformat(),
        "limit": PAGE,
    }
    token = walk_search(api, everything, runs // 2)
    detail = ids_of(store, [DETAIL_RUN])[DETAIL_RUN]
    by_customer = [{"field": f"metadata.{INDEXED_KEY}", "op": "eq", "values": [PROBE_CUSTOMER]}]
    reads = [
        Read("GET /v1/runs", "/v1/runs"),
        Read("GET /v1/runs?agent", f"/v1/runs?agent={AGENTS[1]}"),
        Read("GET /v1/runs?status=failed", "/v1/runs?status=failed"),
        Read("GET /v1/runs?since=1h", f"/v1/runs?{urlencode({'since': since})}"),
        *(
            Read(f"GET /v1/runs cursor {depth:.0%} deep", f"/v1/runs?{urlencode({'cursor': cursor})}")
            for depth, cursor in zip(DEPTHS, deep, strict=True)
        ),
        Read("GET rm/traces", f"/api/v1/rm/traces?limit={PAGE}"),
        *(
            Read(
                f"GET rm/traces offset={offset:,}",
                f"/api/v1/rm/traces?limit={PAGE}&offset={offset}",
                offset=offset,
            )
            for offset in offsets
            if offset < runs
        ),
        Read("POST /v3 search", "/v3/traces/search", body=everything),
        Read("POST /v3 search 50% deep", "/v3/traces/search", body={**everything, "page_token": token}),
        Read(
            f"POST /v3 search metadata.{INDEXED_KEY}",
            "/v3/traces/search",
            body={**everything, "filters": by_customer},
            target_ms=TARGET_METADATA_MS,
        ),
        *(
            Read(f"GET /ui/traces?sort={sort}", f"/ui/traces?sort={sort}", console=True)
            for sort in CONSOLE_SORTS
        ),
        Read("GET /ui/traces?status=failed", "/ui/traces?status=failed", console=True),
        Read("GET /ui/traces?rated=yes", "/ui/traces?rated=yes", console=True),
        Read("GET /v1/runs/{id}", f"/v1/runs/{detail}"),
        Read("GET /ui/traces/{id}", f"/ui/traces/{detail}", console=True),
    ]
    return reads


def measure_reads(
    server: Server, api: httpx.Client, browser: httpx.Client, reads: Sequence[Read], args: argparse.Namespace
) -> list[Timed]:
    timed = []
    for read in reads:
        timed.append(time_read(server, browser if read.console else api, read, args.repeat, args.budget))
        p50 = p50_ms(timed[-1].latencies)
        print(f"  {read.name}: p50 {p50:.1f} ms over {len(timed[-1].latencies)}", file=sys.stderr)
    return timed


def p50_ms(latencies: list[float]) -> float:
    """The median in ms, as the figure's own p50 column has it."""
    return latency_ms(latencies)[0]


def read_figures(kind: str, at: dict[int, list[Timed]], metadata_note: str) -> list[Figure]:
    """A figure per read and checkpoint, the reads in order and each read's checkpoints together; past
    the first checkpoint, each p50 against that checkpoint's."""
    sizes = sorted(at)
    figures: list[Figure] = []
    names = list(dict.fromkeys(t.read.name for size in reversed(sizes) for t in at[size]))
    for name in names:
        for size in sizes:
            found = [t for t in at[size] if t.read.name == name]
            if not found:
                continue
            timed = found[0]
            figure = requests_figure(kind, f"{name} @ {size:,}", timed.latencies, timed.seconds)
            notes = [f"server CPU {timed.server_cpu_ms:.2f} ms/req"]
            if timed.rows is not None:
                notes.append(f"{timed.rows} rows")
            if timed.read.target_ms == TARGET_METADATA_MS:
                notes.append(metadata_note)
            p99_ok = figure.p99_ms is not None and figure.p99_ms < timed.read.target_ms
            if timed.read.offset:
                first = next(t for t in at[size] if t.read.name == "GET rm/traces")
                extra = p50_ms(timed.latencies) - p50_ms(first.latencies)
                notes.append(f"{extra / timed.read.offset * 100_000:,.1f} ms per 100,000 of offset")
            else:
                base = [t for t in at[sizes[0]] if t.read.name == name]
                figure.target = f"p99 < {timed.read.target_ms:.0f} ms"
                figure.met = p99_ok
                if size != sizes[0] and base:
                    ratio = p50_ms(timed.latencies) / p50_ms(base[0].latencies)
                    notes.append(f"x{ratio:.2f} of {sizes[0]:,} (p50)")
                    figure.target += f", <= {TARGET_RATIO}x"
                    figure.met = p99_ok and ratio <= TARGET_RATIO
            if timed.unindexed:
                notes.append(f"unindexed by the server's word: {timed.unindexed}")
            if timed.stopped:
                notes.append("stopped at --budget")
            figure.note = "; ".join(notes)
            figures.append(figure)
    return figures


# ------------------------------------------------------------------------------------------- the plans


@dataclass
class Caught:
    statement: str
    parameters: Any
    seconds: float = 0.0


class Statements:
    """Every statement an engine runs while `catching`, with its parameters and its time."""

    def __init__(self, engine: Engine):
        self.caught: list[Caught] = []
        self._began = 0.0
        event.listen(engine, "before_cursor_execute", self._before)
        event.listen(engine, "after_cursor_execute", self._after)

    def _before(self, _c: Any, _cursor: Any, statement: str, parameters: Any, _x: Any, many: bool) -> None:
        if not many and statement.lstrip().upper().startswith(("SELECT", "WITH")):
            self.caught.append(Caught(statement, parameters))
        self._began = time.perf_counter()

    def _after(self, _c: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if self.caught and self.caught[-1].statement == statement:
            self.caught[-1].seconds = time.perf_counter() - self._began


def explain(engine: Engine, caught: Caught) -> list[str]:
    """The store's plan of one caught statement, run with the parameters it ran with."""
    prefix = "EXPLAIN QUERY PLAN " if engine.dialect.name == "sqlite" else "EXPLAIN "
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(prefix + caught.statement, caught.parameters).all()
    if engine.dialect.name == "sqlite":
        return [f"{row[0]:>4} {row[1]:>4} {row[3]}" for row in rows]
    return [str(row[0]) for row in rows]


def plans_at(store: Store, runs: int, reads: Sequence[Read]) -> list[str]:
    """Each read once through the app in this process, its SELECTs explained; the main one marked."""
    db = Database(make_engine(store.url))
    lines = [f"=== plans, {store.kind}, {runs:,} runs ==="]
    try:
        statements = Statements(db.engine)
        app = create_app(Settings(database_url=store.url), db)
        with TestClient(app, follow_redirects=False) as api, TestClient(app, follow_redirects=False) as ui:
            api.headers["Authorization"] = f"Bearer {BENCH_TOKEN}"
            ui.post("/ui/sign-in", data={"token": BENCH_TOKEN, "next": "/ui/traces"})
            for read in reads:
                statements.caught.clear()
                send(ui if read.console else api, read)
                caught = list(statements.caught)
                main = next((c for c in caught if MAIN_STATEMENT.search(c.statement)), None)
                lines.append(f"--- {read.name}: {len(caught)} SELECTs")
                for number, one in enumerate(caught, 1):
                    mark = "  <- main" if one is main else ""
                    shown = COLUMN_LIST.sub("SELECT … FROM ", " ".join(one.statement.split()), count=1)
                    lines.append(f"[{number}] {one.seconds * 1000:.1f} ms{mark}: {shown[:SQL_SHOWN]}")
                    lines.extend(f"      {line}" for line in explain(db.engine, one))
    finally:
        db.dispose()
    return lines


# ---------------------------------------------------------------------------------------- deleting


def store_size(store: Store) -> str:
    """What the store takes on disk: SQLite's file (and its WAL) with the pages free inside it,
    PostgreSQL's pg_database_size."""
    engine = create_engine(store.url)
    try:
        with engine.connect() as connection:
            if store.kind == "postgresql":
                size = connection.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
                return f"{size / MIB:,.0f} MiB"
            free = connection.exec_driver_sql("PRAGMA freelist_count").scalar_one()
            page = connection.exec_driver_sql("PRAGMA page_size").scalar_one()
    finally:
        engine.dispose()
    path = Path(make_url(store.url).database or "")
    wal = path.with_name(path.name + "-wal")
    on_disk = path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    return f"{on_disk / MIB:,.0f} MiB, {free * page / MIB:,.0f} MiB of it free pages"


def retention_days_for(count: int) -> int:
    """The retention (whole days) whose cutoff falls nearest the start of run `count`: a pass then erases
    about the oldest `count` runs (a day is 28,800 of them), and says how many it did."""
    age_days = (datetime.now(UTC) - started_at(count)).total_seconds() / 86_400
    return max(1, round(age_days))


class Reader(threading.Thread):
    """GET /v1/runs once a second on a connection of its own: whether the server answers meanwhile."""

    def __init__(self, server: Server):
        super().__init__(daemon=True)
        self.server = server
        self.latencies: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        with self.server.client() as client:
            while not self.done.is_set():
                sent = time.perf_counter()
                client.get("/v1/runs").raise_for_status()
                self.latencies.append(time.perf_counter() - sent)
                self.done.wait(max(0.0, 1.0 - (time.perf_counter() - sent)))


def delete_at_size(server: Server, store: Store, api: httpx.Client, project: str, count: int) -> list[Figure]:
    """About the oldest `count` runs erased by the project's retention: PUT a retention whose cutoff
    falls at run `count`, then wait for the server's own worker to finish the pass (a thousand runs per
    transaction), with one GET /v1/runs a second meanwhile; the store's size before and after."""
    days = retention_days_for(count)
    path = f"/v1/projects/{project}/retention"
    before = store_size(store)
    reader = Reader(server)
    reader.start()
    sent = time.perf_counter()
    with cpu_spent(server.pid) as cpu:
        api.put(path, json={"retentionDays": days}).raise_for_status()
        while (kept := api.get(path).json())["lastPassAt"] is None:
            time.sleep(0.5)
    seconds = time.perf_counter() - sent
    api.put(path, json={"retentionDays": None}).raise_for_status()
    reader.done.set()
    reader.join()
    after = store_size(store)
    erased = int(kept["lastPassErased"])
    figure = Figure(
        store.kind,
        f"retention pass erasing the oldest runs ({days} days kept)",
        erased,
        seconds,
        erased / seconds if seconds else None,
        note=f"server CPU {cpu.server / max(erased, 1) * 1000:.2f} ms/run; "
        f"store {before} before, {after} after",
    )
    meanwhile = requests_figure(
        store.kind,
        "GET /v1/runs once a second meanwhile",
        reader.latencies,
        seconds,
        note=f"slowest {max(reader.latencies) * 1000:.0f} ms" if reader.latencies else "",
    )
    return [figure, meanwhile]


# ----------------------------------------------------------------------------------------- a store


def analyze(store: Store) -> None:
    """PostgreSQL's statistics as autovacuum would have them by now; SQLite is left as Redline leaves it."""
    if store.kind != "postgresql":
        return
    with psycopg.connect(libpq_url(store.url), autocommit=True) as connection:
        connection.execute("ANALYZE")


@dataclass
class Outcome:
    figures: list[Figure]
    plans: list[str]


def bench_store(kind: str, args: argparse.Namespace, work: Path) -> Outcome:
    log = sys.stderr
    routes = served_routes("sqlite://")
    shape = shape_of(args, INDEXED_KEYS_ROUTE in routes)
    figures: list[Figure] = []
    plans: list[str] = []
    timed: dict[int, list[Timed]] = {}
    settings = {"REDLINE_OTLP_SETTLE_SECONDS": SETTLE_SECONDS}
    with scale_store(kind, args, shape) as (store, kept), ExitStack() as seeding:
        server = seeding.enter_context(serve(store, work / f"serve-{kind}.log", settings=settings))
        api = seeding.enter_context(server.client())
        project = project_id(api)
        metadata_note = declare_indexed(api, project, routes)
        if kept.manifest.seeded == 0:
            print(f"{kind}: OTLP on the empty store ...", file=log)
            figures.append(otlp_slice(server, kind, kept, args.otlp_traces, "empty store"))
        browser = signed_in(server)
        try:
            for size in sorted(args.at):
                if size < kept.manifest.seeded:
                    print(
                        f"{kind}: the kept store holds {kept.manifest.seeded:,} runs: {size:,} skipped",
                        file=log,
                    )
                    continue
                if size > kept.manifest.seeded:
                    print(f"{kind}: seeding to {size:,} runs ...", file=log)
                figures += seed_runs(kind, server, api, project, kept, size, args.window)
                annotated = annotate_oldest(server, store, kept, annotate_every(args), size)
                figures += [annotated] if annotated else []
                analyze(store)
                print(f"{kind}: reads at {size:,} runs ...", file=log)
                reads = reads_at(api, store, size, args.offsets)
                timed[size] = measure_reads(server, api, browser, reads, args)
                if args.plans:
                    plans += plans_at(store, size, reads)
        finally:
            browser.close()
        if args.fresh_server and timed:
            figures += fresh_server_reads(kind, store, work, settings, timed, metadata_note, args)
        print(f"{kind}: OTLP at {kept.manifest.seeded:,} runs ...", file=log)
        figures.append(otlp_slice(server, kind, kept, args.otlp_traces, f"at {kept.manifest.seeded:,} runs"))
        if args.delete:
            print(f"{kind}: deleting {args.delete:,} runs ...", file=log)
            kept.spoil()
            figures += delete_at_size(server, store, api, project, args.delete)
        share = f">= {TARGET_INGEST_SHARE:.0%}"
        judge_against_first(figures, "ingest runs", "ingest runs 0-", f"{share} of first")
        judge_against_first(figures, "OTLP", "OTLP", f"{share} of empty store")
        if args.side_by_side:
            # With the seeding server stopped: PostgreSQL copies no database anyone is connected to.
            seeding.close()
            figures += side_by_side_reads(kind, store, args, shape, routes, work, settings, metadata_note)
            figures += ingest_side_by_side(kind, store, kept, args, routes, work, settings)
    figures += read_figures(kind, timed, metadata_note)
    return Outcome(figures, plans)


def fresh_server_reads(
    kind: str,
    store: Store,
    work: Path,
    settings: dict[str, str],
    timed: dict[int, list[Timed]],
    metadata_note: str,
    args: argparse.Namespace,
) -> list[Figure]:
    """The last checkpoint's reads again from a `redline serve` started on the store after seeding (the
    seeding server left idle), each against the first checkpoint's: what the store's size costs, apart
    from whatever one long-lived process carries after seeding."""
    first, last = min(timed), max(timed)
    print(f"{kind}: reads at {last:,} runs from a server started afresh ...", file=sys.stderr)
    with serve(store, work / f"serve-{kind}-fresh.log", settings=settings) as fresh, fresh.client() as api:
        browser = signed_in(fresh)
        try:
            again = measure_reads(fresh, api, browser, reads_at(api, store, last, args.offsets), args)
        finally:
            browser.close()
    both = read_figures(kind, {first: timed[first], last: again}, metadata_note)
    figures = [figure for figure in both if figure.measure.endswith(f" @ {last:,}")]
    for figure in figures:
        figure.measure += " (fresh server)"
    return figures


@contextmanager
def first_checkpoint_store(
    kind: str,
    args: argparse.Namespace,
    shape: dict[str, Any],
    routes: set[str],
    work: Path,
    settings: dict[str, str],
) -> Iterator[Store]:
    """A second store holding what the first holds at the first checkpoint (the same runs, OTLP traces
    and annotations, made the same way by its own server), kept beside the first with --reuse."""
    first = min(args.at)
    with scale_store(kind, args, shape, part="_first") as (store, kept):
        if kept.manifest.seeded < first:
            print(f"{kind}: a second store of {first:,} runs for the side-by-side ...", file=sys.stderr)
            with serve(store, work / f"serve-{kind}-first.log", settings=settings) as server:
                with server.client() as api:
                    project = project_id(api)
                    declare_indexed(api, project, routes)
                    if kept.manifest.seeded == 0:
                        otlp_slice(server, kind, kept, args.otlp_traces, "empty store")
                    seed_runs(kind, server, api, project, kept, first, args.window)
                annotate_oldest(server, store, kept, annotate_every(args), first)
        analyze(store)
        yield store


def merged_timings(parts: Sequence[Timed]) -> Timed:
    """One read's rounds on one server as one timing: every latency, the CPU per request over all."""
    count = sum(len(part.latencies) for part in parts)
    return Timed(
        parts[0].read,
        [latency for part in parts for latency in part.latencies],
        sum(part.seconds for part in parts),
        sum(part.server_cpu_ms * len(part.latencies) for part in parts) / count,
        parts[0].rows,
        any(part.stopped for part in parts),
        parts[0].unindexed,
    )


def side_by_side_reads(
    kind: str,
    store: Store,
    args: argparse.Namespace,
    shape: dict[str, Any],
    routes: set[str],
    work: Path,
    settings: dict[str, str],
    metadata_note: str,
) -> list[Figure]:
    """Every read at the first checkpoint and at the last in one session, alternated: a store of the
    first checkpoint's size beside the seeded one, a fresh server on each, and each read timed in
    SIDE_BY_SIDE_ROUNDS rounds that go from one server to the other (the order flipped every round).

    The checkpoints' own ratio compares timings taken up to an hour apart, and on a shared machine the
    same request's server CPU grew 1.4-1.8x between them (bench/README.md, "Scale side by side"); this
    one compares timings seconds apart, so only the size differs."""
    first, last = min(args.at), max(args.at)
    print(f"{kind}: {first:,} and {last:,} runs side by side ...", file=sys.stderr)
    with ExitStack() as stack:
        small = stack.enter_context(first_checkpoint_store(kind, args, shape, routes, work, settings))
        sides: dict[int, tuple[Server, httpx.Client, httpx.Client, dict[str, Read]]] = {}
        for size, side_store in ((first, small), (last, store)):
            log = work / f"serve-{kind}-{size}.log"
            server = stack.enter_context(serve(side_store, log, settings=settings))
            api = stack.enter_context(server.client())
            browser = signed_in(server)
            stack.callback(browser.close)
            reads = reads_at(api, side_store, size, args.offsets)
            sides[size] = (server, api, browser, {read.name: read for read in reads})
        parts: dict[int, dict[str, list[Timed]]] = {size: {} for size in sides}
        repeat = max(MIN_TIMINGS, args.repeat // SIDE_BY_SIDE_ROUNDS)
        # The last checkpoint's reads, in order: a superset of the first's (offset pages past its size).
        for name in sides[last][3]:
            for round_number in range(SIDE_BY_SIDE_ROUNDS):
                order = (first, last) if round_number % 2 == 0 else (last, first)
                for size in order:
                    server, api, browser, by_name = sides[size]
                    read = by_name.get(name)
                    if read is None:
                        continue
                    client = browser if read.console else api
                    timed = time_read(server, client, read, repeat, args.budget / SIDE_BY_SIDE_ROUNDS)
                    parts[size].setdefault(name, []).append(timed)
            print(f"  {name}: timed on both", file=sys.stderr)
    timed_at = {size: [merged_timings(found) for found in named.values()] for size, named in parts.items()}
    figures = read_figures(kind, timed_at, metadata_note)
    for figure in figures:
        figure.measure += " (side by side)"
    return figures


@contextmanager
def store_copy(store: Store, args: argparse.Namespace) -> Iterator[Store]:
    """A copy of the seeded store, removed afterwards: the side-by-side ingest writes to it, so the kept
    store stays as its manifest says."""
    if store.kind == "sqlite":
        source = Path(str(make_url(store.url).database))
        with tempfile.TemporaryDirectory(prefix="redline-bench-copy-") as folder:
            target = Path(folder) / "copy.db"
            with closing(sqlite3.connect(source)) as reading, closing(sqlite3.connect(target)) as writing:
                reading.backup(writing)
            yield Store("sqlite", f"sqlite:///{target}")
        return
    database = FRESH_DATABASE + "_copy"
    drop_database(args.postgres_url, database)
    with psycopg.connect(libpq_url(args.postgres_url), autocommit=True) as admin:
        template = str(make_url(store.url).database)
        # A stopped server's sessions end a moment after its process does.
        deadline = time.monotonic() + SESSIONS_END_SECONDS
        while admin.execute(SESSIONS_ON, (template,)).fetchone() != (0,):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{template} still has sessions after {SESSIONS_END_SECONDS:.0f} s")
            time.sleep(0.2)
        admin.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(database), sql.Identifier(template)
            )
        )
    try:
        url = make_url(args.postgres_url).set(database=database)
        yield Store("postgresql", url.render_as_string(hide_password=False))
    finally:
        drop_database(args.postgres_url, database)


@dataclass
class IngestSide:
    """One store of the side-by-side ingest: its server, the next run and OTLP slice it has not seen,
    and what its timed slices added up to."""

    name: str
    server: Server
    api: httpx.Client
    project: str
    next_run: int
    next_otlp_slice: int
    runs: Window
    otlp: list[OtlpSent] = field(default_factory=list)


def ingest_side_by_side(
    kind: str,
    store: Store,
    kept: Kept,
    args: argparse.Namespace,
    routes: set[str],
    work: Path,
    settings: dict[str, str],
) -> list[Figure]:
    """The batch API and OTLP on an empty store and on a copy of the seeded one, a fresh server on each,
    in rounds that alternate between them (an untimed round first, to warm both): the ingest target's
    ratio from timings seconds apart rather than from the first window's, which was timed as the store
    began."""
    seeded = kept.manifest.seeded
    print(f"{kind}: ingest on an empty store and at {seeded:,} runs, side by side ...", file=sys.stderr)
    pool = conversation_pool()
    with ExitStack() as stack:
        empty = stack.enter_context(fresh_store(kind, args.postgres_url, FRESH_DATABASE + "_empty"))
        copy = stack.enter_context(store_copy(store, args))
        sides: list[IngestSide] = []
        for name, side_store, first_run, first_slice in (
            ("an empty store", empty, 0, 0),
            (f"{seeded:,} runs", copy, seeded, kept.manifest.otlp_slices),
        ):
            log = work / f"serve-{kind}-ingest-{first_run}.log"
            server = stack.enter_context(serve(side_store, log, settings=settings))
            api = stack.enter_context(server.client())
            project = project_id(api)
            declare_indexed(api, project, routes)
            sides.append(IngestSide(name, server, api, project, first_run, first_slice, Window(first_run)))
        for round_number in range(SIDE_BY_SIDE_ROUNDS + 1):
            for side in sides if round_number % 2 == 0 else reversed(sides):
                ingest_round(side, pool, args.otlp_traces, timed=round_number > 0)
            if round_number == 0:
                # Statistics as autovacuum would soon have them: PostgreSQL plans the empty store's
                # look-ups for the empty tables it last counted, long after they stopped being empty.
                for side_store in (empty, copy):
                    analyze(side_store)
    figures: list[Figure] = []
    for side in sides:
        runs = _ingest_figure(kind, side.runs)
        runs.measure = f"ingest runs on {side.name} (side by side)"
        figures += [runs, otlp_figure(kind, f"OTLP on {side.name} (side by side)", side.otlp)]
    empty_figures, full_figures = figures[:2], figures[2:]
    for on_empty, at_size in zip(empty_figures, full_figures, strict=True):
        share = (at_size.rate or 0.0) / (on_empty.rate or 1.0)
        at_size.target = f">= {TARGET_INGEST_SHARE:.0%} of the empty store's"
        at_size.met = share >= TARGET_INGEST_SHARE
        at_size.note += f"; {share:.0%} of the empty store's"
    return figures


def ingest_round(side: IngestSide, pool: Sequence[dict[str, Any]], otlp_traces: int, *, timed: bool) -> None:
    """One slice of runs through the batch API and one of OTLP traces, neither sent to the store before;
    added to the side's figures when `timed`."""
    numbers = range(side.next_run, side.next_run + SIDE_BY_SIDE_INGEST_RUNS)
    send_runs(side.server, side.api, side.project, numbers, pool, side.runs if timed else None)
    side.next_run += SIDE_BY_SIDE_INGEST_RUNS
    sent = send_otlp_slice(side.server, side.next_otlp_slice, otlp_traces)
    side.next_otlp_slice += 1
    sent.refused()
    if timed:
        side.otlp.append(sent)


# ------------------------------------------------------------------------------------------------ main


def _sizes(text_: str) -> list[int]:
    return [int(part.replace("_", "")) for part in text_.split(",") if part]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--runs", type=int, default=1_000_000, help="runs the store is seeded to")
    parser.add_argument("--at", type=_sizes, default=None, help="checkpoints (default 100000,--runs)")
    parser.add_argument("--window", type=int, default=100_000, help="runs per ingest figure")
    parser.add_argument(
        "--annotations", type=int, default=100_000, help="rm annotations by the last checkpoint"
    )
    parser.add_argument(
        "--offsets", type=_sizes, default=[100_000, 500_000], help="rm offset pages (those below the size)"
    )
    parser.add_argument("--otlp-traces", type=int, default=200, help="traces (11 spans) per OTLP slice")
    parser.add_argument("--repeat", type=int, default=200, help="timings per read and checkpoint")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds a slow read may take in all")
    parser.add_argument(
        "--delete", type=int, default=0, help="remove this many of the oldest runs at the end"
    )
    parser.add_argument("--plans", action="store_true", help="print each read's query plans")
    parser.add_argument(
        "--fresh-server",
        action="store_true",
        help="time the last checkpoint's reads again from a server started after seeding",
    )
    parser.add_argument(
        "--side-by-side",
        action="store_true",
        help="the first and last checkpoints' reads, then ingest on an empty store and at size, alternated",
    )
    parser.add_argument("--reuse", type=Path, default=None, help="keep the seeded store in this directory")
    parser.add_argument(
        "--postgres-url", default=DEFAULT_POSTGRES_URL, help="admin URL; the bench db is made there"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    args.at = sorted(set(args.at or [min(100_000, args.runs), args.runs]))
    if args.at[-1] != args.runs or args.at[0] < PROBE_BELOW:
        parser.error(f"--at must end at --runs and start at {PROBE_BELOW:,} runs or more")
    if args.reuse is not None:
        args.reuse = args.reuse.expanduser().resolve()
        if args.reuse.is_relative_to(REPO):
            parser.error("--reuse must be outside the repository")
    if args.side_by_side and args.delete:
        parser.error("--side-by-side and --delete: run them apart (the side by side wants the store whole)")
    if min(args.repeat, args.window, args.otlp_traces) < 1 or args.budget <= 0:
        parser.error("--repeat, --window and --otlp-traces must be at least 1, --budget positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    figures: list[Figure] = []
    plans: list[str] = []
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as folder:
        for kind in store_kinds(args.store):
            outcome = bench_store(kind, args, Path(folder))
            print_table(outcome.figures, file=sys.stderr, memory=False)
            figures += outcome.figures
            plans += outcome.plans
    if plans:
        print("\n".join(plans), file=sys.stderr if args.json else sys.stdout)
    print_figures(figures, args.json, memory=False)
    return exit_status(figures)


if __name__ == "__main__":
    raise SystemExit(main())
