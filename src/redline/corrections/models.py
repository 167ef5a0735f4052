"""Tables of corrections: each correction (with its history), the tallies that count them, test runs."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    ColumnElement,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    and_,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base, JSONDocument, UTCDateTime, new_id, utcnow


class Correction(Base):
    """One person's word on one run, with copies of the run's input and output so it outlives them.

    A correction made again by the same caller and participant replaces this one: the old row stays,
    pointing at its successor through `superseded_by`, and loses its `live_key`.
    """

    __tablename__ = "corrections"
    __table_args__ = (
        # One live correction per person per run; superseded rows have no key, and NULLs never clash.
        UniqueConstraint("run_id", "live_key"),
        # The list's order (newest first) within a project, and within each filter that narrows it to a
        # few rows of a project's many: each is walked from its newest end, so a first page (and an
        # export's next page) reads about the rows it returns (`service.filtered` names them to SQLite).
        Index("ix_corrections_project_created", "project_id", "created_at", "id"),
        Index("ix_corrections_agent_created", "agent_id", "created_at", "id"),
        Index("ix_corrections_agent_version_created", "agent_id", "agent_version", "created_at", "id"),
        Index("ix_corrections_flow_created", "flow_id", "created_at", "id"),
        Index("ix_corrections_run_created", "run_id", "created_at", "id"),
        Index("ix_corrections_group_created", "corrector_group_id", "created_at", "id"),
        Index("ix_corrections_participant_created", "participant_id", "created_at", "id"),
        Index("ix_corrections_made_by_created", "made_by_id", "created_at", "id"),
        # To fix reads each part a status at a time (`tofix`), newest first, however few of a project's
        # corrections are left in it: an agent's or a flow's sorted to one fixer, or any sorted to none.
        # Partial, so neither store ever tests a NULL inside the index (PostgreSQL would not read an
        # index in order past one) and each range is an index's own.
        Index(
            "ix_corrections_fix_agents",
            "project_id",
            "status",
            "sorted_to",
            "created_at",
            "id",
            sqlite_where=text("flow_id IS NULL"),
            postgresql_where=text("flow_id IS NULL"),
        ),
        Index(
            "ix_corrections_fix_flows",
            "project_id",
            "status",
            "sorted_to",
            "created_at",
            "id",
            sqlite_where=text("flow_id IS NOT NULL"),
            postgresql_where=text("flow_id IS NOT NULL"),
        ),
        Index(
            "ix_corrections_fix_unsorted",
            "project_id",
            "status",
            "created_at",
            "id",
            sqlite_where=text("sorted_to IS NULL"),
            postgresql_where=text("sorted_to IS NULL"),
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    workspace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("traces.id", ondelete="CASCADE"))
    agent_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("agents.id"))
    flow_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("flows.id"))
    agent_version: Mapped[str | None] = mapped_column(String(200))

    decisions: Mapped[str | None] = mapped_column(String(8))
    should_call: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONDocument, nullable=True)
    must_not_call: Mapped[list[str] | None] = mapped_column(JSONDocument, nullable=True)
    answer: Mapped[str | None] = mapped_column(String(8))
    should_say: Mapped[str | None] = mapped_column(Text)
    items: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONDocument, nullable=True)
    why: Mapped[str | None] = mapped_column(Text)

    # The group and the expert mark are decided on save; a group's later changes never move them.
    corrector_group_id: Mapped[uuid.UUID | None] = mapped_column()
    expert: Mapped[bool] = mapped_column(Boolean, default=False)
    # Marks nothing wrong (no wrong decisions, answer or item): the "yes" of a rule's results.
    marked_right: Mapped[bool] = mapped_column(Boolean, default=False)
    made_by_kind: Mapped[str] = mapped_column(String(16))
    made_by_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("principals.id"))
    participant_id: Mapped[str | None] = mapped_column(String(200))
    live_key: Mapped[str | None] = mapped_column(String(300))

    status: Mapped[str] = mapped_column(String(16))
    sorted_to: Mapped[str | None] = mapped_column(String(16))
    sorted: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    link: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    fixed_in: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    reopened_in: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    status_note: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)

    run_input: Mapped[Any] = mapped_column(JSONDocument, nullable=True)
    run_output: Mapped[Any] = mapped_column(JSONDocument, nullable=True)
    run_captured_at: Mapped[datetime] = mapped_column(UTCDateTime)

    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    superseded_by: Mapped[uuid.UUID | None] = mapped_column()
    unregistered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


# A correction that counts in a rule's results and an item's progress: neither replaced nor removed.
COUNTED: ColumnElement[bool] = and_(Correction.superseded_by.is_(None), Correction.unregistered_at.is_(None))


class CorrectionTally(Base):
    """Live corrections by status, per project and per agent or flow in a project.

    Kept in step with every save and status change, in the same transaction, so the counts page is a
    handful of rows whatever the number of corrections.
    """

    __tablename__ = "correction_tallies"

    # "<project id>" for the whole project, "<project id>/<agent or flow id>" for one producer.
    scope_key: Mapped[str] = mapped_column(String(80), primary_key=True)
    status: Mapped[str] = mapped_column(String(16), primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)


class TestRun(Base):
    """A version tried on a project's corrections as test cases, and what each case said."""

    __tablename__ = "correction_test_runs"
    __test__ = False  # not a pytest test class, whatever its name

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    agent_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("agents.id"))
    flow_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("flows.id"))
    version: Mapped[str] = mapped_column(String(200))
    how: Mapped[str] = mapped_column(String(16))
    experts_only: Mapped[bool] = mapped_column(Boolean, default=False)
    results: Mapped[list[dict[str, Any]]] = mapped_column(JSONDocument)
    made_by_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
