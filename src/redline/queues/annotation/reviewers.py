"""Who reviews an annotation queue, and how: its overlap settings checked as they are set, and whether a
caller may review its items.

A queue's items are each reviewed by `reviewers_per_item` distinct people (1 to 20, default 1). Anyone
who may write in the queue's project may review, unless the queue names its reviewers (`reviewers`):
then only the people it names, those who may correct as one of the corrector groups it names, or those
of its reviewer role or above — any one of these is enough. The item a reviewer opens is held for them
for `hold_minutes` (1 to 1440, default 10). `blind` (default: on when more than one person reviews each
item) hides the other reviewers' values on an item from a reviewer until they have saved their own, on
every reader (`blind.py`).
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from redline.db import in_chunks, parse_id
from redline.errors import Forbidden, Invalid
from redline.groups.models import CorrectorGroup
from redline.groups.service import WORKSPACE, may_give
from redline.groups.service import names as group_names
from redline.identity.models import Project
from redline.identity.service import (
    REVIEWER_ROLES,
    Actor,
    holds,
    principal_names,
    principals_in_workspace,
    project_role,
)
from redline.queues.annotation.schemas import MAX_HOLD_MINUTES, MAX_REVIEWERS_PER_ITEM, ReviewersIn
from redline.queues.holds import DEFAULT_HOLD_MINUTES as DEFAULT_HOLD_MINUTES
from redline.queues.models import Queue

DEFAULT_REVIEWERS_PER_ITEM = 1
PRINCIPAL_IDS, GROUP_IDS, MIN_ROLE = "principalIds", "groupIds", "minReviewerRole"


def is_blind(queue: Queue) -> bool:
    """Whether the queue's reviewers are to be blind to each other's values: as set, else when more than
    one person reviews each item."""
    return queue.blind if queue.blind is not None else queue.reviewers_per_item > 1


# `is_blind` as a condition on the queues' rows, for a statement that picks the blind ones out (blind.py).
BLIND = or_(Queue.blind.is_(True), and_(Queue.blind.is_(None), Queue.reviewers_per_item > 1))


def _whole_number(value: Any, field: str, most: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise Invalid(f"{field}: a whole number from 1 to {most}; got {value}.", details={"field": field})
    return value


def checked_reviewers_per_item(value: Any) -> int:
    return _whole_number(value, "reviewers_per_item", MAX_REVIEWERS_PER_ITEM)


def checked_hold_minutes(value: Any) -> int:
    return _whole_number(value, "hold_minutes", MAX_HOLD_MINUTES)


def _ids(values: list[str], field: str) -> list[uuid.UUID]:
    parsed = []
    for value in dict.fromkeys(values):
        ident = parse_id(value)
        if ident is None:
            raise Invalid(f"{field}: {value} is not an id.", details={"field": field})
        parsed.append(ident)
    return parsed


def stored_reviewers(
    session: Session, actor: Actor, project_id: uuid.UUID | None, asked: ReviewersIn | None
) -> dict[str, Any] | None:
    """Who may review, as the queue keeps it (None: anyone who may write in its project). Each person
    named must be of the workspace, each group a live one that applies to the queue's project."""
    if asked is None:
        return None
    people = _ids(asked.principal_ids, "reviewers.principal_ids")
    groups = _ids(asked.group_ids, "reviewers.group_ids")
    if not people and not groups and asked.min_reviewer_role is None:
        raise Invalid(
            "reviewers: name people (principal_ids), corrector groups (group_ids) or a min_reviewer_role; "
            "send null to let anyone who may write in the project review.",
            details={"field": "reviewers"},
        )
    found = principals_in_workspace(session, actor.workspace_id, people)
    for ident in people:
        if ident not in found:
            raise Invalid(
                f"reviewers.principal_ids: {ident} is not a user of this workspace.",
                details={"field": "reviewers.principal_ids"},
            )
    applying = {group.id for group in _live_groups(session, actor.workspace_id, groups, project_id)}
    for ident in groups:
        if ident not in applying:
            raise Invalid(
                f"reviewers.group_ids: {ident} is not a live corrector group that applies to this queue's "
                "project.",
                details={"field": "reviewers.group_ids"},
            )
    kept: dict[str, Any] = {}
    if people:
        kept[PRINCIPAL_IDS] = [str(ident) for ident in people]
    if groups:
        kept[GROUP_IDS] = [str(ident) for ident in groups]
    if asked.min_reviewer_role is not None:
        kept[MIN_ROLE] = asked.min_reviewer_role
    return kept


def _live_groups(
    session: Session, workspace_id: uuid.UUID, group_ids: list[uuid.UUID], project_id: uuid.UUID | None
) -> list[CorrectorGroup]:
    """The live groups among these that apply to the project: the workspace's, the project's, its agents'."""
    found: list[CorrectorGroup] = []
    applies = CorrectorGroup.scope_kind == WORKSPACE
    if project_id is not None:
        applies = or_(applies, CorrectorGroup.project_id == project_id)
    for chunk in in_chunks(group_ids):
        found.extend(
            session.scalars(
                select(CorrectorGroup).where(
                    CorrectorGroup.id.in_(chunk),
                    CorrectorGroup.workspace_id == workspace_id,
                    CorrectorGroup.unregistered_at.is_(None),
                    applies,
                )
            )
        )
    return found


def may_review(session: Session, actor: Actor, queue: Queue) -> bool:
    """Whether the actor is one of the queue's reviewers (write in its project is checked apart). Only a
    person or a service with a principal reviews: the local operator holds no place."""
    if actor.principal_id is None:
        return False
    named = queue.reviewers
    if not named:
        return True
    if str(actor.principal_id) in named.get(PRINCIPAL_IDS, []):
        return True
    role = named.get(MIN_ROLE)
    if (
        role is not None
        and actor.reviewer_role is not None
        and REVIEWER_ROLES.index(actor.reviewer_role) >= REVIEWER_ROLES.index(role)
    ):
        return True
    groups = _ids(named.get(GROUP_IDS, []), "reviewers.group_ids")
    return any(
        may_give(actor, group)
        for group in _live_groups(session, queue.workspace_id, groups, queue.project_id)
    )


def reviews_queue(session: Session, actor: Actor, queue: Queue) -> bool:
    """Whether the actor may review the queue's items: write in its project, and one of its reviewers.
    For the pages that offer reviewing only to those who may (a queue of no project: workspace admins)."""
    if queue.project_id is None:
        writes = actor.workspace_admin
    else:
        project = session.get(Project, queue.project_id)
        writes = project is not None and holds(project_role(session, actor, project), "write")
    return writes and may_review(session, actor, queue)


def require_reviewer(session: Session, actor: Actor, queue: Queue) -> None:
    if actor.principal_id is None:
        raise Forbidden(
            "Reviewing a queue's items takes a user's token: the local operator is nobody to count as a "
            "reviewer."
        )
    if not may_review(session, actor, queue):
        raise Forbidden(
            "You are not one of this queue's reviewers: it names the people, corrector groups or reviewer "
            "role that review it.",
            code="annotation-queue-not-a-reviewer",
        )


def who_reviews(session: Session, queue: Queue) -> str:
    """Who may review the queue, in words: "ana, ben; group leads; senior reviewers or above", or anyone
    who may write in its project."""
    named = queue.reviewers or {}
    said: list[str] = []
    people = _ids(named.get(PRINCIPAL_IDS, []), "reviewers.principal_ids")
    if people:
        known = principal_names(session, people)
        said.append(", ".join(known.get(ident, "someone since removed") for ident in people))
    groups = _ids(named.get(GROUP_IDS, []), "reviewers.group_ids")
    if groups:
        known = group_names(session, groups)
        said.append(
            ("group " if len(groups) == 1 else "groups ") + ", ".join(known.get(g, str(g)) for g in groups)
        )
    if named.get(MIN_ROLE):
        said.append(f"{named[MIN_ROLE]} reviewers or above")
    return "; ".join(said) if said else "anyone who may write in the project"


def reviewers_wire(named: dict[str, Any] | None) -> dict[str, Any] | None:
    """Who may review, as the reviews surface spells it (snake_case), or None for anyone who may write."""
    if not named:
        return None
    return {
        "principal_ids": list(named.get(PRINCIPAL_IDS, [])),
        "group_ids": list(named.get(GROUP_IDS, [])),
        "min_reviewer_role": named.get(MIN_ROLE),
    }
