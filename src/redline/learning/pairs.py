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

Who said what: each side names the ratings behind it (`annotation_ids`) and their authors (`reviewers`).
A training config may keep only settled targets (`pair_rules.py`): the targets that fail a rule are left
out before step 4, and the pairs they would have made counted as that rule's.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from sqlalchemy import Row, String, Table, case, func, literal, select
from sqlalchemy import cast as sql_cast
from sqlalchemy.orm import Session

from redline.annotations.models import Annotation
from redline.db import in_chunks
from redline.learning.pair_rules import NO_RULES, Agreement, PairRules, Removed
from redline.traces.models import Step, Trace
from redline.traces.render import render_prefix, render_trace

Granularity = Literal["trace", "step"]
DEFAULT_MAX_PAIRS = 4000
PAIRING_SEED = 0

# Core tables rather than ORM attributes: every query here reads a few columns of tens of thousands of
# rows, and plain rows skip the ORM's per-row loading work.
_ANNOTATIONS = cast(Table, Annotation.__table__)
_TRACES = cast(Table, Trace.__table__)
_STEPS = cast(Table, Step.__table__)

# A target's trace and step (None for the whole trace), as the evidence is looked up by.
_TargetKey = tuple[uuid.UUID, uuid.UUID | None]
# A stored step as `steps_by_trace` reads it: a row with the attributes `traces.render` needs (role,
# content, tool_name, tool_input), plus its id, trace and index.
StepRow = Row[*tuple[Any, ...]]
# A target as `rated_targets` reads it: trace, step (None for the whole trace), sum of its ratings, its
# reviewers, and how many of them rated it up and down.
_SummedRow = Row[uuid.UUID, uuid.UUID | None, Any, Any, Any, Any]
# Who a rating's author is, as its reviewer: the principal, or the name of an author with none.
_AUTHOR = func.coalesce(sql_cast(_ANNOTATIONS.c.author_id, String), literal("~") + _ANNOTATIONS.c.author_name)


@dataclass(frozen=True, slots=True)
class Target:
    """A whole trace (no step) or one step, with the sum of its unflagged ratings.

    Slotted: a pair build holds one per rated target of every trace asked for (~60,000 for 10,000
    traces), and without an instance dict each is 40 % smaller and a little quicker to make.
    """

    trace_id: uuid.UUID
    step_id: uuid.UUID | None
    score: int
    agreement: Agreement

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
    """Steps 1 and 2, summed in SQL: every target of the traces whose ratings don't cancel out, with how
    far its reviewers agree (`pair_rules.py`): each author's ratings summed first, then the target's.

    Over 10,000 traces this is ~60,000 targets, of which a few thousand end up in pairs: the rows are
    read as plain Core rows and put in `Target.key`'s order by `_target_order`, without formatting two
    strings per target.
    """
    own = func.sum(_ANNOTATIONS.c.rating).label("own")
    per_author = (
        select(_ANNOTATIONS.c.trace_id, _ANNOTATIONS.c.step_id, own)
        .join(_TRACES, _TRACES.c.id == _ANNOTATIONS.c.trace_id)
        .outerjoin(_STEPS, _STEPS.c.id == _ANNOTATIONS.c.step_id)
        .where(
            _ANNOTATIONS.c.label_error.is_(False),
            _ANNOTATIONS.c.rating.is_not(None),
            _TRACES.c.erased_at.is_(None),
            (_STEPS.c.role.is_(None)) | (_STEPS.c.role != "system"),
        )
        .group_by(_ANNOTATIONS.c.trace_id, _ANNOTATIONS.c.step_id, _AUTHOR)
    )
    rows: list[_SummedRow] = []
    for chunk in in_chunks(trace_ids):
        said = per_author.where(_ANNOTATIONS.c.trace_id.in_(chunk)).subquery("said")
        total = func.sum(said.c.own)
        query = (
            select(
                said.c.trace_id,
                said.c.step_id,
                total,
                func.count(),
                func.sum(case((said.c.own > 0, 1), else_=0)),
                func.sum(case((said.c.own < 0, 1), else_=0)),
            )
            .group_by(said.c.trace_id, said.c.step_id)
            .having(total != 0)
        )
        rows.extend(session.execute(query).all())
    rows.sort(key=_target_order)
    return [
        Target(trace_id, step_id, int(score), Agreement(int(people), int(up if score > 0 else down)))
        for trace_id, step_id, score, people, up, down in rows
    ]


def _target_order(row: _SummedRow) -> tuple[int, int]:
    # `Target.key`'s order: a UUID's text is its 128-bit number in fixed-width hex, so the numbers sort
    # as the texts do, and -1 puts the whole trace ("" as its step) before any of its steps. Integers
    # compare in C; sorting by the UUIDs themselves calls `uuid.UUID.__lt__` and `__eq__`, Python code,
    # ~500,000 times for 60,000 targets.
    trace_id, step_id = row[0], row[1]
    return (trace_id.int, -1 if step_id is None else step_id.int)


def steps_by_trace(session: Session, trace_ids: set[uuid.UUID]) -> dict[uuid.UUID, list[StepRow]]:
    """The steps of the traces in pairs, in order, as rows of only what rendering and locating a step need.

    4,000 pairs over 10,000 traces need ~100,000 steps. As ORM `Step` entities (identity map, instance
    state, every column) they took about twice as long to load as these rows (bench/README.md), and
    each was several more objects for the cyclic GC to rescan while the pairs are built.
    """
    steps: dict[uuid.UUID, list[StepRow]] = {trace_id: [] for trace_id in trace_ids}
    query = select(
        _STEPS.c.trace_id,
        _STEPS.c.id,
        _STEPS.c.index,
        _STEPS.c.role,
        _STEPS.c.content,
        _STEPS.c.tool_name,
        _STEPS.c.tool_input,
    ).order_by(_STEPS.c.trace_id, _STEPS.c.index)
    for chunk in in_chunks(sorted(trace_ids)):
        for row in session.execute(query.where(_STEPS.c.trace_id.in_(chunk))).all():
            steps[row.trace_id].append(row)
    return steps


@dataclass(frozen=True)
class _Evidence:
    """The unflagged ratings behind a target, oldest first, and their authors in the order they first
    rated it: who said what, as a pair's side records it."""

    annotation_ids: list[str] = field(default_factory=list)
    reviewers: list[dict[str, str | None]] = field(default_factory=list)


def _evidence(session: Session, targets: set[Target]) -> dict[_TargetKey, _Evidence]:
    """The unflagged rating annotations behind each target, oldest first: the evidence a pair records.

    Only the targets in pairs are asked for, whole-trace targets by trace and step targets by step
    (both indexed), so the rows read are the evidence itself rather than every rating of every trace
    in a pair. Each target's rows come from one query ordered by (created_at, id), which is the order
    its list keeps.
    """
    found = {(target.trace_id, target.step_id): _Evidence() for target in targets}
    query = (
        select(
            _ANNOTATIONS.c.id,
            _ANNOTATIONS.c.trace_id,
            _ANNOTATIONS.c.step_id,
            _ANNOTATIONS.c.author_id,
            _ANNOTATIONS.c.author_name,
        )
        .where(_ANNOTATIONS.c.label_error.is_(False), _ANNOTATIONS.c.rating.is_not(None))
        .order_by(_ANNOTATIONS.c.created_at, _ANNOTATIONS.c.id)
    )
    whole = sorted(target.trace_id for target in targets if target.step_id is None)
    parts = sorted(target.step_id for target in targets if target.step_id is not None)
    filters = [
        *(
            _ANNOTATIONS.c.trace_id.in_(chunk) & _ANNOTATIONS.c.step_id.is_(None)
            for chunk in in_chunks(whole)
        ),
        *(_ANNOTATIONS.c.step_id.in_(chunk) for chunk in in_chunks(parts)),
    ]
    for condition in filters:
        for annotation_id, trace_id, step_id, author_id, author in session.execute(
            query.where(condition)
        ).all():
            evidence = found.get((trace_id, step_id))
            if evidence is not None:
                evidence.annotation_ids.append(str(annotation_id))
                reviewer = {"id": None if author_id is None else str(author_id), "name": author}
                if reviewer not in evidence.reviewers:
                    evidence.reviewers.append(reviewer)
    return found


def _render(target: Target, steps: Sequence[StepRow]) -> str:
    if target.step_id is None:
        return render_trace(steps)
    position = next(i for i, step in enumerate(steps) if step.id == target.step_id)
    return render_prefix(steps, position)


def _side(target: Target, evidence: dict[_TargetKey, _Evidence]) -> dict[str, Any]:
    behind = evidence[(target.trace_id, target.step_id)]
    side: dict[str, Any] = {
        "trace_id": str(target.trace_id),
        "annotation_ids": behind.annotation_ids,
        "reviewers": behind.reviewers,
    }
    if target.step_id is not None:
        side["step_id"] = str(target.step_id)
    return side


def _kept(
    product: list[tuple[list[Target], list[Target]]], rules: PairRules, removed: Removed
) -> list[tuple[list[Target], list[Target]]]:
    """Each granularity's chosen and rejected targets that every rule keeps, a rule at a time, counting
    under each rule the pairs of the product it removed (`pair_rules.py`)."""
    for rule in rules.named():
        before = sum(len(chosen) * len(rejected) for chosen, rejected in product)
        product = [
            (
                [target for target in chosen if rules.keeps(rule, target.agreement)],
                [target for target in rejected if rules.keeps(rule, target.agreement)],
            )
            for chosen, rejected in product
        ]
        removed[rule] += before - sum(len(chosen) * len(rejected) for chosen, rejected in product)
    return product


def rating_pairs(
    session: Session,
    trace_ids: Sequence[uuid.UUID],
    max_pairs: int = DEFAULT_MAX_PAIRS,
    rules: PairRules = NO_RULES,
    removed: Removed | None = None,
) -> list[Pair]:
    """The pairs the given traces' explicit ratings make (module doc), at most `max_pairs`, of the
    targets `rules` keep; what each rule removed is added to `removed`."""
    # Chosen and rejected targets per granularity, each in `rated_targets`' order, in one pass.
    product: list[tuple[list[Target], list[Target]]] = [([], []), ([], [])]
    for target in rated_targets(session, trace_ids):
        chosen, rejected = product[0 if target.step_id is None else 1]
        if target.score > 0:
            chosen.append(target)
        elif target.score < 0:
            rejected.append(target)
    product = _kept(product, rules, Removed() if removed is None else removed)
    sizes = [len(chosen) * len(rejected) for chosen, rejected in product]
    picks = random.Random(PAIRING_SEED).sample(range(sum(sizes)), min(sum(sizes), max_pairs))
    chosen_pairs: list[tuple[Target, Target]] = []
    for pick in picks:
        part = 0 if pick < sizes[0] else 1
        offset = pick - (0 if part == 0 else sizes[0])
        chosen, rejected = product[part]
        chosen_pairs.append((chosen[offset // len(rejected)], rejected[offset % len(rejected)]))
    used = {target for pair in chosen_pairs for target in pair}
    steps = steps_by_trace(session, {target.trace_id for target in used})
    evidence = _evidence(session, used)
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
