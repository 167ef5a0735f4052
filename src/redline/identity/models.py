"""Tables of identity and access."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base, UTCDateTime, new_id, utcnow


class Workspace(Base):
    """A tenant: everything else belongs to exactly one. Installation admins make and delete them."""

    __tablename__ = "workspaces"
    # Names are how people pick a workspace at the CLI (`--workspace`), so one names one.
    __table_args__ = (Index("ux_workspaces_name", "name", unique=True),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Project(Base):
    """A unit of access and settings inside a workspace."""

    __tablename__ = "projects"
    __table_args__ = (UniqueConstraint("workspace_id", "name"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    workspace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    # End users' corrections wait unsorted for a person unless the project sorts them like the others.
    sort_end_user_corrections: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Days a run's content is kept after it started; None keeps it for good (`redline.traces.retention`).
    retention_days: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Principal(Base):
    """A person (`user`) or a program (`service`) that holds tokens."""

    __tablename__ = "principals"
    __table_args__ = (UniqueConstraint("workspace_id", "name"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    workspace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16))
    # Only users carry a reviewer role; services have none.
    reviewer_role: Mapped[str | None] = mapped_column(String(16))
    workspace_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    # May make, list, export and delete workspaces (the first start's admin): above every workspace, yet
    # it sees into none but its own.
    installation_admin: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Token(Base):
    """A bearer credential. Only a SHA-256 of the secret is kept; the prefix lets people tell tokens apart."""

    __tablename__ = "tokens"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    principal_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("principals.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    prefix: Mapped[str] = mapped_column(String(16))
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Membership(Base):
    """A principal's role in one project: read < write < publish < admin."""

    __tablename__ = "memberships"

    project_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    principal_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("principals.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    role: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class InstanceSetting(Base):
    """Values generated once per installation and shared by every process (e.g. the cookie-signing key)."""

    __tablename__ = "instance_settings"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(String(1000))
