"""What the reviews surface sends in: review key definitions, span annotations and evaluator results.

Field names are snake_case, as the orq-ai-sdk writes them. Values are left as any JSON here: whether a
value fits its key is a rule of the service (`values.py`), which answers the document's sentences.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from redline.db import in_utc

ReviewType = Literal["categorical", "range", "text"]
REVIEW_TYPES: tuple[str, ...] = ("categorical", "range", "text")
OutputType = Literal["boolean", "number", "categorical", "text"]

MAX_KEY = 200
MAX_TITLE = 200
MAX_DESCRIPTION = 2_000
MAX_OPTION = 200
MAX_OPTIONS = 100
MAX_EXPLANATION = 2_000


class ReviewsIn(BaseModel):
    """Unknown fields are ignored, as the orq server ignores them."""

    model_config = ConfigDict(extra="ignore", str_max_length=1_000_000)


class OptionIn(ReviewsIn):
    """One option of a categorical review: its value and what it means."""

    value: str = Field(min_length=1, max_length=MAX_OPTION)
    description: str | None = Field(None, max_length=MAX_DESCRIPTION)


class _Definition(ReviewsIn):
    """What a new definition and a change share: options as plain strings or `{value, description?}`."""

    @field_validator("options", mode="before", check_fields=False)
    @classmethod
    def _option_objects(cls, value: object) -> object:
        # The wire's `options` is a list of strings; the definition keeps a description beside each.
        if isinstance(value, list):
            return [{"value": item} if isinstance(item, str) else item for item in value]
        return value


class ReviewKeyIn(_Definition):
    """A new human review definition. The title is `display_name` on the wire (`title` is accepted too)."""

    key: str = Field(min_length=1, max_length=MAX_KEY)
    display_name: str | None = Field(None, min_length=1, max_length=MAX_TITLE)
    title: str | None = Field(None, min_length=1, max_length=MAX_TITLE)
    description: str | None = Field(None, max_length=MAX_DESCRIPTION)
    type: ReviewType
    options: list[OptionIn] | None = Field(None, max_length=MAX_OPTIONS)
    multiple: bool | None = None
    min: float | None = None
    max: float | None = None
    project_id: uuid.UUID | None = None


class ReviewKeyChange(_Definition):
    """The fields to change; those not sent stay. `null` clears an optional field."""

    key: str | None = Field(None, min_length=1, max_length=MAX_KEY)
    display_name: str | None = Field(None, min_length=1, max_length=MAX_TITLE)
    title: str | None = Field(None, min_length=1, max_length=MAX_TITLE)
    description: str | None = Field(None, max_length=MAX_DESCRIPTION)
    type: ReviewType | None = None
    options: list[OptionIn] | None = Field(None, max_length=MAX_OPTIONS)
    multiple: bool | None = None
    min: float | None = None
    max: float | None = None


class ValueIn(ReviewsIn):
    """One annotation: a value for a review key, or a person's correction of an evaluator result.

    `{key, value}` or `{parent_annotation_id, value, explanation?}`, never both.
    """

    key: str | None = Field(None, min_length=1, max_length=MAX_KEY)
    parent_annotation_id: str | None = Field(None, min_length=1, max_length=MAX_KEY)
    value: Any
    explanation: str | None = Field(None, max_length=MAX_EXPLANATION)

    @model_validator(mode="after")
    def _key_or_parent(self) -> ValueIn:
        if (self.key is None) == (self.parent_annotation_id is None):
            raise PydanticCustomError(
                "key_or_parent",
                "an annotation has a key (a human review's value) or a parent_annotation_id "
                "(a correction of an evaluator result), and not both",
            )
        return self


class AnnotationsIn(ReviewsIn):
    """`POST …/annotation`: up to 10 annotations, and who they are from."""

    annotations: list[ValueIn]
    metadata: dict[str, Any] | None = None


class AnnotationsRemoval(ReviewsIn):
    """`DELETE …/annotation`: the keys whose values go and the evaluator results whose corrections go."""

    keys: list[str] | None = None
    parent_annotation_ids: list[str] | None = None
    metadata: dict[str, Any] | None = None


class EvaluationIn(ReviewsIn):
    """An evaluator's result on a span, as an evaluation run records it."""

    evaluator: str = Field(min_length=1, max_length=MAX_KEY)
    output_type: OutputType
    value: Any
    explanation: str | None = Field(None, max_length=MAX_EXPLANATION)


class TraceFilterIn(ReviewsIn):
    """One condition of a trace search: a field, an operator and the values it compares with."""

    field: str = Field(min_length=1, max_length=MAX_KEY)
    op: str = "eq"
    values: list[str] = Field(default_factory=list, max_length=100)


class TraceSortIn(ReviewsIn):
    field: str = "started_at"
    order: Literal["asc", "desc"] = "desc"


class TraceSearchIn(ReviewsIn):
    """`POST /v3/traces/search`: traces started in [from, to), narrowed by filters and a text query.

    The SDK sends the start as `from` (its `from_` argument); `from_` is read too. A time without a
    zone is taken as UTC.
    """

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    from_: datetime = Field(alias="from")
    to: datetime
    filters: list[TraceFilterIn] | None = Field(None, max_length=50)
    filter_operator: Literal["and", "or"] | None = None
    query: str | None = Field(None, max_length=MAX_KEY)
    sort: list[TraceSortIn] | None = Field(None, max_length=1)
    limit: int = Field(50, ge=1, le=200)
    page_token: str | None = Field(None, max_length=1_000)

    @field_validator("from_", "to")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return in_utc(value)
