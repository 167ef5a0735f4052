"""Exporting and deleting a workspace, for installation admins, with the audit log told of each."""

from __future__ import annotations

from sqlalchemy.orm import Session

from redline.audit import service as audit
from redline.identity.models import Workspace
from redline.identity.service import Actor
from redline.identity.workspaces import check_deletable, workspace_for
from redline.tenancy.removal import Deleted, delete_workspace


def workspace_to_export(session: Session, actor: Actor, name_or_id: str) -> Workspace:
    """The workspace an installation admin exports, with the export noted in the caller's audit log
    (written in its own transaction, before the first line: an export that can't be noted is not sent)."""
    workspace = workspace_for(session, actor, name_or_id, "export workspaces")
    audit.record(
        session, actor, "workspace-exported", {"workspaceId": str(workspace.id), "name": workspace.name}
    )
    return workspace


def remove_workspace(session: Session, actor: Actor, name_or_id: str) -> Deleted:
    """Delete a workspace whole, noted in the caller's audit log (unless the operator deletes the very
    workspace it acts in: that log goes with it)."""
    workspace = workspace_for(session, actor, name_or_id, "delete workspaces")
    check_deletable(session, actor, workspace)
    workspace_id = workspace.id
    deleted = delete_workspace(session, workspace)
    if actor.workspace_id != workspace_id:
        audit.record(
            session,
            actor,
            "workspace-deleted",
            {
                "workspaceId": str(workspace_id),
                "name": deleted.name,
                "projects": deleted.projects,
                "runs": deleted.runs,
                "rows": deleted.rows,
            },
        )
    return deleted
