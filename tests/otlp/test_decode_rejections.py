"""Spans that cannot be kept are rejected alone; a request whose every span is rejected gets a 400
that says why (otlp-ingest §2.3, §2.6, edge cases 5 and 6)."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from redline.traces.otlp.decode import (
    BAD_PARENT_ID,
    BAD_SPAN_ID,
    BAD_TIME,
    BAD_TRACE_ID,
    NO_IDS,
    ZERO_SPAN_ID,
    ZERO_TRACE_ID,
    DecodedBatch,
    OtlpUnreadable,
    Rejected,
    byte_size,
    parse_json,
    parse_protobuf,
    read_spans,
    refusal,
    refusal_when_all_rejected,
    rejection_message,
)
from tests.otlp import payloads
from tests.otlp.builders import hex_id, raw_spans, trace_hex

LIMIT = 1 << 20
SPANS = raw_spans(
    [
        {"span": "A", "parent": None, "name": "agent"},
        {"span": "B", "parent": "A", "name": "llm"},
        {"span": "C", "parent": "A", "name": "tool"},
    ]
)


def request_with(**fields: Any) -> Any:
    """The three spans, the second one's protobuf fields replaced."""
    request = payloads.export_request(SPANS)
    span = request.resource_spans[0].scope_spans[0].spans[1]
    for name, value in fields.items():
        setattr(span, name, value)
    return request


def read(request: Any, limit: int = LIMIT) -> DecodedBatch:
    return read_spans(request, max_span_bytes=limit)


@pytest.mark.parametrize(
    ("fields", "reason", "trace_id", "span_id"),
    [
        ({"trace_id": bytes(range(1, 13))}, BAD_TRACE_ID, bytes(range(1, 13)).hex(), hex_id("B")),
        ({"trace_id": b""}, BAD_TRACE_ID, None, hex_id("B")),
        ({"span_id": bytes(range(1, 17))}, BAD_SPAN_ID, trace_hex(), bytes(range(1, 17)).hex()),
        ({"span_id": b""}, BAD_SPAN_ID, trace_hex(), None),
        ({"trace_id": b"", "span_id": b""}, NO_IDS, None, None),
        ({"parent_span_id": b"\x01\x02"}, BAD_PARENT_ID, trace_hex(), hex_id("B")),
        ({"trace_id": bytes(16)}, ZERO_TRACE_ID, "0" * 32, hex_id("B")),
        ({"span_id": bytes(8)}, ZERO_SPAN_ID, trace_hex(), "0" * 16),
        ({"end_time_unix_nano": 2**63}, BAD_TIME, trace_hex(), hex_id("B")),
        ({"start_time_unix_nano": 2**64 - 1}, BAD_TIME, trace_hex(), hex_id("B")),
    ],
)
def test_a_span_that_cannot_be_kept_is_rejected_alone(
    fields: dict[str, Any], reason: str, trace_id: str | None, span_id: str | None
) -> None:
    batch = read(request_with(**fields))

    assert [received.span.name for received in batch.spans] == ["agent", "tool"]
    assert batch.rejected == (Rejected(trace_id, span_id, reason),)
    assert batch.span_count == 3
    assert refusal_when_all_rejected(batch) is None


def test_the_latest_time_storage_holds_is_kept() -> None:
    batch = read(request_with(end_time_unix_nano=2**63 - 1))

    assert batch.rejected == ()
    assert batch.spans[1].span.end_ns == 2**63 - 1


def test_a_span_over_the_size_limit_is_rejected_alone_counting_its_events() -> None:
    big = raw_spans(
        [
            {"span": "A", "parent": None, "name": "agent"},
            {"span": "B", "parent": "A", "events": [{"name": "prompt", "attributes": {"text": "x" * 2000}}]},
            {"span": "C", "parent": "A", "attributes": {"text": "y" * 900}},
        ]
    )
    request = payloads.export_request(big)
    sizes = [len(span.SerializeToString()) for span in request.resource_spans[0].scope_spans[0].spans]
    assert sizes[1] > 2000 > sizes[2] > 900

    batch = read(request, limit=2000)

    assert [received.span.span_id for received in batch.spans] == [hex_id("A"), hex_id("C")]
    assert [received.size for received in batch.spans] == [sizes[0], sizes[2]]
    assert batch.rejected == (
        Rejected(trace_hex(), hex_id("B"), "span is over the 2,000 bytes limit for one span"),
    )


def test_a_span_exactly_at_the_limit_is_kept() -> None:
    request = payloads.export_request(SPANS[:1])
    size = len(request.resource_spans[0].scope_spans[0].spans[0].SerializeToString())

    assert len(read(request, limit=size).spans) == 1
    assert len(read(request, limit=size - 1).rejected) == 1


@pytest.mark.parametrize(
    ("count", "words"),
    [
        (8 << 20, "8 MiB"),
        (64 << 20, "64 MiB"),
        (1 << 30, "1 GiB"),
        (512 << 10, "512 KiB"),
        (1000, "1,000 bytes"),
    ],
)
def test_limits_are_named_in_their_unit(count: int, words: str) -> None:
    assert byte_size(count) == words


# -- edge case 5: base64 ids from a hand-rolled JSON exporter --------------------------------------


def base64_id_body() -> bytes:
    data = payloads.export_json(payloads.export_request(SPANS))
    data = orjson.loads(orjson.dumps(data))
    for span in data["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for field in ("traceId", "spanId", "parentSpanId"):
            if field in span:
                span[field] = base64.b64encode(bytes.fromhex(span[field])).decode()
    return orjson.dumps(data)


def test_edge_case_5_base64_ids_are_not_taken_for_ids() -> None:
    batch = read(parse_json(base64_id_body()))

    assert batch.spans == ()
    assert {rejection.reason for rejection in batch.rejected} == {BAD_TRACE_ID}
    message = refusal_when_all_rejected(batch)
    assert message is not None
    assert message.startswith("3 spans rejected: trace id is not 16 bytes (32 hex digits) (3 spans: ")
    assert message.endswith(". traceId/spanId must be hex: 32 and 16 hex digits in OTLP JSON, not base64")


@pytest.mark.parametrize("text", ["trace-0000000001", "not-hex-but-32-characters-long!!"])
def test_a_non_hex_trace_id_never_passes_for_an_id_whatever_its_length(text: str) -> None:
    data = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": text, "spanId": hex_id("A")}]}]}]}

    batch = read(parse_json(data))

    assert [rejection.reason for rejection in batch.rejected] == [BAD_TRACE_ID]


def test_a_non_hex_span_id_of_eight_characters_is_rejected() -> None:
    data = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": trace_hex(), "spanId": "span0001"}]}]}]}

    assert [rejection.reason for rejection in read(parse_json(data)).rejected] == [BAD_SPAN_ID]


def test_ids_of_the_wrong_length_get_the_hex_hint_among_other_reasons() -> None:
    rejected = [Rejected(trace_hex(), hex_id("A"), BAD_SPAN_ID), Rejected(trace_hex(), hex_id("B"), "other")]

    message = refusal(rejected, 2)

    assert message is not None
    assert message.endswith("traceId/spanId must be hex: 32 and 16 hex digits in OTLP JSON, not base64")


# -- edge case 6: a logs export posted to /v1/traces -----------------------------------------------


def logs_export(*, trace_context: bool) -> bytes:
    request = ExportLogsServiceRequest()
    resource_logs = request.resource_logs.add()
    resource_logs.resource.attributes.add(key="service.name", value=AnyValue(string_value="agent"))
    scope_logs = resource_logs.scope_logs.add()
    scope_logs.scope.name = "opentelemetry.instrumentation.openai_v2"
    for i in range(3):
        record = scope_logs.log_records.add(
            time_unix_nano=1_780_000_000_000_000_000 + i,
            observed_time_unix_nano=1_780_000_000_000_000_000 + i,
            severity_number=9,
            severity_text="INFO",
            body=AnyValue(string_value=f"message {i}"),
            event_name="gen_ai.user.message",
        )
        record.attributes.add(key="gen_ai.system", value=AnyValue(string_value="openai"))
        if trace_context:
            record.trace_id = bytes.fromhex(trace_hex())
            record.span_id = bytes.fromhex(hex_id("A"))
            record.flags = 1
    encoded: bytes = request.SerializeToString()
    return encoded


LOGS_REFUSAL = (
    "3 spans rejected: no trace id or span id (3 spans). Spans without ids are what a logs export looks like "
    "when sent here; if you are exporting logs, use /v1/logs"
)


def test_edge_case_6_a_logs_export_reads_as_spans_without_ids() -> None:
    batch = read(parse_protobuf(logs_export(trace_context=False)))

    assert batch.spans == ()
    assert batch.rejected == (Rejected(None, None, NO_IDS),) * 3
    assert refusal_when_all_rejected(batch) == LOGS_REFUSAL


def test_edge_case_6_log_records_with_a_trace_context_do_not_read_as_spans_at_all() -> None:
    with pytest.raises(OtlpUnreadable) as caught:
        parse_protobuf(logs_export(trace_context=True))

    assert caught.value.message == (
        "request body is not a valid protobuf ExportTraceServiceRequest; "
        "if you are exporting logs, use /v1/logs"
    )


def test_a_body_that_is_no_protobuf_at_all_gets_no_logs_hint() -> None:
    with pytest.raises(OtlpUnreadable) as caught:
        parse_protobuf(b"\xff\xff\xff")

    assert caught.value.message == "request body is not a valid protobuf ExportTraceServiceRequest"
    assert caught.value.status == 400


# -- refusal and the partial-success message --------------------------------------------------------


def test_no_refusal_when_a_span_is_kept_or_there_were_none() -> None:
    assert refusal([], 0) is None
    assert refusal([Rejected(None, None, NO_IDS)], 2) is None


def test_a_refusal_for_other_reasons_is_the_rejection_message() -> None:
    rejected = [Rejected(trace_hex(), hex_id("A"), f"trace {trace_hex()} belongs to another project")]

    assert refusal(rejected, 1) == (
        f"1 span rejected: trace {trace_hex()} belongs to another project (1 span: {hex_id('A')})."
    )


def test_the_rejection_message_counts_each_reason_with_its_first_ids() -> None:
    rejected = [Rejected(trace_hex(), hex_id(f"S{i}"), BAD_PARENT_ID) for i in range(5)]
    rejected.append(Rejected(trace_hex(), hex_id("Z"), "span is over the 8 MiB limit for one span"))
    rejected.append(Rejected(None, None, NO_IDS))
    shown = ", ".join(hex_id(f"S{i}") for i in range(3))

    message = rejection_message(rejected, ["2 spans replaced an earlier copy", "Something else."])

    assert message == (
        f"7 spans rejected: parent span id is not 8 bytes (16 hex digits) (5 spans: {shown} and 2 more); "
        f"span is over the 8 MiB limit for one span (1 span: {hex_id('Z')}); "
        "no trace id or span id (1 span). "
        "2 spans replaced an earlier copy. Something else."
    )


def test_warnings_alone() -> None:
    assert rejection_message([], ["1 span replaced an earlier copy"]) == "1 span replaced an earlier copy."
    assert rejection_message([]) == ""


def test_many_reasons_are_summed_up_after_the_first_eight() -> None:
    rejected = [Rejected(None, hex_id(f"S{i}"), f"reason {i}") for i in range(12)]

    message = rejection_message(rejected)

    assert "reason 7 (1 span: " in message
    assert "reason 8" not in message
    assert message.endswith("; and 4 other reasons.")


def test_a_long_id_is_cut_in_the_message() -> None:
    message = rejection_message([Rejected(None, "ab" * 40, BAD_SPAN_ID)])

    assert message == f"1 span rejected: {BAD_SPAN_ID} (1 span: {'ab' * 16}…)."


def test_the_message_stays_under_4_kib_whatever_it_carries() -> None:
    rejected = [Rejected(None, hex_id(f"S{i}"), "é" * 900 + str(i)) for i in range(10)]

    message = rejection_message(rejected, ["ü" * 3000])

    assert len(message.encode()) < 4096
    assert message.endswith("…")
    assert message.startswith("10 spans rejected: ééé")
