"""What a request for a queue's agreement is answered, within the target (p99 < 500 ms with 100,000 items
reviewed by three people each, bench/agreement.py): a small queue's figures are computed in the request
(`live`); a large queue is served the figures the job worker computed (`stored`, `agreement_job.py`)
with their as-of time and whether values may have changed since (`stale`); before the first are ready
the answer says they are being computed (`computing`), at once. A missing or stale figure asks the
worker for a new one, once however many ask (`ask_for_figures`).

Large is more than `Settings.agreement_live_items` (5,000) items times measured review keys: the
counting statement reads every value on the queue, so its cost grows with items and keys. Measured with
three reviewers an item under one key, on a machine running four to six times the work its two cores
have: 5,000 items p99 331 ms (SQLite) and 374 ms (PostgreSQL), 10,000 items 677 and 651 ms, missing the
target; a quiet machine leaves more room. Being low costs only freshness (a stored figure, recomputed in
seconds), so the limit sits where the target held under load (bench/README.md).

Whether a stored figure still holds is told from what is cheap to read, never by counting again:

- the queue's review keys (each one's id and last change) against those it was computed with;
- the queue's item count (kept on its row) against the count then;
- review values saved since on the queue's items under its keys: the annotations created since, found
  through their `created_at` index, at most `CHECKED` of them; more than that since counts as a change,
  as counting again costs less than looking through them all;
- its age: a value changed in place or taken back leaves no trace as cheap to find, so a figure older
  than `stored_figures.REFRESH_AFTER` is computed again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, exists, func, select
from sqlalchemy.orm import Session

from redline.annotations.models import Annotation
from redline.identity.service import Actor
from redline.queues.annotation.blind import hidden_from
from redline.queues.annotation.service import queue_for, review_keys
from redline.queues.models import Queue, QueueItem
from redline.reviews.kinds import REVIEW_VALUE
from redline.reviews.models import ReviewKey
from redline.stats import agreement_words as words
from redline.stats.agreement import figures_of, measured_keys, queue_agreement
from redline.stats.agreement_job import asking_for, key_marks
from redline.stats.agreement_wire import agreement_dict, no_figures_dict, served_dict
from redline.stats.stored_figures import COMPUTING, LIVE, STORED, stored, too_old, wanted

__all__ = [
    "CHECKED",
    "COMPUTING",
    "LIVE",
    "STORED",
    "Served",
    "computed_now",
    "served_agreement",
    "stale_reason",
]

# The newest annotations looked through for a value saved on the queue since its figure was computed.
CHECKED = 5_000


@dataclass(frozen=True)
class Served:
    """The answer (`agreement_wire.served_dict`), and whether the job worker should be asked for figures
    (`agreement_job.ask_for_figures`, in a write the caller opens: a fresh answer writes nothing)."""

    queue_id: uuid.UUID
    reader_id: uuid.UUID | None
    answer: dict[str, Any]
    wants_job: bool


def computed_now(session: Session, actor: Actor, queue_id: uuid.UUID) -> dict[str, Any]:
    """The queue's figures computed in this process, whatever its size (`redline queues agreement --now`)."""
    return served_dict(agreement_dict(queue_agreement(session, actor, queue_id)), LIVE, None, False, None)


def _values_saved_since(
    session: Session, queue_id: uuid.UUID, keys: list[str], since: datetime
) -> str | None:
    """Whether a review value under `keys` was saved on the queue's items after `since`, from the newest
    annotations only (at most `CHECKED` + 1 read, by the `created_at` index)."""
    recent = (
        select(Annotation.id)
        .where(Annotation.created_at > since)
        .order_by(Annotation.created_at, Annotation.id)
        .limit(CHECKED + 1)
        .subquery()
    )
    on_the_queue = exists().where(QueueItem.queue_id == queue_id, QueueItem.trace_id == Annotation.trace_id)
    looked, found = session.execute(
        select(func.count(recent.c.id), func.count(Annotation.id))
        .select_from(recent)
        .outerjoin(
            Annotation,
            and_(Annotation.id == recent.c.id, REVIEW_VALUE, Annotation.key.in_(keys), on_the_queue),
        )
    ).one()
    if looked > CHECKED:
        return words.MANY_SAVED
    return words.VALUES_SAVED if found else None


def stale_reason(
    session: Session, queue: Queue, keys: list[ReviewKey], result: dict[str, Any], computed_at: datetime
) -> str | None:
    """Why the stored figure may no longer hold (`agreement_words`), cheapest test first; None when
    nothing was seen to change."""
    if result["review_keys"] != key_marks(keys):
        return words.KEYS_CHANGED
    if result["items_count"] != queue.items_count:
        return words.ITEMS_CHANGED
    if too_old(computed_at):
        return words.TOO_OLD
    return _values_saved_since(session, queue.id, [key.key for key in measured_keys(keys)], computed_at)


def served_agreement(session: Session, actor: Actor, queue_id: uuid.UUID, live_items: int) -> Served:
    """The queue's agreement as a request is answered it: live for a small queue, else the stored figure
    of what the actor may see (or that it is being computed), and whether to ask for a new one."""
    queue = queue_for(session, actor, queue_id, "read")
    keys = review_keys(session, queue)
    hidden = hidden_from(session, actor)
    if queue.items_count * len(measured_keys(keys)) <= live_items:
        figures = agreement_dict(figures_of(session, queue, hidden))
        return Served(queue.id, None, served_dict(figures, LIVE, None, False, None), False)
    # A blinded reviewer's figure counts only what they may see: theirs alone.
    reader_id = actor.principal_id if hidden.condition is not None else None
    asking = asking_for(queue.id, reader_id)
    kept = stored(session, asking)
    if kept is None:
        sentence = words.computing_sentence(queue.items_count)
        answer = served_dict(no_figures_dict(queue.id), COMPUTING, None, False, sentence)
        return Served(queue.id, reader_id, answer, wanted(session, asking, True) is not None)
    reason = stale_reason(session, queue, keys, kept.result, kept.computed_at)
    sentence = words.stored_sentence(kept.computed_at, queue.items_count, reason)
    answer = served_dict(kept.result["agreement"], STORED, kept.computed_at, reason is not None, sentence)
    return Served(queue.id, reader_id, answer, wanted(session, asking, reason is not None) is not None)
