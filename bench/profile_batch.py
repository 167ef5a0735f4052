"""Where one POST /v1/runs/batch spends its time: each piece timed on its own, in-process, on SQLite.

`ingest.py` measures a real server from outside; when it is slow, this says why. A sync FastAPI
endpoint runs in a worker thread that cProfile does not see, so instead of profiling a request this
calls, in order, the same functions a request goes through, in this thread:

    body -> json.loads (starlette's Request.json) -> RunBatchIn validation (FastAPI's body field)
    -> authenticate (the bearer dependency) -> traces.ingest_runs (row building, then _write's
    INSERTs) -> COMMIT -> the 201 answer rendered with orjson

and then posts more batches through starlette's TestClient, so what the pieces leave out (ASGI,
middleware, the thread hop) shows as the difference. Runs are ingest.py's, so the bytes are the same.

    python bench/profile_batch.py                 # 5 timed batches of 1,000 runs x 20 steps
    python bench/profile_batch.py --top 30
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
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

from ingest import BENCH_TOKEN, batch_bodies, make_runs
from redline import migrate
from redline.app import create_app
from redline.config import Settings
from redline.db import Database, make_engine
from redline.identity import service as identity
from redline.surfaces.responses import JSONBody
from redline.traces import service as traces
from redline.traces.schemas import RunBatchIn

T = TypeVar("T")
PIECES = ("json.loads", "validate", "authenticate", "build rows", "_write inserts", "commit", "answer")


@contextmanager
def sqlite_store() -> Iterator[tuple[Database, str]]:
    """A migrated, bootstrapped SQLite file with the server's pragmas, and its project id."""
    with tempfile.TemporaryDirectory(prefix="redline-profile-") as folder:
        url = f"sqlite:///{Path(folder) / 'profile.db'}"
        db = Database(make_engine(url))
        migrate.upgrade(db.engine)
        with db.write() as session:
            first = identity.bootstrap(
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


class WriteTimer:
    """Wraps traces._write in this process only, so ingest_runs splits into building rows and inserting."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._original: Callable[..., None] = traces._write

    def __enter__(self) -> WriteTimer:
        def timed_write(*args: Any) -> None:
            started = time.perf_counter()
            self._original(*args)
            self.seconds += time.perf_counter() - started

        traces._write = timed_write  # type: ignore[assignment]
        return self

    def __exit__(self, *_: object) -> None:
        traces._write = self._original


def _clock(call: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    value = call()
    return value, time.perf_counter() - started


def one_batch(db: Database, body: bytes) -> dict[str, float]:
    """Seconds per piece of one batch, in the order a request meets them."""
    times: dict[str, float] = {}
    data, times["json.loads"] = _clock(lambda: json.loads(body))
    batch, times["validate"] = _clock(lambda: RunBatchIn.model_validate(data))
    with db.read() as session:
        (actor, _), times["authenticate"] = _clock(lambda: identity.authenticate(session, BENCH_TOKEN))
    with WriteTimer() as write:
        session_cm = db.write()
        session = session_cm.__enter__()
        stored, ingest_seconds = _clock(lambda: traces.ingest_runs(session, actor, batch.runs))
        _, times["commit"] = _clock(lambda: session_cm.__exit__(None, None, None))
    times["_write inserts"] = write.seconds
    times["build rows"] = ingest_seconds - write.seconds
    answer = {
        "data": [{"id": str(run.id), "stepCount": run.step_count} for run in stored],
        "count": len(stored),
    }
    _, times["answer"] = _clock(lambda: JSONBody(answer, status_code=201).body)
    return times


def profile_pieces(db: Database, bodies: list[bytes]) -> tuple[list[dict[str, float]], cProfile.Profile]:
    """Times each batch's pieces and profiles them all; the first body only warms caches and is dropped."""
    one_batch(db, bodies[0])
    profiler = cProfile.Profile()
    timings = []
    for body in bodies[1:]:
        profiler.enable()
        timings.append(one_batch(db, body))
        profiler.disable()
    return timings, profiler


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


def report(timings: list[dict[str, float]], e2e: list[float], profiler: cProfile.Profile, top: int) -> str:
    out = io.StringIO()
    print(f"per batch, median of {len(timings)} (ms):", file=out)
    total = 0.0
    for piece in PIECES:
        ms = statistics.median(t[piece] for t in timings) * 1000
        total += ms
        print(f"  {piece:<16}{ms:9.1f}", file=out)
    print(f"  {'sum of pieces':<16}{total:9.1f}", file=out)
    whole = statistics.median(e2e) * 1000
    print(f"  {'TestClient POST':<16}{whole:9.1f}   (the rest: {whole - total:.1f} ms)", file=out)
    for order in ("tottime", "cumulative"):
        print(f"\ncProfile of the pieces, by {order} (all timed batches):", file=out)
        pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(order).print_stats(top)
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
    runs = make_runs(2 * count * args.batch_size, args.steps)
    with sqlite_store() as (db, project_id):
        bodies = batch_bodies(runs, project_id, args.batch_size)
        timings, profiler = profile_pieces(db, bodies[:count])
        e2e = end_to_end(db, bodies[count:])
    if args.json:
        medians = {piece: round(statistics.median(t[piece] for t in timings) * 1000, 1) for piece in PIECES}
        medians["testclient"] = round(statistics.median(e2e) * 1000, 1)
        print(orjson.dumps(medians, option=orjson.OPT_INDENT_2).decode())
    else:
        print(report(timings, e2e, profiler, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
