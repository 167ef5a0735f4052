"""A queue's agreement as `GET /v2/annotation-queues/{id}/agreement` answers it (snake_case, as the reviews
surface speaks), as `redline queues agreement --json` prints it and as the job worker keeps a large queue's
(`agreement_job.py`); docs/api-queues-datasets.md describes every field."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from redline.stats.agreement import KeyAgreement, PairAgreement, QueueAgreement
from redline.stats.agreement_counts import Reviewer
from redline.stats.agreement_figures import RESAMPLES, Alpha
from redline.stats.agreement_words import MIN_ITEMS, MIN_SHARED_ITEMS

# What `range` is, as the docs name it.
METHOD = f"bootstrap over items, {RESAMPLES:,} resamples, 95%"


def reviewer_dict(reviewer: Reviewer) -> dict[str, Any]:
    return {
        "id": str(reviewer.author_id) if reviewer.author_id is not None else None,
        "identity_id": reviewer.identity_id,
        "name": reviewer.name,
    }


def _pair(pair: PairAgreement) -> dict[str, Any]:
    return {
        "reviewers": [reviewer_dict(pair.a), reviewer_dict(pair.b)],
        "shared_items": pair.shared_items,
        "kappa": pair.kappa,
        "sentence": pair.sentence,
    }


def key_dict(found: KeyAgreement) -> dict[str, Any]:
    review_key = found.review_key
    figures = found.alpha or Alpha(None, None, None)
    bounds = figures.bounds
    return {
        "human_review_id": str(review_key.id),
        "key": review_key.key,
        "display_name": review_key.title,
        "type": review_key.type,
        "multiple": review_key.multiple,
        "metric": found.level,
        # A text key has no measure, so nothing it rests on.
        "items": found.items if found.level else None,
        "values": found.values if found.level else None,
        "alpha": figures.alpha,
        "range": {"low": bounds[0], "high": bounds[1], "method": METHOD} if bounds else None,
        "share_agreed": found.share_agreed,
        "pairs": [_pair(pair) for pair in found.pairs],
        "pairs_with_too_few_items": found.pairs_with_too_few,
        "sentences": found.sentences,
    }


def agreement_dict(found: QueueAgreement) -> dict[str, Any]:
    return {**no_figures_dict(found.queue.id), "keys": [key_dict(key) for key in found.keys]}


def served_dict(
    figures: dict[str, Any], state: str, computed_at: datetime | None, stale: bool, sentence: str | None
) -> dict[str, Any]:
    """The figures as a request is answered them: how they came to be (`state`: computed `live` for this
    answer, `stored` by the job worker at `computed_at`, or still `computing`, with no keys yet), whether
    values may have changed since, and the sentence that says so (none for a live figure)."""
    return {
        **figures,
        "state": state,
        "computed_at": computed_at.isoformat() if computed_at else None,
        "stale": stale,
        "state_sentence": sentence,
    }


def no_figures_dict(queue_id: uuid.UUID) -> dict[str, Any]:
    """The figures of a queue the job worker has not computed yet: no keys."""
    return {
        "annotation_queue_id": str(queue_id),
        "min_items": MIN_ITEMS,
        "min_shared_items": MIN_SHARED_ITEMS,
        "keys": [],
    }
