"""What people and evaluators said about traces and their spans, read for showing beside them.

Values for review keys, and evaluator results each with the corrections people made of it. The rm
surface's ratings and comments have no key and are not read here. Callers check access first, and say
what is hidden from the reader (`annotations.hidden`: blind review).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from redline.annotations.hidden import NOTHING_HIDDEN, Hidden
from redline.annotations.models import Annotation
from redline.db import in_chunks
from redline.identity.service import Actor
from redline.reviews.annotate import EVALUATOR
from redline.reviews.targets import find_target
from redline.traces.models import Span


@dataclass
class Said:
    """One value or evaluator result, the span it is about (its own id; None for the trace), and, for
    an evaluator result, the corrections of it."""

    annotation: Annotation
    span_key: str | None
    corrections: list[Said] = field(default_factory=list)

    @property
    def is_evaluation(self) -> bool:
        return self.annotation.source == EVALUATOR


def said_about(
    session: Session, trace_ids: Iterable[uuid.UUID], hidden: Hidden
) -> dict[uuid.UUID, list[Said]]:
    """Per trace, its keyed values and evaluator results (corrections inside them), oldest first; the
    values `hidden` from the reader (blind review) left out."""
    ids = list(dict.fromkeys(trace_ids))
    found: dict[uuid.UUID, list[Said]] = {trace_id: [] for trace_id in ids}
    corrections: list[Said] = []
    by_id: dict[uuid.UUID, Said] = {}
    for chunk in in_chunks(ids):
        rows = session.execute(
            select(Annotation, Span.span_id)
            .outerjoin(Span, Span.id == Annotation.span_id)
            .where(
                Annotation.trace_id.in_(chunk),
                or_(Annotation.key.is_not(None), Annotation.source == EVALUATOR),
                *hidden.shown(),
            )
            .order_by(Annotation.created_at, Annotation.id)
        )
        for annotation, span_key in rows:
            said = Said(annotation, span_key)
            by_id[annotation.id] = said
            if annotation.parent_id is not None:
                corrections.append(said)
            else:
                found[annotation.trace_id].append(said)
    for correction in corrections:
        parent = by_id.get(correction.annotation.parent_id)  # type: ignore[arg-type]
        if parent is not None:
            parent.corrections.append(correction)
    return found


def own_value(said: Said, actor: Actor) -> bool:
    """Whether this is the actor's own value of a key, said as themselves rather than for an end user a
    service key named (`identity_id`): the value a review form shows the actor as theirs to change."""
    annotation = said.annotation
    return (
        not said.is_evaluation
        and annotation.key is not None
        and annotation.author_id == actor.principal_id
        and not (annotation.meta or {}).get("identity_id")
    )


def on_span(said: Iterable[Said], span_key: str | None) -> list[Said]:
    return [item for item in said if item.span_key == span_key]


def evaluations(session: Session, actor: Actor, trace_id: uuid.UUID | str, span_key: str) -> list[Said]:
    """The evaluator results on one span with their corrections; the read role is enough. Blind review
    hides people's values, never these, so nothing is left out."""
    target = find_target(session, actor, trace_id, span_key, "read")
    said = said_about(session, [target.trace.id], NOTHING_HIDDEN)[target.trace.id]
    return [item for item in on_span(said, target.span_key or None) if item.is_evaluation]
