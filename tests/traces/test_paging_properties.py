"""Properties of listing runs: every run once, newest first, whatever the page size and time ties."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from redline.db import Database
from redline.errors import Invalid
from redline.identity import service as identity
from redline.ingest import runs as ingest
from redline.traces import service as traces
from redline.traces.models import Trace
from redline.traces.schemas import RunIn, StepIn
from tests.conftest import bootstrap_admin

BASE = datetime(2026, 11, 1, tzinfo=UTC)

# Few distinct minutes for many runs, so ties on startedAt are common and the id must break them.
start_minutes = st.lists(st.integers(min_value=0, max_value=5), min_size=0, max_size=25)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(minutes=start_minutes, limit=st.integers(min_value=1, max_value=7))
def test_pages_cover_every_run_once_in_order(db: Database, minutes: list[int], limit: int) -> None:
    bootstrap_admin(db)
    with db.write() as session:
        actor = identity.operator(session)
        project = identity.create_project(session, actor, f"p-{uuid.uuid4()}")
        stored = ingest.record_runs(
            session,
            actor,
            [
                RunIn(project_id=project.id, status="completed", started_at=BASE + timedelta(minutes=m))
                for m in minutes
            ],
        )
    expected = sorted(
        ((BASE + timedelta(minutes=m), run.id) for m, run in zip(minutes, stored, strict=True)), reverse=True
    )
    seen = []
    cursor = None
    with db.read() as session:
        actor = identity.operator(session)
        while True:
            page = traces.list_runs(
                session, actor, traces.RunFilters(project_id=project.id), limit=limit, cursor=cursor
            )
            assert len(page.items) <= limit
            seen += [(view.trace.started_at, view.trace.id) for view in page.items]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
    assert [run_id for _, run_id in seen] == [run_id for _, run_id in expected]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=st.integers(min_value=1, max_value=12), data=st.data())
def test_a_batch_with_one_bad_run_writes_nothing(db: Database, size: int, data: st.DataObject) -> None:
    first = bootstrap_admin(db)
    bad = data.draw(st.integers(min_value=0, max_value=size - 1))
    runs = [
        RunIn(
            project_id=first.project.id,
            external_id=f"r{i}",
            agent=f"agent-{i}",
            status="completed",
            steps=[StepIn(role="user", content=str(i))],
        )
        for i in range(size)
    ]
    # A run naming an agent id the project doesn't have fails inside the service, mid-batch.
    runs[bad] = runs[bad].model_copy(update={"agent": None, "agent_id": first.project.id})
    with db.read() as session:
        before = session.scalar(select(func.count()).select_from(Trace))
    with pytest.raises(Invalid) as refused, db.write() as session:
        ingest.record_runs(session, identity.operator(session), runs)
    assert refused.value.details == {"index": bad, "field": "agentId"}
    with db.read() as session:
        assert session.scalar(select(func.count()).select_from(Trace)) == before
