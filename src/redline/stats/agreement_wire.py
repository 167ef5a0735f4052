"""A queue's agreement as `GET /v2/annotation-queues/{id}/agreement` answers it (snake_case, as the reviews
surface speaks), and as `redline queues agreement --json` prints it; docs/api-queues-datasets.md
describes every field."""

from __future__ import annotations

from typing import Any

from redline.stats.agreement import KeyAgreement, PairAgreement, QueueAgreement
from redline.stats.agreement_counts import Reviewer
from redline.stats.agreement_figures import RESAMPLES, Alpha
from redline.stats.agreement_words import MIN_ITEMS, MIN_SHARED_ITEMS

# What `range` is, as the docs name it.
METHOD = f"bootstrap over items, {RESAMPLES:,} resamples, 95%"


def _reviewer(reviewer: Reviewer) -> dict[str, Any]:
    return {
        "id": str(reviewer.author_id) if reviewer.author_id is not None else None,
        "identity_id": reviewer.identity_id,
        "name": reviewer.name,
    }


def _pair(pair: PairAgreement) -> dict[str, Any]:
    return {
        "reviewers": [_reviewer(pair.a), _reviewer(pair.b)],
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
    return {
        "annotation_queue_id": str(found.queue.id),
        "min_items": MIN_ITEMS,
        "min_shared_items": MIN_SHARED_ITEMS,
        "keys": [key_dict(key) for key in found.keys],
    }
