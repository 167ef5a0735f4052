"""Remembered answers to requests that carried an Idempotency-Key."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from redline.db import Base, JSONDocument, UTCDateTime, utcnow


class IdempotentRequest(Base):
    """The first answer to (caller, key): a retry with the same body gets it again, another body a 409."""

    __tablename__ = "idempotent_requests"

    principal_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("principals.id", ondelete="CASCADE"), primary_key=True
    )
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    # The method and path, and a SHA-256 of the body: what "the same request" means.
    operation: Mapped[str] = mapped_column(String(300))
    body_hash: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int] = mapped_column(Integer)
    response: Mapped[Any] = mapped_column(JSONDocument, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
