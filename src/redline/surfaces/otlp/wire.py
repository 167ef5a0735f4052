"""OTLP/HTTP's wire, as pure functions (otlp-ingest §2.1, §2.3, §2.6): which encoding a request is
in, its body decompressed within the size limit, and the answers in the request's own encoding.

The router owns the request; it asks here what the headers mean, feeds the body to a `BodyReader`
chunk by chunk, and renders what it decided with `export_response` or `status_body`. Errors are the
domain's (`Invalid` 400, `TooLarge` 413) plus `UnsupportedMediaType` (415), each message final.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

import orjson
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsPartialSuccess,
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsPartialSuccess,
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from redline.errors import Invalid, RedlineError, TooLarge
from redline.sentences import counted
from redline.traces.otlp.decode import OtlpUnreadable, byte_size, parse_json, parse_protobuf

BodyFormat = Literal["protobuf", "json"]
Encoding = Literal["gzip", "deflate", "identity"]

PROTOBUF_MEDIA_TYPE = "application/x-protobuf"
JSON_MEDIA_TYPE = "application/json"
_MEDIA_TYPES: dict[str, BodyFormat] = {
    "application/x-protobuf": "protobuf",
    "application/protobuf": "protobuf",
    "application/json": "json",
}
_ENCODINGS: dict[str, Encoding] = {
    "gzip": "gzip",
    "x-gzip": "gzip",
    "deflate": "deflate",
    "identity": "identity",
}
_HEADER_SHOWN = 100

TRACES_ONLY = "Redline ingests traces only"

# The gRPC code a Status body carries for each HTTP status the surface answers (google.rpc.Code).
_GRPC_CODES = {
    400: 3,  # INVALID_ARGUMENT
    401: 16,  # UNAUTHENTICATED
    403: 7,  # PERMISSION_DENIED
    404: 5,  # NOT_FOUND
    405: 12,  # UNIMPLEMENTED
    413: 8,  # RESOURCE_EXHAUSTED
    415: 3,  # INVALID_ARGUMENT
    429: 8,  # RESOURCE_EXHAUSTED
    500: 13,  # INTERNAL
    503: 14,  # UNAVAILABLE
}
_GRPC_UNKNOWN = 2


class UnsupportedMediaType(RedlineError):
    """The body's content type or content encoding is not one OTLP/HTTP uses."""

    status = 415
    default_code = "unsupported-media-type"


# -- what the headers say ---------------------------------------------------------------------------


def body_format(content_type: str | None) -> BodyFormat:
    """The encoding a `Content-Type` names; compared without case or parameters (`; charset=utf-8`)."""
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    if media_type in _MEDIA_TYPES:
        return _MEDIA_TYPES[media_type]
    raise UnsupportedMediaType(
        f"unsupported content type '{_shown(content_type)}'; send application/x-protobuf or application/json"
    )


def answer_format(content_type: str | None) -> BodyFormat:
    """The encoding to answer in, even when the request's type is refused (JSON, readable by a person)."""
    try:
        return body_format(content_type)
    except UnsupportedMediaType:
        return "json"


def media_type(body: BodyFormat) -> str:
    """The `Content-Type` of an answer in this encoding."""
    return PROTOBUF_MEDIA_TYPE if body == "protobuf" else JSON_MEDIA_TYPE


def body_encoding(content_encoding: str | None) -> Encoding:
    """The compression a `Content-Encoding` names; absent or empty is identity."""
    value = (content_encoding or "").strip().lower() or "identity"
    if value in _ENCODINGS:
        return _ENCODINGS[value]
    raise UnsupportedMediaType(
        f"unsupported content encoding '{_shown(content_encoding)}'; send gzip, deflate or identity"
    )


def _shown(header: str | None) -> str:
    text = (header or "").strip()
    return text if len(text) <= _HEADER_SHOWN else f"{text[:_HEADER_SHOWN]}…"


# -- the body, within its limit ---------------------------------------------------------------------


def body_too_large(limit: int) -> TooLarge:
    return TooLarge(f"request body is over the {byte_size(limit)} limit (REDLINE_OTLP_MAX_BODY_BYTES)")


def decompressed_too_large(limit: int) -> TooLarge:
    return TooLarge(
        f"request body is over the {byte_size(limit)} limit once decompressed (REDLINE_OTLP_MAX_BODY_BYTES)"
    )


def check_content_length(content_length: str | None, limit: int) -> None:
    """Refuse a body its `Content-Length` already says is too large, before reading any of it."""
    value = (content_length or "").strip()
    if value.isascii() and value.isdigit() and int(value) > limit:
        raise body_too_large(limit)


def check_span_count(count: int, limit: int) -> None:
    if count > limit:
        spans = counted(count, "span")
        raise TooLarge(
            f"request has {spans}, over the limit of {limit:,} per request (REDLINE_OTLP_MAX_SPANS)"
        )


class BodyReader:
    """A request body fed chunk by chunk as it arrives, decompressed as it comes, and refused the
    moment it passes the limit: sent bytes or decompressed ones (a few kilobytes of gzip can inflate
    to gigabytes). Never holds more than `limit` bytes, plus one chunk."""

    def __init__(self, encoding: Encoding, limit: int) -> None:
        self._limit = limit
        self._received = 0
        self._size = 0
        self._parts: list[bytes] = []
        self._inflater: _Inflater | None = None if encoding == "identity" else _Inflater(encoding)

    def feed(self, chunk: bytes) -> None:
        self._received += len(chunk)
        if self._received > self._limit:
            raise body_too_large(self._limit)
        if self._inflater is None:
            self._keep(chunk)
            return
        for piece in self._inflater.inflate(chunk, lambda: self._limit - self._size + 1):
            self._keep(piece)
            if self._size > self._limit:
                raise decompressed_too_large(self._limit)

    def finish(self) -> bytes:
        """The whole body, once every chunk is in; a compressed body that stops short is refused."""
        if self._inflater is not None and self._received:
            self._inflater.finish()
        return b"".join(self._parts)

    def _keep(self, piece: bytes) -> None:
        if piece:
            self._size += len(piece)
            self._parts.append(piece)


def read_body(chunks: bytes | Iterable[bytes], encoding: Encoding, limit: int) -> bytes:
    """A whole body from its chunks (see BodyReader); a bytes value is one chunk."""
    reader = BodyReader(encoding, limit)
    for chunk in [chunks] if isinstance(chunks, bytes) else chunks:
        reader.feed(chunk)
    return reader.finish()


class _Inflater:
    """gzip (members one after another, as the format allows) or deflate: the zlib format HTTP means,
    or the bare deflate data some clients send under the same name, told apart by the zlib header."""

    def __init__(self, encoding: Encoding) -> None:
        self._name = encoding
        self._pending = b""  # deflate: the first bytes, until there are two to read the header from
        self._decompressor: Any = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip" else None

    def inflate(self, chunk: bytes, budget: Callable[[], int]) -> Iterator[bytes]:
        """The output `chunk` gives, in pieces of at most `budget()` bytes (asked before each piece),
        so the caller can stop as soon as the total passes its limit."""
        if self._decompressor is None:
            self._pending += chunk
            if len(self._pending) < 2:
                return
            chunk, self._pending = self._pending, b""
            self._decompressor = zlib.decompressobj(
                zlib.MAX_WBITS if _zlib_header(chunk) else -zlib.MAX_WBITS
            )
        data = chunk
        while data:
            try:
                piece = self._decompressor.decompress(data, budget())
            except zlib.error:
                raise self._invalid() from None
            yield piece
            data = self._decompressor.unconsumed_tail
            if self._decompressor.eof:
                data = self._next_member(data or self._decompressor.unused_data)

    def _next_member(self, rest: bytes) -> bytes:
        if not rest:
            return b""
        if self._name != "gzip":
            raise self._invalid()
        self._decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        return rest

    def finish(self) -> None:
        if self._decompressor is None or not self._decompressor.eof:
            raise self._invalid()

    def _invalid(self) -> Invalid:
        return Invalid(f"request body is not valid {self._name}")


def _zlib_header(data: bytes) -> bool:
    """RFC 1950's two header bytes: compression method 8 and a check that makes them a multiple of 31."""
    return data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0


# -- the request ------------------------------------------------------------------------------------


def parse_request(body: bytes, encoding: BodyFormat) -> ExportTraceServiceRequest:
    """The export request a decompressed body holds; `OtlpUnreadable` (400) when it holds none."""
    return parse_protobuf(body) if encoding == "protobuf" else parse_json(body)


# -- answers ----------------------------------------------------------------------------------------


def export_response(encoding: BodyFormat, rejected_spans: int = 0, error_message: str = "") -> bytes:
    """`ExportTraceServiceResponse`: empty when all was well, else its partial_success (spans rejected,
    or none rejected but a warning to give)."""
    if not rejected_spans and not error_message:
        return b"" if encoding == "protobuf" else b"{}"
    if encoding == "protobuf":
        partial = ExportTracePartialSuccess(rejected_spans=rejected_spans, error_message=error_message)
        encoded: bytes = ExportTraceServiceResponse(partial_success=partial).SerializeToString()
        return encoded
    return orjson.dumps(
        {"partialSuccess": {"rejectedSpans": str(rejected_spans), "errorMessage": error_message}}
    )


def grpc_code(http_status: int) -> int:
    """The google.rpc.Code a Status body gives for an HTTP status."""
    return _GRPC_CODES.get(http_status, _GRPC_UNKNOWN)


def status_body(encoding: BodyFormat, http_status: int, message: str) -> bytes:
    """`google.rpc.Status {code, message}`, the body of every OTLP error answer. Protobuf by hand: field
    1 (code, varint) and field 2 (message, length-delimited), which is all of Status we send."""
    code = grpc_code(http_status)
    if encoding == "json":
        return orjson.dumps({"code": code, "message": message})
    text = message.encode()
    head = b"\x08" + _varint(code) if code else b""
    return head + (b"\x12" + _varint(len(text)) + text if text else b"")


def _varint(number: int) -> bytes:
    out = bytearray()
    while number > 0x7F:
        out.append(number & 0x7F | 0x80)
        number >>= 7
    out.append(number)
    return bytes(out)


def logs_response(body: bytes, encoding: BodyFormat) -> bytes:
    """The answer to a logs export: every record received, rejected, because Redline keeps traces only
    (a 200, so an exporter configured for all signals does not keep retrying or logging errors)."""
    if encoding == "protobuf":
        request = _parse_other(ExportLogsServiceRequest(), body, "ExportLogsServiceRequest")
        count = sum(
            len(scope.log_records) for resource in request.resource_logs for scope in resource.scope_logs
        )
        partial = ExportLogsPartialSuccess(rejected_log_records=count, error_message=TRACES_ONLY)
        encoded: bytes = ExportLogsServiceResponse(partial_success=partial).SerializeToString()
        return encoded
    count = sum(
        len(_items(scope, "logRecords"))
        for resource in _items(_json(body), "resourceLogs")
        for scope in _items(resource, "scopeLogs")
    )
    return orjson.dumps({"partialSuccess": {"rejectedLogRecords": str(count), "errorMessage": TRACES_ONLY}})


_METRIC_KINDS = ("gauge", "sum", "histogram", "exponential_histogram", "summary")
_METRIC_KINDS_JSON = ("gauge", "sum", "histogram", "exponentialHistogram", "summary")


def metrics_response(body: bytes, encoding: BodyFormat) -> bytes:
    """The answer to a metrics export: every data point received, rejected (see logs_response)."""
    if encoding == "protobuf":
        request = _parse_other(ExportMetricsServiceRequest(), body, "ExportMetricsServiceRequest")
        count = 0
        for resource in request.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    kind = metric.WhichOneof("data")
                    count += len(getattr(metric, kind).data_points) if kind in _METRIC_KINDS else 0
        partial = ExportMetricsPartialSuccess(rejected_data_points=count, error_message=TRACES_ONLY)
        encoded: bytes = ExportMetricsServiceResponse(partial_success=partial).SerializeToString()
        return encoded
    count = 0
    for resource in _items(_json(body), "resourceMetrics"):
        for scope in _items(resource, "scopeMetrics"):
            for metric in _items(scope, "metrics"):
                for kind in _METRIC_KINDS_JSON:
                    data = metric.get(kind)
                    count += len(_items(data, "dataPoints")) if isinstance(data, dict) else 0
    return orjson.dumps({"partialSuccess": {"rejectedDataPoints": str(count), "errorMessage": TRACES_ONLY}})


def _parse_other(message: Any, body: bytes, name: str) -> Any:
    try:
        message.ParseFromString(body)
    except DecodeError:
        raise OtlpUnreadable(f"request body is not a valid protobuf {name}") from None
    return message


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError as error:
        raise OtlpUnreadable(f"request body is not valid JSON: {error}") from None


def _items(data: Any, key: str) -> list[dict[str, Any]]:
    """The objects listed under `key` (counting only: anything of another shape counts as none)."""
    items = data.get(key) if isinstance(data, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
