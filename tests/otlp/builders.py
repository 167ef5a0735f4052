"""Spans for tests, written the way otlp-ingest §10 writes them: short names for ids, flat attributes.

`raw_spans` turns such dicts into `RawSpan`s. A dict's keys: `span` (its short id), `parent` (a short
id or None), `name`, `attributes`, and optionally `start`/`end` (ns after the trace's start; by default
each span starts 1 ms after the one before it and lasts 1 ms, and a parent without times spans its
children), `status` (`"error"` or `"ok"`), `message` (the status message), `events` (a list of
`{"name", "time"?, "attributes"?}`), `kind` (the OTel kind, int), `scope` (the instrumentation scope's
name), `resource` (resource attributes), `dropped` (dropped attribute count). Ids are derived from the
short names, so the same name is the same span in every call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from redline.traces.otlp.model import STATUS_ERROR, STATUS_OK, STATUS_UNSET, RawSpan, SpanEvent

TRACE_START_NS = 1_780_000_000_000_000_000
MS = 1_000_000
_STATUS = {"error": STATUS_ERROR, "ok": STATUS_OK, None: STATUS_UNSET}


def hex_id(name: str, length: int = 16) -> str:
    """A stable lowercase hex id for a short name (16 characters: a span id, 32: a trace id)."""
    return hashlib.sha256(name.encode()).hexdigest()[:length]


def trace_hex(name: str = "trace") -> str:
    return hex_id(name, 32)


def _times(specs: Sequence[Mapping[str, Any]]) -> dict[str, tuple[int, int]]:
    """Start and end (absolute ns) of every span: given ones kept, the rest laid out in list order,
    and a parent given no times stretched over its children."""
    times: dict[str, tuple[int, int]] = {}
    for position, spec in enumerate(specs):
        start = spec.get("start", (position + 1) * MS)
        end = spec.get("end", start + MS)
        times[spec["span"]] = (TRACE_START_NS + start, TRACE_START_NS + end)
    children: dict[str, list[str]] = {}
    for spec in specs:
        if spec.get("parent") is not None:
            children.setdefault(spec["parent"], []).append(spec["span"])

    def stretch(name: str) -> tuple[int, int]:
        start, end = times[name]
        for child in children.get(name, []):
            child_start, child_end = stretch(child)
            start, end = min(start, child_start), max(end, child_end)
        return start, end

    for spec in specs:
        if "start" not in spec and "end" not in spec:
            times[spec["span"]] = stretch(spec["span"])
    return times


def _event(spec: Mapping[str, Any]) -> SpanEvent:
    return SpanEvent(spec["name"], TRACE_START_NS + spec.get("time", 0), dict(spec.get("attributes", {})))


def raw_spans(specs: Sequence[Mapping[str, Any]], *, trace: str = "trace") -> list[RawSpan]:
    """The spans the dicts describe, all of one trace, in the order given."""
    times = _times(specs)
    spans = []
    for spec in specs:
        start, end = times[spec["span"]]
        parent = spec.get("parent")
        spans.append(
            RawSpan(
                trace_id=trace_hex(trace),
                span_id=hex_id(spec["span"]),
                parent_span_id=hex_id(parent) if parent is not None else None,
                name=spec.get("name", spec["span"]),
                start_ns=start,
                end_ns=end,
                attributes=dict(spec.get("attributes", {})),
                otel_kind=spec.get("kind", 1),
                status_code=_STATUS[spec.get("status")],
                status_message=spec.get("message", ""),
                events=tuple(_event(event) for event in spec.get("events", [])),
                scope_name=spec.get("scope", ""),
                resource=dict(spec.get("resource", {"service.name": "test-agent"})),
                dropped_attributes=spec.get("dropped", 0),
            )
        )
    return spans


def step_view(steps: Sequence[Any]) -> list[dict[str, Any]]:
    """Derived steps written as otlp-ingest §10 writes them: index, role, content, and the tool fields
    a step has (metadata left out)."""
    view = []
    for index, step in enumerate(steps):
        item: dict[str, Any] = {"index": index, "role": step.role, "content": step.content}
        for name in ("tool_name", "tool_input", "tool_call_id"):
            if getattr(step, name) is not None:
                item[name] = getattr(step, name)
        view.append(item)
    return view


def tool_round_trip(
    index: int, tool: str, tool_input: Any, call_id: str, result: str
) -> list[dict[str, Any]]:
    """One tool call as `step_view` shows it, steps `index` and `index + 1`: the assistant's call (no
    text), then the tool's result."""
    return [
        {
            "index": index,
            "role": "assistant",
            "content": "",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_call_id": call_id,
        },
        {"index": index + 1, "role": "tool", "content": result, "tool_name": tool, "tool_call_id": call_id},
    ]
