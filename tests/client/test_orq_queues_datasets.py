"""The real orq-ai-sdk 4.17.13 against a live server, on both stores: annotation queues and datasets.

The SDK raises `APIDefaultError("Unexpected response received")` on any success status but the one it
expects and `ResponseValidationError` when a required field is missing, so each call here that returns
proves the wire (wire-clients.md §1.4, §1.6).
"""

from __future__ import annotations

from typing import Any

import pytest
from orq_ai_sdk import Orq, models

from redline.client import Client
from tests.liveserver import LiveServer
from tests.samples import make_run


def _trace(admin: Client, project_id: str, **fields: Any) -> str:
    run: dict[str, Any] = admin.runs.create(
        make_run(project_id, spans=[{"spanId": "llm-1", "name": "chat completion"}], **fields)
    )
    return str(run["id"])


def _ref(trace_id: str, span_id: str) -> models.AnnotationQueueItemRef:
    return models.AnnotationQueueItemRef(trace_id=trace_id, span_id=span_id)


def test_annotation_queues_through_the_sdk(orq: Orq, admin: Client, live_server: LiveServer) -> None:
    queue = orq.annotation_queues.create(
        display_name="Support quality", description="Human review", project_id=live_server.project_id
    )
    assert queue.display_name == "Support quality"
    assert queue.project_id == live_server.project_id
    assert queue.metadata.items_count == 0
    assert queue.human_review_ids == []

    assert orq.annotation_queues.retrieve(annotation_queue_id=queue.id).id == queue.id
    changed = orq.annotation_queues.update(annotation_queue_id=queue.id, description="Q3 scope")
    assert changed.description == "Q3 scope"
    other = orq.annotation_queues.create(
        display_name="Other", description="", project_id=live_server.project_id
    )
    listed = orq.annotation_queues.list(limit=1)
    assert [q.id for q in listed.data] == [other.id]
    assert listed.has_more is True
    assert [q.id for q in orq.annotation_queues.list(limit=5, starting_after=other.id).data] == [queue.id]
    assert [q.id for q in orq.annotation_queues.list(search="support").data] == [queue.id]

    trace_id = _trace(admin, live_server.project_id)
    added = orq.annotation_queues.add_items(
        annotation_queue_id=queue.id,
        items=[_ref(trace_id, "llm-1"), _ref(trace_id, trace_id)],
    )
    assert [(i.type, i.span_id, i.trace_id) for i in added] == [
        ("span", "llm-1", trace_id),
        ("span", trace_id, trace_id),
    ]
    again = orq.annotation_queues.add_items(annotation_queue_id=queue.id, items=[_ref(trace_id, "llm-1")])
    assert [i.id for i in again] == [added[0].id]
    assert orq.annotation_queues.retrieve(annotation_queue_id=queue.id).metadata.items_count == 2

    items = orq.annotation_queues.list_items(annotation_queue_id=queue.id, limit=1)
    assert [i.id for i in items.data] == [added[0].id]
    assert items.has_more is True
    later = orq.annotation_queues.list_items(annotation_queue_id=queue.id, starting_after=added[0].id)
    assert [i.id for i in later.data] == [added[1].id]
    one = orq.annotation_queues.retrieve_item(annotation_queue_id=queue.id, item_id=added[0].id)
    assert one is not None

    orq.annotation_queues.remove_items(annotation_queue_id=queue.id, span_ids=["llm-1"])
    assert [i.id for i in orq.annotation_queues.list_items(annotation_queue_id=queue.id).data] == [
        added[1].id
    ]
    orq.annotation_queues.clear(annotation_queue_id=queue.id)
    assert orq.annotation_queues.list_items(annotation_queue_id=queue.id).data == []

    orq.annotation_queues.delete(annotation_queue_id=queue.id)
    with pytest.raises(models.ErrorResponse) as missing:
        orq.annotation_queues.retrieve(annotation_queue_id=queue.id)
    assert missing.value.data.message.startswith(f"Annotation queue with id {queue.id}")
    assert missing.value.data.code == 404


def test_datasets_through_the_sdk(orq: Orq, admin: Client, live_server: LiveServer) -> None:
    dataset = orq.datasets.create(display_name="support_quality_eval")
    assert dataset.project_id == live_server.project_id
    assert dataset.metadata.datapoints_count == 0
    assert orq.datasets.retrieve(dataset_id=dataset.id).display_name == "support_quality_eval"
    assert orq.datasets.update(dataset_id=dataset.id, display_name="renamed").display_name == "renamed"
    assert [d.id for d in orq.datasets.list(limit=10).data] == [dataset.id]
    assert [d.id for d in orq.datasets.list(project_id=live_server.project_id).data] == [dataset.id]

    made = orq.datasets.create_datapoint(
        dataset_id=dataset.id,
        request_body=[
            models.DatapointInput(inputs={"q": "refund?"}, expected_output="yes"),
            models.DatapointInput(messages=[{"role": "user", "content": "hi"}]),
        ],
    )
    assert [p.expected_output for p in made] == ["yes", None]
    bulk = orq.datasets.create_datapoints(
        dataset_id=dataset.id, items=[models.DatapointInput(expected_output="bulk")]
    )
    assert bulk[0].dataset_id == dataset.id
    page = orq.datasets.list_datapoints(dataset_id=dataset.id, limit=2)
    assert [p.id for p in page.data] == [bulk[0].id, made[1].id]
    assert page.has_more is True
    got = orq.datasets.retrieve_datapoint(dataset_id=dataset.id, datapoint_id=made[0].id)
    assert got.inputs == {"q": "refund?"}
    changed = orq.datasets.update_datapoint(
        dataset_id=dataset.id, datapoint_id=made[0].id, expected_output="no"
    )
    assert changed.expected_output == "no"
    orq.datasets.delete_datapoint(dataset_id=dataset.id, datapoint_id=made[0].id)
    orq.datasets.delete_datapoints(dataset_id=dataset.id, item_ids=[made[1].id])
    assert [p.id for p in orq.datasets.list_datapoints(dataset_id=dataset.id).data] == [bulk[0].id]
    assert orq.datasets.retrieve(dataset_id=dataset.id).metadata.datapoints_count == 1

    orq.datasets.clear(dataset_id=dataset.id)
    assert orq.datasets.list_datapoints(dataset_id=dataset.id).data == []
    orq.datasets.delete(dataset_id=dataset.id)
    with pytest.raises(models.ErrorResponse) as missing:
        orq.datasets.retrieve(dataset_id=dataset.id)
    assert missing.value.data.code == 404
