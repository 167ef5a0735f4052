"""Annotation queues, their items, automations and review places as orq-ai-sdk 4.17.13 reads them
(wire-clients.md §1.4): every field its models require is always present; extras it ignores
(`reviewed_count`, `position`, …) serve Redline's own screens."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from redline.jsonio import iso
from redline.queues.annotation.items import WHOLE_TRACE
from redline.queues.annotation.navigation import Place
from redline.queues.annotation.schemas import when_to_filters
from redline.queues.annotation.service import QueueView
from redline.queues.models import QueueItem, QueueRule


class ReviewsErrorBody(BaseModel):
    """The orq-ai-sdk's ErrorResponse: the sentence, and the HTTP status as `code`."""

    message: str
    code: int


REVIEWS_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"description": meaning, "model": ReviewsErrorBody}
    for status, meaning in {
        400: "The request breaks a rule; the message says which.",
        401: "No valid bearer token.",
        403: "The caller's role in the project is too low for this.",
        404: "Not found, or outside what the caller can see.",
        409: "The request clashes with what is stored.",
        413: "The body is over the configured limit.",
    }.items()
}


def _optional_id(value: object) -> str | None:
    return str(value) if value is not None else None


def queue_dict(view: QueueView, workspace_id: object) -> dict[str, Any]:
    queue = view.queue
    body: dict[str, Any] = {
        "_id": str(queue.id),
        "display_name": queue.name,
        "description": queue.description,
        "workspace_id": str(workspace_id),
        "human_review_ids": view.review_key_ids,
        "metadata": {"items_count": view.items_count, "reviewed_count": view.reviewed_count},
        "created": iso(queue.created_at),
        "updated": iso(queue.updated_at),
    }
    for name, value in (
        ("project_id", queue.project_id),
        ("created_by_id", queue.created_by),
        ("updated_by_id", queue.updated_by),
    ):
        if value is not None:
            body[name] = str(value)
    return body


def item_dict(item: QueueItem, workspace_id: object) -> dict[str, Any]:
    """An item; a whole trace's item names the trace's id as its span, which also takes it out again."""
    body: dict[str, Any] = {
        "_id": str(item.id),
        "annotation_queue_id": str(item.queue_id),
        "workspace_id": str(workspace_id),
        "type": item.type,
        "used_human_review_ids": list(item.used_review_key_ids or []),
        "seq": item.seq,
        "reviewed": item.reviewed_at is not None,
        "reviewed_by_id": _optional_id(item.reviewed_by),
        "reviewed_at": iso(item.reviewed_at),
        "added_by_id": _optional_id(item.added_by),
        "added_by_rules": [
            {"automation_id": rule["ruleId"], "version": rule["version"]}
            for rule in item.added_by_rules or []
        ],
        "created": iso(item.added_at),
    }
    if item.trace_id is not None:
        body["trace_id"] = str(item.trace_id)
        body["span_id"] = str(item.trace_id) if item.span_key == WHOLE_TRACE else item.span_key
    if item.datapoint_id is not None:
        body["datapoint_id"] = str(item.datapoint_id)
    return body


def place_dict(place: Place, workspace_id: object) -> dict[str, Any]:
    """What the review screen's header needs: "Item 7 of 43", and how many are reviewed."""
    return {
        "item": item_dict(place.item, workspace_id) if place.item is not None else None,
        "position": place.position,
        "total": place.total,
        "reviewed": place.reviewed,
    }


def automation_dict(rule: QueueRule) -> dict[str, Any]:
    return {
        "_id": str(rule.rule_id),
        "annotation_queue_id": str(rule.queue_id),
        "project_id": str(rule.project_id),
        "name": rule.name,
        "version": rule.version,
        "filters": when_to_filters(rule.when),
        "sample": rule.sample,
        "enabled": rule.enabled,
        "created_by_id": _optional_id(rule.created_by),
        "created": iso(rule.created_at),
    }
