"""The write path: what one create costs `redline serve` at its defaults, for each kind of create, and
optionally the same against another checkout, alternated in one session.

For each store (--store sqlite|postgresql) a fresh store per tree and one `redline serve` per tree, all
started first and left running, with no `--workers` (the defaults are what is measured). Each server
gets --runs runs of 11 steps and 11 spans (`workers.py`'s runs) through POST /v1/runs/batch and the ten
human reviews of `reviews.py` through POST /v2/human-reviews. Then --rounds rounds; in each, every tree
runs every kind, the trees' order flipped every round so outside load hits both alike. A phase is
--requests requests of one kind from --clients keep-alive connections at once (`_load.py`):

  rm          POST /api/v1/rm/traces/{t}/annotations   {"rating": ±1, "comment": 96 characters, "step_id"}
  v2          POST /v2/traces/{t}/spans/{s}/annotation  one key, "rating": good or bad
  v2-ten      the same with a value for each of the ten keys (`reviews.py`'s values)
  correction  POST /v1/corrections                      each on a run of its own (a person has one live
                                                        correction per run), `corrections.py`'s bodies
  healthz     GET /healthz                              the floor: no token, no store
  list        GET /v1/runs?projectId=…&limit=50         reads, which the write path must not slow
  detail      GET /v1/runs/{id}                         (the issue holds their p99 within 10 %)
  rm-read     GET /api/v1/rm/traces/{t}/annotations     reads of what was said, as a writer of the project
  v3-read     GET /v3/traces/{t}                        (not an admin): what blind review's check costs
                                                        a reader of no blind queue

Per phase: creates/s over the wall time, p50/p99 of the round trips, and the CPU per request of the
server's whole process tree and of this client (psutil). With --against, each round's ratio of the
server CPU per request (this tree over the other) is printed too: a figure that does not depend on how
many cores were free, measured seconds apart. The targets (≤ 1 ms of server CPU for rm and v2, ≤ 2 ms
for correction and v2-ten) are shown beside the medians.

    python bench/writes.py                                   # SQLite, this tree, 3 rounds
    python bench/writes.py --against ../base --rounds 5      # ../base: a checkout of another commit
    python bench/writes.py --store postgresql --kinds rm,v2 --requests 5000
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson
import psutil

from _load import raw_request, send_all
from _server import (
    DEFAULT_POSTGRES_URL,
    Server,
    cpu_spent,
    fresh_store,
    percentile,
    project_id,
    serve,
)
from corrections import SHOULD_SAY, WHY
from reviews import KEYS, _values
from workers import EXPLANATION, post_runs

KINDS = ("rm", "v2", "v2-ten", "correction", "healthz", "list", "detail", "rm-read", "v3-read")
# Server CPU per request the write path is held to (the targets), by kind.
TARGET_MS = {"rm": 1.0, "v2": 1.0, "v2-ten": 2.0, "correction": 2.0}
WARM_REQUESTS = 300


@dataclass(frozen=True)
class Run:
    """A run the creates write to: its id, its spans' ids and its non-system steps' ids."""

    run_id: str
    spans: list[str]
    steps: list[str]


@dataclass
class Tree:
    """A checkout whose server is measured: this one (`src` None) or another one's src/ on PYTHONPATH."""

    name: str
    src: Path | None
    server: Server | None = None
    project: str = ""
    runs: list[Run] | None = None
    next_run: int = 0
    # A writer of the project (no admin) whose token the reads of what was said carry.
    writer_token: str = ""


@dataclass(frozen=True)
class Phase:
    tree: str
    kind: str
    round_number: int
    per_second: float
    p50_ms: float
    p99_ms: float
    server_ms: float
    client_ms: float
    load: float


def prepare(server: Server, runs: int) -> tuple[str, list[Run], str]:
    """The ten review keys and the runs, through the API; the project, the runs read back with their
    spans and steps, and the token of a writer of the project."""
    with server.client() as client:
        project = project_id(client)
        writer = client.post("/v1/users", json={"name": "bench-writer", "kind": "user"})
        writer.raise_for_status()
        client.put(
            f"/v1/projects/{project}/members/{writer.json()['id']}", json={"role": "write"}
        ).raise_for_status()
        issued = client.post(f"/v1/users/{writer.json()['id']}/tokens", json={"name": "bench"})
        issued.raise_for_status()
        for definition in KEYS:
            client.post("/v2/human-reviews", json={**definition, "project_id": project}).raise_for_status()
        post_runs(client, project, runs)
        found: list[Run] = []
        cursor: str | None = None
        while len(found) < runs:
            params: dict[str, Any] = {
                "projectId": project,
                "limit": 200,
                **({"cursor": cursor} if cursor else {}),
            }
            page = client.get("/v1/runs", params=params)
            page.raise_for_status()
            body = page.json()
            for listed in body["data"]:
                full = client.get(f"/v1/runs/{listed['id']}").json()
                steps = [step["id"] for step in full["steps"] if step["role"] != "system"]
                found.append(Run(listed["id"], [span["spanId"] for span in full["spans"]], steps))
            cursor = body.get("nextCursor")
            if not cursor:
                break
    return project, found, issued.json()["token"]


def requests_of(kind: str, tree: Tree, count: int, seed: int) -> list[bytes]:
    """The phase's request bytes, made before the clock. Corrections take runs no phase has used."""
    assert tree.server is not None
    assert tree.runs is not None
    target = tree.server.load_target()
    rng = random.Random(seed)
    made: list[bytes] = []
    for number in range(count):
        if kind in ("rm-read", "v3-read"):
            run_id = rng.choice(tree.runs).run_id
            path = f"/api/v1/rm/traces/{run_id}/annotations" if kind == "rm-read" else f"/v3/traces/{run_id}"
            made.append(raw_request(replace(target, token=tree.writer_token), "GET", path, None))
            continue
        if kind in ("healthz", "list", "detail"):
            path = {
                "healthz": "/healthz",
                "list": f"/v1/runs?projectId={tree.project}&limit=50",
                "detail": f"/v1/runs/{rng.choice(tree.runs).run_id}",
            }[kind]
            made.append(raw_request(target, "GET", path, None))
            continue
        if kind == "correction":
            run = tree.runs[tree.next_run % len(tree.runs)]
            tree.next_run += 1
            body: dict[str, Any] = (
                {"answer": "wrong", "shouldSay": rng.choice(SHOULD_SAY), "why": rng.choice(WHY)}
                if rng.random() < 0.7
                else {"answer": "right"}
            )
            made.append(
                raw_request(target, "POST", "/v1/corrections", orjson.dumps({"runId": run.run_id, **body}))
            )
            continue
        run = rng.choice(tree.runs)
        if kind == "rm":
            body = {
                "rating": 1 if number % 2 else -1,
                "comment": EXPLANATION,
                "step_id": rng.choice(run.steps),
            }
            path = f"/api/v1/rm/traces/{run.run_id}/annotations"
        else:
            values = (
                [{"key": "rating", "value": rng.choice(["good", "bad"])}] if kind == "v2" else _values(rng)
            )
            body = {"annotations": values}
            path = f"/v2/traces/{run.run_id}/spans/{rng.choice(run.spans)}/annotation"
        made.append(raw_request(target, "POST", path, orjson.dumps(body)))
    return made


def run_phase(tree: Tree, kind: str, round_number: int, args: argparse.Namespace) -> Phase:
    assert tree.server is not None
    requests = requests_of(kind, tree, args.requests, seed=round_number * 100 + KINDS.index(kind))
    with cpu_spent(tree.server.pid) as spent:
        latencies, seconds = send_all(tree.server.load_target(), requests, args.clients)
    return Phase(
        tree=tree.name,
        kind=kind,
        round_number=round_number,
        per_second=len(requests) / seconds,
        p50_ms=percentile(latencies, 0.50) * 1000,
        p99_ms=percentile(latencies, 0.99) * 1000,
        server_ms=spent.server / len(requests) * 1000,
        client_ms=spent.bench / len(requests) * 1000,
        load=os.getloadavg()[0],
    )


@contextmanager
def servers(trees: Sequence[Tree], args: argparse.Namespace, work: Path) -> Iterator[None]:
    """A fresh store and a server at its defaults per tree, prepared and warm, all running at once."""
    with ExitStack() as stack:
        for number, tree in enumerate(trees):
            store = stack.enter_context(
                fresh_store(args.store, args.postgres_url, database=f"redline_bench_writes_{number}")
            )
            settings = {"PYTHONPATH": str(tree.src)} if tree.src is not None else {}
            tree.server = stack.enter_context(serve(store, work / f"{tree.name}.log", None, settings))
            print(f"{tree.name}: {args.runs:,} runs and ten review keys ...", file=sys.stderr)
            tree.project, tree.runs, tree.writer_token = prepare(tree.server, args.runs)
            for kind in args.kinds:
                send_all(
                    tree.server.load_target(), requests_of(kind, tree, WARM_REQUESTS, seed=0), args.clients
                )
        yield


def report(phases: list[Phase], trees: Sequence[Tree], kinds: Sequence[str]) -> None:
    print(
        f"{'tree':>8} {'kind':>10} {'creates/s':>10} {'p50 ms':>7} {'p99 ms':>7} {'server ms':>10} "
        f"{'client ms':>10} {'target':>7} {'load':>5}"
    )
    for tree in trees:
        for kind in kinds:
            mine = [phase for phase in phases if phase.tree == tree.name and phase.kind == kind]
            if not mine:
                continue
            server = statistics.median(phase.server_ms for phase in mine)
            target = TARGET_MS.get(kind)
            met = "-" if target is None else f"≤ {target:.0f} {'yes' if server <= target else 'NO'}"

            def median(field: str, phases: list[Phase] = mine) -> float:
                return float(statistics.median(getattr(phase, field) for phase in phases))

            print(
                f"{tree.name:>8} {kind:>10} {median('per_second'):10.1f} {median('p50_ms'):7.2f} "
                f"{median('p99_ms'):7.1f} {server:10.3f} {median('client_ms'):10.3f} {met:>7} "
                f"{median('load'):5.2f}"
            )
    if len(trees) == 2:
        this, other = trees
        print(f"\nserver CPU per request, {this.name} over {other.name}, per round (and creates/s):")
        for kind in kinds:
            ratios = []
            for phase in phases:
                if phase.tree == this.name and phase.kind == kind:
                    [theirs] = [
                        p
                        for p in phases
                        if p.tree == other.name and p.kind == kind and p.round_number == phase.round_number
                    ]
                    ratios.append((phase.server_ms / theirs.server_ms, phase.per_second / theirs.per_second))
            cpu = ", ".join(f"{cpu:.2f}" for cpu, _ in ratios)
            rate = ", ".join(f"{rate:.2f}" for _, rate in ratios)
            print(
                f"  {kind:>10}: CPU {cpu} (median {statistics.median(r[0] for r in ratios):.2f}); "
                f"creates/s {rate}"
            )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--against", type=Path, help="another checkout, measured beside this one")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=3000, help="requests per phase")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--runs", type=int, default=2000, help="runs per store (corrections need fresh ones)")
    parser.add_argument(
        "--kinds", default=",".join(KINDS), help=f"a comma-separated subset of {','.join(KINDS)}"
    )
    args = parser.parse_args(argv)
    args.kinds = [kind for kind in args.kinds.split(",") if kind]
    unknown = set(args.kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown kinds: {', '.join(sorted(unknown))}")
    corrections_needed = (args.rounds + 1) * args.requests if "correction" in args.kinds else 0
    if corrections_needed > args.runs:
        parser.error(f"--runs must be at least {corrections_needed:,} for the correction phases")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    trees = [Tree("this", None)]
    if args.against is not None:
        trees.append(Tree("other", (args.against / "src").resolve()))
    phases: list[Phase] = []
    print(f"CPUs {psutil.cpu_count()}, load {os.getloadavg()[0]:.2f} at the start", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="redline-writes-") as folder, servers(trees, args, Path(folder)):
        for round_number in range(args.rounds):
            ordered = trees if round_number % 2 == 0 else list(reversed(trees))
            for kind in args.kinds:
                for tree in ordered:
                    phase = run_phase(tree, kind, round_number, args)
                    phases.append(phase)
                    print(
                        f"round {round_number} {tree.name:>5} {kind:>10}: {phase.per_second:7.1f}/s, "
                        f"server {phase.server_ms:.3f} ms, client {phase.client_ms:.3f} ms, "
                        f"load {phase.load:.2f}",
                        file=sys.stderr,
                    )
    report(phases, trees, args.kinds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
