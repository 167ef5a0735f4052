"""The real orq-ai-sdk against a live server, with only the host and the key changed: every example of
annotation-queues.txt's API & SDK tab, its refusals, and the /v3 trace reads (wire-clients.md §1.3, §1.7).

What the SDK writes is what everyone reads: the values show on the rm surface's trace read too, through
the stashai client.

The client is typed `Any` where the document's examples are run as written: the SDK types `annotations`
as unions of TypedDict unions, which mypy can't match a plain list literal against.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from cli.client import StashClient
from orq_ai_sdk import Orq, models

from tests import orqseed
from tests.liveserver import LiveServer


@pytest.fixture
def http(live_server: LiveServer) -> Iterator[httpx.Client]:
    """Plain HTTP for what the SDK has no method for: runs, definitions, evaluator results."""
    with orqseed.admin_http(live_server) as client:
        yield client


@pytest.fixture
def trace_id(http: httpx.Client, live_server: LiveServer) -> str:
    orqseed.define_reviews(http)
    return orqseed.document_trace(http, live_server.project_id)


def test_the_documents_examples_work_as_written(orq: Any, trace_id: str, http: httpx.Client) -> None:
    # Add a Quality Rating
    result = orq.annotations.create(
        trace_id=trace_id, span_id="llm", annotations=[{"key": "rating", "value": "good"}]
    )
    assert result is None
    # Add Multiple Defects
    orq.annotations.create(
        trace_id=trace_id,
        span_id="llm",
        annotations=[{"key": "defects", "value": ["grammatical", "spelling", "ambiguity"]}],
    )
    # Add a Numeric Score (the SDK drops identityId: it knows only identity_id, and sends `{}`)
    orq.annotations.create(
        trace_id=trace_id,
        span_id="llm",
        annotations=[{"key": "confidence_score", "value": 0.95}],
        metadata={"identityId": "user-123"},
    )
    # Add a Text Correction
    text = "The correct answer should emphasize scalability and fault tolerance."
    orq.annotations.create(
        trace_id=trace_id, span_id="llm", annotations=[{"key": "correction", "value": text}]
    )
    assert orqseed.span_values(http, trace_id) == {
        "rating": "good",
        "defects": ["grammatical", "spelling", "ambiguity"],
        "confidence_score": 0.95,
        "correction": text,
    }

    # Batch Add Multiple Annotations: the rating and score replace the caller's own earlier ones.
    orq.annotations.create(
        trace_id=trace_id,
        span_id="llm",
        annotations=[
            {"key": "rating", "value": "good"},
            {"key": "confidence_score", "value": 0.92},
            {"key": "categories", "value": ["helpful", "accurate", "concise"]},
        ],
    )
    values = orqseed.span_values(http, trace_id)
    assert (values["confidence_score"], values["categories"]) == (0.92, ["helpful", "accurate", "concise"])

    # Remove Annotations
    assert orq.annotations.delete(trace_id=trace_id, span_id="llm", keys=["rating", "defects"]) is None
    assert set(orqseed.span_values(http, trace_id)) == {"confidence_score", "correction", "categories"}


def test_identity_ids_the_sdk_sends_are_kept(orq: Any, trace_id: str, http: httpx.Client) -> None:
    for identity in ("user-1", "user-2"):
        orq.annotations.create(
            trace_id=trace_id,
            span_id="llm",
            annotations=[{"key": "rating", "value": "bad"}],
            metadata={"identity_id": identity},
        )
    orq.annotations.delete(
        trace_id=trace_id, span_id="llm", keys=["rating"], metadata={"identity_id": "user-1"}
    )
    said = orqseed.span_summary(http, trace_id)["annotations"]
    assert [item["metadata"] for item in said] == [{"identity_id": "user-2"}]


def test_correct_an_evaluator_result(orq: Any, trace_id: str, http: httpx.Client) -> None:
    evaluator_annotation_id = orqseed.evaluator_result(http, trace_id)
    orq.annotations.create(
        trace_id=trace_id,
        span_id="llm",
        annotations=[
            {
                "parent_annotation_id": evaluator_annotation_id,
                "value": False,
                "explanation": "The response omitted a required disclaimer.",
            }
        ],
    )
    [evaluation] = orqseed.span_summary(http, trace_id)["evaluations"]
    assert evaluation["value"] is True
    assert [(c["value"], c["explanation"]) for c in evaluation["corrections"]] == [
        (False, "The response omitted a required disclaimer.")
    ]
    with pytest.raises(models.APIDefaultError) as wrong_type:
        orq.annotations.create(
            trace_id=trace_id,
            span_id="llm",
            annotations=[{"parent_annotation_id": evaluator_annotation_id, "value": "no"}],
        )
    assert wrong_type.value.status_code == 400
    assert json.loads(wrong_type.value.body)["message"] == (
        'The evaluator "disclaimer_present" gives boolean results: a correction of it must be true or false, '
        "like the result it corrects."
    )
    orq.annotations.delete(trace_id=trace_id, span_id="llm", parent_annotation_ids=[evaluator_annotation_id])
    assert orqseed.span_summary(http, trace_id)["evaluations"][0]["corrections"] == []


@pytest.mark.parametrize(
    ("annotation", "span_id", "status", "sentence"),
    [
        (
            {"key": "stars", "value": "good"},
            "llm",
            404,
            'The human review with key "stars" for workspace {ws} was not found.',
        ),
        (
            {"key": "rating", "value": "good"},
            "xyz789",
            404,
            "Span with id xyz789 for workspace {ws} was not found.",
        ),
        (
            {"key": "rating", "value": "poor"},
            "llm",
            400,
            "Invalid value: poor. Valid options are: good, bad.",
        ),
        ({"key": "confidence_score", "value": 15}, "llm", 400, "Value 15 is out of range [0, 1]."),
        (
            {"key": "correction", "value": "x" * 201},
            "llm",
            400,
            "String value exceeds maximum length of 200 characters.",
        ),
    ],
)
def test_refusals_reach_the_sdk_with_the_documents_sentences(
    orq: Any,
    trace_id: str,
    http: httpx.Client,
    annotation: dict[str, Any],
    span_id: str,
    status: int,
    sentence: str,
) -> None:
    workspace = http.get("/v1/me").json()["workspaceId"]
    with pytest.raises(models.APIDefaultError) as refused:
        orq.annotations.create(trace_id=trace_id, span_id=span_id, annotations=[annotation])
    assert refused.value.status_code == status
    assert json.loads(refused.value.body) == {
        "message": sentence.format(ws=workspace),
        "code": status,
    }


def test_traces_are_read_and_searched(orq: Any, trace_id: str, http: httpx.Client) -> None:
    orq.annotations.create(trace_id=trace_id, span_id="llm", annotations=[{"key": "rating", "value": "good"}])
    got = orq.traces.get(trace_id=trace_id)
    assert got.trace is not None
    assert (got.trace.trace_id, got.trace.root_span_id, got.trace.name) == (
        trace_id,
        "root",
        "Refund for 1182",
    )
    assert got.trace.agent is not None
    assert got.trace.agent.name == "support-agent"
    assert got.trace.started_at == datetime(2026, 11, 1, 10, tzinfo=UTC)

    spans = orq.traces.list_spans(trace_id=trace_id, limit=1)
    assert spans.data is not None
    assert [span.span_id for span in spans.data] == ["root"]
    assert spans.has_more is True
    rest = orq.traces.list_spans(trace_id=trace_id, page_token=spans.next_page_token)
    assert rest.data is not None
    assert [(s.span_id, s.model, s.level) for s in rest.data] == [("llm", "claude-haiku-4-5", 1)]
    span = orq.traces.get_span(trace_id=trace_id, span_id="llm")
    assert span.span is not None
    assert span.span.summary is not None
    assert span.span.summary.type == "span.chat_completion"

    found = orq.traces.search(
        from_=datetime(2026, 11, 1, tzinfo=UTC),
        to=datetime(2026, 11, 2, tzinfo=UTC),
        filters=[{"field": "agent.name", "op": "eq", "values": ["support-agent"]}],
    )
    assert found.data is not None
    assert [trace.trace_id for trace in found.data] == [trace_id]
    window = {"from": "2026-11-01T00:00:00Z", "to": "2026-11-02T00:00:00Z"}
    [summary] = http.post("/v3/traces/search", json=window).json()["data"]
    assert [item["value"] for item in summary["annotations"]] == ["good"]
    none = orq.traces.search(from_=datetime(2026, 10, 1, tzinfo=UTC), to=datetime(2026, 10, 2, tzinfo=UTC))
    assert (none.data, none.has_more) == ([], False)


def test_an_unknown_trace_is_the_sdks_error_response(orq: Orq, trace_id: str) -> None:
    missing = "00000000-0000-4000-8000-000000000000"
    with pytest.raises(models.ErrorResponse) as absent:
        orq.traces.get(trace_id=missing)
    assert absent.value.status_code == 404
    assert absent.value.data.message.startswith(f"Trace with id {missing} for workspace")
    assert absent.value.data.code == 404
    with pytest.raises(models.ErrorResponse) as no_span:
        orq.traces.get_span(trace_id=trace_id, span_id="nope")
    assert no_span.value.data.message.startswith("Span with id nope for workspace")


def test_values_written_through_the_sdk_show_on_the_rm_trace_read(
    orq: Any, trace_id: str, stash: StashClient
) -> None:
    orq.annotations.create(
        trace_id=trace_id,
        span_id="llm",
        annotations=[{"key": "rating", "value": "bad"}, {"key": "defects", "value": ["hallucination"]}],
        metadata={"identity_id": "user-123"},
    )
    trace = stash._get(f"/api/v1/rm/traces/{trace_id}")
    said = {item["key"]: item for item in trace["annotations"]}
    assert said["rating"]["value"] == "bad"
    assert said["defects"]["value"] == ["hallucination"]
    assert said["rating"]["span_id"] == "llm"
    assert said["rating"]["metadata"] == {"identity_id": "user-123"}
    assert said["rating"]["author_name"] == "admin"
    assert (trace["positive_count"], trace["negative_count"]) == (0, 0)
