"""How far correcting the expert queue has come, per corrector: how many runs each has corrected in a
place of the queue and how many they hold now, with how many runs wait and how many of those are held
("how many done or pending per corrector", as an annotation queue's reviewers have it).

One grouped read over the project's places (`expert_item_correctors`, indexed by project and corrector)
and one count of the waiting runs; nothing is loaded row by row. A hold counts while it is live. A run
corrected before it was queued, or for an app's participant, took no place and is not counted here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from redline.db import utcnow
from redline.identity.service import Actor, principal_names, require_project_role
from redline.queues import holds
from redline.queues.expert.engine import OPEN
from redline.queues.expert.places import CORRECTED
from redline.queues.holds import count_where
from redline.queues.models import ExpertItem, ExpertItemCorrector


@dataclass(frozen=True)
class CorrectorProgress:
    principal_id: uuid.UUID
    name: str | None
    corrected: int
    held: int


@dataclass(frozen=True)
class QueueProgress:
    """`waiting` runs are open; `held` of them are held by someone now."""

    waiting: int
    held: int
    correctors: list[CorrectorProgress]


def progress(session: Session, actor: Actor, project_id: uuid.UUID) -> QueueProgress:
    """The project's queue and each corrector's part in it, for an actor who may read the project.
    Correctors are in order of name; one whose every hold has lapsed (and who corrected nothing) is left
    out."""
    require_project_role(session, actor, project_id, "read")
    now = utcnow()
    row = ExpertItemCorrector
    # A hold of a run that has left the queue since holds nothing any more.
    live = and_(holds.live_hold(row, now), ExpertItem.state == OPEN)
    in_project = (
        select()
        .select_from(row)
        .join(ExpertItem, ExpertItem.run_id == row.run_id)
        .where(row.project_id == project_id)
    )
    counts = (row.principal_id, count_where(row.state == CORRECTED), count_where(live))
    per_corrector = session.execute(in_project.add_columns(*counts).group_by(row.principal_id)).all()
    held = session.scalar(in_project.add_columns(func.count(func.distinct(row.run_id))).where(live))
    waiting = session.scalar(
        select(func.count()).where(ExpertItem.project_id == project_id, ExpertItem.state == OPEN)
    )
    names = principal_names(session, [principal_id for principal_id, *_ in per_corrector])
    correctors = sorted(
        (
            CorrectorProgress(principal_id, names.get(principal_id), int(done), int(holding))
            for principal_id, done, holding in per_corrector
            if done or holding
        ),
        key=lambda one: ((one.name or "").casefold(), str(one.principal_id)),
    )
    return QueueProgress(int(waiting or 0), int(held or 0), correctors)


def progress_dict(found: QueueProgress) -> dict[str, object]:
    """As the corrections surface has it (camelCase; a corrector removed since has no name)."""
    return {
        "waiting": found.waiting,
        "held": found.held,
        "correctors": [
            {"userId": str(one.principal_id), "name": one.name, "corrected": one.corrected, "held": one.held}
            for one in found.correctors
        ],
    }
