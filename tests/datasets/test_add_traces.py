"""A datapoint from each of many traces (`datasets.add_traces`): a trace the dataset already has one from
is already there, one the caller can't read is not found, and the dataset moves one version on for the
whole selection; on both stores."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from redline.datasets import service as datasets
from redline.datasets.models import Datapoint
from redline.datasets.schemas import DatasetIn
from redline.db import Database
from redline.identity import service as identity
from redline.ingest import runs as ingest
from redline.traces.schemas import RunIn, StepIn
from redline.traces.selection import Added
from tests.conftest import bootstrap_admin


def _runs(project_id: uuid.UUID, count: int) -> list[RunIn]:
    return [
        RunIn(
            project_id=project_id,
            external_id=f"t-{number}",
            status="completed",
            input={"question": f"question {number}"},
            steps=[
                StepIn(role="user", content=f"question {number}"),
                StepIn(role="assistant", content=f"answer {number}"),
            ],
        )
        for number in range(count)
    ]


def test_each_trace_once_in_one_version(db: Database) -> None:
    first = bootstrap_admin(db)
    with db.write() as session:
        admin = identity.operator(session)
        ids = [run.id for run in ingest.record_runs(session, admin, _runs(first.project.id, 603))]
        dataset = datasets.create_dataset(session, admin, DatasetIn(display_name="Regressions")).dataset.id
    with db.write() as session:
        assert datasets.add_traces(session, admin, dataset, ids[:2]) == Added(added=2)
    gone = uuid.uuid4()
    # Two chunks of 500 and more, repeats and an id that names no trace.
    selection = iter([*ids, ids[5], gone])
    with db.write() as session:
        done = datasets.add_traces(session, admin, dataset, selection)
    assert done == Added(added=601, already=2, not_found=[str(gone)])
    with db.read() as session:
        view = datasets.get_dataset(session, admin, dataset)
        points = list(session.scalars(select(Datapoint).where(Datapoint.dataset_id == dataset)))
    assert view.datapoints_count == 603
    assert view.dataset.version == 2
    assert sorted(str(point.trace_id) for point in points) == sorted(map(str, ids))
    by_trace = {point.trace_id: point for point in points}
    assert by_trace[ids[7]].inputs == {"question": "question 7"}
    assert by_trace[ids[7]].expected_output == "answer 7"
    assert {point.snapshot_version for point in points if point.trace_id not in ids[:2]} == {2}


def test_a_trace_the_caller_cannot_read_is_not_found_and_nothing_moves(db: Database) -> None:
    first = bootstrap_admin(db)
    with db.write() as session:
        admin = identity.operator(session)
        second = identity.create_project(session, admin, "second")
        [hidden] = ingest.record_runs(session, admin, _runs(second.id, 1))
        writer = identity.create_user(session, admin, name="wes", kind="user")
        identity.set_member(session, admin, first.project.id, writer.id, "write")
        wes = identity.Actor.of(writer)
        dataset = datasets.create_dataset(session, wes, DatasetIn(display_name="Mine")).dataset.id
    with db.write() as session:
        done = datasets.add_traces(session, wes, dataset, [hidden.id])
    assert done == Added(not_found=[str(hidden.id)])
    with db.read() as session:
        assert datasets.get_dataset(session, wes, dataset).dataset.version == 0
