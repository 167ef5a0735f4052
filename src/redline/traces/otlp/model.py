"""The shapes the OTLP parts share: a span as received, the canonical chat message every convention is
read into, and the run a trace's spans derive to.

Plain frozen dataclasses, no I/O: decoding makes `RawSpan`s, extraction makes `Message`s, derivation
makes a `DerivedRun`, and storage writes what that says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

# Redline's span kinds (otlp-ingest §5); UNKNOWN keeps the OTel kind beside it.
SpanKind = Literal[
    "AGENT", "CHAIN", "LLM", "TOOL", "RETRIEVER", "EMBEDDING", "RERANKER", "GUARDRAIL", "EVALUATOR", "UNKNOWN"
]
SPAN_KINDS: tuple[str, ...] = (
    "AGENT",
    "CHAIN",
    "LLM",
    "TOOL",
    "RETRIEVER",
    "EMBEDDING",
    "RERANKER",
    "GUARDRAIL",
    "EVALUATOR",
    "UNKNOWN",
)

# OTLP status codes.
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2

Role = Literal["system", "user", "assistant", "tool"]
RunState = Literal["running", "completed", "failed"]


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """One event of a span (an exception, a GenAI message event), its attributes decoded and flat."""

    name: str
    time_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RawSpan:
    """One span as an exporter sent it (otlp-ingest §3.1), values decoded from `AnyValue`.

    Ids are lowercase hex. `attributes` is flat (`llm.input_messages.0.message.role` stays one key);
    a `bytesValue` is `{"$bytes": "<base64>"}`. The fields after `events` matter to storage, not to
    derivation.
    """

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)
    otel_kind: int = 0
    status_code: int = STATUS_UNSET
    status_message: str = ""
    events: tuple[SpanEvent, ...] = ()
    scope_name: str = ""
    scope_version: str = ""
    resource: Mapping[str, Any] = field(default_factory=dict)
    dropped_attributes: int = 0
    dropped_events: int = 0
    dropped_links: int = 0
    links: tuple[Mapping[str, Any], ...] = ()
    trace_state: str = ""
    flags: int = 0
    # What derivation has read from this span (its kind, facts, messages, tool), by reader: a span's
    # content never changes, and the span store hands the same object to each re-derivation of its
    # run, so each is read once. Not compared, not copied by `dataclasses.replace`.
    memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of an assistant message; `arguments` parsed JSON when the text parses, else the text."""

    id: str | None
    name: str
    arguments: Any = None


@dataclass(frozen=True, slots=True)
class Media:
    """A non-text part of a message (an image, a file), named by its address or its type."""

    kind: str
    uri: str | None = None
    mime: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """The canonical chat message every convention is read into (otlp-ingest §4).

    `metadata` carries what a step keeps besides its text: `original_role`, `parts` (raw, inline blobs
    over 64 KiB replaced), `alternatives` (other choices), `finish_reason`.
    """

    role: Role
    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    media: tuple[Media, ...] = ()
    source_span: str = ""
    source_convention: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Extracted:
    """The messages one side (input or output) of a span yields, the convention they came from, and how
    many malformed messages or parts were dropped on the way."""

    messages: tuple[Message, ...] = ()
    convention: str | None = None
    unparsed_parts: int = 0


@dataclass(frozen=True, slots=True)
class ToolSpan:
    """What a TOOL span says about the call it ran (otlp-ingest §6.9)."""

    name: str | None
    call_id: str | None
    input: Any = None
    output: Any = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one model call; None where the attributes don't say."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class SpanFacts:
    """What the trace page and the span table show of one span, read from its attributes."""

    kind: str
    model: str | None = None
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    error: bool = False


@dataclass(frozen=True, slots=True)
class DerivedStep:
    """One step of a derived run, in order; its id is `stepids.step_ids`'s to give."""

    role: Role
    content: str = ""
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None
    tool_call_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DerivedRun:
    """The run a trace's current spans make (otlp-ingest §8): a pure function of the span set.

    `has_ai` false means no span is AI-related: the run has no steps and is hidden from lists and rules.
    `has_root` says whether a true root (or a `redline.root` span) arrived, which decides how long the
    run waits before it settles. `status` is `running` until the caller says the run has settled.
    """

    steps: tuple[DerivedStep, ...]
    input: Any
    output: Any
    status: RunState
    title: str | None
    agent: str | None
    agent_version: str | None
    dry_run: bool
    metadata: Mapping[str, Any]
    started_ns: int
    ended_ns: int
    has_ai: bool
    has_root: bool
    spans: Mapping[str, SpanFacts]
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
