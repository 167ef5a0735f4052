"""The rm surface's objects as its document and the stashai client know them (wire-clients.md §2.3)."""

from __future__ import annotations

from typing import Any

from redline.annotations.document import feedback_fields
from redline.annotations.models import Annotation
from redline.annotations.service import TraceCounts
from redline.jsonio import iso
from redline.learning.models import FeedbackAssessment, RewardModel
from redline.learning.pairing import pairing_rule
from redline.learning.scoring import Scored
from redline.traces.models import Span, Step, Trace

PREFIX = "/api/v1/rm"


def latest_score_dict(scored: Scored | None) -> dict[str, Any] | None:
    if scored is None:
        return None
    return {
        "reward_model_id": str(scored.score.reward_model_id),
        "reward_model_name": scored.model_name,
        "score": scored.score.score,
    }


def action_credit_dict(scored: Scored | None) -> dict[str, Any] | None:
    """The mean credit of the latest scoring's actions; `revision` names that scoring."""
    if scored is None:
        return None
    return {"mean": scored.credit_mean, "count": len(scored.score.credits), "revision": str(scored.score.id)}


def score_dict(scored: Scored) -> dict[str, Any]:
    """One scoring of a trace: the score and each assistant action's credit."""
    score = scored.score
    return {
        "id": str(score.id),
        "trace_id": str(score.trace_id),
        "reward_model_id": str(score.reward_model_id),
        "reward_model_name": scored.model_name,
        "score": score.score,
        "exact": score.exact,
        "actions": score.credits,
        "scored_at": iso(score.scored_at),
    }


def trace_summary(trace: Trace, counts: TraceCounts, scored: Scored | None = None) -> dict[str, Any]:
    """A trace in a list: what it is, what people said about it, and its latest score if it has one."""
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
        "latest_score": latest_score_dict(scored),
        "created_at": iso(trace.created_at),
        "shared_training_allowed": False,
        "action_credit": action_credit_dict(scored),
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


def reward_model_dict(
    model: RewardModel, trace_count: int, progress: tuple[float, str | None] | None = None
) -> dict[str, Any]:
    """A model as the stashai client reads it, with how far training has got while it trains."""
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
        # The pairing rule its pairs were drawn by (`learning/pairing.py`): the config's, else the document's.
        "pairing": pairing_rule(model.training_config),
        "created_at": iso(model.created_at),
        "started_at": iso(model.started_at),
        "finished_at": iso(model.finished_at),
        "trace_count": trace_count,
        "progress": None if progress is None else {"fraction": progress[0], "note": progress[1]},
    }


def assessment_dict(assessment: FeedbackAssessment) -> dict[str, Any]:
    """One assessment as View learning lists it: the step it is about, what the LLM said and relied on,
    and whether it became a pair (its position among the model's pairs) or why not."""
    return {
        "position": assessment.position,
        "trace_id": str(assessment.trace_id),
        "step_id": str(assessment.step_id),
        "step_index": assessment.step_index,
        "target": assessment.target,
        "verdict": assessment.verdict,
        "basis": assessment.basis,
        "source_id": assessment.source_id,
        "source_kind": assessment.source_kind,
        "evidence_quote": assessment.evidence_quote,
        "rationale": assessment.rationale,
        "alternative": assessment.alternative,
        "review": assessment.review,
        "became_pair": assessment.pair_position is not None,
        "pair_position": assessment.pair_position,
        "skipped_reason": assessment.skipped_reason,
        "created_at": iso(assessment.created_at),
    }
