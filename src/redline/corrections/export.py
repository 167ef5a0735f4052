"""A correction as the corrections surface sends it, and the export formats built on that shape.

Shared by `GET /v1/corrections…`, the export and `redline corrections list|export`, so a correction
reads the same everywhere.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

from redline import jsonio
from redline.corrections.models import Correction
from redline.jsonio import iso

FORMATS = ("csv", "jsonl")
MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/jsonl"}
# The CSV's columns, in order: the list's fields, nested ones as JSON text.
CSV_COLUMNS = (
    "id",
    "tenantId",
    "projectId",
    "runId",
    "subject",
    "decisions",
    "shouldCall",
    "mustNotCall",
    "answer",
    "shouldSay",
    "items",
    "why",
    "correctorGroupId",
    "expert",
    "madeBy",
    "participantId",
    "status",
    "sortedTo",
    "sorted",
    "link",
    "fixedIn",
    "reopenedIn",
    "statusNote",
    "createdAt",
    "supersededBy",
    "unregisteredAt",
)


def _subject(correction: Correction) -> dict[str, Any] | None:
    if correction.agent_id is not None:
        subject: dict[str, Any] = {"kind": "agent", "id": str(correction.agent_id)}
    elif correction.flow_id is not None:
        subject = {"kind": "flow", "id": str(correction.flow_id)}
    else:
        return None
    if correction.agent_version is not None:
        subject["version"] = correction.agent_version
    return subject


def correction_dict(correction: Correction) -> dict[str, Any]:
    """The correction as the list sends it: optional fields left out when unset, `expert` only if true."""
    fields: dict[str, Any] = {
        "id": str(correction.id),
        "tenantId": str(correction.workspace_id),
        "projectId": str(correction.project_id),
        "runId": str(correction.run_id),
        "subject": _subject(correction),
        "decisions": correction.decisions,
        "shouldCall": correction.should_call,
        "mustNotCall": correction.must_not_call,
        "answer": correction.answer,
        "shouldSay": correction.should_say,
        "items": correction.items,
        "why": correction.why,
        "correctorGroupId": str(correction.corrector_group_id) if correction.corrector_group_id else None,
        "expert": True if correction.expert else None,
        "madeBy": {"kind": correction.made_by_kind, "id": str(correction.made_by_id)},
        "participantId": correction.participant_id,
        "status": correction.status,
        "sortedTo": correction.sorted_to,
        "sorted": correction.sorted,
        "link": correction.link,
        "fixedIn": correction.fixed_in,
        "reopenedIn": correction.reopened_in,
        "statusNote": correction.status_note,
        "createdAt": iso(correction.created_at),
        "supersededBy": str(correction.superseded_by) if correction.superseded_by else None,
        "unregisteredAt": iso(correction.unregistered_at),
    }
    return {key: value for key, value in fields.items() if value is not None}


def with_run_copies(correction: Correction) -> dict[str, Any]:
    """What GET of one correction adds to the list's shape: the copies of its run."""
    body = correction_dict(correction)
    run: dict[str, Any] = {"runId": str(correction.run_id)}
    if "subject" in body:
        run["subject"] = body["subject"]
    run.update(
        {
            "input": correction.run_input,
            "output": correction.run_output,
            "capturedAt": iso(correction.run_captured_at),
        }
    )
    body["run"] = run
    return body


def jsonl_chunk(corrections: Iterable[Correction]) -> bytes:
    """Lines of the JSONL export, one correction each."""
    return b"".join(jsonio.dumps(correction_dict(correction)) + b"\n" for correction in corrections)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return jsonio.dumps_text(value)
    return str(value)


def csv_header() -> bytes:
    return _csv_rows([list(CSV_COLUMNS)])


def csv_chunk(corrections: Iterable[Correction]) -> bytes:
    """Rows of the CSV export (RFC 4180: CRLF line ends, fields quoted when they need it)."""
    rows = []
    for correction in corrections:
        body = correction_dict(correction)
        rows.append([_cell(body.get(column)) for column in CSV_COLUMNS])
    return _csv_rows(rows)


def _csv_rows(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue().encode()
