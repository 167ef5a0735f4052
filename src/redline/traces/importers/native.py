"""Redline's native format: the run object of `POST /v1/runs`, one per JSONL line (or a JSON array).

This is what `redline export runs` writes, so an export of one project imports into another: the
record's own `projectId` is replaced by the project being imported into.
"""

from __future__ import annotations

import uuid

from redline.traces.importers.base import Importer
from redline.traces.importers.records import JSONObject, RecordImporter
from redline.traces.schemas import RunIn

PROJECT_KEYS = ("projectId", "project_id")


def build_run(record: JSONObject, project_id: uuid.UUID) -> RunIn:
    """The record validated as posted, in the importing project whatever project it names."""
    data = {key: value for key, value in record.items() if key not in PROJECT_KEYS}
    data["projectId"] = project_id
    return RunIn.model_validate(data)


def looks_like_native(record: JSONObject) -> bool:
    """Every run object has a status and usually steps; no chat format has either at its top level."""
    return "status" in record or "steps" in record


IMPORTER: Importer = RecordImporter(
    name="native",
    description="Redline runs as POST /v1/runs takes them (and redline export writes them), one per line",
    looks_like=looks_like_native,
    build=build_run,
    require_steps=False,
)
