"""Annotations as the rm surface's clients send them (snake_case, as rm-annotations.txt writes them), and
as its export writes them, one per line, for an import to read back."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

Rating = Literal[1, -1]
MAX_COMMENT = 20_000
# The longest author name an annotation keeps (its column).
MAX_AUTHOR = 200
# A comment or a note on a flagged label: free text, up to MAX_COMMENT characters.
Remark = Annotated[str | None, Field(max_length=MAX_COMMENT)]


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
    comment: Remark = None
    quote: QuoteIn | None = None


class AnnotationChange(BaseModel):
    """Only the fields sent change; `model_fields_set` says which were sent."""

    model_config = ConfigDict(extra="forbid")

    rating: Rating | None = None
    comment: Remark = None
    label_error: bool | None = None
    label_error_note: Remark = None


class AnnotationLine(BaseModel):
    """One line of the export (rm-annotations.txt, "Exporting annotations") as an import reads it.

    The trace is named by `trace_id` or `trace_external_id` (at least one); the step by its index, none
    for the whole trace. What is said takes the types a create takes; `author` and `created_at` are
    required, as every exported line has them: they are the annotation's history, kept as written.
    """

    model_config = ConfigDict(extra="ignore")

    trace_id: uuid.UUID | None = None
    trace_external_id: str | None = None
    step_index: int | None = Field(None, ge=0)
    rating: Rating | None = None
    comment: Remark = None
    quote: QuoteIn | None = None
    label_error: bool = False
    label_error_note: Remark = None
    author: str = Field(min_length=1, max_length=MAX_AUTHOR)
    created_at: AwareDatetime
    # A person's review value carries its key (and its value, reviewer and queues, which an import leaves
    # unread): it is not an annotation this import can store (`importing.REVIEW_VALUE_NOT_IMPORTED`).
    key: str | None = None
