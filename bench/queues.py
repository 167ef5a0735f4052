"""Queue rules at volume: what evaluating 50 rules adds to each completed run, a catch-up over 1,000 runs,
and a rule's results and the Trends page over 1,000,000 corrections.

For each store (--store sqlite|postgresql|both) this makes a fresh, migrated store and, in this process
(the figures are the services' and the app's, not a network's):

1. makes 50 expert-queue rules on one project through the rule service (`queues/expert_rules.py`): on
   one agent or the other or both, some on versions or `pinned`, samples from 1% to 20%, ten with a
   `maxOpen`, ten wanting a corrector group;
2. records --runs completed runs (100,000 by default, two steps each) through the ingest service in
   batches of 1,000, as POST /v1/runs/batch does, timing the queue-rule engine inside each batch
   (`arrivals.queue_runs`, wrapped with a clock): the per-run cost of a batch;
3. records --single runs one per transaction, as POST /v1/runs does: the engine's cost per run, p50/p99;
4. catches a new rule up on the project's last 1,000 runs (`queue-recent`), --repeat times on new rules;
5. seeds --corrections corrections (1,000,000) on the queued runs straight into the table with
   `redline.db.bulk_insert` (posting a million over HTTP would take hours and measure nothing else),
   recounts the tallies from them with `stats/rebuild.py` (timed: the repair path), then reads
   GET …/queue-rules/{id}/results and GET …/trends through the real app (Starlette's TestClient, no
   network) --repeat times each. Both carry the agreement between corrector groups as the job worker
   stored it (`stats/group_agreement_served.py`): each measure's first reads ask for it, the
   `group-agreement` jobs run (timed: what the worker spends), and every timed read is served the stored
   figures. The agreement is also timed alone through its service (`stats/group_agreement.py`), for a
   rule and for every rule at once (what trends' job computes).

    python bench/queues.py                              # both stores, the issue's sizes
    python bench/queues.py --store sqlite --runs 20000 --corrections 100000
"""

from __future__ import annotations

import argparse
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, cast

from sqlalchemy import Table, select
from sqlalchemy.orm import Session
from starlette.testclient import TestClient

from _report import Figure, exit_status, latency_ms, print_figures, requests_figure
from _server import DEFAULT_POSTGRES_URL, fresh_store, store_kinds
from redline.app import create_app
from redline.cli.context import tune_gc_for_bulk_work
from redline.config import Settings
from redline.corrections import tallies as correction_tallies
from redline.corrections.models import Correction, CorrectionTally
from redline.db import Database, bulk_insert, make_engine, utcnow
from redline.groups.models import CorrectorGroup
from redline.identity import service as identity
from redline.identity import workspaces
from redline.identity.models import Principal
from redline.ingest import runs as ingest
from redline.jobs.worker import JobWorker
from redline.migrations import commands as migrate
from redline.queues import arrivals
from redline.queues.expert import rules as expert_rules
from redline.queues.models import ExpertItem
from redline.stats import rebuild
from redline.stats.group_agreement import rule_agreements
from redline.stats.group_agreement_job import COMPUTING_GROUP_AGREEMENT
from redline.traces.models import Agent
from redline.traces.schemas import RunIn

BENCH_DATABASE = "redline_bench_queues"
ADMIN_TOKEN = "rl_bench-queues-admin-token"
AGENTS = ("support-agent", "billing-agent")
VERSIONS = ("1.0.0", "1.1.0", "1.2.0")
BATCH = 1000
SEED_CHUNK = 20_000

TARGET_EVALUATION_MS = 2.0
TARGET_READ_MS = 200.0


# ------------------------------------------------------------------------------------------- the store


class Bench:
    """One store under test: its database, the admin acting, the project, and the app over it."""

    def __init__(self, url: str) -> None:
        self.db = Database(make_engine(url))
        migrate.upgrade(self.db.engine)
        with self.db.write() as session:
            first = workspaces.bootstrap(
                session,
                workspace_name="bench",
                project_name="bench",
                admin_name="admin",
                admin_token=ADMIN_TOKEN,
            )
            self.project_id = first.project.id
            self.workspace_id = first.workspace.id
            self.admin_id = first.admin.id
        self.app = TestClient(create_app(Settings(database_url=url), self.db))
        self.headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        # This process stands in for `redline serve`, which collects garbage this way.
        tune_gc_for_bulk_work()

    def actor(self, session: Any) -> identity.Actor:
        return identity.Actor.of(session.get_one(Principal, self.admin_id))


def _run(project_id: uuid.UUID, number: int, rng: random.Random) -> RunIn:
    started = utcnow() - timedelta(seconds=number)
    return RunIn.model_validate(
        {
            "projectId": str(project_id),
            "agent": AGENTS[0] if rng.random() < 0.6 else AGENTS[1],
            "agentVersion": rng.choice(VERSIONS),
            "status": "completed",
            "input": {"message": f"question {number}"},
            "output": {"answer": f"answer {number}"},
            "startedAt": started.isoformat(),
            "endedAt": (started + timedelta(seconds=3)).isoformat(),
            "steps": [
                {"role": "user", "content": f"question {number}"},
                {"role": "assistant", "content": f"answer {number}"},
            ],
        }
    )


def _record(bench: Bench, runs: Sequence[RunIn]) -> None:
    with bench.db.write() as session:
        ingest.record_runs(session, bench.actor(session), runs)


def _groups(bench: Bench) -> list[uuid.UUID]:
    with bench.db.write() as session:
        made = [
            CorrectorGroup(
                id=uuid.uuid4(),
                workspace_id=bench.workspace_id,
                scope_kind="project",
                project_id=bench.project_id,
                scope_key=str(bench.project_id),
                name=name,
                live_name=name,
                weight=weight,
                assertable_by={"principalKinds": ["user"]} if name == "expert" else None,
                created_at=utcnow(),
                updated_at=utcnow(),
            )
            for name, weight in (("expert", 3.0), ("bot", 1.0))
        ]
        session.add_all(made)
    return [group.id for group in made]


def _rule_fields(number: int, agent_ids: Sequence[str], groups: Sequence[uuid.UUID]) -> dict[str, Any]:
    rng = random.Random(number)
    when: dict[str, Any] = {}
    if number % 5 != 4:
        when["agentIds"] = [agent_ids[number % 2]] if number % 5 < 3 else list(agent_ids)
    if number % 4 == 1:
        when["versions"] = rng.sample(VERSIONS, 2)
    fields: dict[str, Any] = {
        "name": f"rule {number}",
        "when": when,
        "sample": round(rng.uniform(0.01, 0.2), 3),
    }
    if number % 5 == 0:
        fields["max_open"] = rng.randrange(50, 500)
    if number % 5 == 2:
        fields["corrector_group_id"] = groups[number % 2]
    return fields


def _make_rules(bench: Bench, count: int, groups: Sequence[uuid.UUID]) -> list[uuid.UUID]:
    with bench.db.write() as session:
        agent_ids = [str(a) for a in session.scalars(select(Agent.id).order_by(Agent.name))]
        actor = bench.actor(session)
        return [
            expert_rules.create_rule(
                session, actor, bench.project_id, _rule_fields(number, agent_ids, groups)
            ).rule.rule_id
            for number in range(count)
        ]


# ------------------------------------------------------------------------------------------ measuring


@contextmanager
def engine_clock() -> Iterator[list[float]]:
    """Seconds spent in the queue-rule engine, one entry per call, while the block runs."""
    spent: list[float] = []
    original: Callable[..., int] = arrivals.queue_runs

    def timed(session: Session, *args: Any, **kwargs: Any) -> int:
        # What ingest wrote through the session so far is its own work, not the engine's.
        session.flush()
        started = time.perf_counter()
        try:
            return original(session, *args, **kwargs)
        finally:
            spent.append(time.perf_counter() - started)

    arrivals.queue_runs = timed
    try:
        yield spent
    finally:
        arrivals.queue_runs = original


def _per_run_figure(store: str, measure: str, per_run: list[float], seconds: float, note: str) -> Figure:
    p50, p99 = latency_ms(per_run)
    return Figure(
        store=store,
        measure=measure,
        count=len(per_run),
        seconds=round(seconds, 2),
        rate=round(len(per_run) / seconds, 1) if seconds else None,
        p50_ms=p50,
        p99_ms=p99,
        target=f"< {TARGET_EVALUATION_MS:g} ms/run",
        met=p99 < TARGET_EVALUATION_MS,
        note=note,
    )


def measure_batches(bench: Bench, store: str, runs: int) -> Figure:
    rng = random.Random(1)
    started = time.perf_counter()
    with engine_clock() as spent:
        for start in range(0, runs, BATCH):
            _record(bench, [_run(bench.project_id, n, rng) for n in range(start, min(start + BATCH, runs))])
    wall = time.perf_counter() - started
    per_run = [seconds / BATCH for seconds in spent]
    note = f"per run of a {BATCH:,}-run batch; {sum(spent):.1f} s of {wall:.1f} s recording"
    return _per_run_figure(store, "rules at ingest (batch)", per_run, wall, note)


def measure_single(bench: Bench, store: str, count: int) -> Figure:
    rng = random.Random(2)
    started = time.perf_counter()
    with engine_clock() as spent:
        for number in range(count):
            _record(bench, [_run(bench.project_id, 10_000_000 + number, rng)])
    return _per_run_figure(
        store, "rules at ingest (one run)", spent, time.perf_counter() - started, "POST /v1/runs-sized"
    )


def measure_queue_recent(bench: Bench, store: str, repeat: int) -> Figure:
    latencies = []
    started = time.perf_counter()
    for number in range(repeat):
        with bench.db.write() as session:
            actor = bench.actor(session)
            fields = {"name": f"catch-up {number}", "when": {}, "sample": 0.5}
            rule_id = expert_rules.create_rule(session, actor, bench.project_id, fields).rule.rule_id
        begun = time.perf_counter()
        with bench.db.write() as session:
            expert_rules.queue_recent(
                session, bench.actor(session), bench.project_id, rule_id, last=1000, since=None
            )
        latencies.append(time.perf_counter() - begun)
    return requests_figure(store, "queue-recent, last 1,000", latencies, time.perf_counter() - started)


# Who fixes a wrong answer, chosen at random for each: the four parts of the console's To fix page.
FIXERS = (None, "developer", "owner", "improve")


def seed_corrections(bench: Bench, count: int, groups: Sequence[uuid.UUID]) -> float:
    """Corrections spread over the queued runs, a third each with no group, the expert or the bot group;
    one in five finds something wrong, and is left to nobody yet, the developer, the owner or Improve.
    Returns the seconds the recount of the tallies took."""
    rng = random.Random(3)
    with bench.db.read() as session:
        queued = list(
            session.execute(select(ExpertItem.run_id, ExpertItem.agent_id, ExpertItem.agent_version))
        )
    now = utcnow()
    table = cast(Table, Correction.__table__)
    # The live corrections by status, as the service keeps them on every save (the counts and the
    # console's To fix read these).
    counted: Counter[tuple[str, str]] = Counter()
    for start in range(0, count, SEED_CHUNK):
        rows = []
        for _ in range(min(SEED_CHUNK, count - start)):
            run_id, agent_id, version = rng.choice(queued)
            right = rng.random() < 0.8
            fixer = None if right else rng.choice(FIXERS)
            status = "fixed" if right else ("with-owner" if fixer == "owner" else "open")
            counted[(correction_tallies.scope_key(bench.project_id), status)] += 1
            counted[(correction_tallies.scope_key(bench.project_id, agent_id), status)] += 1
            rows.append(
                {
                    "id": uuid.uuid4(),
                    "workspace_id": bench.workspace_id,
                    "project_id": bench.project_id,
                    "run_id": run_id,
                    "agent_id": agent_id,
                    "flow_id": None,
                    "agent_version": version,
                    "answer": "right" if right else "wrong",
                    "why": None if right else "Not what was asked.",
                    "corrector_group_id": rng.choice([None, *groups]),
                    "expert": False,
                    "marked_right": right,
                    "made_by_kind": "user",
                    "made_by_id": bench.admin_id,
                    "status": status,
                    "sorted_to": fixer,
                    "sorted": None if fixer is None else {"by": {"kind": "rule"}, "at": now.isoformat()},
                    "run_captured_at": now,
                    "created_at": now,
                }
            )
        with bench.db.write() as session:
            bulk_insert(session, table, rows)
    with bench.db.write() as session:
        tally_rows = [
            {"scope_key": key, "status": status, "count": n} for (key, status), n in counted.items()
        ]
        bulk_insert(session, cast(Table, CorrectionTally.__table__), tally_rows)
    started = time.perf_counter()
    with bench.db.write() as session:
        rebuild.rebuild(session, rebuild.tallied_rules(session))
    return time.perf_counter() - started


def measure_reads(bench: Bench, store: str, rule_ids: Sequence[uuid.UUID], repeat: int) -> list[Figure]:
    project = f"/v1/projects/{bench.project_id}"
    figures = []
    for measure, paths in (
        ("results of a rule", [f"{project}/queue-rules/{rule_id}/results" for rule_id in rule_ids[:5]]),
        ("trends, all time", [f"{project}/trends?period=all"]),
        ("trends, 30 days", [f"{project}/trends?period=30d"]),
    ):
        # Untimed reads first: they ask the job worker for the agreement, and read cold pages once.
        for path in paths:
            assert bench.app.get(path, headers=bench.headers).status_code == 200
        figures.append(run_agreement_jobs(bench, store, measure))
        latencies = []
        started = time.perf_counter()
        for number in range(repeat):
            begun = time.perf_counter()
            answer = bench.app.get(paths[number % len(paths)], headers=bench.headers)
            latencies.append(time.perf_counter() - begun)
            assert answer.status_code == 200, answer.text
            served = answer.json()
            states = {rule["agreement"]["state"] for rule in served.get("rules", [served])}
            assert states <= {"stored"}, f"agreement {states}: the job's figures were not served"
        figure = requests_figure(store, measure, latencies, time.perf_counter() - started)
        figure.target = f"< {TARGET_READ_MS:g} ms"
        figure.met = (figure.p99_ms or 0) < TARGET_READ_MS
        figures.append(figure)
    return figures


def run_agreement_jobs(bench: Bench, store: str, measure: str) -> Figure:
    """The `group-agreement` jobs the first reads of a measure asked for, run as the worker runs them."""
    worker = JobWorker(bench.db, [COMPUTING_GROUP_AGREEMENT])
    latencies = []
    started = time.perf_counter()
    while True:
        begun = time.perf_counter()
        if not worker.run_once():
            break
        latencies.append(time.perf_counter() - begun)
    assert latencies, f"{measure}: no group-agreement job was asked for"
    return requests_figure(store, f"group-agreement job, {measure}", latencies, time.perf_counter() - started)


def measure_agreement(bench: Bench, store: str, rule_ids: Sequence[uuid.UUID], repeat: int) -> list[Figure]:
    """The agreement between corrector groups alone, as results (one rule) and trends (every rule) ask
    for it, over all time: one grouped statement and numpy over its rows."""
    figures = []
    for measure, asked in (
        ("agreement between groups, a rule", [[rule_id] for rule_id in rule_ids[:5]]),
        (f"agreement between groups, {len(rule_ids)} rules", [list(rule_ids)]),
    ):
        with bench.db.read() as session:
            said = rule_agreements(session, asked[0])[asked[0][0]]
        latencies = []
        started = time.perf_counter()
        for number in range(repeat):
            begun = time.perf_counter()
            with bench.db.read() as session:
                rule_agreements(session, asked[number % len(asked)])
            latencies.append(time.perf_counter() - begun)
        figure = requests_figure(store, measure, latencies, time.perf_counter() - started)
        figure.target = f"< {TARGET_READ_MS:g} ms"
        figure.met = (figure.p99_ms or 0) < TARGET_READ_MS
        figure.note = f"the first rule's: {said.runs:,} runs, {said.verdicts:,} verdicts"
        figures.append(figure)
    return figures


def bench_store(kind: str, args: argparse.Namespace) -> list[Figure]:
    with fresh_store(kind, args.postgres_url, BENCH_DATABASE) as store:
        bench = Bench(store.url)
        try:
            rng = random.Random(0)
            _record(bench, [_run(bench.project_id, -n - 1, rng) for n in range(2)])
            groups = _groups(bench)
            rule_ids = _make_rules(bench, args.rules, groups)
            figures = [measure_batches(bench, kind, args.runs), measure_single(bench, kind, args.single)]
            figures.append(measure_queue_recent(bench, kind, args.repeat))
            recount = seed_corrections(bench, args.corrections, groups)
            reads = measure_reads(bench, kind, rule_ids, args.repeat)
            for figure in reads:
                figure.note = f"{args.corrections:,} corrections; recounting the tallies took {recount:.1f} s"
            return [*figures, *reads, *measure_agreement(bench, kind, rule_ids, args.repeat)]
        finally:
            bench.app.close()
            bench.db.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--rules", type=int, default=50)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--single", type=int, default=2_000, help="runs recorded one per transaction")
    parser.add_argument("--corrections", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = [figure for kind in store_kinds(args.store) for figure in bench_store(kind, args)]
    print_figures(figures, args.json, memory=False)
    return exit_status(figures)


if __name__ == "__main__":
    raise SystemExit(main())
