"""Settling an item's value under one review key where its reviewers disagree: an admin of the queue's
project decides the value (an adjudication), which exports and training then take as the item's value.

The reviewers' own values are never touched: the adjudication is a row of its own (`QueueAdjudication`),
one per item and key. Deciding again replaces it; taking it back deletes it. The value is checked as a
reviewer's value of that key is (`reviews.values.check_value`), with the same sentences. An adjudication
needs no disagreement: an admin may settle the value of any item of the queue that is a trace.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from redline.db import utcnow
from redline.errors import Forbidden, Invalid, NotFound
from redline.identity.service import Actor
from redline.queues.annotation.reviewing import trace_of
from redline.queues.annotation.service import item_of, queue_for, review_keys
from redline.queues.models import Queue, QueueAdjudication, QueueItem
from redline.reviews.models import ReviewKey
from redline.reviews.service import key_not_found
from redline.reviews.values import check_value

MAX_NOTE = 2_000


def may_adjudicate(session: Session, actor: Actor, queue: Queue) -> bool:
    """Whether the actor may read the queue's disagreements and settle values (the admin role in its
    project), so pages offer them only to those who may."""
    try:
        queue_for(session, actor, queue.id, "admin")
    except Forbidden:
        return False
    return True


def queue_review_key(session: Session, actor: Actor, queue: Queue, key: str) -> ReviewKey:
    """The review key the queue is reviewed with under this key; any other is not found, in the
    document's sentence for a key the project does not define."""
    for review_key in review_keys(session, queue):
        if review_key.key == key:
            return review_key
    raise key_not_found(actor, key)


def typed_value(review_key: ReviewKey, typed: Sequence[str]) -> Any:
    """A value as a person types or picks it (a console form, the CLI) before `check_value` checks it: a
    multi-select's options each; a range's number (text that is no number is passed on, for the check to
    refuse in its own sentence); otherwise the one text. Several texts for a key that takes one are passed
    on as a list, which the check refuses."""
    if review_key.type == "categorical" and review_key.multiple:
        return list(typed)
    if len(typed) != 1:
        return list(typed)
    [text] = typed
    if review_key.type == "range":
        try:
            return float(text)
        except ValueError:
            return text
    return text


def _note(note: str | None) -> str | None:
    """The note as kept: None when it says nothing."""
    if note is None or not note.strip():
        return None
    if len(note) > MAX_NOTE:
        raise Invalid(f"note: a note is at most {MAX_NOTE:,} characters.", details={"field": "note"})
    return note.strip()


def _target(
    session: Session, actor: Actor, queue_id: uuid.UUID, item_id: uuid.UUID, key: str
) -> tuple[QueueItem, ReviewKey]:
    """The item and review key an admin settles a value for: the queue (admin role in its project, else
    forbidden; not found to whoever can't see it), the item in it, one of its keys, a trace."""
    queue = queue_for(session, actor, queue_id, "admin")
    item = item_of(session, actor, queue, item_id)
    review_key = queue_review_key(session, actor, queue, key)
    trace_of(item)
    return item, review_key


def adjudicate(
    session: Session,
    actor: Actor,
    queue_id: uuid.UUID,
    item_id: uuid.UUID,
    key: str,
    value: Any,
    note: str | None = None,
    *,
    typed: bool = False,
) -> tuple[QueueAdjudication, ReviewKey]:
    """Settle the item's value under `key` (replacing what was settled), as the actor, now. With `typed`,
    `value` is the texts a person typed or picked (`typed_value`)."""
    item, review_key = _target(session, actor, queue_id, item_id, key)
    stored = check_value(review_key, typed_value(review_key, value) if typed else value)
    kept_note = _note(note)
    found = session.get(QueueAdjudication, (item.id, review_key.id))
    if found is None:
        found = QueueAdjudication(item_id=item.id, review_key_id=review_key.id, queue_id=item.queue_id)
        session.add(found)
    found.value = stored
    found.note = kept_note
    found.decided_by = actor.principal_id
    found.decided_by_name = actor.name
    found.decided_at = utcnow()
    session.flush()
    return found, review_key


def take_back(session: Session, actor: Actor, queue_id: uuid.UUID, item_id: uuid.UUID, key: str) -> None:
    """Delete the item's settled value under `key`; not found when none is settled."""
    item, review_key = _target(session, actor, queue_id, item_id, key)
    found = session.get(QueueAdjudication, (item.id, review_key.id))
    if found is None:
        raise NotFound(
            "adjudication",
            f"{item.id}:{key}",
            f'No value is settled for item {item.id} under "{key}".',
        )
    session.delete(found)
    session.flush()
