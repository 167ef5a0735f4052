"""What people and evaluators said about a run, as the reviews surface answers it (snake_case, `_id`, ISO
times): one shape for `/v2`'s annotation and evaluation routes and for experiments' results, over HTTP
or in `redline experiments export`, so a value reads the same wherever it is shown."""

from __future__ import annotations

from typing import Any

from redline.annotations.models import Annotation
from redline.jsonio import iso
from redline.reviews.annotate import Written
from redline.reviews.said import Said


def _author(annotation: Annotation | Written) -> dict[str, Any]:
    return {
        "author_id": str(annotation.author_id) if annotation.author_id else None,
        "author_name": annotation.author_name,
        "metadata": annotation.meta or {},
        "created": iso(annotation.created_at),
        "updated": iso(annotation.updated_at),
    }


def annotation_dict(annotation: Annotation | Written, span_key: str | None) -> dict[str, Any]:
    """A human review value, or a correction (then with `parent_annotation_id`): read, or just written."""
    body: dict[str, Any] = {
        "_id": str(annotation.id),
        "trace_id": str(annotation.trace_id),
        "span_id": span_key,
        "key": annotation.key,
        "value": annotation.value,
        "explanation": annotation.explanation,
        "source": annotation.source,
    }
    if annotation.parent_id is not None:
        body["parent_annotation_id"] = str(annotation.parent_id)
        body["output_type"] = annotation.output_type
    return {**body, **_author(annotation)}


def said_dict(said: Said) -> dict[str, Any]:
    return annotation_dict(said.annotation, said.span_key)


def evaluation_dict(said: Said) -> dict[str, Any]:
    """An evaluator's result, with the corrections people made of it beside it."""
    annotation = said.annotation
    return {
        "_id": str(annotation.id),
        "trace_id": str(annotation.trace_id),
        "span_id": said.span_key,
        "evaluator": annotation.key,
        "output_type": annotation.output_type,
        "value": annotation.value,
        "explanation": annotation.explanation,
        "source": annotation.source,
        "created": iso(annotation.created_at),
        "updated": iso(annotation.updated_at),
        "corrections": [said_dict(correction) for correction in said.corrections],
    }
