"""Ingest throughput: the batch API and `redline import`, on SQLite and on PostgreSQL.

Each path runs against a fresh store and a real `redline` process, so the figures include what a
deployment pays (HTTP, JSON, validation, the inserts, the commit); generating and serialising the runs
happen before any clock starts. Runs come from random.Random(0), so two invocations post the same bytes.
After the batch API has stored them, the same server is sent them again by external id twice: as they
were (`api resend`: every step kept as it is) and with one assistant step of each run reworded (`api
edited`: the step kept, its words changed, so the quotes on it would be looked for again; none are).

    python bench/ingest.py                        # 10,000 runs x 20 steps, both stores, both paths
    python bench/ingest.py --runs 2000 --store sqlite --json
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
from sqlalchemy import create_engine, text

from _server import (
    DEFAULT_POSTGRES_URL,
    REDLINE,
    PeakRss,
    Store,
    cpu_spent,
    fresh_store,
    percentile,
    project_id,
    redline_env,
    serve,
)

STEP_CONTENT_BYTES = 500

# ----------------------------------------------------------------------------------------- the runs

CUSTOMER_OPENINGS = [
    "Hi, I ordered a pair of running shoes last week and the tracking page has not moved in four days.",
    "Hello, I was charged twice for my subscription this month and I only have one account with you.",
    "My package arrived but the blender inside is cracked along the base and leaks when I use it.",
    "I want to return the jacket I bought, it is a size too small and the exchange page gives an error.",
    "Can you tell me why my refund from the cancelled order still has not shown up on my card?",
    "The discount code from your newsletter says it is expired but the email says it is valid all month.",
]
CUSTOMER_FOLLOW_UPS = [
    "Thanks. Is there any way to speed that up? I need it before the weekend for a trip.",
    "Okay, but I already tried that twice and it did not work, the page just reloads.",
    "That order number is right. The address should be the one on Maple Street, not the old one.",
    "Could you send me a confirmation email as well so I have it in writing?",
    "Fine, go ahead with the refund to the original payment method please.",
    "I would rather have a replacement than store credit if that is possible.",
]
AGENT_SENTENCES = [
    "I am sorry about the trouble with your order, let me take a look at what happened.",
    "I can see the order in our system and it was handed to the carrier on Tuesday morning.",
    "Our policy allows returns within thirty days of delivery as long as the item is unused.",
    "I have checked the payment records and there are indeed two charges on the same day.",
    "The carrier reports a delay at the regional sorting facility, which usually clears in two days.",
    "I have opened a ticket with our warehouse team and flagged it as urgent.",
    "You will receive an email with a prepaid return label within the next hour.",
    "The duplicate charge has been reversed; banks usually show the credit within five business days.",
    "I have applied the discount manually to your account so it will work at checkout.",
    "Is there anything else on this order that I can help you with today?",
    "For your security I can only share the last four digits of the card on file.",
    "A replacement unit has been reserved and will ship as soon as the return is scanned.",
]
SYSTEM_PROMPT = (
    "You are Ada, the customer support agent for Northwind Outfitters. Be brief, warm and precise. "
    "Look orders up before answering questions about them; never guess tracking or refund status. "
    "Refunds over 200 dollars need a supervisor. Do not reveal full card numbers or internal notes."
)
AGENT_VERSIONS = ["2026.11.1", "2026.11.2", "2026.11.3"]
STARTED = datetime(2026, 11, 1, tzinfo=UTC)


def tool_call(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """A tool the agent calls and its arguments: order look-ups, tracking, refunds, the knowledge base."""
    order = f"NW-{rng.randrange(100000, 999999)}"
    tool = rng.choice(["lookup_order", "get_tracking", "issue_refund", "search_kb", "create_return_label"])
    if tool == "get_tracking":
        return tool, {"trackingNumber": f"1Z{rng.randrange(10**9, 10**10)}", "carrier": "UPS"}
    if tool == "issue_refund":
        reason = rng.choice(["damaged", "duplicate_charge", "late_delivery", "return"])
        return tool, {"orderId": order, "amount": round(rng.uniform(5, 180), 2), "reason": reason}
    if tool == "search_kb":
        return tool, {"query": rng.choice(["return policy", "refund timing", "discount codes"])}
    return tool, {"orderId": order}


def fill_text(rng: random.Random, opening: str, pool: list[str], size: int = STEP_CONTENT_BYTES) -> str:
    """About `size` bytes of text: steps of a real support chat are paragraphs, not one-liners."""
    parts = [opening] if opening else []
    length = len(opening)
    while length < size:
        sentence = rng.choice(pool)
        if parts and sentence == parts[-1]:
            continue
        parts.append(sentence)
        length += len(sentence) + 1
    return " ".join(parts)[:size]


def tool_result(rng: random.Random, tool: str, arguments: dict[str, Any]) -> str:
    """A tool's JSON answer padded with the kind of notes real back-office APIs return."""
    result = {
        "tool": tool,
        "ok": rng.random() > 0.05,
        "input": arguments,
        "status": rng.choice(["shipped", "in_transit", "delivered", "refunded", "pending"]),
        "updatedAt": (STARTED + timedelta(minutes=rng.randrange(60_000))).isoformat(),
    }
    head = orjson.dumps(result).decode()
    notes = fill_text(rng, "", AGENT_SENTENCES, STEP_CONTENT_BYTES - len(head) - 12)
    return orjson.dumps({**result, "notes": notes}).decode()


def _steps(rng: random.Random, count: int) -> list[dict[str, Any]]:
    """System, customer, then agent turns with a tool call (and its result) every few steps."""
    steps: list[dict[str, Any]] = [
        {"role": "system", "content": fill_text(rng, SYSTEM_PROMPT, AGENT_SENTENCES)}
    ]
    if count > 1:
        steps.append(
            {"role": "user", "content": fill_text(rng, rng.choice(CUSTOMER_OPENINGS), CUSTOMER_FOLLOW_UPS)}
        )
    while len(steps) < count:
        if len(steps) + 2 <= count and rng.random() < 0.4:
            tool, arguments = tool_call(rng)
            call_id = f"call_{rng.getrandbits(64):016x}"
            steps.append(
                {
                    "role": "assistant",
                    "content": fill_text(rng, "Let me check that for you.", AGENT_SENTENCES),
                    "toolName": tool,
                    "toolInput": arguments,
                    "toolCallId": call_id,
                }
            )
            steps.append(
                {"role": "tool", "content": tool_result(rng, tool, arguments), "toolCallId": call_id}
            )
        elif steps[-1]["role"] == "assistant":
            steps.append(
                {
                    "role": "user",
                    "content": fill_text(rng, rng.choice(CUSTOMER_FOLLOW_UPS), CUSTOMER_FOLLOW_UPS),
                }
            )
        else:
            steps.append(
                {"role": "assistant", "content": fill_text(rng, rng.choice(AGENT_SENTENCES), AGENT_SENTENCES)}
            )
    return steps[:count]


def make_runs(count: int, steps_per_run: int) -> list[dict[str, Any]]:
    """The bench's runs without a projectId (each store has its own); same seed, same runs."""
    rng = random.Random(0)
    runs = []
    for number in range(count):
        steps = _steps(rng, steps_per_run)
        started = STARTED + timedelta(seconds=37 * number)
        runs.append(
            {
                "externalId": f"bench-{number:07d}",
                "agent": "support-agent",
                "agentVersion": rng.choice(AGENT_VERSIONS),
                "status": "failed" if rng.random() < 0.08 else "completed",
                "input": {"message": steps[1]["content"] if len(steps) > 1 else ""},
                "output": {"message": steps[-1]["content"]},
                "startedAt": started.isoformat(),
                "endedAt": (started + timedelta(seconds=rng.randrange(5, 600))).isoformat(),
                "steps": steps,
            }
        )
    return runs


def batch_bodies(runs: Sequence[dict[str, Any]], project_id: str, batch_size: int) -> list[bytes]:
    """Request bodies serialised before the clock starts, so the figures are the server's, not orjson's."""
    return [
        orjson.dumps({"runs": [{"projectId": project_id, **run} for run in runs[start : start + batch_size]]})
        for start in range(0, len(runs), batch_size)
    ]


def write_jsonl(runs: list[dict[str, Any]], path: Path) -> None:
    """The native import format: one run per line; `redline import` puts them in its --project."""
    with path.open("wb") as sink:
        for run in runs:
            sink.write(orjson.dumps(run) + b"\n")


# ---------------------------------------------------------------------------------------- the stores


def count_rows(url: str) -> tuple[int, int]:
    """Runs and steps as the store holds them, by SQL: the API pages lists and never counts."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            runs = connection.execute(text("SELECT count(*) FROM traces")).scalar_one()
            steps = connection.execute(text("SELECT count(*) FROM steps")).scalar_one()
    finally:
        engine.dispose()
    return int(runs), int(steps)


# -------------------------------------------------------------------------------------------- results


@dataclass
class Result:
    store: str
    path: str
    runs: int
    steps: int
    seconds: float
    runs_per_second: float
    steps_per_second: float
    p50_ms: float | None
    p99_ms: float | None
    peak_rss_mib: float
    # What `redline import` reports for itself: no interpreter start, imports or schema check. None for api.
    command_seconds: float | None
    stored_runs: int
    stored_steps: int
    # The machine's 1-minute load when the path ended: above the core count, other work shared the CPU.
    load_1m: float
    # CPU seconds of the server's process tree per 1,000 runs (the batch API's paths; None for import):
    # what to read first when other work shares the machine.
    server_cpu_ms_per_1000: float | None = None

    @property
    def verified(self) -> bool:
        return self.stored_runs == self.runs and self.stored_steps == self.steps


def _result(
    store: Store,
    path: str,
    runs: int,
    steps: int,
    seconds: float,
    latencies: list[float],
    peak: float,
    command_seconds: float | None = None,
    server_cpu: float | None = None,
) -> Result:
    stored_runs, stored_steps = count_rows(store.url)
    return Result(
        store=store.kind,
        path=path,
        runs=runs,
        steps=steps,
        seconds=round(seconds, 2),
        runs_per_second=round(runs / seconds, 1),
        steps_per_second=round(steps / seconds, 1),
        p50_ms=round(statistics.median(latencies) * 1000, 1) if latencies else None,
        p99_ms=round(percentile(latencies, 0.99) * 1000, 1) if latencies else None,
        peak_rss_mib=round(peak, 1),
        command_seconds=command_seconds,
        stored_runs=stored_runs,
        stored_steps=stored_steps,
        load_1m=round(os.getloadavg()[0], 2),
        server_cpu_ms_per_1000=round(server_cpu / runs * 1_000_000, 1) if server_cpu is not None else None,
    )


# ---------------------------------------------------------------------------------------------- paths


def post_batches(client: httpx.Client, bodies: list[bytes]) -> tuple[float, list[float]]:
    """Wall seconds of the whole sequence and each batch's round trip, in order."""
    latencies: list[float] = []
    started = time.perf_counter()
    for body in bodies:
        sent = time.perf_counter()
        response = client.post("/v1/runs/batch", content=body, headers={"Content-Type": "application/json"})
        latencies.append(time.perf_counter() - sent)
        if response.status_code != 201:
            raise RuntimeError(f"batch answered {response.status_code}: {response.text[:500]}")
    return time.perf_counter() - started, latencies


def edited(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs with the last assistant step of each reworded: the same step, other words."""
    changed = []
    for run in runs:
        steps = [dict(step) for step in run["steps"]]
        last = max((i for i, step in enumerate(steps) if step["role"] == "assistant"), default=None)
        if last is not None:
            steps[last]["content"] = "On reflection: " + steps[last]["content"]
        changed.append({**run, "steps": steps})
    return changed


def bench_api(store: Store, runs: list[dict[str, Any]], batch_size: int, work: Path) -> list[Result]:
    """POST /v1/runs/batch, one client, one batch at a time: the latency a single producer sees; then the
    same runs again, as they were and reworded (module doc)."""
    timed: list[tuple[str, float, list[float], float]] = []
    with serve(store, work / f"serve-{store.kind}.log") as server, server.client() as client:
        project = project_id(client)
        bodies = batch_bodies(runs, project, batch_size)
        for path, sent in (
            ("api", bodies),
            ("api resend", bodies),
            ("api edited", batch_bodies(edited(runs), project, batch_size)),
        ):
            with cpu_spent(server.pid) as spent:
                seconds, latencies = post_batches(client, sent)
            timed.append((path, seconds, latencies, spent.server))
    steps = sum(len(run["steps"]) for run in runs)
    # The server's peak is known once it has stopped: the same figure, over all three, on each row.
    return [
        _result(store, path, len(runs), steps, seconds, latencies, server.peak_mib, server_cpu=cpu)
        for path, seconds, latencies, cpu in timed
    ]


def run_redline(store: Store, *args: str) -> str:
    """Runs one redline command on the store and answers its output; a failure stops the bench."""
    done = subprocess.run(
        [REDLINE, *args], env=redline_env(store), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"redline {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def bench_import(store: Store, runs: list[dict[str, Any]], jsonl: Path) -> Result:
    """`redline import` of the JSONL file: the whole command, process start and file parse included."""
    # `db upgrade` migrates the store and makes the project, so the import's clock covers only itself
    # (a list alone no longer makes a store).
    run_redline(store, "db", "upgrade")
    listing = run_redline(store, "projects", "list")
    project = re.search(r"^([0-9a-f-]{36})\s", listing, re.MULTILINE)
    if project is None:
        raise RuntimeError(f"no project id in `redline projects list`:\n{listing}")
    started = time.perf_counter()
    process = subprocess.Popen(
        [REDLINE, "import", str(jsonl), "--project", project.group(1), "--format", "native"],
        env=redline_env(store),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    rss = PeakRss(process.pid)
    rss.start()
    output, _ = process.communicate()
    seconds = time.perf_counter() - started
    peak = rss.stop()
    if process.returncode != 0:
        raise RuntimeError(f"redline import failed:\n{output.decode()}")
    reported = re.search(r"Imported \d+ runs .* in ([0-9.]+) s\.", output.decode())
    steps = sum(len(run["steps"]) for run in runs)
    return _result(
        store, "import", len(runs), steps, seconds, [], peak, float(reported.group(1)) if reported else None
    )


# ------------------------------------------------------------------------------------------- printing


def _cell(value: float | None) -> str:
    """A figure for the table; a dash where the path has none (latencies of an import)."""
    return "-" if value is None else f"{value:,.1f}"


def print_table(results: list[Result]) -> None:
    """One row per store and path, right-aligned, so runs can be compared by eye."""
    header = (
        "store", "path", "runs", "steps", "wall s", "runs/s", "steps/s", "p50 ms", "p99 ms", "peak RSS MiB",
        "cmd s", "server CPU ms/1k runs", "load", "stored",
    )  # fmt: skip
    rows = [
        (
            r.store,
            r.path,
            f"{r.runs:,}",
            f"{r.steps:,}",
            f"{r.seconds:.2f}",
            _cell(r.runs_per_second),
            _cell(r.steps_per_second),
            _cell(r.p50_ms),
            _cell(r.p99_ms),
            _cell(r.peak_rss_mib),
            _cell(r.command_seconds),
            _cell(r.server_cpu_ms_per_1000),
            f"{r.load_1m:.2f}",
            "ok" if r.verified else f"MISMATCH {r.stored_runs:,} runs / {r.stored_steps:,} steps",
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10_000, help="runs to ingest per store and path")
    parser.add_argument("--steps", type=int, default=20, help="steps per run (about 500 bytes each)")
    parser.add_argument(
        "--batch-size", type=int, default=1_000, help="runs per POST /v1/runs/batch (max 1000)"
    )
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument(
        "--postgres-url", default=DEFAULT_POSTGRES_URL, help="admin URL; the bench db is made there"
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.steps < 1 or not 1 <= args.batch_size <= 1_000:
        parser.error("--runs and --steps must be at least 1, --batch-size between 1 and 1000")
    return args


def main(argv: list[str] | None = None) -> int:
    """Every chosen store, API then import, each on its own fresh store; exit 1 if a count is off."""
    args = parse_args(argv)
    if shutil.which(REDLINE) is None:
        raise SystemExit(f"{REDLINE} not found: install redline in this interpreter's environment")
    kinds = ["sqlite", "postgresql"] if args.store == "both" else [args.store]
    log = sys.stderr
    print(f"generating {args.runs:,} runs x {args.steps} steps ...", file=log)
    runs = make_runs(args.runs, args.steps)
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as folder:
        work = Path(folder)
        jsonl = work / "runs.jsonl"
        write_jsonl(runs, jsonl)
        for kind in kinds:
            print(f"{kind}: batch API ...", file=log)
            with fresh_store(kind, args.postgres_url) as store:
                results.extend(bench_api(store, runs, args.batch_size, work))
            print(f"{kind}: redline import ...", file=log)
            with fresh_store(kind, args.postgres_url) as store:
                results.append(bench_import(store, runs, jsonl))
    if args.json:
        print(
            orjson.dumps(
                [{**asdict(r), "verified": r.verified} for r in results], option=orjson.OPT_INDENT_2
            ).decode()
        )
    else:
        print_table(results)
    return 0 if all(r.verified for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
