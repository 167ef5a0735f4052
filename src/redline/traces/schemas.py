"""The run object as it travels: on the wire (camelCase) and as one line of the native JSONL format."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from redline.db import in_utc
from redline.traces.session_ids import MAX_SESSION_ID

# A time a run or span was given: with its zone, and an instant UTC can hold (`in_utc`).
Instant = Annotated[AwareDatetime, AfterValidator(in_utc)]

RunStatus = Literal["running", "completed", "failed", "cancelled", "suspended"]
RUN_STATUSES: tuple[str, ...] = ("running", "completed", "failed", "cancelled", "suspended")
StepRole = Literal["system", "user", "assistant", "tool"]
VersionSource = Literal["pinned", "named"]

MAX_NAME = 200
MAX_STEPS_PER_RUN = 10_000
MAX_SPANS_PER_RUN = 10_000
MAX_RUNS_PER_BATCH = 1_000


class WireModel(BaseModel):
    """camelCase on the wire, unknown fields refused so a typo is an error, not silently lost data."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", str_max_length=1_000_000
    )


class StrictWireModel(WireModel):
    """A body that names every unknown field at once (`Unknown field(s): a, b.`), as the corrections
    surface's newer routes answer, rather than one error per field."""

    @model_validator(mode="before")
    @classmethod
    def _unknown_fields(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = set(cls.model_fields) | {
                field.alias for field in cls.model_fields.values() if field.alias
            }
            unknown = [str(name) for name in data if name not in known]
            if unknown:
                raise PydanticCustomError(
                    "unknown_fields", "Unknown field(s): {names}.", {"names": ", ".join(unknown)}
                )
        return data


def parse_project_id(value: object) -> uuid.UUID:
    """Project ids are UUIDs; anything else gets the corrections surface's sentence."""
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise PydanticCustomError("project_id", '"{value}" isn\'t a project id', {"value": value}) from None


class StepIn(WireModel):
    role: StepRole
    content: str = ""
    tool_name: str | None = Field(None, max_length=MAX_NAME)
    tool_input: dict[str, Any] | None = None
    tool_call_id: str | None = Field(None, max_length=MAX_NAME)
    metadata: dict[str, Any] | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _null_content_is_empty(cls, value: object) -> object:
        # A pure tool-call message has no text; clients send null or "" for it.
        return "" if value is None else value

    @model_validator(mode="after")
    def _tool_input_needs_tool(self) -> StepIn:
        if self.tool_input is not None and self.tool_name is None:
            raise PydanticCustomError("tool_input", "toolInput needs toolName")
        return self


class SpanIn(WireModel):
    span_id: str = Field(min_length=1, max_length=MAX_NAME)
    parent_span_id: str | None = Field(None, max_length=MAX_NAME)
    kind: str | None = Field(None, max_length=100)
    name: str = Field(min_length=1, max_length=500)
    attributes: dict[str, Any] | None = None
    started_at: Instant | None = None
    ended_at: Instant | None = None


class RunIn(WireModel):
    project_id: uuid.UUID
    external_id: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    # The conversation the run is a turn of; left out, `metadata.session_id` is read (`session_ids`).
    session_id: str | None = Field(None, min_length=1, max_length=MAX_SESSION_ID)
    agent: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    agent_id: uuid.UUID | None = None
    flow: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    flow_id: uuid.UUID | None = None
    agent_version: str | None = Field(None, min_length=1, max_length=MAX_NAME)
    version_source: VersionSource | None = None
    status: RunStatus
    dry_run: bool = False
    title: str | None = Field(None, max_length=500)
    input: Any = None
    output: Any = None
    metadata: dict[str, Any] | None = None
    started_at: Instant | None = None
    ended_at: Instant | None = None
    steps: list[StepIn] = Field(default_factory=list, max_length=MAX_STEPS_PER_RUN)
    spans: list[SpanIn] = Field(default_factory=list, max_length=MAX_SPANS_PER_RUN)

    @field_validator("project_id", mode="before")
    @classmethod
    def _project_id(cls, value: object) -> uuid.UUID:
        return parse_project_id(value)

    @model_validator(mode="after")
    def _one_producer(self) -> RunIn:
        names_agent = self.agent is not None or self.agent_id is not None
        names_flow = self.flow is not None or self.flow_id is not None
        if names_agent and names_flow:
            raise PydanticCustomError("producer", "a run comes from an agent or a flow, not both")
        if self.agent is not None and self.agent_id is not None:
            raise PydanticCustomError("producer", "give agent (a name) or agentId, not both")
        if self.flow is not None and self.flow_id is not None:
            raise PydanticCustomError("producer", "give flow (a name) or flowId, not both")
        check_times_and_spans(self.started_at, self.ended_at, self.spans, camel=True)
        return self


def check_times_and_spans(
    started_at: datetime | None, ended_at: datetime | None, spans: Sequence[SpanIn], *, camel: bool
) -> None:
    """A run's own consistency, whichever surface spells it: it ends after it starts, and each of its
    spans has an id of its own."""
    if ended_at and started_at and ended_at < started_at:
        raise PydanticCustomError(
            "times", "endedAt is before startedAt" if camel else "ended_at is before started_at"
        )
    seen: set[str] = set()
    for span in spans:
        if span.span_id in seen:
            field = "spanId" if camel else "span_id"
            raise PydanticCustomError(
                "span_id", field + ' "{span_id}" appears twice', {"span_id": span.span_id}
            )
        seen.add(span.span_id)


class RunBatchIn(WireModel):
    runs: list[RunIn] = Field(min_length=1, max_length=MAX_RUNS_PER_BATCH)


class PinIn(WireModel):
    pinned_version: str | None = Field(min_length=1, max_length=MAX_NAME)
