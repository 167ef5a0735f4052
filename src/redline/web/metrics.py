"""Prometheus metrics, off by default (`REDLINE_METRICS`): requests by route and status with their
latencies, runs and spans ingested, waits for SQLite's write lock, requests the store was too busy for,
and, read from the store at each scrape, background jobs by state.

Several `redline serve` processes count into one set of figures: `redline serve` names a directory in
`PROMETHEUS_MULTIPROC_DIR` before any server process starts, each process writes its counts there
(prometheus-client's multiprocess mode), and a scrape of any process adds them up. The library decides
its mode when it is first imported, so it is imported here only once metrics are turned on, after
`redline serve` has set the directory; with metrics off nothing is imported and each hook is a no-op.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from redline.db import Database
from redline.db.engine import listen_to_lock_waits
from redline.jobs.models import DONE, FAILED, QUEUED, RUNNING, Job

MULTIPROCESS_DIRECTORY = "PROMETHEUS_MULTIPROC_DIR"
# Request latencies, in seconds: an annotation's create is about a millisecond, an import many seconds.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# Waits for SQLite's write lock, in seconds: a write holds it a millisecond or two, an import's batch
# longer; past the busy timeout (5 s by default) the request is answered 503.
LOCK_WAIT_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass(frozen=True)
class _Instruments:
    requests: Any
    latency: Any
    runs: Any
    spans: Any
    store_unavailable: Any
    lock_waits: Any


_instruments: _Instruments | None = None


def turn_on() -> None:
    """Make the instruments (once per process): what `create_app` does when metrics are on."""
    global _instruments
    if _instruments is not None:
        return
    from prometheus_client import Counter, Histogram

    _instruments = _Instruments(
        requests=Counter(
            "redline_http_requests",
            "HTTP requests answered, by route and status.",
            ["method", "route", "status"],
        ),
        latency=Histogram(
            "redline_http_request_duration_seconds",
            "Time to answer an HTTP request, by route.",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
        ),
        runs=Counter("redline_runs_ingested", "Runs stored from the run APIs and imports (not OTLP)."),
        spans=Counter("redline_spans_ingested", "Spans kept from OTLP exports."),
        store_unavailable=Counter(
            "redline_store_unavailable",
            "Requests answered 503: the store stayed busy (a lock) or unreachable.",
        ),
        lock_waits=Histogram(
            "redline_sqlite_lock_wait_seconds",
            "Waits for SQLite's write lock, by who held it (this-process, another-connection).",
            ["held_by"],
            buckets=LOCK_WAIT_BUCKETS,
        ),
    )
    listen_to_lock_waits(_lock_waited)


def request_answered(method: str, route: str, status: int, seconds: float) -> None:
    if _instruments is not None:
        _instruments.requests.labels(method, route, str(status)).inc()
        _instruments.latency.labels(method, route).observe(seconds)


def runs_ingested(count: int) -> None:
    if _instruments is not None and count:
        _instruments.runs.inc(count)


def spans_ingested(count: int) -> None:
    if _instruments is not None and count:
        _instruments.spans.inc(count)


def _lock_waited(held_by: str, seconds: float) -> None:
    if _instruments is not None:
        _instruments.lock_waits.labels(held_by).observe(seconds)


def store_unavailable() -> None:
    if _instruments is not None:
        _instruments.store_unavailable.inc()


def exposition(db: Database) -> tuple[bytes, str]:
    """The figures of every process, and the jobs as the store has them now, in Prometheus's text format
    (with its content type)."""
    from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
    from prometheus_client.core import GaugeMetricFamily

    registry = REGISTRY
    if os.environ.get(MULTIPROCESS_DIRECTORY):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    with db.read() as session:
        states = dict(session.execute(select(Job.state, func.count()).group_by(Job.state)).all())
    jobs = GaugeMetricFamily("redline_jobs", "Background jobs in the store, by state.", labels=["state"])
    for state in (QUEUED, RUNNING, DONE, FAILED):
        jobs.add_metric([state], states.get(state, 0))
    return generate_latest(registry) + generate_latest(_Fixed([jobs])), CONTENT_TYPE_LATEST


class _Fixed:
    """A collector of metric families already read (the jobs, from the store)."""

    def __init__(self, families: list[Any]) -> None:
        self._families = families

    def collect(self) -> list[Any]:
        return self._families
