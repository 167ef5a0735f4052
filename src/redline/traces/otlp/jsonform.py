"""The OTLP JSON encoding of a trace export, read into the same protobuf message the binary encoding
gives (otlp-ingest §2.2), so that both encodings go through one reader and hash alike.

Our own walker rather than `json_format.ParseDict`: ParseDict reads ids as base64 (a 32-digit hex trace
id silently becomes 24 bytes), quietly turns a bare attribute value (`"value": "v"`) or an invalid
`bytesValue` into nothing, maps an unknown enum name to 0, and is eight to ten times slower. The walker
knows the handful of OTLP trace messages; fields it does not know are ignored, as the OTLP spec
requires. Both field spellings are read (`startTimeUnixNano` and `start_time_unix_nano`), as protobuf's
JSON parsers do, so that a body written with proto field names is not read as spans without ids.

A shape it cannot read raises `ShapeError` with a sentence naming where (`resourceSpans[0].scopeSpans[0]
.spans[2].attributes`); the caller turns it into a 400.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping
from typing import Any, Protocol, cast

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

# An AnyValue nested deeper than this is refused: protobuf's own parser stops at 100 levels of
# messages, and each AnyValue level is two (AnyValue, then ArrayValue or KeyValueList).
MAX_VALUE_DEPTH = 40

_UINT32, _INT64, _UINT64 = (0, 2**32 - 1), (-(2**63), 2**63 - 1), (0, 2**64 - 1)
_INT32 = (-(2**31), 2**31 - 1)

# Enum names as protobuf spells them, also accepted without the prefix and in any case ("SERVER",
# "server", "Span_Kind_Server").
_SPAN_KINDS = {"UNSPECIFIED": 0, "INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}
_STATUS_CODES = {"UNSET": 0, "OK": 1, "ERROR": 2}

# Ids are fixed-length; a non-hex id must not pass for one of these lengths by accident (see _id).
_ID_LENGTHS = (8, 16)

_ANY_FIELDS = {
    "stringValue": "string",
    "string_value": "string",
    "boolValue": "bool",
    "bool_value": "bool",
    "intValue": "int",
    "int_value": "int",
    "doubleValue": "double",
    "double_value": "double",
    "arrayValue": "array",
    "array_value": "array",
    "kvlistValue": "kvlist",
    "kvlist_value": "kvlist",
    "bytesValue": "bytes",
    "bytes_value": "bytes",
}
_ATTRIBUTES_HINT = 'must be a list of {"key": "…", "value": {"stringValue": "…"}} objects, not an object'


class _KeyValues(Protocol):
    """A repeated KeyValue field (attributes, a kvlist's values), as far as the walker uses one."""

    def add(self, *, key: str) -> KeyValue: ...


class ShapeError(ValueError):
    """The JSON is well formed but is not an OTLP trace export; the message says where and why."""


def request_from_json(data: Any) -> ExportTraceServiceRequest:
    """The export request an OTLP JSON document (already parsed by a JSON parser) describes."""
    if not isinstance(data, Mapping):
        raise ShapeError(f"the top level must be an object (an ExportTraceServiceRequest), not {_kind(data)}")
    request = ExportTraceServiceRequest()
    resource_spans = _list(_field(data, "resourceSpans", "resource_spans"), "resourceSpans")
    try:
        for r, item in enumerate(resource_spans):
            _resource_spans(request.resource_spans.add(), item, f"resourceSpans[{r}]")
    except UnicodeEncodeError:
        # Only a document parsed by a lenient parser (the standard library's) can hold one.
        raise ShapeError("a string holds a lone surrogate, which is not Unicode text") from None
    return request


# Each reader below takes the object and its path, and names a field's path only when it is wrong: a
# span has a dozen fields, and building their paths up front cost a third of the walk.


def _resource_spans(target: ResourceSpans, data: Any, where: str) -> None:
    data = _object(data, where)
    resource = data.get("resource")
    if resource is not None:
        _resource(target.resource, _object(resource, f"{where}.resource"), f"{where}.resource")
    for s, scope_spans in enumerate(_list(_field(data, "scopeSpans", "scope_spans"), f"{where}.scopeSpans")):
        _scope_spans(target.scope_spans.add(), scope_spans, f"{where}.scopeSpans[{s}]")
    target.schema_url = _string_field(data, where, "schemaUrl", "schema_url")


def _resource(target: Resource, data: Mapping[str, Any], where: str) -> None:
    target.SetInParent()
    _attributes(target.attributes, data.get("attributes"), where, "attributes", 0)
    target.dropped_attributes_count = _dropped(data, where)


def _scope_spans(target: ScopeSpans, data: Any, where: str) -> None:
    data = _object(data, where)
    scope = data.get("scope")
    if scope is not None:
        _scope(target.scope, _object(scope, f"{where}.scope"), f"{where}.scope")
    for i, span in enumerate(_list(data.get("spans"), f"{where}.spans")):
        _span(target.spans.add(), span, f"{where}.spans[{i}]")
    target.schema_url = _string_field(data, where, "schemaUrl", "schema_url")


def _scope(target: InstrumentationScope, data: Mapping[str, Any], where: str) -> None:
    target.SetInParent()
    target.name = _string_field(data, where, "name")
    target.version = _string_field(data, where, "version")
    _attributes(target.attributes, data.get("attributes"), where, "attributes", 0)
    target.dropped_attributes_count = _dropped(data, where)


def _span(target: Span, data: Any, where: str) -> None:
    data = _object(data, where)
    target.trace_id = _id_field(data, where, "traceId", "trace_id")
    target.span_id = _id_field(data, where, "spanId", "span_id")
    target.parent_span_id = _id_field(data, where, "parentSpanId", "parent_span_id")
    target.trace_state = _string_field(data, where, "traceState", "trace_state")
    target.flags = _int_field(data, where, _UINT32, "flags")
    target.name = _string_field(data, where, "name")
    kind = data.get("kind")
    if kind is not None:
        number = _enum(kind, f"{where}.kind", "SPAN_KIND_", _SPAN_KINDS)
        target.kind = cast("Span.SpanKind.ValueType", number)
    target.start_time_unix_nano = _int_field(
        data, where, _UINT64, "startTimeUnixNano", "start_time_unix_nano"
    )
    target.end_time_unix_nano = _int_field(data, where, _UINT64, "endTimeUnixNano", "end_time_unix_nano")
    _attributes(target.attributes, data.get("attributes"), where, "attributes", 0)
    target.dropped_attributes_count = _dropped(data, where)
    events = data.get("events")
    if events is not None:
        for e, event in enumerate(_list(events, f"{where}.events")):
            _event(target.events.add(), event, f"{where}.events[{e}]")
    target.dropped_events_count = _int_field(
        data, where, _UINT32, "droppedEventsCount", "dropped_events_count"
    )
    links = data.get("links")
    if links is not None:
        for n, link in enumerate(_list(links, f"{where}.links")):
            _link(target.links.add(), link, f"{where}.links[{n}]")
    target.dropped_links_count = _int_field(data, where, _UINT32, "droppedLinksCount", "dropped_links_count")
    status = data.get("status")
    if status is not None:
        status = _object(status, f"{where}.status")
        target.status.message = _string_field(status, f"{where}.status", "message")
        code = status.get("code")
        number = 0 if code is None else _enum(code, f"{where}.status.code", "STATUS_CODE_", _STATUS_CODES)
        target.status.code = cast("Status.StatusCode.ValueType", number)


def _event(target: Span.Event, data: Any, where: str) -> None:
    data = _object(data, where)
    target.time_unix_nano = _int_field(data, where, _UINT64, "timeUnixNano", "time_unix_nano")
    target.name = _string_field(data, where, "name")
    _attributes(target.attributes, data.get("attributes"), where, "attributes", 0)
    target.dropped_attributes_count = _dropped(data, where)


def _link(target: Span.Link, data: Any, where: str) -> None:
    data = _object(data, where)
    target.trace_id = _id_field(data, where, "traceId", "trace_id")
    target.span_id = _id_field(data, where, "spanId", "span_id")
    target.trace_state = _string_field(data, where, "traceState", "trace_state")
    _attributes(target.attributes, data.get("attributes"), where, "attributes", 0)
    target.dropped_attributes_count = _dropped(data, where)
    target.flags = _int_field(data, where, _UINT32, "flags")


def _attributes(target: _KeyValues, data: Any, where: str, name: str, depth: int) -> None:
    """A list of `{key, value}`; an object in its place is the commonest hand-rolled mistake, hence
    its own hint. Plain strings and integers, most of any span's attributes, take a short path."""
    if data is None:
        return
    if type(data) is not list:
        if isinstance(data, Mapping):
            raise ShapeError(f"{where}.{name} {_ATTRIBUTES_HINT}")
        raise ShapeError(f"{where}.{name} must be a list, not {_kind(data)}")
    for i, item in enumerate(data):
        if type(item) is dict:
            key = item.get("key", "")
            value = item.get("value")
            if type(key) is str and type(value) is dict and len(value) == 1:
                ((field, inner),) = value.items()
                if field == "stringValue" and type(inner) is str:
                    target.add(key=key).value.string_value = inner
                    continue
                if (
                    field == "intValue"
                    and type(inner) is str
                    and len(inner) < 19
                    and inner.isascii()
                    and inner.isdigit()
                ):
                    target.add(key=key).value.int_value = int(inner)
                    continue
        _attribute(target, item, f"{where}.{name}[{i}]", depth)


def _attribute(target: _KeyValues, item: Any, where: str, depth: int) -> None:
    if not isinstance(item, Mapping):
        raise ShapeError(f'{where} must be an object {{"key": …, "value": …}}, not {_kind(item)}')
    key = item.get("key", "")  # proto3 JSON leaves out a default value: an absent key is ""
    if not isinstance(key, str):
        raise ShapeError(f"{where}.key must be a string, not {_kind(key)}")
    pair = target.add(key=key)
    value = item.get("value")
    if value is not None:
        _any(pair.value, value, f"{where}.value", depth)


def _any(target: AnyValue, data: Any, where: str, depth: int) -> None:
    """One AnyValue: an object with one of its value fields; `{}` (or a null field) is the empty value."""
    if not isinstance(data, Mapping):
        raise ShapeError(
            f'{where} must be an AnyValue object such as {{"stringValue": "…"}} or {{"intValue": "1"}}, '
            f"not {_kind(data)}"
        )
    if depth >= MAX_VALUE_DEPTH:
        raise ShapeError(f"{where} is nested more than {MAX_VALUE_DEPTH} values deep")
    target.SetInParent()  # `{}` is a value that is present and empty, as protobuf would have it
    present = [(name, inner) for name, inner in data.items() if name in _ANY_FIELDS and inner is not None]
    if not present:
        return
    if len(present) > 1:
        raise ShapeError(f"{where} has more than one value field ({', '.join(name for name, _ in present)})")
    name, inner = present[0]
    field = _ANY_FIELDS[name]
    inner_where = f"{where}.{name}"
    if field == "string":
        target.string_value = _string(inner, inner_where)
    elif field == "bool":
        if not isinstance(inner, bool):
            raise ShapeError(f"{inner_where} must be true or false, not {_kind(inner)}")
        target.bool_value = inner
    elif field == "int":
        target.int_value = _int(inner, inner_where, _INT64)
    elif field == "double":
        target.double_value = _double(inner, inner_where)
    elif field == "bytes":
        target.bytes_value = _bytes(inner, inner_where)
    elif field == "array":
        target.array_value.SetInParent()
        values = _object(inner, inner_where).get("values")
        for i, item in enumerate(_list(values, f"{inner_where}.values")):
            _any(target.array_value.values.add(), item, f"{inner_where}.values[{i}]", depth + 1)
    else:
        target.kvlist_value.SetInParent()
        values = _object(inner, inner_where).get("values")
        _attributes(target.kvlist_value.values, values, inner_where, "values", depth + 1)


def _field(data: Mapping[str, Any], camel: str, snake: str) -> Any:
    value = data.get(camel)
    return data.get(snake) if value is None else value


def _string_field(data: Mapping[str, Any], where: str, camel: str, snake: str = "") -> str:
    value = data.get(camel)
    if value is None and snake:
        value = data.get(snake)
    if type(value) is str:
        return value
    return _string(value, f"{where}.{camel}")


def _int_field(
    data: Mapping[str, Any], where: str, bounds: tuple[int, int], camel: str, snake: str = ""
) -> int:
    value = data.get(camel)
    if value is None and snake:
        value = data.get(snake)
    return 0 if value is None else _int(value, f"{where}.{camel}", bounds)


def _id_field(data: Mapping[str, Any], where: str, camel: str, snake: str) -> bytes:
    value = data.get(camel)
    if value is None:
        value = data.get(snake)
    return b"" if value is None else _id(value, f"{where}.{camel}")


def _object(data: Any, where: str) -> Mapping[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ShapeError(f"{where} must be an object, not {_kind(data)}")
    return data


def _list(data: Any, where: str) -> list[Any]:
    if data is None:
        return []
    if not isinstance(data, list):
        raise ShapeError(f"{where} must be a list, not {_kind(data)}")
    return data


def _string(data: Any, where: str) -> str:
    if data is None:
        return ""
    if not isinstance(data, str):
        raise ShapeError(f"{where} must be a string, not {_kind(data)}")
    return data


def _int(data: Any, where: str, bounds: tuple[int, int]) -> int:
    """A protobuf integer: a JSON number or, as OTLP JSON sends 64-bit ones, a decimal string."""
    if data is None:
        return 0
    if isinstance(data, bool):
        raise ShapeError(f"{where} must be an integer, not {_kind(data)}")
    if isinstance(data, int):
        number = data
    elif isinstance(data, float) and data.is_integer():
        number = int(data)
    elif isinstance(data, str):
        try:
            number = int(data.strip())
        except ValueError:
            raise ShapeError(f"{where} must be an integer, not {_kind(data)}") from None
    else:
        raise ShapeError(f"{where} must be an integer, not {_kind(data)}")
    low, high = bounds
    if not low <= number <= high:
        raise ShapeError(f"{where} is {number}, outside {low}..{high}")
    return number


def _double(data: Any, where: str) -> float:
    """A JSON number, or a string: "NaN", "Infinity", "-Infinity" (protobuf's JSON spellings) or decimal."""
    if isinstance(data, bool):
        raise ShapeError(f"{where} must be a number, not {_kind(data)}")
    if isinstance(data, float):
        return data
    if isinstance(data, int):
        try:
            return float(data)
        except OverflowError:
            raise ShapeError(f"{where} is an integer too large for a double") from None
    if isinstance(data, str):
        try:
            number = float(data)
        except ValueError:
            raise ShapeError(f"{where} must be a number, not {_kind(data)}") from None
        if math.isfinite(number) or data in ("NaN", "Infinity", "-Infinity"):
            return number
    raise ShapeError(f"{where} must be a number, not {_kind(data)}")


def _bytes(data: Any, where: str) -> bytes:
    """Base64, standard or URL-safe alphabet, padding optional (protobuf's JSON mapping accepts all)."""
    if not isinstance(data, str):
        raise ShapeError(f"{where} must be a base64 string, not {_kind(data)}")
    text = data.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except binascii.Error:
        raise ShapeError(f"{where} is not valid base64") from None


def _id(data: Any, where: str) -> bytes:
    """An id in hex, either case. An id that is not hex keeps its text as bytes, made one byte longer
    when that length would pass for an id: the span is then rejected for its malformed id (and the
    answer says ids must be hex) instead of being stored under an id we made up."""
    if data is None:
        return b""
    if not isinstance(data, str):
        raise ShapeError(f"{where} must be a hex string, not {_kind(data)}")
    try:
        return bytes.fromhex(data)
    except ValueError:
        raw = data.encode()
        return raw + b"\x00" if len(raw) in _ID_LENGTHS else raw


def _enum(data: Any, where: str, prefix: str, names: Mapping[str, int]) -> int:
    """An enum as its number (any int32, known or not: proto3 enums are open) or its name."""
    if isinstance(data, str):
        name = data.strip().upper()
        name = name.removeprefix(prefix)
        if name in names:
            return names[name]
        try:
            return _int(data, where, _INT32)
        except ShapeError:
            known = ", ".join(prefix + known_name for known_name in names)
            raise ShapeError(f"{where} is {_kind(data)}, not one of {known} or a number") from None
    return _int(data, where, _INT32)


def _dropped(data: Mapping[str, Any], where: str) -> int:
    return _int_field(data, where, _UINT32, "droppedAttributesCount", "dropped_attributes_count")


def _kind(value: Any) -> str:
    """How a sentence names a JSON value it did not expect: its text when short, else its JSON type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"' if len(value) <= 40 else "a long string"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__
