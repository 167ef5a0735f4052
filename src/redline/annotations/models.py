"""The annotations table: one piece of feedback on a trace or one of its steps."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, SmallInteger, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base, JSONDocument, UTCDateTime, new_id, utcnow


class Annotation(Base):
    """One piece of feedback on a trace, one of its steps or one of its spans.

    The rm surface's kind is a rating, a comment or both, optionally anchored to quoted text; the reviews
    surface's kind is a value for a review key (`key`, `value`), an evaluator's result (`source`
    "evaluator", with its `output_type`), or a person's correction of one (`parent_id`). All live here,
    so every export and statistic sees all of them.
    """

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
    # {text, prefix, suffix, start, end}: the anchor as given plus the resolved character offsets (null
    # when detached).
    quote: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument, nullable=True)
    # How the quote stands in its step's text now (`quotes.AnchorState`): "exact" as made, or after the
    # step changed, found again "exact" or "fuzzy", or "detached"; null for no quote.
    quote_anchor: Mapped[str | None] = mapped_column(String(16))
    label_error: Mapped[bool] = mapped_column(Boolean, default=False)
    label_error_note: Mapped[str | None] = mapped_column(Text)
    span_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("spans.id", ondelete="CASCADE"), index=True)
    key: Mapped[str | None] = mapped_column(String(200))
    value: Mapped[Any] = mapped_column(JSONDocument, nullable=True)
    explanation: Mapped[str | None] = mapped_column(Text)
    # "human", or "evaluator" for an evaluator's own result; written by the services, never left to chance.
    source: Mapped[str] = mapped_column(String(16), server_default="human")
    # An evaluator result's type (boolean, number, categorical, text): what a correction of it must match.
    output_type: Mapped[str | None] = mapped_column(String(16))
    parent_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("annotations.id", ondelete="CASCADE"), index=True
    )
    # Attribution an app sends along: identity_id, source, reviewer_id.
    meta: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONDocument, nullable=True)
    author_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("principals.id", ondelete="SET NULL"))
    # Kept as written, so an export still names the author after the principal is gone.
    author_name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
