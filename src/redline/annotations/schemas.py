"""Annotations as the rm surface's clients send them (snake_case, as rm-annotations.txt writes them)."""

from __future__ import annotations

import uuid
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Rating = Literal[1, -1]
MAX_COMMENT = 20_000


class QuoteIn(BaseModel):
    """Selected text with a little context either side, which tells two identical phrases apart."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=MAX_COMMENT)
    prefix: str = Field("", max_length=1_000)
    suffix: str = Field("", max_length=1_000)


class AnnotationIn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    step_id: uuid.UUID | None = None
    rating: Rating | None = None
    comment: str | None = Field(None, max_length=MAX_COMMENT)
    quote: QuoteIn | None = None


class AnnotationChange(BaseModel):
    """Only the fields sent change; `model_fields_set` says which were sent."""

    model_config = ConfigDict(extra="forbid")

    rating: Rating | None = None
    comment: str | None = Field(None, max_length=MAX_COMMENT)
    label_error: bool | None = None
    label_error_note: str | None = Field(None, max_length=MAX_COMMENT)
