"""The audit log's one table."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base, JSONDocument, UTCDateTime, new_id, utcnow


class AuditEvent(Base):
    """Something done that an admin must be able to account for later: who, what, when, with what."""

    __tablename__ = "audit_events"
    __table_args__ = (Index("ix_audit_events_workspace_at", "workspace_id", "at", "id"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    workspace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    project_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(60))
    # Kept as written, not as foreign keys: the log must outlive the principals it names.
    actor_kind: Mapped[str | None] = mapped_column(String(16))
    actor_id: Mapped[uuid.UUID | None] = mapped_column()
    data: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
