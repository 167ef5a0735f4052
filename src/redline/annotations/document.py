"""An annotation as the rm document shows a rating or comment: one shape for the rm surface's answers
and for the console's in-place saves, whose script renders what the page renders."""

from __future__ import annotations

from typing import Any

from redline.annotations.models import Annotation
from redline.jsonio import iso


def feedback_fields(annotation: Annotation) -> dict[str, Any]:
    """The document's fields of a rating or comment, in its order (rm-annotations.txt)."""
    return {
        "id": str(annotation.id),
        "trace_id": str(annotation.trace_id),
        "step_id": str(annotation.step_id) if annotation.step_id else None,
        "rating": annotation.rating,
        "comment": annotation.comment,
        "quote": quote_fields(annotation),
        "label_error": annotation.label_error,
        "label_error_note": annotation.label_error_note,
        "author_id": str(annotation.author_id) if annotation.author_id else None,
        "author_name": annotation.author_name,
        "created_at": iso(annotation.created_at),
    }


def quote_fields(annotation: Annotation) -> dict[str, Any] | None:
    """The quote as answers show it: the anchor as given (text, prefix, suffix), where it is in the step's
    text now (`start`, `end`; null when detached), and how it stands there (`anchor`: exact, fuzzy or
    detached, `annotations.quotes`)."""
    if annotation.quote is None:
        return None
    return {**annotation.quote, "anchor": annotation.quote_anchor}
