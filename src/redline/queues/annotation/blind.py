"""Blind review: until a reviewer has saved their own values on an item of a blind queue, the other
reviewers' values for that queue's review keys on that item are hidden from them, on every reader.

Who is blinded: the queue's eligible reviewers (`reviewers.reviews_queue`: the write role in its project
and one of its reviewers) below admin. An admin of the queue's project, a workspace or installation
admin, the local operator, a reader who may not review the queue: each sees every value. A reviewer
sees their own values always, and everyone's on an item once they have reviewed it (their place in it
is `places.REVIEWED`: a value for every key the queue asks).

How: `blindness` reads, once per session (a request's), the blind queues the actor is eligible for and
their review keys: nothing at all for an admin; otherwise one statement, built once, for the blind
queues of the projects the actor writes in (none, mostly: ~0.15 ms on SQLite, bench/README.md), and
only for each one found, who reviews it and its keys. `Blindness.hidden` is one condition over
`Annotation` that every reader adds (`annotations.hidden`): a review value under one of those keys, by
someone else, on the place of an item of that queue the actor has not reviewed. With no blind queue it
adds nothing to the SQL. A figure computed from values (agreement, an experiment's averages) takes the
same condition, so to a reviewer still working through a blind queue it counts only what they may see.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, bindparam, exists, or_, select
from sqlalchemy.orm import Session, aliased

from redline.annotations.hidden import NOTHING_HIDDEN, Hidden
from redline.annotations.models import Annotation
from redline.identity.models import Membership
from redline.identity.service import Actor
from redline.queues.annotation.items import on_the_item
from redline.queues.annotation.places import REVIEWED
from redline.queues.annotation.reviewers import BLIND, may_review
from redline.queues.annotation.service import ANNOTATION, review_keys
from redline.queues.models import Queue, QueueItem, QueueItemReviewer
from redline.reviews.kinds import REVIEW_VALUE

# Project roles that review without seeing all: write and publish (admin sees all, read doesn't review).
_BLINDED_ROLES = ("write", "publish")
# Where `blindness` keeps what it found in a session, by whom it is for.
_KEPT = "redline.blind-review"
# The blind queues of the projects where the actor is blinded by role: plain rows from a statement built
# once, as every read of annotations by someone other than an admin runs it.
_BLIND_QUEUES = (
    select(Queue.id)
    .join(
        Membership,
        and_(Membership.project_id == Queue.project_id, Membership.principal_id == bindparam("principal_id")),
    )
    .where(
        Queue.workspace_id == bindparam("workspace_id"),
        Queue.kind == ANNOTATION,
        Membership.role.in_(_BLINDED_ROLES),
        BLIND,
    )
)


@dataclass(frozen=True)
class BlindQueue:
    """A blind queue the actor reviews, and the keys it is reviewed with."""

    id: uuid.UUID
    keys: tuple[str, ...]


@dataclass(frozen=True)
class Blindness:
    """The blind queues an actor reviews (none for most, and for every admin) and what that hides."""

    principal_id: uuid.UUID | None
    queues: tuple[BlindQueue, ...] = ()

    def blinds(self, queue_id: uuid.UUID) -> bool:
        """Whether the actor is one of this blind queue's reviewers (and so blind on its unreviewed items)."""
        return any(queue.id == queue_id for queue in self.queues)

    @property
    def hidden(self) -> Hidden:
        if not self.queues or self.principal_id is None:
            return NOTHING_HIDDEN
        # An item of its own: a reader's statement may have a QueueItem it is about (agreement does).
        item = aliased(QueueItem)
        reviewed_it = exists().where(
            QueueItemReviewer.item_id == item.id,
            QueueItemReviewer.principal_id == self.principal_id,
            QueueItemReviewer.state == REVIEWED,
        )
        of_its_queue = or_(
            *(and_(item.queue_id == queue.id, Annotation.key.in_(queue.keys)) for queue in self.queues)
        )
        on_an_item_not_reviewed = exists().where(
            item.trace_id == Annotation.trace_id, of_its_queue, on_the_item(item), ~reviewed_it
        )
        every_key = sorted({key for queue in self.queues for key in queue.keys})
        by_someone_else = or_(Annotation.author_id.is_(None), Annotation.author_id != self.principal_id)
        condition: ColumnElement[bool] = and_(
            REVIEW_VALUE, Annotation.key.in_(every_key), by_someone_else, on_an_item_not_reviewed
        )
        return Hidden(condition)


def _blind_queues(session: Session, actor: Actor) -> tuple[BlindQueue, ...]:
    if actor.principal_id is None or actor.workspace_admin or actor.installation_admin:
        return ()
    parameters = {"principal_id": actor.principal_id, "workspace_id": actor.workspace_id}
    blind = session.connection().execute(_BLIND_QUEUES, parameters).scalars().all()
    found = []
    for queue in (session.get_one(Queue, queue_id) for queue_id in blind):
        if may_review(session, actor, queue):
            keys = tuple(review_key.key for review_key in review_keys(session, queue))
            if keys:
                found.append(BlindQueue(queue.id, keys))
    return tuple(found)


def blindness(session: Session, actor: Actor) -> Blindness:
    """The blind queues the actor reviews, read once in a session however many readers ask."""
    kept: dict[tuple[uuid.UUID, uuid.UUID | None], Blindness] = session.info.setdefault(_KEPT, {})
    key = (actor.workspace_id, actor.principal_id)
    if key not in kept:
        kept[key] = Blindness(actor.principal_id, _blind_queues(session, actor))
    return kept[key]


def hidden_from(session: Session, actor: Actor) -> Hidden:
    """What every reader of annotations leaves out for the actor (`Blindness.hidden`)."""
    return blindness(session, actor).hidden
