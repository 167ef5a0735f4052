"""OTLP export bodies for tests, made from `RawSpan`s (see `builders.raw_spans`).

`export_request` builds the protobuf `ExportTraceServiceRequest` an exporter would send, spans grouped
by resource and then by scope in the order they first appear; `export_json` writes a request in the
OTLP JSON form (hex ids, lowerCamelCase, 64-bit integers as strings, enums as numbers) by way of
protobuf's own JSON printer, so the decoder is checked against an encoder it does not share code with.
`gzipped` and `deflated` compress a body as a `Content-Encoding` says.
"""

from __future__ import annotations

import base64
import gzip
import zlib
from collections.abc import Iterable, Mapping
from typing import Any, cast

import orjson
from google.protobuf import json_format  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from redline.traces.otlp.model import RawSpan


def any_value(value: Any) -> AnyValue:
    """The AnyValue a decoded value came from: `{"$bytes": b64}` is bytes, None the empty value."""
    if value is None:
        return AnyValue()
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, str):
        return AnyValue(string_value=value)
    if isinstance(value, list | tuple):
        result = AnyValue()
        result.array_value.SetInParent()
        result.array_value.values.extend(any_value(item) for item in value)
        return result
    if isinstance(value, Mapping):
        if set(value) == {"$bytes"}:
            return AnyValue(bytes_value=base64.b64decode(value["$bytes"]))
        result = AnyValue()
        result.kvlist_value.SetInParent()
        result.kvlist_value.values.extend(key_values(value))
        return result
    raise TypeError(f"no AnyValue for {value!r}")


def key_values(attributes: Mapping[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=key, value=any_value(value)) for key, value in attributes.items()]


def span_message(span: RawSpan) -> Span:
    message = Span(
        trace_id=bytes.fromhex(span.trace_id),
        span_id=bytes.fromhex(span.span_id),
        parent_span_id=bytes.fromhex(span.parent_span_id or ""),
        trace_state=span.trace_state,
        flags=span.flags,
        name=span.name,
        kind=cast("Span.SpanKind.ValueType", span.otel_kind),
        start_time_unix_nano=span.start_ns,
        end_time_unix_nano=span.end_ns,
        attributes=key_values(span.attributes),
        dropped_attributes_count=span.dropped_attributes,
        dropped_events_count=span.dropped_events,
        dropped_links_count=span.dropped_links,
        status=Status(
            code=cast("Status.StatusCode.ValueType", span.status_code), message=span.status_message
        ),
    )
    for event in span.events:
        message.events.add(
            name=event.name, time_unix_nano=event.time_ns, attributes=key_values(event.attributes)
        )
    for link in span.links:
        message.links.add(
            trace_id=bytes.fromhex(link["trace_id"]),
            span_id=bytes.fromhex(link["span_id"]),
            trace_state=link.get("trace_state", ""),
            attributes=key_values(link.get("attributes", {})),
            dropped_attributes_count=link.get("dropped_attributes_count", 0),
            flags=link.get("flags", 0),
        )
    return message


def export_request(
    spans: Iterable[RawSpan], *, scope_attributes: Mapping[str, Any] | None = None
) -> ExportTraceServiceRequest:
    """One ResourceSpans per distinct resource and one ScopeSpans per scope under it, in first-seen
    order; `scope_attributes` go on every scope."""
    request = ExportTraceServiceRequest()
    resources: dict[bytes, Any] = {}
    scopes: dict[tuple[bytes, str, str], Any] = {}
    for span in spans:
        resource_key = orjson.dumps(span.resource, option=orjson.OPT_SORT_KEYS)
        if resource_key not in resources:
            resource_spans = request.resource_spans.add()
            resource_spans.resource.attributes.extend(key_values(span.resource))
            resources[resource_key] = resource_spans
        scope_key = (resource_key, span.scope_name, span.scope_version)
        if scope_key not in scopes:
            scope_spans = resources[resource_key].scope_spans.add()
            scope_spans.scope.name = span.scope_name
            scope_spans.scope.version = span.scope_version
            scope_spans.scope.attributes.extend(key_values(scope_attributes or {}))
            scopes[scope_key] = scope_spans
        scopes[scope_key].spans.append(span_message(span))
    return request


def export_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """The request in the OTLP JSON form: protobuf's JSON mapping with ids in hex instead of base64."""
    data = cast("dict[str, Any]", json_format.MessageToDict(request, use_integers_for_enums=True))
    for resource_spans in data.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                _hex_ids(span, ("traceId", "spanId", "parentSpanId"))
                for link in span.get("links", []):
                    _hex_ids(link, ("traceId", "spanId"))
    return data


def _hex_ids(message: dict[str, Any], fields: tuple[str, ...]) -> None:
    for field in fields:
        if field in message:
            message[field] = base64.b64decode(message[field]).hex()


def export_json_bytes(request: ExportTraceServiceRequest) -> bytes:
    return orjson.dumps(export_json(request))


def gzipped(body: bytes) -> bytes:
    return gzip.compress(body)


def deflated(body: bytes) -> bytes:
    """`Content-Encoding: deflate` as HTTP means it: the zlib format (RFC 1950)."""
    return zlib.compress(body)


def raw_deflated(body: bytes) -> bytes:
    """Bare deflate data (RFC 1951), which some clients send for `deflate` all the same."""
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(body) + compressor.flush()
