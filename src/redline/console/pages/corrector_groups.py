"""Settings › Corrector groups: who may correct as a group, where it applies and how much it counts, in
words; make, change and remove them through `groups.service`, as /v1/corrector-groups does
(docs/corrector-groups.md).

The page lists the groups that apply to the chosen project's runs (the workspace's, the project's and its
agents'). Forms are offered to the admins of a group's scope only. Removing a group the queue rules still
want is allowed by the service; the page says beforehand which rules want it, and afterwards which rules
still do, so they can be changed.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Any, Unpack

from fastapi import APIRouter, Form, Request
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.orm import Session
from starlette.responses import Response

from redline.console.deps import Changer, Db, Viewer
from redline.console.forms import form_id, form_number, refusal, text_or_none, unparsed
from redline.console.groups import every_group
from redline.console.notices import notice, see_other
from redline.console.session import SignedIn
from redline.console.settings_area import Outcome, ProjectChoice, choose_project, settings_page
from redline.db import Database
from redline.errors import RedlineError
from redline.groups import service as groups
from redline.groups.models import CorrectorGroup
from redline.groups.schemas import GroupChange, GroupIn
from redline.groups.service import GroupView
from redline.identity.service import REVIEWER_ROLES, Actor
from redline.traces import service as traces
from redline.traces.models import Agent

router = APIRouter()
BASE = "/ui/settings/corrector-groups"


@dataclass(frozen=True)
class GroupRow:
    """A group as the page words it."""

    view: GroupView
    counts: str
    applies: str
    given_by: str
    restricted_by_ids: bool

    @property
    def group(self) -> CorrectorGroup:
        return self.view.group


def counts_words(weight: float) -> str:
    """How much each of the group's corrections counts, against one made under no group."""
    if weight == 0:
        return "Counts nothing"
    if weight == 1:
        return "Counts the same as one with no group"
    return f"Counts {weight:g}× one with no group"


def given_by_words(view: GroupView) -> str:
    """Who may correct as the group: its restriction in words; whom it names only for its scope's admins."""
    restriction: dict[str, Any] | None = view.group.assertable_by
    if restriction is None:
        return "Anyone who may correct the run"
    parts = []
    if restriction.get("minReviewerRole"):
        parts.append(f"{restriction['minReviewerRole']} reviewers or above")
    kinds = restriction.get("principalKinds") or []
    if kinds in (["user"], ["service"]):
        parts.append("people (users)" if kinds == ["user"] else "services")
    ids = restriction.get("principalIds") or []
    if ids:
        parts.append(
            f"the {len(ids)} users or tokens it names" if len(ids) != 1 else "the one user or token it names"
        )
    if not parts:
        return "Anyone who may correct the run (an expert's correction)"
    return "Only " + ", and only ".join(parts) + " (an expert's correction)"


def _rows(session: Session, actor: Actor, project_id: uuid.UUID) -> list[GroupRow]:
    return [
        GroupRow(
            view,
            counts_words(view.group.weight),
            groups.where_it_applies(session, view.group),
            given_by_words(view),
            bool((view.group.assertable_by or {}).get("principalIds")),
        )
        for view in every_group(session, actor, groups.GroupFilters(project_id=project_id))
    ]


def _view(
    request: Request,
    db: Database,
    who: SignedIn,
    project: str | None,
    *,
    still_wanted: list[str] | None = None,
    typed: dict[str, str] | None = None,
    **outcome: Unpack[Outcome],
) -> Response:
    with db.read() as session:
        choice: ProjectChoice = choose_project(session, who.actor, project)
        rows = _rows(session, who.actor, choice.project.id) if choice.project else []
        agents: list[Agent] = (
            traces.list_agents(session, who.actor, choice.project.id)
            if choice.project is not None and choice.may("admin")
            else []
        )
    return settings_page(
        request,
        who,
        "corrector-groups",
        "Corrector groups",
        outcome,
        choice=choice,
        rows=rows,
        agents=agents,
        workspace_admin=who.actor.workspace_admin,
        reviewer_roles=REVIEWER_ROLES,
        still_wanted=still_wanted or [],
        typed=typed or {},
    )


class GroupForm(BaseModel):
    """The fields the new-group and change forms share, as typed."""

    name: str = ""
    description: str = ""
    min_role: str = ""
    kinds: list[str] = []

    def restriction(self) -> dict[str, Any] | None:
        """The restriction the form asks for; none when nothing is ticked."""
        restriction: dict[str, Any] = {}
        if self.min_role:
            restriction["minReviewerRole"] = self.min_role
        if self.kinds:
            restriction["principalKinds"] = self.kinds
        return restriction or None


class NewGroupForm(GroupForm):
    weight: str = "1"
    scope: str = "project"
    agent: str = ""

    def typed(self) -> dict[str, str]:
        """What the form shows again when the group is refused."""
        return {**self.model_dump(exclude={"kinds"}), "kinds": ",".join(self.kinds)}


class GroupChangeForm(GroupForm):
    # Empty keeps the weight.
    weight: str = ""
    # "edit" when the form offered the restriction's fields (it does not for one naming users).
    restriction_fields: str = Field("", alias="restriction")


def _back(project: str, done: str, name: str, wanted: list[str] | None = None) -> Response:
    return see_other(
        BASE,
        [("project", project), ("done", done), ("name", name)] + [("wanted", rule) for rule in wanted or []],
    )


DONE = {
    "created": 'Made the corrector group "{name}".',
    "changed": 'Changed the corrector group "{name}".',
    "removed": 'Removed the corrector group "{name}": no new correction or rule can name it; '
    "corrections that named it keep it and still count with its weight.",
}


@router.get("/settings/corrector-groups")
def groups_page(
    request: Request,
    who: Viewer,
    db: Db,
    project: str | None = None,
) -> Response:
    removed = request.query_params.get("done") == "removed"
    wanted_rules = request.query_params.getlist("wanted") if removed else []
    return _view(request, db, who, project, notice=notice(DONE, request), still_wanted=wanted_rules)


Text = Annotated[str, Form()]


@router.post("/settings/corrector-groups")
def create_group(
    request: Request,
    who: Changer,
    db: Db,
    project: Text,
    form: Annotated[NewGroupForm, Form()],
) -> Response:
    try:
        body_scope: dict[str, Any] = {"kind": form.scope}
        if form.scope in ("project", "agent"):
            body_scope["project_id"] = form_id(project, "project")
        if form.scope == "agent":
            body_scope["agent_id"] = form_id(form.agent, "agent")
        try:
            body = GroupIn.model_validate(
                {
                    "scope": body_scope,
                    "name": form.name.strip(),
                    "weight": form_number(form.weight, "weight") if form.weight.strip() else 1.0,
                    "description": text_or_none(form.description),
                    "assertable_by": form.restriction(),
                }
            )
        except ValidationError as error:
            raise unparsed(error) from None
        with db.write() as session:
            made = groups.create(session, who.actor, body).group.name
    except RedlineError as error:
        return _view(request, db, who, project, **refusal(error), typed=form.typed())
    return _back(project, "created", made)


@router.post("/settings/corrector-groups/{group_id}")
def change_group(
    request: Request,
    group_id: uuid.UUID,
    who: Changer,
    db: Db,
    project: Text,
    form: Annotated[GroupChangeForm, Form()],
) -> Response:
    try:
        fields: dict[str, Any] = {"description": text_or_none(form.description)}
        if form.name.strip():
            fields["name"] = form.name.strip()
        if form.weight.strip():
            fields["weight"] = form_number(form.weight, "weight")
        # A restriction naming users is changed where ids are typed (the API, the CLI); the form leaves it.
        if form.restriction_fields == "edit":
            fields["assertable_by"] = form.restriction()
        try:
            body = GroupChange.model_validate(fields)
        except ValidationError as error:
            raise unparsed(error) from None
        with db.write() as session:
            changed = groups.change(session, who.actor, group_id, body).group.name
    except RedlineError as error:
        return _view(request, db, who, project, **refusal(error))
    return _back(project, "changed", changed)


@router.post("/settings/corrector-groups/{group_id}/remove")
def remove_group(request: Request, group_id: uuid.UUID, who: Changer, db: Db, project: Text) -> Response:
    try:
        with db.write() as session:
            view = groups.remove(session, who.actor, group_id)
            removed = view.group.name
            wanted = [rule.name for rule in view.wanted_by]
    except RedlineError as error:
        return _view(request, db, who, project, **refusal(error))
    return _back(project, "removed", removed, wanted)
