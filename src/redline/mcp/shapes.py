"""What the tools answer about annotations, review values and annotation queues, in the camelCase of
Redline's own API. Runs, corrections, expert-queue items, rules and their results answer in the shapes
their domains already give every edge (`traces.native`, `corrections.wire`, `queues.expert`,
`stats.wire`); these had only a surface's shape (the rm and orq documents'), which the MCP server does not
speak."""

from __future__ import annotations

from typing import Any

from redline.annotations.document import quote_fields
from redline.annotations.models import Annotation
from redline.jsonio import iso
from redline.queues.annotation.items import WHOLE_TRACE
from redline.queues.annotation.service import QueueView
from redline.queues.models import QueueItem
from redline.reviews.annotate import Written
from redline.reviews.models import ReviewKey
from redline.reviews.said import Said


def _text(value: object) -> str | None:
    return str(value) if value is not None else None


def annotation_dict(annotation: Annotation) -> dict[str, Any]:
    """A rating or comment (with its quote and label-error flag) on a run or one of its steps."""
    return {
        "id": str(annotation.id),
        "runId": str(annotation.trace_id),
        "stepId": _text(annotation.step_id),
        "rating": annotation.rating,
        "comment": annotation.comment,
        "quote": quote_fields(annotation),
        "labelError": annotation.label_error,
        "labelErrorNote": annotation.label_error_note,
        "authorId": _text(annotation.author_id),
        "authorName": annotation.author_name,
        "createdAt": iso(annotation.created_at),
    }


def value_dict(value: Annotation | Written, span_id: str | None) -> dict[str, Any]:
    """A value for a review key (source `human`), or an evaluator's result (`evaluator`) or a person's
    correction of one (`parentId`), on the run or on the span `spanId`: stored, or as a save just wrote it."""
    body: dict[str, Any] = {
        "id": str(value.id),
        "key": value.key,
        "value": value.value,
        "explanation": value.explanation,
        "spanId": span_id,
        "source": value.source,
    }
    if value.output_type is not None:
        body["outputType"] = value.output_type
    if value.parent_id is not None:
        body["parentId"] = str(value.parent_id)
    body.update(
        authorId=_text(value.author_id), authorName=value.author_name, createdAt=iso(value.created_at)
    )
    return body


def said_dict(said: Said) -> dict[str, Any]:
    """A review value or evaluator result as `reviews.said` reads it, with the corrections people made of
    an evaluator result inside it."""
    body = value_dict(said.annotation, said.span_key)
    if said.is_evaluation:
        body["corrections"] = [value_dict(c.annotation, c.span_key) for c in said.corrections]
    return body


def queue_dict(view: QueueView) -> dict[str, Any]:
    """An annotation queue and how far its review has got (counts kept on its row, never counted)."""
    queue = view.queue
    return {
        "id": str(queue.id),
        "projectId": _text(queue.project_id),
        "name": queue.name,
        "description": queue.description,
        "reviewKeyIds": view.review_key_ids,
        "progress": {"items": view.items_count, "reviewed": view.reviewed_count},
        "createdAt": iso(queue.created_at),
        "updatedAt": iso(queue.updated_at),
    }


def queue_item_dict(item: QueueItem) -> dict[str, Any]:
    """An item of an annotation queue: the run (or one span of it, or a dataset's datapoint) waiting
    for review, and whether and by whom it was reviewed."""
    body: dict[str, Any] = {"id": str(item.id), "position": item.seq, "type": item.type}
    if item.trace_id is not None:
        body["runId"] = str(item.trace_id)
        body["spanId"] = None if item.span_key == WHOLE_TRACE else item.span_key
    if item.datapoint_id is not None:
        body["datapointId"] = str(item.datapoint_id)
    body.update(
        reviewed=item.reviewed_at is not None,
        reviewedBy=_text(item.reviewed_by),
        reviewedAt=iso(item.reviewed_at),
        reviewKeyIdsUsed=list(item.used_review_key_ids or []),
        addedAt=iso(item.added_at),
        addedByRules=[
            {"automationId": rule["ruleId"], "version": rule["version"]} for rule in item.added_by_rules or []
        ],
    )
    return body


def review_key_dict(review_key: ReviewKey) -> dict[str, Any]:
    """A review key: what a value for it may be (by `type`: one of its `options`, several when
    `multiple`; a number from `min` to `max`; or text)."""
    return {
        "id": str(review_key.id),
        "projectId": str(review_key.project_id),
        "key": review_key.key,
        "title": review_key.title,
        "description": review_key.description,
        "type": review_key.type,
        "options": review_key.options,
        "multiple": review_key.multiple,
        "min": review_key.min,
        "max": review_key.max,
    }
