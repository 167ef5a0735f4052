"""Rules of identity and access: who a token is, what a principal may do in a project.

Anything outside the caller's workspace is reported as not found (never forbidden), so ids never
leak across tenants. A project inside the workspace that the caller has no membership in is
likewise not found; a member whose role is too low is forbidden.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, TypeVar, cast, get_args

from sqlalchemy import Select, bindparam, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from redline.db import in_chunks, new_id, parse_id, utcnow
from redline.errors import Conflict, Forbidden, Invalid, NotFound, Unauthenticated, not_in_workspace
from redline.identity.models import InstanceSetting, Membership, Principal, Project, Token, Workspace

ProjectRole = Literal["read", "write", "publish", "admin"]
ReviewerRole = Literal["standard", "senior", "admin"]
PrincipalKind = Literal["user", "service"]
PROJECT_ROLES: tuple[ProjectRole, ...] = get_args(ProjectRole)
REVIEWER_ROLES: tuple[ReviewerRole, ...] = get_args(ReviewerRole)
PRINCIPAL_KINDS: tuple[PrincipalKind, ...] = get_args(PrincipalKind)

TOKEN_SCHEME = "rl_"
TOKEN_PREFIX_LENGTH = 11
# Recording every use would turn each read into a write; a minute is precise enough to spot stale tokens.
LAST_USED_RESOLUTION = timedelta(minutes=1)
SECRET_KEY_SETTING = "secret_key"


@dataclass(frozen=True)
class Actor:
    """Whoever a service acts for: a principal behind a token, or the local operator at the CLI."""

    workspace_id: uuid.UUID
    principal_id: uuid.UUID | None
    name: str
    kind: Literal["user", "service", "operator"]
    reviewer_role: ReviewerRole | None = None
    workspace_admin: bool = False
    token_id: uuid.UUID | None = None
    installation_admin: bool = False

    @classmethod
    def of(cls, principal: Principal, token_id: uuid.UUID | None = None) -> Actor:
        return cls(
            workspace_id=principal.workspace_id,
            principal_id=principal.id,
            name=principal.name,
            kind=principal.kind,  # type: ignore[arg-type]
            reviewer_role=principal.reviewer_role,  # type: ignore[arg-type]
            workspace_admin=principal.workspace_admin,
            token_id=token_id,
            installation_admin=principal.installation_admin,
        )


@dataclass(frozen=True)
class IssuedToken:
    """A token just made: the only moment its secret exists outside the caller's hands."""

    token: Token
    secret: str


def hash_secret(secret: str) -> str:
    # Tokens carry 256 random bits, so a fast hash is enough: there is nothing to brute-force.
    return hashlib.sha256(secret.encode()).hexdigest()


def issue_token(session: Session, principal: Principal, name: str, secret: str | None = None) -> IssuedToken:
    secret = secret or TOKEN_SCHEME + secrets.token_urlsafe(32)
    token = Token(
        id=new_id(),
        principal_id=principal.id,
        name=name,
        prefix=secret[:TOKEN_PREFIX_LENGTH],
        secret_hash=hash_secret(secret),
        created_at=utcnow(),
    )
    session.add(token)
    session.flush()
    return IssuedToken(token=token, secret=secret)


def instance_secret(session: Session, configured: str | None) -> str:
    """The key that signs session cookies: the configured one, else one made once and kept in the
    store, so every process sharing the store signs alike and a restart logs nobody out."""
    if configured:
        return configured
    setting = session.get(InstanceSetting, SECRET_KEY_SETTING)
    if setting is None:
        setting = InstanceSetting(key=SECRET_KEY_SETTING, value=secrets.token_urlsafe(48))
        session.add(setting)
        session.flush()
    return setting.value


def first_workspace(session: Session) -> Workspace | None:
    """The installation's oldest workspace, the one the first start made; None before the first start."""
    return session.scalars(select(Workspace).order_by(Workspace.created_at, Workspace.id).limit(1)).first()


def default_workspace(session: Session) -> Workspace:
    """The installation's first workspace: the one the first start made, and the CLI works in unless
    told otherwise (`--workspace`)."""
    workspace = first_workspace(session)
    if workspace is None:
        raise NotFound(
            "workspace", "default", "No workspace yet: run `redline db upgrade` or `redline serve`."
        )
    return workspace


def find_workspace(session: Session, name_or_id: str) -> Workspace:
    """A workspace by id or by name, for callers allowed to see every workspace (installation admins,
    the operator at the CLI)."""
    ident = parse_id(name_or_id)
    workspace = session.get(Workspace, ident) if ident is not None else None
    if workspace is None:
        workspace = session.scalar(select(Workspace).where(Workspace.name == name_or_id))
    if workspace is None:
        raise NotFound(
            "workspace", name_or_id, f'No workspace "{name_or_id}": `redline workspaces list` names them.'
        )
    return workspace


def operator(session: Session, workspace: str | None = None) -> Actor:
    """The local operator at the CLI: an installation admin, and a workspace admin of the workspace
    named (by name or id; the installation's first when none is), with no principal. Access to the
    database is access to everything."""
    chosen = find_workspace(session, workspace) if workspace else default_workspace(session)
    return Actor(
        workspace_id=chosen.id,
        principal_id=None,
        name="operator",
        kind="operator",
        workspace_admin=True,
        installation_admin=True,
    )


# ------------------------------------------------------------------------------------------------ tokens


# Who a token stands for, as plain columns rather than Token and Principal entities, in a statement built
# once: this runs on every API request (bench/README.md).
_TOKEN_COLUMNS = (
    Token.id,
    Token.revoked_at,
    Token.last_used_at,
    Principal.workspace_id,
    Principal.id,
    Principal.name,
    Principal.kind,
    Principal.reviewer_role,
    Principal.workspace_admin,
    Principal.installation_admin,
)
TOKEN_COLUMN_COUNT = len(_TOKEN_COLUMNS)
_TOKEN_AND_PRINCIPAL = select(*_TOKEN_COLUMNS).join(Principal, Principal.id == Token.principal_id)
_TOKEN_ACTOR = _TOKEN_AND_PRINCIPAL.where(Token.secret_hash == bindparam("secret_hash"))
_TOKEN_ACTOR_BY_ID = _TOKEN_AND_PRINCIPAL.where(Token.id == bindparam("token_id"))


MISSING_TOKEN = "Missing bearer token: send Authorization: Bearer <token>."
INVALID_TOKEN = "The bearer token is not valid or has been revoked."


def caller_and(*columns: Any) -> Select[Any]:
    """The caller behind the bearer secret (bound as `secret_hash`: `secret_parameters`) with more columns
    after its own, for a write that reads who calls and what it is about in one statement; join what
    the columns come from with `Principal.id` in hand. `caller_of` reads the row."""
    wanted: list[Any] = [*_TOKEN_COLUMNS, *columns]
    return (
        select(*wanted)
        .select_from(Token)
        .join(Principal, Principal.id == Token.principal_id)
        .where(Token.secret_hash == bindparam("secret_hash"))
    )


def secret_parameters(secret: str | None) -> dict[str, Any]:
    """The parameters of a statement that finds the bearer of `secret` (`caller_and`'s, `authenticate`'s);
    refused when there is none."""
    if not secret:
        raise Unauthenticated(MISSING_TOKEN)
    return {"secret_hash": hash_secret(secret)}


def caller_of(session: Session, row: Sequence[Any] | None) -> Actor:
    """The actor of a row of `caller_and` (None: no such token), refused as `authenticate` refuses; its
    last-used time written in the same transaction when due. The caller's own columns come after
    `TOKEN_COLUMN_COUNT`."""
    actor, due = _token_actor(row)
    if due and actor.token_id is not None:
        touch_token(session, actor.token_id)
    return actor


def _token_actor(row: Sequence[Any] | None) -> tuple[Actor, bool]:
    """The actor of a row that starts with the token's columns, and whether its last-used time is due
    for an update; refused for no row or a revoked token."""
    if row is None or row[1] is not None:
        raise Unauthenticated(INVALID_TOKEN, code="auth-invalid")
    last_used_at = row[2]
    return _actor_of_row(row), last_used_at is None or utcnow() - last_used_at >= LAST_USED_RESOLUTION


def authenticate(session: Session, secret: str | None) -> tuple[Actor, bool]:
    """The actor a bearer secret stands for, and whether its last-used time is due for an update."""
    return _token_actor(session.connection().execute(_TOKEN_ACTOR, secret_parameters(secret)).first())


def actor_for_token(session: Session, token_id: uuid.UUID) -> Actor:
    """The actor a console session stands for: the session keeps its token's id, never the secret, so
    revoking the token ends every session signed in with it."""
    row = session.connection().execute(_TOKEN_ACTOR_BY_ID, {"token_id": token_id}).first()
    if row is None or row[1] is not None:
        raise Unauthenticated("The token this session signed in with has been revoked.", code="auth-invalid")
    return _actor_of_row(row)


def _actor_of_row(row: Sequence[Any]) -> Actor:
    (
        token_id,
        _,
        _,
        workspace_id,
        principal_id,
        name,
        kind,
        reviewer_role,
        workspace_admin,
        installation_admin,
    ) = row[:TOKEN_COLUMN_COUNT]
    return Actor(
        workspace_id=workspace_id,
        principal_id=principal_id,
        name=name,
        kind=kind,
        reviewer_role=reviewer_role,
        workspace_admin=workspace_admin,
        token_id=token_id,
        installation_admin=installation_admin,
    )


def touch_token(session: Session, token_id: uuid.UUID, at: datetime | None = None) -> None:
    token = session.get(Token, token_id)
    if token is not None:
        token.last_used_at = at or utcnow()


def _principal_in_workspace(session: Session, actor: Actor, principal_id: uuid.UUID) -> Principal:
    principal = session.get(Principal, principal_id)
    if principal is None or principal.workspace_id != actor.workspace_id:
        raise NotFound("user", principal_id)
    return principal


def _require_workspace_admin(actor: Actor, doing: str) -> None:
    if not actor.workspace_admin:
        raise Forbidden(f"Only a workspace admin can {doing}.")


def create_token(session: Session, actor: Actor, principal_id: uuid.UUID, name: str) -> IssuedToken:
    principal = _principal_in_workspace(session, actor, principal_id)
    if actor.principal_id != principal.id:
        _require_workspace_admin(actor, "make tokens for someone else")
    return issue_token(session, principal, name)


def list_tokens(session: Session, actor: Actor, principal_id: uuid.UUID) -> list[Token]:
    principal = _principal_in_workspace(session, actor, principal_id)
    if actor.principal_id != principal.id:
        _require_workspace_admin(actor, "see someone else's tokens")
    return list(
        session.scalars(select(Token).where(Token.principal_id == principal.id).order_by(Token.created_at))
    )


def revoke_token(session: Session, actor: Actor, token_id: uuid.UUID) -> Token:
    """Revoking is for the token's holder and workspace admins; a revoked token stays listed, unusable."""
    token = session.get(Token, token_id)
    principal = session.get(Principal, token.principal_id) if token else None
    if token is None or principal is None or principal.workspace_id != actor.workspace_id:
        raise NotFound("token", token_id)
    if actor.principal_id != principal.id:
        _require_workspace_admin(actor, "revoke someone else's token")
    if token.revoked_at is None:
        token.revoked_at = utcnow()
    session.flush()
    return token


# ------------------------------------------------------------------------------------------------- users


def create_user(
    session: Session,
    actor: Actor,
    *,
    name: str,
    kind: PrincipalKind,
    reviewer_role: ReviewerRole | None = None,
    workspace_admin: bool = False,
    installation_admin: bool = False,
) -> Principal:
    _require_workspace_admin(actor, "add users")
    if kind == "service" and reviewer_role is not None:
        raise Invalid("A service has no reviewer role: only users review.", details={"field": "reviewerRole"})
    if installation_admin and not actor.installation_admin:
        raise Forbidden("Only an installation admin can make another.", code="installation-admin-only")
    if installation_admin and kind == "service":
        raise Invalid(
            "A service can't be an installation admin: only people run the installation.",
            details={"field": "installationAdmin"},
        )
    taken = session.scalar(
        select(Principal.id).where(Principal.workspace_id == actor.workspace_id, Principal.name == name)
    )
    if taken is not None:
        raise Conflict(f'The name "{name}" is taken in this workspace.', code="user-name-taken")
    principal = Principal(
        id=new_id(),
        workspace_id=actor.workspace_id,
        name=name,
        kind=kind,
        reviewer_role=(reviewer_role or "standard") if kind == "user" else None,
        workspace_admin=workspace_admin or installation_admin,
        installation_admin=installation_admin,
        created_at=utcnow(),
    )
    session.add(principal)
    session.flush()
    return principal


def list_users(session: Session, actor: Actor) -> list[Principal]:
    return list(
        session.scalars(
            select(Principal)
            .where(Principal.workspace_id == actor.workspace_id)
            .order_by(Principal.created_at, Principal.id)
        )
    )


def find_user(session: Session, actor: Actor, name_or_id: str) -> Principal:
    """A principal by id or by name, for the CLI where people type names."""
    try:
        return _principal_in_workspace(session, actor, uuid.UUID(name_or_id))
    except ValueError:
        principal = session.scalar(
            select(Principal).where(
                Principal.workspace_id == actor.workspace_id, Principal.name == name_or_id
            )
        )
        if principal is None:
            raise NotFound("user", name_or_id) from None
        return principal


# ---------------------------------------------------------------------------------------------- projects


def create_project(session: Session, actor: Actor, name: str) -> Project:
    _require_workspace_admin(actor, "create projects")
    taken = session.scalar(
        select(Project.id).where(Project.workspace_id == actor.workspace_id, Project.name == name)
    )
    if taken is not None:
        raise Conflict(f'The project name "{name}" is taken in this workspace.', code="project-name-taken")
    project = Project(id=new_id(), workspace_id=actor.workspace_id, name=name, created_at=utcnow())
    session.add(project)
    session.flush()
    return project


def set_sort_end_user_corrections(
    session: Session, actor: Actor, project_id: uuid.UUID, value: bool
) -> Project:
    """Whether end users' corrections are sorted on save like the others; a project admin's choice."""
    project = require_project_role(session, actor, project_id, "admin")
    project.sort_end_user_corrections = value
    session.flush()
    return project


def default_project_id(session: Session, workspace_id: uuid.UUID) -> uuid.UUID | None:
    """The workspace's Default project, as kindgi's client names one per tenant: its first, the one
    made on the first start (`init_project`), oldest by its id among equals."""
    return session.scalar(
        select(Project.id)
        .where(Project.workspace_id == workspace_id)
        .order_by(Project.created_at, Project.id)
        .limit(1)
    )


def default_project(session: Session, actor: Actor) -> Project:
    """The Default project, to an actor who may read it; not found otherwise, as when there is none."""
    missing = NotFound("project", "default")
    project_id = default_project_id(session, actor.workspace_id)
    if project_id is None:
        raise missing
    return require_project_role(session, actor, project_id, "read", missing)


def visible_projects(session: Session, actor: Actor) -> list[tuple[Project, ProjectRole]]:
    """The projects the actor can see, each with the actor's role in it, oldest first."""
    projects = session.scalars(
        select(Project)
        .where(Project.workspace_id == actor.workspace_id)
        .order_by(Project.created_at, Project.id)
    ).all()
    if actor.workspace_admin:
        return [(project, "admin") for project in projects]
    roles = dict(
        session.execute(
            select(Membership.project_id, Membership.role).where(
                Membership.principal_id == actor.principal_id
            )
        ).all()
    )
    return [(project, roles[project.id]) for project in projects if project.id in roles]  # type: ignore[misc]


def readable_project_ids(session: Session, actor: Actor, project_id: uuid.UUID | None) -> list[uuid.UUID]:
    """The projects a list may draw from: the one asked for (read access needed), or every readable one."""
    if project_id is not None:
        return [require_project_role(session, actor, project_id, "read").id]
    return [project.id for project, _ in visible_projects(session, actor)]


def holds(role: ProjectRole | None, needed: ProjectRole) -> bool:
    """Whether a role (None: no membership) is `needed` or above: read < write < publish < admin."""
    return role is not None and PROJECT_ROLES.index(role) >= PROJECT_ROLES.index(needed)


def default_write_project(session: Session, actor: Actor) -> Project:
    """The actor's oldest project it may write to: where a caller that names no project puts what it
    adds (traces imported on the rm surface, whose clients know nothing of projects)."""
    for project, role in visible_projects(session, actor):
        if holds(role, "write"):
            return project
    raise Forbidden(
        "This needs the write role in a project, and you have it in none; "
        "ask a project admin to make you a writer."
    )


def find_project(session: Session, actor: Actor, name_or_id: str) -> Project:
    """A project by id or by name, for the CLI where people type names. One the actor can't read is not
    found as it was named: a name never answers with the id of a project the caller may not see."""
    missing = NotFound("project", name_or_id)
    try:
        project_id = uuid.UUID(name_or_id)
    except ValueError:
        project = session.scalar(
            select(Project).where(Project.workspace_id == actor.workspace_id, Project.name == name_or_id)
        )
        if project is None:
            raise missing from None
        project_id = project.id
    return require_project_role(session, actor, project_id, "read", missing)


def project_role(session: Session, actor: Actor, project: Project) -> ProjectRole | None:
    if actor.workspace_admin:
        return "admin"
    role = session.scalar(
        select(Membership.role).where(
            Membership.project_id == project.id, Membership.principal_id == actor.principal_id
        )
    )
    return role  # type: ignore[return-value]


def require_project_role(
    session: Session,
    actor: Actor,
    project_id: uuid.UUID,
    needed: ProjectRole,
    missing: NotFound | None = None,
) -> Project:
    """The project, if the actor holds at least `needed` in it; not found if it can't see it at all (in
    `missing`'s sentence, when the caller asked for something in the project rather than for it)."""
    project = session.get(Project, project_id)
    if project is None:
        raise missing or NotFound("project", project_id)
    return check_role(session, actor, project, needed, missing)


def wire_project(session: Session, actor: Actor, value: str, needed: ProjectRole) -> Project:
    """`require_project_role` for a project a /v2 request names by its id as text: one that is no id of
    ours or lies outside the caller's workspace is not found, in the reviews surface's sentence."""
    project_id = parse_id(value)
    project = session.get(Project, project_id) if project_id else None
    if project is None or project.workspace_id != actor.workspace_id:
        raise not_in_workspace("project", "Project", value, actor.workspace_id)
    return check_role(session, actor, project, needed)


def check_role(
    session: Session, actor: Actor, project: Project, needed: ProjectRole, missing: NotFound | None = None
) -> Project:
    """`require_project_role` for a project already loaded (with what it holds, in one query)."""
    if project.workspace_id != actor.workspace_id:
        raise missing or NotFound("project", project.id)
    facts = ProjectFacts(project.id, project.workspace_id, project.name)
    require_role(actor, facts, project_role(session, actor, project), needed, missing)
    return project


# A table whose rows each belong to one project, by their `project_id`: runs, datasets, review keys...
InProject = TypeVar("InProject")


def in_project(
    session: Session,
    actor: Actor,
    kind: type[InProject],
    ident: uuid.UUID,
    needed: ProjectRole,
    missing: NotFound,
    *also: ColumnElement[bool],
) -> InProject:
    """The row of `kind` with this id (and the conditions in `also`), if the actor holds `needed` in its
    project. The row and its project come in one query. A row that isn't there and one in a project the
    actor can't see are both `missing`, in the kind's own sentence, so ids don't leak; a project it
    sees without the role is forbidden."""
    row, _ = with_project(session, actor, kind, ident, needed, missing, *also)
    return row


def with_project(
    session: Session,
    actor: Actor,
    kind: type[InProject],
    ident: uuid.UUID,
    needed: ProjectRole,
    missing: NotFound,
    *also: ColumnElement[bool],
    lock: bool = False,
) -> tuple[InProject, Project]:
    """`in_project`'s row and its project, for a caller that goes on to use the project (the session keeps
    no object nobody holds, so asking for the project again would read it again); with `lock`, the row
    locked for the rest of the transaction (PostgreSQL's FOR UPDATE OF the row's table; SQLite's write
    transaction already holds the whole store)."""
    table: Any = kind
    query = select(table, Project).join(Project, Project.id == table.project_id)
    query = query.where(table.id == ident, *also)
    found = session.execute(query.with_for_update(of=table) if lock else query).first()
    if found is None:
        raise missing
    row, project = found
    check_role(session, actor, project, needed, missing)
    return cast(InProject, row), project


@dataclass(frozen=True)
class ProjectFacts:
    """What a role check needs of a project, for a caller that read it as plain columns."""

    id: uuid.UUID
    workspace_id: uuid.UUID
    name: str


def require_role(
    actor: Actor,
    project: ProjectFacts,
    membership: ProjectRole | None,
    needed: ProjectRole,
    missing: NotFound | None = None,
) -> None:
    """Refuse unless the actor holds `needed` in the project, given its membership role there (None for
    none): a workspace admin holds every role; a project the actor has no role in is not found (and so
    is what the caller asked for in it: `missing`, when given)."""
    role: ProjectRole | None = "admin" if actor.workspace_admin else membership
    if project.workspace_id != actor.workspace_id or role is None:
        raise missing or NotFound("project", project.id)
    if not holds(role, needed):
        raise Forbidden(
            f'This needs the {needed} role in project "{project.name}"; you have {role}.',
            details={"projectId": str(project.id), "needed": needed, "role": role},
        )


def set_member(
    session: Session, actor: Actor, project_id: uuid.UUID, principal_id: uuid.UUID, role: ProjectRole
) -> Membership:
    """Project admins and workspace admins give roles; setting a role again changes it."""
    require_project_role(session, actor, project_id, "admin")
    _principal_in_workspace(session, actor, principal_id)
    membership = session.get(Membership, (project_id, principal_id))
    if membership is None:
        membership = Membership(
            project_id=project_id, principal_id=principal_id, role=role, created_at=utcnow()
        )
        session.add(membership)
    else:
        membership.role = role
    session.flush()
    return membership


def remove_member(session: Session, actor: Actor, project_id: uuid.UUID, principal_id: uuid.UUID) -> None:
    require_project_role(session, actor, project_id, "admin")
    membership = session.get(Membership, (project_id, principal_id))
    if membership is None:
        raise NotFound("member", principal_id, f'User "{principal_id}" is not a member of this project.')
    session.delete(membership)
    session.flush()


def principals_in_workspace(
    session: Session, workspace_id: uuid.UUID, ids: Sequence[uuid.UUID]
) -> set[uuid.UUID]:
    """Which of these ids are principals of the workspace, for checking the ids a setting names."""
    found: set[uuid.UUID] = set()
    for chunk in in_chunks(list(dict.fromkeys(ids))):
        found.update(
            session.scalars(
                select(Principal.id).where(Principal.id.in_(chunk), Principal.workspace_id == workspace_id)
            )
        )
    return found


def principal_names(session: Session, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str]:
    """Names of principals by id, for showing who did something."""
    found: dict[uuid.UUID, str] = {}
    for chunk in in_chunks(list(dict.fromkeys(ids))):
        rows = session.execute(select(Principal.id, Principal.name).where(Principal.id.in_(chunk)))
        found.update((principal_id, name) for principal_id, name in rows)
    return found
