"""Corrector groups: who may correct as a group, where it applies, and what each correction weighs.

A group applies to the workspace, to a project, or to an agent in a project. Its restriction
(`assertable_by`) says who may give a correction in its name: a caller must meet each part that is set.
A correction made under a restricted group is an expert's, decided when it is made: lifting or changing
the restriction later never moves a correction already made.

Access follows the scope. A workspace group is read by anyone in the workspace and managed by workspace
admins; a project's (or its agents') groups are read with read access to the project and managed by its
admins. Whom a restriction names is for those admins; anyone else is told only how many it names. A group
the caller can't read is not found, never forbidden, so ids don't leak.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, false, or_, select
from sqlalchemy.orm import Session

from redline.db import in_chunks, new_id, utcnow
from redline.db.keyset import past
from redline.db.paging import Page, check_limit, decode_time_cursor, time_cursor
from redline.errors import Conflict, Forbidden, Invalid, NotFound
from redline.groups.models import CorrectorGroup
from redline.groups.schemas import AssertableByIn, GroupChange, GroupIn
from redline.identity.models import Principal, Project, Token
from redline.identity.service import (
    REVIEWER_ROLES,
    Actor,
    ProjectRole,
    principals_in_workspace,
    project_role,
    require_project_role,
    visible_projects,
)
from redline.traces.models import Agent, Trace

WORKSPACE, PROJECT, AGENT = "workspace", "project", "agent"
SCOPE_KINDS = (WORKSPACE, PROJECT, AGENT)
# The wire's word for the workspace; taken as the same everywhere a scope kind is read.
TENANT = "tenant"
NOT_APPLICABLE = "corrector-group-not-applicable"
NOT_ALLOWED = "corrector-group-not-allowed"


@dataclass(frozen=True)
class GroupView:
    """A group as one caller may see it: `sees_principals` when the caller is an admin of its scope."""

    group: CorrectorGroup
    sees_principals: bool


@dataclass(frozen=True)
class GroupFilters:
    """The list's filters. `project_id` alone keeps every group that applies to that project's runs (the
    workspace's, the project's and its agents'); with `agent_id`, those that apply to that agent's runs.
    `scope_kind` keeps only groups of that kind."""

    scope_kind: str | None = None
    project_id: uuid.UUID | None = None
    agent_id: uuid.UUID | None = None


# ------------------------------------------------------------------------------------------ the rules


def scope_kind_of(value: str) -> str:
    """A scope kind as given (`tenant` or `workspace` for the workspace) as the group stores it."""
    kind = WORKSPACE if value == TENANT else value
    if kind not in SCOPE_KINDS:
        raise Invalid(
            f'scopeKind: "{value}" is not one of {TENANT}, {PROJECT}, {AGENT}.',
            details={"field": "scopeKind"},
        )
    return kind


def may_give(actor: Actor, group: CorrectorGroup) -> bool:
    """Whether the actor meets every part of the group's restriction (any actor, without one)."""
    return not _unmet(actor, group)


def _unmet(actor: Actor, group: CorrectorGroup) -> list[str]:
    """The parts of the group's restriction the actor doesn't meet, each as who it takes instead."""
    restriction = group.assertable_by
    if restriction is None:
        return []
    unmet = []
    role = restriction.get("minReviewerRole")
    if role is not None and (
        actor.reviewer_role is None or REVIEWER_ROLES.index(actor.reviewer_role) < REVIEWER_ROLES.index(role)
    ):
        unmet.append(f"{role} reviewers or above")
    kinds = restriction.get("principalKinds")
    if kinds is not None and actor.kind not in kinds:
        unmet.append("people (users)" if kinds == ["user"] else "services")
    ids = restriction.get("principalIds")
    if ids is not None and not {str(actor.principal_id), str(actor.token_id)} & set(ids):
        unmet.append("the users and tokens it names")
    return unmet


def applies_to(group: CorrectorGroup, project_id: uuid.UUID, agent_id: uuid.UUID | None) -> bool:
    """Whether the group applies to a run of this project (and agent): a workspace group to any run of
    its workspace (the caller knows the run is of the group's workspace), a project's to that project's
    runs, an agent's to that agent's own runs in its project."""
    if group.scope_kind == WORKSPACE:
        return True
    if group.project_id != project_id:
        return False
    return group.scope_kind == PROJECT or group.agent_id == agent_id


def _applies_to_project(group: CorrectorGroup, project_id: uuid.UUID) -> bool:
    """Whether some of the project's runs may be corrected as the group: a queue rule may want it."""
    return group.scope_kind == WORKSPACE or group.project_id == project_id


def where_it_applies(session: Session, group: CorrectorGroup) -> str:
    """Where the group applies, in words."""
    if group.scope_kind == WORKSPACE:
        return "the workspace's runs"
    project = session.get_one(Project, group.project_id)
    if group.scope_kind == PROJECT:
        return f'the runs of project "{project.name}"'
    agent = session.get_one(Agent, group.agent_id)
    return f'the runs of agent "{agent.name}" in project "{project.name}"'


def _removed(group: CorrectorGroup) -> Invalid:
    return Invalid(
        f'Corrector group "{group.name}" was removed: no new correction or rule can name it.',
        code=NOT_APPLICABLE,
        details={"correctorGroupId": str(group.id)},
    )


# ------------------------------------------------------------------------------------------- reading


def _is_scope_admin(session: Session, actor: Actor, group: CorrectorGroup) -> bool:
    if group.scope_kind == WORKSPACE or actor.workspace_admin:
        return actor.workspace_admin
    return project_role(session, actor, session.get_one(Project, group.project_id)) == "admin"


def _readable(session: Session, actor: Actor, group_id: uuid.UUID) -> CorrectorGroup:
    group = session.get(CorrectorGroup, group_id)
    if group is None or group.workspace_id != actor.workspace_id:
        raise NotFound("corrector-group", group_id)
    if group.scope_kind != WORKSPACE and (
        project_role(session, actor, session.get_one(Project, group.project_id)) is None
    ):
        raise NotFound("corrector-group", group_id)
    return group


def _manageable(session: Session, actor: Actor, group_id: uuid.UUID) -> CorrectorGroup:
    group = _readable(session, actor, group_id)
    _require_scope_admin(session, actor, group)
    return group


def _require_scope_admin(session: Session, actor: Actor, group: CorrectorGroup) -> None:
    if _is_scope_admin(session, actor, group):
        return
    if group.scope_kind == WORKSPACE:
        raise _not_workspace_admin()
    raise _not_project_admin(session.get_one(Project, group.project_id))


def _not_workspace_admin() -> Forbidden:
    return Forbidden("The workspace's corrector groups are managed by workspace admins.")


def _not_project_admin(project: Project) -> Forbidden:
    return Forbidden(
        f'The corrector groups of project "{project.name}" are managed by its admins.',
        details={"projectId": str(project.id), "needed": "admin"},
    )


def _view(session: Session, actor: Actor, group: CorrectorGroup) -> GroupView:
    return GroupView(group, _is_scope_admin(session, actor, group))


def get(session: Session, actor: Actor, group_id: uuid.UUID) -> GroupView:
    """One group, live or removed."""
    return _view(session, actor, _readable(session, actor, group_id))


def _listed(session: Session, actor: Actor, filters: GroupFilters) -> tuple[ColumnElement[bool], ...]:
    """What the filters keep, among the live groups of the actor's workspace that it may read."""
    project_id = filters.project_id
    agent_id = filters.agent_id
    if agent_id is not None:
        agent = session.get(Agent, agent_id)
        project = session.get(Project, agent.project_id) if agent is not None else None
        if (
            agent is None
            or project is None
            or project.workspace_id != actor.workspace_id
            or (project_id is not None and agent.project_id != project_id)
            or project_role(session, actor, project) is None
        ):
            raise NotFound("agent", agent_id)
        project_id = agent.project_id
    elif project_id is not None:
        require_project_role(session, actor, project_id, "read")
    conditions: list[ColumnElement[bool]] = [
        CorrectorGroup.workspace_id == actor.workspace_id,
        CorrectorGroup.unregistered_at.is_(None),
    ]
    workspace_wide = CorrectorGroup.scope_kind == WORKSPACE
    if project_id is not None:
        agents = CorrectorGroup.scope_kind == AGENT
        if agent_id is not None:
            agents = and_(agents, CorrectorGroup.agent_id == agent_id)
        of_project = CorrectorGroup.project_id == project_id
        conditions.append(
            or_(
                workspace_wide,
                and_(of_project, CorrectorGroup.scope_kind == PROJECT),
                and_(of_project, agents),
            )
        )
    elif not actor.workspace_admin:
        readable = [project.id for project, _ in visible_projects(session, actor)]
        conditions.append(
            or_(workspace_wide, CorrectorGroup.project_id.in_(readable) if readable else false())
        )
    if filters.scope_kind is not None:
        conditions.append(CorrectorGroup.scope_kind == scope_kind_of(filters.scope_kind))
    return tuple(conditions)


def list_groups(
    session: Session, actor: Actor, filters: GroupFilters, *, limit: int, cursor: str | None
) -> Page[GroupView]:
    """A page of live groups the actor can read, oldest first."""
    check_limit(limit)
    query = select(CorrectorGroup).where(*_listed(session, actor, filters))
    if cursor:
        query = query.where(
            past((CorrectorGroup.created_at, CorrectorGroup.id), decode_time_cursor(cursor), descending=False)
        )
    rows = list(
        session.scalars(query.order_by(CorrectorGroup.created_at, CorrectorGroup.id).limit(limit + 1))
    )
    more = len(rows) > limit
    rows = rows[:limit]
    roles: dict[uuid.UUID, ProjectRole] = (
        {}
        if actor.workspace_admin
        else {project.id: role for project, role in visible_projects(session, actor)}
    )
    views = [
        GroupView(
            group,
            actor.workspace_admin
            or (group.project_id is not None and roles.get(group.project_id) == "admin"),
        )
        for group in rows
    ]
    return Page(views, time_cursor(rows[-1].created_at, rows[-1].id) if more else None)


def applying_to_project(session: Session, project_id: uuid.UUID) -> list[CorrectorGroup]:
    """The live groups that apply to some of the project's runs, oldest first: the workspace's, the
    project's and its agents'. No access check: for figures about a project already authorised."""
    project = session.get_one(Project, project_id)
    return list(
        session.scalars(
            select(CorrectorGroup)
            .where(
                CorrectorGroup.workspace_id == project.workspace_id,
                CorrectorGroup.unregistered_at.is_(None),
                or_(CorrectorGroup.scope_kind == WORKSPACE, CorrectorGroup.project_id == project_id),
            )
            .order_by(CorrectorGroup.created_at, CorrectorGroup.id)
        )
    )


def _by_id(session: Session, group_ids: Collection[uuid.UUID], column: Any) -> dict[uuid.UUID, Any]:
    found: dict[uuid.UUID, Any] = {}
    for chunk in in_chunks(sorted(group_ids)):
        rows = session.execute(select(CorrectorGroup.id, column).where(CorrectorGroup.id.in_(chunk)))
        found.update({row[0]: row[1] for row in rows})
    return found


def weights(session: Session, group_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, float]:
    """Each group's weight, removed groups included: their corrections still count with it."""
    return _by_id(session, group_ids, CorrectorGroup.weight)


def names(session: Session, group_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, str]:
    """Each group's name, removed groups included: figures counted under one still name it."""
    return _by_id(session, group_ids, CorrectorGroup.name)


# ------------------------------------------------------------------------------------- naming a group


def for_correction(
    session: Session, actor: Actor, trace: Trace, group_id: uuid.UUID | None
) -> tuple[uuid.UUID | None, bool]:
    """The group a correction of `trace` is made under, and whether that makes it an expert's: it is,
    when the group has a restriction now. The caller may already write to the run."""
    if group_id is None:
        return None, False
    group = _readable(session, actor, group_id)
    if group.unregistered_at is not None:
        raise _removed(group)
    if not applies_to(group, trace.project_id, trace.agent_id):
        raise Invalid(
            f'Corrector group "{group.name}" doesn\'t apply to run "{trace.id}": '
            f"it applies to {where_it_applies(session, group)}.",
            code=NOT_APPLICABLE,
            details={"correctorGroupId": str(group.id), "runId": str(trace.id)},
        )
    unmet = _unmet(actor, group)
    if unmet:
        raise Forbidden(
            f'You may not correct run "{trace.id}" as corrector group "{group.name}": '
            f"it takes only {', and only '.join(unmet)}.",
            code=NOT_ALLOWED,
            details={"correctorGroupId": str(group.id), "runId": str(trace.id)},
        )
    return group.id, group.assertable_by is not None


def wanted_group(
    session: Session, actor: Actor, project_id: uuid.UUID, group_id: uuid.UUID
) -> CorrectorGroup:
    """The group a queue rule of the project wants: one the actor can read, live, that applies to some
    of the project's runs."""
    group = _readable(session, actor, group_id)
    if group.unregistered_at is not None:
        raise _removed(group)
    if not _applies_to_project(group, project_id):
        raise Invalid(
            f'Corrector group "{group.name}" applies to {where_it_applies(session, group)}, '
            "not to this project's: a rule here can't want it.",
            code=NOT_APPLICABLE,
            details={"correctorGroupId": str(group.id), "projectId": str(project_id)},
        )
    return group


# ------------------------------------------------------------------------------------------ changing


def _scope(session: Session, actor: Actor, body: GroupIn) -> tuple[str, Project | None, Agent | None]:
    """The scope asked for, checked: its project and agent, and that the actor is an admin there."""
    kind = scope_kind_of(body.scope.kind)
    project_id, agent_id = body.scope.project_id, body.scope.agent_id
    if kind == WORKSPACE:
        if project_id is not None or agent_id is not None:
            raise Invalid(
                "scope: a workspace group names no projectId or agentId.", details={"field": "scope"}
            )
        if not actor.workspace_admin:
            raise _not_workspace_admin()
        return kind, None, None
    if project_id is None:
        raise Invalid(
            f"scope.projectId: a {kind} group names its project.", details={"field": "scope.projectId"}
        )
    if kind == PROJECT and agent_id is not None:
        raise Invalid(
            'scope.agentId: a project group names no agent; an agent\'s group has kind "agent".',
            details={"field": "scope.agentId"},
        )
    if kind == AGENT and agent_id is None:
        raise Invalid("scope.agentId: an agent group names its agent.", details={"field": "scope.agentId"})
    project = require_project_role(session, actor, project_id, "read")
    agent = None
    if agent_id is not None:
        agent = session.get(Agent, agent_id)
        if agent is None or agent.project_id != project.id:
            raise NotFound("agent", agent_id, f'No agent "{agent_id}" in project "{project.name}".')
    if project_role(session, actor, project) != "admin":
        raise _not_project_admin(project)
    return kind, project, agent


def _check_name_free(session: Session, group: CorrectorGroup, name: str) -> None:
    taken = session.scalar(
        select(CorrectorGroup.id).where(
            CorrectorGroup.workspace_id == group.workspace_id,
            CorrectorGroup.scope_key == group.scope_key,
            CorrectorGroup.live_name == name,
            CorrectorGroup.id != group.id,
        )
    )
    if taken is not None:
        raise Conflict(
            f'A corrector group named "{name}" already applies to {where_it_applies(session, group)}.',
            code="corrector-group-name-taken",
            details={"name": name, "correctorGroupId": str(taken)},
        )


def _restriction(session: Session, actor: Actor, asked: AssertableByIn | None) -> dict[str, Any] | None:
    """The restriction as stored; every id it names must be a user, service or token of the workspace."""
    if asked is None:
        return None
    kept = asked.stored()
    ids = [uuid.UUID(ident) for ident in kept.get("principalIds", [])]
    known = principals_in_workspace(session, actor.workspace_id, ids)
    for chunk in in_chunks(ids):
        known.update(
            session.scalars(
                select(Token.id)
                .join(Principal, Principal.id == Token.principal_id)
                .where(Token.id.in_(chunk), Principal.workspace_id == actor.workspace_id)
            )
        )
    for index, ident in enumerate(ids):
        if ident not in known:
            raise Invalid(
                f'assertableBy.principalIds[{index}]: no user, service or token "{ident}" in this workspace.',
                details={"field": "assertableBy.principalIds", "index": index},
            )
    return kept


def create(session: Session, actor: Actor, body: GroupIn) -> GroupView:
    """A new group in a scope the actor administers."""
    kind, project, agent = _scope(session, actor, body)
    now = utcnow()
    scope_key = "" if project is None else str(project.id) + (f"/{agent.id}" if agent is not None else "")
    group = CorrectorGroup(
        id=new_id(),
        workspace_id=actor.workspace_id,
        scope_kind=kind,
        project_id=project.id if project is not None else None,
        agent_id=agent.id if agent is not None else None,
        scope_key=scope_key,
        name=body.name,
        live_name=body.name,
        weight=body.weight,
        description=body.description,
        assertable_by=_restriction(session, actor, body.assertable_by),
        created_by=actor.principal_id,
        created_at=now,
        updated_at=now,
    )
    _check_name_free(session, group, body.name)
    session.add(group)
    session.flush()
    return GroupView(group, True)


def change(session: Session, actor: Actor, group_id: uuid.UUID, body: GroupChange) -> GroupView:
    """Change the fields sent. A new restriction replaces the whole of the old one; corrections already
    made keep the expert mark they were made with."""
    group = _manageable(session, actor, group_id)
    if group.unregistered_at is not None:
        raise Conflict(
            f'Corrector group "{group.name}" was removed: it can\'t change.',
            code="corrector-group-removed",
            details={"correctorGroupId": str(group.id)},
        )
    sent = body.model_fields_set
    if body.name is not None and body.name != group.name:
        _check_name_free(session, group, body.name)
        group.name = group.live_name = body.name
    if body.weight is not None:
        group.weight = body.weight
    if "description" in sent:
        group.description = body.description
    if "assertable_by" in sent:
        group.assertable_by = _restriction(session, actor, body.assertable_by)
    if sent:
        group.updated_at = utcnow()
    session.flush()
    return _view(session, actor, group)


def remove(session: Session, actor: Actor, group_id: uuid.UUID) -> GroupView:
    """No new correction (or rule) can name the group; corrections that named it keep it and still
    count with its weight. Its name is free again in its scope (rules that still want it are named by
    `queues.expert.group_views`, which the caller should change). Removing it again changes nothing."""
    group = _manageable(session, actor, group_id)
    if group.unregistered_at is None:
        group.unregistered_at = group.updated_at = utcnow()
        group.live_name = None
        session.flush()
    return _view(session, actor, group)
