"""The console's pages at volume: big span trees, a 500-step trace, the traces list over 100,000 traces,
the review screen.

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

4. **span trees** (issue 19): an agent run of --big-spans spans and --big-steps steps and one of
   --huge-spans spans and --huge-steps steps (`agent_trace`: an agent root, nested chains and sub-agents
   4 to 8 deep, model calls with their model and tokens, tool calls, a few failed, inputs and outputs of a
   few hundred bytes to 3 KB), each in one POST /v1/runs (the API takes up to 10,000 spans a run), then
   the trace page GET /ui/traces/{id} and the span panel GET /ui/traces/{id}/spans/{span} of the
   deepest spans, cycled, --repeat times each, with the server's CPU per request; then each page in
   headless Chromium (Playwright, /usr/bin/chromium) --loads times: the first contentful paint and the
   time until the tree takes a key (ArrowDown moves its focus), recorded, never a target.

--only-traces runs only step 4 (about 2 minutes for both stores).

The figures are the **server's** time, read from each answer's `Server-Timing: app;dur=` header (the
console sets it on every answer), so the loopback and the bench's own parsing are left out; the note
gives the round trip's p50 and the server process's CPU per request (PostgreSQL's own not counted) beside
it. Targets (the issues', SQLite on this machine): trace page < 300 ms, list < 200 ms, next item < 100 ms,
span panel < 100 ms, at p99 (the span trees' on PostgreSQL too). Exit status 1 if a SQLite target is
missed.

    python bench/console.py                      # both stores (~6 minutes)
    python bench/console.py --store sqlite --traces 20000
    python bench/console.py --only-traces --big-spans 1000 --big-steps 200 --huge-spans 5000
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import httpx
from playwright.sync_api import sync_playwright

from _report import Figure, print_figures, print_table, requests_figure
from _server import (
    BENCH_TOKEN,
    DEFAULT_POSTGRES_URL,
    Server,
    Store,
    cpu_spent,
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
TARGET_SPAN_PANEL_MS = 100.0
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
    # A tool call's step may have no text, nothing to quote.
    steps = [step for step in trace["steps"] if step["role"] != "system" and step["content"]]
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
    store: Store,
    server: Server,
    measure: str,
    target_ms: float,
    count: int,
    request: Callable[[int], list[httpx.Response]],
) -> Figure:
    """`count` calls of `request` (each one press: a page, or a redirect and its page), one at a time,
    after one untimed call: the first render of a template compiles it, once per process. The note has
    the round trip's p50 and the CPU the server's process tree spent per call."""
    request(0)
    spent: list[float] = []
    trips: list[float] = []
    sizes: list[int] = []
    started = time.perf_counter()
    with cpu_spent(server.pid) as cpu:
        for number in range(count):
            began = time.perf_counter()
            answers = request(number)
            trips.append(time.perf_counter() - began)
            for answer in answers:
                if answer.status_code not in (200, 303):
                    raise RuntimeError(
                        f"{answer.request.url} answered {answer.status_code}: {answer.text[:300]}"
                    )
            spent.append(sum(server_ms(answer) for answer in answers) / 1000)
            sizes.append(sum(len(answer.content) for answer in answers))
    seconds = time.perf_counter() - started
    trips.sort()
    figure = requests_figure(
        store.kind,
        measure,
        spent,
        seconds,
        note=f"server time; round trip p50 {trips[len(trips) // 2] * 1000:.1f} ms; server CPU "
        f"{cpu.server / count * 1000:.1f} ms/request; {statistics.median(sizes) / 1024:,.0f} KiB",
    )
    figure.target = f"p99 < {target_ms:.0f} ms"
    figure.met = figure.p99_ms is not None and figure.p99_ms < target_ms
    return figure


# ---------------------------------------------------------------------------------- agent span trees

MODELS = ("gpt-4.1-mini", "gpt-4o", "claude-sonnet-4-5", "claude-haiku-4-5")
SUBAGENTS = ("planner", "researcher", "billing-agent", "shipping-agent")
CHAINS = (
    "handle_request",
    "gather_context",
    "route",
    "plan_step",
    "draft_reply",
    "check_policy",
    "summarise",
)
TREE_STARTED = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
WORDS = (
    "order",
    "refund",
    "tracking",
    "parcel",
    "courier",
    "address",
    "warehouse",
    "late",
    "policy",
    "customer",
)
# The span panel is timed on spans this deep or deeper, cycled through.
DEEP_SPANS = 20


@dataclass
class AgentTrace:
    """A run of an agent as the native API takes it, with its spans' depths and the deepest spans."""

    run: dict[str, Any]
    depths: dict[str, int]

    @property
    def spans(self) -> int:
        return len(self.run["spans"])

    def deep_spans(self, rng: random.Random) -> list[str]:
        """Up to DEEP_SPANS of the deepest spans (the deepest level first, then the one above)."""
        ordered = sorted(self.depths, key=lambda span_id: -self.depths[span_id])
        deepest = self.depths[ordered[0]]
        deep = [span_id for span_id in ordered if self.depths[span_id] >= deepest - 1]
        return sorted(rng.sample(deep, min(DEEP_SPANS, len(deep))), key=lambda s: -self.depths[s])


def agent_trace(name: str, spans: int, steps: int, rng: random.Random) -> AgentTrace:
    """One agent run of `spans` spans and `steps` steps, shaped as an agent's trace is: an agent root,
    then blocks of nested chains and sub-agents 4 to 8 deep ending in model calls (model and token
    counts under the OpenTelemetry GenAI names), tool calls and a few retrievals and guardrails, about
    2% of tool calls failed; inputs and outputs of a few hundred bytes to 3 KB. The steps are the
    conversation the spans made: each model call an assistant step, each tool call a call and its result,
    linked to their spans (`metadata.span_id`, the tool call's id)."""

    def text(length: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(max(1, length // 7)))

    made: list[dict[str, Any]] = []
    depths: dict[str, int] = {}
    clock = [0.0]  # milliseconds since the run started

    def at() -> str:
        return (TREE_STARTED + timedelta(milliseconds=clock[0])).isoformat()

    def add(
        parent: dict[str, Any] | None, kind: str, span_name: str, depth: int, attributes: dict[str, Any]
    ) -> dict[str, Any]:
        span_id = f"{len(made) + 1:016x}"
        span: dict[str, Any] = {
            "spanId": span_id,
            "parentSpanId": parent["spanId"] if parent else None,
            "kind": kind,
            "name": span_name,
            "attributes": attributes,
            "startedAt": at(),
        }
        made.append(span)
        depths[span_id] = depth
        clock[0] += rng.uniform(0.5, 5)
        return span

    def end(span: dict[str, Any], lasted_ms: float = 0.0) -> None:
        clock[0] += lasted_ms + rng.uniform(0.5, 3)
        span["endedAt"] = at()

    def leaf(parent: dict[str, Any], depth: int) -> None:
        roll = rng.random()
        if roll < 0.45:
            model = rng.choice(MODELS)
            attributes: dict[str, Any] = {
                "gen_ai.system": "anthropic" if model.startswith("claude") else "openai",
                "gen_ai.request.model": model,
                "gen_ai.usage.input_tokens": rng.randrange(200, 6000),
                "gen_ai.usage.output_tokens": rng.randrange(20, 800),
                "input": [
                    {
                        "role": "system",
                        "content": "You are a support agent. " + text(rng.randrange(200, 800)),
                    },
                    {"role": "user", "content": text(rng.randrange(100, 1500))},
                ],
                "output": [{"role": "assistant", "content": text(rng.randrange(100, 2000))}],
            }
            failed = rng.random() < 0.005
            if failed:
                attributes.update({"error": True, "status": "error", "error.message": "rate limited (429)"})
            end(add(parent, "llm", f"chat {model}", depth, attributes), rng.uniform(300, 3000))
        elif roll < 0.85:
            tool = rng.choice(TOOLS)
            attributes = {
                "tool.name": tool,
                "tool_call_id": f"call_{len(made) + 1}",
                "input": {"order_id": rng.randrange(10**6), "reason": text(rng.randrange(60, 300))},
                "output": text(rng.randrange(300, 3000)),
            }
            if rng.random() < 0.02:
                attributes.update(
                    {
                        "error": True,
                        "status": "error",
                        "error.message": f"{tool}: upstream timed out after 30 s",
                    }
                )
            end(add(parent, "tool", tool, depth, attributes), rng.uniform(20, 800))
        elif roll < 0.95:
            hits = [
                {"id": f"doc-{rng.randrange(10**5)}", "score": round(rng.random(), 3), "text": text(200)}
                for _ in range(3)
            ]
            attributes = {"input": text(rng.randrange(40, 200)), "output": hits}
            end(add(parent, "retriever", "search_policies", depth, attributes), rng.uniform(50, 300))
        else:
            end(
                add(
                    parent, "guardrail", "pii_check", depth, {"input": text(200), "output": {"passed": True}}
                ),
                5,
            )

    root = add(None, "agent", name, 0, {"input": {"message": text(400)}})
    while len(made) < spans:
        depth = rng.randint(4, 8)  # the leaves' depth
        opened = [root]
        for level in range(1, depth):
            if len(made) >= spans:
                break
            kind = "agent" if level == 2 else "chain"
            span_name = rng.choice(SUBAGENTS) if kind == "agent" else rng.choice(CHAINS)
            attributes = {"input": {"request": text(rng.randrange(100, 300))}} if rng.random() < 0.5 else {}
            opened.append(add(opened[-1], kind, span_name, level, attributes))
        for _ in range(rng.randint(2, 6)):
            if len(made) >= spans or len(opened) < depth:
                break
            leaf(opened[-1], depth)
        # Now and then a few more calls higher up, so siblings sit at different depths.
        if len(opened) > 2 and rng.random() < 0.5:
            level = rng.randrange(1, len(opened) - 1)
            for _ in range(rng.randint(1, 3)):
                if len(made) < spans:
                    leaf(opened[level], level + 1)
        for span in reversed(opened[1:]):
            end(span)
    end(root)
    root["attributes"]["output"] = {"message": text(400)}
    return AgentTrace(
        {
            "externalId": f"bench-{name}-{spans}",
            "agent": name,
            "agentVersion": "3.0.0",
            "status": "completed",
            "input": root["attributes"]["input"],
            "output": root["attributes"]["output"],
            "startedAt": TREE_STARTED.isoformat(),
            "endedAt": root["endedAt"],
            "steps": conversation(made, steps, text),
            "spans": made,
        },
        depths,
    )


def conversation(
    spans: Sequence[dict[str, Any]], count: int, text: Callable[[int], str]
) -> list[dict[str, Any]]:
    """`count` steps made by the spans, in order: a system prompt and the user's message, then an
    assistant step per model call and a call and result per tool call, each linked to its span."""
    made: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a support agent. " + text(400)},
        {"role": "user", "content": text(400)},
    ]
    for span in spans:
        if len(made) >= count - 1:
            break
        attributes = span["attributes"]
        if span["kind"] == "llm":
            made.append(
                {
                    "role": "assistant",
                    "content": attributes["output"][0]["content"][:600],
                    "metadata": {"span_id": span["spanId"]},
                }
            )
        elif span["kind"] == "tool":
            call = attributes["tool_call_id"]
            made.append(
                {
                    "role": "assistant",
                    "content": "",
                    "toolName": span["name"],
                    "toolInput": attributes["input"],
                    "toolCallId": call,
                }
            )
            made.append(
                {
                    "role": "tool",
                    "content": attributes["output"][:800],
                    "toolName": span["name"],
                    "toolCallId": call,
                }
            )
    while len(made) < count:
        made.append({"role": "assistant", "content": text(300)})
    return made[:count]


# ------------------------------------------------------------------------------------------- Chromium

CHROMIUM = "/usr/bin/chromium"
# Polls from the first moment of every page (an init script) until the span tree takes a key: focus its
# first row, send ArrowDown, and the focus (the tree's selection cursor, `span_tree.js`) must have moved
# to the next row. `window.__treeKeyAt` is then the ms since navigation started; -1 on a page with no
# tree. A synthetic keydown reaches the same handler a pressed key does.
KEY_PROBE = """
(() => {
  const poll = () => {
    const tree = document.getElementById("span-tree");
    const first = tree && tree.querySelector(".span-row");
    if (first && first.nextElementSibling) {
      first.focus({ preventScroll: true });
      if (document.activeElement === first) {
        const press = { key: "ArrowDown", bubbles: true, cancelable: true };
        first.dispatchEvent(new KeyboardEvent("keydown", press));
        const now = document.activeElement;
        if (now !== first && now && now.classList.contains("span-row")) {
          window.__treeKeyAt = performance.now();
          return;
        }
      }
    } else if (document.readyState === "complete") {
      window.__treeKeyAt = -1;
      return;
    }
    setTimeout(poll, 4);
  };
  poll();
})();
"""
PAINTED = """() => {
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  const navigation = performance.getEntriesByType("navigation")[0];
  return {
    fcp: paint ? paint.startTime : null,
    key: window.__treeKeyAt,
    load: navigation ? navigation.loadEventEnd : null,
    rows: document.querySelectorAll("#span-tree .span-row").length,
  };
}"""


@dataclass
class Loaded:
    """One load of a trace page in Chromium, in ms from navigation start."""

    fcp: float | None
    key: float
    load: float | None
    rows: int


def browser_figures(
    store: Store, server: Server, pages: Sequence[tuple[str, str]], loads: int
) -> list[Figure]:
    """Each page (a measure's name, its path) loaded `loads` times in headless Chromium after one
    untimed load, signed in through the sign-in form: its first contentful paint and the time until the
    tree takes a key, each as a figure (p50, and p99: the slowest load). Recorded, never a target."""
    figures: list[Figure] = []
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM)
        try:
            context = chromium.new_context(viewport={"width": 1400, "height": 900})
            context.set_default_timeout(120_000)
            context.add_init_script(KEY_PROBE)
            page = context.new_page()
            page.goto(server.base_url + "/ui/sign-in")
            page.fill("#token", BENCH_TOKEN)
            page.click("button[type=submit]")
            page.wait_for_url("**/ui/traces**")
            for measure, path in pages:
                seen: list[Loaded] = []
                started = time.perf_counter()
                for number in range(loads + 1):
                    page.goto(server.base_url + path, wait_until="load")
                    page.wait_for_function("window.__treeKeyAt !== undefined")
                    found = Loaded(**page.evaluate(PAINTED))
                    if found.key < 0:
                        raise RuntimeError(f"{path} showed no span tree in Chromium")
                    if number:
                        seen.append(found)
                seconds = time.perf_counter() - started
                figures += _load_figures(store, measure, seen, seconds)
            context.close()
        finally:
            chromium.close()
    return figures


def _load_figures(store: Store, measure: str, seen: list[Loaded], seconds: float) -> list[Figure]:
    loads = [one.load for one in seen if one.load is not None]
    rows = seen[0].rows
    made = []
    for what, values in (
        ("first contentful paint", [one.fcp for one in seen if one.fcp is not None]),
        ("tree takes a key", [one.key for one in seen]),
    ):
        if not values:
            made.append(Figure(store.kind, f"{measure}: {what}", 0, seconds, None, note="not reported"))
            continue
        figure = requests_figure(
            store.kind,
            f"{measure}: {what}",
            [value / 1000 for value in values],
            seconds,
            note=f"Chromium headless, {rows:,} rows, ms from navigation start (p99: slowest of "
            f"{len(values)}); load event p50 {statistics.median(loads):.0f} ms"
            if loads
            else "",
        )
        figure.rate = None
        figure.target = "recorded"
        made.append(figure)
    return made


def bench_trees(store: Store, server: Server, args: argparse.Namespace) -> list[Figure]:
    """The trace page and the deep spans' panels of the two agent runs, then both pages in Chromium."""
    log = sys.stderr
    rng = random.Random(19)
    made = [
        agent_trace("support-agent", args.big_spans, args.big_steps, rng),
        agent_trace("research-agent", args.huge_spans, args.huge_steps, rng),
    ]
    figures: list[Figure] = []
    pages: list[tuple[str, str]] = []
    with server.client() as api:
        project = project_id(api)
        for tree in made:
            print(f"{store.kind}: an agent run of {tree.spans:,} spans ...", file=log)
            answer = api.post("/v1/runs", json={**tree.run, "projectId": project})
            if answer.status_code != 201:
                raise RuntimeError(f"POST /v1/runs answered {answer.status_code}: {answer.text[:500]}")
            trace_id = answer.json()["id"]
            annotate_long_run(api, trace_id, args.tree_annotations, rng)
            pages.append((_tree_name(tree), f"/ui/traces/{trace_id}"))
    browser = signed_in(server)
    try:
        for tree, (name, path) in zip(made, pages, strict=True):
            figures.append(
                timed(
                    store, server, f"trace page, {name}", TARGET_TRACE_PAGE_MS, args.repeat,
                    lambda _, path=path: [browser.get(path)],  # type: ignore[misc]
                )
            )  # fmt: skip
            deep = tree.deep_spans(rng)
            depth = min(tree.depths[span_id] for span_id in deep)
            figures.append(
                timed(
                    store, server, f"span panel, {name}, depth {depth}+", TARGET_SPAN_PANEL_MS, args.repeat,
                    lambda number, path=path, deep=deep: [  # type: ignore[misc]
                        browser.get(f"{path}/spans/{deep[number % len(deep)]}")
                    ],
                )
            )  # fmt: skip
    finally:
        browser.close()
    if args.loads:
        print(f"{store.kind}: Chromium, {args.loads} loads of each page ...", file=log)
        figures += browser_figures(store, server, pages, args.loads)
    return figures


def _tree_name(tree: AgentTrace) -> str:
    return f"{tree.spans:,} spans, {len(tree.run['steps']):,} steps"


def bench_store(store: Store, args: argparse.Namespace, work: Path) -> list[Figure]:
    log = sys.stderr
    rng = random.Random(3)
    if args.only_traces:
        with serve(store, work / f"serve-{store.kind}.log") as server:
            return bench_trees(store, server, args)
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
                        server,
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
                            server,
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
                        server,
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
                        server,
                        f"review screen, next item, {len(items):,} items",
                        TARGET_NEXT_ITEM_MS,
                        args.presses,
                        press_j,
                    )
                )
            finally:
                browser.close()
            return figures + bench_trees(store, server, args)
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
    parser.add_argument("--big-spans", type=int, default=1_000, help="spans of the first agent run")
    parser.add_argument("--big-steps", type=int, default=200, help="steps of the first agent run")
    parser.add_argument("--huge-spans", type=int, default=5_000, help="spans of the second agent run")
    parser.add_argument("--huge-steps", type=int, default=200, help="steps of the second agent run")
    parser.add_argument(
        "--tree-annotations", type=int, default=20, help="ratings and comments on each agent run's steps"
    )
    parser.add_argument(
        "--loads", type=int, default=5, help="Chromium loads of each agent run's page (0: none)"
    )
    parser.add_argument(
        "--only-traces", action="store_true", help="only the agent runs' pages, not the 100,000-run part"
    )
    parser.add_argument(
        "--postgres-url", default=DEFAULT_POSTGRES_URL, help="admin URL; the bench db is made there"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    sizes = (args.traces, args.steps, args.repeat, args.presses, args.big_spans, args.huge_spans)
    if min(sizes) < 1 or min(args.annotations, args.tree_annotations, args.loads) < 0:
        parser.error("counts must be at least 1")
    if min(args.big_steps, args.huge_steps) < 2:
        parser.error("an agent run has at least 2 steps (a system prompt and the user's message)")
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
