"""How far an annotation queue's reviewers agree, per review key the queue is reviewed with: Krippendorff's
α with its 95% bootstrap range over items, the share of items everyone agreed on, and Cohen's κ for each
pair of reviewers who share enough items, each with the sentence that says it (`agreement_words.py`).

The store counts (`agreement_counts.py`: one grouped statement for the whole queue), numpy computes
(`agreement_maths.py`). Readers of the queue's project may read it, as they read the queue. It counts
only the values the reader may see: to a reviewer still working through a blind queue
(`queues/annotation/blind.py`), the items they have reviewed themselves, so no figure tells them what
the others said elsewhere; admins and those who don't review the queue see it over every item.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.annotations.hidden import Hidden
from redline.db import in_chunks
from redline.identity.models import Principal
from redline.identity.service import Actor
from redline.queues.annotation.blind import hidden_from
from redline.queues.annotation.service import queue_for, review_keys
from redline.queues.models import Queue
from redline.reviews.models import ReviewKey
from redline.stats import agreement_words as words
from redline.stats.agreement_counts import Reviewer, Said, value_patterns
from redline.stats.agreement_figures import Alpha, Level


def level_of(review_key: ReviewKey) -> Level | None:
    """The metric that fits the key's type; None for text, which has none."""
    if review_key.type == "range":
        return "interval"
    if review_key.type == "categorical":
        return "jaccard" if review_key.multiple else "nominal"
    return None


@dataclass(frozen=True)
class PairAgreement:
    """Two reviewers who share enough items under one key, and their κ (None: not told from chance)."""

    a: Reviewer
    b: Reviewer
    shared_items: int
    kappa: float | None
    sentence: str


@dataclass(frozen=True)
class KeyAgreement:
    """One review key's agreement. `items` and `values` are those α rests on (items with two values or
    more); `alpha` and `share_agreed` are None while there are too few of them, and for a text key,
    which has no measure (`level` None)."""

    review_key: ReviewKey
    level: Level | None
    items: int
    values: int
    alpha: Alpha | None
    share_agreed: float | None
    pairs: list[PairAgreement]
    pairs_with_too_few: int
    sentences: list[str]


@dataclass(frozen=True)
class QueueAgreement:
    queue: Queue
    keys: list[KeyAgreement]


def reviewer_name(reviewer: Reviewer) -> str:
    name = reviewer.name or "someone since removed"
    return f"{name} ({reviewer.identity_id})" if reviewer.identity_id else name


def _order(reviewer: Reviewer) -> tuple[str, str, str]:
    return (str(reviewer.author_id or ""), reviewer.name or "", reviewer.identity_id or "")


def _named(session: Session, found: list[Said]) -> list[Said]:
    """The values with each principal's name as it is now: one look-up for the few people there are."""
    people = {reviewer for said in found for reviewer, _ in said.said}
    ids = sorted((reviewer.author_id for reviewer in people if reviewer.author_id), key=str)
    names: dict[uuid.UUID, str] = {}
    for chunk in in_chunks(ids):
        rows = session.execute(select(Principal.id, Principal.name).where(Principal.id.in_(chunk)))
        names.update((ident, name) for ident, name in rows)
    named = {
        reviewer: replace(reviewer, name=names.get(reviewer.author_id)) if reviewer.author_id else reviewer
        for reviewer in people
    }
    return [
        Said(said.key, [(named[reviewer], value) for reviewer, value in said.said], said.items)
        for said in found
    ]


Items = list[tuple[list[tuple[Reviewer, Any]], int]]


def _pairs(level: Level, said: Items) -> tuple[list[PairAgreement], int]:
    """Each pair of reviewers with enough shared items and its κ, most shared first; and how many pairs
    had too few."""
    # numpy only once a figure is computed: the app starts without it (`agreement_figures`).
    from redline.stats.agreement_maths import kappas

    enough, too_few = kappas(level, said, _order, words.MIN_SHARED_ITEMS)
    shown = [
        PairAgreement(
            first,
            second,
            shared,
            figure,
            words.pair_sentence(level, reviewer_name(first), reviewer_name(second), shared, figure),
        )
        for first, second, shared, figure in enough
    ]
    shown.sort(key=lambda pair: (-pair.shared_items, reviewer_name(pair.a), reviewer_name(pair.b)))
    return shown, too_few


def _key(review_key: ReviewKey, level: Level | None, said: Items) -> KeyAgreement:
    # numpy only once a figure is computed: the app starts without it (`agreement_figures`).
    from redline.stats.agreement_maths import alpha, patterns

    title = review_key.title
    if level is None:
        return KeyAgreement(review_key, None, 0, 0, None, None, [], 0, [words.text_key(title)])
    data = patterns(level, [([value for _, value in values], items) for values, items in said])
    items, values = data.item_count, data.value_count
    shown, too_few = _pairs(level, said)
    enough = items >= words.MIN_ITEMS
    figures = alpha(level, data) if enough else None
    sentences = words.key_sentences(
        title, items, values, figures or Alpha(None, None, None), data.agreed_items
    )
    few = words.few_pairs_sentence(too_few)
    return KeyAgreement(
        review_key,
        level,
        items,
        values,
        figures,
        data.agreed_items / items if enough else None,
        shown,
        too_few,
        [*sentences, *(pair.sentence for pair in shown), *([few] if few else [])],
    )


def measured_keys(keys: list[ReviewKey]) -> list[ReviewKey]:
    """The keys agreement is measured on: those with a metric (every key but text)."""
    return [review_key for review_key in keys if level_of(review_key) is not None]


def figures_of(session: Session, queue: Queue, hidden: Hidden) -> QueueAgreement:
    """The agreement on each review key the queue is reviewed with, in the queue's order, over the values
    not `hidden`: what a request computes for a small queue, and the background job for a large one
    (`agreement_served.py`)."""
    keys = review_keys(session, queue)
    levels = {review_key.key: level_of(review_key) for review_key in keys}
    measured = [review_key.key for review_key in measured_keys(keys)]
    said: dict[str, Items] = defaultdict(list)
    for found in _named(session, value_patterns(session, queue.id, measured, hidden)):
        said[found.key].append((found.said, found.items))
    return QueueAgreement(
        queue, [_key(review_key, levels[review_key.key], said[review_key.key]) for review_key in keys]
    )


def queue_agreement(session: Session, actor: Actor, queue_id: uuid.UUID) -> QueueAgreement:
    """The queue's agreement computed now, over the values the actor may see."""
    return figures_of(session, queue_for(session, actor, queue_id, "read"), hidden_from(session, actor))
