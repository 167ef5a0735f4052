"""The corrector-group table."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Float, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base, JSONDocument, UTCDateTime, new_id, utcnow


class CorrectorGroup(Base):
    """Who may correct as the group (`assertable_by`), where it applies, and what each correction weighs.

    A removed group keeps its row (corrections that named it still count with its weight) but gives up
    its `live_name`, so a new group may take the name while the unique key holds for live ones.
    """

    __tablename__ = "corrector_groups"
    __table_args__ = (
        UniqueConstraint("workspace_id", "scope_key", "live_name"),
        Index("ix_corrector_groups_workspace_created", "workspace_id", "created_at", "id"),
        Index("ix_corrector_groups_project", "project_id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    workspace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    # "workspace", "project" or "agent" (an agent in a project).
    scope_kind: Mapped[str] = mapped_column(String(16))
    project_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    agent_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("agents.id", ondelete="CASCADE"))
    # "" for the workspace, "<project id>" or "<project id>/<agent id>": the name is unique per scope.
    scope_key: Mapped[str] = mapped_column(String(80))
    name: Mapped[str] = mapped_column(String(100))
    live_name: Mapped[str | None] = mapped_column(String(100))
    weight: Mapped[float] = mapped_column(Float, default=1.0)
    description: Mapped[str | None] = mapped_column(Text)
    # {minReviewerRole?, principalKinds?, principalIds?}; None when anyone who may correct the run may
    # correct as the group.
    assertable_by: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    unregistered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
