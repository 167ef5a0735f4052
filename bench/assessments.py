"""Feedback-derived alternatives at volume: how long the LLM assessment of a reward model's traces takes
against an endpoint that answers in a fixed time, one request at a time and several at once.

A stand-in OpenAI-compatible endpoint on 127.0.0.1 answers every request after `--latency-ms` (what a
hosted model's answer takes is seconds; the default 200 ms keeps the run short): an answer with a
user correction offered is `original_worse` with an alternative, anything else `no_preference`. Each
`--traces` trace is a support run of two assistant actions (a lookup call and an answer), every other
one corrected by the user afterwards, so half the answers make a pair. For each `--concurrency`
setting (REDLINE_LLM_CONCURRENCY), a fresh store, the traces and a reward model made with an LLM
configured, then `assessments.assess` (the training job's first part) timed on its own:

- seconds, and requests and traces per second;
- "ideal": requests × latency ÷ concurrency, the time the endpoint alone accounts for;
- Redline's own time per request beyond it: (seconds − ideal) ÷ requests, for one request at a time.

Every run checks the pairs it made (one per corrected trace) and that the assessments are stored in
trace order. `python bench/assessments.py [--store sqlite|postgresql|both] [--traces 400]
[--latency-ms 200] [--concurrency 1,4,8]`.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from sqlalchemy import select

from _server import fresh_store, store_kinds
from redline.adapters.llm import OpenAICompatibleChat
from redline.annotations.models import Annotation
from redline.db import Database, make_engine
from redline.identity import service as identity
from redline.identity import workspaces
from redline.ingest import runs as ingest
from redline.learning import assessments
from redline.learning import service as learning
from redline.learning.models import FeedbackAssessment
from redline.migrations import commands as migrate
from redline.traces.models import Trace
from redline.traces.schemas import RunIn, StepIn

POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
CORRECTION = "No, I asked for a refund, not the delivery date."
_FEEDBACK = re.compile(r"\[user_message · id ([0-9a-f-]{36}) · step \d+\]\n(.*)")


def _answer(prompt: str) -> dict[str, Any]:
    """What the stand-in model says: a cited correction makes a worse original, anything else nothing."""
    offered = _FEEDBACK.search(prompt)
    if offered is None or "(text response)" not in prompt:
        return {"verdict": "no_preference", "rationale": "No feedback says what should have been done."}
    return {
        "verdict": "original_worse",
        "basis": "user_feedback",
        "source_id": offered.group(1),
        "evidence_quote": "I asked for a refund",
        "rationale": "The customer wanted a refund.",
        "alternative": "I've started your refund.",
    }


@contextmanager
def endpoint(latency: float) -> Iterator[tuple[str, list[float]]]:
    """The stand-in endpoint; yields its base URL and a list of how many requests were open at each one."""
    open_now = [0]
    seen: list[float] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            with lock:
                open_now[0] += 1
                seen.append(open_now[0])
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            time.sleep(latency)
            content = json.dumps(_answer(body["messages"][-1]["content"]))
            payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})
            with lock:  # before the answer goes: the client may ask again as soon as it has it
                open_now[0] -= 1
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload.encode())

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


def seeded(url: str, count: int) -> tuple[Database, uuid.UUID, list[uuid.UUID]]:
    """A migrated store with `count` support runs (every other one corrected) and a model of them."""
    engine = make_engine(url)
    migrate.upgrade(engine)
    db = Database(engine)
    with db.write() as session:
        first = workspaces.bootstrap(
            session, workspace_name="bench", project_name="bench", admin_name="bench", admin_token=None
        )
        actor = identity.operator(session)
        runs = []
        for number in range(count):
            steps = [
                StepIn(role="system", content="You are a support agent."),
                StepIn(role="user", content=f"I want a refund for order {number}"),
                StepIn(role="assistant", content="", tool_name="lookup_order", tool_input={"order": number}),
                StepIn(role="tool", content='{"status": "delivered"}'),
                StepIn(role="assistant", content="Your order was delivered on May 3."),
            ]
            if number % 2 == 0:
                steps.append(StepIn(role="user", content=CORRECTION))
            runs.append(
                RunIn(project_id=first.project.id, external_id=f"r{number}", status="completed", steps=steps)
            )
        stored = ingest.record_runs(session, actor, runs)
        trace_ids = [run.id for run in stored]
        model = learning.create(
            session, actor, name="bench", trace_ids=trace_ids, config={}, feedback_llm=True
        )
    return db, model.id, trace_ids


def measure(url: str, args: argparse.Namespace, concurrency: int) -> dict[str, Any]:
    db, model_id, trace_ids = seeded(url, args.traces)
    latency = args.latency_ms / 1000
    with endpoint(latency) as (base_url, seen):
        chat = OpenAICompatibleChat(base_url, "stand-in", concurrency=concurrency)
        started = time.perf_counter()
        figures = assessments.assess(db, model_id, chat, lambda fraction, note: None)
        seconds = time.perf_counter() - started
    with db.read() as session:
        order = session.scalars(
            select(FeedbackAssessment.trace_id).order_by(FeedbackAssessment.position)
        ).all()
        # The order traces are assessed in: as they were stored (one batch here, so by id).
        stored = session.scalars(
            select(Trace.id).where(Trace.id.in_(trace_ids)).order_by(Trace.created_at, Trace.id)
        ).all()
        comments = session.scalar(select(Annotation.id).limit(1))
    db.engine.dispose()
    requests = len(seen)
    expected_order = [trace_id for trace_id in stored for _ in range(2)]
    checks = {
        "pairs": figures["pairs"] == (args.traces + 1) // 2,
        "trace order": list(order) == expected_order,
        "no comments": comments is None,
    }
    ideal = requests * latency / concurrency
    return {
        "concurrency": concurrency,
        "requests": requests,
        "seconds": seconds,
        "requests_per_s": requests / seconds,
        "traces_per_s": args.traces / seconds,
        "ideal_s": ideal,
        "overhead_ms": (seconds - ideal) / requests * 1000,
        "most_open": max(seen, default=0),
        "checks": checks,
    }


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="sqlite")
    parser.add_argument("--postgres-url", default=POSTGRES_URL)
    parser.add_argument("--traces", type=int, default=400, help="traces of the model (two actions each)")
    parser.add_argument("--latency-ms", type=float, default=200.0, help="how long each answer takes")
    parser.add_argument("--concurrency", default="1,4,8", help="REDLINE_LLM_CONCURRENCY settings to run")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    failed = False
    print(
        f"{args.traces} traces, {args.latency_ms:.0f} ms an answer\n"
        "| store | concurrency | requests | seconds | requests/s | traces/s | ideal s | "
        "Redline ms/request | most open | checks |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    )
    for kind in store_kinds(args.store):
        for concurrency in (int(part) for part in args.concurrency.split(",")):
            with fresh_store(kind, args.postgres_url, "redline_bench_assessments") as store:
                row = measure(store.url, args, concurrency)
            bad = [name for name, held in row["checks"].items() if not held]
            failed = failed or bool(bad)
            print(
                f"| {kind} | {concurrency} | {row['requests']} | {row['seconds']:.1f} | "
                f"{row['requests_per_s']:.1f} | {row['traces_per_s']:.1f} | {row['ideal_s']:.1f} | "
                f"{row['overhead_ms']:.1f} | {row['most_open']:.0f} | "
                f"{'MISMATCH ' + ', '.join(bad) if bad else 'ok'} |",
                flush=True,
            )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
