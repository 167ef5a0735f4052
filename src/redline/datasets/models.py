"""Datasets and their datapoints."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base, JSONDocument, UTCDateTime, new_id, utcnow


class Dataset(Base):
    """A curated set of datapoints for experiments, in a project (its `path` says where it is filed)."""

    __tablename__ = "datasets"
    __table_args__ = (Index("ix_datasets_workspace_created", "workspace_id", "created_at", "id"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    workspace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    path: Mapped[str | None] = mapped_column(String(500))
    # Bumped by every change to its datapoints: what an experiment records it ran against.
    version: Mapped[int] = mapped_column(Integer, default=0)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    updated_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Datapoint(Base):
    """One test case: inputs, messages and the expected output; made from a trace, it links to it."""

    __tablename__ = "datapoints"
    __table_args__ = (Index("ix_datapoints_dataset_created", "dataset_id", "created_at", "id"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    dataset_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    inputs: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    messages: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONDocument, nullable=True)
    expected_output: Mapped[str | None] = mapped_column(Text)
    # The trace it was made from; the link survives the trace's content being erased, not its deletion.
    trace_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("traces.id", ondelete="SET NULL"), index=True
    )
    snapshot_version: Mapped[int] = mapped_column(Integer, default=0)
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    updated_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
