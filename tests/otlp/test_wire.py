"""OTLP/HTTP's wire (otlp-ingest §2.1, §2.3, §2.6, edge case 7): headers, bodies within their limit,
and answers in the request's encoding."""

from __future__ import annotations

import gzip
import random
import time
import tracemalloc
import zlib
from typing import Any

import orjson
import pytest
from google.protobuf import (  # type: ignore[import-untyped]
    descriptor_pb2,
    descriptor_pool,
    json_format,
    message_factory,
)
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from redline.errors import Invalid, TooLarge
from redline.surfaces.otlp import wire
from redline.traces.otlp.decode import OtlpUnreadable, read_spans
from tests.otlp import payloads
from tests.otlp.builders import raw_spans

MiB = 1 << 20
BODY = payloads.export_request(raw_spans([{"span": "A", "parent": None}])).SerializeToString() * 20


# -- Content-Type and Content-Encoding ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("application/x-protobuf", "protobuf"),
        ("Application/X-Protobuf; charset=utf-8", "protobuf"),
        ("application/protobuf", "protobuf"),
        ("application/json", "json"),
        (" APPLICATION/JSON ; charset=UTF-8", "json"),
    ],
)
def test_media_types_ignore_case_and_parameters(content_type: str, expected: str) -> None:
    assert wire.body_format(content_type) == expected
    assert wire.answer_format(content_type) == expected


@pytest.mark.parametrize(
    ("content_type", "shown"),
    [
        ("text/plain; charset=utf-8", "text/plain; charset=utf-8"),
        ("application/jsonl", "application/jsonl"),
        ("application/x-protobuf-json", "application/x-protobuf-json"),
        (None, ""),
        ("", ""),
        ("x" * 150, "x" * 100 + "…"),
    ],
)
def test_other_media_types_are_415(content_type: str | None, shown: str) -> None:
    with pytest.raises(wire.UnsupportedMediaType) as caught:
        wire.body_format(content_type)

    assert caught.value.status == 415
    assert caught.value.message == (
        f"unsupported content type '{shown}'; send application/x-protobuf or application/json"
    )
    assert wire.answer_format(content_type) == "json"


def test_answers_carry_the_canonical_media_type() -> None:
    assert wire.media_type("protobuf") == "application/x-protobuf"
    assert wire.media_type("json") == "application/json"


@pytest.mark.parametrize(
    ("content_encoding", "expected"),
    [
        ("gzip", "gzip"),
        ("x-gzip", "gzip"),
        ("GZIP", "gzip"),
        ("deflate", "deflate"),
        ("identity", "identity"),
        (None, "identity"),
        ("", "identity"),
        (" ", "identity"),
    ],
)
def test_content_encodings(content_encoding: str | None, expected: str) -> None:
    assert wire.body_encoding(content_encoding) == expected


@pytest.mark.parametrize("content_encoding", ["br", "zstd", "gzip, deflate", "compress"])
def test_other_content_encodings_are_415(content_encoding: str) -> None:
    with pytest.raises(wire.UnsupportedMediaType) as caught:
        wire.body_encoding(content_encoding)

    assert caught.value.status == 415
    assert caught.value.message == (
        f"unsupported content encoding '{content_encoding}'; send gzip, deflate or identity"
    )


# -- bodies -------------------------------------------------------------------------------------------


def chunked(body: bytes, size: int) -> list[bytes]:
    return [body[start : start + size] for start in range(0, len(body), size)]


ENCODED = {
    "identity": BODY,
    "gzip": payloads.gzipped(BODY),
    "deflate": payloads.deflated(BODY),
}


@pytest.mark.parametrize("encoding", ["identity", "gzip", "deflate"])
@pytest.mark.parametrize("chunk", [1, 7, 1 << 16])
def test_bodies_are_read_in_any_chunking(encoding: Any, chunk: int) -> None:
    assert wire.read_body(chunked(ENCODED[encoding], chunk), encoding, MiB) == BODY


@pytest.mark.parametrize("chunk", [1, 3, 1 << 16])
def test_bare_deflate_data_is_read_too(chunk: int) -> None:
    assert wire.read_body(chunked(payloads.raw_deflated(BODY), chunk), "deflate", MiB) == BODY


def test_gzip_members_one_after_another_are_one_body() -> None:
    body = payloads.gzipped(BODY[:100]) + payloads.gzipped(BODY[100:])

    assert wire.read_body(chunked(body, 5), "gzip", MiB) == BODY
    assert wire.read_body(body, "gzip", MiB) == BODY


@pytest.mark.parametrize("encoding", ["identity", "gzip", "deflate"])
def test_an_empty_body_is_empty_whatever_its_encoding(encoding: Any) -> None:
    assert wire.read_body([], encoding, MiB) == b""
    assert wire.read_body(b"", encoding, MiB) == b""


@pytest.mark.parametrize(
    ("body", "encoding", "name"),
    [
        (b"this is not gzip", "gzip", "gzip"),
        (payloads.gzipped(BODY)[:-4], "gzip", "gzip"),
        (payloads.gzipped(BODY) + b"trailing", "gzip", "gzip"),
        (b"this is not deflate", "deflate", "deflate"),
        (payloads.deflated(BODY)[:-4], "deflate", "deflate"),
        (payloads.deflated(BODY) + b"trailing", "deflate", "deflate"),
        (b"x", "deflate", "deflate"),
        (payloads.deflated(BODY), "gzip", "gzip"),
    ],
)
def test_a_body_that_does_not_decompress_is_400(body: bytes, encoding: Any, name: str) -> None:
    for chunks in ([body], chunked(body, 3)):
        with pytest.raises(Invalid) as caught:
            wire.read_body(chunks, encoding, MiB)

        assert caught.value.status == 400
        assert caught.value.message == f"request body is not valid {name}"


def test_a_body_at_the_limit_is_read_and_one_byte_more_is_413() -> None:
    assert wire.read_body(chunked(bytes(1024), 100), "identity", 1024) == bytes(1024)
    with pytest.raises(TooLarge) as caught:
        wire.read_body(chunked(bytes(1025), 100), "identity", 1024)

    assert caught.value.status == 413
    assert caught.value.message == "request body is over the 1 KiB limit (REDLINE_OTLP_MAX_BODY_BYTES)"


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_small_compressed_body_over_the_limit_once_decompressed_is_413(encoding: Any) -> None:
    body = payloads.gzipped(bytes(5000)) if encoding == "gzip" else payloads.deflated(bytes(5000))
    assert len(body) < 1024
    assert wire.read_body(body, encoding, 5000) == bytes(5000)

    with pytest.raises(TooLarge) as caught:
        wire.read_body(body, encoding, 4096)

    assert caught.value.message == (
        "request body is over the 4 KiB limit once decompressed (REDLINE_OTLP_MAX_BODY_BYTES)"
    )


def test_a_compressed_body_is_held_to_the_limit_as_sent_too() -> None:
    noise = random.Random(0).randbytes(8000)
    body = payloads.gzipped(noise)
    assert len(body) > 4096

    with pytest.raises(TooLarge) as caught:
        wire.read_body(chunked(body, 1000), "gzip", 4096)

    assert caught.value.message == "request body is over the 4 KiB limit (REDLINE_OTLP_MAX_BODY_BYTES)"


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """1 GiB of zeros as 128 gzip members of 8 MiB each: about 1 MB sent."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    member = compressor.compress(bytes(8 * MiB)) + compressor.flush()
    return member * 128


def test_edge_case_7_a_gzip_bomb_is_413_quickly_and_without_inflating_it(gzip_bomb: bytes) -> None:
    limit = 16 * MiB
    assert len(gzip_bomb) < 2 * MiB
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(TooLarge) as caught:
            wire.read_body(chunked(gzip_bomb, 1 << 16), "gzip", limit)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert caught.value.message == (
        "request body is over the 16 MiB limit once decompressed (REDLINE_OTLP_MAX_BODY_BYTES)"
    )
    assert peak < 3 * limit
    assert elapsed < 5


def test_content_length_over_the_limit_is_refused_before_reading() -> None:
    wire.check_content_length(None, 1024)
    wire.check_content_length("1024", 1024)
    wire.check_content_length("soon", 1024)
    with pytest.raises(TooLarge) as caught:
        wire.check_content_length("1025", 1024)

    assert caught.value.message == "request body is over the 1 KiB limit (REDLINE_OTLP_MAX_BODY_BYTES)"


def test_too_many_spans_is_413_naming_the_limit() -> None:
    wire.check_span_count(50_000, 50_000)
    with pytest.raises(TooLarge) as caught:
        wire.check_span_count(50_001, 50_000)

    assert caught.value.status == 413
    assert caught.value.message == (
        "request has 50,001 spans, over the limit of 50,000 per request (REDLINE_OTLP_MAX_SPANS)"
    )


def test_parse_request_reads_either_encoding() -> None:
    request = payloads.export_request(raw_spans([{"span": "A", "parent": None}]))

    assert wire.parse_request(request.SerializeToString(), "protobuf") == request
    assert wire.parse_request(payloads.export_json_bytes(request), "json") == request
    with pytest.raises(OtlpUnreadable):
        wire.parse_request(b"{", "json")


SPANS = raw_spans(
    [
        {"span": "A", "parent": None, "attributes": {"openinference.span.kind": "AGENT", "n": 1}},
        {"span": "B", "parent": "A", "attributes": {"blob": {"$bytes": "AAE="}, "tags": ["x", 2.5, True]}},
    ]
)


@pytest.mark.parametrize("content_type", ["application/x-protobuf", "application/json; charset=utf-8"])
@pytest.mark.parametrize("content_encoding", [None, "gzip", "deflate"])
def test_exports_read_back_through_the_wire_in_every_encoding(
    content_type: str, content_encoding: str | None
) -> None:
    request = payloads.export_request(SPANS)
    body = request.SerializeToString() if "protobuf" in content_type else payloads.export_json_bytes(request)
    sent = {None: body, "gzip": gzip.compress(body), "deflate": payloads.deflated(body)}[content_encoding]

    received = wire.read_body(chunked(sent, 10), wire.body_encoding(content_encoding), MiB)
    parsed = wire.parse_request(received, wire.body_format(content_type))

    assert [span.span for span in read_spans(parsed, max_span_bytes=MiB).spans] == SPANS


# -- answers ------------------------------------------------------------------------------------------


def test_a_full_success_is_an_empty_response() -> None:
    assert wire.export_response("protobuf") == b""
    assert wire.export_response("json") == b"{}"


def test_a_partial_success_in_protobuf() -> None:
    response = ExportTraceServiceResponse.FromString(wire.export_response("protobuf", 2, "2 spans rejected"))

    assert response.partial_success.rejected_spans == 2
    assert response.partial_success.error_message == "2 spans rejected"


def test_a_partial_success_in_json() -> None:
    assert wire.export_response("json", 2, "2 spans rejected: …") == (
        '{"partialSuccess":{"rejectedSpans":"2","errorMessage":"2 spans rejected: …"}}'.encode()
    )


def test_a_warning_alone_is_a_partial_success_rejecting_nothing() -> None:
    response = ExportTraceServiceResponse.FromString(wire.export_response("protobuf", 0, "1 span replaced"))

    assert response.HasField("partial_success")
    assert response.partial_success.rejected_spans == 0
    assert response.partial_success.error_message == "1 span replaced"
    assert orjson.loads(wire.export_response("json", 0, "1 span replaced")) == {
        "partialSuccess": {"rejectedSpans": "0", "errorMessage": "1 span replaced"}
    }


def status_class() -> Any:
    """google.rpc.Status as its .proto declares it, made here so the test need not depend on
    googleapis-common-protos: code = 1 (int32), message = 2 (string), details = 3 (unused)."""
    file = descriptor_pb2.FileDescriptorProto(
        name="redline_test_status.proto", package="redline.test", syntax="proto3"
    )
    message = file.message_type.add(name="Status")
    optional = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    message.field.add(
        name="code", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32, label=optional
    )
    message.field.add(
        name="message", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING, label=optional
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("redline.test.Status"))


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, 3),
        (401, 16),
        (403, 7),
        (404, 5),
        (405, 12),
        (413, 8),
        (415, 3),
        (429, 8),
        (500, 13),
        (503, 14),
        (418, 2),
    ],
)
def test_status_bodies_carry_the_grpc_code_and_message(status: int, code: int) -> None:
    message = "request body is not valid gzip — é" * 10

    decoded = status_class().FromString(wire.status_body("protobuf", status, message))

    assert (decoded.code, decoded.message) == (code, message)
    assert orjson.loads(wire.status_body("json", status, message)) == {"code": code, "message": message}
    assert wire.grpc_code(status) == code


def test_a_status_with_an_empty_message_is_only_its_code() -> None:
    assert wire.status_body("protobuf", 400, "") == b"\x08\x03"
    assert wire.status_body("json", 400, "") == b'{"code":3,"message":""}'


def logs_request(records: int) -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    scope = request.resource_logs.add().scope_logs.add()
    for i in range(records):
        scope.log_records.add(time_unix_nano=i)
    request.resource_logs.add().scope_logs.add().log_records.add()
    return request


def test_logs_are_answered_as_all_rejected_in_protobuf() -> None:
    body = logs_request(3).SerializeToString()

    response = ExportLogsServiceResponse.FromString(wire.logs_response(body, "protobuf"))

    assert response.partial_success.rejected_log_records == 4
    assert response.partial_success.error_message == "Redline ingests traces only"


def test_logs_are_answered_as_all_rejected_in_json() -> None:
    body = orjson.dumps(
        {
            "resourceLogs": [
                {"scopeLogs": [{"logRecords": [{"body": {"stringValue": "a"}}, {}]}, {"logRecords": [{}]}]},
                {"scopeLogs": "odd"},
            ]
        }
    )

    assert wire.logs_response(body, "json") == (
        b'{"partialSuccess":{"rejectedLogRecords":"3","errorMessage":"Redline ingests traces only"}}'
    )


def metrics_request() -> ExportMetricsServiceRequest:
    request = ExportMetricsServiceRequest()
    scope = request.resource_metrics.add().scope_metrics.add()
    gauge = scope.metrics.add(name="g")
    gauge.gauge.data_points.add(as_int=1)
    gauge.gauge.data_points.add(as_int=2)
    total = scope.metrics.add(name="s")
    for value in range(3):
        total.sum.data_points.add(as_double=value)
    scope.metrics.add(name="h").histogram.data_points.add(count=1)
    scope.metrics.add(name="e").exponential_histogram.data_points.add(count=1)
    scope.metrics.add(name="q").summary.data_points.add(count=1)
    scope.metrics.add(name="empty")
    return request


def test_metrics_are_answered_as_all_rejected_in_protobuf() -> None:
    response = ExportMetricsServiceResponse.FromString(
        wire.metrics_response(metrics_request().SerializeToString(), "protobuf")
    )

    assert response.partial_success.rejected_data_points == 8
    assert response.partial_success.error_message == "Redline ingests traces only"


def test_metrics_are_answered_as_all_rejected_in_json() -> None:
    body = json_format.MessageToJson(metrics_request()).encode()

    assert orjson.loads(wire.metrics_response(body, "json")) == {
        "partialSuccess": {"rejectedDataPoints": "8", "errorMessage": "Redline ingests traces only"}
    }


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (wire.logs_response, "request body is not a valid protobuf ExportLogsServiceRequest"),
        (wire.metrics_response, "request body is not a valid protobuf ExportMetricsServiceRequest"),
    ],
)
def test_unreadable_logs_and_metrics_are_400(answer: Any, message: str) -> None:
    with pytest.raises(OtlpUnreadable) as caught:
        answer(b"\xff\xff\xff", "protobuf")
    assert caught.value.message == message

    with pytest.raises(OtlpUnreadable) as caught:
        answer(b"{", "json")
    assert (
        caught.value.message
        == "request body is not valid JSON: unexpected end of data: line 1 column 2 (char 1)"
    )
