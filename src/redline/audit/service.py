"""Writing and reading the audit log. Events are written in the transaction of what they record, so an
event exists exactly when the thing it records happened."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.audit.models import AuditEvent
from redline.db import new_id, utcnow
from redline.db.keyset import past
from redline.db.paging import Page, check_limit, decode_time_cursor, time_cursor
from redline.errors import Forbidden
from redline.identity.service import Actor


def record(
    session: Session,
    actor: Actor,
    kind: str,
    data: dict[str, Any],
    *,
    project_id: uuid.UUID | None = None,
    at: datetime | None = None,
) -> AuditEvent:
    event = AuditEvent(
        id=new_id(),
        workspace_id=actor.workspace_id,
        project_id=project_id,
        kind=kind,
        actor_kind=actor.kind,
        actor_id=actor.principal_id,
        data=data,
        at=at or utcnow(),
    )
    session.add(event)
    session.flush()
    return event


@dataclass(frozen=True)
class AuditFilters:
    kinds: tuple[str, ...] = ()
    project_id: uuid.UUID | None = None
    since: datetime | None = None
    until: datetime | None = None


def list_events(
    session: Session, actor: Actor, filters: AuditFilters, *, limit: int, cursor: str | None
) -> Page[AuditEvent]:
    """The workspace's events, newest first; for workspace admins, since they span every project."""
    if not actor.workspace_admin:
        raise Forbidden("The audit log is for workspace admins.")
    check_limit(limit)
    query = select(AuditEvent).where(AuditEvent.workspace_id == actor.workspace_id)
    if filters.kinds:
        query = query.where(AuditEvent.kind.in_(filters.kinds))
    if filters.project_id is not None:
        query = query.where(AuditEvent.project_id == filters.project_id)
    if filters.since is not None:
        query = query.where(AuditEvent.at >= filters.since)
    if filters.until is not None:
        query = query.where(AuditEvent.at < filters.until)
    if cursor:
        query = query.where(past((AuditEvent.at, AuditEvent.id), decode_time_cursor(cursor), descending=True))
    rows = list(session.scalars(query.order_by(AuditEvent.at.desc(), AuditEvent.id.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(rows, time_cursor(rows[-1].at, rows[-1].id) if more else None)
