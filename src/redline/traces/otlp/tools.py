"""What a TOOL span says about the call it ran (otlp-ingest §6.9): name, call id, input, output, error.

Values documented as JSON are parsed whichever form they came in. traceloop's tool decorator records
a Python call, `{"args": [...], "kwargs": {...}}`; a call with a single positional argument reads as
that argument, one with keyword arguments only as the keyword object, anything else whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redline.traces.otlp.model import STATUS_ERROR, STATUS_OK, RawSpan, ToolSpan
from redline.traces.otlp.values import as_text, first, json_value

_NAMES = ("tool.name", "gen_ai.tool.name", "ai.toolCall.name", "traceloop.entity.name")
_CALL_IDS = ("tool.id", "gen_ai.tool.call.id", "ai.toolCall.id", "tool_call.id")
_INPUTS = (
    "tool.parameters",
    "gen_ai.tool.call.arguments",
    "ai.toolCall.args",
    "tool_arguments",
    "traceloop.entity.input",
    "input.value",
    "gcp.vertex.agent.tool_call_args",
)
_OUTPUTS = (
    "gen_ai.tool.call.result",
    "ai.toolCall.result",
    "tool_response",
    "traceloop.entity.output",
    "output.value",
    "gcp.vertex.agent.tool_response",
)
_EXECUTE_TOOL = "execute_tool "


def tool_span(span: RawSpan) -> ToolSpan:
    attributes = span.attributes
    name = as_text(first(attributes, _NAMES)) or span.name.removeprefix(_EXECUTE_TOOL) or None
    return ToolSpan(
        name=name,
        call_id=as_text(first(attributes, _CALL_IDS)) or None,
        input=_first_value(attributes, _INPUTS),
        output=_first_value(attributes, _OUTPUTS),
        error=_error(span),
    )


def traceloop_input(value: Any) -> Any:
    """traceloop's `{"args": [...], "kwargs": {...}}` reduced: the one positional argument, or the
    keyword arguments when there are no positional ones; any other value unchanged."""
    if not (isinstance(value, dict) and value.keys() == {"args", "kwargs"}):
        return value
    args, kwargs = value["args"], value["kwargs"]
    if not (isinstance(args, list) and isinstance(kwargs, dict)):
        return value
    if len(args) == 1 and not kwargs:
        return args[0]
    if not args and kwargs:
        return kwargs
    return value


def _first_value(attributes: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        value = attributes.get(name)
        if value is not None:
            parsed = json_value(value)
            return traceloop_input(parsed) if name == "traceloop.entity.input" else parsed
    return None


def _error(span: RawSpan) -> str | None:
    """The status message of a failed span, else the message of its exception event. An exception
    event on a span whose status is unset counts as a failure; on one explicitly OK it does not (the
    tool caught it)."""
    exception = next((event.attributes for event in span.events if event.name == "exception"), None)
    if span.status_code == STATUS_OK or (span.status_code != STATUS_ERROR and exception is None):
        return None
    if span.status_code == STATUS_ERROR and span.status_message:
        return span.status_message
    if exception is not None:
        text = as_text(exception.get("exception.message")) or as_text(exception.get("exception.type"))
        if text:
            return text
    return span.status_message or "error"
