"""Pairs from explicit ratings, exactly as rm-annotations.txt's four steps say, on both stores."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.annotations import service as annotation_service
from redline.annotations.schemas import AnnotationChange, AnnotationIn
from redline.db import Database
from redline.identity import service as identity
from redline.ingest import runs as ingest
from redline.learning.pairs import rating_pairs
from redline.traces import service as traces
from redline.traces.schemas import RunIn, StepIn
from tests.conftest import bootstrap_admin


def _conversation(name: str, turns: int) -> list[StepIn]:
    steps = [StepIn(role="system", content=f"You are {name}'s support agent.")]
    for turn in range(turns):
        steps.append(StepIn(role="user", content=f"{name} asks {turn}"))
        steps.append(StepIn(role="assistant", content=f"{name} answers {turn}"))
    return steps


def _store(db: Database, names: dict[str, int]) -> tuple[dict[str, Any], identity.Actor]:
    first = bootstrap_admin(db)
    with db.write() as session:
        actor = identity.operator(session)
        runs = [
            RunIn(
                project_id=first.project.id,
                external_id=name,
                status="completed",
                steps=_conversation(name, turns),
            )
            for name, turns in names.items()
        ]
        stored = ingest.record_runs(session, actor, runs)
    views = {}
    with db.read() as session:
        for name, run in zip(names, stored, strict=True):
            views[name] = traces.get_run(session, actor, run.id)
    return views, actor


def _rate(
    db: Database, actor: identity.Actor, view: Any, rating: int | None, step: int | None = None, **more: Any
) -> uuid.UUID:
    body = AnnotationIn(
        rating=rating, step_id=view.steps[step].id if step is not None else None, comment=more.get("comment")
    )
    with db.write() as session:
        return annotation_service.create(session, actor, view.trace.id, body).id


def test_the_documents_example_gives_exactly_two_pairs(db: Database) -> None:
    views, actor = _store(db, {"A": 2, "B": 2, "C": 2, "D": 3, "E": 2, "F": 2})
    _rate(db, actor, views["A"], +1)
    _rate(db, actor, views["B"], -1)
    _rate(db, actor, views["D"], -1, step=4)
    _rate(db, actor, views["E"], +1, step=2)
    # Ratings that cancel: C as a whole, and step 1 of D.
    _rate(db, actor, views["C"], +1)
    _rate(db, actor, views["C"], -1)
    _rate(db, actor, views["D"], +1, step=1)
    _rate(db, actor, views["D"], -1, step=1)
    # A flagged rating counts for nothing.
    flagged = _rate(db, actor, views["F"], +1)
    with db.write() as session:
        annotation_service.change(
            session, actor, flagged, AnnotationChange(label_error=True, label_error_note="wrong")
        )
    # A system step can be commented on, and that is no rating.
    _rate(db, actor, views["F"], None, step=0, comment="The prompt forgets the refund policy")

    with db.read() as session:
        pairs = rating_pairs(session, [v.trace.id for v in views.values()])

    assert len(pairs) == 2
    by_granularity = {pair.granularity: pair for pair in pairs}
    assert (
        by_granularity["trace"].chosen
        == "user: A asks 0\n\nassistant: A answers 0\n\nuser: A asks 1\n\nassistant: A answers 1"
    )
    assert by_granularity["trace"].rejected.startswith("user: B asks 0")
    assert by_granularity["step"].chosen == "user: E asks 0\n\nassistant: E answers 0"
    assert by_granularity["step"].rejected == (
        "user: D asks 0\n\nassistant: D answers 0\n\nuser: D asks 1\n\nassistant: D answers 1"
    )
    step_pair = by_granularity["step"]
    assert step_pair.source == "rating"
    assert step_pair.source_ids["chosen"]["step_id"] == str(views["E"].steps[2].id)
    assert step_pair.source_ids["rejected"]["trace_id"] == str(views["D"].trace.id)
    assert len(step_pair.source_ids["rejected"]["annotation_ids"]) == 1


def test_only_the_selected_traces_supply_pairs(db: Database) -> None:
    views, actor = _store(db, {"A": 1, "B": 1, "C": 1})
    _rate(db, actor, views["A"], +1)
    _rate(db, actor, views["B"], -1)
    _rate(db, actor, views["C"], -1)
    with db.read() as session:
        assert len(rating_pairs(session, [views["A"].trace.id, views["B"].trace.id])) == 1
        assert (
            len(rating_pairs(session, [views["A"].trace.id, views["B"].trace.id, views["C"].trace.id])) == 2
        )
        assert rating_pairs(session, [views["A"].trace.id]) == []


scores = st.lists(st.integers(min_value=-2, max_value=2), min_size=2, max_size=8)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trace_scores=scores, step_scores=scores, cap=st.integers(min_value=1, max_value=12))
def test_pairing_rules_hold_for_any_ratings(
    db: Database, trace_scores: list[int], step_scores: list[int], cap: int
) -> None:
    names = {f"t{uuid.uuid4().hex[:8]}": 1 for _ in trace_scores}
    views, actor = _store(db, names)
    for view, trace_score, step_score in zip(
        views.values(), trace_scores, step_scores + [0] * 8, strict=False
    ):
        for _ in range(abs(trace_score)):
            _rate(db, actor, view, 1 if trace_score > 0 else -1)
        for _ in range(abs(step_score)):
            _rate(db, actor, view, 1 if step_score > 0 else -1, step=2)
    ids = [view.trace.id for view in views.values()]
    with db.read() as session:
        pairs = rating_pairs(session, ids, max_pairs=cap)
        again = rating_pairs(session, ids, max_pairs=cap)
    used_steps = step_scores[: len(trace_scores)]
    expected = sum(s > 0 for s in trace_scores) * sum(s < 0 for s in trace_scores) + sum(
        s > 0 for s in used_steps
    ) * sum(s < 0 for s in used_steps)
    assert len(pairs) == min(expected, cap)
    assert pairs == again
    for pair in pairs:
        sides = pair.source_ids
        assert (
            ("step_id" in sides["chosen"]) == ("step_id" in sides["rejected"]) == (pair.granularity == "step")
        )
        assert sides["chosen"]["trace_id"] != sides["rejected"]["trace_id"]
