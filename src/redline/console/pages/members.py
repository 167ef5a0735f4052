"""Settings › Members: a project's members and their roles (read < write < publish < admin).

Everyone in the project reads the list; its admins (and workspace admins) change a role, take someone
out, or add a user of the workspace, through `identity.service.set_member` / `remove_member`, as
/v1/projects/{id}/members does.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Unpack

from fastapi import APIRouter, Form, Request
from starlette.responses import Response

from redline.console.deps import Changer, Db, Viewer
from redline.console.forms import form_id, form_project, refusal
from redline.console.notices import Outcome, notice, see_other
from redline.console.projects import choose_project
from redline.console.session import SignedIn
from redline.console.settings_area import settings_page
from redline.db import Database
from redline.errors import Invalid, RedlineError
from redline.identity import members as membership
from redline.identity import service as identity
from redline.identity.models import Principal
from redline.identity.service import PROJECT_ROLES, ProjectRole

router = APIRouter()
BASE = "/ui/settings/members"
DONE = {
    "set": "{name} now has the {role} role.",
    "added": "{name} is now a member, with the {role} role.",
    "removed": "{name} is no longer a member of this project.",
}


def _role(value: str) -> ProjectRole:
    for role in PROJECT_ROLES:
        if role == value:
            return role
    raise Invalid(f'role: "{value}" is not one of {", ".join(PROJECT_ROLES)}.', details={"field": "role"})


def _view(
    request: Request,
    db: Database,
    who: SignedIn,
    project: str | None,
    **outcome: Unpack[Outcome],
) -> Response:
    with db.read() as session:
        choice = choose_project(session, who.actor, project)
        members = membership.list_members(session, who.actor, choice.project.id) if choice.project else []
        users: list[Principal] = identity.list_users(session, who.actor) if choice.may("admin") else []
    member_ids = {member.principal.id for member in members}
    return settings_page(
        request,
        who,
        "members",
        "Members",
        outcome,
        choice=choice,
        members=members,
        addable=[user for user in users if user.id not in member_ids and not user.workspace_admin],
        workspace_admins=[user for user in users if user.workspace_admin],
        roles=PROJECT_ROLES,
    )


def _back(project: str, done: str, name: str, role: str = "") -> Response:
    return see_other(BASE, {"project": project, "done": done, "name": name, "role": role})


@router.get("/settings/members")
def members_page(
    request: Request,
    who: Viewer,
    db: Db,
    project: str | None = None,
) -> Response:
    return _view(request, db, who, project, notice=notice(DONE, request))


@router.post("/settings/members/{user_id}")
def set_role(
    request: Request,
    user_id: uuid.UUID,
    who: Changer,
    db: Db,
    project: Annotated[str, Form()],
    role: Annotated[str, Form()] = "",
    added: Annotated[str, Form()] = "",
) -> Response:
    try:
        project_id = form_project(project)
        with db.write() as session:
            identity.set_member(session, who.actor, project_id, user_id, _role(role))
            name = identity.find_user(session, who.actor, str(user_id)).name
    except RedlineError as error:
        return _view(request, db, who, project, **refusal(error), error_at=str(user_id))
    return _back(project, "added" if added else "set", name, role)


@router.post("/settings/members")
def add_member(
    request: Request,
    who: Changer,
    db: Db,
    project: Annotated[str, Form()],
    user: Annotated[str, Form()] = "",
    role: Annotated[str, Form()] = "read",
) -> Response:
    try:
        user_id = form_id(user, "user")
        if user_id is None:
            raise Invalid("user: choose the user to add.", details={"field": "user"})
    except RedlineError as error:
        return _view(request, db, who, project, **refusal(error), error_at="add")
    return set_role(request, user_id, who, db, project, role, added="yes")


@router.post("/settings/members/{user_id}/remove")
def remove_member(
    request: Request, user_id: uuid.UUID, who: Changer, db: Db, project: Annotated[str, Form()]
) -> Response:
    try:
        project_id = form_project(project)
        with db.write() as session:
            name = identity.find_user(session, who.actor, str(user_id)).name
            identity.remove_member(session, who.actor, project_id, user_id)
    except RedlineError as error:
        return _view(request, db, who, project, **refusal(error), error_at=str(user_id))
    return _back(project, "removed", name)
