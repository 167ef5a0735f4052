"""OTLP ingest (POST /v1/traces): spans persisted per second, server CPU per span, latency per export
request and peak memory, on SQLite and PostgreSQL, against a real `redline serve`.

Traces are `_otlp_traces.py`'s agent conversations (11 spans each). Two modes, each on a fresh store
and a fresh server started as `ingest.py` starts one, with REDLINE_OTLP_SETTLE_SECONDS set past the
run so that no run settles while the clock runs (settling is the worker's, after the trace goes quiet):

- replay: the spans encoded, before the clock starts, as the protobuf ExportTraceServiceRequests of
  512 spans a BatchSpanProcessor posts, then sent from --senders threads, each with its own httpx
  client, until the last answer. Every answer is checked: 200 with no partial success (a 429 or 503
  is retried after its Retry-After, as an exporter would, and counted);
- exporter: the stock `OTLPSpanExporter` under a `BatchSpanProcessor` whose queue holds the whole run,
  fed by a tracer making the same spans with their planned times; timed until `force_flush` returns.
  The SDK's own dropped-span count (its processor metrics) must be 0.

Then, by SQL: spans stored == spans sent (every acknowledged span is durable), runs == traces, and
every run has the steps its spans derive to. `--workers N` (N > 1) runs replay again on PostgreSQL
through `redline serve --workers N`. `--profile` adds a cProfile of the server's pipeline for one
replay batch, in this process, on SQLite (as `profile_batch.py` does for the batch API).

    python bench/otlp.py                             # 10,000 traces, both stores, both modes
    python bench/otlp.py --store sqlite --traces 500 --profile
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from queue import Empty, SimpleQueue

import httpx
import orjson
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from sqlalchemy import create_engine, text

from _load import CONNECT_PAUSE_SECONDS
from _otlp_profile import profile_pipeline
from _otlp_traces import (
    EXPORT_BATCH_SPANS,
    SERVICE,
    SPANS_PER_TRACE,
    PlannedSpan,
    export_bodies,
    in_end_order,
    make_traces,
    play,
    steps_per_trace,
)
from _report import latency_ms
from _server import (
    BENCH_TOKEN,
    DEFAULT_POSTGRES_URL,
    Server,
    Store,
    cpu_spent,
    fresh_store,
    serve,
    store_kinds,
)
from redline.ingest import otlp

TRACES_PATH = "/v1/traces"
PROTOBUF = {"Content-Type": "application/x-protobuf"}
# Past any run: no run settles while the clock runs, so the figures are the export path's alone.
SETTLE_SECONDS = "86400"
RETRYABLE = frozenset({429, 502, 503, 504})
# What the issue asks of SQLite; PostgreSQL is shown against the same figures.
TARGET_CPU_MS_PER_SPAN = 0.3
TARGET_SPANS_PER_SECOND = 5_000.0
TARGET_RSS_MIB = 300.0
# The SDK's processor metric, and the attribute it gives the spans it dropped.
PROCESSED_METRIC = "otel.sdk.processor.span.processed"
DROPPED = ("error.type", "queue_full")


@dataclass
class Result:
    """One mode on one store: what was sent, how fast, at what cost, and what the store then held."""

    store: str
    mode: str
    workers: int
    senders: int
    traces: int
    spans: int
    requests: int
    seconds: float
    spans_per_second: float
    server_cpu_ms_per_span: float
    bench_cpu_ms_per_span: float
    p50_ms: float
    p99_ms: float
    peak_rss_mib: float
    retries: int
    stored_spans: int
    runs: int
    runs_without_steps: int
    steps: int
    # The machine's 1-minute load when the mode ended: above 2, other work shared the 2 cores.
    load_1m: float
    # What did not hold: counts off, refused answers, dropped spans; empty when everything did.
    problems: list[str] = field(default_factory=list)
    # What is worth knowing and is no failure: why requests were retried.
    notes: list[str] = field(default_factory=list)

    def missed(self) -> list[str]:
        """The targets this figure misses (replay judges CPU, rate and memory; the exporter memory)."""
        missed = []
        if self.mode == "replay" and self.server_cpu_ms_per_span > TARGET_CPU_MS_PER_SPAN:
            missed.append(f"server CPU {self.server_cpu_ms_per_span} ms/span > {TARGET_CPU_MS_PER_SPAN}")
        if self.mode == "replay" and self.spans_per_second < TARGET_SPANS_PER_SECOND:
            missed.append(f"{self.spans_per_second:,.0f} spans/s < {TARGET_SPANS_PER_SECOND:,.0f}")
        if self.peak_rss_mib >= TARGET_RSS_MIB:
            missed.append(f"peak RSS {self.peak_rss_mib} MiB >= {TARGET_RSS_MIB:.0f}")
        return missed


# -------------------------------------------------------------------------------------- the store


@dataclass(frozen=True)
class Counts:
    spans: int
    runs: int
    runs_without_steps: int
    steps: int
    # Large traces' runs wait for the worker as `otlp_derive` jobs; none should here (11 spans each).
    waiting_derivations: int


def count_stored(url: str) -> Counts:
    """What the store holds after a mode, by SQL: the API has no span count."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:

            def one(query: str) -> int:
                return int(connection.execute(text(query)).scalar_one())

            return Counts(
                spans=one("SELECT count(*) FROM spans"),
                runs=one("SELECT count(*) FROM traces WHERE source_format = 'otel'"),
                runs_without_steps=one(
                    "SELECT count(*) FROM traces WHERE source_format = 'otel' AND step_count = 0"
                ),
                steps=one("SELECT count(*) FROM steps"),
                waiting_derivations=one(
                    f"SELECT count(*) FROM jobs WHERE kind = '{otlp.DERIVE_JOB}' AND state = 'queued'"
                ),
            )
    finally:
        engine.dispose()


def count_problems(counts: Counts, spans: int, traces: int) -> list[str]:
    """Every way the store differs from what was acknowledged, as `MISMATCH` notes."""
    steps = traces * steps_per_trace()
    problems = []
    if counts.spans != spans:
        problems.append(f"MISMATCH {counts.spans:,} spans stored of {spans:,} acknowledged")
    if counts.runs != traces:
        problems.append(f"MISMATCH {counts.runs:,} runs for {traces:,} traces")
    if counts.runs_without_steps:
        problems.append(f"MISMATCH {counts.runs_without_steps:,} runs without steps")
    if counts.steps != steps:
        problems.append(f"MISMATCH {counts.steps:,} steps, {steps:,} expected")
    if counts.waiting_derivations:
        problems.append(f"MISMATCH {counts.waiting_derivations:,} runs still waiting to be derived")
    return problems


def _result(
    store: Store,
    mode: str,
    server: Server,
    *,
    workers: int,
    senders: int,
    traces: int,
    spans: int,
    latencies: list[float],
    seconds: float,
    cpu: tuple[float, float],
    retries: int,
    problems: list[str],
    notes: list[str] | None = None,
) -> Result:
    counts = count_stored(store.url)
    p50, p99 = latency_ms(latencies)
    return Result(
        store=store.kind,
        mode=mode,
        workers=workers,
        senders=senders,
        traces=traces,
        spans=spans,
        requests=len(latencies),
        seconds=round(seconds, 2),
        spans_per_second=round(spans / seconds, 1),
        server_cpu_ms_per_span=round(cpu[0] / spans * 1000, 4),
        bench_cpu_ms_per_span=round(cpu[1] / spans * 1000, 4),
        p50_ms=p50,
        p99_ms=p99,
        peak_rss_mib=round(server.peak_mib, 1),
        retries=retries,
        stored_spans=counts.spans,
        runs=counts.runs,
        runs_without_steps=counts.runs_without_steps,
        steps=counts.steps,
        load_1m=round(os.getloadavg()[0], 2),
        problems=problems + count_problems(counts, spans, traces),
        notes=notes or [],
    )


def server_log(store: Store, work: Path, mode: str, workers: int) -> Path:
    return work / f"serve-{store.kind}-{mode}-{workers}.log"


@contextmanager
def otlp_server(store: Store, work: Path, mode: str, workers: int) -> Iterator[Server]:
    """`redline serve` on the store with settling put off past the run."""
    log = server_log(store, work, mode, workers)
    with serve(store, log, workers, {"REDLINE_OTLP_SETTLE_SECONDS": SETTLE_SECONDS}) as server:
        yield server


def retry_reasons(log: Path) -> list[str]:
    """Why the server answered 503, as it logged it: each reason once, with how often."""
    marker = "OTLP export answered 503: "
    reasons = [line.split(marker, 1)[1][:200] for line in log.read_text().splitlines() if marker in line]
    return [f"retried: {reason}" for reason in _distinct(reasons)]


# ------------------------------------------------------------------------------------------ replay


@dataclass
class Senders:
    """What the sender threads saw: every request's seconds (retries included), retries, refusals."""

    latencies: list[float] = field(default_factory=list)
    retries: int = 0
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _answer_problem(response: httpx.Response) -> str | None:
    """Why an answer is not a clean acknowledgement: a refusal, or a partial success."""
    if response.status_code != 200:
        return f"answered {response.status_code}: {response.text[:300]}"
    answer = ExportTraceServiceResponse.FromString(response.content)
    if answer.HasField("partial_success"):
        rejected = answer.partial_success
        return f"partial success: {rejected.rejected_spans} rejected, {rejected.error_message[:300]!r}"
    return None


def _send(client: httpx.Client, body: bytes, seen: Senders) -> None:
    """One export, retried as an exporter retries: after Retry-After, on 429, 502, 503 and 504."""
    sent = time.perf_counter()
    while True:
        response = client.post(TRACES_PATH, content=body, headers=PROTOBUF)
        if response.status_code not in RETRYABLE:
            break
        with seen.lock:
            seen.retries += 1
        time.sleep(float(response.headers.get("Retry-After", "1")))
    elapsed = time.perf_counter() - sent
    problem = _answer_problem(response)
    with seen.lock:
        seen.latencies.append(elapsed)
        if problem is not None:
            seen.problems.append(problem)


def _sender(client: httpx.Client, work: SimpleQueue[bytes], start: threading.Barrier, seen: Senders) -> None:
    start.wait()
    while True:
        try:
            body = work.get_nowait()
        except Empty:
            return
        _send(client, body, seen)


def send_bodies(server: Server, bodies: Sequence[bytes], senders: int) -> tuple[Senders, float]:
    """The bodies in order from `senders` threads at once, each taking the next one as it is free;
    the wall seconds from their release to the last answer."""
    work: SimpleQueue[bytes] = SimpleQueue()
    for body in bodies:
        work.put(body)
    seen = Senders()
    start = threading.Barrier(senders + 1)
    clients = []
    # Warm, one after another, as `_load.py` opens its connections: uvicorn's workers each accept all
    # the connections they find, so a burst would all land on one `--workers` process.
    for _ in range(senders):
        client = server.client()
        client.get("/healthz").raise_for_status()
        clients.append(client)
        time.sleep(CONNECT_PAUSE_SECONDS)
    threads = [threading.Thread(target=_sender, args=(c, work, start, seen)) for c in clients]
    for thread in threads:
        thread.start()
    start.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    for client in clients:
        client.close()
    return seen, seconds


def bench_replay(
    store: Store, bodies: Sequence[bytes], spans: int, traces: int, senders: int, workers: int, work: Path
) -> Result:
    with otlp_server(store, work, "replay", workers) as server, cpu_spent(server.pid) as cpu:
        seen, seconds = send_bodies(server, bodies, senders)
    return _result(
        store,
        "replay",
        server,
        workers=workers,
        senders=senders,
        traces=traces,
        spans=spans,
        latencies=seen.latencies,
        seconds=seconds,
        cpu=(cpu.server, cpu.bench),
        retries=seen.retries,
        problems=_distinct(seen.problems),
        notes=retry_reasons(server_log(store, work, "replay", workers)),
    )


def _distinct(problems: list[str]) -> list[str]:
    """Each kind of problem once, with how often it happened."""
    counted: dict[str, int] = {}
    for problem in problems:
        counted[problem] = counted.get(problem, 0) + 1
    return [f"{n} x {problem}" if n > 1 else problem for problem, n in counted.items()]


# ---------------------------------------------------------------------------------------- exporter


class TimedExporter(SpanExporter):
    """The stock exporter, with each export's seconds (the SDK's encoding and its retries included)
    and the spans it delivered or gave up on: the stock exporter only logs a failure."""

    def __init__(self, inner: SpanExporter):
        self.inner = inner
        self.latencies: list[float] = []
        self.exported = 0
        self.failed = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        started = time.perf_counter()
        result = self.inner.export(spans)
        self.latencies.append(time.perf_counter() - started)
        if result is SpanExportResult.SUCCESS:
            self.exported += len(spans)
        else:
            self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.inner.force_flush(timeout_millis)


@contextmanager
def sdk_metrics() -> Iterator[InMemoryMetricReader]:
    """A reader of the SDK's own processor metrics (its dropped-span count among them), which the SDK
    records only when OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED is set as the processor is made."""
    name = "OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED"
    before = os.environ.get(name)
    os.environ[name] = "true"
    try:
        yield InMemoryMetricReader()
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


def dropped_spans(reader: InMemoryMetricReader) -> int:
    """Spans the BatchSpanProcessor dropped because its queue was full, as the SDK counts them."""
    data = reader.get_metrics_data()
    dropped = 0
    for resource in data.resource_metrics if data is not None else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name != PROCESSED_METRIC:
                    continue
                for point in metric.data.data_points:
                    if not isinstance(point, NumberDataPoint) or point.attributes is None:
                        continue
                    if point.attributes.get(DROPPED[0]) == DROPPED[1]:
                        dropped += int(point.value)
    return dropped


def bench_exporter(store: Store, traces: Sequence[Sequence[PlannedSpan]], spans: int, work: Path) -> Result:
    """The spans made live by a tracer and exported by the stock exporter from a BatchSpanProcessor
    sized for the run; the clock runs from the first span made to `force_flush` returning."""
    with otlp_server(store, work, "exporter", 1) as server, sdk_metrics() as reader:
        exporter = TimedExporter(
            OTLPSpanExporter(
                endpoint=server.base_url + TRACES_PATH,
                headers={"Authorization": f"Bearer {BENCH_TOKEN}"},
                timeout=600,
            )
        )
        provider = TracerProvider(resource=Resource.create(dict(SERVICE)))
        provider.add_span_processor(
            BatchSpanProcessor(
                exporter,
                max_queue_size=spans,
                max_export_batch_size=EXPORT_BATCH_SPANS,
                meter_provider=MeterProvider(metric_readers=[reader]),
            )
        )
        with cpu_spent(server.pid) as cpu:
            started = time.perf_counter()
            made = play(provider, traces)
            flushed = provider.force_flush(timeout_millis=3_600_000)
            seconds = time.perf_counter() - started
        provider.shutdown()
        dropped = dropped_spans(reader)
    problems = []
    if not flushed:
        problems.append("force_flush timed out")
    if dropped:
        problems.append(f"MISMATCH the SDK dropped {dropped:,} spans")
    if exporter.failed:
        problems.append(f"MISMATCH the exporter gave up on {exporter.failed:,} spans")
    if made != spans or exporter.exported != spans:
        problems.append(f"MISMATCH {made:,} spans made, {exporter.exported:,} exported, {spans:,} planned")
    return _result(
        store,
        "exporter",
        server,
        workers=1,
        senders=1,
        traces=len(traces),
        spans=spans,
        latencies=exporter.latencies,
        seconds=seconds,
        cpu=(cpu.server, cpu.bench),
        retries=0,
        problems=problems,
    )


# ------------------------------------------------------------------------------------------- report


def print_table(results: list[Result]) -> None:
    header = (
        "store", "mode", "procs", "senders", "spans", "requests", "wall s", "spans/s", "CPU ms/span",
        "bench ms/span", "p50 ms", "p99 ms", "RSS MiB", "retries", "load", "checks", "note",
    )  # fmt: skip
    rows = [
        (
            r.store,
            r.mode,
            str(r.workers),
            str(r.senders),
            f"{r.spans:,}",
            f"{r.requests:,}",
            f"{r.seconds:.2f}",
            f"{r.spans_per_second:,.0f}",
            f"{r.server_cpu_ms_per_span:.3f}",
            f"{r.bench_cpu_ms_per_span:.3f}",
            f"{r.p50_ms:,.1f}",
            f"{r.p99_ms:,.1f}",
            f"{r.peak_rss_mib:,.1f}",
            str(r.retries),
            f"{r.load_1m:.2f}",
            "; ".join(r.problems + [f"target missed: {m}" for m in r.missed()]) or "ok",
            "; ".join(r.notes),
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        cells = [
            cell.ljust(width) if i in (0, 1, len(row) - 2, len(row) - 1) else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells).rstrip())


def exit_status(results: list[Result]) -> int:
    """1 when a check failed anywhere or a SQLite target was missed; PostgreSQL is shown against the
    same targets without failing the run."""
    failed = any(r.problems for r in results)
    missed = any(r.missed() for r in results if r.store == "sqlite")
    return 1 if failed or missed else 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--traces", type=int, default=10_000, help=f"traces of {SPANS_PER_TRACE} spans")
    parser.add_argument("--senders", type=int, default=4, help="concurrent senders in replay")
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="server processes for a second replay on PostgreSQL (1: none)",
    )
    parser.add_argument(
        "--modes", default="replay,exporter", help="comma-separated: replay, exporter (default both)"
    )
    parser.add_argument(
        "--postgres-url", default=DEFAULT_POSTGRES_URL, help="admin URL; the bench db is made there"
    )
    parser.add_argument("--profile", action="store_true", help="also cProfile one export in-process")
    parser.add_argument("--top", type=int, default=30, help="functions per cProfile listing")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    args = parser.parse_args(argv)
    args.modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    if not set(args.modes) <= {"replay", "exporter"} or not args.modes:
        parser.error("--modes takes replay, exporter or both, comma-separated")
    if args.traces < 1 or args.senders < 1 or args.workers < 1:
        parser.error("--traces, --senders and --workers must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    kinds = store_kinds(args.store)
    log = sys.stderr
    print(f"making {args.traces:,} traces x {SPANS_PER_TRACE} spans ...", file=log)
    traces = make_traces(args.traces)
    spans = len(traces) * SPANS_PER_TRACE
    bodies = export_bodies(in_end_order(traces))
    size = sum(len(body) for body in bodies)
    print(f"{len(bodies):,} export bodies, {size / 1024 / 1024:,.1f} MiB of protobuf", file=log)
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as folder:
        work = Path(folder)
        for kind in kinds:
            counts = [1, args.workers] if kind == "postgresql" and args.workers > 1 else [1]
            for workers in counts if "replay" in args.modes else []:
                print(f"{kind}: replay, {workers} server process(es) ...", file=log)
                with fresh_store(kind, args.postgres_url) as store:
                    results.append(
                        bench_replay(store, bodies, spans, len(traces), args.senders, workers, work)
                    )
            if "exporter" in args.modes:
                print(f"{kind}: stock exporter ...", file=log)
                with fresh_store(kind, args.postgres_url) as store:
                    results.append(bench_exporter(store, traces, spans, work))
    if args.json:
        found = [{**asdict(r), "missed": r.missed()} for r in results]
        print(orjson.dumps(found, option=orjson.OPT_INDENT_2).decode())
    else:
        print_table(results)
    if args.profile:
        print("", file=log if args.json else sys.stdout)
        print(profile_pipeline(bodies, args.top), file=log if args.json else sys.stdout)
    return exit_status(results)


if __name__ == "__main__":
    sys.exit(main())
