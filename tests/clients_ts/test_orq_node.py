"""@orq-ai/node (npm, pinned in package.json) against a live server, on both stores: every example of
annotation-queues.txt's TypeScript tab and its refusals, annotation queues and their items, datasets and
datapoints, and the /v3 trace reads, through orq_node.mjs (tests/clients_ts/nodeclients.py runs it).

The client validates every answer against its own zod schemas, which refuse a `null` wherever a field is
merely optional, so each call here that returns proves the wire for it; a refusal must reach the caller
as the client's own error class (`APIError`, or `HonoApiError` for a dataset's 404) with the document's
sentence, never as its `ResponseValidationError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import orqseed
from tests.clients_ts import nodeclients
from tests.conftest import ADMIN_TOKEN
from tests.doccommands import fenced_blocks
from tests.liveserver import LiveServer
from tests.samples import REFUND_STEPS, make_run

pytestmark = pytest.mark.usefixtures("ts_clients")

SCRIPT = "orq_node.mjs"
CLIENTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
DOC_SECTION = "## `@orq-ai/node`"
# A tool result that names no call (after REFUND_STEPS's lookup_order call and its result).
NO_CALL = {"role": "tool", "content": "No courier note."}
TEXT = "The correct answer should emphasize scalability and fault tolerance."
DISCLAIMER = "The response omitted a required disclaimer."
EMPTY_CREATE = 'The body is empty: send the annotations as {"annotations": [...]}.'


@pytest.fixture
def http(live_server: LiveServer) -> Iterator[httpx.Client]:
    """Plain HTTP for what the client has no call for: runs, review definitions, evaluator results."""
    with orqseed.admin_http(live_server) as client:
        yield client


@pytest.fixture
def definitions(http: httpx.Client) -> dict[str, str]:
    return orqseed.define_reviews(http)


@pytest.fixture
def trace_id(http: httpx.Client, live_server: LiveServer, definitions: dict[str, str]) -> str:
    return orqseed.document_trace(http, live_server.project_id)


def _orq(live_server: LiveServer, scenario: str, **ids: Any) -> dict[str, Any]:
    environment = {"REDLINE_URL": live_server.url, "ORQ_API_KEY": ADMIN_TOKEN}
    return nodeclients.run_script(SCRIPT, scenario, ids, environment)


def _ok(results: dict[str, Any], name: str) -> Any:
    """What call `name` returned; a failure showing what it raised when it raised."""
    assert "ok" in results[name], f"{name}: {results[name]}"
    return results[name]["ok"]


def _refused(results: dict[str, Any], name: str, status: int) -> dict[str, Any]:
    """The error call `name` raised: the client's APIError with the status and Redline's JSON body."""
    assert "error" in results[name], f"{name} did not raise: {results[name]}"
    error: dict[str, Any] = results[name]["error"]
    assert (error["class"], error["orqError"], error["statusCode"]) == ("APIError", True, status), error
    return error


def test_the_typescript_tabs_examples_as_written_send_no_body(
    live_server: LiveServer, trace_id: str, http: httpx.Client
) -> None:
    """The tab passes `annotations` and `keys` beside traceId; the client takes them only under
    `requestBody` and sends no body. Redline says so rather than answering 200 for nothing."""
    evaluation_id = orqseed.evaluator_result(http, trace_id)
    results = _orq(
        live_server,
        "annotationsAsWritten",
        traceId=trace_id,
        spanId="llm",
        evaluatorAnnotationId=evaluation_id,
    )
    for name in ("rating", "defects", "score", "text", "evaluator", "batch"):
        error = _refused(results, name, 400)
        assert json.loads(error["body"]) == {"message": EMPTY_CREATE, "code": 400}
    removal = _refused(results, "remove", 400)
    assert json.loads(removal["body"])["message"] == (
        'The body is empty: name what to remove as {"keys": [...]} or {"parent_annotation_ids": [...]}.'
    )
    assert orqseed.span_summary(http, trace_id)["annotations"] == []


def test_every_example_of_the_typescript_tab(
    live_server: LiveServer, trace_id: str, http: httpx.Client
) -> None:
    evaluation_id = orqseed.evaluator_result(http, trace_id)
    ids = {"traceId": trace_id, "spanId": "llm", "evaluatorAnnotationId": evaluation_id}
    examples = ["rating", "defects", "score", "text", "evaluator"]
    results = _orq(live_server, "annotations", examples=examples, **ids)
    assert [_ok(results, name) for name in examples] == [None] * len(examples)
    said = orqseed.span_summary(http, trace_id)
    assert {item["key"]: item["value"] for item in said["annotations"]} == {
        "rating": "good",
        "defects": ["grammatical", "spelling", "ambiguity"],
        "confidence_score": 0.95,
        "correction": TEXT,
    }
    # Unlike the Python SDK, this client keeps the example's identityId: it sends it as identity_id.
    [score] = [item for item in said["annotations"] if item["key"] == "confidence_score"]
    assert score["metadata"] == {"identity_id": "user-123"}
    [evaluation] = said["evaluations"]
    assert [(c["value"], c["explanation"]) for c in evaluation["corrections"]] == [(False, DISCLAIMER)]

    # Batch Add Multiple Annotations (the rating and score replace the caller's own earlier ones), then
    # Remove Annotations and the correction of the evaluator's result.
    results = _orq(live_server, "annotations", examples=["batch"], remove=True, **ids)
    assert [_ok(results, name) for name in ("batch", "remove", "removeCorrection")] == [None, None, None]
    said = orqseed.span_summary(http, trace_id)
    assert {item["key"]: item["value"] for item in said["annotations"]} == {
        "confidence_score": 0.92,
        "correction": TEXT,
        "categories": ["helpful", "accurate", "concise"],
    }
    assert said["evaluations"][0]["corrections"] == []


def test_the_documents_refusals_are_the_clients_api_errors(
    live_server: LiveServer, trace_id: str, http: httpx.Client
) -> None:
    workspace = http.get("/v1/me").json()["workspaceId"]
    refusals = {
        "noReview": [{"key": "stars", "value": "good"}, "llm"],
        "noSpan": [{"key": "rating", "value": "good"}, "xyz789"],
        "badOption": [{"key": "rating", "value": "poor"}, "llm"],
        "outOfRange": [{"key": "confidence_score", "value": 15}, "llm"],
        "tooLong": [{"key": "correction", "value": "x" * 201}, "llm"],
    }
    results = _orq(live_server, "refusals", traceId=trace_id, refusals=refusals)
    expected = {
        "noReview": (404, f'The human review with key "stars" for workspace {workspace} was not found.'),
        "noSpan": (404, f"Span with id xyz789 for workspace {workspace} was not found."),
        "badOption": (400, "Invalid value: poor. Valid options are: good, bad."),
        "outOfRange": (400, "Value 15 is out of range [0, 1]."),
        "tooLong": (400, "String value exceeds maximum length of 200 characters."),
    }
    for name, (status, sentence) in expected.items():
        error = _refused(results, name, status)
        assert json.loads(error["body"]) == {"message": sentence, "code": status}


def test_annotation_queues_and_their_items(
    live_server: LiveServer, trace_id: str, definitions: dict[str, str]
) -> None:
    review_ids = [definitions["rating"], definitions["defects"]]
    results = _orq(
        live_server,
        "queues",
        projectId=live_server.project_id,
        traceId=trace_id,
        spanId="llm",
        humanReviewIds=review_ids,
    )
    queue = _ok(results, "create")
    assert (queue["displayName"], queue["projectId"], queue["metadata"], queue["humanReviewIds"]) == (
        "Support quality",
        live_server.project_id,
        {"itemsCount": 0},
        [],
    )
    assert _ok(results, "retrieve")["id"] == queue["id"]
    changed = _ok(results, "update")
    assert (changed["description"], changed["humanReviewIds"]) == ("Q3 scope", review_ids)
    other = _ok(results, "createOther")
    first = _ok(results, "list")
    assert ([q["id"] for q in first["data"]], first["hasMore"]) == ([other["id"]], True)
    assert [q["id"] for q in _ok(results, "listAfter")["data"]] == [queue["id"]]
    assert [q["id"] for q in _ok(results, "listBefore")["data"]] == [other["id"]]
    assert [q["id"] for q in _ok(results, "search")["data"]] == [queue["id"]]

    added = _ok(results, "addItems")
    assert [(i["type"], i["spanId"], i["traceId"]) for i in added] == [
        ("span", "llm", trace_id),
        ("span", trace_id, trace_id),
    ]
    assert [i["id"] for i in _ok(results, "addAgain")] == [added[0]["id"]]
    assert _ok(results, "counted")["metadata"] == {"itemsCount": 2}
    page = _ok(results, "listItems")
    assert ([i["id"] for i in page["data"]], page["hasMore"]) == ([added[0]["id"]], True)
    assert [i["id"] for i in _ok(results, "listItemsAfter")["data"]] == [added[1]["id"]]
    assert _ok(results, "retrieveItem") == {}  # the client's model of one item has no fields
    assert _ok(results, "removeItems") is None
    assert [i["id"] for i in _ok(results, "afterRemove")["data"]] == [added[1]["id"]]
    assert _ok(results, "clear") is None
    assert _ok(results, "afterClear")["data"] == []
    assert _ok(results, "delete") is None
    gone = _refused(results, "deleted", 404)
    assert json.loads(gone["body"])["message"].startswith(f"Annotation queue with id {queue['id']}")
    unknown = _refused(results, "unknownSpan", 404)
    assert json.loads(unknown["body"])["message"].startswith("Span with id xyz789 for workspace")


def _dataset_from_trace(http: httpx.Client, live_server: LiveServer) -> str:
    """A dataset holding what the review screen's "Add to dataset" makes of a trace with a tool call: its
    result names the tool it answers, as the demo's runs and the importers store it, and a second result
    names no call at all (its message's tool_call_id is null, which the client's model allows)."""
    call, answer = REFUND_STEPS[2:4]
    steps = [*REFUND_STEPS[:3], {**answer, "toolName": call["toolName"]}, NO_CALL, REFUND_STEPS[4]]
    run = http.post("/v1/runs", json=make_run(live_server.project_id, steps=steps, output="Delivered."))
    assert run.status_code == 201, run.text
    dataset = http.post("/v2/datasets", json={"display_name": "from the queue"}).json()
    queue = http.post(
        "/v2/annotation-queues",
        json={"display_name": "q", "description": "", "project_id": live_server.project_id},
    ).json()
    trace = run.json()["id"]
    [item] = http.post(
        f"/v2/annotation-queues/{queue['_id']}/items", json={"items": [{"trace_id": trace, "span_id": trace}]}
    ).json()
    made = http.post(
        f"/v2/annotation-queues/{queue['_id']}/items/{item['_id']}/add-to-dataset",
        json={"dataset_id": dataset["_id"]},
    )
    assert made.status_code == 200, made.text
    dataset_id: str = dataset["_id"]
    return dataset_id


def test_datasets_and_datapoints(live_server: LiveServer, http: httpx.Client) -> None:
    from_trace = _dataset_from_trace(http, live_server)
    results = _orq(live_server, "datasets", projectId=live_server.project_id, fromTraceDatasetId=from_trace)
    dataset = _ok(results, "create")
    assert (dataset["projectId"], dataset["metadata"]) == (
        live_server.project_id,
        {"totalVersions": 0, "datapointsCount": 0},
    )
    assert _ok(results, "retrieve")["displayName"] == "support_quality_eval"
    assert _ok(results, "update")["displayName"] == "renamed"
    assert dataset["id"] in [d["id"] for d in _ok(results, "list")["data"]]
    assert dataset["id"] in [d["id"] for d in _ok(results, "listInProject")["data"]]

    made = _ok(results, "createDatapoint")
    assert [(p.get("inputs"), p.get("messages"), p.get("expectedOutput")) for p in made] == [
        ({"q": "refund?"}, None, "yes"),
        (None, [{"role": "user", "content": "hi"}], None),
    ]
    page = _ok(results, "listDatapoints")
    assert ([p["id"] for p in page["data"]], page["hasMore"]) == ([made[1]["id"]], True)
    assert [p["id"] for p in _ok(results, "listDatapointsAfter")["data"]] == [made[0]["id"]]
    assert _ok(results, "retrieveDatapoint")["inputs"] == {"q": "refund?"}
    assert _ok(results, "updateDatapoint")["expectedOutput"] == "no"
    assert _ok(results, "deleteDatapoint") is None
    assert [p["id"] for p in _ok(results, "afterDelete")["data"]] == [made[1]["id"]]
    assert _ok(results, "counted")["metadata"]["datapointsCount"] == 1
    assert _ok(results, "clear") is None
    assert _ok(results, "afterClear")["data"] == []
    assert _ok(results, "delete") is None
    # A dataset's 404 is the client's HonoApiError: the sentence as its message, the status as its code.
    for name in ("deleted", "deletedDatapoints"):
        error = results[name]["error"]
        assert (error["class"], error["orqError"], error["statusCode"], error["code"]) == (
            "HonoApiError",
            True,
            404,
            "404",
        ), error
        assert error["message"].startswith(f"Dataset with id {dataset['id']}")

    [point] = _ok(results, "fromTrace")["data"]
    assert point["messages"] == [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": "I want a refund for order 1182"},
        {
            "role": "assistant",
            "content": "",
            "toolCalls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup_order", "arguments": '{"order_id":"1182"}'},
                }
            ],
        },
        {"role": "tool", "content": '{"status": "delivered"}', "toolCallId": "call_1"},
        {"role": "tool", "content": "No courier note.", "toolCallId": None},
    ]
    assert point["expectedOutput"] == "Delivered."


def test_traces_and_spans(live_server: LiveServer, trace_id: str, http: httpx.Client) -> None:
    missing = "00000000-0000-4000-8000-000000000000"
    results = _orq(live_server, "traces", traceId=trace_id, spanId="llm", missingTraceId=missing)
    trace = _ok(results, "get")["trace"]
    assert (trace["traceId"], trace["rootSpanId"], trace["name"], trace["agent"]["name"]) == (
        trace_id,
        "root",
        "Refund for 1182",
        "support-agent",
    )
    assert trace["startedAt"] == "2026-11-01T10:00:00.000Z"
    first = _ok(results, "listSpans")
    assert ([s["spanId"] for s in first["data"]], first["hasMore"]) == (["root"], True)
    rest = _ok(results, "listSpansNext")
    assert [(s["spanId"], s["model"], s["level"]) for s in rest["data"]] == [("llm", "claude-haiku-4-5", 1)]
    assert "nextPageToken" not in rest
    span = _ok(results, "getSpan")["span"]
    assert (span["summary"]["type"], span["summary"]["provider"]) == ("span.chat_completion", "anthropic")
    root = _ok(results, "getRootSpan")["span"]["summary"]
    assert (root["spanId"], root["type"]) == ("root", "span.agent")
    assert not {"status", "provider", "model", "usage", "endedAt", "durationMs"} & set(root)
    assert [t["traceId"] for t in _ok(results, "search")["data"]] == [trace_id]
    assert (_ok(results, "searchNothing")["data"], _ok(results, "searchNothing")["hasMore"]) == ([], False)
    for name, sentence in (
        ("missingTrace", f"Trace with id {missing} for workspace"),
        ("missingSpan", "Span with id nope for workspace"),
    ):
        error = _refused(results, name, 404)
        assert json.loads(error["body"])["message"].startswith(sentence)


def _documented_snippet() -> str:
    """The JavaScript block of docs/clients.md's @orq-ai/node section."""
    section = CLIENTS_DOC.read_text().split(DOC_SECTION, 1)[1].split("\n## ", 1)[0]
    [block] = [block for block in fenced_blocks(section) if block.language == "js"]
    return block.text


def test_the_snippet_of_the_clients_page_runs_as_written(
    live_server: LiveServer, trace_id: str, http: httpx.Client
) -> None:
    source = _documented_snippet()
    for placeholder, value in (
        ("http://127.0.0.1:8000", live_server.url),
        ("<trace_id>", trace_id),
        ("<span_id>", "llm"),
    ):
        assert placeholder in source
        source = source.replace(placeholder, value)
    ran = nodeclients.run_module(source, {"ORQ_API_KEY": ADMIN_TOKEN})
    assert (ran.returncode, ran.stdout.strip()) == (0, "undefined"), ran.stderr
    assert orqseed.span_values(http, trace_id) == {"rating": "good"}
