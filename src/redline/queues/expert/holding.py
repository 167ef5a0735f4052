"""A corrector taking a place in a run of the expert queue: the run they open, held for them, or their
next one (the oldest waiting run they could take a place in), as the console's To review and
/v1/projects/{projectId}/expert-queue/{runId}/hold and /next do. Where places come from and how they are
claimed is `places.py`'s.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from redline.db.keyset import past
from redline.errors import Conflict, Forbidden
from redline.identity.service import Actor, require_project_role
from redline.queues.expert import engine, listing, places
from redline.queues.expert.places import CORRECTED, HELD
from redline.queues.models import ExpertItem

# How many candidates "next" reads at a time; one is usually enough, the rest serve lost races.
CANDIDATES = 8


@dataclass(frozen=True)
class Held:
    """A run as the list shows it, and where it stands for the corrector now."""

    view: listing.ItemView
    standing: places.Standing


def _corrector(actor: Actor) -> uuid.UUID:
    if actor.principal_id is None:
        raise Forbidden(
            "Holding a run takes a user's token: the local operator is nobody to count as a corrector."
        )
    return actor.principal_id


def no_place(places_count: int) -> Conflict:
    return Conflict(
        f"This run has all the correctors its rules want ({places_count}), or its last places are held by "
        "others for now: take the next one instead.",
        code="queue-item-taken",
    )


def _holds(session: Session, item: ExpertItem, condition: ColumnElement[bool]) -> bool:
    return (
        session.scalar(select(ExpertItem.run_id).where(ExpertItem.run_id == item.run_id, condition))
        is not None
    )


def _open_to_actor(session: Session, actor: Actor, item: ExpertItem) -> None:
    """Refuse a run the actor can't take a place in: not waiting, with no rule waiting for a correction
    they may give, or corrected by them already."""
    if item.state != engine.OPEN:
        raise Conflict(
            f'Run "{item.run_id}" is {item.state} in the expert queue: only open items can be held.',
            code="queue-item-not-open",
            details={"runId": str(item.run_id), "state": item.state},
        )
    if not _holds(session, item, listing.closable_by(session, actor, item.project_id)):
        raise Conflict(
            "None of this run's rules still waits for a correction you may give: it waits for other "
            "correctors.",
            code="queue-item-not-for-you",
        )
    if not _holds(session, item, listing.closable_by(session, actor, item.project_id, counting_mine=True)):
        raise Conflict(
            "You have corrected this run already: your correction counts once.",
            code="queue-item-corrected-by-you",
        )


def hold(session: Session, actor: Actor, project_id: uuid.UUID, run_id: uuid.UUID) -> Held:
    """Hold a place of the waiting run for the actor (renew their hold; a run they corrected keeps their
    place), letting go of their other holds in the project's queue; refused (409) when it has no place
    for them."""
    principal_id = _corrector(actor)
    require_project_role(session, actor, project_id, "write")
    item = session.get(ExpertItem, run_id)
    if item is None or item.project_id != project_id:
        raise engine.item_not_found(run_id)
    mine = places.standing(session, principal_id, item).mine
    if mine != CORRECTED:
        _open_to_actor(session, actor, item)
        count = places.lock_places(session, run_id)
        session.refresh(item)
        if places.take(session, item, principal_id, count) is None:
            raise no_place(count)
    return Held(listing.item_view(session, actor, item), places.standing(session, principal_id, item))


def claim_next(
    session: Session, actor: Actor, project_id: uuid.UUID, filters: listing.QueueFilters
) -> Held | None:
    """The actor's next run, held for them: the oldest waiting one the filters match that they could take
    a place in (`for_me`). One lost to someone quicker is passed over for the one after; None when none
    is left."""
    principal_id = _corrector(actor)
    require_project_role(session, actor, project_id, "write")
    where, _ = listing.matching(
        session, actor, project_id, replace(filters, states=(engine.OPEN,), for_me=True)
    )
    order = (ExpertItem.added_at, ExpertItem.run_id)
    after: tuple[datetime, uuid.UUID] | None = None
    while True:
        query = select(ExpertItem).where(*where)
        if after is not None:
            query = query.where(past(order, after, descending=False))
        candidates = list(session.scalars(query.order_by(*order).limit(CANDIDATES)))
        if not candidates:
            return None
        for item in candidates:
            count = places.lock_places(session, item.run_id)
            session.refresh(item)
            if item.state == engine.OPEN and places.take(session, item, principal_id, count) == HELD:
                return Held(
                    listing.item_view(session, actor, item), places.standing(session, principal_id, item)
                )
            after = (item.added_at, item.run_id)
