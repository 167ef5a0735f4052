"""OTLP JSON as files hold it: one export request as a document, or one per line (what the
OpenTelemetry Collector's file exporter writes), for `redline import` and the rm surface's `otel`
import format, which then take the same path as a live export."""

from __future__ import annotations

from collections.abc import Iterator

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from redline.traces.otlp.decode import OtlpUnreadable, parse_json

OTLP_FORMAT = "otel"
OTLP_DESCRIPTION = (
    'OpenTelemetry traces in the OTLP JSON encoding: one ExportTraceServiceRequest ({"resourceSpans": …}) '
    "as a document, or one per line"
)
# How far into a text its first `resourceSpans` key may be for the text to read as OTLP JSON.
_DETECT_WITHIN = 200


def looks_like_otlp(text: str) -> bool:
    """Whether a text is OTLP JSON: an object whose first key, near the start, is `resourceSpans`."""
    head = text.lstrip()[:_DETECT_WITHIN]
    return head.startswith("{") and '"resourceSpans"' in head


def export_requests(text: str) -> Iterator[ExportTraceServiceRequest]:
    """The export requests of a text: the whole text when it is one JSON document, else each non-blank
    line. A line that is no export request is refused naming its line."""
    try:
        yield parse_json(text)
        return
    except OtlpUnreadable:
        lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
        if len(lines) <= 1:
            raise
    for number, line in lines:
        try:
            yield parse_json(line)
        except OtlpUnreadable as error:
            raise OtlpUnreadable(f"line {number}: {error.message}") from None
