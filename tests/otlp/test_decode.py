"""Reading OTLP exports into RawSpans: both encodings give back the spans they were made from."""

from __future__ import annotations

import base64
import hashlib
import math
from dataclasses import replace
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline.traces.otlp.decode import (
    DecodedBatch,
    ReceivedSpan,
    parse_json,
    parse_protobuf,
    read_spans,
    span_count,
)
from redline.traces.otlp.model import RawSpan
from tests.otlp import payloads
from tests.otlp.builders import hex_id, raw_spans, trace_hex

LIMIT = 8 << 20

SPANS = raw_spans(
    [
        {"span": "A", "parent": None, "name": "agent", "attributes": {"openinference.span.kind": "AGENT"}},
        {
            "span": "L",
            "parent": "A",
            "name": "ChatCompletion",
            "kind": 3,
            "status": "error",
            "message": "rate limited",
            "scope": "openinference.instrumentation.openai",
            "attributes": {
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "hi",
                "llm.token_count.prompt": 12,
                "llm.temperature": 0.5,
                "stream": False,
                "tags": ["a", "b"],
                "metadata": {"session": "s1", "n": [1, 2]},
                "blob": {"$bytes": "AAEC"},
                "nothing": None,
            },
            "events": [{"name": "exception", "time": 5, "attributes": {"exception.message": "boom"}}],
            "dropped": 3,
        },
        {"span": "T", "parent": "A", "name": "tool", "resource": {"service.name": "other", "pid": 7}},
    ]
)


def decoded(batch: DecodedBatch) -> list[RawSpan]:
    return [received.span for received in batch.spans]


def via_protobuf(spans: list[RawSpan]) -> DecodedBatch:
    body = payloads.export_request(spans).SerializeToString()
    return read_spans(parse_protobuf(body), max_span_bytes=LIMIT)


def via_json(spans: list[RawSpan]) -> DecodedBatch:
    body = payloads.export_json_bytes(payloads.export_request(spans))
    return read_spans(parse_json(body), max_span_bytes=LIMIT)


@pytest.mark.parametrize("read", [via_protobuf, via_json])
def test_spans_come_back_as_they_were_sent(read: Any) -> None:
    batch = read(SPANS)

    assert decoded(batch) == SPANS
    assert batch.span_count == 3
    assert batch.rejected == ()


def test_json_as_text_as_parsed_and_from_protobuf_are_one_request() -> None:
    request = payloads.export_request(SPANS)
    data = payloads.export_json(request)

    assert parse_json(orjson.dumps(data)) == request
    assert parse_json(orjson.dumps(data).decode()) == request
    assert parse_json(data) == request


def test_a_utf8_byte_order_mark_is_not_an_error() -> None:
    body = payloads.export_json_bytes(payloads.export_request(SPANS))

    assert parse_json(b"\xef\xbb\xbf" + body) == parse_json(body)
    assert parse_json("\ufeff" + body.decode()) == parse_json(body)


def test_spans_are_grouped_by_resource_in_arrival_order() -> None:
    batch = via_protobuf(SPANS)

    assert [group.resource for group in batch.groups] == [
        {"service.name": "test-agent"},
        {"service.name": "other", "pid": 7},
    ]
    assert [[received.span.name for received in group.spans] for group in batch.groups] == [
        ["agent", "ChatCompletion"],
        ["tool"],
    ]
    first, second = batch.groups
    assert first.resource_hash != second.resource_hash
    assert first.spans[0].span.resource is first.resource


def test_resource_and_scope_hashes_name_their_content() -> None:
    request = payloads.export_request(SPANS, scope_attributes={"lib": "x"})
    batch = read_spans(request, max_span_bytes=LIMIT)
    resource_spans = request.resource_spans[0]

    group = batch.groups[0]
    expected_resource = hashlib.sha256(
        resource_spans.resource.SerializeToString(deterministic=True)
    ).hexdigest()
    assert group.resource_hash == expected_resource
    agent, llm = group.spans
    assert agent.scope_hash != llm.scope_hash
    expected_scope = hashlib.sha256(resource_spans.scope_spans[1].scope.SerializeToString(deterministic=True))
    assert llm.scope_hash == expected_scope.hexdigest()
    assert llm.scope_attributes == {"lib": "x"}
    assert llm.span.scope_name == "openinference.instrumentation.openai"


def test_the_content_hash_is_of_the_span_its_resource_and_its_scope() -> None:
    request = payloads.export_request(SPANS)
    received = read_spans(request, max_span_bytes=LIMIT).groups[0].spans[0]
    encoded = request.resource_spans[0].scope_spans[0].spans[0].SerializeToString(deterministic=True)

    expected = hashlib.sha256(encoded + received_hashes(request, received)).hexdigest()
    assert received.content_hash == expected
    assert received.size == len(encoded)


def received_hashes(request: Any, received: ReceivedSpan) -> bytes:
    resource = hashlib.sha256(request.resource_spans[0].resource.SerializeToString(deterministic=True))
    return resource.hexdigest().encode() + received.scope_hash.encode()


def test_the_same_span_hashes_alike_in_both_encodings_and_differently_when_changed() -> None:
    changed = [SPANS[0], replace(SPANS[1], end_ns=SPANS[1].end_ns + 1), SPANS[2]]

    hashes = [received.content_hash for received in via_protobuf(SPANS).spans]
    changed_hashes = [received.content_hash for received in via_protobuf(changed).spans]

    assert [received.content_hash for received in via_json(SPANS).spans] == hashes
    assert changed_hashes[0] == hashes[0]
    assert changed_hashes[1] != hashes[1]
    assert changed_hashes[2] == hashes[2]


def test_the_same_span_under_another_resource_hashes_differently() -> None:
    moved = [replace(SPANS[0], resource={"service.name": "elsewhere"})]

    assert via_protobuf(moved).spans[0].content_hash != via_protobuf(SPANS).spans[0].content_hash


def test_span_count_counts_without_reading() -> None:
    assert span_count(payloads.export_request(SPANS)) == 3
    assert span_count(parse_protobuf(b"")) == 0


def test_an_empty_request_has_no_groups() -> None:
    for request in (parse_protobuf(b""), parse_json(b"{}")):
        assert read_spans(request, max_span_bytes=LIMIT) == DecodedBatch((), 0)


def test_links_trace_state_flags_and_dropped_counts_are_kept() -> None:
    link = {
        "trace_id": trace_hex("other"),
        "span_id": hex_id("Z"),
        "trace_state": "k=v",
        "attributes": {"why": "follows"},
        "dropped_attributes_count": 2,
        "flags": 1,
    }
    span = replace(
        SPANS[0],
        links=(link,),
        trace_state="vendor=1",
        flags=0x301,
        dropped_events=4,
        dropped_links=5,
    )

    for read in (via_protobuf, via_json):
        assert decoded(read([span])) == [span]


def test_a_128_attribute_span_keeps_its_dropped_count_and_warns() -> None:
    attributes = {f"llm.input_messages.{i}.message.content": f"m{i}" for i in range(128)}
    span = replace(SPANS[0], attributes=attributes, dropped_attributes=40)

    for read in (via_protobuf, via_json):
        batch = read([span, SPANS[2]])
        assert batch.spans[0].span.attributes == attributes
        assert batch.spans[0].span.dropped_attributes == 40
        assert batch.warnings == ("1 span arrived with attributes dropped by the exporter's limit",)


def test_no_warning_when_nothing_was_dropped() -> None:
    assert via_protobuf([SPANS[0], SPANS[2]]).warnings == ()


def test_an_all_zero_parent_is_no_parent() -> None:
    request = payloads.export_request([SPANS[1]])
    request.resource_spans[0].scope_spans[0].spans[0].parent_span_id = bytes(8)

    assert read_spans(request, max_span_bytes=LIMIT).spans[0].span.parent_span_id is None


# -- AnyValue trees, both encodings -----------------------------------------------------------------

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
SCALARS = st.one_of(
    st.none(),
    st.text(),
    st.booleans(),
    INT64,
    st.sampled_from([-(2**63), 2**63 - 1, 0, -1]),
    st.floats(allow_nan=False),
    st.binary().map(lambda raw: {"$bytes": base64.b64encode(raw).decode()}),
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=8).filter(lambda key: key != "$bytes"), children, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(attributes=st.dictionaries(st.text(max_size=20), VALUES, max_size=6))
def test_any_value_trees_survive_both_encodings(attributes: dict[str, Any]) -> None:
    span = replace(SPANS[0], attributes=attributes)

    for read in (via_protobuf, via_json):
        assert _comparable(decoded(read([span]))[0].attributes) == _comparable(attributes)


def _comparable(value: Any) -> Any:
    """Values with a float's type made plain (1.0 == 1 in Python, but the decoder must keep floats)."""
    if isinstance(value, float):
        return ("float", value if math.isfinite(value) else str(value))
    if isinstance(value, list):
        return [_comparable(item) for item in value]
    if isinstance(value, dict):
        return {key: _comparable(item) for key, item in value.items()}
    return (type(value).__name__, value)


def test_a_resource_without_spans_makes_no_group() -> None:
    request = payloads.export_request(SPANS)
    empty = request.resource_spans.add()
    empty.resource.attributes.extend(payloads.key_values({"service.name": "idle"}))
    empty.scope_spans.add().scope.name = "nothing"

    assert [group.resource for group in read_spans(request, max_span_bytes=LIMIT).groups] == [
        {"service.name": "test-agent"},
        {"service.name": "other", "pid": 7},
    ]
