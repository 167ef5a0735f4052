"""`client.human_reviews`, `client.span_annotations`, `client.queues` and `client.datasets`: Redline's own
client against a real server over HTTP on both stores, and its reading of the reviews surface's errors."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from redline.client import AuthError, Client, ConflictError, InvalidRequestError, NotFoundError
from tests.client.test_client import new_caller
from tests.liveserver import LiveServer
from tests.samples import make_run

SPANS = [
    {"spanId": "root", "kind": "agent", "name": "support-agent", "startedAt": "2026-11-01T10:00:00Z"},
    {
        "spanId": "llm",
        "parentSpanId": "root",
        "kind": "chat_completion",
        "name": "answer",
        "startedAt": "2026-11-01T10:00:01Z",
    },
]


def _trace(admin: Client, live_server: LiveServer, **fields: Any) -> str:
    run = admin.runs.create(make_run(live_server.project_id, spans=SPANS, **fields))
    trace_id: str = run["id"]
    return trace_id


def _define(admin: Client, live_server: LiveServer) -> dict[str, dict[str, Any]]:
    made = [
        admin.human_reviews.create(
            "rating", "categorical", options=["good", "bad"], project_id=live_server.project_id
        ),
        admin.human_reviews.create(
            "defects",
            "categorical",
            options=["spelling", {"value": "hallucination", "description": "Made up facts"}],
            multiple=True,
        ),
        admin.human_reviews.create("score", "range", min=0, max=10, display_name="Score"),
        admin.human_reviews.create("note", "text", description="Anything else"),
    ]
    return {definition["key"]: definition for definition in made}


# ------------------------------------------------------------------------------------------ human reviews


def test_human_reviews_define_list_change_and_delete(admin: Client, live_server: LiveServer) -> None:
    keys = _define(admin, live_server)
    assert keys["defects"]["options"] == ["spelling", "hallucination"]
    assert keys["defects"]["option_details"][1] == {"value": "hallucination", "description": "Made up facts"}
    assert (keys["score"]["min"], keys["score"]["max"], keys["score"]["display_name"]) == (0, 10, "Score")
    assert keys["note"]["display_name"] == "note"
    assert {key["project_id"] for key in keys.values()} == {live_server.project_id}

    listed = [key["key"] for key in admin.human_reviews.list(limit=1)]
    assert listed == ["note", "score", "defects", "rating"]
    first = admin.human_reviews.page(project_id=live_server.project_id, limit=3)
    assert [key["key"] for key in first.data] == ["note", "score", "defects"]
    assert first.has_more
    assert first.next_cursor == keys["defects"]["_id"]
    rest = admin.human_reviews.page(limit=3, cursor=first.next_cursor)
    assert ([key["key"] for key in rest.data], rest.has_more, rest.next_cursor) == (["rating"], False, None)

    assert admin.human_reviews.get(keys["rating"]["_id"]) == keys["rating"]
    changed = admin.human_reviews.update(keys["note"]["_id"], display_name="Note", description=None)
    assert (changed["display_name"], changed["description"]) == ("Note", None)
    widened = admin.human_reviews.update(keys["score"]["_id"], max=100)
    assert (widened["min"], widened["max"]) == (0, 100)

    added = admin.human_reviews.add_defaults(project_id=live_server.project_id)
    assert [key["key"] for key in added] == []  # rating and defects are there already
    admin.human_reviews.delete(keys["rating"]["_id"])
    assert [key["key"] for key in admin.human_reviews.add_defaults()] == ["rating"]

    with pytest.raises(NotFoundError) as missing:
        admin.human_reviews.get(keys["rating"]["_id"])
    assert missing.value.message.startswith(f"The human review with id {keys['rating']['_id']} ")
    assert (missing.value.status, missing.value.code) == (404, "resource-not-found")


def test_human_review_refusals_carry_the_documents_sentences(admin: Client, live_server: LiveServer) -> None:
    admin.human_reviews.create("rating", "categorical", options=["good", "bad"])
    with pytest.raises(ConflictError) as taken:
        admin.human_reviews.create("rating", "text")
    assert taken.value.message == (
        'A human review with key "rating" already exists in project "default"; '
        "change that one, or pick another key."
    )
    assert (taken.value.status, taken.value.code) == (409, "conflict")
    assert taken.value.request_id
    with pytest.raises(InvalidRequestError) as shapeless:
        admin.human_reviews.create("score", "range", min=5, max=1)
    assert shapeless.value.message == "min must be less than max; they are 5 and 1."
    assert shapeless.value.code == "bad-input"
    with pytest.raises(InvalidRequestError, match=r"key: String should have at most 200 characters"):
        admin.human_reviews.create("k" * 201, "text")

    with new_caller(admin, live_server, "reader", "read") as reader, pytest.raises(AuthError) as forbidden:
        reader.human_reviews.create("tone", "text", project_id=live_server.project_id)
    assert forbidden.value.message == 'This needs the write role in project "default"; you have read.'
    assert forbidden.value.code == "permission-denied"


# ---------------------------------------------------------------------------------------- span annotations


def test_annotate_a_span_replace_and_remove(admin: Client, live_server: LiveServer) -> None:
    _define(admin, live_server)
    trace_id = _trace(admin, live_server)
    values: list[dict[str, Any]] = [
        {"key": "rating", "value": "good"},
        {"key": "defects", "value": ["spelling", "spelling", "hallucination"]},
        {"key": "score", "value": 7.5},
        {"key": "note", "value": "Polite, but guessed the date."},
    ]
    written = admin.span_annotations.annotate(trace_id, "llm", values, metadata={"identity_id": "user-1"})
    assert [(row["key"], row["value"]) for row in written] == [
        ("rating", "good"),
        ("defects", ["spelling", "hallucination"]),
        ("score", 7.5),
        ("note", "Polite, but guessed the date."),
    ]
    assert {row["span_id"] for row in written} == {"llm"}
    assert written[0]["metadata"] == {"identity_id": "user-1"}
    assert written[0]["author_id"] == live_server.admin_id

    # Again under the same identity: replaced, not added; another identity keeps its own.
    again = admin.span_annotations.annotate(
        trace_id, "llm", [{"key": "rating", "value": "bad"}], metadata={"identity_id": "user-1"}
    )
    assert again[0]["_id"] == written[0]["_id"]
    admin.span_annotations.annotate(
        trace_id, "llm", [{"key": "rating", "value": "good"}], metadata={"identity_id": "user-2"}
    )

    assert (
        admin.span_annotations.remove(
            trace_id, "llm", keys=["rating", "score"], metadata={"identity_id": "user-1"}
        )
        == 2
    )
    assert admin.span_annotations.remove(trace_id, "llm", keys=["rating", "unknown"]) == 1


def test_annotation_refusals_carry_the_documents_sentences(admin: Client, live_server: LiveServer) -> None:
    _define(admin, live_server)
    trace_id = _trace(admin, live_server)
    workspace = admin.me()["workspaceId"]

    def refused(values: list[dict[str, Any]], span_id: str = "llm") -> InvalidRequestError | NotFoundError:
        with pytest.raises((InvalidRequestError, NotFoundError)) as caught:
            admin.span_annotations.annotate(trace_id, span_id, values)
        error = caught.value
        assert isinstance(error, InvalidRequestError | NotFoundError)
        return error

    assert refused([{"key": "rating", "value": "poor"}]).message == (
        "Invalid value: poor. Valid options are: good, bad."
    )
    assert refused([{"key": "score", "value": 15}]).message == "Value 15 is out of range [0, 10]."
    assert refused([{"key": "note", "value": "x" * 201}]).message == (
        "String value exceeds maximum length of 200 characters."
    )
    too_many = [{"key": f"k{number}", "value": "good"} for number in range(11)]
    assert refused(too_many).message == "A request adds at most 10 annotations; this one has 11."
    unknown = refused([{"key": "tone", "value": "warm"}])
    assert isinstance(unknown, NotFoundError)
    assert unknown.message == f'The human review with key "tone" for workspace {workspace} was not found.'
    no_span = refused([{"key": "rating", "value": "good"}], span_id="nope")
    assert no_span.message == f"Span with id nope for workspace {workspace} was not found."
    unparsed = refused([{"key": "rating"}])
    assert unparsed.message == "annotations[0].value: Field required"


def test_evaluator_results_and_their_corrections(admin: Client, live_server: LiveServer) -> None:
    trace_id = _trace(admin, live_server)
    result = admin.span_annotations.record_evaluation(
        trace_id, "llm", evaluator="disclaimer_present", output_type="boolean", value=True, explanation="ok"
    )
    assert (result["evaluator"], result["value"], result["corrections"]) == ("disclaimer_present", True, [])
    [correction] = admin.span_annotations.annotate(
        trace_id,
        "llm",
        [{"parent_annotation_id": result["_id"], "value": False, "explanation": "No disclaimer."}],
    )
    assert (correction["parent_annotation_id"], correction["output_type"]) == (result["_id"], "boolean")
    [listed] = admin.span_annotations.evaluations(trace_id, "llm")
    assert [item["_id"] for item in listed["corrections"]] == [correction["_id"]]
    with pytest.raises(InvalidRequestError, match="must be true or false"):
        admin.span_annotations.annotate(
            trace_id, "llm", [{"parent_annotation_id": result["_id"], "value": 3}]
        )
    assert admin.span_annotations.remove(trace_id, "llm", parent_annotation_ids=[result["_id"]]) == 1
    assert admin.span_annotations.evaluations(trace_id, "llm")[0]["corrections"] == []


# ------------------------------------------------------------------------------------------------- queues


def test_queue_items_review_and_add_to_dataset(admin: Client, live_server: LiveServer) -> None:
    keys = _define(admin, live_server)
    traces = [_trace(admin, live_server, externalId=f"ticket-{number}") for number in range(3)]
    queue = admin.queues.create("Support quality", project_id=live_server.project_id, description="Weekly")
    assert (queue["display_name"], queue["metadata"]) == (
        "Support quality",
        {"items_count": 0, "reviewed_count": 0},
    )
    queue = admin.queues.update(queue["_id"], human_review_ids=[keys["rating"]["_id"], keys["score"]["_id"]])
    assert queue["human_review_ids"] == [keys["rating"]["_id"], keys["score"]["_id"]]

    whole = admin.queues.add_traces(queue["_id"], [traces[0], "ticket-1"])
    assert [item["trace_id"] for item in whole] == traces[:2]
    assert [item["span_id"] for item in whole] == traces[:2]
    [span_item] = admin.queues.add_items(queue["_id"], [{"trace_id": traces[2], "span_id": "llm"}])
    assert span_item["span_id"] == "llm"
    assert admin.queues.add_traces(queue["_id"], [traces[0]])[0]["_id"] == whole[0]["_id"]  # once only

    items = list(admin.queues.list_items(queue["_id"], limit=2))
    assert [item["_id"] for item in items] == [whole[0]["_id"], whole[1]["_id"], span_item["_id"]]
    page = admin.queues.page_items(queue["_id"], limit=2)
    assert (page.has_more, page.next_cursor) == (True, whole[1]["_id"])
    assert admin.queues.get_item(queue["_id"], span_item["_id"]) == span_item

    first = admin.queues.review(queue["_id"])
    assert (first["item"]["_id"], first["position"], first["total"], first["reviewed"]) == (
        whole[0]["_id"],
        1,
        3,
        0,
    )
    reviewed = admin.queues.save_review(
        queue["_id"], whole[0]["_id"], [{"key": "rating", "value": "good"}, {"key": "score", "value": 3}]
    )
    assert reviewed["reviewed"]
    assert reviewed["used_human_review_ids"] == [keys["rating"]["_id"], keys["score"]["_id"]]
    step = admin.queues.review(queue["_id"], whole[0]["_id"], direction="next")
    assert (step["item"]["_id"], step["position"], step["reviewed"]) == (whole[1]["_id"], 2, 1)
    back = admin.queues.review(queue["_id"], whole[1]["_id"], direction="previous", unreviewed=True)
    assert (back["item"], back["total"]) == (None, 3)
    assert admin.queues.review(queue["_id"], unreviewed=True)["item"]["_id"] == whole[1]["_id"]
    assert admin.queues.review(queue["_id"], direction="previous")["item"]["_id"] == span_item["_id"]
    with pytest.raises(NotFoundError, match='The human review with key "note" for workspace'):
        admin.queues.save_review(queue["_id"], whole[1]["_id"], [{"key": "note", "value": "x"}])

    dataset = admin.datasets.create("from review")
    datapoint = admin.queues.add_to_dataset(queue["_id"], whole[0]["_id"], dataset["_id"])
    assert (datapoint["trace_id"], datapoint["dataset_id"]) == (traces[0], dataset["_id"])
    assert datapoint["inputs"] == {"message": "I want a refund for order 1182"}

    assert admin.queues.get(queue["_id"])["metadata"] == {"items_count": 3, "reviewed_count": 1}
    admin.queues.remove_items(queue["_id"], [traces[0], "llm", "nothing"])
    assert admin.queues.get(queue["_id"])["metadata"] == {"items_count": 1, "reviewed_count": 0}
    admin.queues.clear(queue["_id"])
    assert list(admin.queues.list_items(queue["_id"])) == []
    with pytest.raises(NotFoundError, match=r"Trace with id ticket-9 for workspace .* was not found\."):
        admin.queues.add_traces(queue["_id"], ["ticket-9"])


def test_queues_list_search_and_delete(admin: Client, live_server: LiveServer) -> None:
    made = [
        admin.queues.create(name, project_id=live_server.project_id) for name in ("Tone", "Refunds", "tone 2")
    ]
    assert [queue["_id"] for queue in admin.queues.list(limit=1)] == [queue["_id"] for queue in made[::-1]]
    assert [queue["display_name"] for queue in admin.queues.list(search="TONE")] == ["tone 2", "Tone"]
    page = admin.queues.page(limit=2)
    assert (len(page.data), page.has_more) == (2, True)
    assert [queue["_id"] for queue in admin.queues.page(limit=2, cursor=page.next_cursor).data] == [
        made[0]["_id"]
    ]
    admin.queues.delete(made[0]["_id"])
    with pytest.raises(NotFoundError, match=f"Annotation queue with id {made[0]['_id']} for workspace"):
        admin.queues.get(made[0]["_id"])
    with pytest.raises(NotFoundError):
        admin.queues.create("Elsewhere", project_id="not-a-project")


def test_queue_automations_fill_the_queue_as_runs_arrive(admin: Client, live_server: LiveServer) -> None:
    queue = admin.queues.create("VIP", project_id=live_server.project_id)
    filters = {"metadata": [{"path": "tier", "op": "equals", "value": "vip"}]}
    automation = admin.queues.automations.create(queue["_id"], name="vip tickets", filters=filters)
    assert (automation["version"], automation["filters"]["metadata"], automation["sample"]) == (
        1,
        filters["metadata"],
        1.0,
    )
    vip = _trace(admin, live_server, metadata={"tier": "vip"})
    _trace(admin, live_server, metadata={"tier": "free"})
    [item] = list(admin.queues.list_items(queue["_id"]))
    assert item["trace_id"] == vip
    assert item["added_by_rules"] == [{"automation_id": automation["_id"], "version": 1}]

    changed = admin.queues.automations.update(queue["_id"], automation["_id"], sample=0.5, enabled=False)
    assert (changed["version"], changed["sample"], changed["enabled"]) == (2, 0.5, False)
    assert admin.queues.automations.get(queue["_id"], automation["_id"]) == changed
    assert [v["version"] for v in admin.queues.automations.versions(queue["_id"], automation["_id"])] == [
        2,
        1,
    ]
    assert [a["_id"] for a in admin.queues.automations.list(queue["_id"])] == [automation["_id"]]
    with pytest.raises(InvalidRequestError) as bad:
        admin.queues.automations.create(
            queue["_id"], name="bad", filters={"metadata": [{"path": "tier", "op": "like", "value": "v"}]}
        )
    assert bad.value.message.startswith('filters.metadata[0].op: "like" is not an op')
    admin.queues.automations.delete(queue["_id"], automation["_id"])
    assert admin.queues.automations.list(queue["_id"]) == []
    with pytest.raises(NotFoundError, match="Automation with id"):
        admin.queues.automations.get(queue["_id"], automation["_id"])


# ----------------------------------------------------------------------------------------------- datasets


def test_datasets_and_datapoints(admin: Client, live_server: LiveServer) -> None:
    dataset = admin.datasets.create("support evals", path="default/evals/refunds")
    assert (dataset["project_id"], dataset["path"]) == (live_server.project_id, "default/evals/refunds")
    assert dataset["metadata"] == {"total_versions": 0, "datapoints_count": 0}
    made = admin.datasets.create_datapoints(
        dataset["_id"],
        [
            {"inputs": {"q": "refund?"}, "expected_output": "Yes, within 30 days."},
            {"messages": [{"role": "user", "content": "hi"}]},
            {"inputs": {"q": "ship?"}},
        ],
    )
    assert [point["snapshot_version"] for point in made] == ["1", "1", "1"]
    listed = [point["_id"] for point in admin.datasets.list_datapoints(dataset["_id"], limit=2)]
    assert listed == [point["_id"] for point in made[::-1]]
    page = admin.datasets.page_datapoints(dataset["_id"], limit=2)
    assert (page.has_more, page.next_cursor) == (True, made[1]["_id"])
    assert admin.datasets.get_datapoint(dataset["_id"], made[0]["_id"]) == made[0]

    changed = admin.datasets.update_datapoint(
        dataset["_id"], made[0]["_id"], expected_output=None, inputs={"q": "refund now?"}
    )
    # A field a datapoint no longer has is left out, not null (@orq-ai/node takes no null there).
    assert (changed["inputs"], changed.get("expected_output", "absent"), changed["snapshot_version"]) == (
        {"q": "refund now?"},
        "absent",
        "2",
    )
    admin.datasets.delete_datapoint(dataset["_id"], made[1]["_id"])
    admin.datasets.delete_datapoints(dataset["_id"], [made[2]["_id"], "not-an-id"])
    assert [point["_id"] for point in admin.datasets.list_datapoints(dataset["_id"])] == [made[0]["_id"]]
    renamed = admin.datasets.update(dataset["_id"], display_name="refund evals")
    assert (renamed["display_name"], renamed["metadata"]) == (
        "refund evals",
        {"total_versions": 4, "datapoints_count": 1},
    )
    assert [d["_id"] for d in admin.datasets.list(project_id=live_server.project_id, search="REFUND")] == [
        dataset["_id"]
    ]
    assert admin.datasets.page(limit=1).data[0]["_id"] == dataset["_id"]
    admin.datasets.clear(dataset["_id"])
    assert admin.datasets.get(dataset["_id"])["metadata"]["datapoints_count"] == 0
    admin.datasets.delete(dataset["_id"])
    with pytest.raises(NotFoundError):
        admin.datasets.get(dataset["_id"])


# ---------------------------------------------------------------------------------------- error mapping


@pytest.mark.parametrize(
    ("status", "error_class", "code"),
    [
        (400, InvalidRequestError, "bad-input"),
        (401, AuthError, "auth-missing"),
        (403, AuthError, "permission-denied"),
        (404, NotFoundError, "resource-not-found"),
        (409, ConflictError, "conflict"),
    ],
)
def test_reviews_error_bodies_become_client_errors(
    status: int, error_class: type[Exception], code: str
) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            status, json={"message": "The sentence.", "code": status}, headers={"x-request-id": "req-1"}
        )

    transport = httpx.MockTransport(answer)
    with (
        Client("http://redline.test", token="t", transport=transport) as client,
        pytest.raises(error_class) as caught,
    ):
        client.queues.get("q")
    error = caught.value
    assert isinstance(error, InvalidRequestError | AuthError | NotFoundError | ConflictError)
    assert (error.message, error.status, error.code, error.request_id) == (
        "The sentence.",
        status,
        code,
        "req-1",
    )
