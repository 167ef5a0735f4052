"""An OTLP trace export, protobuf or JSON, read into spans as received (otlp-ingest §2.2, §3.1, §3.2).

No HTTP here: the OTLP surface, `redline import` and the rm surface's import format `otel` all call it.
Both encodings end in the same protobuf message, so one reader (`read_spans`) and one hash serve both.
A body that cannot be read raises `OtlpUnreadable` (a 400); a span that can be read but not kept
(a malformed id, over the size limit) is rejected alone, so it cannot sink the rest of its batch.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from redline.errors import Invalid
from redline.sentences import counted
from redline.traces.otlp.jsonform import ShapeError, request_from_json
from redline.traces.otlp.model import RawSpan, SpanEvent

# Why a span was rejected. Worded to follow the count in `rejection_message` ("…: 2 spans").
NO_IDS = "no trace id or span id"
BAD_TRACE_ID = "trace id is not 16 bytes (32 hex digits)"
BAD_SPAN_ID = "span id is not 8 bytes (16 hex digits)"
BAD_PARENT_ID = "parent span id is not 8 bytes (16 hex digits)"
ZERO_TRACE_ID = "trace id is all zeros"
ZERO_SPAN_ID = "span id is all zeros"
# Storage keeps times as signed 64-bit nanoseconds; an OTLP fixed64 can say more than that.
BAD_TIME = "start or end time is past the year 2262 (over 2^63 - 1 ns)"
_MAX_TIME_NS = 2**63 - 1

IDS_MUST_BE_HEX = "traceId/spanId must be hex: 32 and 16 hex digits in OTLP JSON, not base64"
LOGS_HINT = (
    "Spans without ids are what a logs export looks like when sent here; "
    "if you are exporting logs, use /v1/logs"
)

# partial_success.error_message stays under this many bytes (otlp-ingest §2.6).
MAX_MESSAGE_BYTES = 4096
_IDS_SHOWN = 3
_REASONS_SHOWN = 8
_ID_LENGTH_REASONS = frozenset({BAD_TRACE_ID, BAD_SPAN_ID, BAD_PARENT_ID})


class OtlpUnreadable(Invalid):
    """The body is not a trace export in the encoding it declares; the message is the 400's sentence."""


@dataclass(frozen=True, slots=True)
class ReceivedSpan:
    """A span kept: the span, the hash that makes a re-sent copy a no-op (§3.2), the scope it came
    under (its hash, so storage keeps each distinct scope once) and its re-encoded size in bytes."""

    span: RawSpan
    content_hash: str
    scope_hash: str
    scope_attributes: Mapping[str, Any]
    size: int


@dataclass(frozen=True, slots=True)
class Rejected:
    """A span not kept, and why (one of this module's reasons, or the caller's own). Ids are hex as
    received, None when absent."""

    trace_id: str | None
    span_id: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class ResourceGroup:
    """The spans of one `ResourceSpans`: the unit a project is chosen for (§2.5)."""

    resource: Mapping[str, Any]
    resource_hash: str
    spans: tuple[ReceivedSpan, ...]
    rejected: tuple[Rejected, ...]


@dataclass(frozen=True, slots=True)
class DecodedBatch:
    """Every span of a request, kept or rejected, and the warnings the answer should carry."""

    groups: tuple[ResourceGroup, ...]
    span_count: int
    warnings: tuple[str, ...] = ()

    @property
    def rejected(self) -> tuple[Rejected, ...]:
        return tuple(rejection for group in self.groups for rejection in group.rejected)

    @property
    def spans(self) -> tuple[ReceivedSpan, ...]:
        return tuple(span for group in self.groups for span in group.spans)


def parse_protobuf(body: bytes) -> ExportTraceServiceRequest:
    """The export request a binary OTLP body holds."""
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError:
        message = "request body is not a valid protobuf ExportTraceServiceRequest"
        if _reads_as_logs(body):
            message += "; if you are exporting logs, use /v1/logs"
        raise OtlpUnreadable(message) from None
    return request


def _reads_as_logs(body: bytes) -> bool:
    """Whether a body that is no trace export is a logs export: field numbers overlap, and a log
    record with a trace context fails to read as a span, so the likely mistake deserves its hint."""
    logs = ExportLogsServiceRequest()
    try:
        logs.ParseFromString(body)
    except DecodeError:
        return False
    return any(scope.log_records for resource in logs.resource_logs for scope in resource.scope_logs)


def parse_json(body: bytes | str | Mapping[str, Any]) -> ExportTraceServiceRequest:
    """The export request an OTLP JSON body holds (text, or already parsed)."""
    if isinstance(body, Mapping):
        data: Any = body
    else:
        if isinstance(body, str):
            body = body.removeprefix("\ufeff")
        else:
            body = bytes(body).removeprefix(b"\xef\xbb\xbf")
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError as error:
            raise OtlpUnreadable(f"request body is not valid JSON: {error}") from None
    try:
        return request_from_json(data)
    except ShapeError as error:
        raise OtlpUnreadable(f"request body is not valid OTLP JSON: {error}") from None


def span_count(request: ExportTraceServiceRequest) -> int:
    """How many spans a request holds, cheaply, to refuse an oversized one before reading it."""
    return sum(len(scope.spans) for resource in request.resource_spans for scope in resource.scope_spans)


def read_spans(request: ExportTraceServiceRequest, *, max_span_bytes: int) -> DecodedBatch:
    """Every span of the request as received, grouped by resource (a resource without spans left out),
    each one kept or rejected alone."""
    groups = []
    count = dropped = 0
    too_large = f"span is over the {byte_size(max_span_bytes)} limit for one span"
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        resource_hash = _digest(resource_spans.resource.SerializeToString(deterministic=True))
        kept: list[ReceivedSpan] = []
        rejected: list[Rejected] = []
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope
            scope_attributes = _attributes(scope.attributes)
            scope_hash = _digest(scope.SerializeToString(deterministic=True))
            for span in scope_spans.spans:
                count += 1
                encoded = b""
                problem = _problem(span)
                if problem is None:
                    encoded = span.SerializeToString(deterministic=True)
                    if len(encoded) > max_span_bytes:
                        problem = too_large
                if problem is not None:
                    rejected.append(
                        Rejected(_hex_or_none(span.trace_id), _hex_or_none(span.span_id), problem)
                    )
                    continue
                raw = _raw_span(span, scope, resource)
                dropped += raw.dropped_attributes > 0
                content = hashlib.sha256(encoded)
                content.update(resource_hash.encode())
                content.update(scope_hash.encode())
                kept.append(
                    ReceivedSpan(raw, content.hexdigest(), scope_hash, scope_attributes, len(encoded))
                )
        if kept or rejected:  # a resource with no spans has nothing to store or to answer for
            groups.append(ResourceGroup(resource, resource_hash, tuple(kept), tuple(rejected)))
    warnings: tuple[str, ...] = ()
    if dropped:
        warnings = (f"{counted(dropped, 'span')} arrived with attributes dropped by the exporter's limit",)
    return DecodedBatch(tuple(groups), count, warnings)


def _problem(span: Span) -> str | None:
    """Why a span cannot be kept whatever its size: ids storage could not key it by, or times it could
    not hold."""
    trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
    if not trace_id and not span_id:
        return NO_IDS
    if len(trace_id) != 16:
        return BAD_TRACE_ID
    if len(span_id) != 8:
        return BAD_SPAN_ID
    if parent and len(parent) != 8:
        return BAD_PARENT_ID
    if not any(trace_id):
        return ZERO_TRACE_ID
    if not any(span_id):
        return ZERO_SPAN_ID
    if span.start_time_unix_nano > _MAX_TIME_NS or span.end_time_unix_nano > _MAX_TIME_NS:
        return BAD_TIME
    return None


def _raw_span(span: Span, scope: InstrumentationScope, resource: Mapping[str, Any]) -> RawSpan:
    parent = span.parent_span_id
    return RawSpan(
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        # An all-zero parent is how some exporters say "none".
        parent_span_id=parent.hex() if any(parent) else None,
        name=span.name,
        start_ns=span.start_time_unix_nano,
        end_ns=span.end_time_unix_nano,
        attributes=_attributes(span.attributes),
        otel_kind=span.kind,
        status_code=span.status.code,
        status_message=span.status.message,
        events=tuple(
            SpanEvent(event.name, event.time_unix_nano, _attributes(event.attributes))
            for event in span.events
        ),
        scope_name=scope.name,
        scope_version=scope.version,
        resource=resource,
        dropped_attributes=span.dropped_attributes_count,
        dropped_events=span.dropped_events_count,
        dropped_links=span.dropped_links_count,
        links=tuple(
            {
                "trace_id": link.trace_id.hex(),
                "span_id": link.span_id.hex(),
                "trace_state": link.trace_state,
                "attributes": _attributes(link.attributes),
                "dropped_attributes_count": link.dropped_attributes_count,
                "flags": link.flags,
            }
            for link in span.links
        ),
        trace_state=span.trace_state,
        flags=span.flags,
    )


def _attributes(pairs: Iterable[KeyValue]) -> dict[str, Any]:
    """Attributes flat, key to decoded value; a repeated key keeps its last value."""
    decoded = {}
    for pair in pairs:
        value = pair.value
        kind = value.WhichOneof("value")
        decoded[pair.key] = value.string_value if kind == "string_value" else _value(value, kind)
    return decoded


def _value(value: AnyValue, kind: str | None) -> Any:
    """An AnyValue as JSON-ready Python: bytes become `{"$bytes": base64}`, the empty value None."""
    if kind == "string_value":
        return value.string_value
    if kind is None:
        return None
    if kind == "int_value":
        return value.int_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "double_value":
        return value.double_value
    if kind == "array_value":
        return [_value(item, item.WhichOneof("value")) for item in value.array_value.values]
    if kind == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    return {"$bytes": base64.b64encode(value.bytes_value).decode("ascii")}


def _digest(encoded: bytes) -> str:
    return hashlib.sha256(encoded).hexdigest()


def _hex_or_none(raw: bytes) -> str | None:
    return raw.hex() if raw else None


def byte_size(count: int) -> str:
    """A limit as a sentence names it: "8 MiB", "512 KiB", "1000 bytes"."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size and count % size == 0:
            return f"{count // size} {unit}"
    return counted(count, "byte")


def refusal(rejected: Sequence[Rejected], span_count: int) -> str | None:
    """The 400's sentence when a request had spans and every one was rejected (all rejections are
    permanent: a retry would fail alike), else None. Says ids must be hex when an id had the wrong
    length (base64 ids from a hand-rolled JSON exporter), and points to /v1/logs when no span had
    ids at all (a logs export posted here reads as spans without ids)."""
    if span_count == 0 or len(rejected) < span_count:
        return None
    message = rejection_message(rejected)
    if all(rejection.reason == NO_IDS for rejection in rejected):
        return _clip(f"{message} {LOGS_HINT}")
    if any(rejection.reason in _ID_LENGTH_REASONS for rejection in rejected):
        return _clip(f"{message} {IDS_MUST_BE_HEX}")
    return message


def refusal_when_all_rejected(batch: DecodedBatch) -> str | None:
    """`refusal` for a batch as decoded (before projects are chosen)."""
    return refusal(batch.rejected, batch.span_count)


def rejection_message(rejected: Sequence[Rejected], warnings: Sequence[str] = ()) -> str:
    """`partial_success.error_message`: how many spans were rejected and why, with the first few span
    ids per reason, then the warnings; English, under 4 KiB."""
    sentences = []
    if rejected:
        by_reason: dict[str, list[Rejected]] = {}
        for rejection in rejected:
            by_reason.setdefault(rejection.reason, []).append(rejection)
        parts = [_reason_part(reason, items) for reason, items in list(by_reason.items())[:_REASONS_SHOWN]]
        if len(by_reason) > _REASONS_SHOWN:
            parts.append(f"and {counted(len(by_reason) - _REASONS_SHOWN, 'other reason')}")
        sentences.append(f"{counted(len(rejected), 'span')} rejected: {'; '.join(parts)}.")
    sentences.extend(warning if warning.endswith(".") else f"{warning}." for warning in warnings)
    return _clip(" ".join(sentences))


def _reason_part(reason: str, items: Sequence[Rejected]) -> str:
    ids = [_shown_id(item.span_id) for item in items if item.span_id is not None]
    count = counted(len(items), "span")
    if not ids:
        return f"{reason} ({count})"
    shown = ", ".join(ids[:_IDS_SHOWN])
    if len(ids) > _IDS_SHOWN:
        shown += f" and {len(ids) - _IDS_SHOWN} more"
    return f"{reason} ({count}: {shown})"


def _shown_id(span_id: str) -> str:
    return span_id if len(span_id) <= 32 else f"{span_id[:32]}…"


def _clip(message: str) -> str:
    encoded = message.encode()
    if len(encoded) < MAX_MESSAGE_BYTES:
        return message
    return encoded[: MAX_MESSAGE_BYTES - 4].decode(errors="ignore") + "…"
