"""Preference pairs from explicit ratings, as rm-annotations.txt lays it out in four steps.

1. Flagged annotations (label_error) are dropped before anything else.
2. Ratings are summed per target (a whole trace, or one step): above zero is chosen, below is
   rejected, zero is skipped, so opposite ratings cancel.
3. Each target is rendered to text (`traces.render`): a trace whole, a step as the trace up to and
   including it; system steps are never rendered, and a system step is never a target.
4. Every chosen target is paired with every rejected one of the same granularity (traces with
   traces, steps with steps, never across), the pairs are shuffled with seed 0 and capped at
   `max_pairs`.

Step 4 never builds the full cross product, which grows with the square of the targets: it draws
`min(total, max_pairs)` positions of the concatenated (trace pairs, step pairs) product from
`random.Random(0)` without replacement, which is a seed-0 shuffle cut at the cap. The same labels
always give the same pairs, in the same order.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from redline.annotations.models import Annotation
from redline.traces.models import Step, Trace
from redline.traces.render import render_prefix, render_trace

Granularity = Literal["trace", "step"]
DEFAULT_MAX_PAIRS = 4000
PAIRING_SEED = 0
_IN_CHUNK = 500


@dataclass(frozen=True)
class Target:
    """A whole trace (no step) or one step, with the sum of its unflagged ratings."""

    trace_id: uuid.UUID
    step_id: uuid.UUID | None
    score: int

    @property
    def granularity(self) -> Granularity:
        return "trace" if self.step_id is None else "step"

    def key(self) -> tuple[str, str]:
        return (str(self.trace_id), str(self.step_id or ""))


@dataclass(frozen=True)
class Pair:
    granularity: Granularity
    chosen: str
    rejected: str
    source: str
    source_ids: dict[str, Any] = field(default_factory=dict)


def rated_targets(session: Session, trace_ids: Sequence[uuid.UUID]) -> list[Target]:
    """Steps 1 and 2, summed in SQL: every target of the traces whose ratings don't cancel out."""
    targets: list[Target] = []
    for start in range(0, len(trace_ids), _IN_CHUNK):
        chunk = trace_ids[start : start + _IN_CHUNK]
        total = func.sum(Annotation.rating)
        rows = session.execute(
            select(Annotation.trace_id, Annotation.step_id, total)
            .join(Trace, Trace.id == Annotation.trace_id)
            .outerjoin(Step, Step.id == Annotation.step_id)
            .where(
                Annotation.trace_id.in_(chunk),
                Annotation.label_error.is_(False),
                Annotation.rating.is_not(None),
                Trace.erased_at.is_(None),
                (Step.role.is_(None)) | (Step.role != "system"),
            )
            .group_by(Annotation.trace_id, Annotation.step_id)
            .having(total != 0)
        )
        targets.extend(Target(trace_id, step_id, int(score or 0)) for trace_id, step_id, score in rows)
    return sorted(targets, key=Target.key)


def _steps_by_trace(session: Session, trace_ids: set[uuid.UUID]) -> dict[uuid.UUID, list[Step]]:
    steps: dict[uuid.UUID, list[Step]] = {trace_id: [] for trace_id in trace_ids}
    ordered = sorted(trace_ids, key=str)
    for start in range(0, len(ordered), _IN_CHUNK):
        chunk = ordered[start : start + _IN_CHUNK]
        for step in session.scalars(
            select(Step).where(Step.trace_id.in_(chunk)).order_by(Step.trace_id, Step.index)
        ):
            steps[step.trace_id].append(step)
    return steps


def _annotation_ids(session: Session, targets: set[Target]) -> dict[tuple[str, str], list[str]]:
    """The unflagged rating annotations behind each target: the evidence a pair records."""
    found: dict[tuple[str, str], list[str]] = {target.key(): [] for target in targets}
    trace_ids = sorted({target.trace_id for target in targets}, key=str)
    for start in range(0, len(trace_ids), _IN_CHUNK):
        rows = session.execute(
            select(Annotation.id, Annotation.trace_id, Annotation.step_id)
            .where(
                Annotation.trace_id.in_(trace_ids[start : start + _IN_CHUNK]),
                Annotation.label_error.is_(False),
                Annotation.rating.is_not(None),
            )
            .order_by(Annotation.created_at, Annotation.id)
        )
        for annotation_id, trace_id, step_id in rows:
            key = (str(trace_id), str(step_id or ""))
            if key in found:
                found[key].append(str(annotation_id))
    return found


def _render(target: Target, steps: list[Step]) -> str:
    if target.step_id is None:
        return render_trace(steps)
    position = next(i for i, step in enumerate(steps) if step.id == target.step_id)
    return render_prefix(steps, position)


def _side(target: Target, evidence: dict[tuple[str, str], list[str]]) -> dict[str, Any]:
    side: dict[str, Any] = {"trace_id": str(target.trace_id), "annotation_ids": evidence[target.key()]}
    if target.step_id is not None:
        side["step_id"] = str(target.step_id)
    return side


def rating_pairs(
    session: Session, trace_ids: Sequence[uuid.UUID], max_pairs: int = DEFAULT_MAX_PAIRS
) -> list[Pair]:
    """The pairs the given traces' explicit ratings make (module doc), at most `max_pairs`."""
    targets = rated_targets(session, trace_ids)
    product: list[tuple[list[Target], list[Target]]] = []
    for granularity in ("trace", "step"):
        chosen = [t for t in targets if t.granularity == granularity and t.score > 0]
        rejected = [t for t in targets if t.granularity == granularity and t.score < 0]
        product.append((chosen, rejected))
    sizes = [len(chosen) * len(rejected) for chosen, rejected in product]
    picks = random.Random(PAIRING_SEED).sample(range(sum(sizes)), min(sum(sizes), max_pairs))
    chosen_pairs: list[tuple[Target, Target]] = []
    for pick in picks:
        part = 0 if pick < sizes[0] else 1
        offset = pick - (0 if part == 0 else sizes[0])
        chosen, rejected = product[part]
        chosen_pairs.append((chosen[offset // len(rejected)], rejected[offset % len(rejected)]))
    used = {target for pair in chosen_pairs for target in pair}
    steps = _steps_by_trace(session, {target.trace_id for target in used})
    evidence = _annotation_ids(session, used)
    texts = {target: _render(target, steps[target.trace_id]) for target in used}
    return [
        Pair(
            granularity=better.granularity,
            chosen=texts[better],
            rejected=texts[worse],
            source="rating",
            source_ids={"chosen": _side(better, evidence), "rejected": _side(worse, evidence)},
        )
        for better, worse in chosen_pairs
    ]
