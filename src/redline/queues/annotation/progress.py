"""How far a queue's review has come: the queue's items fully reviewed, partly reviewed (some of their
reviewers done) and untouched, and for each reviewer how many items they have reviewed, hold now and
skipped ("how many done or pending per annotator").

Two grouped reads over the queue's reviewer rows (`queue_item_reviewers`, indexed by queue and
reviewer) and the queue's own counters; nothing is loaded row by row. A hold counts while it is live.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import and_, case, func, select
from sqlalchemy.orm import Session

from redline.db import utcnow
from redline.identity.service import Actor, principal_names
from redline.queues.annotation.places import HELD, REVIEWED, SKIPPED
from redline.queues.annotation.service import queue_for
from redline.queues.holds import count_where
from redline.queues.models import QueueItem, QueueItemReviewer


@dataclass(frozen=True)
class ReviewerProgress:
    principal_id: uuid.UUID
    name: str | None
    reviewed: int
    held: int
    skipped: int


@dataclass(frozen=True)
class QueueProgress:
    """`reviewed` items have every reviewer they ask for, `partly` some, `untouched` none yet (an item
    only held counts as untouched); `held` items are held by someone now."""

    reviewers_per_item: int
    items: int
    reviewed: int
    partly: int
    untouched: int
    held: int
    reviewers: list[ReviewerProgress]


def progress(session: Session, actor: Actor, queue_id: uuid.UUID) -> QueueProgress:
    """The queue's progress and each reviewer's, for an actor who may read the queue. Reviewers are in
    order of name; one whose every hold has lapsed (and who reviewed and skipped nothing) is left out."""
    queue = queue_for(session, actor, queue_id, "read")
    session.refresh(queue, ["items_count", "reviewed_count"])
    now = utcnow()
    row = QueueItemReviewer
    live_hold = and_(row.state == HELD, row.held_until > now)
    per_reviewer = session.execute(
        select(
            row.principal_id,
            count_where(row.state == REVIEWED),
            count_where(live_hold),
            count_where(row.state == SKIPPED),
        )
        .where(row.queue_id == queue.id)
        .group_by(row.principal_id)
    ).all()
    partly, held = session.execute(
        select(
            func.count(func.distinct(case((row.state == REVIEWED, row.item_id)))),
            func.count(func.distinct(case((live_hold, row.item_id)))),
        )
        .join(QueueItem, QueueItem.id == row.item_id)
        .where(row.queue_id == queue.id, QueueItem.reviewed_at.is_(None))
    ).one()
    names = principal_names(session, [principal_id for principal_id, *_ in per_reviewer])
    reviewers = sorted(
        (
            ReviewerProgress(principal_id, names.get(principal_id), int(done), int(holding), int(passed))
            for principal_id, done, holding, passed in per_reviewer
            if done or holding or passed
        ),
        key=lambda one: ((one.name or "").casefold(), str(one.principal_id)),
    )
    return QueueProgress(
        reviewers_per_item=queue.reviewers_per_item,
        items=queue.items_count,
        reviewed=queue.reviewed_count,
        partly=int(partly),
        untouched=queue.items_count - queue.reviewed_count - int(partly),
        held=int(held),
        reviewers=reviewers,
    )
