"""Human reviews, annotations, evaluator results and traces as the orq-ai-sdk reads them (snake_case,
`_id`, ISO times); fields the SDK's models lack (`annotations`, `evaluations`) it ignores.

A trace or span field the clients model but Redline doesn't know (a span's status, a trace's end) is left
out rather than sent as null: @orq-ai/node's schemas take such a field as absent or a string, never null,
and the Python SDK reads an absent field as None all the same."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from redline.jsonio import iso
from redline.reviews.models import ReviewKey
from redline.reviews.said import Said
from redline.reviews.traceviews import SpanView, TraceView
from redline.reviews.wire import evaluation_dict, said_dict
from redline.traces.attributes import MODEL_ATTRIBUTES, PROVIDER_ATTRIBUTES, text_attribute
from redline.traces.models import Span

_USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")


def review_key_dict(review_key: ReviewKey) -> dict[str, Any]:
    """§1.5's proposed shape; `option_details` keeps each option's description beside the plain list."""
    body: dict[str, Any] = {
        "_id": str(review_key.id),
        "key": review_key.key,
        "display_name": review_key.title,
        "description": review_key.description,
        "type": review_key.type,
        "project_id": str(review_key.project_id),
        "workspace_id": str(review_key.workspace_id),
        "created": iso(review_key.created_at),
        "updated": iso(review_key.updated_at),
    }
    if review_key.type == "categorical":
        options = review_key.options or []
        body["options"] = [option["value"] for option in options]
        body["option_details"] = options
        body["multiple"] = review_key.multiple
    if review_key.type == "range":
        body["min"] = review_key.min
        body["max"] = review_key.max
    return body


def _reviews(said: list[Said]) -> dict[str, Any]:
    return {
        "annotations": [said_dict(item) for item in said if not item.is_evaluation],
        "evaluations": [evaluation_dict(item) for item in said if item.is_evaluation],
    }


def _duration_ms(started: datetime | None, ended: datetime | None) -> float | None:
    if started is None or ended is None:
        return None
    return (ended - started).total_seconds() * 1000


def _usage(attributes: dict[str, Any]) -> dict[str, int] | None:
    usage = attributes.get("usage")
    if not isinstance(usage, dict):
        return None
    counts = {
        name: usage[name]
        for name in _USAGE_FIELDS
        if isinstance(usage.get(name), int) and not isinstance(usage.get(name), bool)
    }
    return counts or None


def _meta_text(meta: dict[str, Any] | None, name: str) -> str | None:
    value = (meta or {}).get(name)
    return value if isinstance(value, str) else None


def _known(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields with a value: what the clients model as optional is absent, never null."""
    return {name: value for name, value in fields.items() if value is not None}


def trace_page(items: list[dict[str, Any]], token: str | None) -> dict[str, Any]:
    """A page of traces or spans: `next_page_token` only while there is a next page."""
    return _known({"object": "list", "data": items, "has_more": token is not None, "next_page_token": token})


def trace_summary(view: TraceView) -> dict[str, Any]:
    """TraceSummary (§1.7): status is the run's own (completed, failed, …)."""
    trace = view.trace
    agent = _known({"id": str(trace.agent_id), "name": view.agent_name}) if trace.agent_id else None
    modelled = {
        "object": "trace",
        "trace_id": str(trace.id),
        "root_span_id": view.root_span_id,
        "name": trace.title or view.agent_name or view.flow_name or trace.external_id,
        "status": trace.status,
        "started_at": iso(trace.started_at),
        "ended_at": iso(trace.ended_at),
        "duration_ms": _duration_ms(trace.started_at, trace.ended_at),
        "project_id": str(trace.project_id),
        "identity_id": _meta_text(trace.meta, "identity_id"),
        "session_id": _meta_text(trace.meta, "session_id"),
        "thread_id": _meta_text(trace.meta, "thread_id"),
        "agent": agent,
    }
    return {
        **_known(modelled),
        "external_id": trace.external_id,
        "agent_version": trace.agent_version,
        "metadata": trace.meta or {},
        **_reviews(view.said),
    }


def span_summary(view: SpanView) -> dict[str, Any]:
    """SpanSummary (§1.7): `type` is `span.<kind>`, provider and model read from the attributes."""
    span: Span = view.span
    attributes = span.attributes or {}
    modelled = {
        "object": "span",
        "trace_id": str(span.trace_id),
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id,
        "name": span.name,
        "type": f"span.{span.kind}" if span.kind else "span",
        "status": text_attribute(attributes, ("status",)),
        "started_at": iso(span.started_at),
        "ended_at": iso(span.ended_at),
        "duration_ms": _duration_ms(span.started_at, span.ended_at),
        "provider": text_attribute(attributes, PROVIDER_ATTRIBUTES),
        "model": text_attribute(attributes, MODEL_ATTRIBUTES),
        "usage": _usage(attributes),
        "level": view.level,
        "has_children": view.has_children,
    }
    return {**_known(modelled), **_reviews(view.said)}
