"""An export of corrections in the audit log: one event when it starts and one when it ends, sharing an
`exportId`. Kept apart from the surface so the HTTP export and `redline corrections export` record the
same events with the same data."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from redline.audit import service as audit
from redline.corrections.service import CorrectionFilters
from redline.db import new_id
from redline.identity.service import Actor


def described(filters: CorrectionFilters) -> dict[str, Any]:
    """The filters as the audit event records them: only those set."""
    shown: dict[str, Any] = {}
    for name, value in vars(filters).items():
        if value in (None, (), False) or (name == "source" and value == "all"):
            continue
        shown[name] = [str(v) for v in value] if isinstance(value, tuple) else str(value)
    return shown


def started(session: Session, actor: Actor, filters: CorrectionFilters, format: str) -> str:
    """Record that an export starts, before its first row, and return its `exportId`.

    Written before anything is sent: an export that can't be recorded must not send anything.
    """
    export_id = str(new_id())
    audit.record(
        session,
        actor,
        "corrections-export-started",
        {"exportId": export_id, "filters": described(filters), "format": format},
        project_id=filters.project_id,
    )
    return export_id


def ended(
    session: Session, actor: Actor, filters: CorrectionFilters, export_id: str, rows: int, outcome: str
) -> None:
    """Record how an export ended: the rows sent, and its `outcome`, `succeeded` when it ran to the end
    or `failed` when it broke off (a read failed, or the reader left)."""
    audit.record(
        session,
        actor,
        "corrections-exported",
        {"exportId": export_id, "rows": rows, "outcome": outcome},
        project_id=filters.project_id,
    )
