"""The annotation export format of rm-annotations.txt ("Exporting annotations"): one JSON object per
line with exactly the document's fields, shared by the HTTP export and `redline annotations export`."""

from __future__ import annotations

from typing import Any

from redline.annotations.service import ExportRow


def export_line(annotation: ExportRow) -> dict[str, Any]:
    """One line of GET /export/annotations: exactly the document's fields, in its order."""
    quote = annotation.quote
    return {
        "trace_id": str(annotation.trace_id),
        "trace_external_id": annotation.trace_external_id,
        "step_index": annotation.step_index,
        "rating": annotation.rating,
        "comment": annotation.comment,
        "quote": {key: quote[key] for key in ("text", "prefix", "suffix")} if quote else None,
        "label_error": annotation.label_error,
        "label_error_note": annotation.label_error_note,
        "author": annotation.author_name,
        "created_at": annotation.created_at.isoformat(),
    }
