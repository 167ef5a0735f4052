"""What the trace page's span panel shows of one span: what it was given and gave back, its attributes
and events, and the span exactly as it arrived.

Input and output are read the way run derivation reads them (otlp-ingest §6): chat messages through
`otlp.messages`, whichever convention wrote them, shown as a conversation; a tool span's arguments and
result through `otlp.tools`; otherwise the first attribute that carries a value (`input.value`,
`traceloop.entity.input`, a native span's `input`…), shown as JSON when it is JSON and as text when not.
A span that came over OTLP is shown "as received" in the OTLP JSON encoding (`otlp.received`); one sent
in the native format as the fields Redline stored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from redline.console.trace_tree import SpanRow
from redline.traces.models import Span
from redline.traces.otlp.messages import input_messages, output_messages
from redline.traces.otlp.model import Message, RawSpan
from redline.traces.otlp.received import resource_spans
from redline.traces.otlp.runfields import ROOT_INPUTS, ROOT_OUTPUTS
from redline.traces.otlp.store import raw_span
from redline.traces.otlp.tools import tool_span
from redline.traces.otlp.values import first, json_value

# Besides the OTLP conventions' names, the names native clients give a span's two sides.
INPUTS = (*ROOT_INPUTS, "langfuse.observation.input", "input", "inputs", "messages", "prompt", "arguments")
OUTPUTS = (
    *ROOT_OUTPUTS,
    "langfuse.observation.output",
    "output",
    "outputs",
    "result",
    "completion",
    "response",
)
# Text longer than this (or with more lines) is folded behind "Show all".
FOLD_CHARS = 1200
FOLD_LINES = 20


@dataclass(frozen=True)
class Line:
    """One message of a conversation: its role, text and the tools it called (name, arguments)."""

    role: str
    text: str
    calls: tuple[tuple[str, str], ...] = ()
    name: str | None = None


@dataclass(frozen=True)
class Side:
    """One side (input or output) of a span: a conversation, a JSON value, or text."""

    lines: tuple[Line, ...] = ()
    value: Any = None
    text: str | None = None

    @property
    def is_json(self) -> bool:
        return not self.lines and self.text is None and self.value is not None

    @property
    def folded(self) -> bool:
        return self.text is not None and (len(self.text) > FOLD_CHARS or self.text.count("\n") >= FOLD_LINES)


@dataclass(frozen=True)
class Event:
    name: str
    at_ms: float | None
    attributes: list[tuple[str, str]]


@dataclass
class SpanPanel:
    row: SpanRow
    span: Span
    input: Side | None
    output: Side | None
    attributes: list[tuple[str, str]]
    events: list[Event]
    received: str
    received_as: str
    parent_name: str | None = None
    said: list[Any] = field(default_factory=list)


def shown(value: Any) -> str:
    """A value in a table cell: text as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _line(message: Message) -> Line:
    calls = tuple(
        (call.name, json.dumps(call.arguments, indent=2, ensure_ascii=False) if call.arguments else "")
        for call in message.tool_calls
    )
    return Line(message.role, message.text, calls, message.name)


def _dict_line(item: Mapping[str, Any]) -> Line | None:
    """A message as native clients and OpenAI's API write one: role, content (text or text parts)."""
    role = item.get("role")
    if not isinstance(role, str):
        return None
    content = item.get("content")
    if isinstance(content, list):
        content = "\n".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    calls = []
    for call in item.get("tool_calls") or ():
        function = call.get("function", call) if isinstance(call, dict) else {}
        if isinstance(function, dict) and function.get("name"):
            arguments = json_value(function.get("arguments"))
            calls.append((str(function["name"]), json.dumps(arguments, indent=2) if arguments else ""))
    return Line(
        role, content if isinstance(content, str) else shown(content) if content else "", tuple(calls)
    )


def side_of(value: Any) -> Side | None:
    """A value as the panel shows it: a list of messages as a conversation, JSON as JSON, text as text."""
    if value is None:
        return None
    value = json_value(value)
    if isinstance(value, list) and value and all(isinstance(item, dict) and "role" in item for item in value):
        lines = [_dict_line(item) for item in value]
        if all(line is not None for line in lines):
            return Side(lines=tuple(line for line in lines if line is not None))
    if isinstance(value, str):
        return Side(text=value)
    return Side(value=value)


def _sides(span: RawSpan, category: str) -> tuple[Side | None, Side | None]:
    if category == "tool":
        tool = tool_span(span)
        if tool.input is not None or tool.output is not None or tool.error:
            return side_of(tool.input), side_of(tool.output if tool.output is not None else tool.error)
    given, answered = input_messages(span).messages, output_messages(span).messages
    into = (
        Side(lines=tuple(_line(one) for one in given)) if given else side_of(first(span.attributes, INPUTS))
    )
    out = (
        Side(lines=tuple(_line(one) for one in answered))
        if answered
        else side_of(first(span.attributes, OUTPUTS))
    )
    return into, out


def _received(span: Span, stored: RawSpan | None) -> tuple[str, str]:
    """The span as it arrived: its OTLP JSON when it came over OTLP, else the fields stored."""
    if stored is not None:
        return json.dumps(
            {"resourceSpans": [resource_spans(stored)]}, indent=2, ensure_ascii=False
        ), "OTLP JSON"
    fields = {
        "spanId": span.span_id,
        "parentSpanId": span.parent_span_id,
        "kind": span.kind,
        "name": span.name,
        "attributes": span.attributes,
        "startedAt": span.started_at.isoformat() if span.started_at else None,
        "endedAt": span.ended_at.isoformat() if span.ended_at else None,
    }
    return json.dumps(fields, indent=2, ensure_ascii=False, default=str), "stored fields"


def span_panel(row: SpanRow, span: Span, parent_name: str | None, stored: RawSpan | None) -> SpanPanel:
    """The panel of `row`'s span, read whole as `span`, whose parent (when the run has it) is named
    `parent_name`; `stored` is its OTLP form when it came over OTLP."""
    raw = stored or raw_span(span, "")
    start = raw.start_ns or None
    events = [
        Event(
            event.name,
            (event.time_ns - start) / 1_000_000 if start and event.time_ns else None,
            [(key, shown(value)) for key, value in event.attributes.items()],
        )
        for event in raw.events
    ]
    into, out = _sides(raw, row.category)
    received, received_as = _received(span, stored)
    return SpanPanel(
        row=row,
        span=span,
        input=into,
        output=out,
        attributes=sorted((key, shown(value)) for key, value in (span.attributes or {}).items()),
        events=events,
        received=received,
        received_as=received_as,
        parent_name=parent_name,
    )
