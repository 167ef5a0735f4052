"""Holds of the expert queue under concurrency, on both stores (PostgreSQL is where they race for real):
eight correctors taking "next" and correcting over HTTP against a live server. No run ever has more
people holding or having corrected it than its rule wants, no place is held twice, and each run ends
with exactly the correctors it wanted."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import func, select

from redline.db import Database, utcnow
from redline.queues import holds
from redline.queues.expert.places import ROWS
from redline.queues.models import ExpertItemCorrector
from tests.concurrency import run_at_once, watching
from tests.liveserver import LiveServer, live_server
from tests.queues.test_overlap_races import _http, _ok, _people, _run

__all__ = ["live_server"]

CORRECTORS = 8
RUNS = 6


def _over_places(db: Database, wanted: int) -> list[Any]:
    """Runs with more people holding (live) or having corrected them in a place than the rule wants."""
    row = ExpertItemCorrector
    with db.read() as session:
        return list(
            session.execute(
                select(row.run_id, func.count())
                .where(row.slot.is_not(None), holds.occupies(ROWS, row, utcnow()))
                .group_by(row.run_id)
                .having(func.count() > wanted)
            )
        )


@pytest.mark.parametrize("wanted", [2, 3])
def test_eight_correctors_taking_next_and_correcting_never_overfill_a_run(
    live_server: LiveServer, db: Database, wanted: int
) -> None:
    server = live_server
    project = server.project_id
    with _http(server) as admin:
        rule = {"name": f"race {wanted}", "correctorsWanted": wanted}
        _ok(admin.post(f"/v1/projects/{project}/queue-rules", json=rule), 201)
        runs = [_ok(admin.post("/v1/runs", json=_run(project, number)), 201)["id"] for number in range(RUNS)]
        people = _people(admin, project, CORRECTORS, f"c{wanted}")
    corrected: dict[str, list[str]] = {}
    refused: list[str] = []
    start = threading.Barrier(CORRECTORS)

    def correct(number: int) -> None:
        person, token = people[number]
        mine: list[str] = []
        with _http(server, token) as http:
            start.wait()
            while True:
                taken = _ok(http.post(f"/v1/projects/{project}/expert-queue/next"))
                if taken["item"] is None:
                    break
                assert taken["hold"]["state"] == "held", taken
                run = taken["item"]["runId"]
                made = http.post("/v1/corrections", json={"runId": run, "answer": "right"})
                if made.status_code != 201:
                    refused.append(made.text)
                    break
                mine.append(run)
        corrected[person] = mine

    # A watcher reads the store all along: never a run over its places, whatever the moment.
    with watching(lambda: _over_places(db, wanted)) as seen:
        assert run_at_once(correct, CORRECTORS) == []
    assert refused == []
    assert seen == []
    everyone = [run for mine in corrected.values() for run in mine]
    # Each run corrected by exactly `wanted` people, none of them twice, and closed.
    assert Counter(everyone) == dict.fromkeys(runs, wanted)
    assert all(len(set(mine)) == len(mine) for mine in corrected.values())
    with _http(server) as admin:
        queue = _ok(admin.get(f"/v1/projects/{project}/expert-queue", params={"limit": 0, "state": "open"}))
        progress = _ok(admin.get(f"/v1/projects/{project}/expert-queue/progress"))
    assert queue["total"] == 0
    assert (progress["waiting"], progress["held"]) == (0, 0)
    assert sum(one["corrected"] for one in progress["correctors"]) == RUNS * wanted
    with db.read() as session:
        slots = session.execute(
            select(ExpertItemCorrector.run_id, ExpertItemCorrector.slot, ExpertItemCorrector.state)
        ).all()
    assert {state for _, _, state in slots} == {"corrected"}
    assert sorted(Counter(run for run, _, _ in slots).values()) == [wanted] * RUNS
    assert {slot for _, slot, _ in slots} == set(range(wanted))
    assert {str(run) for run, _, _ in slots} == {str(uuid.UUID(run)) for run in runs}
