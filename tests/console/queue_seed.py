"""Data the queue, review-screen and dataset tests share, seeded over the reviews surface as its clients
would (plain HTTP with the admin's token): human reviews, traces with an LLM span, a queue holding them,
evaluator results and datasets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from tests.conftest import ADMIN_TOKEN, Harness
from tests.samples import make_run

DEFINITIONS: list[dict[str, Any]] = [
    {"key": "rating", "display_name": "Rating", "type": "categorical", "options": ["good", "bad"]},
    {
        "key": "defects",
        "display_name": "Defects",
        "type": "categorical",
        "options": ["grammatical", "spelling", "hallucination"],
        "multiple": True,
    },
    {"key": "helpfulness", "display_name": "Helpfulness", "type": "range", "min": 0, "max": 10},
    {"key": "note", "display_name": "Note", "type": "text"},
]
LLM_SPAN_ATTRIBUTES = {
    "provider": "anthropic",
    "model": "claude-haiku-4-5",
    "temperature": 0.2,
    "usage": {"prompt_tokens": 812, "completion_tokens": 64},
}


def spans() -> list[dict[str, Any]]:
    return [
        {"spanId": "root", "kind": "agent", "name": "support-agent", "startedAt": "2026-11-01T10:00:00Z"},
        {
            "spanId": "llm",
            "parentSpanId": "root",
            "kind": "chat_completion",
            "name": "answer",
            "attributes": dict(LLM_SPAN_ATTRIBUTES),
            "startedAt": "2026-11-01T10:00:01Z",
            "endedAt": "2026-11-01T10:00:02.250Z",
        },
    ]


@dataclass
class Seeded:
    queue_id: str
    trace_ids: list[str]
    item_ids: list[str]
    key_ids: dict[str, str]


def reviews_http(url: str, token: str = ADMIN_TOKEN) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=10)


class Authorized:
    """A TestClient's get/post/patch with the admin's token on each call, so the same seeding helpers
    run in-process without touching the client's own headers (its console session stays as it is)."""

    def __init__(self, client: Any, headers: dict[str, str]) -> None:
        self.client, self.headers = client, headers

    def get(self, path: str, **options: Any) -> Any:
        return self.client.get(path, headers=self.headers, **options)

    def post(self, path: str, **options: Any) -> Any:
        return self.client.post(path, headers=self.headers, **options)

    def patch(self, path: str, **options: Any) -> Any:
        return self.client.patch(path, headers=self.headers, **options)


def ok(answer: Any) -> Any:
    assert answer.status_code in (200, 201), answer.text
    return answer.json() if answer.content else None


def post_ok(http: Any, path: str, body: Any) -> Any:
    """POST `body` as JSON and the answer's body, which must be a success."""
    return ok(http.post(path, json=body))


def define_reviews(http: Any, project_id: str) -> dict[str, str]:
    return {
        definition["key"]: post_ok(http, "/v2/human-reviews", {**definition, "project_id": project_id})["_id"]
        for definition in DEFINITIONS
    }


def add_traces(http: Any, project_id: str, count: int, **fields: Any) -> list[str]:
    """`count` refund traces with an LLM span; `fields` laid over each (other steps, say)."""
    made = []
    for number in range(1, count + 1):
        run = make_run(
            project_id,
            title=f"Refund for order {1180 + number}",
            externalId=f"ticket-{number}",
            startedAt="2026-11-01T10:00:00Z",
            endedAt="2026-11-01T10:00:03.500Z",
            spans=spans(),
            **fields,
        )
        made.append(post_ok(http, "/v1/runs", run)["id"])
    return made


def seed_queue(
    http: Any, project_id: str, *, traces: int = 3, name: str = "Refund review", **fields: Any
) -> Seeded:
    """Human reviews, `traces` traces (`fields` laid over each) and a queue reviewed with every review,
    holding the traces."""
    keys = define_reviews(http, project_id)
    trace_ids = add_traces(http, project_id, traces, **fields)
    queue = post_ok(
        http,
        "/v2/annotation-queues",
        {"display_name": name, "description": "Refunds the agent handled", "project_id": project_id},
    )
    ok(http.patch(f"/v2/annotation-queues/{queue['_id']}", json={"human_review_ids": list(keys.values())}))
    items = post_ok(
        http,
        f"/v2/annotation-queues/{queue['_id']}/items",
        {"items": [{"trace_id": ident, "span_id": ident} for ident in trace_ids]},
    )
    return Seeded(queue["_id"], trace_ids, [item["_id"] for item in items], keys)


def seed_in_app(harness: Harness, traces: int = 1) -> Seeded:
    """`seed_queue` in the harness's app, with the admin's token on each call (no browser, no server)."""
    return seed_queue(Authorized(harness.client, harness.admin), harness.project_id, traces=traces)


def trace_values(http: Any, trace_id: str) -> dict[str, Any]:
    """The review values on the trace itself, as the /v3 read shows them to every client."""
    summary = ok(http.get(f"/v3/traces/{trace_id}"))
    found = summary.get("trace", summary)
    return {said["key"]: said["value"] for said in found["annotations"]}
