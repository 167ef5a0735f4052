"""Preference pairs from explicit ratings, as rm-annotations.txt lays it out in four steps.

1. Flagged annotations (label_error) are dropped before anything else.
2. Ratings are summed per target (a whole trace, or one step): above zero is chosen, below is
   rejected, zero is skipped, so opposite ratings cancel.
3. Each target is rendered to text (`traces.render`): a trace whole, a step as the trace up to and
   including it; system steps are never rendered, and a system step is never a target.
4. Every chosen target is paired with every rejected one of the same granularity (traces with
   traces, steps with steps, never across), the pairs are shuffled with seed 0 and capped at
   `max_pairs`.

Step 4 is the training config's `pairing` (`pairing.py`): the document's rule by default, or
same-context pairs first. Either way the targets are first put in the order of their content
(`contexts.py`), not of the ids the store gave them, so the same labels on re-imported traces give the
same pairs in the same order; and each pair says its kind (same-context or cross) and the context its
sides share.

Who said what: each side names the ratings behind it (`annotation_ids`) and their authors (`reviewers`).
A training config may keep only settled targets (`pair_rules.py`): the targets that fail a rule are left
out before step 4, and the pairs they would have made counted as that rule's.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from sqlalchemy import Row, String, Table, case, func, literal, select
from sqlalchemy import cast as sql_cast
from sqlalchemy.orm import Session

from redline.annotations.models import Annotation
from redline.db import in_chunks
from redline.learning.contexts import Identity, identities
from redline.learning.pair_rules import NO_RULES, Agreement, PairRules, Removed
from redline.learning.pairing import CROSS, DOCUMENT_RULE, SAME_CONTEXT, Kind, Pairing, drawn
from redline.traces.models import Step, Trace
from redline.traces.render import render_prefix, render_trace

Granularity = Literal["trace", "step"]
DEFAULT_MAX_PAIRS = 4000

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


@dataclass(frozen=True)
class Pair:
    granularity: Granularity
    chosen: str
    rejected: str
    source: str
    source_ids: dict[str, Any] = field(default_factory=dict)
    # Same-context, cross or a stated preference (`pairing.py`), and the context both sides share.
    kind: Kind | None = None
    context_id: str | None = None


def rated_targets(session: Session, trace_ids: Sequence[uuid.UUID]) -> list[Target]:
    """Steps 1 and 2, summed in SQL: every target of the traces whose ratings don't cancel out, with how
    far its reviewers agree (`pair_rules.py`): each author's ratings summed first, then the target's.

    Over 10,000 traces this is ~60,000 targets, of which a few thousand end up in pairs: the rows are
    read as plain Core rows, in no particular order: `rating_pairs` puts them in the order of their
    content.
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
    return [
        Target(trace_id, step_id, int(score), Agreement(int(people), int(up if score > 0 else down)))
        for trace_id, step_id, score, people, up, down in rows
    ]


def _stored_order(target: Target) -> tuple[int, int]:
    # Between targets of equal text and context only: a UUID's 128-bit number, so integers compare in C
    # (`uuid.UUID.__lt__` is Python code), and -1 puts a whole trace before any of its steps.
    return (target.trace_id.int, -1 if target.step_id is None else target.step_id.int)


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


# A drawn pair: the chosen target, the rejected one, and what kind of pair they make.
_Drawn = tuple[Target, Target, Kind]


def _same_context(
    product: list[tuple[list[Target], list[Target]]], known: dict[_TargetKey, Identity], count: int
) -> list[_Drawn]:
    """Up to `count` pairs of targets that share their context, of a seed-0 shuffle of every such pair
    (each context's chosen with its rejected, contexts in the order of their ids); a pair of two equal
    texts is left out."""
    contexts: dict[tuple[int, str], tuple[list[Target], list[Target]]] = {}
    for part, (chosen, rejected) in enumerate(product):
        for side, targets in ((0, chosen), (1, rejected)):
            for target in targets:
                context = known[(target.trace_id, target.step_id)].context
                if context is not None:
                    contexts.setdefault((part, context), ([], []))[side].append(target)
    groups = [contexts[key] for key in sorted(contexts)]
    return [
        (better, worse, SAME_CONTEXT)
        for better, worse in drawn(groups, count)
        if known[(better.trace_id, better.step_id)].text != known[(worse.trace_id, worse.step_id)].text
    ]


def _kind(better: Target, worse: Target, known: dict[_TargetKey, Identity]) -> Kind:
    context = known[(better.trace_id, better.step_id)].context
    shared = context is not None and context == known[(worse.trace_id, worse.step_id)].context
    return SAME_CONTEXT if shared else CROSS


def rating_pairs(
    session: Session,
    trace_ids: Sequence[uuid.UUID],
    max_pairs: int = DEFAULT_MAX_PAIRS,
    rules: PairRules = NO_RULES,
    removed: Removed | None = None,
    pairing: Pairing = DOCUMENT_RULE,
    others: int = 0,
) -> list[Pair]:
    """The pairs the given traces' explicit ratings make (module doc), at most `max_pairs`, of the
    targets `rules` keep; what each rule removed is added to `removed`.

    With `same_context_first`, cross pairs are added only to bring the model's pairs, these and the
    `others` its other sources give, up to the pairing's `min_pairs`.
    """
    # Chosen and rejected targets per granularity, in one pass.
    product: list[tuple[list[Target], list[Target]]] = [([], []), ([], [])]
    targets = rated_targets(session, trace_ids)
    known = identities(session, {(target.trace_id, target.step_id) for target in targets})
    # Content order: the text's digest, then (only between equal texts) the context and the store's ids.
    targets.sort(
        key=lambda target: (*_content(known[(target.trace_id, target.step_id)]), *_stored_order(target))
    )
    for target in targets:
        chosen, rejected = product[0 if target.step_id is None else 1]
        (chosen if target.score > 0 else rejected).append(target)
    product = _kept(product, rules, Removed() if removed is None else removed)
    if pairing.same_context_first:
        picks = _same_context(product, known, max_pairs)
        wanted = min(pairing.min_pairs, max_pairs) - len(picks) - others
        if wanted > 0:
            same = sum(len(chosen) * len(rejected) for chosen, rejected in product) - len(picks)
            crossing = [(a, b, _kind(a, b, known)) for a, b in drawn(product, wanted + max(same, 0))]
            picks += [pick for pick in crossing if pick[2] == CROSS][:wanted]
    else:
        picks = [(a, b, _kind(a, b, known)) for a, b in drawn(product, max_pairs)]
    used = {target for better, worse, _ in picks for target in (better, worse)}
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
            kind=kind,
            context_id=known[(better.trace_id, better.step_id)].context if kind == SAME_CONTEXT else None,
        )
        for better, worse, kind in picks
    ]


def _content(identity: Identity) -> tuple[str, str]:
    return (identity.text, identity.context or "")
