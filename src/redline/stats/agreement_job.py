"""The background job that computes a large annotation queue's agreement and keeps it as the job's result,
for `agreement_served.py` to serve with its as-of time (a queue too large to count within a request): a
kind of stored figures (`stored_figures.py`, which says how jobs are asked for, deduplicated and kept).

A job is about one queue as one reader sees it (its subject): everyone who may see every value shares
one figure; a reviewer still working through a blind queue sees only some values (`blind.py`), so their
figure is their own, computed as them. The queue's row is locked before one is asked for.

The result says what the figure was computed from, so a reader can tell cheaply whether it still holds:
when (`computed_at`), how many items the queue had, and its review keys as they were.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from redline.annotations.hidden import NOTHING_HIDDEN, Hidden
from redline.identity.models import Principal
from redline.identity.service import Actor
from redline.jobs.worker import JobFailed
from redline.queues.annotation.blind import hidden_from
from redline.queues.annotation.items import lock_queue
from redline.queues.models import Queue
from redline.reviews.models import ReviewKey
from redline.stats.agreement import figures_of
from redline.stats.agreement_wire import agreement_dict
from redline.stats.stored_figures import Asking, Payload, StoredKind
from redline.stats.stored_figures import ask_for_figures as ask

AGREEMENT_JOB = "queue-agreement"


def subject_of(queue_id: uuid.UUID, reader_id: uuid.UUID | None) -> str:
    """What a job is about: the queue, and the blinded reviewer it is computed for (None: everyone else)."""
    return f"queue:{queue_id}" if reader_id is None else f"queue:{queue_id}:reader:{reader_id}"


def key_marks(keys: Sequence[ReviewKey]) -> list[str]:
    """The queue's review keys as a figure was computed with them: each one's id and when it last changed,
    in the queue's order, so a key added, removed, reordered or redefined since shows."""
    return [f"{review_key.id}@{review_key.updated_at.isoformat()}" for review_key in keys]


def _ids(payload: Payload) -> tuple[uuid.UUID, uuid.UUID | None]:
    reader = payload.get("reader_id")
    return uuid.UUID(str(payload["queue_id"])), uuid.UUID(str(reader)) if reader else None


def _hidden(session: Session, reader_id: uuid.UUID | None) -> Hidden:
    """What the reader the figure is for may not see: nothing for everyone's figure."""
    if reader_id is None:
        return NOTHING_HIDDEN
    reader = session.get(Principal, reader_id)
    if reader is None:
        raise JobFailed("The reviewer this agreement was computed for was removed.")
    return hidden_from(session, Actor.of(reader))


def _compute(session: Session, payload: Payload) -> dict[str, Any]:
    queue_id, reader_id = _ids(payload)
    queue = session.get(Queue, queue_id)
    if queue is None:
        raise JobFailed("The queue was deleted before its agreement was computed.")
    found = figures_of(session, queue, _hidden(session, reader_id))
    return {
        "items_count": queue.items_count,
        "review_keys": key_marks([key.review_key for key in found.keys]),
        "agreement": agreement_dict(found),
    }


QUEUE_FIGURES = StoredKind(
    AGREEMENT_JOB,
    "counting the queue's review values",
    subject=lambda payload: subject_of(*_ids(payload)),
    compute=_compute,
    lock=lambda session, payload: lock_queue(session, _ids(payload)[0]),
)
COMPUTING_AGREEMENT = QUEUE_FIGURES.job_kind()


def asking_for(queue_id: uuid.UUID, reader_id: uuid.UUID | None) -> Asking:
    """The queue's figures as `reader_id` (None: everyone) sees them, as the job worker is asked for them."""
    reader = str(reader_id) if reader_id else None
    return Asking(QUEUE_FIGURES, {"queue_id": str(queue_id), "reader_id": reader})


def ask_for_figures(session: Session, queue_id: uuid.UUID, reader_id: uuid.UUID | None) -> bool:
    """A job to compute the queue's figures, unless one about the same subject is queued or running; True
    when one was queued."""
    return ask(session, asking_for(queue_id, reader_id))
