"""The traces list's action bar at volume: "all N matching the filter" into an annotation queue and into
a dataset, and the list page that counts N.

For each store (--store sqlite|postgresql|both) this makes a fresh, migrated store and, in this process
(the figures are the services' and the app's, not a network's):

1. records --runs completed runs (20,000 by default, two steps each) through the ingest service in
   batches of 1,000, as POST /v1/runs/batch does (not timed);
2. signs in to the console (POST /ui/sign-in, as a browser does) and reads GET /ui/traces?status=completed
   --repeat times: the list with its action bar, which counts what the filter matches when it is more
   than a page;
3. posts the bar once with `scope=matching` into an empty queue, once more into the same queue (every
   trace already there), and once into an empty dataset (a datapoint per trace), each timed, with the
   peak of Python's own allocations during the post (tracemalloc): what "never held whole" means;
4. checks by SQL that the queue holds --runs items and the dataset --runs datapoints (`ok`, or a
   MISMATCH note and exit status 1).

    python bench/console_actions.py                          # both stores, 20,000 traces
    python bench/console_actions.py --store sqlite --runs 5000
"""

from __future__ import annotations

import argparse
import re
import time
import tracemalloc
import uuid
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from typing import Any

from sqlalchemy import func, select
from starlette.testclient import TestClient

from _report import Figure, exit_status, print_figures, requests_figure
from _server import DEFAULT_POSTGRES_URL, fresh_store, store_kinds
from redline.app import create_app
from redline.cli.context import tune_gc_for_bulk_work
from redline.config import Settings
from redline.datasets import service as datasets
from redline.datasets.models import Datapoint
from redline.datasets.schemas import DatasetIn
from redline.db import Database, make_engine, utcnow
from redline.identity import service as identity
from redline.identity import workspaces
from redline.identity.models import Principal
from redline.ingest import runs as ingest
from redline.migrations import commands as migrate
from redline.queues.annotation import service as queues
from redline.queues.annotation.schemas import QueueIn
from redline.queues.models import QueueItem
from redline.traces.schemas import RunIn

BENCH_DATABASE = "redline_bench_console_actions"
ADMIN_TOKEN = "rl_bench-console-actions-token"
BATCH = 1000


def _runs(project_id: uuid.UUID, start: int, count: int) -> list[RunIn]:
    now = utcnow()
    return [
        RunIn.model_validate(
            {
                "projectId": str(project_id),
                "agent": "support-agent",
                "status": "completed",
                "input": {"message": f"question {number}"},
                "startedAt": (now - timedelta(seconds=number)).isoformat(),
                "steps": [
                    {"role": "user", "content": f"question {number}"},
                    {"role": "assistant", "content": f"answer {number}"},
                ],
            }
        )
        for number in range(start, start + count)
    ]


def _timed_post(post: Callable[[], Any]) -> tuple[float, float, Any]:
    """Seconds, peak MiB of Python allocations, and the answer of one post."""
    tracemalloc.start()
    started = time.perf_counter()
    answer = post()
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, peak / 2**20, answer


def measure(kind: str, url: str, runs: int, repeat: int) -> list[Figure]:
    db = Database(make_engine(url))
    migrate.upgrade(db.engine)
    with db.write() as session:
        first = workspaces.bootstrap(
            session, workspace_name="bench", project_name="bench", admin_name="admin", admin_token=ADMIN_TOKEN
        )
        project_id, admin_id = first.project.id, first.admin.id
    for start in range(0, runs, BATCH):
        with db.write() as session:
            actor = identity.Actor.of(session.get_one(Principal, admin_id))
            ingest.record_runs(session, actor, _runs(project_id, start, min(BATCH, runs - start)))
    with db.write() as session:
        actor = identity.Actor.of(session.get_one(Principal, admin_id))
        queue_in = QueueIn(display_name="Bench queue", description="", project_id=str(project_id))
        queue_id = queues.create_queue(session, actor, queue_in).queue.id
        dataset_id = datasets.create_dataset(
            session, actor, DatasetIn(display_name="Bench dataset")
        ).dataset.id
    tune_gc_for_bulk_work()
    figures: list[Figure] = []
    with TestClient(create_app(Settings(database_url=url), db), follow_redirects=False) as client:
        client.post("/ui/sign-in", data={"token": ADMIN_TOKEN, "next": "/ui/traces"})
        view = "status=completed"
        page = client.get(f"/ui/traces?{view}")
        found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
        assert found, page.text[:500]
        csrf = found.group(1)
        expected = f"All {runs:,} traces matching the filter"
        assert expected in page.text, "the bar counts the filter's traces"
        latencies = []
        started = time.perf_counter()
        for _ in range(repeat):
            one = time.perf_counter()
            client.get(f"/ui/traces?{view}")
            latencies.append(time.perf_counter() - one)
        figures.append(
            requests_figure(kind, "GET /ui/traces (bar counts N)", latencies, time.perf_counter() - started)
        )
        for measure_name, target in (
            ("all matching → queue", f"queue:{queue_id}"),
            ("again: all already there", f"queue:{queue_id}"),
            ("all matching → dataset", f"dataset:{dataset_id}"),
        ):
            form = {"csrf": csrf, "view": view, "target": target, "scope": "matching"}
            seconds, peak_mib, answer = _timed_post(partial(client.post, "/ui/traces/add", data=form))
            said = answer.headers.get("location", answer.text[:200])
            figures.append(
                Figure(
                    store=kind,
                    measure=measure_name,
                    count=runs,
                    seconds=round(seconds, 2),
                    rate=round(runs / seconds, 1),
                    note=f"python peak {peak_mib:.1f} MiB; {said.split('&done=')[-1]}",
                )
            )
    with db.read() as session:
        items = session.scalar(
            select(func.count()).select_from(QueueItem).where(QueueItem.queue_id == queue_id)
        )
        points = session.scalar(
            select(func.count()).select_from(Datapoint).where(Datapoint.dataset_id == dataset_id)
        )
    check = "ok" if items == runs and points == runs else f"MISMATCH: {items} items, {points} datapoints"
    figures[-1].note += f"; {check}"
    db.dispose()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    figures: list[Figure] = []
    for kind in store_kinds(options.store):
        with fresh_store(kind, options.postgres_url, BENCH_DATABASE) as store:
            figures += measure(kind, store.url, options.runs, options.repeat)
    print_figures(figures, options.json, memory=False)
    raise SystemExit(exit_status(figures))


if __name__ == "__main__":
    main()
