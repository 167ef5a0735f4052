"""Where one OTLP export's server CPU goes: `otlp.py --profile`, in-process on SQLite.

uvicorn runs the export's store work in a worker thread that cProfile does not follow, so this calls,
in this thread and in order, what `surfaces/otlp/router.py:_keep` calls for one protobuf body:

    parse (protobuf) -> read_spans (decode, hash) -> authenticate -> backlog check -> receive
    (keep_spans, derive per touched run, write_spans, write_runs for all of them, schedule settle jobs)
    -> COMMIT -> the answer

First without the profiler, each piece timed, with the driver's share of it (engine events) and the
named functions inside `receive` timed by wrappers installed in this process only; then one more
body under cProfile (which inflates Python-heavy code: read it for proportions and call counts).
The first bodies (half of them, 8 at most) are stored first, so the measured ones meet runs begun by
earlier batches and re-derive them from stored spans, as in the replay.
"""

from __future__ import annotations

import cProfile
import os
import statistics
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, TypeVar

from sqlalchemy import event

from _otlp_traces import EXPORT_BATCH_SPANS
from _server import BENCH_TOKEN
from profile_batch import profile_table, sqlite_store
from redline.config import Settings
from redline.db import Database
from redline.identity import service as identity
from redline.ingest import otlp
from redline.jobs import service as jobs
from redline.surfaces.otlp import wire
from redline.traces.otlp import runs, store
from redline.traces.otlp.decode import read_spans

T = TypeVar("T")
PIECES = ("parse", "read_spans", "authenticate", "backlog check", "receive", "commit", "answer")
# The functions `receive` spends its time in, by the name each is called through.
INSIDE_RECEIVE: tuple[tuple[str, ModuleType, str], ...] = (
    ("keep_spans", store, "keep_spans"),
    ("derive", otlp, "derive"),
    ("write_spans", store, "write_spans"),
    ("write_runs", runs, "write_runs"),
    ("schedule jobs", jobs, "schedule"),
)
# Bodies stored before the measured ones: enough that those meet runs begun earlier.
WARM_BODIES = 8
# Timings: name -> (seconds, of which in the driver).
Timings = dict[str, tuple[float, float]]


class Meter:
    """Seconds per piece and per function inside `receive`, each with the driver's cursor time spent
    while it was the innermost one running. Installed in this process only: no redline file changes."""

    def __init__(self, db: Database):
        self._engine = db.engine
        self._originals = [(module, name, getattr(module, name)) for _, module, name in INSIDE_RECEIVE]
        self._current = ""
        self._cursor_started = 0.0
        self.seconds: dict[str, float] = {}
        self.sql: dict[str, float] = {}

    def reset(self) -> None:
        self.seconds, self.sql = {}, {}

    def timed(self, label: str, call: Callable[[], T]) -> T:
        outer, self._current = self._current, label
        started = time.perf_counter()
        try:
            return call()
        finally:
            self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - started
            self._current = outer

    def _wrapped(self, label: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return self.timed(label, lambda: original(*args, **kwargs))

        return wrapper

    def _before_cursor(self, *_: Any) -> None:
        self._cursor_started = time.perf_counter()

    def _after_cursor(self, *_: Any) -> None:
        spent = time.perf_counter() - self._cursor_started
        self.sql[self._current] = self.sql.get(self._current, 0.0) + spent

    def __enter__(self) -> Meter:
        for (label, _, _), (module, name, original) in zip(INSIDE_RECEIVE, self._originals, strict=True):
            setattr(module, name, self._wrapped(label, original))
        event.listen(self._engine, "before_cursor_execute", self._before_cursor)
        event.listen(self._engine, "after_cursor_execute", self._after_cursor)
        return self

    def __exit__(self, *_: object) -> None:
        event.remove(self._engine, "after_cursor_execute", self._after_cursor)
        event.remove(self._engine, "before_cursor_execute", self._before_cursor)
        for module, name, original in self._originals:
            setattr(module, name, original)

    def timings(self) -> Timings:
        """The pieces, then the functions inside `receive` and what of it they leave; the driver's time
        of a piece counts what ran in it directly, so `receive`'s is what its functions leave."""
        found = {label: (self.seconds.get(label, 0.0), self.sql.get(label, 0.0)) for label in PIECES}
        inside = [label for label, _, _ in INSIDE_RECEIVE]
        for label in inside:
            found[label] = (self.seconds.get(label, 0.0), self.sql.get(label, 0.0))
        found["receive, rest"] = (
            found["receive"][0] - sum(found[label][0] for label in inside),
            found["receive"][1],
        )
        return found


def one_export(db: Database, body: bytes, settings: Settings, meter: Meter) -> None:
    """What `_keep` does with one protobuf body, piece by piece, in this thread."""
    export = meter.timed("parse", lambda: wire.parse_request(body, "protobuf"))
    batch = meter.timed("read_spans", lambda: read_spans(export, max_span_bytes=settings.otlp_max_span_bytes))
    with db.read() as session:
        actor, _ = meter.timed("authenticate", lambda: identity.authenticate(session, BENCH_TOKEN))
    with db.read() as session:
        meter.timed("backlog check", lambda: jobs.waiting_count(session, otlp.DERIVE_JOB))
    # The handler's `with db.write()`, opened by hand so the COMMIT at its end gets a clock of its own.
    transaction = db.write()
    session = transaction.__enter__()
    limits = otlp.OtlpLimits.of(settings)
    received = meter.timed(
        "receive", lambda: otlp.receive(session, actor, batch, project=None, limits=limits)
    )
    meter.timed("commit", lambda: transaction.__exit__(None, None, None))
    meter.timed("answer", lambda: wire.export_response("protobuf", len(received.rejected), ""))
    if received.rejected:
        raise RuntimeError(f"the profiled export rejected {len(received.rejected)} spans")


def _table(timings: list[Timings]) -> list[str]:
    spans = EXPORT_BATCH_SPANS
    lines = [f"  {'piece':<18}{'ms':>9}{'ms/span':>10}{'of it SQL ms':>14}"]
    for label in timings[0]:
        ms = statistics.median(t[label][0] for t in timings) * 1000
        sql = statistics.median(t[label][1] for t in timings) * 1000
        indent = "  " if label not in PIECES else ""
        lines.append(f"  {indent + label:<18}{ms:9.1f}{ms / spans:10.4f}{sql:14.1f}")
    total = statistics.median(sum(t[label][0] for label in PIECES) for t in timings) * 1000
    sql = statistics.median(sum(t[label][1] for label in t) for t in timings) * 1000
    lines.append(f"  {'all pieces':<18}{total:9.1f}{total / spans:10.4f}{sql:14.1f}")
    return lines


def profile_pipeline(bodies: Sequence[bytes], top: int) -> str:
    """The first bodies stored, up to 3 of the rest timed without the profiler, one under cProfile."""
    if len(bodies) < 3:
        raise SystemExit("--profile needs at least 3 export bodies: raise --traces")
    warm = min(len(bodies) // 2, WARM_BODIES)
    timed = bodies[warm : min(warm + 3, len(bodies) - 1)]
    with sqlite_store() as (db, _):
        settings = Settings(
            database_url=str(db.engine.url), init_admin_token=BENCH_TOKEN, otlp_settle_seconds=86_400
        )
        timings = []
        with Meter(db) as meter:
            for body in bodies[:warm]:
                one_export(db, body, settings, meter)
            for body in timed:
                meter.reset()
                one_export(db, body, settings, meter)
                timings.append(meter.timings())
        profiler = cProfile.Profile()
        profiler.enable()
        one_export(db, bodies[warm + len(timed)], settings, Meter(db))
        profiler.disable()
    lines = [
        f"one export of {EXPORT_BATCH_SPANS} spans, SQLite, in-process: median of {len(timings)} without "
        f"the profiler, after {warm} stored; load average {os.getloadavg()[0]:.2f}",
        *_table(timings),
    ]
    for order in ("cumulative", "tottime"):
        lines += ["", profile_table(profiler, 1, order, top)]
    return "\n".join(lines)
