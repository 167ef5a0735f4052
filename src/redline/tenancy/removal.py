"""Deleting a workspace with everything in it, in one transaction: all of it goes, or none.

The foreign keys cascade from the workspace to its projects, principals and on down; the kept counts,
which carry no foreign key, go first, while the rules and projects they are keyed by can still be
found. What was deleted is counted first, for the caller to say.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from redline.identity.models import Workspace
from redline.tenancy import ownership


@dataclass(frozen=True)
class Deleted:
    """What a deleted workspace held."""

    name: str
    projects: int
    runs: int
    rows: int


def delete_workspace(session: Session, workspace: Workspace) -> Deleted:
    """Delete the workspace and every row of it. The caller has checked who may
    (`identity.workspaces.check_deletable`)."""
    ids = ownership.workspace_ids(session, workspace.id)
    counts: dict[str, int] = {}
    for table in ownership.owned_tables():
        picked = ownership.rows_of(table, workspace.id, ids)
        counts[table.name] = session.scalar(select(func.count()).select_from(table).where(picked)) or 0
        if table.name in ownership.KEPT_COUNTS:
            session.execute(delete(table).where(picked))
    session.execute(delete(Workspace).where(Workspace.id == workspace.id))
    return Deleted(workspace.name, counts["projects"], counts["traces"], sum(counts.values()) + 1)
