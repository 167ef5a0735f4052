"""A workspace written out whole, as JSON lines, for a team that leaves or an archive before deletion.

The first line says what the file is; each line after it is one row: `{"table": …, "row": {…}}`, the
tables parents first (`ownership.owned_tables`), each column as stored: ids and times as text, JSON as
JSON, binary (a reward model's weights) as base64. Token secrets' hashes stay behind: a token is
listed, never carried to another installation. Everything is read in one transaction, so the file is
the workspace at one moment however long the writing takes.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from redline.identity.models import Workspace
from redline.jsonio import dumps, iso
from redline.migrations import commands as migrate
from redline.tenancy import ownership

FORMAT = "redline-workspace-export"
FORMAT_VERSION = 1
# Read a table this many rows at a time, so a workspace of millions of rows is never held in memory.
ROWS_PER_FETCH = 2_000
LEFT_OUT = {"tokens": frozenset({"secret_hash"})}


def _cell(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, bytes | memoryview):
        return {"base64": base64.b64encode(bytes(value)).decode()}
    return value


def export_lines(session: Session, workspace: Workspace) -> Iterator[bytes]:
    """The export of one workspace, line by line (each ends with a newline). The caller holds the read
    transaction open until the last line is taken."""
    yield (
        dumps(
            {
                "format": FORMAT,
                "version": FORMAT_VERSION,
                "schema": migrate.schema_state(session.connection()).current,
                "workspace": {
                    "id": str(workspace.id),
                    "name": workspace.name,
                    "createdAt": iso(workspace.created_at),
                },
            }
        )
        + b"\n"
    )
    ids = ownership.workspace_ids(session, workspace.id)
    for table in ownership.owned_tables():
        left_out = LEFT_OUT.get(table.name, frozenset())
        columns = [column for column in table.c if column.name not in left_out]
        rows = session.execute(
            select(*columns).where(ownership.rows_of(table, workspace.id, ids)),
            execution_options={"yield_per": ROWS_PER_FETCH},
        )
        for row in rows:
            record = {column.name: _cell(value) for column, value in zip(columns, row, strict=True)}
            yield dumps({"table": table.name, "row": record}) + b"\n"
