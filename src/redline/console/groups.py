"""Every corrector group a page lists or offers to pick from, read through the service's pages."""

from __future__ import annotations

from sqlalchemy.orm import Session

from redline.groups import service as groups
from redline.groups.service import GroupFilters, GroupView
from redline.identity.service import Actor
from redline.paging import MAX_LIMIT

# Enough pages of groups for any workspace a person reads or picks from; more would not fit a page.
MAX_GROUP_PAGES = 10


def every_group(session: Session, actor: Actor, filters: GroupFilters) -> list[GroupView]:
    """The live groups matching `filters` that the actor can read, oldest first (at most 10 pages)."""
    views: list[GroupView] = []
    cursor: str | None = None
    for _ in range(MAX_GROUP_PAGES):
        listed = groups.list_groups(session, actor, filters, limit=MAX_LIMIT, cursor=cursor)
        views.extend(listed.items)
        cursor = listed.next_cursor
        if cursor is None:
            break
    return views
