"""A stored OTLP span written back in the OTLP JSON encoding, as its exporter sent it.

The span store keeps what arrived (otlp-ingest §3.1) decoded: attributes flat with their values as JSON,
the resource and scope once per project. Writing it back as one `resourceSpans` entry (the resource, the
scope, the span, each value typed as `AnyValue` again) shows a person exactly what the tracer sent, in the
form its own documentation uses, which is what they compare with when a page reads a span differently
from what they expected. `decode._raw_span` is the way in; this is the way out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redline.traces.otlp.model import RawSpan

# OTLP's span kinds, by their number (`Span.SpanKind`).
SPAN_KIND_NAMES = (
    "SPAN_KIND_UNSPECIFIED",
    "SPAN_KIND_INTERNAL",
    "SPAN_KIND_SERVER",
    "SPAN_KIND_CLIENT",
    "SPAN_KIND_PRODUCER",
    "SPAN_KIND_CONSUMER",
)


def any_value(value: Any) -> dict[str, Any]:
    """A decoded value as OTLP JSON's `AnyValue`: integers as decimal text (the JSON mapping of int64),
    `{"$bytes": …}` as bytes, lists and objects nested."""
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [any_value(item) for item in value]}}
    if isinstance(value, Mapping):
        if set(value) == {"$bytes"}:
            return {"bytesValue": value["$bytes"]}
        return {"kvlistValue": {"values": key_values(value)}}
    return {"stringValue": str(value)}


def key_values(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": any_value(value)} for key, value in attributes.items()]


def _dropped(count: int, name: str) -> dict[str, int]:
    """OTLP JSON leaves out a zero count, as exporters do."""
    return {name: count} if count else {}


def resource_spans(span: RawSpan) -> dict[str, Any]:
    """The span as one entry of an export's `resourceSpans`: its resource, its scope and itself."""
    body: dict[str, Any] = {
        "traceId": span.trace_id,
        "spanId": span.span_id,
        **({"traceState": span.trace_state} if span.trace_state else {}),
        **({"parentSpanId": span.parent_span_id} if span.parent_span_id else {}),
        **({"flags": span.flags} if span.flags else {}),
        "name": span.name,
        "kind": SPAN_KIND_NAMES[span.otel_kind]
        if 0 <= span.otel_kind < len(SPAN_KIND_NAMES)
        else span.otel_kind,
        "startTimeUnixNano": str(span.start_ns),
        "endTimeUnixNano": str(span.end_ns),
        "attributes": key_values(span.attributes),
        **_dropped(span.dropped_attributes, "droppedAttributesCount"),
        "events": [
            {
                "timeUnixNano": str(event.time_ns),
                "name": event.name,
                "attributes": key_values(event.attributes),
            }
            for event in span.events
        ],
        **_dropped(span.dropped_events, "droppedEventsCount"),
        "links": [
            {
                "traceId": link.get("trace_id", ""),
                "spanId": link.get("span_id", ""),
                **({"traceState": link["trace_state"]} if link.get("trace_state") else {}),
                "attributes": key_values(link.get("attributes") or {}),
                **_dropped(link.get("dropped_attributes_count") or 0, "droppedAttributesCount"),
                **({"flags": link["flags"]} if link.get("flags") else {}),
            }
            for link in span.links
        ],
        **_dropped(span.dropped_links, "droppedLinksCount"),
        "status": {
            **({"code": span.status_code} if span.status_code else {}),
            **({"message": span.status_message} if span.status_message else {}),
        },
    }
    scope = {"name": span.scope_name, **({"version": span.scope_version} if span.scope_version else {})}
    return {
        "resource": {"attributes": key_values(span.resource)},
        "scopeSpans": [{"scope": scope, "spans": [body]}],
    }
