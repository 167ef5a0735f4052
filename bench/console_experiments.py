"""The console's experiments pages at volume: the list, the review screen's next and previous, and the
comparison, over two experiments of 10,000 results each, SQLite and PostgreSQL.

For each store (--store sqlite|postgresql|both) a fresh, migrated store and, in this process, the real app
over it (Starlette's TestClient), seeded as `experiments.py` seeds it: a dataset of --results (10,000)
datapoints and experiments A and B of it, each result bringing its run inline (two steps, one model span)
and two evaluator results (boolean `exact`, about 70% true; number `score`). Then a human review,
`rating` (good or bad), given in A to its first --reviewed (1,000) results, one request each, as the
review screen saves them. Then, signed in (POST /ui/sign-in, as a browser does), each page --repeat (50)
times, one request at a time:

- **the list**: GET /ui/experiments newest first, of the dataset, and sorted by a figure (exact's average,
  rating's share of good: a figure of every listed experiment, computed by the store);
- **the review screen**: one press of J (or K) from a random result of A: GET
  /ui/experiments/{a}/review?result=<id>&go=next, which answers 303 to the next result's address, then
  that page (the two together are one press); and J with *Only unreviewed* from A's first result, which
  walks past the 1,000 reviewed ones, and with *Only where an evaluator failed*;
- **the comparison**: GET /ui/experiments/{a}/compare?with={b} by exact (its summary over all 10,000
  datapoints with a page of 20), three quarters down (`after=`), and by rating's share of good.

The figures are the **server's** time, read from each answer's `Server-Timing: app;dur=` header; the note
gives this process's CPU per request (the app's and the test client's: they share the process) and the
page's size. **Target: p99 < 200 ms** for every measure. Exit status 1 if a SQLite target is missed.

    python bench/console_experiments.py                   # both stores, about 6 minutes
    python bench/console_experiments.py --store sqlite --results 2000 --repeat 20
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable

from starlette.testclient import TestClient

from _report import Figure, requests_figure
from console import server_ms
from experiments import ADMIN_TOKEN, Bench, run_benches, two_experiments

BENCH_DATABASE = "redline_bench_console_experiments"
TARGET_MS = 200.0
RATING = {"key": "rating", "display_name": "Rating", "type": "categorical", "options": ["good", "bad"]}


def _result_ids(bench: Bench, experiment_id: str) -> list[str]:
    """The experiment's result ids in datapoint order, 200 a page."""
    found: list[str] = []
    after: str | None = None
    while True:
        params = {"limit": 200, **({"starting_after": after} if after else {})}
        page = bench.call("GET", f"/v2/experiments/{experiment_id}/results", params=params)
        found += [result["_id"] for result in page["data"]]
        if not page["has_more"]:
            return found
        after = found[-1]


def _review(bench: Bench, experiment_id: str, result_ids: list[str], rng: random.Random) -> None:
    """A rating on each result, one request each, as the review screen's save makes them."""
    for result_id in result_ids:
        value = "good" if rng.random() < 0.6 else "bad"
        body = {"annotations": [{"key": "rating", "value": value}]}
        bench.call("POST", f"/v2/experiments/{experiment_id}/results/{result_id}/annotations", json=body)


Press = Callable[[int], list[str]]


def _timed(client: TestClient, store: str, measure: str, repeat: int, paths: Press) -> Figure:
    """`repeat` presses, each the addresses `paths(n)` gives followed one after another (a 303 counts
    with the page it leads to), after one untimed press: a template compiles on its first render."""

    def press(number: int) -> tuple[float, int]:
        spent, size = 0.0, 0
        for path in paths(number):
            answer = client.get(path, follow_redirects=False)
            if answer.status_code not in (200, 303):
                raise RuntimeError(f"{path} answered {answer.status_code}: {answer.text[:300]}")
            spent += server_ms(answer) / 1000
            size += len(answer.content)
            if answer.status_code == 303:
                answer = client.get(answer.headers["location"], follow_redirects=False)
                spent += server_ms(answer) / 1000
                size += len(answer.content)
        return spent, size

    press(0)
    spent: list[float] = []
    sizes: list[int] = []
    started = time.perf_counter()
    cpu_started = time.process_time()
    for number in range(repeat):
        seconds, size = press(number)
        spent.append(seconds)
        sizes.append(size)
    cpu = (time.process_time() - cpu_started) / repeat
    figure = requests_figure(
        store,
        measure,
        spent,
        time.perf_counter() - started,
        note=f"server time; process CPU {cpu * 1000:.1f} ms/press; "
        f"{statistics.median(sizes) / 1024:,.0f} KiB",
    )
    figure.target = f"p99 < {TARGET_MS:g} ms"
    figure.met = figure.p99_ms is not None and figure.p99_ms < TARGET_MS
    return figure


def measure_pages(
    bench: Bench,
    store: str,
    experiments: tuple[str, str, str],
    results: list[str],
    points: list[str],
    reviewed: int,
    repeat: int,
) -> list[Figure]:
    """Each page `repeat` times; `experiments` are A, B and their dataset."""
    a, b, dataset_id = experiments
    client = bench.app
    signed = client.post(
        "/ui/sign-in", data={"token": ADMIN_TOKEN, "next": "/ui/traces"}, follow_redirects=False
    )
    if signed.status_code != 303:
        raise RuntimeError(f"signing in answered {signed.status_code}: {signed.text[:300]}")
    rng = random.Random(3)
    picks = [rng.randrange(1, len(results) - 1) for _ in range(repeat + 1)]
    review = f"/ui/experiments/{a}/review"
    compare = f"/ui/experiments/{a}/compare?with={b}"
    deep = points[len(points) * 3 // 4]
    cases: list[tuple[str, Press]] = [
        ("list, newest first", lambda _: ["/ui/experiments"]),
        ("list, of the dataset", lambda _: [f"/ui/experiments?dataset={dataset_id}"]),
        ("list, sorted by exact's average", lambda _: ["/ui/experiments?sort=-eval:exact"]),
        ("list, sorted by rating's share of good", lambda _: ["/ui/experiments?sort=-share:rating%3Dgood"]),
        ("review screen, J (next)", lambda n: [f"{review}?result={results[picks[n]]}&go=next"]),
        ("review screen, K (previous)", lambda n: [f"{review}?result={results[picks[n]]}&go=previous"]),
        (
            f"review screen, J, only unreviewed, past {reviewed:,}",
            lambda _: [f"{review}?result={results[0]}&go=next&unreviewed=1"],
        ),
        (
            "review screen, J, only where an evaluator failed",
            lambda n: [f"{review}?result={results[picks[n]]}&go=next&failed=1"],
        ),
        ("comparison by exact, page 1 (20)", lambda _: [compare]),
        ("comparison by exact, 3/4 down", lambda _: [f"{compare}&after={deep}"]),
        ("comparison by rating's share of good", lambda _: [f"{compare}&by=key:rating%3Dgood"]),
    ]
    return [_timed(client, store, measure, repeat, paths) for measure, paths in cases]


def bench_store(kind: str, args: argparse.Namespace) -> list[Figure]:
    with two_experiments(kind, args, BENCH_DATABASE) as seeded:
        bench = seeded.bench
        bench.call("POST", "/v2/human-reviews", json=RATING)
        results = _result_ids(bench, seeded.a)
        print(f"{kind}: {args.reviewed:,} results of A reviewed ...", file=sys.stderr)
        _review(bench, seeded.a, results[: args.reviewed], random.Random(4))
        figures = measure_pages(
            bench,
            kind,
            (seeded.a, seeded.b, seeded.dataset_id),
            results,
            seeded.points,
            args.reviewed,
            args.repeat,
        )
        for figure in figures:
            figure.note = f"{args.results:,} results in A and B, {args.reviewed:,} reviewed; {figure.note}"
        return figures


def _more(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reviewed", type=int, default=1_000)


if __name__ == "__main__":
    raise SystemExit(run_benches(__doc__, bench_store, _more))
