"""The run's own fields read from span attributes (otlp-ingest §6.10, §8.8): session, user, tags,
metadata, agent, version, title, dry run, and the run's input and output.

A run-level attribute may sit on any span (SDKs set `session.id` wherever the code that knows it
runs), so each field takes its sources in the spec's order and, for each source, the effective root's
value first, then the earliest span's. Input and output are the root's alone (§8.8): another span's
`input.value` is that span's input, not the run's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from redline.traces.otlp.model import RawSpan
from redline.traces.otlp.tools import traceloop_input
from redline.traces.otlp.values import as_text, json_value, prefixed

_SESSION = (
    "session.id",
    "gen_ai.conversation.id",
    "langfuse.session.id",
    "langsmith.trace.session_id",
    "traceloop.association.properties.session_id",
    "ai.telemetry.metadata.sessionId",
)
_USER = (
    "user.id",
    "langfuse.user.id",
    "traceloop.association.properties.user_id",
    "ai.telemetry.metadata.userId",
)
_TAGS = ("tag.tags", "langfuse.trace.tags", "langsmith.span.tags")
_METADATA_PREFIXES = (
    "langfuse.trace.metadata.",
    "langsmith.metadata.",
    "ai.telemetry.metadata.",
    "traceloop.association.properties.",
    "redline.metadata.",
)
_AGENT_BEFORE_TOP_AGENT = ("redline.agent.name", "redline.flow.name")
_AGENT_AFTER_TOP_AGENT = ("agent.name", "traceloop.workflow.name", "ai.telemetry.functionId")
_VERSION = ("redline.agent.version", "gen_ai.agent.version")
_TITLE = ("langfuse.trace.name", "langsmith.trace.name")

# §8.8: the run's input and output; the langfuse trace attributes may sit on any span, the rest are
# the effective root's.
_TRACE_INPUT, _TRACE_OUTPUT = "langfuse.trace.input", "langfuse.trace.output"
ROOT_INPUTS = (
    "input.value",
    "traceloop.entity.input",
    "ai.prompt",
    "gen_ai.input.messages",
    "mlflow.spanInputs",
)
ROOT_OUTPUTS = (
    "output.value",
    "traceloop.entity.output",
    "ai.response.text",
    "final_result",
    "gen_ai.output.messages",
    "mlflow.spanOutputs",
)
# Attributes that make a span AI-related even when its kind is UNKNOWN (§8.4, last rule).
IO_ATTRIBUTES = frozenset(
    (
        _TRACE_INPUT,
        _TRACE_OUTPUT,
        "langfuse.observation.input",
        "langfuse.observation.output",
        *ROOT_INPUTS,
        *ROOT_OUTPUTS,
    )
)


@dataclass(frozen=True, slots=True)
class RunFields:
    session_id: str | None
    user_id: str | None
    tags: tuple[str, ...]
    metadata: dict[str, Any]
    agent: str | None
    agent_version: str | None
    title: str | None
    dry_run: bool


@dataclass(frozen=True, slots=True)
class Sourced:
    """A run input or output and the span it was read from."""

    value: Any
    span_id: str


_FIELD_NAMES = frozenset(
    _SESSION
    + _USER
    + _AGENT_BEFORE_TOP_AGENT
    + ("gen_ai.agent.name",)
    + _AGENT_AFTER_TOP_AGENT
    + _VERSION
    + _TITLE
    + _TAGS
    + ("redline.dry_run",)
)
# Every metadata prefix contains one of these: one substring test over a span's joined keys spares the
# dozens of keys of a span that has none (nearly every span) a prefix test each.
_METADATA_MARKS = ("metadata.", "association.properties.")


def run_fields(root: RawSpan, ordered: Sequence[RawSpan], top_agents: Sequence[RawSpan]) -> RunFields:
    """`ordered` is every span in §8.2 order; `top_agents` the AGENT spans with no agent above them."""
    everyone = [root, *(span for span in ordered if span is not root)]
    spans = [span for span in everyone if not _FIELD_NAMES.isdisjoint(span.attributes)]
    agent = _first_text(spans, _AGENT_BEFORE_TOP_AGENT)
    if agent is None:
        top = {top_agent.span_id for top_agent in top_agents}
        agent = _first_text([span for span in spans if span.span_id in top], ("gen_ai.agent.name",))
    if agent is None:
        agent = _first_text(spans, _AGENT_AFTER_TOP_AGENT) or as_text(root.resource.get("service.name"))
    return RunFields(
        session_id=_first_text(spans, _SESSION),
        user_id=_first_text(spans, _USER),
        tags=_tags(spans),
        metadata=_metadata(everyone),
        agent=agent,
        agent_version=_first_text(spans, _VERSION) or as_text(root.resource.get("service.version")),
        title=_first_text(spans, _TITLE) or root.name or None,
        dry_run=_dry_run(spans),
    )


def _first(spans: Sequence[RawSpan], names: tuple[str, ...]) -> Any:
    for name in names:
        for span in spans:
            value = span.attributes.get(name)
            if value is not None and value != "":
                return value
    return None


def _first_text(spans: Sequence[RawSpan], names: tuple[str, ...]) -> str | None:
    for name in names:
        for span in spans:
            text = as_text(span.attributes.get(name))
            if text:
                return text
    return None


def _tags(spans: Sequence[RawSpan]) -> tuple[str, ...]:
    """A list of tags (structured or as JSON text), or LangSmith's comma-separated string."""
    value = json_value(_first(spans, _TAGS))
    if isinstance(value, str):
        items: list[Any] = value.split(",")
    elif isinstance(value, list):
        items = value
    else:
        return ()
    texts = (as_text(item) for item in items)
    return tuple(dict.fromkeys(text.strip() for text in texts if text and text.strip()))


def _metadata(spans: Sequence[RawSpan]) -> dict[str, Any]:
    """Each span's metadata with its later sources over its earlier ones; across spans the root's keys
    win, then the earliest span's."""
    merged: dict[str, Any] = {}
    for span in reversed(spans):
        merged.update(_span_metadata(span.attributes))
    return merged


def _span_metadata(attributes: Mapping[str, Any]) -> dict[str, Any]:
    own = json_value(attributes.get("metadata"))
    metadata: dict[str, Any] = dict(own) if isinstance(own, dict) else {}
    keys = " ".join(attributes)
    if any(mark in keys for mark in _METADATA_MARKS):
        for prefix in _METADATA_PREFIXES:
            metadata.update(prefixed(attributes, prefix))
    return metadata


def _dry_run(spans: Sequence[RawSpan]) -> bool:
    value = _first(spans, ("redline.dry_run",))
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def run_input(root: RawSpan, ordered: Sequence[RawSpan]) -> Sourced | None:
    """§8.8 from spans only (the caller falls back to the first user step)."""
    return _io(root, ordered, _TRACE_INPUT, ROOT_INPUTS)


def run_output(root: RawSpan, ordered: Sequence[RawSpan], root_output_text: str | None) -> Sourced | None:
    """§8.8 from spans only. `root_output_text` is the text of the root's `gen_ai.output.messages`,
    which only message extraction can read."""
    return _io(root, ordered, _TRACE_OUTPUT, ROOT_OUTPUTS, root_output_text)


def _io(
    root: RawSpan,
    ordered: Sequence[RawSpan],
    trace_name: str,
    root_names: tuple[str, ...],
    messages_text: str | None = None,
) -> Sourced | None:
    """The Langfuse trace attribute from any span (the root's first), else the root's own sources."""
    for span in (root, *ordered):
        value = span.attributes.get(trace_name)
        if value is not None and value != "":
            return Sourced(traceloop_input(json_value(value)), span.span_id)
    for name in root_names:
        value = root.attributes.get(name)
        if value is None or value == "":
            continue
        if name == "gen_ai.output.messages":
            if messages_text:
                return Sourced(messages_text, root.span_id)
            continue
        return Sourced(traceloop_input(json_value(value)), root.span_id)
    return None
