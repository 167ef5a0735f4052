"""The annotations table: one piece of feedback on a trace or one of its steps."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, SmallInteger, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base, JSONDocument, UTCDateTime, new_id, utcnow


class Annotation(Base):
    """A rating, a comment or both, on a whole trace or one step, optionally anchored to quoted text."""

    __tablename__ = "annotations"
    __table_args__ = (
        Index("ix_annotations_trace_created", "trace_id", "created_at"),
        # The export walks every annotation in this order, a page at a time.
        Index("ix_annotations_created_id", "created_at", "id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    trace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("traces.id", ondelete="CASCADE"))
    step_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("steps.id", ondelete="CASCADE"), index=True)
    rating: Mapped[int | None] = mapped_column(SmallInteger)
    comment: Mapped[str | None] = mapped_column(Text)
    # {text, prefix, suffix, start, end}: the anchor as given plus the resolved character offsets.
    quote: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    label_error: Mapped[bool] = mapped_column(Boolean, default=False)
    label_error_note: Mapped[str | None] = mapped_column(Text)
    author_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    # Kept as written, so an export still names the author after the principal is gone.
    author_name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
