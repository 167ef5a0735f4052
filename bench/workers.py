"""One server process against two: single-annotation creates and reads from 8 clients, SQLite and PostgreSQL.

What `redline serve`'s default number of processes is chosen from (docs/deployment.md). For each store
(--store sqlite|postgresql|both) and each process count (--processes, default 1,2) a fresh store and its
own `redline serve --workers N` (`_server.py`), all started before the first measure and left running, so
the rounds can alternate between them: round after round (--rounds), each store, each process count (the
order of the counts flips every round), the same mix from --clients keep-alive connections at once
(`_load.py`'s light client), so a burst of outside load on the shared cores hits every setting alike.

The mix, --requests per phase, in a fixed order (requests i = 0, 1, ...; i mod 10):
  0-3  POST /api/v1/rm/traces/{t}/annotations    a rating with a comment on a step (rm surface)
  4-7  POST /v2/traces/{t}/spans/{s}/annotation  one key, "rating", good or bad (reviews surface)
  8    GET /v1/runs?projectId=...&limit=50        the newest runs, no steps
  9    GET /v1/runs/{id}                          one run with its steps and spans
the bodies as the side-by-side measure against Phoenix sends them (the issue's load): the traces are
--traces runs of 11 steps and 11 spans through POST /v1/runs/batch.

Per phase: creates/s (both kinds, over the phase's wall time), p50/p99 of the creates and of the reads,
the server's CPU per request (its whole process tree: supervisor, workers, their threads), on PostgreSQL
the database's (the CPU of the backends connected to that store at the end: a floor, since a backend
that a pool's overflow opened and closed meanwhile is gone; how many sessions were opened says how much
that misses), and the client's own. Then per store and process
count the median over the rounds, and the ratio of two processes to one.

    python bench/workers.py                              # both stores, 1 and 2 processes, 3 rounds
    python bench/workers.py --store sqlite --rounds 5 --json
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import psutil
import psycopg

from _load import raw_request, send_all
from _report import latency_ms
from _server import (
    BENCH_DATABASE,
    DEFAULT_POSTGRES_URL,
    Server,
    Store,
    cpu_spent,
    fresh_store,
    libpq_url,
    project_id,
    serve,
    store_kinds,
)

EXPLANATION = "The answer addresses the question but misses one constraint the user stated; tone is fine."
TEXT = "Your order shipped on Monday and should arrive by Thursday; the tracking number is in the email. "
RUN_BATCH = 100
WARM_REQUESTS = 400
SESSION_STATS_SECONDS = 1.0
TARGET_RUNS = 200
CREATE_KINDS = ("rm create", "v2 create")
READ_KINDS = ("list runs", "get run")
# The figures whose median over the rounds the summary gives.
MEDIANS = (
    "creates_per_s", "create_p50_ms", "create_p99_ms", "read_p50_ms", "read_p99_ms", "server_cpu_ms",
    "database_cpu_ms", "sessions_opened", "client_cpu_ms", "load_1m",
)  # fmt: skip
# The mix, by request number mod 10.
MIX = (*["rm create"] * 4, *["v2 create"] * 4, "list runs", "get run")


@dataclass(frozen=True)
class Target:
    """A run the mix writes to: its id, its span ids and its non-system step ids."""

    run_id: str
    spans: list[str]
    steps: list[str]


@dataclass
class Phase:
    """One mix against one server: what it did and what it cost."""

    round: int
    store: str
    processes: int
    requests: int
    creates: int
    seconds: float
    creates_per_s: float
    create_p50_ms: float
    create_p99_ms: float
    read_p50_ms: float
    read_p99_ms: float
    server_cpu_ms: float
    database_cpu_ms: float | None
    sessions_opened: int | None
    client_cpu_ms: float
    load_1m: float


# ------------------------------------------------------------------------------------------ the stores


def runs_body(project: str, first: int, count: int) -> bytes:
    """`count` runs of 11 steps and 11 spans (an agent root over five calls and five tools)."""
    runs = []
    for number in range(first, first + count):
        steps: list[dict[str, Any]] = [{"role": "user", "content": f"Where is order {number}? {TEXT}"}]
        spans: list[dict[str, Any]] = [{"spanId": f"r{number}", "kind": "agent", "name": "agent.run"}]
        for step in range(10):
            call = step % 2 == 0
            steps.append(
                {"role": "assistant", "content": TEXT}
                if call
                else {"role": "tool", "content": TEXT, "toolName": "lookup_order"}
            )
            spans.append(
                {
                    "spanId": f"s{number}-{step}",
                    "parentSpanId": f"r{number}",
                    "kind": "chat-completion" if call else "tool",
                    "name": f"step-{step}",
                }
            )
        runs.append(
            {
                "projectId": project,
                "agent": "bench",
                "status": "completed",
                "steps": steps,
                "spans": spans,
                "externalId": f"workers-{number}",
            }
        )
    return orjson.dumps({"runs": runs})


def post_runs(client: httpx.Client, project: str, count: int) -> None:
    """`count` runs of `runs_body` into the project through POST /v1/runs/batch, `RUN_BATCH` a request."""
    for first in range(0, count, RUN_BATCH):
        client.post(
            "/v1/runs/batch",
            content=runs_body(project, first, min(RUN_BATCH, count - first)),
            headers={"Content-Type": "application/json"},
        ).raise_for_status()


def prepare(server: Server, traces: int) -> tuple[str, list[Target]]:
    """The review key "rating" and the runs, through the API; the runs the mix writes to, read back."""
    with server.client() as client:
        project = project_id(client)
        client.post(
            "/v2/human-reviews",
            json={
                "key": "rating",
                "display_name": "rating",
                "project_id": project,
                "type": "categorical",
                "options": ["good", "bad"],
            },
        ).raise_for_status()
        post_runs(client, project, traces)
        listed = client.get("/v1/runs", params={"projectId": project, "limit": TARGET_RUNS})
        listed.raise_for_status()
        targets = []
        for run in listed.json()["data"]:
            full = client.get(f"/v1/runs/{run['id']}")
            full.raise_for_status()
            body = full.json()
            spans = [span["spanId"] for span in body["spans"]]
            steps = [step["id"] for step in body["steps"] if step["role"] != "system"]
            targets.append(Target(run["id"], spans, steps))
    return project, targets


def mix(project: str, targets: list[Target], count: int, offset: int) -> list[tuple[str, str, bytes | None]]:
    """(kind, path, body) of the phase's requests; `offset` moves the targets so rounds write afresh."""
    requests: list[tuple[str, str, bytes | None]] = []
    for number in range(count):
        kind = MIX[number % len(MIX)]
        turn = number + offset
        target = targets[turn % len(targets)]
        if kind == "rm create":
            body = {
                "rating": 1 if turn % 2 else -1,
                "comment": EXPLANATION,
                "step_id": target.steps[turn % 10],
            }
            requests.append((kind, f"/api/v1/rm/traces/{target.run_id}/annotations", orjson.dumps(body)))
        elif kind == "v2 create":
            span = target.spans[(turn // len(targets)) % len(target.spans)]
            value = {"annotations": [{"key": "rating", "value": "good" if turn % 2 else "bad"}]}
            requests.append(
                (kind, f"/v2/traces/{target.run_id}/spans/{span}/annotation", orjson.dumps(value))
            )
        elif kind == "list runs":
            requests.append((kind, f"/v1/runs?projectId={project}&limit=50", None))
        else:
            requests.append((kind, f"/v1/runs/{target.run_id}", None))
    return requests


# ---------------------------------------------------------------------------------------- the database


def sessions_opened(admin_url: str, database: str) -> int:
    """Connections ever made to one database (PostgreSQL 14's `pg_stat_database.sessions`): a pool that
    overflows opens and closes backends, and each costs PostgreSQL a process start."""
    with psycopg.connect(libpq_url(admin_url), autocommit=True) as admin:
        row = admin.execute(
            "SELECT sessions FROM pg_stat_database WHERE datname = %s", (database,)
        ).fetchone()
    return int(row[0]) if row else 0


def backend_pids(admin_url: str, database: str) -> list[int]:
    """The PostgreSQL backends connected to one database: where its share of a request's CPU goes."""
    with psycopg.connect(libpq_url(admin_url), autocommit=True) as admin:
        rows = admin.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (database,)).fetchall()
    return [int(pid) for (pid,) in rows]


def cpu_by_pid(pids: list[int]) -> dict[int, float]:
    """CPU seconds so far of each process still there."""
    spent = {}
    for pid in pids:
        with suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            times = psutil.Process(pid).cpu_times()
            spent[pid] = times.user + times.system
    return spent


def database_cpu(before: dict[int, float], after: dict[int, float]) -> float:
    """What the backends spent between two readings. A backend opened meanwhile (a pool's overflow
    connection) counts whole; one closed meanwhile is lost, so this is a floor."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


# ----------------------------------------------------------------------------------------- the phases


@dataclass
class Setting:
    """One store and process count, with its server running for the whole bench."""

    store: Store
    database: str | None
    processes: int
    server: Server
    project: str
    targets: list[Target]


def run_phase(setting: Setting, args: argparse.Namespace, round_number: int, count: int = 0) -> Phase:
    """The mix (--requests of it, or `count`) from --clients connections at once against one setting's
    server. Round -1 is the warm-up, on targets no round writes to first."""
    count = count or args.requests
    requests = mix(setting.project, setting.targets, count, (round_number + 1) * args.requests)
    target = setting.server.load_target()
    raw = [raw_request(target, "GET" if body is None else "POST", path, body) for _, path, body in requests]
    database = setting.database
    backends = cpu_by_pid(backend_pids(args.postgres_url, database)) if database else {}
    sessions = sessions_opened(args.postgres_url, database) if database else 0
    with cpu_spent(setting.server.pid) as cpu:
        latencies, seconds = send_all(target, raw, args.clients)
    after = cpu_by_pid(backend_pids(args.postgres_url, database)) if database else {}
    db_seconds = database_cpu(backends, after)
    # Session counts reach the statistics when a session ends; the overflow's have by now or soon.
    time.sleep(SESSION_STATS_SECONDS if database else 0)
    sessions = sessions_opened(args.postgres_url, database) - sessions if database else 0
    creates = [
        latency for (kind, _, _), latency in zip(requests, latencies, strict=True) if kind in CREATE_KINDS
    ]
    reads = [latency for (kind, _, _), latency in zip(requests, latencies, strict=True) if kind in READ_KINDS]
    create_p50, create_p99 = latency_ms(creates)
    read_p50, read_p99 = latency_ms(reads)
    return Phase(
        round=round_number,
        store=setting.store.kind,
        processes=setting.processes,
        requests=len(requests),
        creates=len(creates),
        seconds=round(seconds, 2),
        creates_per_s=round(len(creates) / seconds, 1),
        create_p50_ms=create_p50,
        create_p99_ms=create_p99,
        read_p50_ms=read_p50,
        read_p99_ms=read_p99,
        server_cpu_ms=round(cpu.server / len(requests) * 1000, 2),
        database_cpu_ms=round(db_seconds / len(requests) * 1000, 2) if database else None,
        sessions_opened=sessions if database else None,
        client_cpu_ms=round(cpu.bench / len(requests) * 1000, 2),
        load_1m=round(os.getloadavg()[0], 2),
    )


@contextmanager
def settings(args: argparse.Namespace, work: Path) -> Iterator[list[Setting]]:
    """A fresh store and a server on it for every store and process count, all running until the end."""
    with ExitStack() as stack:
        made = []
        for kind in store_kinds(args.store):
            for processes in args.processes:
                database = f"{BENCH_DATABASE}_workers_{processes}" if kind == "postgresql" else None
                store = stack.enter_context(fresh_store(kind, args.postgres_url, database or BENCH_DATABASE))
                log = work / f"serve-{kind}-{processes}.log"
                server = stack.enter_context(serve(store, log, processes))
                project, targets = prepare(server, args.traces)
                print(f"{kind}, {processes} process(es): {args.traces:,} runs stored", file=sys.stderr)
                made.append(Setting(store, database, processes, server, project, targets))
                # Warm: every process's pool, caches and first-request costs paid before the rounds.
                run_phase(made[-1], args, -1, WARM_REQUESTS)
        yield made


def summary(phases: list[Phase]) -> list[dict[str, Any]]:
    """Per store and process count, the median of each figure over the rounds; with 2 against 1."""
    rows = []
    for store in dict.fromkeys(phase.store for phase in phases):
        medians: dict[int, dict[str, Any]] = {}
        for processes in sorted({phase.processes for phase in phases if phase.store == store}):
            mine = [phase for phase in phases if phase.store == store and phase.processes == processes]
            row: dict[str, Any] = {"store": store, "processes": processes, "rounds": len(mine)}
            for name in MEDIANS:
                values = [getattr(phase, name) for phase in mine if getattr(phase, name) is not None]
                row[name] = round(statistics.median(values), 2) if values else None
            row["creates_per_s_range"] = [
                min(p.creates_per_s for p in mine),
                max(p.creates_per_s for p in mine),
            ]
            medians[processes] = row
            rows.append(row)
        if 1 in medians and len(medians) > 1:
            for row in medians.values():
                row["creates_vs_1"] = round(row["creates_per_s"] / medians[1]["creates_per_s"], 2)
    return rows


def print_phase(phase: Phase) -> None:
    database = (
        ""
        if phase.database_cpu_ms is None
        else f", db {phase.database_cpu_ms:.2f} (+{phase.sessions_opened} sessions)"
    )
    print(
        f"round {phase.round} {phase.store:10} {phase.processes} proc: {phase.creates_per_s:7.1f} creates/s, "
        f"create p50/p99 {phase.create_p50_ms:.1f}/{phase.create_p99_ms:.1f} ms, read p50/p99 "
        f"{phase.read_p50_ms:.1f}/{phase.read_p99_ms:.1f} ms, CPU ms/req server {phase.server_cpu_ms:.2f}"
        f"{database}, client {phase.client_cpu_ms:.2f}; load {phase.load_1m:.2f}",
        file=sys.stderr,
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--processes", default="1,2", help="server process counts, comma-separated")
    parser.add_argument("--rounds", type=int, default=3, help="times each setting runs the mix, alternating")
    parser.add_argument("--requests", type=int, default=3_000, help="requests per phase (80 %% creates)")
    parser.add_argument("--clients", type=int, default=8, help="connections at once")
    parser.add_argument("--traces", type=int, default=500, help="runs made in each store first")
    parser.add_argument(
        "--postgres-url", default=DEFAULT_POSTGRES_URL, help="admin URL; bench dbs made there"
    )
    parser.add_argument("--json", action="store_true", help="print every phase and the summary as JSON")
    args = parser.parse_args(argv)
    try:
        args.processes = [int(part) for part in args.processes.split(",") if part.strip()]
    except ValueError:
        parser.error("--processes takes whole numbers, comma-separated")
    if min([args.rounds, args.requests, args.clients, args.traces, *args.processes]) < 1:
        parser.error("--processes, --rounds, --requests, --clients and --traces must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    phases: list[Phase] = []
    with (
        tempfile.TemporaryDirectory(prefix="redline-bench-") as folder,
        settings(args, Path(folder)) as every,
    ):
        for round_number in range(args.rounds):
            for store in dict.fromkeys(setting.store.kind for setting in every):
                mine = [setting for setting in every if setting.store.kind == store]
                for setting in mine if round_number % 2 == 0 else reversed(mine):
                    phases.append(run_phase(setting, args, round_number))
                    print_phase(phases[-1])
    rows = summary(phases)
    if args.json:
        print(
            orjson.dumps(
                {"phases": [asdict(p) for p in phases], "summary": rows}, option=orjson.OPT_INDENT_2
            ).decode()
        )
    else:
        for row in rows:
            print(orjson.dumps(row).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
