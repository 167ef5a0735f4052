"""Retention over HTTP and in its background pass, on both stores: setting it (admins only, its
refusals), a pass erasing exactly the runs past it in batches (what people said staying, their expert
queue items closing as erased, the lists' counts unchanged), turning it off mid-pass, the next pass
booked, and a SQLite store handing the erased pages back to the file system."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from redline.db import Database, give_back_space
from redline.ingest import retention as passes
from redline.jobs.models import QUEUED, Job
from redline.traces import retention
from redline.traces.models import Step, Trace
from tests.conftest import Harness, run_waiting_jobs

NOW = datetime.now(UTC)
RULE = {"name": "Everything"}


def _path(harness: Harness, project_id: str | None = None) -> str:
    return f"/v1/projects/{project_id or harness.project_id}/retention"


def _set(harness: Harness, days: Any, headers: dict[str, str] | None = None) -> Any:
    return harness.client.put(_path(harness), json={"retentionDays": days}, headers=headers or harness.admin)


def _runs(harness: Harness, ages_in_days: list[float], **fields: Any) -> list[str]:
    runs = [
        harness.run(
            externalId=f"run-{uuid.uuid4().hex[:8]}",
            startedAt=(NOW - timedelta(days=age)).isoformat(),
            metadata={"customer_id": "acme"},
            **fields,
        )
        for age in ages_in_days
    ]
    answer = harness.client.post("/v1/runs/batch", json={"runs": runs}, headers=harness.admin)
    assert answer.status_code in (200, 201), answer.text
    return [run["id"] for run in answer.json()["data"]]


def _run(harness: Harness, run_id: str) -> dict[str, Any]:
    answer = harness.client.get(f"/v1/runs/{run_id}", headers=harness.admin)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _error(answer: Any, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    error: dict[str, Any] = answer.json()["error"]
    return error


# -------------------------------------------------------------------------------------------- setting


def test_a_project_keeps_its_runs_for_good_until_an_admin_sets_a_retention(harness: Harness) -> None:
    answer = harness.client.get(_path(harness), headers=harness.admin)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "retentionDays": None,
        "cutoff": None,
        "lastPassAt": None,
        "nextPassAt": None,
        "lastPassErased": None,
    }
    made = _set(harness, 30)
    assert made.status_code == 200, made.text
    body = made.json()
    assert body["retentionDays"] == 30
    cutoff = datetime.fromisoformat(body["cutoff"])
    assert abs(cutoff - (datetime.now(UTC) - timedelta(days=30))) < timedelta(minutes=1)
    assert abs(datetime.fromisoformat(body["nextPassAt"]) - datetime.now(UTC)) < timedelta(minutes=1)
    again = harness.client.get(_path(harness), headers=harness.admin).json()
    assert {**again, "cutoff": None} == {**body, "cutoff": None}, "the cutoff moves on with the clock"

    off = _set(harness, None).json()
    assert (off["retentionDays"], off["cutoff"], off["nextPassAt"]) == (None, None, None)


@pytest.mark.parametrize("days", [0, -1, 36_501, 10**400])
def test_a_retention_that_is_no_number_of_days_is_refused(harness: Harness, days: int) -> None:
    error = _error(_set(harness, days), 400)
    assert error["message"] == (
        "retentionDays: give a whole number of days from 1 to 36,500, or none to keep runs for good."
    )
    assert harness.client.get(_path(harness), headers=harness.admin).json()["retentionDays"] is None


@pytest.mark.parametrize("body", [{}, {"retentionDays": "30"}, {"retentionDays": True}, {"days": 3}])
def test_a_body_without_whole_days_is_refused(harness: Harness, body: dict[str, Any]) -> None:
    answer = harness.client.put(_path(harness), json=body, headers=harness.admin)
    assert _error(answer, 400)["code"] == "bad-input"


def test_only_project_admins_change_retention_and_readers_see_it(harness: Harness) -> None:
    writer = harness.caller("writer", role="write")
    assert _error(_set(harness, 30, writer), 403)["code"] == "permission-denied"
    assert harness.client.get(_path(harness), headers=writer).status_code == 200
    stranger = harness.caller("stranger")
    assert _error(harness.client.get(_path(harness), headers=stranger), 404)["code"] == "project-not-found"
    assert _error(_set(harness, 30, stranger), 404)["code"] == "project-not-found"
    missing = harness.client.get(_path(harness, str(uuid.uuid4())), headers=harness.admin)
    assert _error(missing, 404)["code"] == "project-not-found"


# ------------------------------------------------------------------------------------------- the pass


def test_a_pass_erases_the_runs_past_retention_and_keeps_what_people_said(harness: Harness) -> None:
    rule = harness.client.post(
        f"/v1/projects/{harness.project_id}/queue-rules", json=RULE, headers=harness.admin
    )
    assert rule.status_code == 201, rule.text
    old = _runs(harness, [40, 35, 31])
    recent = _runs(harness, [29, 1])
    step_id = _run(harness, old[0])["steps"][1]["id"]
    said = harness.client.post(
        f"/api/v1/rm/traces/{old[0]}/annotations",
        json={"rating": -1, "comment": "wrong refund", "step_id": step_id},
        headers=harness.admin,
    )
    assert said.status_code in (200, 201), said.text
    corrected = harness.client.post(
        "/v1/corrections",
        json={"runId": old[1], "answer": "wrong", "why": "refunds need a receipt"},
        headers=harness.admin,
    )
    assert corrected.status_code == 201, corrected.text
    total_before = harness.client.get("/api/v1/rm/traces", headers=harness.admin).json()["total"]

    assert _set(harness, 30).status_code == 200
    assert run_waiting_jobs(harness.db) >= 1

    for run_id in old:
        run = _run(harness, run_id)
        assert "erasedAt" in run
        assert (run.get("input"), run.get("output"), run.get("metadata") or None) == (None, None, None)
        assert {step["content"] for step in run["steps"]} == {""}
    for run_id in recent:
        run = _run(harness, run_id)
        assert "erasedAt" not in run
        assert run["metadata"] == {"customer_id": "acme"}
    annotations = harness.client.get(f"/api/v1/rm/traces/{old[0]}/annotations", headers=harness.admin)
    assert [a["comment"] for a in annotations.json()] == ["wrong refund"]
    correction = harness.client.get(f"/v1/corrections?runId={old[1]}", headers=harness.admin).json()
    assert [c["answer"] for c in correction["data"]] == ["wrong"]
    queue = harness.client.get(f"/v1/projects/{harness.project_id}/expert-queue", headers=harness.admin)
    states = {item["runId"]: item["state"] for item in queue.json()["data"]}
    assert [states[run_id] for run_id in old] == ["erased", "corrected", "erased"], "closed ones stay closed"
    assert [states[run_id] for run_id in recent] == ["open", "open"]
    assert harness.client.get("/api/v1/rm/traces", headers=harness.admin).json()["total"] == total_before

    kept = harness.client.get(_path(harness), headers=harness.admin).json()
    assert kept["lastPassErased"] == 3
    next_at = datetime.fromisoformat(kept["nextPassAt"])
    assert (
        timedelta(minutes=59) < next_at - datetime.fromisoformat(kept["lastPassAt"]) < timedelta(minutes=61)
    )
    assert run_waiting_jobs(harness.db) == 0, "the next pass waits for its hour"


def test_a_pass_goes_in_batches_and_stops_when_retention_is_turned_off(harness: Harness) -> None:
    old = _runs(harness, [50 - n for n in range(7)])
    project_id = uuid.UUID(harness.project_id)
    assert _set(harness, 30).status_code == 200
    batches: list[int] = []
    with harness.db.write() as session:
        batches.append(passes.erase_due(session, project_id, 3) or 0)
    assert batches == [3]
    with harness.db.read() as session:
        erased = set(session.scalars(select(Trace.id).where(Trace.erased_at.is_not(None))))
    assert erased == {uuid.UUID(run_id) for run_id in old[:3]}, "the oldest go first"

    done = passes.run_pass(harness.db, project_id, batches.append, size=3)
    assert (done["erased"], batches[1:]) == (4, [3, 4])
    with harness.db.read() as session:
        assert session.scalar(select(Job.id).where(Job.kind == retention.RETENTION_JOB, Job.state == QUEUED))

    assert _set(harness, None).status_code == 200
    assert passes.run_pass(harness.db, project_id) == {"erased": 0, "pagesGivenBack": 0, "retention": False}


def test_a_pass_that_gives_up_is_tried_again_at_the_next_hour(harness: Harness) -> None:
    project_id = uuid.uuid4()
    with harness.db.write() as session:
        passes.RETENTION_PASS.gave_up(session, {"project_id": str(project_id)}, "the store went away")
    with harness.db.read() as session:
        job = session.scalars(select(Job).where(Job.subject == str(project_id))).one()
    assert job.state == QUEUED
    assert timedelta(minutes=59) < job.run_after - datetime.now(UTC) < timedelta(minutes=61)


def test_erasing_leaves_the_step_rows_that_annotations_point_at(harness: Harness) -> None:
    [run_id] = _runs(harness, [40])
    _set(harness, 30)
    run_waiting_jobs(harness.db)
    with harness.db.read() as session:
        steps = list(session.scalars(select(Step).where(Step.trace_id == uuid.UUID(run_id))))
    assert len(steps) == 5
    assert {(s.content, s.tool_input, s.meta) for s in steps} == {("", None, None)}


# --------------------------------------------------------------------------------------- giving back


def test_a_new_sqlite_store_gives_the_erased_pages_back(harness: Harness, db: Database) -> None:
    if db.dialect_name != "sqlite":
        assert give_back_space(db.engine) == 0
        return
    with db.engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        assert raw is not None
        assert raw.execute("PRAGMA auto_vacuum").fetchone()[0] == 2, "incremental"
        long_text = "a long answer " * 1_000
        for _ in range(4):
            _runs(harness, [40] * 10, output={"answer": long_text})
        before = raw.execute("PRAGMA page_count").fetchone()[0]
        _set(harness, 30)
        run_waiting_jobs(harness.db)
        after = raw.execute("PRAGMA page_count").fetchone()[0]
        assert raw.execute("PRAGMA freelist_count").fetchone()[0] == 0
    assert after < before - 40, (before, after)
    assert harness.client.get(_path(harness), headers=harness.admin).json()["lastPassErased"] == 40


def test_erased_steps_leave_their_pages_whole_so_sqlite_gives_them_back(
    harness: Harness, db: Database
) -> None:
    """Steps of a few hundred bytes share pages: blanked in place, each page would stay allocated and
    nearly empty. Moved to the end as they are erased, the old runs' pages empty whole."""
    if db.dialect_name != "sqlite":
        return
    reply = "a reply of a few hundred bytes, as most agent steps are. " * 8
    steps = [{"role": "assistant", "content": f"{n}: {reply}"} for n in range(10)]
    old = [run for _ in range(3) for run in _runs(harness, [40] * 100, steps=steps)]
    [kept] = _runs(harness, [1], steps=steps)
    with harness.db.read() as session:
        step_id = session.scalars(select(Step.id).where(Step.trace_id == uuid.UUID(old[7]))).first()
    note = {"type": "comment", "comment": "the refund was wrong", "step_id": str(step_id)}
    assert (
        harness.client.post(
            f"/api/v1/rm/traces/{old[7]}/annotations", json=note, headers=harness.admin
        ).status_code
        == 200
    )
    with db.engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        assert raw is not None
        page_size = raw.execute("PRAGMA page_size").fetchone()[0]
        before = raw.execute("PRAGMA page_count").fetchone()[0]
        _set(harness, 30)
        run_waiting_jobs(harness.db)
        after = raw.execute("PRAGMA page_count").fetchone()[0]
    step_pages = 300 * 10 * len(reply) // page_size
    assert before - after > step_pages * 0.8, (before, after, step_pages)
    erased = _run(harness, old[7])
    assert erased["erasedAt"] is not None
    assert [step["content"] for step in erased["steps"]] == [""] * 10
    assert [step["content"] for step in _run(harness, kept)["steps"]] == [step["content"] for step in steps]
    annotations = harness.client.get(f"/api/v1/rm/traces/{old[7]}/annotations", headers=harness.admin).json()
    assert [a["step_id"] for a in annotations] == [str(step_id)]
