"""Annotation queues on /v2 over HTTP, on both stores: every route and status of the SDK's wire, items
de-duplicated, id-edged pages, access, the review screen's navigation, review values, add to dataset,
and automations filling a queue as runs arrive."""

from __future__ import annotations

import uuid
from typing import Any

from redline.db import utcnow
from redline.reviews.models import ReviewKey
from tests.conftest import Harness

QUEUES = "/v2/annotation-queues"


def _run(harness: Harness, **fields: Any) -> dict[str, Any]:
    answer = harness.client.post("/v1/runs", json=harness.run(**fields), headers=harness.admin)
    assert answer.status_code == 201, answer.text
    run: dict[str, Any] = answer.json()
    return run


def _queue(
    harness: Harness, name: str = "Support quality", headers: dict[str, str] | None = None
) -> dict[str, Any]:
    answer = harness.client.post(
        QUEUES,
        json={"display_name": name, "description": "Human review", "project_id": harness.project_id},
        headers=headers or harness.admin,
    )
    assert answer.status_code == 200, answer.text
    queue: dict[str, Any] = answer.json()
    return queue


def _add(harness: Harness, queue_id: str, items: list[dict[str, str]]) -> list[dict[str, Any]]:
    answer = harness.client.post(f"{QUEUES}/{queue_id}/items", json={"items": items}, headers=harness.admin)
    assert answer.status_code == 200, answer.text
    added: list[dict[str, Any]] = answer.json()
    return added


def _whole(run: dict[str, Any]) -> dict[str, str]:
    return {"trace_id": run["id"], "span_id": run["id"]}


def _review_key(harness: Harness, key: str = "rating") -> str:
    with harness.db.write() as session:
        row = ReviewKey(
            id=uuid.uuid4(),
            workspace_id=session.scalar(_workspace_of(harness)),
            project_id=uuid.UUID(harness.project_id),
            key=key,
            title=key.title(),
            type="categorical",
            options=[{"value": "good"}, {"value": "bad"}],
            multiple=False,
            created_at=utcnow(),
            updated_at=utcnow(),
        )
        session.add(row)
    return str(row.id)


def _workspace_of(harness: Harness) -> Any:
    from sqlalchemy import select

    from redline.identity.models import Project

    return select(Project.workspace_id).where(Project.id == uuid.UUID(harness.project_id))


def _error(answer: Any, status: int) -> str:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["code"] == status
    message: str = body["message"]
    return message


# ------------------------------------------------------------------------------------------------ queues


def test_a_queue_is_made_read_changed_and_deleted_with_the_sdks_statuses(harness: Harness) -> None:
    queue = _queue(harness)
    assert queue["display_name"] == "Support quality"
    assert queue["description"] == "Human review"
    assert queue["project_id"] == harness.project_id
    assert queue["human_review_ids"] == []
    assert queue["metadata"] == {"items_count": 0, "reviewed_count": 0}
    assert queue["created_by_id"] == harness.admin_id
    assert {"_id", "workspace_id", "created", "updated"} <= set(queue)

    got = harness.client.get(f"{QUEUES}/{queue['_id']}", headers=harness.admin)
    assert got.status_code == 200
    assert got.json() == queue

    changed = harness.client.patch(
        f"{QUEUES}/{queue['_id']}", json={"display_name": "Renamed"}, headers=harness.admin
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["display_name"] == "Renamed"
    assert changed.json()["description"] == "Human review"

    assert harness.client.delete(f"{QUEUES}/{queue['_id']}", headers=harness.admin).status_code == 204
    message = _error(harness.client.get(f"{QUEUES}/{queue['_id']}", headers=harness.admin), 404)
    assert message.startswith(f"Annotation queue with id {queue['_id']}")
    _error(harness.client.get(f"{QUEUES}/not-an-id", headers=harness.admin), 404)


def test_create_needs_every_field_and_a_project_the_caller_may_write(harness: Harness) -> None:
    answer = harness.client.post(
        QUEUES, json={"display_name": "x", "description": "y"}, headers=harness.admin
    )
    _error(answer, 400)
    answer = harness.client.post(
        QUEUES,
        json={"display_name": "x", "description": "y", "project_id": str(uuid.uuid4())},
        headers=harness.admin,
    )
    _error(answer, 404)
    reader = harness.caller("reader", role="read")
    answer = harness.client.post(
        QUEUES,
        json={"display_name": "x", "description": "y", "project_id": harness.project_id},
        headers=reader,
    )
    _error(answer, 403)


def test_human_review_ids_are_the_projects_and_a_new_project_clears_them(harness: Harness) -> None:
    queue = _queue(harness)
    rating = _review_key(harness)
    set_keys = harness.client.patch(
        f"{QUEUES}/{queue['_id']}", json={"human_review_ids": [rating]}, headers=harness.admin
    )
    assert set_keys.status_code == 200, set_keys.text
    assert set_keys.json()["human_review_ids"] == [rating]
    bad = harness.client.patch(
        f"{QUEUES}/{queue['_id']}", json={"human_review_ids": [str(uuid.uuid4())]}, headers=harness.admin
    )
    assert "is not a human review of this queue's project" in _error(bad, 400)

    other = harness.client.post("/v1/projects", json={"name": "other"}, headers=harness.admin)
    assert other.status_code == 201, other.text
    moved = harness.client.patch(
        f"{QUEUES}/{queue['_id']}", json={"project_id": other.json()["id"]}, headers=harness.admin
    )
    assert moved.status_code == 200, moved.text
    assert moved.json()["project_id"] == other.json()["id"]
    assert moved.json()["human_review_ids"] == []


def test_a_queue_with_items_stays_in_its_project(harness: Harness) -> None:
    queue = _queue(harness)
    _add(harness, queue["_id"], [_whole(_run(harness))])
    other = harness.client.post("/v1/projects", json={"name": "other"}, headers=harness.admin).json()
    answer = harness.client.patch(
        f"{QUEUES}/{queue['_id']}", json={"project_id": other["id"]}, headers=harness.admin
    )
    _error(answer, 409)


def test_the_list_pages_by_ids_and_filters_by_name_and_updater(harness: Harness) -> None:
    made = [_queue(harness, f"Queue {n}") for n in range(5)]
    newest_first = [q["_id"] for q in reversed(made)]
    first = harness.client.get(QUEUES, params={"limit": 2}, headers=harness.admin).json()
    assert first["object"] == "list"
    assert [q["_id"] for q in first["data"]] == newest_first[:2]
    assert first["has_more"] is True
    second = harness.client.get(
        QUEUES, params={"limit": 2, "starting_after": newest_first[1]}, headers=harness.admin
    ).json()
    assert [q["_id"] for q in second["data"]] == newest_first[2:4]
    back = harness.client.get(
        QUEUES, params={"limit": 2, "ending_before": newest_first[2]}, headers=harness.admin
    ).json()
    assert [q["_id"] for q in back["data"]] == newest_first[:2]
    assert back["has_more"] is False

    found = harness.client.get(QUEUES, params={"search": "queue 3"}, headers=harness.admin).json()
    assert [q["display_name"] for q in found["data"]] == ["Queue 3"]
    mine = harness.client.get(
        QUEUES, params={"updated_by": harness.admin_id, "limit": 10}, headers=harness.admin
    )
    assert len(mine.json()["data"]) == 5
    nobody = harness.client.get(QUEUES, params={"updated_by": str(uuid.uuid4())}, headers=harness.admin)
    assert nobody.json()["data"] == []
    _error(harness.client.get(QUEUES, params={"starting_after": "nope"}, headers=harness.admin), 400)


def test_access_follows_the_queues_project(harness: Harness) -> None:
    queue = _queue(harness)
    reader = harness.caller("reader", role="read")
    outsider = harness.caller("outsider")
    assert harness.client.get(f"{QUEUES}/{queue['_id']}", headers=reader).status_code == 200
    assert [q["_id"] for q in harness.client.get(QUEUES, headers=reader).json()["data"]] == [queue["_id"]]
    _error(harness.client.patch(f"{QUEUES}/{queue['_id']}", json={"description": "z"}, headers=reader), 403)
    _error(harness.client.delete(f"{QUEUES}/{queue['_id']}/clear", headers=reader), 403)
    _error(harness.client.get(f"{QUEUES}/{queue['_id']}", headers=outsider), 404)
    assert harness.client.get(QUEUES, headers=outsider).json()["data"] == []
    _error(harness.client.get(QUEUES, headers={"Authorization": "Bearer nope"}), 401)


# ------------------------------------------------------------------------------------------------- items


def test_items_are_added_once_and_an_item_already_there_comes_back_unchanged(harness: Harness) -> None:
    queue = _queue(harness)
    run = _run(harness, spans=[{"spanId": "llm-1", "name": "chat"}])
    first = _add(harness, queue["_id"], [_whole(run), {"trace_id": run["id"], "span_id": "llm-1"}])
    assert [item["type"] for item in first] == ["span", "span"]
    assert first[0]["span_id"] == run["id"]
    assert first[1]["span_id"] == "llm-1"
    assert all(item["annotation_queue_id"] == queue["_id"] for item in first)
    assert first[0]["used_human_review_ids"] == []

    again = _add(
        harness, queue["_id"], [{"trace_id": run["id"], "span_id": "llm-1"}, _whole(run), _whole(run)]
    )
    assert [item["_id"] for item in again] == [first[1]["_id"], first[0]["_id"]]
    got = harness.client.get(f"{QUEUES}/{queue['_id']}", headers=harness.admin).json()
    assert got["metadata"]["items_count"] == 2

    one = harness.client.get(f"{QUEUES}/{queue['_id']}/items/{first[1]['_id']}", headers=harness.admin)
    assert one.status_code == 200
    assert one.json()["span_id"] == "llm-1"
    _error(harness.client.get(f"{QUEUES}/{queue['_id']}/items/{uuid.uuid4()}", headers=harness.admin), 404)


def test_adding_refuses_traces_and_spans_it_cannot_find_and_adds_nothing(harness: Harness) -> None:
    queue = _queue(harness)
    run = _run(harness)
    missing_trace = harness.client.post(
        f"{QUEUES}/{queue['_id']}/items",
        json={"items": [_whole(run), {"trace_id": "nope", "span_id": "x"}]},
        headers=harness.admin,
    )
    assert "Trace with id nope" in _error(missing_trace, 404)
    missing_span = harness.client.post(
        f"{QUEUES}/{queue['_id']}/items",
        json={"items": [{"trace_id": run["id"], "span_id": "no-such-span"}]},
        headers=harness.admin,
    )
    assert _error(missing_span, 404).startswith("Span with id no-such-span for workspace")
    got = harness.client.get(f"{QUEUES}/{queue['_id']}", headers=harness.admin).json()
    assert got["metadata"]["items_count"] == 0


def test_a_trace_is_named_by_its_external_id_too(harness: Harness) -> None:
    queue = _queue(harness)
    run = _run(harness, externalId="otel-trace-1")
    [item] = _add(harness, queue["_id"], [{"trace_id": "otel-trace-1", "span_id": "otel-trace-1"}])
    assert item["trace_id"] == run["id"]


def test_items_page_in_queue_order_and_go_by_span_ids_or_all_at_once(harness: Harness) -> None:
    queue = _queue(harness)
    runs = [_run(harness) for _ in range(5)]
    added = _add(harness, queue["_id"], [_whole(run) for run in runs])
    ids = [item["_id"] for item in added]
    url = f"{QUEUES}/{queue['_id']}/items"
    page = harness.client.get(url, params={"limit": 2}, headers=harness.admin).json()
    assert [i["_id"] for i in page["data"]] == ids[:2]
    assert page["has_more"] is True
    rest = harness.client.get(
        url, params={"limit": 10, "starting_after": ids[1]}, headers=harness.admin
    ).json()
    assert [i["_id"] for i in rest["data"]] == ids[2:]
    assert rest["has_more"] is False
    before = harness.client.get(
        url, params={"limit": 2, "ending_before": ids[4]}, headers=harness.admin
    ).json()
    assert [i["_id"] for i in before["data"]] == ids[2:4]

    removed = harness.client.post(
        f"{url}/remove", json={"span_ids": [runs[0]["id"], "not-there"]}, headers=harness.admin
    )
    assert removed.status_code == 204
    assert (
        harness.client.get(f"{QUEUES}/{queue['_id']}", headers=harness.admin).json()["metadata"][
            "items_count"
        ]
        == 4
    )
    assert harness.client.delete(f"{QUEUES}/{queue['_id']}/clear", headers=harness.admin).status_code == 204
    assert harness.client.get(url, headers=harness.admin).json()["data"] == []


# -------------------------------------------------------------------------------------------- reviewing


def test_the_review_screen_steps_through_the_queue_with_its_place(harness: Harness) -> None:
    queue = _queue(harness)
    rating = _review_key(harness)
    items = _add(harness, queue["_id"], [_whole(_run(harness)) for _ in range(4)])
    ids = [item["_id"] for item in items]
    url = f"{QUEUES}/{queue['_id']}/review"

    start = harness.client.get(url, headers=harness.admin).json()
    assert (start["item"]["_id"], start["position"], start["total"], start["reviewed"]) == (ids[0], 1, 4, 0)
    nxt = harness.client.get(
        url, params={"item_id": ids[0], "direction": "next"}, headers=harness.admin
    ).json()
    assert (nxt["item"]["_id"], nxt["position"]) == (ids[1], 2)
    prev = harness.client.get(url, params={"item_id": ids[1], "direction": "previous"}, headers=harness.admin)
    assert prev.json()["item"]["_id"] == ids[0]
    end = harness.client.get(
        url, params={"item_id": ids[3], "direction": "next"}, headers=harness.admin
    ).json()
    assert end == {"item": None, "position": None, "total": 4, "reviewed": 0}

    saved = harness.client.post(
        f"{QUEUES}/{queue['_id']}/items/{ids[1]}/review",
        json={"values": [{"key": "rating", "value": "good"}]},
        headers=harness.admin,
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["used_human_review_ids"] == [rating]
    assert saved.json()["reviewed_by_id"] == harness.admin_id
    skip = harness.client.get(
        url, params={"item_id": ids[0], "direction": "next", "unreviewed": "true"}, headers=harness.admin
    ).json()
    assert (skip["item"]["_id"], skip["position"], skip["reviewed"]) == (ids[2], 3, 1)
    last = harness.client.get(url, params={"direction": "previous"}, headers=harness.admin).json()
    assert (last["item"]["_id"], last["position"]) == (ids[3], 4)
    queue_now = harness.client.get(f"{QUEUES}/{queue['_id']}", headers=harness.admin).json()
    assert queue_now["metadata"] == {"items_count": 4, "reviewed_count": 1}


def test_saved_values_are_written_back_to_the_trace_and_checked(harness: Harness) -> None:
    queue = _queue(harness)
    _review_key(harness)
    run = _run(harness)
    [item] = _add(harness, queue["_id"], [_whole(run)])
    url = f"{QUEUES}/{queue['_id']}/items/{item['_id']}/review"
    wrong = harness.client.post(
        url, json={"values": [{"key": "rating", "value": "poor"}]}, headers=harness.admin
    )
    assert _error(wrong, 400) == "Invalid value: poor. Valid options are: good, bad."
    unknown = harness.client.post(
        url, json={"values": [{"key": "tone", "value": "x"}]}, headers=harness.admin
    )
    assert 'The human review with key "tone"' in _error(unknown, 404)
    reader = harness.caller("reader", role="read")
    _error(
        harness.client.post(url, json={"values": [{"key": "rating", "value": "good"}]}, headers=reader), 403
    )
    assert (
        harness.client.post(
            url, json={"values": [{"key": "rating", "value": "bad"}]}, headers=harness.admin
        ).status_code
        == 200
    )

    from sqlalchemy import select

    from redline.annotations.models import Annotation

    with harness.db.read() as session:
        values = session.execute(
            select(Annotation.key, Annotation.value).where(Annotation.trace_id == uuid.UUID(run["id"]))
        ).all()
    assert [tuple(row) for row in values] == [("rating", "bad")]


def test_add_to_dataset_makes_a_datapoint_linked_to_the_trace(harness: Harness) -> None:
    queue = _queue(harness)
    run = _run(harness)
    [item] = _add(harness, queue["_id"], [_whole(run)])
    dataset = harness.client.post(
        "/v2/datasets", json={"display_name": "Refunds"}, headers=harness.admin
    ).json()
    answer = harness.client.post(
        f"{QUEUES}/{queue['_id']}/items/{item['_id']}/add-to-dataset",
        json={"dataset_id": dataset["_id"]},
        headers=harness.admin,
    )
    assert answer.status_code == 200, answer.text
    point = answer.json()
    assert point["dataset_id"] == dataset["_id"]
    assert point["trace_id"] == run["id"]
    assert point["inputs"] == {"message": "I want a refund for order 1182"}
    assert point["expected_output"] == "Your order was delivered on May 3."
    assert [m["role"] for m in point["messages"]] == ["system", "user", "assistant", "tool"]
    assert point["messages"][2]["tool_calls"][0]["function"]["name"] == "lookup_order"
    _error(
        harness.client.post(
            f"{QUEUES}/{queue['_id']}/items/{item['_id']}/add-to-dataset",
            json={"dataset_id": str(uuid.uuid4())},
            headers=harness.admin,
        ),
        404,
    )


# ------------------------------------------------------------------------------------------- automations


def test_an_automation_queues_matching_runs_as_they_arrive(harness: Harness) -> None:
    queue = _queue(harness)
    url = f"{QUEUES}/{queue['_id']}/automations"
    made = harness.client.post(
        url,
        json={
            "name": "Gold customers",
            "filters": {"metadata": [{"path": "customer.tier", "op": "equals", "value": "gold"}]},
            "sample": 1,
        },
        headers=harness.admin,
    )
    assert made.status_code == 200, made.text
    automation = made.json()
    assert automation["version"] == 1
    assert automation["filters"] == {"metadata": [{"path": "customer.tier", "op": "equals", "value": "gold"}]}

    gold = _run(harness, metadata={"customer": {"tier": "gold"}})
    _run(harness, metadata={"customer": {"tier": "silver"}})
    _run(harness, status="failed", metadata={"customer": {"tier": "gold"}})
    _run(harness, dryRun=True, metadata={"customer": {"tier": "gold"}})
    items = harness.client.get(f"{QUEUES}/{queue['_id']}/items", headers=harness.admin).json()["data"]
    assert [item["trace_id"] for item in items] == [gold["id"]]
    assert items[0]["added_by_rules"] == [{"automation_id": automation["_id"], "version": 1}]

    listed = harness.client.get(url, headers=harness.admin).json()
    assert [a["_id"] for a in listed["data"]] == [automation["_id"]]
    changed = harness.client.patch(f"{url}/{automation['_id']}", json={"sample": 0.5}, headers=harness.admin)
    assert changed.status_code == 200, changed.text
    assert (changed.json()["version"], changed.json()["sample"]) == (2, 0.5)
    history = harness.client.get(f"{url}/{automation['_id']}/versions", headers=harness.admin).json()
    assert [v["version"] for v in history["data"]] == [2, 1]
    assert harness.client.delete(f"{url}/{automation['_id']}", headers=harness.admin).status_code == 204
    _run(harness, metadata={"customer": {"tier": "gold"}})
    after = harness.client.get(f"{QUEUES}/{queue['_id']}/items", headers=harness.admin).json()["data"]
    assert len(after) == 1
    _error(harness.client.get(f"{url}/{automation['_id']}", headers=harness.admin), 404)


def test_a_run_is_never_queued_twice_by_hand_and_by_rule(harness: Harness) -> None:
    queue = _queue(harness)
    harness.client.post(
        f"{QUEUES}/{queue['_id']}/automations", json={"name": "All", "filters": {}}, headers=harness.admin
    )
    run = _run(harness, externalId="ticket-9", status="running")
    [item] = _add(harness, queue["_id"], [_whole(run)])
    _run(harness, externalId="ticket-9", status="completed")
    _run(harness, externalId="ticket-9", status="completed")
    items = harness.client.get(f"{QUEUES}/{queue['_id']}/items", headers=harness.admin).json()["data"]
    assert [i["_id"] for i in items] == [item["_id"]]


def test_automations_refuse_bad_filters_clearly(harness: Harness) -> None:
    queue = _queue(harness)
    url = f"{QUEUES}/{queue['_id']}/automations"

    def refused(filters: dict[str, Any], sample: Any = 1) -> str:
        answer = harness.client.post(
            url, json={"name": "x", "filters": filters, "sample": sample}, headers=harness.admin
        )
        return _error(answer, 400)

    assert "agent_ids or flow_ids, not both" in refused(
        {"agent_ids": [str(uuid.uuid4())], "flow_ids": [str(uuid.uuid4())]}
    )
    assert 'filters.metadata[0].op: "like" is not an op' in refused(
        {"metadata": [{"path": "a", "op": "like", "value": 1}]}
    )
    assert "gt compares numbers" in refused({"metadata": [{"path": "a", "op": "gt", "value": "3"}]})
    assert "exists takes no value" in refused({"metadata": [{"path": "a", "op": "exists", "value": 1}]})
    assert "unknown field(s): colour" in refused({"colour": "red"})
    assert 'no agent "' in refused({"agent_ids": [str(uuid.uuid4())]})
    assert "sample" in refused({}, sample=0)
    assert "sample" in refused({}, sample=1.5)
    reader = harness.caller("reader", role="read")
    _error(harness.client.post(url, json={"name": "x", "filters": {}}, headers=reader), 403)


def test_an_automation_on_an_agent_and_pinned_versions(harness: Harness) -> None:
    queue = _queue(harness)
    first = _run(harness)
    agent_id = first["agentId"]
    made = harness.client.post(
        f"{QUEUES}/{queue['_id']}/automations",
        json={"name": "Pinned", "filters": {"agent_ids": [agent_id], "versions": ["pinned"]}},
        headers=harness.admin,
    )
    assert made.status_code == 200, made.text
    assert made.json()["filters"] == {"agent_ids": [agent_id], "versions": ["pinned"]}
    _run(harness, versionSource="named")
    pinned = _run(harness, versionSource="pinned")
    items = harness.client.get(f"{QUEUES}/{queue['_id']}/items", headers=harness.admin).json()["data"]
    assert [item["trace_id"] for item in items] == [pinned["id"]]


def test_counts_and_positions_stay_right_as_items_are_reviewed_and_removed(harness: Harness) -> None:
    queue = _queue(harness)
    _review_key(harness)
    runs = [_run(harness) for _ in range(6)]
    ids = [item["_id"] for item in _add(harness, queue["_id"], [_whole(run) for run in runs])]
    for item_id in (ids[1], ids[1], ids[4]):
        saved = harness.client.post(
            f"{QUEUES}/{queue['_id']}/items/{item_id}/review",
            json={"values": [{"key": "rating", "value": "good"}]},
            headers=harness.admin,
        )
        assert saved.status_code == 200, saved.text
    meta = harness.client.get(f"{QUEUES}/{queue['_id']}", headers=harness.admin).json()["metadata"]
    assert meta == {"items_count": 6, "reviewed_count": 2}

    removed = harness.client.post(
        f"{QUEUES}/{queue['_id']}/items/remove",
        json={"span_ids": [runs[0]["id"], runs[1]["id"]]},
        headers=harness.admin,
    )
    assert removed.status_code == 204
    url = f"{QUEUES}/{queue['_id']}/review"
    for index, expected in ((2, 1), (3, 2), (4, 3), (5, 4)):
        place = harness.client.get(url, params={"item_id": ids[index]}, headers=harness.admin).json()
        assert (place["position"], place["total"], place["reviewed"]) == (expected, 4, 1)
    _add(harness, queue["_id"], [_whole(runs[0])])
    last = harness.client.get(url, params={"direction": "previous"}, headers=harness.admin).json()
    assert (last["position"], last["total"]) == (5, 5)
    harness.client.delete(f"{QUEUES}/{queue['_id']}/clear", headers=harness.admin)
    meta = harness.client.get(f"{QUEUES}/{queue['_id']}", headers=harness.admin).json()["metadata"]
    assert meta == {"items_count": 0, "reviewed_count": 0}
