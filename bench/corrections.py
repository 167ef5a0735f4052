"""Corrections at volume: the filtered list, the counts, the streamed export and creates, on a real server.

For each store (--store sqlite|postgresql|both) this makes a fresh store, starts a real `redline serve`
on it (`_server.py`, as `annotations.py` does), ingests --runs short runs of two agents through
POST /v1/runs/batch, then:

1. seeds --corrections corrections (1,000,000 by default) straight into the `corrections` table from
   this process through SQLAlchemy Core (`redline.db.bulk_insert`), with the `correction_tallies` rows
   those corrections make, computed as they are generated, so the counts page agrees with the table;
   posting a million over HTTP would take hours and measure nothing the creates below don't;
2. list: GET /v1/corrections (first page, 50) under the filters people use, --repeat times each;
3. counts: GET /v1/corrections/counts for the project, and for one agent in it;
4. export: GET /v1/corrections/export of the larger agent, CSV then JSONL, streamed with httpx (rows
   counted as the bytes arrive) while the server's resident memory is sampled;
5. creates: --creates POST /v1/corrections from --clients threads, each on runs of its own.

The seeded rows and the request bodies come from random.Random, so two invocations write the same rows.

    python bench/corrections.py                          # 1,000,000 corrections, both stores
    python bench/corrections.py --store sqlite --json
    python bench/corrections.py --corrections 100000 --parts list,export
"""

from __future__ import annotations

import argparse
import csv
import io
import random
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlencode

import httpx
import orjson
from sqlalchemy import Table, func, select, text

from _report import Figure, add_note, exit_status, latency_ms, print_figures, print_table, requests_figure
from _server import (
    DEFAULT_POSTGRES_URL,
    MIB,
    PeakRss,
    Server,
    Store,
    cpu_spent,
    fresh_store,
    project_id,
    serve,
    store_kinds,
    tree_rss,
)
from ingest import batch_bodies, make_runs, post_batches
from redline.corrections import tallies
from redline.corrections.models import Correction, CorrectionTally
from redline.corrections.wire import CSV_COLUMNS
from redline.db import Database, bulk_insert, make_engine
from redline.identity import service as identity
from redline.identity.models import Principal, Project
from redline.traces.models import Trace

LIST_ROUTE = "/v1/corrections"
COUNTS_ROUTE = "/v1/corrections/counts"
EXPORT_ROUTE = "/v1/corrections/export"
PARTS = ("list", "counts", "export", "creates")
BENCH_DATABASE = "redline_bench_corrections"
AGENTS = ("support-agent", "billing-agent")
# The share of runs made by the first agent: two agents of unequal traffic, as in a real project.
FIRST_AGENT_SHARE = 0.6

# Targets of the issue, for SQLite on this machine; PostgreSQL is reported against the same numbers.
TARGET_LIST_MS = 50.0
TARGET_COUNTS_MS = 50.0
TARGET_EXPORT_ROWS_PER_SECOND = 50_000.0
TARGET_EXPORT_GROWTH_MIB = 100.0
SEED_CHUNK = 5_000

REVIEWERS = ["Priya Raman", "Tomás Ferreira", "Hannah Okafor"]
# The app that records its end users' corrections, each with the user's own opaque id.
END_USER_APP = "storefront-app"
CREATOR = "Sam Creator"
CUSTOMERS = 50_000
# A share of each run's corrections made by reviewers; the rest come from end users through the app.
REVIEWER_SHARE = 0.15
SHOULD_SAY = [
    "Your refund of $42.10 was issued today; it shows on your card within 5 business days.",
    'Say "I\'ve reversed the duplicate charge" and give the reference, not a promise to "look into it".',
    "The order shipped on Tuesday, tracking 1Z999AA10123456784, and arrives Friday.",
    "Apologise once, then offer the replacement, the return label and the refund, in that order.",
    "Returns are free within 30 days, even for sale items.\nThe label is in the confirmation email.",
]
WHY = [
    "It guessed the delivery date instead of calling get_tracking.",
    "Refunds over $200 need a supervisor; this one was $340.",
    'The customer asked for a replacement, not "store credit".',
    "Quoted the old returns policy (14 days, not 30).",
    "Too long: four paragraphs for a yes-or-no question, and it buried the answer.",
    "Right answer, wrong tone; the customer had already waited a week.",
]
TOOLS = ["lookup_order", "get_tracking", "issue_refund", "search_kb", "create_return_label"]
WONT_FIX = ["Working as designed: the policy changed on 1 Nov.", "Duplicate of an older correction."]
LINKS = [
    {"kind": "url", "url": "https://github.com/northwind/support-agent/pull/{n}"},
    {"kind": "improve-run", "id": "{u}"},
    {"kind": "suggested-change", "id": "{u}"},
]

# The list's first page under the filters people use; "agent" stands for the larger agent's id.
LIST_COMBOS: list[tuple[str, dict[str, str]]] = [
    ("no filter", {}),
    ("agentId", {"agentId": "agent"}),
    ("status=not-fixed", {"status": "not-fixed"}),
    ("sortedTo=improve", {"sortedTo": "improve"}),
    ("from=end-users", {"from": "end-users"}),
    ("agentId+status=open", {"agentId": "agent", "status": "open"}),
    # Beyond the list: one end user's corrections, and the caller's own.
    ("participantId", {"participantId": "participant"}),
    ("madeBy=me", {"madeBy": "me"}),
]


# ---------------------------------------------------------------------------------------------- runs


@dataclass
class RunRow:
    """A stored run as the seeding needs it: its ids and the copies a correction keeps."""

    id: uuid.UUID
    project_id: uuid.UUID
    agent_id: uuid.UUID
    agent_version: str
    input: Any
    output: Any
    started_at: datetime


def bench_runs(count: int, steps: int) -> list[dict[str, Any]]:
    """`ingest.py`'s support conversations, shorter, from two agents (60/40), every one finished."""
    runs = make_runs(count, steps)
    rng = random.Random(7)
    for run in runs:
        run["agent"] = AGENTS[0] if rng.random() < FIRST_AGENT_SHARE else AGENTS[1]
        run["status"] = "completed"
    return runs


def ingest(server: Server, runs: list[dict[str, Any]], db: Database) -> tuple[list[RunRow], uuid.UUID]:
    """The runs through POST /v1/runs/batch; then read back by SQL, with the project's workspace."""
    with server.client() as client:
        post_batches(client, batch_bodies(runs, project_id(client), 1_000))
    with db.read() as session:
        rows = session.execute(
            select(
                Trace.id,
                Trace.project_id,
                Trace.agent_id,
                Trace.agent_version,
                Trace.input,
                Trace.output,
                Trace.started_at,
                Project.workspace_id,
            )
            .join(Project, Project.id == Trace.project_id)
            .order_by(Trace.started_at, Trace.id)
        ).all()
    stored = [RunRow(*row[:7]) for row in rows]
    return stored, rows[0].workspace_id


# --------------------------------------------------------------------------------------------- seeding


@dataclass(frozen=True)
class People:
    reviewers: list[uuid.UUID]
    app: uuid.UUID
    # The token of a user with write access and no seeded corrections, for the creates: each of its
    # corrections is a new one, not a replacement.
    creator_token: str


def make_people(db: Database, project: uuid.UUID) -> People:
    """The reviewers (the bench's own admin, whose token the bench uses, so `madeBy=me` finds some,
    and three more), the end users' app, and a user who makes the creates, made through the identity
    service like `redline users add`."""
    with db.write() as session:
        operator = identity.operator(session)
        admin = session.scalars(select(Principal.id).where(Principal.workspace_admin.is_(True))).one()
        reviewers = [admin] + [
            identity.create_user(session, operator, name=name, kind="user").id for name in REVIEWERS
        ]
        app = identity.create_user(session, operator, name=END_USER_APP, kind="service").id
        creator = identity.create_user(session, operator, name=CREATOR, kind="user").id
        identity.set_member(session, operator, project, creator, "write")
        token = identity.create_token(session, operator, creator, "bench").secret
    return People(reviewers, app, token)


def _iso(at: datetime) -> str:
    return at.isoformat()


def _said(rng: random.Random, end_user: bool) -> dict[str, Any]:
    """What a correction says: end users mostly that the answer was wrong; reviewers also the tools."""
    roll = rng.random()
    if not end_user and roll < 0.25:
        tool = rng.choice(TOOLS)
        said: dict[str, Any] = {
            "decisions": "wrong",
            "should_call": [{"tool": tool, "args": {"orderId": f"NW-{rng.randrange(100000, 999999)}"}}],
            "must_not_call": [rng.choice([t for t in TOOLS if t != tool])] if rng.random() < 0.3 else None,
        }
    elif roll < (0.8 if end_user else 0.7):
        said = {"answer": "wrong", "should_say": rng.choice(SHOULD_SAY) if rng.random() < 0.7 else None}
    elif not end_user and roll < 0.8:
        said = {"items": [{"key": f"kb-{rng.randrange(1000)}", "rank": 0, "verdict": "wrong"}]}
    else:
        said = {"answer": "right"}
    if said.get("answer") == "wrong" and (said["should_say"] is None or rng.random() < 0.3):
        said["why"] = rng.choice(WHY)
    return said


def _sorted_on_save(said: dict[str, Any], end_user: bool, at: datetime) -> dict[str, Any]:
    """`workflow.sort_on_save`'s result, as columns (the project leaves end users' corrections unsorted)."""
    if end_user:
        return {"status": "open", "sorted_to": None, "sorted": None, "fixed_in": None}
    by_rule = {"by": {"kind": "rule"}, "at": _iso(at)}
    if said.get("decisions") == "wrong":
        return {"status": "with-owner", "sorted_to": "owner", "sorted": by_rule, "fixed_in": None}
    if said.get("answer") == "wrong" or said.get("items"):
        return {"status": "open", "sorted_to": "improve", "sorted": by_rule, "fixed_in": None}
    fixed_in = {"how": "recorded-right", "at": _iso(at)}
    return {"status": "fixed", "sorted_to": None, "sorted": by_rule, "fixed_in": fixed_in}


def _moved_on(rng: random.Random, row: dict[str, Any], person: uuid.UUID, at: datetime) -> None:
    """What happened since: some sorted by a person, some being fixed, fixed by a test run, won't fix,
    or removed by their author, as `workflow.apply_change`, `fixed_by_test` and `remove` leave them."""
    later = at + timedelta(hours=rng.randrange(1, 240))
    if row["sorted"] is None and row["said_answer"] != "right" and rng.random() < 0.45:
        sorted_to = rng.choices(["improve", "developer", "owner"], [0.6, 0.15, 0.25])[0]
        row["sorted_to"] = sorted_to
        row["sorted"] = {"by": {"kind": "user", "id": str(person)}, "at": _iso(later)}
        row["status"] = "with-owner" if sorted_to == "owner" else "open"
    roll = rng.random()
    if row["status"] in ("open", "with-owner") and row["sorted"] is not None and roll < 0.2:
        link = dict(rng.choice(LINKS))
        for key, value in link.items():
            link[key] = value.format(n=rng.randrange(100, 9999), u=uuid.UUID(int=rng.getrandbits(128)))
        row["status"], row["link"] = "being-fixed", link
    elif row["status"] in ("open", "with-owner") and row["sorted"] is not None and roll < 0.45:
        version = f"2026.11.{rng.randrange(4, 9)}"
        row["status"] = "fixed"
        row["fixed_in"] = {"how": "test-run", "at": _iso(later), "version": version, "by": str(person)}
    elif row["status"] != "fixed" and 0.45 <= roll < 0.52:
        row["status"] = "wont-fix"
        row["status_note"] = {"text": rng.choice(WONT_FIX), "by": str(person), "at": _iso(later)}
    elif roll > 0.965:
        row["status"], row["link"] = "removed", None
        row["unregistered_at"] = later


def _correction(
    rng: random.Random,
    run: RunRow,
    workspace_id: uuid.UUID,
    made_by: tuple[str, uuid.UUID],
    participant: str | None,
    at: datetime,
) -> dict[str, Any]:
    end_user = participant is not None
    said = _said(rng, end_user)
    row: dict[str, Any] = {
        "id": uuid.UUID(int=rng.getrandbits(128), version=4),
        "workspace_id": workspace_id,
        "project_id": run.project_id,
        "run_id": run.id,
        "agent_id": run.agent_id,
        "flow_id": None,
        "agent_version": run.agent_version,
        "decisions": said.get("decisions"),
        "should_call": said.get("should_call"),
        "must_not_call": said.get("must_not_call"),
        "answer": said.get("answer"),
        "should_say": said.get("should_say"),
        "items": said.get("items"),
        "why": said.get("why"),
        "corrector_group_id": None,
        "expert": False,
        "made_by_kind": made_by[0],
        "made_by_id": made_by[1],
        "participant_id": participant,
        "live_key": f"{made_by[1]}:{participant or ''}",
        **_sorted_on_save(said, end_user, at),
        "link": None,
        "reopened_in": None,
        "status_note": None,
        "run_input": run.input,
        "run_output": run.output,
        "run_captured_at": at,
        "created_at": at,
        "superseded_by": None,
        "unregistered_at": None,
        "said_answer": said.get("answer"),
    }
    return row


# A correction planned before it is written: (created_at, run number, reviewer number or -1 for the
# end users' app, participant, id, id of the correction that replaced it or None).
Planned = tuple[datetime, int, int, str | None, uuid.UUID, uuid.UUID | None]


def _plan_run(rng: random.Random, run: RunRow, number: int, count: int, reviewers: int) -> list[Planned]:
    """A run's `count` corrections, made minutes to three days after it: end users' through the app
    (one each), and the reviewers', each reviewer's earlier ones replaced by their next (history)."""
    made: list[tuple[datetime, int, str | None, uuid.UUID]] = []
    for k in range(count):
        at = run.started_at + timedelta(microseconds=rng.randrange(300 * 10**6, 3 * 86_400 * 10**6))
        ident = uuid.UUID(int=rng.getrandbits(128), version=4)
        if rng.random() < REVIEWER_SHARE:
            made.append((at, rng.randrange(reviewers), None, ident))
        else:
            customer = (k * 7919 + number * 104_729) % CUSTOMERS
            made.append((at, -1, f"cust-{customer:05d}", ident))
    made.sort()
    planned: list[Planned] = []
    replaced_by: dict[int, uuid.UUID] = {}
    for at, reviewer, participant, ident in reversed(made):
        later = replaced_by.get(reviewer) if reviewer >= 0 else None
        planned.append((at, number, reviewer, participant, ident, later))
        if reviewer >= 0:
            replaced_by[reviewer] = ident
    return planned


def _written(
    rng: random.Random, planned: Planned, runs: list[RunRow], workspace_id: uuid.UUID, people: People
) -> dict[str, Any]:
    """The row of a planned correction: what it says, how it was sorted, and what happened since."""
    at, number, reviewer, participant, ident, later = planned
    made_by = ("user", people.reviewers[reviewer]) if reviewer >= 0 else ("service", people.app)
    row = _correction(rng, runs[number], workspace_id, made_by, participant, at)
    row["id"], row["superseded_by"] = ident, later
    if later is not None:
        row["live_key"] = None
    else:
        _moved_on(rng, row, rng.choice(people.reviewers), at)
    del row["said_answer"]
    return row


def seed_rows(
    runs: list[RunRow], total: int, workspace_id: uuid.UUID, people: People, counted: Counter[tuple[str, str]]
) -> Iterator[list[dict[str, Any]]]:
    """`total` corrections spread evenly over the runs, written in the order they were made, as a live
    store receives them (so the table's physical order follows time, as it would), a chunk at a time
    (a million rows held at once would be gigabytes); the live ones counted into `counted` by (tally
    scope, status) as they go."""
    rng = random.Random(1)
    per_run, extra = divmod(total, len(runs))
    plan: list[Planned] = []
    for number, run in enumerate(runs):
        plan += _plan_run(rng, run, number, per_run + (number < extra), len(people.reviewers))
    plan.sort()
    for start in range(0, len(plan), SEED_CHUNK):
        chunk = [
            _written(rng, planned, runs, workspace_id, people) for planned in plan[start : start + SEED_CHUNK]
        ]
        for row in chunk:
            if row["superseded_by"] is None:
                counted[(tallies.scope_key(row["project_id"]), row["status"])] += 1
                counted[(tallies.scope_key(row["project_id"], row["agent_id"]), row["status"])] += 1
        yield chunk


def seed(db: Database, runs: list[RunRow], total: int, workspace_id: uuid.UUID, people: People) -> float:
    """The corrections and their tallies in one transaction; seconds taken. PostgreSQL is analysed
    afterwards, as autovacuum would soon do on a live store, so its plans see the real row counts."""
    table = cast(Table, Correction.__table__)
    counted: Counter[tuple[str, str]] = Counter()
    started = time.perf_counter()
    with db.write() as session:
        for chunk in seed_rows(runs, total, workspace_id, people, counted):
            bulk_insert(session, table, chunk)
        tally_rows = [{"scope_key": k, "status": s, "count": n} for (k, s), n in sorted(counted.items())]
        bulk_insert(session, cast(Table, CorrectionTally.__table__), tally_rows)
    if db.dialect_name == "postgresql":
        with db.engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE"))
    return time.perf_counter() - started


def stored_counts(db: Database) -> tuple[int, dict[str, int]]:
    """Every correction, and the live ones by status, counted by SQL (the API counts from the tallies)."""
    with db.read() as session:
        total = int(session.scalar(select(func.count()).select_from(Correction)) or 0)
        live = session.execute(
            select(Correction.status, func.count())
            .where(Correction.superseded_by.is_(None))
            .group_by(Correction.status)
        ).all()
    return total, {status: int(n) for status, n in live}


def newest_participant(db: Database) -> str:
    """The end user behind the newest correction: a list of one person's corrections that exists."""
    with db.read() as session:
        return str(
            session.scalars(
                select(Correction.participant_id)
                .where(Correction.participant_id.is_not(None))
                .order_by(Correction.created_at.desc())
                .limit(1)
            ).one()
        )


def export_expected(db: Database, agent_id: uuid.UUID) -> int:
    """What the export of the agent must send: its live corrections, removed ones left out."""
    with db.read() as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(Correction)
                .where(
                    Correction.agent_id == agent_id,
                    Correction.superseded_by.is_(None),
                    Correction.status != "removed",
                )
            )
            or 0
        )


# ------------------------------------------------------------------------------------------- requests


def _timed_gets(client: httpx.Client, path: str, params: dict[str, str], repeat: int) -> list[float]:
    """`repeat` GETs one after another, after one not timed (the connection and the server's caches)."""
    client.get(path, params=params).raise_for_status()
    latencies = []
    for _ in range(repeat):
        sent = time.perf_counter()
        response = client.get(path, params=params)
        latencies.append(time.perf_counter() - sent)
        if response.status_code != 200:
            raise RuntimeError(f"{path}?{urlencode(params)} answered {response.status_code}: {response.text}")
    return latencies


def _reads_figure(
    store: Store, measure: str, latencies: list[float], target_ms: float, ok: bool = True, note: str = ""
) -> Figure:
    """Reads made one after another: their time together, and a p50 target that `ok` must also meet."""
    figure = requests_figure(store.kind, measure, latencies, sum(latencies), note)
    figure.target = f"p50 < {target_ms:.0f} ms"
    figure.met = latency_ms(latencies)[0] < target_ms and ok
    return figure


def bench_list(store: Store, server: Server, stand_ins: dict[str, str], repeat: int) -> list[Figure]:
    """The list's first page under each of LIST_COMBOS; all fill a page but one end user's list."""
    figures = []
    with server.client() as client:
        for name, combo in LIST_COMBOS:
            params = {key: stand_ins.get(value, value) for key, value in combo.items()}
            latencies = _timed_gets(client, LIST_ROUTE, params, repeat)
            got = len(client.get(LIST_ROUTE, params=params).json()["data"])
            full = got == 50 or (name == "participantId" and got > 0)
            note = f"{got} items" + ("" if full else " MISMATCH: expected a full page")
            figures.append(
                _reads_figure(store, f"list, first page, {name}", latencies, TARGET_LIST_MS, full, note)
            )
    return figures


def bench_counts(store: Store, server: Server, project: str, agent: str, repeat: int) -> list[Figure]:
    figures = []
    with server.client() as client:
        for name, params in (
            ("project", {"scopeKind": "project", "scopeId": project}),
            ("project+agentId", {"scopeKind": "project", "scopeId": project, "agentId": agent}),
        ):
            latencies = _timed_gets(client, COUNTS_ROUTE, params, repeat)
            figures.append(_reads_figure(store, f"counts, {name}", latencies, TARGET_COUNTS_MS))
    return figures


def check_counts(server: Server, project: str, live: dict[str, int]) -> str:
    """The counts page against the table itself: the seeded tallies must agree with the rows."""
    with server.client() as client:
        got = client.get(COUNTS_ROUTE, params={"scopeKind": "project", "scopeId": project}).json()
    wire = {"open": "open", "beingFixed": "being-fixed", "withOwner": "with-owner", "fixed": "fixed",
            "wontFix": "wont-fix", "removed": "removed"}  # fmt: skip
    wrong = {
        key: (got[key], live.get(status, 0))
        for key, status in wire.items()
        if got[key] != live.get(status, 0)
    }
    return "" if not wrong else f"MISMATCH counts (page, table): {wrong}"


def _first_record(head: bytes, export_format: str) -> dict[str, str] | Any:
    if export_format == "jsonl":
        return orjson.loads(head.split(b"\n", 1)[0])
    reader = csv.reader(io.StringIO(head.decode(errors="replace"), newline=""))
    header = next(reader)
    if tuple(header) != CSV_COLUMNS:
        raise RuntimeError(f"MISMATCH CSV header {header}")
    return dict(zip(header, next(reader), strict=True))


def bench_export(
    store: Store, server: Server, agent: str, expected: int, export_format: str, first_listed: dict[str, Any]
) -> Figure:
    """The agent's whole export streamed; records counted as chunks arrive, memory sampled meanwhile.

    JSONL records are lines; CSV records are counted by their line ends, which is exact here because no
    seeded text holds a CRLF (the one multi-line text has a bare LF, quoted)."""
    before = tree_rss(server.pid) / MIB
    rss = PeakRss(server.pid)
    ends = size = 0
    head = b""
    first_byte: float | None = None
    end = b"\n" if export_format == "jsonl" else b"\r\n"
    with server.client() as client:
        rss.start()
        with cpu_spent(server.pid) as cpu:
            started = time.perf_counter()
            params = {"agentId": agent, "format": export_format}
            with client.stream("GET", EXPORT_ROUTE, params=params) as response:
                if response.status_code != 200:
                    raise RuntimeError(f"export answered {response.status_code}: {response.read()[:500]!r}")
                media_type = response.headers.get("content-type", "")
                carry = b""
                for chunk in response.iter_bytes():
                    if first_byte is None:
                        first_byte = time.perf_counter() - started
                    # A CRLF may straddle two chunks: the previous chunk's last byte goes in front.
                    ends += (carry + chunk).count(end)
                    carry = chunk[-(len(end) - 1) :] if len(end) > 1 else b""
                    size += len(chunk)
                    if len(head) < 65536:
                        head += chunk[:65536]
            seconds = time.perf_counter() - started
    peak = rss.stop()
    rows = ends - (1 if export_format == "csv" else 0)
    problems = []
    if rows != expected:
        problems.append(f"MISMATCH {rows:,} rows, expected {expected:,}")
    wanted_type = "application/jsonl" if export_format == "jsonl" else "text/csv"
    if not media_type.startswith(wanted_type):
        problems.append(f"MISMATCH content-type {media_type}")
    first = _first_record(head, export_format)
    if export_format == "jsonl" and first != first_listed:
        problems.append("MISMATCH first line is not the list's first item")
    if export_format == "csv" and first["id"] != first_listed["id"]:
        problems.append("MISMATCH first row is not the list's first item")
    growth = peak - before
    rate = rows / seconds
    return Figure(
        store=store.kind,
        measure=f"export {export_format.upper()}, one agent",
        count=rows,
        seconds=round(seconds, 2),
        rate=round(rate, 1),
        rss_before_mib=round(before, 1),
        rss_peak_mib=round(peak, 1),
        target=f">= {TARGET_EXPORT_ROWS_PER_SECOND:,.0f} rows/s, < +{TARGET_EXPORT_GROWTH_MIB:.0f} MiB",
        met=rate >= TARGET_EXPORT_ROWS_PER_SECOND and growth < TARGET_EXPORT_GROWTH_MIB and not problems,
        note="; ".join(
            [
                f"{size / MIB:.1f} MiB, first byte {(first_byte or 0) * 1000:.0f} ms, +{growth:.1f} MiB",
                # CPU per row says more than the rate when other work shares the cores.
                f"CPU per row: server {cpu.server / max(rows, 1) * 1e6:.1f} us, "
                f"client {cpu.bench / max(rows, 1) * 1e6:.1f} us",
                *problems,
            ]
        ),
    )


def create_bodies(runs: list[RunRow], count: int) -> list[bytes]:
    """`count` corrections, each of a run of its own, serialised before the clock: mostly a wrong answer
    with what to say, some wrong tools, some right."""
    rng = random.Random(3)
    chosen = rng.sample(runs, min(count, len(runs)))
    bodies = []
    for run in chosen:
        roll = rng.random()
        if roll < 0.6:
            body: dict[str, Any] = {
                "answer": "wrong",
                "shouldSay": rng.choice(SHOULD_SAY),
                "why": rng.choice(WHY),
            }
        elif roll < 0.8:
            body = {"decisions": "wrong", "shouldCall": [{"tool": rng.choice(TOOLS)}]}
        else:
            body = {"answer": "right"}
        bodies.append(orjson.dumps({"runId": str(run.id), **body}))
    return bodies


def bench_creates(store: Store, server: Server, bodies: Sequence[bytes], clients: int, token: str) -> Figure:
    """POST /v1/corrections from `clients` threads, each with its own client and share, released
    together; wall time from the release to the last answer."""
    shares = [bodies[number::clients] for number in range(clients)]
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors: list[BaseException] = []
    ready = threading.Barrier(clients + 1)
    headers = {"Content-Type": "application/json"}

    def worker(number: int) -> None:
        with server.client() as client:
            client.headers["Authorization"] = f"Bearer {token}"
            client.get("/healthz")  # the connection is open before the clock starts
            ready.wait()
            try:
                for body in shares[number]:
                    sent = time.perf_counter()
                    response = client.post(LIST_ROUTE, content=body, headers=headers)
                    latencies[number].append(time.perf_counter() - sent)
                    if response.status_code != 201:
                        raise RuntimeError(f"create answered {response.status_code}: {response.text[:500]}")
            except (httpx.HTTPError, RuntimeError) as error:
                errors.append(error)

    threads = [threading.Thread(target=worker, args=(number,)) for number in range(clients)]
    for thread in threads:
        thread.start()
    ready.wait()
    with cpu_spent(server.pid) as cpu:
        started = time.perf_counter()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - started
    if errors:
        raise RuntimeError(f"{len(errors)} client(s) failed; the first: {errors[0]}")
    every = [latency for share in latencies for latency in share]
    note = f"server CPU {cpu.server / len(every) * 1000:.2f} ms per create"
    return requests_figure(store.kind, f"create, {clients} clients", every, seconds, note)


# ----------------------------------------------------------------------------------------------- store


def bench_store(
    store: Store, args: argparse.Namespace, runs: list[dict[str, Any]], work: Path
) -> list[Figure]:
    """Everything on one fresh store: the reads see exactly the seeded corrections, the creates come last."""
    log = sys.stderr
    figures: list[Figure] = []
    db = Database(make_engine(store.url))
    try:
        with serve(store, work / f"serve-{store.kind}.log") as server:
            started = time.perf_counter()
            stored_runs, workspace_id = ingest(server, runs, db)
            print(
                f"{store.kind}: ingested {len(runs):,} runs in {time.perf_counter() - started:.1f} s",
                file=log,
            )
            people = make_people(db, stored_runs[0].project_id)
            seconds = seed(db, stored_runs, args.corrections, workspace_id, people)
            total, live = stored_counts(db)
            print(
                f"{store.kind}: seeded {total:,} corrections in {seconds:.1f} s; live by status {live}",
                file=log,
            )
            project = str(stored_runs[0].project_id)
            by_agent = Counter(run.agent_id for run in stored_runs)
            agent_id = by_agent.most_common(1)[0][0]
            agent = str(agent_id)
            problem = check_counts(server, project, live)
            if "list" in args.parts:
                print(f"{store.kind}: list ...", file=log)
                stand_ins = {"agent": agent, "participant": newest_participant(db)}
                figures.extend(bench_list(store, server, stand_ins, args.repeat))
            if "counts" in args.parts:
                print(f"{store.kind}: counts ...", file=log)
                figures.extend(bench_counts(store, server, project, agent, args.repeat))
            if "export" in args.parts:
                expected = export_expected(db, agent_id)
                with server.client() as client:
                    first = client.get(LIST_ROUTE, params={"agentId": agent, "limit": "1"}).json()["data"][0]
                for export_format in ("csv", "jsonl"):
                    print(f"{store.kind}: export {export_format} ({expected:,} rows) ...", file=log)
                    figures.append(bench_export(store, server, agent, expected, export_format, first))
            if "creates" in args.parts:
                print(f"{store.kind}: creates, {args.clients} clients ...", file=log)
                bodies = create_bodies(stored_runs, args.creates)
                figures.append(bench_creates(store, server, bodies, args.clients, people.creator_token))
            after, _ = stored_counts(db)
            created = args.creates if "creates" in args.parts else 0
            if after != total + created:
                problem = "; ".join(
                    p for p in (problem, f"MISMATCH {after:,} stored, expected {total + created:,}") if p
                )
    finally:
        db.dispose()
    add_note(figures, problem)
    print(f"{store.kind}: server peak RSS over the whole run {server.peak_mib:.0f} MiB", file=log)
    return figures


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10_000, help="runs ingested first, per store")
    parser.add_argument("--steps", type=int, default=4, help="steps per run")
    parser.add_argument("--corrections", type=int, default=1_000_000, help="corrections seeded by SQL")
    parser.add_argument("--repeat", type=int, default=200, help="requests per list filter and per count")
    parser.add_argument("--creates", type=int, default=2_000, help="corrections posted (at most one per run)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients for the creates")
    parser.add_argument(
        "--parts", default=",".join(PARTS), help=f"comma-separated, any of {', '.join(PARTS)}"
    )
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument(
        "--postgres-url", default=DEFAULT_POSTGRES_URL, help="admin URL; the bench db is made there"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    args = parser.parse_args(argv)
    args.parts = [part.strip() for part in args.parts.split(",") if part.strip()]
    if unknown := set(args.parts) - set(PARTS):
        parser.error(f"unknown --parts {', '.join(sorted(unknown))}")
    if min(args.runs, args.corrections, args.repeat, args.creates, args.clients) < 1:
        parser.error("--runs, --corrections, --repeat, --creates and --clients must be at least 1")
    if args.steps < 2:
        parser.error("--steps must be at least 2 (a question and an answer)")
    if args.creates > args.runs:
        parser.error("--creates is at most --runs: each create corrects a run of its own")
    return args


def main(argv: list[str] | None = None) -> int:
    """Each chosen store, fresh; exit 1 if a SQLite target is missed or a count is off."""
    args = parse_args(argv)
    kinds = store_kinds(args.store)
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as folder:
        print(f"generating {args.runs:,} runs x {args.steps} steps ...", file=sys.stderr)
        runs = bench_runs(args.runs, args.steps)
        for kind in kinds:
            with fresh_store(kind, args.postgres_url, BENCH_DATABASE) as store:
                done = bench_store(store, args, runs, Path(folder))
            figures.extend(done)
            if not args.json and len(kinds) > 1:
                # Each store's figures as soon as they are in: a later store's failure keeps them.
                print_table(done, file=sys.stderr)
    print_figures(figures, args.json)
    return exit_status(figures)


if __name__ == "__main__":
    sys.exit(main())
