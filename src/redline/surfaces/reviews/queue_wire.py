"""Annotation queues, their items, automations and review places as orq-ai-sdk 4.17.13 reads them
(wire-clients.md §1.4): every field its models require is always present; extras it ignores
(`reviewed_count`, `position`, …) serve Redline's own screens."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from redline.jsonio import iso
from redline.queues.annotation.items import WHOLE_TRACE
from redline.queues.annotation.navigation import Held, Place
from redline.queues.annotation.places import Standing
from redline.queues.annotation.progress import QueueProgress
from redline.queues.annotation.reviewers import is_blind, reviewers_wire
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
        "reviewers_per_item": queue.reviewers_per_item,
        "hold_minutes": queue.hold_minutes,
        "blind": is_blind(queue),
        "reviewers": reviewers_wire(queue.reviewers),
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


def held_dict(held: Held, workspace_id: object) -> dict[str, Any]:
    """A place, with the caller's part in its item as `hold` (null past the end)."""
    return {
        **place_dict(held.place, workspace_id),
        "hold": standing_dict(held.standing) if held.standing is not None else None,
    }


def standing_dict(standing: Standing) -> dict[str, Any]:
    """The caller's part in an item (`held`, `reviewed`, `skipped`, or null), until when they hold it, and
    how many of its places are done or held by others."""
    return {
        "state": standing.mine,
        "held_until": iso(standing.held_until),
        "reviewers_done": standing.done,
        "held_by_others": standing.held_by_others,
        "reviewers_per_item": standing.places,
    }


def progress_dict(queue_id: object, progress: QueueProgress) -> dict[str, Any]:
    return {
        "annotation_queue_id": str(queue_id),
        "reviewers_per_item": progress.reviewers_per_item,
        "items": {
            "total": progress.items,
            "reviewed": progress.reviewed,
            "partly_reviewed": progress.partly,
            "untouched": progress.untouched,
            "held": progress.held,
        },
        "reviewers": [
            {
                "principal_id": str(one.principal_id),
                "name": one.name,
                "reviewed": one.reviewed,
                "held": one.held,
                "skipped": one.skipped,
            }
            for one in progress.reviewers
        ],
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
