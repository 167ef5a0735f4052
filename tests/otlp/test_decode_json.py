"""OTLP JSON as exporters really write it (otlp-ingest §2.2, edge case 4), and the 400s for shapes that
are not OTLP JSON."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from redline.traces.otlp.decode import OtlpUnreadable, parse_json, read_spans
from redline.traces.otlp.model import RawSpan

TRACE = "5B8EFFF798038103D269B633813FC60C"
SPAN = "EEE19B7EC3C1B174"
PARENT = "EEE19B7EC3C1B173"
PREFIX = "request body is not valid OTLP JSON: "
WHERE = "resourceSpans[0].scopeSpans[0].spans[0]"


def body(span: dict[str, Any], **resource_spans: Any) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}], **resource_spans}]}


def one_span(data: Any) -> RawSpan:
    (received,) = read_spans(parse_json(data), max_span_bytes=1 << 20).spans
    return received.span


def span_with(**fields: Any) -> dict[str, Any]:
    return {"traceId": TRACE, "spanId": SPAN, "name": "s", **fields}


def attribute(value: Any) -> Any:
    return one_span(body(span_with(attributes=[{"key": "k", "value": value}]))).attributes["k"]


def refusal(data: Any) -> str:
    with pytest.raises(OtlpUnreadable) as caught:
        parse_json(data)
    assert caught.value.status == 400
    return caught.value.message


def test_edge_case_4_uppercase_hex_string_ints_enum_names_unknown_fields() -> None:
    span = {
        "traceId": TRACE,
        "spanId": SPAN,
        "parentSpanId": PARENT,
        "name": "chat",
        "kind": "SPAN_KIND_CLIENT",
        "startTimeUnixNano": "1780000000000000000",
        "endTimeUnixNano": 1780000000000000500,
        "attributes": [
            {"key": "llm.token_count.prompt", "value": {"intValue": "12"}},
            {"key": "n", "value": {"intValue": 7}},
        ],
        "status": {"code": "STATUS_CODE_ERROR", "message": "boom", "futureField": 1},
        "someFutureField": {"nested": [1, 2]},
        "events": [{"timeUnixNano": "5", "name": "e", "extra": True}],
    }
    data = {"resourceSpans": [{"resource": {"attributes": [], "new": 1}, "scopeSpans": [{"spans": [span]}]}]}

    raw = one_span(orjson.dumps(data))

    assert raw.trace_id == TRACE.lower()
    assert raw.span_id == SPAN.lower()
    assert raw.parent_span_id == PARENT.lower()
    assert raw.otel_kind == 3
    assert raw.start_ns == 1780000000000000000
    assert raw.end_ns == 1780000000000000500
    assert raw.attributes == {"llm.token_count.prompt": 12, "n": 7}
    assert raw.status_code == 2
    assert raw.status_message == "boom"
    assert raw.events[0].time_ns == 5


def test_hex_ids_are_read_as_hex_not_as_base64() -> None:
    raw = one_span(body(span_with(traceId="0" * 31 + "1", spanId="0" * 15 + "2")))

    assert raw.trace_id == "0" * 31 + "1"
    assert raw.span_id == "0" * 15 + "2"


@pytest.mark.parametrize(
    ("kind", "number"),
    [
        ("SPAN_KIND_SERVER", 2),
        ("server", 2),
        ("Span_Kind_Producer", 4),
        ("INTERNAL", 1),
        (5, 5),
        ("3", 3),
        (9, 9),
    ],
)
def test_span_kinds_by_name_any_case_or_number(kind: Any, number: int) -> None:
    assert one_span(body(span_with(kind=kind))).otel_kind == number


@pytest.mark.parametrize(("code", "number"), [("STATUS_CODE_OK", 1), ("error", 2), ("UNSET", 0), (2, 2)])
def test_status_codes_by_name_or_number(code: Any, number: int) -> None:
    assert one_span(body(span_with(status={"code": code}))).status_code == number


def test_an_unknown_enum_name_is_refused_with_the_names_it_could_be() -> None:
    assert refusal(body(span_with(kind="SPAN_KIND_SERVR"))) == (
        f'{PREFIX}{WHERE}.kind is "SPAN_KIND_SERVR", not one of SPAN_KIND_UNSPECIFIED, SPAN_KIND_INTERNAL, '
        "SPAN_KIND_SERVER, SPAN_KIND_CLIENT, SPAN_KIND_PRODUCER, SPAN_KIND_CONSUMER or a number"
    )


def test_proto_field_names_are_read_like_camel_case_ones() -> None:
    span = {"trace_id": TRACE, "span_id": SPAN, "parent_span_id": PARENT, "start_time_unix_nano": "9"}
    data = {"resource_spans": [{"scope_spans": [{"spans": [span]}]}]}

    raw = one_span(data)

    assert (raw.trace_id, raw.parent_span_id, raw.start_ns) == (TRACE.lower(), PARENT.lower(), 9)


@pytest.mark.parametrize(
    ("value", "decoded"),
    [
        ({"stringValue": "v"}, "v"),
        ({"boolValue": True}, True),
        ({"intValue": "-9223372036854775808"}, -(2**63)),
        ({"intValue": 9223372036854775807}, 2**63 - 1),
        ({"intValue": 3.0}, 3),
        ({"doubleValue": 1.5}, 1.5),
        ({"doubleValue": 2}, 2.0),
        ({"doubleValue": "Infinity"}, float("inf")),
        ({"doubleValue": "-Infinity"}, float("-inf")),
        ({"bytesValue": "AAEC/w=="}, {"$bytes": "AAEC/w=="}),
        ({"bytesValue": "AAEC_w"}, {"$bytes": "AAEC/w=="}),
        ({"arrayValue": {"values": [{"intValue": "1"}, {"stringValue": "x"}, {}]}}, [1, "x", None]),
        ({"arrayValue": {}}, []),
        ({"kvlistValue": {"values": [{"key": "a", "value": {"boolValue": False}}]}}, {"a": False}),
        ({}, None),
        ({"stringValue": None}, None),
        ({"futureValue": 1}, None),
    ],
)
def test_any_values(value: Any, decoded: Any) -> None:
    got = attribute(value)

    assert got == decoded
    assert type(got) is type(decoded)


def test_nan_doubles() -> None:
    got = attribute({"doubleValue": "NaN"})

    assert got != got


def test_an_attribute_with_no_value_is_null() -> None:
    assert one_span(body(span_with(attributes=[{"key": "k"}]))).attributes == {"k": None}


def test_attributes_sent_as_an_object_get_the_hint_naming_the_right_shape() -> None:
    assert refusal(body(span_with(attributes={"k": "v"}))) == (
        f"{PREFIX}{WHERE}.attributes must be a list of "
        '{"key": "…", "value": {"stringValue": "…"}} objects, not an object'
    )


@pytest.mark.parametrize(
    ("where", "data"),
    [
        ("resourceSpans[0].resource.attributes", {"resource": {"attributes": {"k": "v"}}}),
        ("resourceSpans[0].scopeSpans[0].scope.attributes", {"scope": {"attributes": {"k": "v"}}}),
    ],
)
def test_the_attributes_hint_holds_for_resources_and_scopes(where: str, data: dict[str, Any]) -> None:
    if "scope" in data:
        document = {"resourceSpans": [{"scopeSpans": [{"scope": data["scope"], "spans": []}]}]}
    else:
        document = {"resourceSpans": [{"resource": data["resource"]}]}

    assert refusal(document).startswith(f"{PREFIX}{where} must be a list of {{")


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        (
            [{"key": "k", "value": "v"}],
            'attributes[0].value must be an AnyValue object such as {"stringValue": "…"} '
            'or {"intValue": "1"}, not "v"',
        ),
        (
            [{"key": "k", "value": 5}],
            'attributes[0].value must be an AnyValue object such as {"stringValue": "…"} '
            'or {"intValue": "1"}, not 5',
        ),
        (["k"], 'attributes[0] must be an object {"key": …, "value": …}, not "k"'),
        ([{"key": 5, "value": {}}], "attributes[0].key must be a string, not 5"),
        (
            [{"key": "k", "value": {"stringValue": 5}}],
            "attributes[0].value.stringValue must be a string, not 5",
        ),
        (
            [{"key": "k", "value": {"boolValue": "yes"}}],
            'attributes[0].value.boolValue must be true or false, not "yes"',
        ),
        (
            [{"key": "k", "value": {"intValue": "1.5"}}],
            'attributes[0].value.intValue must be an integer, not "1.5"',
        ),
        (
            [{"key": "k", "value": {"intValue": True}}],
            "attributes[0].value.intValue must be an integer, not true",
        ),
        (
            [{"key": "k", "value": {"intValue": "9223372036854775808"}}],
            "attributes[0].value.intValue is 9223372036854775808, "
            "outside -9223372036854775808..9223372036854775807",
        ),
        (
            [{"key": "k", "value": {"doubleValue": "fast"}}],
            'attributes[0].value.doubleValue must be a number, not "fast"',
        ),
        (
            [{"key": "k", "value": {"doubleValue": "inf"}}],
            'attributes[0].value.doubleValue must be a number, not "inf"',
        ),
        ([{"key": "k", "value": {"bytesValue": "!!"}}], "attributes[0].value.bytesValue is not valid base64"),
        (
            [{"key": "k", "value": {"bytesValue": 1}}],
            "attributes[0].value.bytesValue must be a base64 string, not 1",
        ),
        (
            [{"key": "k", "value": {"stringValue": "a", "intValue": "1"}}],
            "attributes[0].value has more than one value field (stringValue, intValue)",
        ),
        (
            [{"key": "k", "value": {"arrayValue": {"values": {"a": 1}}}}],
            "attributes[0].value.arrayValue.values must be a list, not an object",
        ),
        (
            [{"key": "k", "value": {"arrayValue": {"values": ["x"]}}}],
            "attributes[0].value.arrayValue.values[0] must be an AnyValue object such as "
            '{"stringValue": "…"} or {"intValue": "1"}, not "x"',
        ),
        (
            [{"key": "k", "value": {"kvlistValue": {"values": {"a": 1}}}}],
            "attributes[0].value.kvlistValue.values must be a list of "
            '{"key": "…", "value": {"stringValue": "…"}} objects, not an object',
        ),
        ("k=v", 'attributes must be a list, not "k=v"'),
    ],
)
def test_wrong_types_in_attributes_are_refused_saying_where(attributes: Any, message: str) -> None:
    assert refusal(body(span_with(attributes=attributes))) == f"{PREFIX}{WHERE}.{message}"


@pytest.mark.parametrize(
    ("span", "message"),
    [
        ({"traceId": 5}, "traceId must be a hex string, not 5"),
        ({"name": ["x"]}, "name must be a string, not a list"),
        ({"startTimeUnixNano": "soon"}, 'startTimeUnixNano must be an integer, not "soon"'),
        ({"startTimeUnixNano": "-1"}, "startTimeUnixNano is -1, outside 0..18446744073709551615"),
        ({"droppedAttributesCount": 2**32}, "droppedAttributesCount is 4294967296, outside 0..4294967295"),
        ({"status": "ERROR"}, 'status must be an object, not "ERROR"'),
        ({"events": {}}, "events must be a list, not an object"),
        ({"events": [{"attributes": {"a": 1}}]}, "events[0].attributes must be a list of {"),
        ({"links": [{"spanId": 1}]}, "links[0].spanId must be a hex string, not 1"),
        ({"flags": "0x1"}, 'flags must be an integer, not "0x1"'),
    ],
)
def test_wrong_types_in_span_fields_are_refused_saying_where(span: dict[str, Any], message: str) -> None:
    assert refusal(body(span_with(**span))).startswith(f"{PREFIX}{WHERE}.{message}")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[]", "the top level must be an object (an ExportTraceServiceRequest), not a list"),
        ({"resourceSpans": {}}, "resourceSpans must be a list, not an object"),
        ({"resourceSpans": ["x"]}, 'resourceSpans[0] must be an object, not "x"'),
        (
            {"resourceSpans": [{"scopeSpans": [{"spans": "none"}]}]},
            'resourceSpans[0].scopeSpans[0].spans must be a list, not "none"',
        ),
        ({"resourceSpans": [{"schemaUrl": 1}]}, "resourceSpans[0].schemaUrl must be a string, not 1"),
    ],
)
def test_wrong_shapes_above_spans(data: Any, message: str) -> None:
    assert refusal(data) == f"{PREFIX}{message}"


def test_a_long_string_is_named_by_its_type() -> None:
    assert refusal(body(span_with(startTimeUnixNano="x" * 41))) == (
        f"{PREFIX}{WHERE}.startTimeUnixNano must be an integer, not a long string"
    )


def test_values_nested_too_deep_are_refused() -> None:
    value: dict[str, Any] = {"stringValue": "leaf"}
    for _ in range(40):
        value = {"arrayValue": {"values": [value]}}

    message = refusal(body(span_with(attributes=[{"key": "k", "value": value}])))

    assert message.startswith(f"{PREFIX}{WHERE}.attributes[0].value.arrayValue.values[0]")
    assert message.endswith(" is nested more than 40 values deep")


def test_values_nested_to_the_limit_are_read() -> None:
    value: dict[str, Any] = {"stringValue": "leaf"}
    expected: Any = "leaf"
    for _ in range(39):
        value = {"arrayValue": {"values": [value]}}
        expected = [expected]

    assert attribute(value) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"{", "request body is not valid JSON: unexpected end of data: line 1 column 2 (char 1)"),
        ("[1,]", "request body is not valid JSON: trailing comma is not allowed: line 1 column 3 (char 2)"),
        (
            b"",
            "request body is not valid JSON: "
            "Input is a zero-length, empty document: line 1 column 1 (char 0)",
        ),
    ],
)
def test_text_that_is_not_json(text: bytes | str, message: str) -> None:
    assert refusal(text) == message


def test_the_callers_document_is_not_changed() -> None:
    data = body(span_with(attributes=[{"key": "k", "value": {"stringValue": "v"}}]))
    before = copy.deepcopy(data)

    parse_json(data)

    assert data == before
