"""The console's pages at volume: a 500-step trace, the traces list over 100,000 traces, the review screen.

For each store (--store sqlite|postgresql|both) a fresh store and one real `redline serve` on it
(`_server.py`), then:

1. --traces small runs (a question and an answer, `reviews.py`'s `make_run`) through POST /v1/runs/batch,
   and one run of --steps steps (a system prompt, then user, assistant, tool call and tool result in
   turn, with ~400 characters each), with --annotations ratings, comments and quoted comments on its
   steps through the rm surface;
2. a queue of all the small runs as items, seeded straight into `queue_items` (`reviews.py`'s
   `seed_queue`, a third of them reviewed);
3. a console session (POST /ui/sign-in with the bench token, as a browser does), then, one request at a
   time on one keep-alive connection:
   - **trace page**: GET /ui/traces/{id} of the long run, --repeat times;
   - **traces list**: GET /ui/traces — the first page, oldest first, most steps first, filtered by
     status, and the second page through the first page's `rel="next"` link;
   - **review next**: GET /ui/queues/{id}/review?item=<random>&go=next, which answers 303 to the next
     item's address, then that page: the two together are one press of J.

The figures are the **server's** time, read from each answer's `Server-Timing: app;dur=` header (the
console sets it on every answer), so the loopback and the bench's own parsing are left out; the note
gives the round trip's p50 beside it. Targets (the issue's, SQLite on this machine): trace page < 300 ms,
list < 200 ms, next item < 100 ms, at p99. Exit status 1 if a SQLite target is missed.

    python bench/console.py                      # both stores (~6 minutes)
    python bench/console.py --store sqlite --traces 20000
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import httpx

from _report import Figure, print_figures, print_table, requests_figure
from _server import (
    BENCH_TOKEN,
    DEFAULT_POSTGRES_URL,
    Server,
    Store,
    fresh_store,
    project_id,
    serve,
    store_kinds,
)
from redline.db import Database, make_engine
from reviews import _queue, make_run, post_batches, seed_queue

CONSOLE_DATABASE = "redline_bench_console"
TARGET_TRACE_PAGE_MS = 300.0
TARGET_LIST_MS = 200.0
TARGET_NEXT_ITEM_MS = 100.0
LIST_VARIANTS = {
    "traces list, first page": "",
    "traces list, oldest first": "?sort=started",
    "traces list, most steps first": "?sort=-steps",
    "traces list, status failed": "?status=failed",
}
NEXT_LINK = re.compile(r'<a href="([^"]+)" rel="next"')
TOOLS = ("lookup_order", "issue_refund", "get_tracking", "update_address")


def long_run(steps: int, rng: random.Random) -> dict[str, Any]:
    """One run of `steps` steps: a system prompt, then turns of user, assistant, tool call, tool result."""
    words = ["order", "refund", "tracking", "parcel", "courier", "address", "warehouse", "late"]

    def text(length: int) -> str:
        return " ".join(rng.choice(words) for _ in range(length // 7))

    made: list[dict[str, Any]] = [{"role": "system", "content": "You are a support agent. " + text(400)}]
    while len(made) < steps:
        turn = len(made) % 4
        if turn == 1:
            made.append({"role": "user", "content": text(400)})
        elif turn == 2:
            step: dict[str, Any] = {"role": "assistant", "content": text(200), "toolName": rng.choice(TOOLS)}
            step["toolInput"] = {"order_id": rng.randrange(10**6), "reason": text(60)}
            step["toolCallId"] = f"call_{len(made)}"
            made.append(step)
        elif turn == 3:
            asked = made[-1]
            made.append(
                {
                    "role": "tool",
                    "content": text(400),
                    "toolName": asked["toolName"],
                    "toolCallId": asked["toolCallId"],
                }
            )
        else:
            made.append({"role": "assistant", "content": text(400)})
    return {
        "externalId": "bench-long-run",
        "agent": "support-agent",
        "agentVersion": "2.0.0",
        "status": "completed",
        "input": {"message": made[1]["content"]},
        "output": {"message": made[-1]["content"]},
        "steps": made[:steps],
    }


def annotate_long_run(client: httpx.Client, trace_id: str, count: int, rng: random.Random) -> None:
    """Ratings, comments and quoted comments on the long run's steps, through the rm surface."""
    trace = client.get(f"/api/v1/rm/traces/{trace_id}").json()
    steps = [step for step in trace["steps"] if step["role"] != "system"]
    for number in range(count):
        step = rng.choice(steps)
        body: dict[str, Any] = {"step_id": step["id"]}
        if number % 3 == 0:
            body["rating"] = rng.choice([1, -1])
        if number % 3 != 0 or number % 2:
            body["comment"] = f"Note {number}: check this against the policy."
        if number % 5 == 0:
            start = rng.randrange(max(1, len(step["content"]) - 40))
            body["quote"] = {"text": step["content"][start : start + 30], "prefix": "", "suffix": ""}
            body.setdefault("comment", "This part.")
        answer = client.post(f"/api/v1/rm/traces/{trace_id}/annotations", json=body)
        if answer.status_code != 200:
            raise RuntimeError(f"annotating answered {answer.status_code}: {answer.text[:300]}")


def signed_in(server: Server) -> httpx.Client:
    """A browser-like client holding a console session (the cookie), no bearer token."""
    client = httpx.Client(base_url=server.base_url, timeout=120)
    answer = client.post("/ui/sign-in", data={"token": BENCH_TOKEN, "next": "/ui/traces"})
    if answer.status_code != 303 or "redline_console" not in client.cookies:
        raise RuntimeError(f"signing in answered {answer.status_code}: {answer.text[:300]}")
    return client


class Answer(Protocol):
    """An answer of httpx or of Starlette's TestClient: all `server_ms` reads."""

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def status_code(self) -> int: ...


def server_ms(answer: Answer) -> float:
    """The server's own time for the answer, from the `Server-Timing: app;dur=` header the console sets."""
    timing = answer.headers.get("server-timing", "")
    if not timing.startswith("app;dur="):
        raise RuntimeError(f"an answer came without Server-Timing: {answer.status_code}")
    return float(timing.removeprefix("app;dur="))


def timed(
    store: Store, measure: str, target_ms: float, count: int, request: Callable[[int], list[httpx.Response]]
) -> Figure:
    """`count` calls of `request` (each one press: a page, or a redirect and its page), one at a time,
    after one untimed call: the first render of a template compiles it, once per process."""
    request(0)
    spent: list[float] = []
    trips: list[float] = []
    started = time.perf_counter()
    for number in range(count):
        began = time.perf_counter()
        answers = request(number)
        trips.append(time.perf_counter() - began)
        for answer in answers:
            if answer.status_code not in (200, 303):
                raise RuntimeError(f"{answer.request.url} answered {answer.status_code}: {answer.text[:300]}")
        spent.append(sum(server_ms(answer) for answer in answers) / 1000)
    seconds = time.perf_counter() - started
    trips.sort()
    figure = requests_figure(
        store.kind,
        measure,
        spent,
        seconds,
        note=f"server time; round trip p50 {trips[len(trips) // 2] * 1000:.1f} ms",
    )
    figure.target = f"p99 < {target_ms:.0f} ms"
    figure.met = figure.p99_ms is not None and figure.p99_ms < target_ms
    return figure


def bench_store(store: Store, args: argparse.Namespace, work: Path) -> list[Figure]:
    log = sys.stderr
    rng = random.Random(3)
    db = Database(make_engine(store.url))
    try:
        with serve(store, work / f"serve-{store.kind}.log") as server:
            with server.client() as api:
                project = project_id(api)
                print(f"{store.kind}: {args.traces:,} runs ...", file=log)
                runs = [make_run(n, rng, with_spans=False, metadata={}) for n in range(args.traces)]
                trace_ids = post_batches(api, project, runs, 1_000)
                print(
                    f"{store.kind}: a run of {args.steps} steps, {args.annotations} annotations ...", file=log
                )
                (long_id,) = post_batches(api, project, [long_run(args.steps, rng)], 1)
                annotate_long_run(api, long_id, args.annotations, rng)
                queue_id = _queue(api, "Everything", project)
            print(f"{store.kind}: a queue of {len(trace_ids):,} items ...", file=log)
            items = [item for item, _ in seed_queue(db, queue_id, trace_ids, rng)]
            figures: list[Figure] = []
            browser = signed_in(server)
            try:
                figures.append(
                    timed(
                        store,
                        f"trace page, {args.steps} steps",
                        TARGET_TRACE_PAGE_MS,
                        args.repeat,
                        lambda _: [browser.get(f"/ui/traces/{long_id}")],
                    )
                )
                for measure, query in LIST_VARIANTS.items():
                    figures.append(
                        timed(
                            store,
                            f"{measure}, {args.traces:,} traces",
                            TARGET_LIST_MS,
                            args.repeat,
                            lambda _, query=query: [browser.get(f"/ui/traces{query}")],  # type: ignore[misc]
                        )
                    )
                found = NEXT_LINK.search(browser.get("/ui/traces").text)
                if found is None:
                    raise RuntimeError("the traces list has no rel=next link")
                second = found.group(1).replace("&amp;", "&")
                figures.append(
                    timed(
                        store,
                        f"traces list, second page, {args.traces:,} traces",
                        TARGET_LIST_MS,
                        args.repeat,
                        lambda _: [browser.get(second)],
                    )
                )
                chosen = [rng.choice(items) for _ in range(args.presses)]

                def press_j(number: int) -> list[httpx.Response]:
                    hop = browser.get(f"/ui/queues/{queue_id}/review?item={chosen[number]}&go=next")
                    return [hop, browser.get(hop.headers["location"])] if hop.status_code == 303 else [hop]

                figures.append(
                    timed(
                        store,
                        f"review screen, next item, {len(items):,} items",
                        TARGET_NEXT_ITEM_MS,
                        args.presses,
                        press_j,
                    )
                )
            finally:
                browser.close()
            return figures
    finally:
        db.dispose()


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--traces", type=int, default=100_000, help="small runs in the list and the queue")
    parser.add_argument("--steps", type=int, default=500, help="steps of the long run")
    parser.add_argument("--annotations", type=int, default=200, help="annotations on the long run")
    parser.add_argument("--repeat", type=int, default=30, help="requests per page measure")
    parser.add_argument("--presses", type=int, default=200, help="next-item presses on the review screen")
    parser.add_argument(
        "--postgres-url", default=DEFAULT_POSTGRES_URL, help="admin URL; the bench db is made there"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if min(args.traces, args.steps, args.repeat, args.presses) < 1 or args.annotations < 0:
        parser.error("counts must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as folder:
        for kind in store_kinds(args.store):
            with fresh_store(kind, args.postgres_url, CONSOLE_DATABASE) as store:
                found = bench_store(store, args, Path(folder))
            figures.extend(found)
            print_table(found, file=sys.stderr, memory=False)
    print_figures(figures, args.json, memory=False)
    return 1 if any(f.store == "sqlite" and f.met is False for f in figures) else 0


if __name__ == "__main__":
    raise SystemExit(main())
