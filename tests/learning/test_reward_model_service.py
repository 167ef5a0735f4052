"""The reward-model service's batched access check, and the evidence a pair records, on both stores.

`readable_traces` checks a chunk of traces per query instead of calling `readable_trace` per trace;
these tests hold it to `readable_trace`'s answer for each kind of caller and trace, and to naming the
first unreadable trace in the order given, wherever the chunks fall. `_annotation_ids` asks only for
the targets in pairs; the evidence must still be every unflagged rating of the target, oldest first.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest
from sqlalchemy import select

from redline.annotations import service as annotation_service
from redline.annotations.models import Annotation
from redline.annotations.schemas import AnnotationChange, AnnotationIn
from redline.db import IN_LIST_CHUNK, Database
from redline.errors import NotFound
from redline.identity import service as identity
from redline.identity import workspaces
from redline.ingest import runs as ingest
from redline.learning import service as learning
from redline.learning.pairs import rating_pairs
from redline.traces import service as traces
from redline.traces.schemas import RunIn, StepIn
from tests.conftest import bootstrap_admin

CHUNK = IN_LIST_CHUNK


def _runs(project_id: uuid.UUID, count: int, prefix: str) -> list[RunIn]:
    return [
        RunIn(
            project_id=project_id,
            external_id=f"{prefix}-{number}",
            status="completed",
            steps=[
                StepIn(role="system", content="You are a support agent."),
                StepIn(role="user", content=f"{prefix} asks {number}"),
                StepIn(role="assistant", content=f"{prefix} answers {number}"),
            ],
        )
        for number in range(count)
    ]


@dataclass
class World:
    """Two projects of one workspace and who can read what in them."""

    admin: identity.Actor
    reader: identity.Actor  # read role in the first project only
    stranger: identity.Actor  # a workspace admin of another workspace
    visible: list[uuid.UUID]  # in the first project
    hidden: uuid.UUID  # in the second project
    erased: uuid.UUID  # in the first project, content erased


def _world(db: Database, visible: int) -> World:
    first = bootstrap_admin(db)
    with db.write() as session:
        admin = identity.operator(session)
        second = identity.create_project(session, admin, "second")
        reader = identity.create_user(session, admin, name="reader", kind="user")
        identity.set_member(session, admin, first.project.id, reader.id, "read")
        elsewhere = workspaces.new_workspace(session, "elsewhere")
        shown = ingest.record_runs(session, admin, _runs(first.project.id, visible, "v"))
        [hidden] = ingest.record_runs(session, admin, _runs(second.id, 1, "h"))
        [erased] = ingest.record_runs(session, admin, _runs(first.project.id, 1, "e"))
        ingest.erase_run(session, admin, erased.id)
        return World(
            admin=admin,
            reader=identity.Actor.of(reader),
            stranger=identity.Actor(
                workspace_id=elsewhere.id,
                principal_id=None,
                name="stranger",
                kind="user",
                workspace_admin=True,
            ),
            visible=[run.id for run in shown],
            hidden=hidden.id,
            erased=erased.id,
        )


def _refused(db: Database, actor: identity.Actor, trace_ids: list[uuid.UUID]) -> str | None:
    """The message `readable_traces` refuses with, or None when it lets every trace through."""
    with db.read() as session:
        try:
            learning.readable_traces(session, actor, trace_ids)
        except NotFound as error:
            return error.message
    return None


def test_access_is_what_readable_trace_says_for_every_caller_and_trace(db: Database) -> None:
    world = _world(db, 1)
    missing = uuid.uuid4()
    for actor in (world.admin, world.reader, world.stranger):
        for trace_id in (world.visible[0], world.hidden, world.erased, missing):
            with db.read() as session:
                try:
                    traces.readable_trace(session, actor, trace_id, "read")
                    expected = None
                except NotFound:
                    expected = f"Trace {trace_id} not found"
            assert _refused(db, actor, [trace_id]) == expected, (actor.name, trace_id)
    # The cases that matter, spelled out: an erased trace is still readable (it has no pairs to give).
    assert _refused(db, world.reader, [world.erased]) is None
    assert _refused(db, world.reader, [world.hidden]) == f"Trace {world.hidden} not found"
    assert _refused(db, world.stranger, [world.visible[0]]) == f"Trace {world.visible[0]} not found"


@pytest.mark.parametrize(
    ("hidden_at", "missing_at", "named"),
    [
        (CHUNK + 2, CHUNK + 4, "hidden"),  # both in the second chunk
        (CHUNK + 4, CHUNK + 2, "missing"),
        (3, CHUNK + 1, "hidden"),  # the first chunk's is named, the later chunk's never looked at
        (CHUNK + 1, 0, "missing"),
    ],
)
def test_the_first_unreadable_trace_in_the_order_given_is_named(
    db: Database, hidden_at: int, missing_at: int, named: str
) -> None:
    world = _world(db, CHUNK + 3)
    missing = uuid.uuid4()
    ids = list(world.visible)
    for position, trace_id in sorted([(hidden_at, world.hidden), (missing_at, missing)]):
        ids.insert(position, trace_id)
    wanted = world.hidden if named == "hidden" else missing
    assert _refused(db, world.reader, ids) == f"Trace {wanted} not found"
    # The admin reads the hidden trace: only the missing one is left to name.
    assert _refused(db, world.admin, ids) == f"Trace {missing} not found"


def testreadable_traces_keep_the_order_given_without_repeats(db: Database) -> None:
    world = _world(db, CHUNK + 3)
    ids = [*reversed(world.visible), world.visible[0], world.visible[-1], world.erased]
    with db.read() as session:
        assert learning.readable_traces(session, world.reader, ids) == [
            *reversed(world.visible),
            world.erased,
        ]
        assert learning.readable_traces(session, world.reader, []) == []


def _rate(
    db: Database, actor: identity.Actor, trace_id: uuid.UUID, rating: int | None, step_id: uuid.UUID | None
) -> uuid.UUID:
    with db.write() as session:
        body = AnnotationIn(rating=rating, step_id=step_id, comment=None if rating else "just a note")
        return annotation_service.create(session, actor, trace_id, body).id


def test_a_pair_records_every_unflagged_rating_of_its_targets_oldest_first(db: Database) -> None:
    world = _world(db, 2)
    good, bad = world.visible
    with db.read() as session:
        good_step, bad_step = (traces.get_run(session, world.admin, t).steps[2].id for t in (good, bad))
    admin = world.admin
    # The good trace: +1 +1 −1 as a whole (sum +1), a flagged +1 and a comment that count for nothing,
    # and +1 +1 on its answer, which are the step's evidence, not the trace's.
    whole = [_rate(db, admin, good, rating, None) for rating in (1, 1, -1)]
    flagged = _rate(db, admin, good, 1, None)
    with db.write() as session:
        annotation_service.change(session, admin, flagged, AnnotationChange(label_error=True))
    _rate(db, admin, good, None, None)
    steps = [_rate(db, admin, good, 1, good_step) for _ in range(2)]
    against = _rate(db, admin, bad, -1, None)
    against_step = _rate(db, admin, bad, -1, bad_step)

    def oldest_first(ids: list[uuid.UUID]) -> list[str]:
        with db.read() as session:
            query = select(Annotation.id).where(Annotation.id.in_(ids))
            return [str(i) for i in session.scalars(query.order_by(Annotation.created_at, Annotation.id))]

    with db.read() as session:
        pairs = {pair.granularity: pair for pair in rating_pairs(session, [good, bad])}
    assert set(pairs) == {"trace", "step"}
    # Who said it: the ratings' one author, the operator (no principal).
    who = {"reviewers": [{"id": None, "name": admin.name}]}
    assert pairs["trace"].source_ids == {
        "chosen": {"trace_id": str(good), "annotation_ids": oldest_first(whole), **who},
        "rejected": {"trace_id": str(bad), "annotation_ids": [str(against)], **who},
    }
    assert pairs["step"].source_ids == {
        "chosen": {
            "trace_id": str(good), "step_id": str(good_step), "annotation_ids": oldest_first(steps), **who,
        },
        "rejected": {
            "trace_id": str(bad), "step_id": str(bad_step), "annotation_ids": [str(against_step)], **who,
        },
    }  # fmt: skip
    assert pairs["step"].chosen == "user: v asks 0\n\nassistant: v answers 0"
