"""Corrector groups as their pages show them: each group with the expert-queue rules that want a
correction of it. A group knows nothing of rules (groups sit below queues); this read model, which the
corrections surface, the console and the CLI share, puts the two side by side.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.db import in_chunks
from redline.db.paging import Page
from redline.groups import service as groups
from redline.groups.models import CorrectorGroup
from redline.groups.schemas import GroupChange, GroupIn
from redline.identity.service import Actor, visible_projects
from redline.queues import versions
from redline.queues.models import QueueRule


@dataclass(frozen=True)
class WantingRule:
    """A live queue rule whose latest version wants a correction of the group."""

    rule_id: uuid.UUID
    name: str


@dataclass(frozen=True)
class WantedGroupView:
    """A group as one caller may see it (`groups.service.GroupView`), with the rules that want it among
    those of projects the caller reads."""

    group: CorrectorGroup
    wanted_by: list[WantingRule]
    sees_principals: bool


def wanting(
    session: Session, actor: Actor, group_ids: Collection[uuid.UUID]
) -> dict[uuid.UUID, list[WantingRule]]:
    """The live expert-queue rules that want each group, by name, among those of projects the actor
    reads (a workspace group may be wanted in projects the caller can't see)."""
    readable = (
        None if actor.workspace_admin else {project.id for project, _ in visible_projects(session, actor)}
    )
    found: dict[uuid.UUID, list[WantingRule]] = defaultdict(list)
    for chunk in in_chunks(sorted(group_ids)):
        rows = session.execute(
            select(QueueRule.corrector_group_id, QueueRule.rule_id, QueueRule.name, QueueRule.project_id)
            .where(QueueRule.corrector_group_id.in_(chunk), QueueRule.queue_id.is_(None), versions.LIVE)
            .order_by(QueueRule.name, QueueRule.rule_id)
        )
        for group_id, rule_id, name, project_id in rows:
            if group_id is not None and (readable is None or project_id in readable):
                found[group_id].append(WantingRule(rule_id, name))
    return found


def _with_wanting(session: Session, actor: Actor, views: list[groups.GroupView]) -> list[WantedGroupView]:
    wanted = wanting(session, actor, [view.group.id for view in views])
    return [
        WantedGroupView(view.group, wanted.get(view.group.id, []), view.sees_principals) for view in views
    ]


def get(session: Session, actor: Actor, group_id: uuid.UUID) -> WantedGroupView:
    """One group, live or removed."""
    return _with_wanting(session, actor, [groups.get(session, actor, group_id)])[0]


def list_groups(
    session: Session, actor: Actor, filters: groups.GroupFilters, *, limit: int, cursor: str | None
) -> Page[WantedGroupView]:
    """A page of live groups the actor can read, oldest first."""
    page = groups.list_groups(session, actor, filters, limit=limit, cursor=cursor)
    return Page(_with_wanting(session, actor, page.items), page.next_cursor)


def create(session: Session, actor: Actor, body: GroupIn) -> WantedGroupView:
    """A new group (no rule wants it yet)."""
    view = groups.create(session, actor, body)
    return WantedGroupView(view.group, [], view.sees_principals)


def change(session: Session, actor: Actor, group_id: uuid.UUID, body: GroupChange) -> WantedGroupView:
    """The group changed as `groups.service.change` says."""
    return _with_wanting(session, actor, [groups.change(session, actor, group_id, body)])[0]


def remove(session: Session, actor: Actor, group_id: uuid.UUID) -> WantedGroupView:
    """The group removed; the rules that still want it are named, for the caller to change."""
    return _with_wanting(session, actor, [groups.remove(session, actor, group_id)])[0]
