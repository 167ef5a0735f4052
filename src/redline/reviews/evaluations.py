"""Evaluator results on many runs at once: what an experiment's batch of up to 1,000 results records.

The rule is `annotate.record_evaluation`'s, for whole runs (no span): one result per evaluator per run.
Recording it again with the same output type changes the value in place, so people's corrections stay
linked to it; with another output type the old result goes, with its corrections, and a new one is
made. Here it costs a few statements for the whole batch rather than several per result.

Callers check access to the runs and the values (`values.check_result`) first: this only writes.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, select, update
from sqlalchemy.orm import Session

from redline.annotations.models import Annotation
from redline.db import bulk_insert, execute_many, in_chunks, new_id, utcnow
from redline.identity.service import Actor
from redline.reviews.annotate import EVALUATOR
from redline.reviews.kinds import EVALUATOR_RESULT

_ANNOTATIONS = cast(Table, Annotation.__table__)
_CHANGE = (
    update(_ANNOTATIONS)
    .where(_ANNOTATIONS.c.id == bindparam("b_id"))
    .values(value=bindparam("b_value"), explanation=bindparam("b_explanation"), updated_at=bindparam("b_at"))
)


@dataclass(frozen=True)
class RunEvaluation:
    """An evaluator's result on a whole run, its value already checked against its output type."""

    run_id: uuid.UUID
    evaluator: str
    output_type: str
    value: Any
    explanation: str | None


def _recorded(
    session: Session, run_ids: Sequence[uuid.UUID], evaluators: Sequence[str]
) -> dict[tuple[uuid.UUID, str], list[tuple[uuid.UUID, str | None]]]:
    """The evaluator results already on these runs (not on their spans) by run and evaluator, oldest
    first: each one's id and output type."""
    found: dict[tuple[uuid.UUID, str], list[tuple[uuid.UUID, str | None]]] = defaultdict(list)
    for chunk in in_chunks(list(dict.fromkeys(run_ids))):
        rows = session.execute(
            select(
                Annotation.trace_id, Annotation.key, Annotation.id, Annotation.output_type, Annotation.span_id
            )
            .where(
                Annotation.trace_id.in_(chunk), EVALUATOR_RESULT, Annotation.key.in_(sorted(set(evaluators)))
            )
            .order_by(Annotation.created_at, Annotation.id)
        )
        # Those on the runs' spans are told apart here rather than by `span_id IS NULL` in SQL, which
        # PostgreSQL without statistics read through the span index: every annotation on no span.
        for run_id, key, annotation_id, output_type, span_id in rows:
            if span_id is None:
                found[(run_id, str(key))].append((annotation_id, output_type))
    return found


def record_on_runs(session: Session, actor: Actor, evaluations: Sequence[RunEvaluation]) -> None:
    """Record each evaluator result on its run, by `record_evaluation`'s rule; one per run and evaluator
    in `evaluations` (the caller refuses repeats)."""
    if not evaluations:
        return
    recorded = _recorded(session, [one.run_id for one in evaluations], [one.evaluator for one in evaluations])
    now = utcnow()
    added: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    removed: list[uuid.UUID] = []
    for one in evaluations:
        there = recorded.get((one.run_id, one.evaluator), [])
        kept = next((ident for ident, output_type in there if output_type == one.output_type), None)
        removed.extend(ident for ident, _ in there if ident != kept)
        if kept is not None:
            changed.append(
                {"b_id": kept, "b_value": one.value, "b_explanation": one.explanation, "b_at": now}
            )
            continue
        added.append(
            {
                "id": new_id(),
                "trace_id": one.run_id,
                "step_id": None,
                "span_id": None,
                "rating": None,
                "comment": None,
                "quote": None,
                "label_error": False,
                "label_error_note": None,
                "key": one.evaluator,
                "value": one.value,
                "explanation": one.explanation,
                "source": EVALUATOR,
                "output_type": one.output_type,
                "parent_id": None,
                "metadata": None,
                "author_id": actor.principal_id,
                "author_name": actor.name,
                "created_at": now,
                "updated_at": now,
            }
        )
    connection = session.connection()
    for chunk in in_chunks(removed):
        connection.execute(delete(_ANNOTATIONS).where(_ANNOTATIONS.c.id.in_(chunk)))
    if changed:
        execute_many(connection, _CHANGE, changed)
    bulk_insert(session, _ANNOTATIONS, added)
