"""Experiments at volume: recording 10,000 results in batches, then the list, a results page and the
comparison of two 10,000-result experiments, SQLite and PostgreSQL.

For each store (--store sqlite|postgresql|both) this makes a fresh, migrated store and, in this process
(the figures are the app's and the store's, not a network's), through the real app (Starlette's
TestClient) as a harness would call it:

1. a dataset of --results datapoints (10,000), added 1,000 a request;
2. experiment A: --results results recorded with POST /v2/experiments/{id}/results, --batch (1,000) a
   request, each bringing its run inline (a user step, the answer, one model span with its token counts
   and cost) and two evaluator results (a boolean `exact`, a number `score`): results per second and
   each batch's p50/p99;
3. experiment B the same, with other outputs and scores, for the comparison;
4. each read --repeat (50) times: the experiments list of the dataset, a results page (50) at the start
   and three quarters down, the experiment with its summary, and the comparison of A with B by `exact`
   (its summary over every datapoint with a page of 50) at the start and three quarters down. **Target:
   p99 < 200 ms for the list, a results page and the comparison.**

    python bench/experiments.py                          # both stores, about 5 minutes
    python bench/experiments.py --store sqlite --results 2000 --repeat 20
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from starlette.testclient import TestClient

from _report import Figure, exit_status, latency_ms, print_figures, requests_figure
from _server import DEFAULT_POSTGRES_URL, fresh_store, store_kinds
from redline.app import create_app
from redline.cli.context import tune_gc_for_bulk_work
from redline.config import Settings
from redline.db import Database, make_engine
from redline.identity import workspaces
from redline.migrations import commands as migrate

BENCH_DATABASE = "redline_bench_experiments"
ADMIN_TOKEN = "rl_bench-experiments-admin-token"
TARGET_READ_MS = 200.0
PAGE = 50
# Bodies the server takes for a batch of 1,000 results with their runs: about 1.3 MB.
MAX_BODY_BYTES = 64 * 1024 * 1024


class Bench:
    """One store under test: its database and the app over it, as the admin."""

    def __init__(self, url: str) -> None:
        self.db = Database(make_engine(url))
        migrate.upgrade(self.db.engine)
        with self.db.write() as session:
            workspaces.bootstrap(
                session,
                workspace_name="bench",
                project_name="bench",
                admin_name="admin",
                admin_token=ADMIN_TOKEN,
            )
        settings = Settings(database_url=url, max_body_bytes=MAX_BODY_BYTES)
        self.app = TestClient(create_app(settings, self.db))
        self.headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        # This process stands in for `redline serve`, which collects garbage this way.
        tune_gc_for_bulk_work()

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        answer = self.app.request(method, path, headers=self.headers, **kwargs)
        assert answer.status_code in (200, 204), answer.text
        return answer.json() if answer.status_code == 200 else None


def _dataset(bench: Bench, count: int) -> tuple[str, list[str]]:
    dataset = bench.call("POST", "/v2/datasets", json={"display_name": "bench"})
    points: list[str] = []
    for start in range(0, count, 1000):
        items = [
            {"inputs": {"question": f"q{n}"}, "expected_output": f"a{n}"}
            for n in range(start, min(count, start + 1000))
        ]
        made = bench.call("POST", f"/v2/datasets/{dataset['_id']}/datapoints/bulk", json={"items": items})
        points += [point["_id"] for point in made]
    return dataset["_id"], points


def _result(point: str, number: int, rng: random.Random) -> dict[str, Any]:
    right = rng.random() < 0.7
    answer = f"a{number}" if right else f"wrong {number}"
    span = {
        "span_id": "llm",
        "kind": "chat_completion",
        "name": "answer",
        "attributes": {
            "model": "gpt-4o-mini",
            "usage": {"prompt_tokens": rng.randrange(50, 400), "completion_tokens": rng.randrange(5, 80)},
            "cost": round(rng.uniform(0.0001, 0.002), 6),
        },
    }
    return {
        "datapoint_id": point,
        "run": {
            "output": answer,
            "started_at": "2026-12-06T10:00:00Z",
            "ended_at": f"2026-12-06T10:00:0{rng.randrange(1, 9)}Z",
            "steps": [{"role": "user", "content": f"q{number}"}, {"role": "assistant", "content": answer}],
            "spans": [span],
        },
        "evaluations": [
            {"evaluator": "exact", "output_type": "boolean", "value": right},
            {"evaluator": "score", "output_type": "number", "value": round(rng.random(), 3)},
        ],
    }


def record(
    bench: Bench, store: str, name: str, dataset_id: str, points: list[str], batch: int, seed: int
) -> tuple[str, Figure]:
    experiment = bench.call(
        "POST",
        "/v2/experiments",
        json={"display_name": name, "dataset_id": dataset_id, "agent": "bench", "version": name},
    )
    rng = random.Random(seed)
    latencies = []
    started = time.perf_counter()
    for start in range(0, len(points), batch):
        body = {
            "results": [
                _result(point, start + n, rng) for n, point in enumerate(points[start : start + batch])
            ]
        }
        begun = time.perf_counter()
        bench.call("POST", f"/v2/experiments/{experiment['_id']}/results", json=body)
        latencies.append(time.perf_counter() - begun)
    seconds = time.perf_counter() - started
    p50, p99 = latency_ms(latencies)
    figure = Figure(
        store=store,
        measure=f"record {name}: batches of {batch:,}",
        count=len(points),
        seconds=round(seconds, 2),
        rate=round(len(points) / seconds, 1),
        p50_ms=p50,
        p99_ms=p99,
        note="results/s; p50/p99 per batch; each result brings its run (2 steps, 1 span) and 2 evaluators",
    )
    return experiment["_id"], figure


def measure_reads(bench: Bench, store: str, a: str, b: str, dataset_id: str, repeat: int) -> list[Figure]:
    results = f"/v2/experiments/{a}/results"
    deep_result = bench.call("GET", results, params={"limit": 1, "starting_after": _nth(bench, a)})["data"][
        0
    ]["_id"]
    deep_point = bench.call("GET", f"{results}/{deep_result}")["datapoint_id"]
    compare = f"/v2/experiments/{a}/compare/{b}"
    cases: list[tuple[str, str, dict[str, Any], bool]] = [
        ("list of the dataset's experiments", "/v2/experiments", {"dataset_id": dataset_id}, True),
        ("results page 1 (50)", results, {"limit": PAGE}, True),
        ("results page 3/4 down (50)", results, {"limit": PAGE, "starting_after": deep_result}, True),
        ("comparison: summary + page 1 (50)", compare, {"evaluator": "exact", "limit": PAGE}, True),
        (
            "comparison: summary + page 3/4 down",
            compare,
            {"evaluator": "exact", "limit": PAGE, "starting_after": deep_point},
            True,
        ),
        ("experiment with its summary", f"/v2/experiments/{a}", {}, False),
    ]
    figures = []
    for measure, path, params, targeted in cases:
        bench.call("GET", path, params=params)  # once untimed: the pages the recording left cold
        latencies = []
        started = time.perf_counter()
        for _ in range(repeat):
            begun = time.perf_counter()
            bench.call("GET", path, params=params)
            latencies.append(time.perf_counter() - begun)
        figure = requests_figure(store, measure, latencies, time.perf_counter() - started)
        if targeted:
            figure.target = f"< {TARGET_READ_MS:g} ms"
            figure.met = (figure.p99_ms or 0) < TARGET_READ_MS
        figures.append(figure)
    return figures


def _nth(bench: Bench, experiment_id: str) -> str:
    """The id of the result three quarters down the experiment's results: where a deep page starts."""
    path = f"/v2/experiments/{experiment_id}/results"
    count = bench.call("GET", f"/v2/experiments/{experiment_id}")["results_count"]
    after: str | None = None
    seen = 0
    while seen + 200 < count * 3 // 4:
        page = bench.call("GET", path, params={"limit": 200, **({"starting_after": after} if after else {})})
        after = page["data"][-1]["_id"]
        seen += 200
    assert after is not None, "the experiment has more than 200 results"
    return after


@dataclass(frozen=True)
class Seeded:
    """A store seeded for the experiments' benches: the app over it, the dataset and its datapoints, and
    experiments A and B of it with the figures of their recording."""

    bench: Bench
    dataset_id: str
    points: list[str]
    a: str
    b: str
    recorded: list[Figure]


@contextmanager
def two_experiments(kind: str, args: argparse.Namespace, database: str) -> Iterator[Seeded]:
    """A fresh store of `kind` with a dataset of `args.results` datapoints and experiments A and B of it,
    recorded `args.batch` results a request; the store is gone afterwards."""
    with fresh_store(kind, args.postgres_url, database) as store:
        bench = Bench(store.url)
        try:
            print(f"{kind}: a dataset and two experiments of {args.results:,} results ...", file=sys.stderr)
            dataset_id, points = _dataset(bench, args.results)
            a, recorded_a = record(bench, kind, "A", dataset_id, points, args.batch, seed=1)
            b, recorded_b = record(bench, kind, "B", dataset_id, points, args.batch, seed=2)
            yield Seeded(bench, dataset_id, points, a, b, [recorded_a, recorded_b])
        finally:
            bench.app.close()
            bench.db.dispose()


def run_benches(
    doc: str | None,
    bench_store: Callable[[str, argparse.Namespace], list[Figure]],
    more: Callable[[argparse.ArgumentParser], None] = lambda _: None,
) -> int:
    """An experiments bench's command line: the stores, the sizes (`more` adds its own), each store's
    figures printed as soon as it is done (a run over both takes minutes), and the exit status."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--postgres-url", default=DEFAULT_POSTGRES_URL)
    parser.add_argument("--results", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    more(parser)
    args = parser.parse_args()
    figures = []
    for kind in store_kinds(args.store):
        done = bench_store(kind, args)
        print_figures(done, args.json, memory=False)
        figures += done
    return exit_status(figures)


def bench_store(kind: str, args: argparse.Namespace) -> list[Figure]:
    with two_experiments(kind, args, BENCH_DATABASE) as seeded:
        reads = measure_reads(seeded.bench, kind, seeded.a, seeded.b, seeded.dataset_id, args.repeat)
        note = f"{args.results:,} results each in A and B"
        for figure in reads:
            figure.note = note
        return [*seeded.recorded, *reads]


if __name__ == "__main__":
    raise SystemExit(run_benches(__doc__, bench_store))
