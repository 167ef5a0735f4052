"""Adding many traces to an annotation queue the way people choose them (`queues.add_traces`): what was
added, what was there already and which refs named nothing, as given; on both stores."""

from __future__ import annotations

import uuid

import pytest

from redline.db import Database
from redline.errors import Invalid
from redline.identity import service as identity
from redline.ingest import runs as ingest
from redline.queues.annotation import service as queues
from redline.queues.annotation.schemas import QueueIn
from redline.queues.models import Queue
from redline.traces.selection import Added
from tests.conftest import bootstrap_admin
from tests.learning.test_reward_model_service import _runs


def _world(db: Database, count: int) -> tuple[identity.Actor, uuid.UUID, list[uuid.UUID], uuid.UUID]:
    """The admin, a queue of the first project, its traces and a trace of another project."""
    first = bootstrap_admin(db)
    with db.write() as session:
        admin = identity.operator(session)
        other = identity.create_project(session, admin, "second")
        made = ingest.record_runs(session, admin, _runs(first.project.id, count, "t"))
        [elsewhere] = ingest.record_runs(session, admin, _runs(other.id, 1, "o"))
        queue = queues.create_queue(
            session, admin, QueueIn(display_name="Refunds", description="", project_id=str(first.project.id))
        )
        return admin, queue.queue.id, [run.id for run in made], elsewhere.id


def test_known_traces_go_in_and_unknown_refs_come_back_as_typed(db: Database) -> None:
    admin, queue_id, ids, elsewhere = _world(db, 4)
    with db.write() as session:
        first = queues.add_traces(session, admin, queue_id, [str(ids[0]), "t-1"])
    assert first == Added(added=2, already=0, not_found=[])
    refs = ["t-1", str(ids[2]), "ticket-9", str(elsewhere), "t-3", str(ids[0])]
    with db.write() as session:
        second = queues.add_traces(session, admin, queue_id, refs)
    # The other project's trace is not one of this queue's project: named as given, like a typo.
    assert second == Added(added=2, already=2, not_found=["ticket-9", str(elsewhere)])
    with db.read() as session:
        view = queues.get_queue(session, admin, queue_id)
        items = queues.list_items(session, admin, queue_id, limit=10).items
    assert view.items_count == 4
    assert [item.trace_id for item in items] == [ids[0], ids[1], ids[2], ids[3]]
    assert all(item.span_key == "" for item in items)


def test_a_selection_longer_than_a_chunk_is_counted_once_each(db: Database) -> None:
    admin, queue_id, ids, _ = _world(db, 3)
    with db.write() as session:
        queues.add_traces(session, admin, queue_id, [str(ids[0])])
    # A generator of 1,203 refs: three chunks of 500, repeats and all.
    refs = (ref for _ in range(401) for ref in (str(ids[0]), str(ids[1]), "t-2"))
    with db.write() as session:
        done = queues.add_traces(session, admin, queue_id, refs)
    assert done == Added(added=2, already=1, not_found=[])
    with db.read() as session:
        assert queues.get_queue(session, admin, queue_id).items_count == 3


def test_nothing_known_adds_nothing_and_leaves_the_queue_as_it_was(db: Database) -> None:
    admin, queue_id, _, _ = _world(db, 1)
    with db.read() as session:
        before = session.get_one(Queue, queue_id).updated_at
    with db.write() as session:
        done = queues.add_traces(session, admin, queue_id, ["nope", "also-nope"])
    assert done == Added(added=0, already=0, not_found=["nope", "also-nope"])
    with db.read() as session:
        assert session.get_one(Queue, queue_id).updated_at == before


def test_a_reader_may_not_add(db: Database) -> None:
    admin, queue_id, ids, _ = _world(db, 1)
    with db.write() as session:
        reader = identity.create_user(session, admin, name="rita", kind="user")
        project_id = session.get_one(Queue, queue_id).project_id
        assert project_id is not None
        identity.set_member(session, admin, project_id, reader.id, "read")
        rita = identity.Actor.of(reader)
    with db.write() as session, pytest.raises(Exception, match="This needs the write role"):
        queues.add_traces(session, rita, queue_id, [str(ids[0])])


def test_the_traces_of_a_queue_in_the_order_they_came(db: Database) -> None:
    admin, queue_id, ids, _ = _world(db, 3)
    with db.write() as session:
        queues.add_traces(session, admin, queue_id, [str(ids[2]), str(ids[0])])
    with db.read() as session:
        assert queues.trace_ids(session, admin, queue_id) == [ids[2], ids[0]]


def test_a_queue_without_a_project_takes_no_traces(db: Database) -> None:
    admin, queue_id, ids, _ = _world(db, 1)
    with db.write() as session:
        session.get_one(Queue, queue_id).project_id = None
    with db.write() as session, pytest.raises(Invalid, match="This queue belongs to no project"):
        queues.add_traces(session, admin, queue_id, [str(ids[0])])
