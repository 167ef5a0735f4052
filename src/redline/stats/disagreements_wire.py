"""A queue's disagreements and settled values as `/v2/annotation-queues/{id}/disagreements` and
`PUT …/items/{item_id}/adjudications/{key}` answer them (snake_case, `_id`, as the reviews surface speaks),
and as `redline queues disagreements --json` prints them; docs/api-queues-datasets.md describes every
field."""

from __future__ import annotations

from typing import Any

from redline.db.id_pages import IdPage
from redline.jsonio import iso
from redline.queues.annotation.items import WHOLE_TRACE
from redline.queues.models import QueueAdjudication
from redline.reviews.models import ReviewKey
from redline.stats.agreement_wire import reviewer_dict
from redline.stats.disagreements import Disagreement


def adjudication_dict(settled: QueueAdjudication, review_key: ReviewKey) -> dict[str, Any]:
    """A settled value: what, why, by whom and when."""
    return {
        "annotation_queue_id": str(settled.queue_id),
        "item_id": str(settled.item_id),
        "human_review_id": str(settled.review_key_id),
        "key": review_key.key,
        "value": settled.value,
        "note": settled.note,
        "decided_by_id": str(settled.decided_by) if settled.decided_by is not None else None,
        "decided_by_name": settled.decided_by_name,
        "decided_at": iso(settled.decided_at),
    }


def disagreement_dict(found: Disagreement) -> dict[str, Any]:
    item, review_key = found.item, found.review_key
    return {
        "_id": found.id,
        "annotation_queue_id": str(item.queue_id),
        "item_id": str(item.id),
        "seq": item.seq,
        "trace_id": str(item.trace_id) if item.trace_id is not None else None,
        # As an item names it: a whole trace's item names the trace's id as its span.
        "span_id": str(item.trace_id) if item.span_key == WHOLE_TRACE else item.span_key,
        "trace_name": found.trace_name,
        "human_review_id": str(review_key.id),
        "key": review_key.key,
        "display_name": review_key.title,
        "type": review_key.type,
        "difference": found.difference,
        "distinct_values": found.distinct_values,
        "values_count": found.values_count,
        "spread": found.spread,
        "values": [{"value": one.value, "reviewer": reviewer_dict(one.reviewer)} for one in found.values],
        "adjudication": adjudication_dict(found.adjudication, review_key) if found.adjudication else None,
    }


def disagreements_dict(page: IdPage[Disagreement]) -> dict[str, Any]:
    """A page as the reviews surface's lists are: `{object: "list", data, has_more}`."""
    return {
        "object": "list",
        "data": [disagreement_dict(found) for found in page.items],
        "has_more": page.has_more,
    }
