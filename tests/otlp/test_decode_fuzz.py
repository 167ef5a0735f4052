"""Whatever a client sends, the decoder answers with spans or a 400, never a 500 (which an exporter
takes as final, dropping the batch)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.errors import Invalid, RedlineError, TooLarge
from redline.surfaces.otlp import wire
from redline.traces.otlp.decode import (
    OtlpUnreadable,
    parse_json,
    parse_protobuf,
    read_spans,
    refusal_when_all_rejected,
)
from tests.otlp import payloads
from tests.otlp.builders import raw_spans

SPANS = raw_spans(
    [
        {"span": "A", "parent": None, "attributes": {"k": "v", "n": 1, "l": [1.5, {"x": True}]}},
        {"span": "B", "parent": "A", "events": [{"name": "e", "attributes": {"a": "b"}}]},
    ]
)
VALID = payloads.export_request(SPANS).SerializeToString()
VALID_JSON = payloads.export_json(payloads.export_request(SPANS))

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=12), children, max_size=3)
    ),
    max_leaves=10,
)


def read_or_refuse(parse: Any, body: Any) -> None:
    refused: OtlpUnreadable | None = None
    try:
        request = parse(body)
    except OtlpUnreadable as error:
        refused = error
    if refused is not None:
        assert refused.status == 400
        assert refused.message.startswith("request body is not ")
        return
    batch = read_spans(request, max_span_bytes=1 << 16)
    assert batch.span_count == len(batch.spans) + len(batch.rejected)
    refusal_when_all_rejected(batch)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_as_protobuf(body: bytes) -> None:
    read_or_refuse(parse_protobuf, body)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_valid_export_with_bytes_changed(data: st.DataObject) -> None:
    body = bytearray(VALID)
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(body) - 1))
        body[position] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(body)))

    read_or_refuse(parse_protobuf, bytes(body[:cut]))


def paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON document a value sits."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(paths(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(paths(item, (*path, index)))
    return found


PLACES = paths(VALID_JSON)[1:]


@settings(max_examples=400, deadline=None)
@given(place=st.sampled_from(PLACES), value=JSON_VALUES)
def test_a_valid_json_export_with_any_value_anywhere(place: tuple[Any, ...], value: Any) -> None:
    document = json.loads(json.dumps(VALID_JSON))
    target = document
    for step in place[:-1]:
        target = target[step]
    target[place[-1]] = value

    read_or_refuse(parse_json, json.dumps(document).encode())
    read_or_refuse(parse_json, document)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_any_json_document(value: Any) -> None:
    read_or_refuse(parse_json, json.dumps(value).encode())


def test_a_lone_surrogate_in_a_parsed_document_is_a_400() -> None:
    document = json.loads(json.dumps(VALID_JSON))
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"] = "\ud800"

    with pytest.raises(OtlpUnreadable) as caught:
        parse_json(document)

    assert caught.value.message == (
        "request body is not valid OTLP JSON: a string holds a lone surrogate, which is not Unicode text"
    )


def test_an_integer_too_large_for_a_double_is_a_400() -> None:
    document = {
        "resourceSpans": [{"resource": {"attributes": [{"key": "k", "value": {"doubleValue": 10**400}}]}}]
    }

    with pytest.raises(OtlpUnreadable) as caught:
        parse_json(document)

    assert caught.value.message == (
        "request body is not valid OTLP JSON: "
        "resourceSpans[0].resource.attributes[0].value.doubleValue is an integer too large for a double"
    )


GZIPPED = payloads.gzipped(VALID)


@settings(max_examples=300, deadline=None)
@given(
    encoding=st.sampled_from(["gzip", "deflate"]),
    body=st.binary(max_size=200) | st.binary(max_size=40).map(lambda tail: GZIPPED[:-20] + tail),
    chunk=st.integers(1, 64),
)
def test_any_bytes_as_a_compressed_body(encoding: Any, body: bytes, chunk: int) -> None:
    refused: RedlineError | None = None
    try:
        wire.read_body([body[i : i + chunk] for i in range(0, len(body), chunk)], encoding, 1 << 12)
    except (Invalid, TooLarge) as error:
        refused = error
    if refused is not None:
        assert refused.message in (
            f"request body is not valid {encoding}",
            "request body is over the 4 KiB limit once decompressed (REDLINE_OTLP_MAX_BODY_BYTES)",
        )
