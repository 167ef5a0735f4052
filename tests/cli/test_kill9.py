"""Nothing acknowledged is lost when `redline serve` is killed: four clients write runs, annotations,
corrections and OTLP spans; SIGKILL takes the server and its worker processes down at a moment drawn
from a seeded random generator, after the cycle's first answered write; after a restart every write
that was answered 2xx is there with its content. Three cycles on each store, with one server process
and with two.

The moment and the seed are in the failure message, so a failing cycle can be run again as it was
(REDLINE_KILL9_SEED); REDLINE_KILL9_CYCLES runs more cycles (bench/kill9.py loops over seeds).
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx
import psutil
import pytest
from sqlalchemy import text

from redline.db import Database, make_engine
from tests.cli.test_serve import TOKEN_LINE, serving
from tests.samples import make_run

SEED = int(os.environ.get("REDLINE_KILL9_SEED", "9"))
CYCLES = int(os.environ.get("REDLINE_KILL9_CYCLES", "3"))


@dataclass
class Acknowledged:
    """The writes the server answered 2xx, by kind: what each must be found holding afterwards."""

    runs: dict[str, str] = field(default_factory=dict)  # external id -> title
    annotations: dict[str, str] = field(default_factory=dict)  # id -> comment
    corrections: dict[str, str] = field(default_factory=dict)  # id -> why
    spans: dict[str, str] = field(default_factory=dict)  # span id -> name
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, kind: str, key: str, content: str) -> None:
        with self.lock:
            getattr(self, kind)[key] = content

    def count(self) -> int:
        return len(self.runs) + len(self.annotations) + len(self.corrections) + len(self.spans)


def _otlp_export(trace_hex: str, span_hex: str, name: str) -> dict[str, object]:
    span = {
        "traceId": trace_hex,
        "spanId": span_hex,
        "name": name,
        "startTimeUnixNano": "1790000000000000000",
        "endTimeUnixNano": "1790000001000000000",
    }
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": [span]}]}]}


def _writers(
    base: str, token: str, project_id: str, run_id: str, cycle: int, done: Acknowledged
) -> list[Callable[[httpx.Client, int], None]]:
    """One write per call of each kind, the n-th of its writer; each notes what was acknowledged."""

    def run(http: httpx.Client, n: int) -> None:
        external, title = f"kill9-{cycle}-{n}", f"Run {cycle}.{n}"
        answer = http.post("/v1/runs", json=make_run(project_id, externalId=external, title=title))
        if answer.status_code == 201:
            done.note("runs", external, title)

    def annotation(http: httpx.Client, n: int) -> None:
        comment = f"Comment {cycle}.{n}"
        answer = http.post(f"/api/v1/rm/traces/{run_id}/annotations", json={"rating": 1, "comment": comment})
        if answer.status_code == 200:
            done.note("annotations", answer.json()["id"], comment)

    def correction(http: httpx.Client, n: int) -> None:
        why = f"Why {cycle}.{n}"
        body = {"runId": run_id, "answer": "wrong", "why": why, "participantId": f"p-{cycle}-{n}"}
        answer = http.post("/v1/corrections", json=body)
        if answer.status_code == 201:
            done.note("corrections", answer.json()["id"], why)

    def spans(http: httpx.Client, n: int) -> None:
        trace_hex, span_hex, name = os.urandom(16).hex(), os.urandom(8).hex(), f"span {cycle}.{n}"
        answer = http.post("/v1/traces", json=_otlp_export(trace_hex, span_hex, name))
        if answer.status_code == 200:
            done.note("spans", span_hex, name)

    return [run, annotation, correction, spans]


def _write_until_stopped(
    base: str, token: str, write: Callable[[httpx.Client, int], None], stop: threading.Event
) -> None:
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=10) as http:
        n = 0
        while not stop.is_set():
            try:
                write(http, n)
            except httpx.TransportError:
                return  # the server is gone: what was answered before is what must survive
            n += 1


def _kill_all(process: psutil.Process) -> None:
    """SIGKILL to the server and every process it started, as a crash or the OOM killer would."""
    family = [process, *process.children(recursive=True)]
    for member in family:
        member.kill()
    psutil.wait_procs(family, timeout=10)


def _missing(database_url: str, done: Acknowledged) -> list[str]:
    """Every acknowledged write not found with its content, as `kind key`."""
    db = Database(make_engine(database_url))
    queries = {
        "runs": "SELECT external_id, title FROM traces",
        "annotations": "SELECT id, comment FROM annotations",
        "corrections": "SELECT id, why FROM corrections",
        "spans": "SELECT span_id, name FROM spans",
    }
    try:
        with db.engine.connect() as connection:
            # Ids compared without dashes: SQLite keeps a UUID as 32 hex digits, the API writes it dashed.
            found = {
                kind: {
                    str(key).replace("-", ""): value for key, value in connection.execute(text(query)).all()
                }
                for kind, query in queries.items()
            }
    finally:
        db.dispose()
    lost: list[str] = []
    for kind, stored in found.items():
        for key, content in getattr(done, kind).items():
            if stored.get(key.replace("-", "")) != content:
                lost.append(f"{kind} {key}")
    return lost


# How long a cycle's writers may go without one answer before the server is taken to be stuck.
FIRST_ANSWER_S = 60.0


def _wait_for_first_answer(done: Acknowledged, before: int, cycle: int) -> None:
    """Until the cycle's writers have one write acknowledged; fails if none is within FIRST_ANSWER_S."""
    deadline = time.monotonic() + FIRST_ANSWER_S
    while done.count() == before:
        assert time.monotonic() < deadline, (
            f"nothing was acknowledged in {FIRST_ANSWER_S:g} s of cycle {cycle} (seed {SEED})"
        )
        time.sleep(0.01)


@pytest.mark.parametrize("workers", [1, 2])
def test_every_acknowledged_write_survives_sigkill(database_url: str, workers: int) -> None:
    rng = random.Random(SEED * 10 + workers)
    done = Acknowledged()
    token = project_id = run_id = ""
    for cycle in range(CYCLES):
        with serving(database_url, "--workers", str(workers)) as (base, lines, process):
            if not token:
                said = TOKEN_LINE.search("".join(lines))
                assert said, lines
                token = said.group(1)
                headers = {"Authorization": f"Bearer {token}"}
                project_id = httpx.get(f"{base}/v1/projects", headers=headers).json()["data"][0]["id"]
                run_id = httpx.post(f"{base}/v1/runs", json=make_run(project_id), headers=headers).json()[
                    "id"
                ]
            before = done.count()
            stop = threading.Event()
            threads = [
                threading.Thread(target=_write_until_stopped, args=(base, token, write, stop))
                for write in _writers(base, token, project_id, run_id, cycle, done)
            ]
            for thread in threads:
                thread.start()
            # The kill comes a random moment after the cycle's first acknowledged write, not after the
            # start: on a loaded machine two workers may answer nothing for seconds, and a kill before the
            # first answer tests nothing (it failed so at load 5-14).
            _wait_for_first_answer(done, before, cycle)
            moment = rng.uniform(0.0, 1.5)
            time.sleep(moment)
            _kill_all(psutil.Process(process.pid))
            stop.set()
            for thread in threads:
                thread.join(timeout=20)
        lost = _missing(database_url, done)
        assert not lost, (
            f"cycle {cycle}, {workers} worker(s), killed {moment:.3f} s after the first answer "
            f"(REDLINE_KILL9_SEED={SEED}): "
            f"{len(lost)} of {done.count()} acknowledged writes lost: {lost[:5]}"
        )
    # The figure bench/kill9.py adds up (shown with `pytest -s`).
    print(f"kill9: {done.count()} acknowledged, 0 lost, {CYCLES} kills, {workers} worker(s), seed {SEED}")
    # The check itself finds what is missing, and what is there with other content.
    made_up = Acknowledged(runs={"kill9-never": "x"}, spans={next(iter(done.spans)): "renamed"})
    assert _missing(database_url, made_up) == ["runs kill9-never", f"spans {next(iter(done.spans))}"]
