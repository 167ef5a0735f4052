"""What a reviewer does to the item on screen: save review values (which marks it reviewed and writes
them back to its trace) and send its trace to a dataset.

"Every annotation applied in an Annotation Queue is written back to its originating Trace"
(annotation-queues.txt): the values go to the one annotations table, on the trace or the item's span,
where every other reader of feedback sees them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy.orm import Session

from redline.datasets import service as datasets
from redline.datasets.models import Datapoint
from redline.errors import Invalid
from redline.identity.service import Actor
from redline.queues.annotation import places
from redline.queues.annotation.reviewers import require_reviewer
from redline.queues.annotation.schemas import ReviewValue
from redline.queues.annotation.service import item_of, queue_for, review_keys
from redline.queues.models import QueueItem
from redline.reviews.annotate import save_values
from redline.reviews.schemas import ValueIn
from redline.reviews.service import key_not_found


def trace_of(item: QueueItem) -> uuid.UUID:
    if item.trace_id is None:
        raise Invalid(
            "This item is a datapoint, not a trace: review values are saved on traces.",
            details={"field": "item_id"},
        )
    return item.trace_id


def save_review(
    session: Session, actor: Actor, queue_id: uuid.UUID, item_id: uuid.UUID, values: Sequence[ReviewValue]
) -> QueueItem:
    """Save values for the queue's review keys on the item's trace (or span) as one of its reviewers,
    adding the keys used to `used_review_key_ids`. Takes write access to the queue's project, as
    annotating its traces does, and a place in the item (`places`): the caller's own (held or reviewed),
    else a free one, else the save is refused (409). A key the queue isn't reviewed with is not found, as
    the document's sentence has it. The item is reviewed once the queue's `reviewers_per_item` people
    are done with it."""
    queue = queue_for(session, actor, queue_id, "write")
    item = item_of(session, actor, queue, item_id)
    trace_id = trace_of(item)
    require_reviewer(session, actor, queue)
    asked = review_keys(session, queue)
    offered = {review_key.key: review_key for review_key in asked}
    keys = []
    for value in values:
        review_key = offered.get(value.key)
        if review_key is None:
            raise key_not_found(actor, value.key)
        keys.append(review_key)
    held = places.take_for_saving(session, actor, queue, item)
    # The reviews service checks each value against its key and writes it (one per reviewer per key).
    save_values(
        session,
        actor,
        trace_id,
        item.span_key,
        [ValueIn(key=value.key, value=value.value) for value in values],
    )
    places.after_saving(
        session,
        actor,
        queue,
        item,
        held,
        [str(review_key.id) for review_key in keys],
        [review_key.key for review_key in asked],
    )
    session.flush()
    return item


def add_to_dataset(
    session: Session, actor: Actor, queue_id: uuid.UUID, item_id: uuid.UUID, dataset_id: uuid.UUID
) -> Datapoint:
    """Send the item's trace to a dataset as a datapoint linked to it; its annotations stay on the trace."""
    queue = queue_for(session, actor, queue_id, "read")
    item = item_of(session, actor, queue, item_id)
    return datasets.add_trace(session, actor, dataset_id, trace_of(item))
