"""Where one POST /v1/runs/batch spends its time: each piece timed on its own, in-process, on SQLite.

`ingest.py` measures a real server from outside; when it is slow, this says why. A sync FastAPI
endpoint runs in a worker thread that cProfile does not see, so instead of profiling a request this
calls, in order, the same functions a request goes through, in this thread:

    body -> json.loads (starlette's Request.json) -> RunBatchIn validation (FastAPI's body field)
    -> authenticate (the bearer dependency) -> ingest.record_runs (row building, then _write's
    INSERTs) -> COMMIT -> the 201 answer rendered with orjson

and then posts more batches through starlette's TestClient, so what the pieces leave out (ASGI,
middleware, the thread hop) shows as the difference. Runs are ingest.py's, so the bytes are the same.

    python bench/profile_batch.py                 # 5 timed batches of 1,000 runs x 20 steps
    python bench/profile_batch.py --top 30
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import orjson
from fastapi.testclient import TestClient
from sqlalchemy import event

from _server import BENCH_TOKEN
from ingest import batch_bodies, make_runs
from redline.app import create_app
from redline.config import Settings
from redline.db import Database, make_engine
from redline.identity import service as identity
from redline.identity import workspaces
from redline.ingest import runs as arrival
from redline.migrations import commands as migrate
from redline.surfaces.responses import JSONBody
from redline.traces import service as traces
from redline.traces.schemas import RunBatchIn

T = TypeVar("T")
ProfileTable = dict[tuple[str, int, str], tuple[int, int, float, float, Any]]
PIECES = (
    "json.loads",
    "validate",
    "authenticate",
    "build rows",
    "_write: SQLAlchemy",
    "_write: sqlite3",
    "commit",
    "answer",
)


@contextmanager
def sqlite_store() -> Iterator[tuple[Database, str]]:
    """A migrated, bootstrapped SQLite file with the server's pragmas, and its project id."""
    with tempfile.TemporaryDirectory(prefix="redline-profile-") as folder:
        url = f"sqlite:///{Path(folder) / 'profile.db'}"
        db = Database(make_engine(url))
        migrate.upgrade(db.engine)
        with db.write() as session:
            first = workspaces.bootstrap(
                session,
                workspace_name="bench",
                project_name="bench",
                admin_name="admin",
                admin_token=BENCH_TOKEN,
            )
        try:
            yield db, str(first.project.id)
        finally:
            db.dispose()


class Meters:
    """Seconds in traces._write, in the driver's cursor calls during it, and in cyclic GC pauses.

    Installed in this process only (a wrapper, two engine events, a gc callback), so no redline file
    changes and the request path is otherwise the server's own. A GC pause is charged to the piece that
    was running when the collector struck, and also counted on its own.
    """

    def __init__(self, db: Database):
        self._engine = db.engine
        self._original: Callable[..., None] = traces._write
        self._in_write = self._in_cursor = False
        self._cursor_started = self._gc_started = 0.0
        self.reset()

    def reset(self) -> None:
        self.write = self.driver = self.gc = self.gc_in_write = self.gc_in_driver = 0.0

    def _timed_write(self, *args: Any) -> None:
        self._in_write = True
        started = time.perf_counter()
        try:
            self._original(*args)
        finally:
            self.write += time.perf_counter() - started
            self._in_write = False

    def _before_cursor(self, *_: Any) -> None:
        self._in_cursor = self._in_write
        self._cursor_started = time.perf_counter()

    def _after_cursor(self, *_: Any) -> None:
        if self._in_cursor:
            self.driver += time.perf_counter() - self._cursor_started
        self._in_cursor = False

    def _gc(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
            return
        pause = time.perf_counter() - self._gc_started
        self.gc += pause
        self.gc_in_write += pause if self._in_write else 0.0
        self.gc_in_driver += pause if self._in_cursor else 0.0

    def __enter__(self) -> Meters:
        traces._write = self._timed_write  # type: ignore[assignment]
        event.listen(self._engine, "before_cursor_execute", self._before_cursor)
        event.listen(self._engine, "after_cursor_execute", self._after_cursor)
        gc.callbacks.append(self._gc)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._gc)
        event.remove(self._engine, "after_cursor_execute", self._after_cursor)
        event.remove(self._engine, "before_cursor_execute", self._before_cursor)
        traces._write = self._original


# piece -> (seconds, of which GC pauses)
Pieces = dict[str, tuple[float, float]]


def one_batch(db: Database, body: bytes, meters: Meters) -> Pieces:
    """Each piece of one batch, in the order a request meets them, with the GC pauses inside it."""
    meters.reset()
    pieces: Pieces = {}

    def piece(name: str, call: Callable[[], T]) -> T:
        gc_before, started = meters.gc, time.perf_counter()
        value = call()
        pieces[name] = (time.perf_counter() - started, meters.gc - gc_before)
        return value

    data = piece("json.loads", lambda: json.loads(body))
    batch = piece("validate", lambda: RunBatchIn.model_validate(data))
    with db.read() as session:
        actor, _ = piece("authenticate", lambda: identity.authenticate(session, BENCH_TOKEN))
    # The handler's `with db.write()`, opened by hand so the COMMIT at its end gets a clock of its own.
    transaction = db.write()
    session = transaction.__enter__()
    stored = piece("ingest_runs", lambda: arrival.record_runs(session, actor, batch.runs))
    piece("commit", lambda: transaction.__exit__(None, None, None))
    ingest, ingest_gc = pieces.pop("ingest_runs")
    pieces["build rows"] = (ingest - meters.write, ingest_gc - meters.gc_in_write)
    pieces["_write: SQLAlchemy"] = (meters.write - meters.driver, meters.gc_in_write - meters.gc_in_driver)
    pieces["_write: sqlite3"] = (meters.driver, meters.gc_in_driver)
    answer = {
        "data": [{"id": str(run.id), "stepCount": run.step_count} for run in stored],
        "count": len(stored),
    }
    piece("answer", lambda: JSONBody(answer, status_code=201).body)
    return pieces


def time_pieces(db: Database, bodies: list[bytes]) -> list[Pieces]:
    """Each batch's pieces with no profiler attached; the first body only warms caches and is dropped."""
    with Meters(db) as meters:
        return [one_batch(db, body, meters) for body in bodies][1:]


def profile_batches(db: Database, bodies: list[bytes]) -> cProfile.Profile:
    """The same pieces under cProfile, on batches of their own: a profiler inflates what it watches."""
    profiler = cProfile.Profile()
    with Meters(db) as meters:
        for body in bodies:
            profiler.enable()
            one_batch(db, body, meters)
            profiler.disable()
    return profiler


def end_to_end(db: Database, bodies: list[bytes]) -> list[float]:
    """Seconds per batch through the whole app (middleware, FastAPI, the worker thread), no network."""
    app = create_app(Settings(database_url=str(db.engine.url), init_admin_token=BENCH_TOKEN), db)
    headers = {"Authorization": f"Bearer {BENCH_TOKEN}", "Content-Type": "application/json"}
    seconds: list[float] = []
    with TestClient(app) as client:
        for body in bodies:
            started = time.perf_counter()
            response = client.post("/v1/runs/batch", content=body, headers=headers)
            elapsed = time.perf_counter() - started
            if response.status_code != 201:
                raise RuntimeError(f"batch answered {response.status_code}: {response.text[:500]}")
            seconds.append(elapsed)
    return seconds[1:]


def _where(key: tuple[str, int, str]) -> str:
    filename, line, function = key
    if filename == "~":
        return function
    return f"{'/'.join(Path(filename).parts[-2:])}:{line}({function})"


def profile_table(profiler: cProfile.Profile, batches: int, order: str, top: int) -> str:
    """cProfile's numbers in ms per batch, with each file's folder so redline and library code stand apart."""
    # pstats' table is an undocumented but stable attribute: {(file, line, name): (cc, nc, tt, ct, callers)}
    stats: ProfileTable = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    column = 2 if order == "tottime" else 3
    rows = sorted(stats.items(), key=lambda item: item[1][column], reverse=True)[:top]
    lines = [f"{'self ms':>9}{'total ms':>10}{'calls':>9}  function (per batch, by {order}, under cProfile)"]
    for key, (_, calls, own, total, _) in rows:
        lines.append(
            f"{own / batches * 1000:9.1f}{total / batches * 1000:10.1f}{calls // batches:9d}  {_where(key)}"
        )
    return "\n".join(lines)


def medians_ms(timings: list[Pieces], e2e: list[float]) -> dict[str, tuple[float, float | None]]:
    """Median ms per piece and of its GC pauses; the sum of the medians, and the whole request's median."""
    medians = {
        piece: (
            statistics.median(t[piece][0] for t in timings) * 1000,
            statistics.median(t[piece][1] for t in timings) * 1000,
        )
        for piece in PIECES
    }
    medians["sum of pieces"] = (sum(m[0] for m in medians.values()), sum(m[1] for m in medians.values()))
    rounded: dict[str, tuple[float, float | None]] = {
        key: (round(ms, 1), round(gc_ms, 1)) for key, (ms, gc_ms) in medians.items()
    }
    # The whole request's GC is not metered: the app runs it on threads this process does not watch.
    rounded["TestClient POST"] = (round(statistics.median(e2e) * 1000, 1), None)
    return rounded


def report(
    timings: list[Pieces], e2e: list[float], profiler: cProfile.Profile, batches: int, top: int
) -> str:
    out = io.StringIO()
    print(
        f"per batch, median of {len(timings)}, no profiler; load average {os.getloadavg()[0]:.2f}", file=out
    )
    print(f"  {'piece':<22}{'ms':>9}{'of which GC':>13}", file=out)
    medians = medians_ms(timings, e2e)
    for key, (ms, gc_ms) in medians.items():
        print(f"  {key:<22}{ms:9.1f}{'' if gc_ms is None else f'{gc_ms:13.1f}'}", file=out)
    rest = medians["TestClient POST"][0] - medians["sum of pieces"][0]
    print(
        f"  (TestClient POST minus the pieces: {rest:.1f} ms of ASGI, middleware and thread hops)", file=out
    )
    for order in ("tottime", "cumulative"):
        print("", file=out)
        print(profile_table(profiler, batches, order, top), file=out)
    return out.getvalue()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--batches", type=int, default=5, help="timed batches per measurement (plus one warm-up)"
    )
    parser.add_argument("--batch-size", type=int, default=1_000, help="runs per batch (max 1000)")
    parser.add_argument("--steps", type=int, default=20, help="steps per run")
    parser.add_argument("--top", type=int, default=25, help="functions shown per cProfile listing")
    parser.add_argument("--json", action="store_true", help="print the median piece times as JSON")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    count = args.batches + 1
    runs = make_runs((3 * count - 1) * args.batch_size, args.steps)
    with sqlite_store() as (db, project_id):
        bodies = batch_bodies(runs, project_id, args.batch_size)
        # Bytes only from here: a server holds one batch, not the bench's runs for the collector to walk.
        del runs
        gc.collect()
        timings = time_pieces(db, bodies[:count])
        profiler = profile_batches(db, bodies[count : 2 * count - 1])
        e2e = end_to_end(db, bodies[2 * count - 1 :])
    if args.json:
        medians = {key: {"ms": ms, "gcMs": gc_ms} for key, (ms, gc_ms) in medians_ms(timings, e2e).items()}
        print(orjson.dumps(medians, option=orjson.OPT_INDENT_2).decode())
    else:
        print(report(timings, e2e, profiler, args.batches, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
