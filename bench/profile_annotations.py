"""Where the annotation paths spend their time, in-process: the creates, the export, the pairs.

`annotations.py` measures a real server from outside; this says where its time goes. It builds the
same store (a server ingests the runs, the annotations are seeded by SQL, then the server stops) and
calls the app in this process and this thread as uvicorn would (an ASGI scope, the body, a send
callable: no client library), with anyio's worker-thread hop made inline, so cProfile sees the
middleware, FastAPI, the handler, the service and the driver in one stack. Each path is timed first
without the profiler (ms per operation, and split into pieces where the pieces are a handful of
calls), then profiled (cProfile inflates Python-heavy code: read it for proportions and call
counts, the timings for milliseconds).

    python bench/profile_annotations.py                       # SQLite, 10,000 traces, 100,000 annotations
    python bench/profile_annotations.py --store postgresql --parts creates
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread
import orjson
from sqlalchemy import event

from _server import BENCH_TOKEN, DEFAULT_POSTGRES_URL, Store, fresh_store, percentile, serve
from annotations import (
    EXPORT_ROUTE,
    REWARD_MODELS_ROUTE,
    Corpus,
    _authors,
    create_requests,
    ingest,
    seed,
    seed_rows,
)
from ingest import make_runs
from profile_batch import profile_table
from redline.annotations import service as annotation_service
from redline.annotations.export import export_chunks, export_line
from redline.annotations.schemas import AnnotationIn
from redline.app import create_app
from redline.cli.context import tune_gc_for_bulk_work
from redline.config import Settings
from redline.db import Database, make_engine
from redline.identity import service as identity
from redline.jsonio import dumps
from redline.learning import pairs as pairs_module
from redline.learning import service as learning_service
from redline.queues.annotation.blind import hidden_from
from redline.queues.review_export import review_addition
from redline.surfaces.responses import JSONBody
from redline.surfaces.rm.wire import annotation_dict
from redline.web.addresses import path_id

T = TypeVar("T")
PARTS = ("creates", "export", "pairs")


# --------------------------------------------------------------------------------------- the app, inline


@contextmanager
def inline_worker_threads() -> Iterator[None]:
    """anyio's `to_thread.run_sync` run in the calling thread: FastAPI's sync handlers, dependencies and
    StreamingResponse iterators all go through it, and cProfile only sees its own thread."""
    original = anyio.to_thread.run_sync

    async def run_inline(func: Callable[..., T], *args: Any, **_: Any) -> T:
        return func(*args)

    anyio.to_thread.run_sync = run_inline  # type: ignore[assignment]
    try:
        yield
    finally:
        anyio.to_thread.run_sync = original


class InlineApp:
    """The app called the way uvicorn calls it (ASGI spec 2.3, the body in one message, a client that
    stays connected), in this thread and with no client library, so what is timed is the server's."""

    def __init__(self, db: Database):
        self.app = create_app(Settings(database_url=db.engine.url.render_as_string(hide_password=False)), db)

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [
                (b"host", b"redline.bench"),
                (b"authorization", f"Bearer {BENCH_TOKEN}".encode()),
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
            "client": ("127.0.0.1", 50000),
            "server": ("redline.bench", 80),
            "state": {},
        }
        sent = False
        status = 0
        chunks: list[bytes] = []

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # still connected: a streaming response cancels this wait
            raise AssertionError("unreachable")

        async def send(message: MutableMapping[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, send)
        return status, b"".join(chunks)


class SqlMeter:
    """Seconds and statements inside the driver (cursor execute), from engine events."""

    def __init__(self, db: Database):
        self.engine = db.engine
        self.seconds = 0.0
        self.statements = 0
        self._started = 0.0

    def _before(self, *_: Any) -> None:
        self._started = time.perf_counter()

    def _after(self, *_: Any) -> None:
        self.seconds += time.perf_counter() - self._started
        self.statements += 1

    def __enter__(self) -> SqlMeter:
        event.listen(self.engine, "before_cursor_execute", self._before)
        event.listen(self.engine, "after_cursor_execute", self._after)
        return self

    def __exit__(self, *_: object) -> None:
        event.remove(self.engine, "after_cursor_execute", self._after)
        event.remove(self.engine, "before_cursor_execute", self._before)


def _print_pieces(title: str, pieces: dict[str, float], count: int) -> None:
    """Pieces in ms per operation; indented names are parts of the piece above and not summed."""
    print(f"\n{title}")
    print(f"  {'piece':<44}{'ms per op':>10}")
    total = 0.0
    for name, seconds in pieces.items():
        ms = seconds / count * 1000
        if not name.startswith("  "):
            total += ms
        print(f"  {name:<44}{ms:10.3f}")
    print(f"  {'sum':<44}{total:10.3f}")


def _profile(title: str, profiler: cProfile.Profile, count: int, top: int) -> None:
    for order in ("tottime", "cumulative"):
        print(f"\n{title}, top {top} by {order}, ms per op")
        print(profile_table(profiler, count, order, top))


# ------------------------------------------------------------------------------------------------ creates


def create_pieces(db: Database, requests: list[tuple[str, bytes]]) -> dict[str, float]:
    """One create's pieces, in a request's order, called directly: the body's validation, the bearer
    check, then inside `db.write()`: the service's create (_writable_trace, the step, the Core INSERT),
    the answer, the COMMIT. Seconds in all, per piece."""
    pieces: dict[str, float] = {}

    def piece(name: str, call: Callable[..., T], *args: Any) -> T:
        started = time.perf_counter()
        value = call(*args)
        pieces[name] = pieces.get(name, 0.0) + time.perf_counter() - started
        return value

    def answer(annotation: Any) -> Any:
        return JSONBody(annotation_dict(annotation)).body

    with (
        timed_functions(annotation_service, ["_writable_trace", "_step_of"]) as spent,
        SqlMeter(db) as meter,
    ):
        for path, body in requests:
            trace_id = path_id(path.split("/")[-2], "run")
            parsed = piece("validate body (AnnotationIn)", AnnotationIn.model_validate_json, body)
            with db.read() as session:
                actor, _ = piece("authenticate", identity.authenticate, session, BENCH_TOKEN)
            transaction = db.write()
            session = piece("open the write session", transaction.__enter__)
            created = piece(
                "annotation_service.create", annotation_service.create, session, actor, trace_id, parsed
            )
            piece("annotation_dict + JSONBody", answer, created)
            piece("COMMIT (and BEGIN IMMEDIATE, sent lazily)", transaction.__exit__, None, None, None)
    pieces["  of which _writable_trace"] = spent["_writable_trace"]
    pieces["  of which _step_of"] = spent["_step_of"]
    pieces["  all driver time (every statement)"] = meter.seconds
    return pieces


def bench_creates(db: Database, corpus: Corpus, count: int, top: int) -> None:
    requests = create_requests(corpus, count, 5)
    # A warm-up, so the first requests' statement compilation is not counted.
    asyncio.run(_post(db, requests[:50]))
    started = time.perf_counter()
    asyncio.run(_post(db, requests[50:]))
    per = (time.perf_counter() - started) / (count - 50)
    print(
        f"\ncreates through the app in-process (no server, no network): {per * 1000:.3f} ms each, "
        f"{1 / per:,.0f} per second on one core"
    )
    asyncio.run(_healthz(db, 100))
    started = time.perf_counter()
    asyncio.run(_healthz(db, count))
    floor = (time.perf_counter() - started) / count
    print(f"  GET /healthz the same way (middleware, routing, a sync handler): {floor * 1000:.3f} ms each")
    with SqlMeter(db) as meter:
        asyncio.run(_post(db, requests[:200]))
    print(
        f"  inside the driver: {meter.seconds / 200 * 1000:.3f} ms, "
        f"{meter.statements / 200:.1f} statements per create"
    )
    pieces = create_pieces(db, create_requests(corpus, count, 6))
    _print_pieces(f"one create taken apart, mean of {count}, no profiler", pieces, count)
    profiler = cProfile.Profile()
    requests = create_requests(corpus, count, 7)
    profiler.enable()
    asyncio.run(_post(db, requests))
    profiler.disable()
    _profile("creates through the app", profiler, count, top)
    threads_vs_one(db, corpus, count)


async def _post(db: Database, requests: list[tuple[str, bytes]]) -> None:
    app = InlineApp(db)
    for path, body in requests:
        status, answer = await app.request("POST", path, body)
        if status != 200:
            raise RuntimeError(f"create answered {status}: {answer[:300]!r}")


async def _healthz(db: Database, count: int) -> None:
    app = InlineApp(db)
    for _ in range(count):
        await app.request("GET", "/healthz")


def threads_vs_one(db: Database, corpus: Corpus, count: int) -> None:
    """The service's create, each in its own write transaction, from 1 and from 8 threads: what
    concurrency costs the store itself, with no HTTP at all. On SQLite a writer waits for the lock in
    `BEGIN IMMEDIATE` (its busy handler sleeps and retries), timed here through engine events."""
    with db.read() as session:
        actor, _ = identity.authenticate(session, BENCH_TOKEN)
    local = threading.local()
    begins: list[float] = []

    def before(_connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        local.started = time.perf_counter()

    def after(_connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.startswith("BEGIN"):
            begins.append(time.perf_counter() - local.started)

    event.listen(db.engine, "before_cursor_execute", before)
    event.listen(db.engine, "after_cursor_execute", after)
    try:
        for threads in (1, 8):
            bodies = [
                (path_id(path.split("/")[-2], "run"), AnnotationIn.model_validate_json(body))
                for path, body in create_requests(corpus, count, 10 + threads)
            ]
            shares = [bodies[n::threads] for n in range(threads)]
            begins.clear()
            transactions: list[float] = []

            def work(share: list[tuple[uuid.UUID, AnnotationIn]], spent: list[float] = transactions) -> None:
                for trace_id, body in share:
                    started = time.perf_counter()
                    with db.write() as session:
                        annotation_service.create(session, actor, trace_id, body)
                    spent.append(time.perf_counter() - started)

            workers = [threading.Thread(target=work, args=(share,)) for share in shares]
            started = time.perf_counter()
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
            seconds = time.perf_counter() - started
            waited = (
                f"BEGIN IMMEDIATE median {statistics.median(begins) * 1000:.2f} ms, "
                f"p99 {percentile(begins, 0.99) * 1000:.2f} ms, total {sum(begins):.2f} s"
                if begins
                else "no BEGIN statement (PostgreSQL begins implicitly)"
            )
            print(
                f"\nservice-level creates, {threads} thread(s): {count} in {seconds:.2f} s, "
                f"{count / seconds:,.0f}/s; a transaction median "
                f"{statistics.median(transactions) * 1000:.2f} ms, "
                f"p99 {percentile(transactions, 0.99) * 1000:.2f} ms; {waited}"
            )
    finally:
        event.remove(db.engine, "after_cursor_execute", after)
        event.remove(db.engine, "before_cursor_execute", before)


# ------------------------------------------------------------------------------------------------- export


def bench_export(db: Database, top: int) -> None:
    with db.read() as session:
        actor, _ = identity.authenticate(session, BENCH_TOKEN)
    pieces: dict[str, float] = {}
    with db.read() as session, SqlMeter(db) as meter:
        started = time.perf_counter()
        hidden = hidden_from(session, actor)
        rows = [row for page in annotation_service.iter_export(session, actor, hidden) for row in page]
        pieces["iter_export (queries + rows)"] = time.perf_counter() - started
        pieces["  of which inside the driver"] = meter.seconds
        count = len(rows)
        started = time.perf_counter()
        lines = [export_line(r) for r in rows]
        pieces["export_line"] = time.perf_counter() - started
        started = time.perf_counter()
        for line in lines:
            dumps(line)
        pieces["dumps (orjson)"] = time.perf_counter() - started
        started = time.perf_counter()
        count = sum(chunk.count(b"\n") for chunk in export_chunks(session, actor, hidden, review_addition))
        pieces["export_chunks (what both exports run)"] = time.perf_counter() - started
    del rows, lines
    print(f"\nthe export's pieces, {count:,} rows, {meter.statements} statements, no profiler")
    print(f"  {'piece':<44}{'s':>8}{'rows/s':>12}")
    for name, seconds in pieces.items():
        print(f"  {name:<44}{seconds:8.2f}{count / seconds:12,.0f}")
    started = time.perf_counter()
    asyncio.run(_export(db))
    seconds = time.perf_counter() - started
    print(f"  {'whole export through the app, in-process':<44}{seconds:8.2f}{count / seconds:12,.0f}")
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(_export(db))
    profiler.disable()
    _profile(f"the export of {count:,} rows (per 1,000 rows)", profiler, max(1, count // 1000), top)


async def _export(db: Database) -> int:
    status, answer = await InlineApp(db).request("GET", EXPORT_ROUTE)
    if status != 200:
        raise RuntimeError(f"export answered {status}: {answer[:300]!r}")
    return answer.count(b"\n")


# -------------------------------------------------------------------------------------------------- pairs


@contextmanager
def timed_functions(module: Any, names: list[str]) -> Iterator[dict[str, float]]:
    """Seconds spent in each named module function, by wrapping it for the block."""
    spent: dict[str, float] = dict.fromkeys(names, 0.0)
    originals = {name: getattr(module, name) for name in names}

    def wrap(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - started

        return timed

    for name, function in originals.items():
        setattr(module, name, wrap(name, function))
    try:
        yield spent
    finally:
        for name, function in originals.items():
            setattr(module, name, function)


def bench_pairs(db: Database, corpus: Corpus, max_pairs: int, top: int, reward_model: bool) -> None:
    names = ["rated_targets", "identities", "steps_by_trace", "_evidence", "_render"]
    with db.read() as session, timed_functions(pairs_module, names) as spent, SqlMeter(db) as meter:
        started = time.perf_counter()
        made = pairs_module.rating_pairs(session, corpus.trace_ids, max_pairs)
        total = time.perf_counter() - started
    print(
        f"\nrating_pairs over {len(corpus.trace_ids):,} traces: {len(made):,} pairs in {total:.2f} s, "
        f"no profiler; "
        f"{meter.statements} statements, {meter.seconds:.2f} s inside the driver"
    )
    for name in names:
        print(f"  {name:<44}{spent[name]:8.2f} s")
    print(f"  {'the rest (sampling, Pair objects)':<44}{total - sum(spent.values()):8.2f} s")
    profiler = cProfile.Profile()
    with db.read() as session:
        profiler.enable()
        pairs_module.rating_pairs(session, corpus.trace_ids, max_pairs)
        profiler.disable()
    _profile("rating_pairs, whole call", profiler, 1, top)
    if not reward_model:
        return
    body = orjson.dumps(
        {
            "name": "profile",
            "trace_ids": [str(t) for t in corpus.trace_ids],
            "training_config": {"max_pairs": max_pairs},
        }
    )
    names = ["readable_traces", "rating_pairs", "correction_pairs", "bulk_insert", "trace_count"]
    started = time.perf_counter()
    with SqlMeter(db) as meter, timed_functions(learning_service, names) as spent:
        asyncio.run(_reward_model(db, body))
    total = time.perf_counter() - started
    print(
        f"\nPOST reward-models in-process: {total:.2f} s, "
        f"{meter.statements} statements, {meter.seconds:.2f} s inside the driver"
    )
    for name in names:
        print(f"  learning.service.{name:<27}{spent[name]:8.2f} s")
    print(f"  {'the rest (body, model row, COMMIT, answer)':<44}{total - sum(spent.values()):8.2f} s")
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(_reward_model(db, body))
    profiler.disable()
    _profile("POST reward-models", profiler, 1, top)


async def _reward_model(db: Database, body: bytes) -> None:
    status, answer = await InlineApp(db).request("POST", REWARD_MODELS_ROUTE, body)
    if status not in (200, 201):
        raise RuntimeError(f"reward-models answered {status}: {answer[:300]!r}")


# --------------------------------------------------------------------------------------------------- main


def prepare(store: Store, args: argparse.Namespace, work: Path) -> Corpus:
    """annotations.py's store: runs ingested by a real server, annotations seeded by SQL; server stopped."""
    runs = make_runs(args.traces, args.steps)
    db = Database(make_engine(store.url))
    try:
        with serve(store, work / "serve.log") as server:
            corpus = ingest(server, runs, db)
        seed(db, seed_rows(corpus, args.seeded, _authors(db)))
    finally:
        db.dispose()
    return corpus


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--seeded", type=int, default=100_000)
    parser.add_argument("--creates", type=int, default=1_000, help="creates per measurement")
    parser.add_argument("--max-pairs", type=int, default=4_000)
    parser.add_argument("--parts", default=",".join(PARTS), help=f"any of {', '.join(PARTS)}")
    parser.add_argument(
        "--no-reward-model", action="store_true", help="leave POST /reward-models out of the pairs part"
    )
    parser.add_argument("--top", type=int, default=25, help="rows of each cProfile table")
    args = parser.parse_args(argv)
    args.parts = [part for part in args.parts.split(",") if part]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="redline-profile-") as folder,
        fresh_store(args.store, args.postgres_url) as store,
    ):
        print(
            f"preparing {args.store}: {args.traces:,} traces, {args.seeded:,} annotations ...",
            file=sys.stderr,
        )
        corpus = prepare(store, args, Path(folder))
        db = Database(make_engine(store.url))
        tune_gc_for_bulk_work()  # as `redline serve` does
        print(f"{args.store}, load average {os.getloadavg()[0]:.2f}")
        try:
            with inline_worker_threads():
                if "export" in args.parts:
                    bench_export(db, args.top)
                if "pairs" in args.parts:
                    bench_pairs(db, corpus, args.max_pairs, args.top, not args.no_reward_model)
                if "creates" in args.parts:
                    bench_creates(db, corpus, args.creates, args.top)
        finally:
            db.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
