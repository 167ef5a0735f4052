"""Workspaces as tenants: who may make and see them, and how one is made whole.

A workspace holds its own admins, members, projects, tokens and everything under them; nothing
crosses from one to another (`redline.identity.service` scopes every lookup to the caller's). Above
the workspaces stand the installation admins: the first start's admin, and whoever the operator makes
one at the CLI. They make, list, export and delete workspaces, yet see into none but their own: an
installation admin of `default` reads another workspace's data only through its export.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from redline.db import new_id, utcnow
from redline.errors import Conflict, Forbidden, Invalid
from redline.identity.models import Principal, Project, Workspace
from redline.identity.service import Actor, IssuedToken, find_workspace, first_workspace, issue_token

NAME_FIELD = "name"
MAX_NAME_LENGTH = 200


@dataclass(frozen=True)
class NewWorkspace:
    """A workspace just made, with its first project and admin, and the admin's token secret: the only
    moment it exists outside the admin's hands."""

    workspace: Workspace
    project: Project
    admin: Principal
    admin_secret: str


@dataclass(frozen=True)
class WorkspaceSummary:
    """A workspace as a list shows it: what it holds, counted, never what is in it."""

    workspace: Workspace
    projects: int
    users: int


def require_installation_admin(actor: Actor, doing: str) -> None:
    """Refuse anyone but an installation admin. The refusal names no workspace, so asking about one
    that exists and one that doesn't answer alike."""
    if not actor.installation_admin:
        raise Forbidden(f"Only an installation admin can {doing}.", code="installation-admin-only")


def workspace_name(name: str) -> str:
    """A workspace's name as stored: trimmed, not blank, at most 200 characters."""
    cleaned = name.strip()
    if not cleaned:
        raise Invalid("A workspace needs a name.", details={"field": NAME_FIELD})
    if len(cleaned) > MAX_NAME_LENGTH:
        raise Invalid(
            f"A workspace's name has at most {MAX_NAME_LENGTH} characters.", details={"field": NAME_FIELD}
        )
    return cleaned


def new_workspace(session: Session, name: str) -> Workspace:
    """An empty workspace of this name; a name already taken is a conflict."""
    name = workspace_name(name)
    if session.scalar(select(Workspace.id).where(Workspace.name == name)) is not None:
        raise Conflict(f'The workspace name "{name}" is taken.', code="workspace-name-taken")
    workspace = Workspace(id=new_id(), name=name, created_at=utcnow())
    session.add(workspace)
    session.flush()
    return workspace


def first_admin(session: Session, workspace: Workspace, name: str, *, installation_admin: bool) -> Principal:
    """A workspace's first admin: a user with the admin reviewer role who holds every project."""
    admin = Principal(
        id=new_id(),
        workspace_id=workspace.id,
        name=name,
        kind="user",
        reviewer_role="admin",
        workspace_admin=True,
        installation_admin=installation_admin,
        created_at=utcnow(),
    )
    session.add(admin)
    session.flush()
    return admin


def create_workspace(
    session: Session, actor: Actor, name: str, *, admin_name: str = "admin", project_name: str = "default"
) -> NewWorkspace:
    """A workspace ready for its team: a first project and a workspace admin with a token, as the first
    start makes for the installation's first workspace. The new admin is not an installation admin:
    it runs its workspace, not the installation."""
    require_installation_admin(actor, "create workspaces")
    if not admin_name.strip():
        raise Invalid("The workspace's admin needs a name.", details={"field": "adminName"})
    made = _furnished(session, name, project_name, admin_name.strip(), installation_admin=False)
    return NewWorkspace(made.workspace, made.project, made.admin, made.issued.secret)


@dataclass(frozen=True)
class _Furnished:
    workspace: Workspace
    project: Project
    admin: Principal
    issued: IssuedToken


def _furnished(
    session: Session,
    name: str,
    project_name: str,
    admin_name: str,
    *,
    installation_admin: bool,
    secret: str | None = None,
) -> _Furnished:
    """A new workspace with what a team starts from: its first project, and its admin with a token
    (`secret` when given, else a new one). The first start and an installation admin both make them so."""
    workspace = new_workspace(session, name)
    project = Project(id=new_id(), workspace_id=workspace.id, name=project_name, created_at=utcnow())
    session.add(project)
    admin = first_admin(session, workspace, admin_name, installation_admin=installation_admin)
    return _Furnished(workspace, project, admin, issue_token(session, admin, "first start", secret))


def _summaries(session: Session, *where: ColumnElement[bool]) -> list[WorkspaceSummary]:
    projects = (
        select(func.count())
        .where(Project.workspace_id == Workspace.id)
        .correlate(Workspace)
        .scalar_subquery()
    )
    users = (
        select(func.count())
        .where(Principal.workspace_id == Workspace.id)
        .correlate(Workspace)
        .scalar_subquery()
    )
    rows = session.execute(
        select(Workspace, projects, users).where(*where).order_by(Workspace.created_at, Workspace.id)
    ).all()
    return [
        WorkspaceSummary(workspace, project_count, user_count)
        for workspace, project_count, user_count in rows
    ]


def list_workspaces(session: Session, actor: Actor) -> list[WorkspaceSummary]:
    """Every workspace of the installation, oldest first, with how many projects and users each holds."""
    require_installation_admin(actor, "list workspaces")
    return _summaries(session)


def summary_of(session: Session, workspace: Workspace) -> WorkspaceSummary:
    """One workspace with its counts, for a caller already allowed to see it (`workspace_for`)."""
    return _summaries(session, Workspace.id == workspace.id)[0]


def workspace_for(session: Session, actor: Actor, name_or_id: str, doing: str) -> Workspace:
    """`find_workspace` for an installation admin about to do `doing` to it."""
    require_installation_admin(actor, doing)
    return find_workspace(session, name_or_id)


def check_deletable(session: Session, actor: Actor, workspace: Workspace) -> None:
    """A workspace may go unless the caller signs in from it (deleting it would take the caller's own
    token away mid-request) or it is the installation's last."""
    if actor.principal_id is not None and workspace.id == actor.workspace_id:
        raise Conflict(
            "You can't delete the workspace your token belongs to: an installation admin of another "
            "workspace, or the operator at the CLI, can.",
            code="workspace-in-use",
        )
    if session.scalar(select(func.count()).select_from(Workspace)) == 1:
        raise Conflict(
            "This is the installation's only workspace: make another before deleting it.",
            code="workspace-in-use",
        )


@dataclass(frozen=True)
class Bootstrap:
    """What the first start made, or found made by an earlier one."""

    workspace: Workspace
    project: Project
    admin: Principal
    created: bool
    admin_secret: str | None


def bootstrap(
    session: Session,
    *,
    workspace_name: str,
    project_name: str,
    admin_name: str,
    admin_token: str | None,
) -> Bootstrap:
    """The first start makes a workspace, a project and its admin (an installation admin, and admin of
    that workspace) with a token; later starts find them."""
    workspace = first_workspace(session)
    if workspace is not None:
        project = session.scalars(
            select(Project).where(Project.workspace_id == workspace.id).order_by(Project.created_at).limit(1)
        ).one()
        admin = session.scalars(
            select(Principal)
            .where(Principal.workspace_id == workspace.id, Principal.workspace_admin.is_(True))
            .order_by(Principal.created_at)
            .limit(1)
        ).one()
        return Bootstrap(workspace, project, admin, created=False, admin_secret=None)
    made = _furnished(
        session, workspace_name, project_name, admin_name, installation_admin=True, secret=admin_token
    )
    return Bootstrap(
        made.workspace,
        made.project,
        made.admin,
        created=True,
        admin_secret=None if admin_token else made.issued.secret,
    )
