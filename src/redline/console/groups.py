"""Every corrector group a page lists or offers to pick from, read through the service's pages."""

from __future__ import annotations

from sqlalchemy.orm import Session

from redline.db.paging import MAX_LIMIT
from redline.groups.service import GroupFilters
from redline.identity.service import Actor
from redline.queues.expert import group_views
from redline.queues.expert.group_views import WantedGroupView

# Enough pages of groups for any workspace a person reads or picks from; more would not fit a page.
MAX_GROUP_PAGES = 10


def every_group(session: Session, actor: Actor, filters: GroupFilters) -> list[WantedGroupView]:
    """The live groups matching `filters` that the actor can read, oldest first (at most 10 pages)."""
    views: list[WantedGroupView] = []
    cursor: str | None = None
    for _ in range(MAX_GROUP_PAGES):
        listed = group_views.list_groups(session, actor, filters, limit=MAX_LIMIT, cursor=cursor)
        views.extend(listed.items)
        cursor = listed.next_cursor
        if cursor is None:
            break
    return views
