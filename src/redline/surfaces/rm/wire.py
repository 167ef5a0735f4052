"""The rm surface's objects as its document and the stashai client know them (wire-clients.md §2.3)."""

from __future__ import annotations

from typing import Any

from redline.annotations.document import feedback_fields
from redline.annotations.models import Annotation
from redline.annotations.service import TraceCounts
from redline.jsonio import iso
from redline.learning.models import PreferencePair, RewardModel
from redline.traces.models import Span, Step, Trace

PREFIX = "/api/v1/rm"


def trace_summary(trace: Trace, counts: TraceCounts) -> dict[str, Any]:
    """A trace in a list: what it is and what people said about it. Scores arrive with trained models."""
    return {
        "id": str(trace.id),
        "external_id": trace.external_id,
        "title": trace.title,
        "source_format": trace.source_format,
        "step_count": trace.step_count,
        "positive_count": counts.positive,
        "negative_count": counts.negative,
        "comment_count": counts.comments,
        "label_error_count": counts.label_errors,
        "latest_score": None,
        "created_at": iso(trace.created_at),
        "shared_training_allowed": False,
        "action_credit": None,
    }


def step_dict(step: Step) -> dict[str, Any]:
    return {
        "id": str(step.id),
        "index": step.index,
        "role": step.role,
        "content": step.content,
        "tool_name": step.tool_name,
        "tool_input": step.tool_input,
        "tool_call_id": step.tool_call_id,
        "metadata": step.meta or {},
    }


def span_dict(span: Span) -> dict[str, Any]:
    return {
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id,
        "kind": span.kind,
        "name": span.name,
        "attributes": span.attributes or {},
        "started_at": iso(span.started_at),
        "ended_at": iso(span.ended_at),
    }


def annotation_dict(annotation: Annotation, span_key: str | None = None) -> dict[str, Any]:
    """An annotation in the rm document's shape. One made on the reviews surface (a value for a review
    key, an evaluator result or a correction of one) has no rating or comment, so it says what it is
    with the reviews surface's fields after the document's: key, value, explanation, source, the span
    it is about (its own id, when the caller knows it), and what it corrects."""
    body = feedback_fields(annotation)
    if annotation.key is not None or annotation.source != "human":
        body.update(
            key=annotation.key,
            value=annotation.value,
            explanation=annotation.explanation,
            source=annotation.source,
            output_type=annotation.output_type,
            parent_id=str(annotation.parent_id) if annotation.parent_id else None,
            span_id=span_key,
            metadata=annotation.meta or {},
        )
    return body


def reward_model_dict(model: RewardModel, trace_count: int) -> dict[str, Any]:
    return {
        "id": str(model.id),
        "name": model.name,
        "base_model": model.base_model,
        "compute": model.compute,
        "epochs": model.epochs,
        "max_pairs": model.max_pairs,
        "status": model.status,
        "status_detail": model.status_detail,
        "num_pairs": model.num_pairs,
        "metrics": model.metrics,
        "error": model.error,
        "training_config": model.training_config,
        "created_at": iso(model.created_at),
        "started_at": iso(model.started_at),
        "finished_at": iso(model.finished_at),
        "trace_count": trace_count,
    }


def pair_dict(pair: PreferencePair) -> dict[str, Any]:
    return {
        "position": pair.position,
        "granularity": pair.granularity,
        "source": pair.source,
        "chosen": pair.chosen,
        "rejected": pair.rejected,
        "source_ids": pair.source_ids,
    }
