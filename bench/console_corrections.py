"""The console's Corrections section at volume: each page's server time over 1,000,000 corrections and
100,000 queued runs.

For each store (--store sqlite|postgresql|both) a fresh, migrated store and, in this process, the real
app over it (Starlette's TestClient: the figures are the server's, read from each answer's
`Server-Timing` header), seeded as `queues.py` seeds it:

1. 50 expert-queue rules (`queues.py`'s mix of agents, versions, samples, caps and groups) and one more,
   "Everything", that takes every run, so each of the --runs completed runs (100,000) is queued;
2. --corrections corrections (1,000,000) straight into the table, a fifth of them wrong and left to
   nobody yet, the developer, the owner or Improve, and the results' tallies recounted from them;
3. a console session (POST /ui/sign-in, as a browser does), then each page --repeat times, one request
   at a time: To review (the default view, everyone's, one rule's, sorted), To fix, Who corrects,
   Rules, and Trends over all time and the last 30 days.

Target (the issue's): every page < 300 ms at p99. Exit status 1 if one is missed.

    python bench/console_corrections.py                    # both stores, the issue's sizes
    python bench/console_corrections.py --store sqlite --runs 20000 --corrections 100000
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import uuid

from sqlalchemy import text

from _report import Figure, exit_status, print_figures, requests_figure
from _server import DEFAULT_POSTGRES_URL, fresh_store, store_kinds
from console import server_ms
from queues import ADMIN_TOKEN, BATCH, Bench, _groups, _make_rules, _record, _run, seed_corrections
from redline.queues.expert import rules as expert_rules

BENCH_DATABASE = "redline_bench_console_corrections"
TARGET_PAGE_MS = 300.0


def _everything_rule(bench: Bench) -> uuid.UUID:
    with bench.db.write() as session:
        made = expert_rules.create_rule(
            session, bench.actor(session), bench.project_id, {"name": "Everything", "when": {}, "sample": 1}
        )
    return made.rule.rule_id


def pages(project: uuid.UUID, rule: uuid.UUID) -> dict[str, str]:
    """The measures and the addresses they read."""
    base = f"/ui/corrections?project={project}&tab="
    return {
        "To review, waiting, for me": f"{base}to-review",
        "To review, everyone's": f"{base}to-review&whose=everyone",
        "To review, one rule": f"{base}to-review&whose=everyone&rule={rule}",
        "To review, newest queued first": f"{base}to-review&whose=everyone&sort=-queued",
        "To fix": f"{base}to-fix",
        "Who corrects": f"{base}who-corrects",
        "Rules": f"{base}rules",
        "Trends, all time": f"{base}trends",
        "Trends, last 30 days": f"{base}trends&period=30d",
    }


def measure_pages(bench: Bench, store: str, rule: uuid.UUID, repeat: int) -> list[Figure]:
    signed = bench.app.post(
        "/ui/sign-in", data={"token": ADMIN_TOKEN, "next": "/ui/traces"}, follow_redirects=False
    )
    if signed.status_code != 303:
        raise RuntimeError(f"signing in answered {signed.status_code}: {signed.text[:300]}")
    figures = []
    for measure, path in pages(bench.project_id, rule).items():
        # One untimed read first: a template compiles on its first render, once per process.
        bench.app.get(path)
        spent: list[float] = []
        started = time.perf_counter()
        for _ in range(repeat):
            answer = bench.app.get(path)
            if answer.status_code != 200:
                raise RuntimeError(f"{path} answered {answer.status_code}: {answer.text[:300]}")
            spent.append(server_ms(answer) / 1000)
        figure = requests_figure(store, measure, spent, time.perf_counter() - started, note="server time")
        figure.target = f"p99 < {TARGET_PAGE_MS:g} ms"
        figure.met = figure.p99_ms is not None and figure.p99_ms < TARGET_PAGE_MS
        figures.append(figure)
    return figures


def bench_store(kind: str, args: argparse.Namespace) -> list[Figure]:
    log = sys.stderr
    with fresh_store(kind, args.postgres_url, BENCH_DATABASE) as store:
        bench = Bench(store.url)
        try:
            rng = random.Random(0)
            _record(bench, [_run(bench.project_id, -n - 1, rng) for n in range(2)])
            groups = _groups(bench)
            _make_rules(bench, args.rules, groups)
            everything = _everything_rule(bench)
            print(f"{kind}: {args.runs:,} runs ...", file=log)
            for start in range(0, args.runs, BATCH):
                batch = range(start, min(start + BATCH, args.runs))
                _record(bench, [_run(bench.project_id, number, rng) for number in batch])
            print(f"{kind}: {args.corrections:,} corrections ...", file=log)
            seed_corrections(bench, args.corrections, groups)
            if kind == "postgresql":
                # As autovacuum would have by now: the planner's statistics cover the seeded rows.
                with bench.db.engine.connect() as connection:
                    connection.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE"))
            figures = measure_pages(bench, kind, everything, args.repeat)
            for figure in figures:
                figure.note = f"{args.runs:,} queued runs, {args.corrections:,} corrections; server time"
            return figures
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
    parser.add_argument("--corrections", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = [figure for kind in store_kinds(args.store) for figure in bench_store(kind, args)]
    print_figures(figures, args.json, memory=False)
    return exit_status(figures)


if __name__ == "__main__":
    raise SystemExit(main())
