"""What the tests of both Orq clients (the Python orq-ai-sdk and @orq-ai/node) set up over plain HTTP
before running the annotation-queues document's examples, and how they read back what was saved:
neither client has a call for human review definitions, runs or evaluator results, and both drop the
`annotations` and `evaluations` a span's summary carries."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import ADMIN_TOKEN
from tests.liveserver import LiveServer
from tests.samples import make_run

# The human reviews the document's examples name.
DEFINITIONS: list[dict[str, Any]] = [
    {"key": "rating", "display_name": "Rating", "type": "categorical", "options": ["good", "bad"]},
    {
        "key": "defects",
        "display_name": "Defects",
        "type": "categorical",
        "options": ["grammatical", "spelling", "ambiguity", "hallucination"],
        "multiple": True,
    },
    {"key": "confidence_score", "display_name": "Confidence", "type": "range", "min": 0, "max": 1},
    {"key": "correction", "display_name": "Correction", "type": "text"},
    {
        "key": "categories",
        "display_name": "Categories",
        "type": "categorical",
        "options": ["helpful", "accurate", "concise"],
        "multiple": True,
    },
]
# The examples annotate `llm`. The root span has no status, provider, model, usage or end: a client that
# refuses null must meet none of them.
SPANS = [
    {"spanId": "root", "kind": "agent", "name": "support-agent", "startedAt": "2026-11-01T10:00:00Z"},
    {
        "spanId": "llm",
        "parentSpanId": "root",
        "kind": "chat_completion",
        "name": "answer",
        "attributes": {"provider": "anthropic", "model": "claude-haiku-4-5"},
        "startedAt": "2026-11-01T10:00:01Z",
        "endedAt": "2026-11-01T10:00:02Z",
    },
]


def admin_http(live_server: LiveServer) -> httpx.Client:
    """Plain HTTP as the first-start admin."""
    return httpx.Client(
        base_url=live_server.url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=10
    )


def define_reviews(http: httpx.Client) -> dict[str, str]:
    """The document's human reviews in the admin's project: each key with its id."""
    made = {}
    for definition in DEFINITIONS:
        answer = http.post("/v2/human-reviews", json=definition)
        assert answer.status_code == 200, answer.text
        made[definition["key"]] = answer.json()["_id"]
    return made


def document_trace(http: httpx.Client, project_id: str) -> str:
    """A run with the two spans, started on 1 November 2026: its id."""
    run = make_run(project_id, spans=SPANS, title="Refund for 1182", startedAt="2026-11-01T10:00:00Z")
    answer = http.post("/v1/runs", json=run)
    assert answer.status_code == 201, answer.text
    made: str = answer.json()["id"]
    return made


def evaluator_result(http: httpx.Client, trace_id: str) -> str:
    """A boolean evaluator's result (True) on `llm`, for "Correct an Evaluator Result": its id."""
    recorded = http.post(
        f"/v2/traces/{trace_id}/spans/llm/evaluations",
        json={"evaluator": "disclaimer_present", "output_type": "boolean", "value": True},
    )
    assert recorded.status_code == 200, recorded.text
    made: str = recorded.json()["_id"]
    return made


def span_summary(http: httpx.Client, trace_id: str, span_id: str = "llm") -> dict[str, Any]:
    """A span's summary as the server sends it, with what was said about it."""
    answer = http.get(f"/v3/traces/{trace_id}/spans/{span_id}")
    assert answer.status_code == 200, answer.text
    summary: dict[str, Any] = answer.json()["span"]["summary"]
    return summary


def span_values(http: httpx.Client, trace_id: str, span_id: str = "llm") -> dict[str, Any]:
    """The values on a span, key by key."""
    return {item["key"]: item["value"] for item in span_summary(http, trace_id, span_id)["annotations"]}
