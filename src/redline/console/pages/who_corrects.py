"""Corrections › Who corrects: the corrector groups that apply to the project's runs — who may correct as
each, where it applies, how much its corrections count and which queue rules want it — in the words of
corrections-reference.txt; making, changing and removing them through `groups.service`, as
/v1/corrector-groups does (docs/corrector-groups.md).

The forms are offered to the admins of a group's scope only (the service refuses anyone else with its
own sentence). Which dialog is open — New group, Change or Remove — is in the address (`edit=`,
`remove=`), like the sort and the columns, so a link opens the same view and the dialogs work without
JavaScript. Removing a group that rules want is allowed by the service; the dialog names those rules
first, and the notice afterwards names the ones that still want it.

The page used to be Settings › Corrector groups; that address now leads here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Any, Unpack
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Request
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.orm import Session
from starlette.responses import RedirectResponse, Response

from redline.console.corrections_section import BASE, refused_view, section_page
from redline.console.deps import Changer, Db
from redline.console.dialogs import closed_url, ended, refusal_placed
from redline.console.forms import form_id, form_number, text_or_none, unparsed
from redline.console.formview import view_query
from redline.console.groups import every_group
from redline.console.notices import Outcome, notice
from redline.console.projects import ProjectChoice
from redline.console.session import SignedIn
from redline.db import Database
from redline.errors import RedlineError
from redline.groups import service as groups
from redline.groups.models import CorrectorGroup
from redline.groups.schemas import GroupChange, GroupIn
from redline.identity.models import Project
from redline.identity.service import REVIEWER_ROLES
from redline.queues.expert import group_views
from redline.queues.expert.group_views import WantedGroupView
from redline.sentences import counted
from redline.traces import service as traces
from redline.traces.models import Agent

router = APIRouter()
TAB = "who-corrects"
GROUPS = "/ui/corrections/groups"

# The table's columns that the Columns menu chooses, in order; the group's name is always shown.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("counts", "How much it counts"),
    ("applies", "Where it applies"),
    ("given_by", "Who may give it"),
    ("wanted_by", "Rules that want it"),
)
# The orders a header sorts by (the service lists groups oldest first).
SORTS = ("name", "weight")
# What the address says of an open dialog or of the last change: a post ends on its view without them.
PASSING = ("edit", "remove", "name", "wanted")

DONE = {
    "created": 'Made the corrector group "{name}".',
    "changed": 'Changed the corrector group "{name}".',
    "removed": 'Removed the corrector group "{name}": no new correction or rule can name it; '
    "corrections that named it keep it and still count with its weight.",
}


@dataclass(frozen=True)
class GroupRow:
    """A group as the page words it."""

    view: WantedGroupView
    counts: str
    applies: str
    given_by: str

    @property
    def group(self) -> CorrectorGroup:
        return self.view.group

    @property
    def expert(self) -> bool:
        """A restricted group's corrections are experts' (groups.service)."""
        return self.group.assertable_by is not None

    @property
    def names_people(self) -> bool:
        """Its restriction names users or tokens, which the form doesn't edit (the API and CLI do)."""
        return bool((self.group.assertable_by or {}).get("principalIds"))


# ------------------------------------------------------------------------------------------------ words


def counts_words(weight: float) -> str:
    """How much each of the group's corrections counts, against one made under no group."""
    if weight == 0:
        return "Counts nothing"
    if weight == 1:
        return "Counts the same as one with no group"
    return f"Counts {weight:g}× one with no group"


def applies_words(session: Session, group: CorrectorGroup, project: Project) -> str:
    """Where the group applies, seen from the project shown."""
    if group.scope_kind == groups.WORKSPACE:
        return "Every project in the workspace"
    if group.scope_kind == groups.PROJECT:
        return "This project" if group.project_id == project.id else f"Project {project.name}"
    agent = session.get_one(Agent, group.agent_id)
    return f"Only {agent.name}'s runs"


def given_by_words(group: CorrectorGroup) -> str:
    """Who may correct as the group, in words; whom a restriction names is counted, never listed."""
    restriction: dict[str, Any] | None = group.assertable_by
    if restriction is None:
        return "Anyone who may correct the run"
    parts = []
    kinds = restriction.get("principalKinds") or []
    if kinds in (["user"], ["service"]):
        parts.append("people" if kinds == ["user"] else "services")
    if restriction.get("minReviewerRole"):
        parts.append(f"{restriction['minReviewerRole']} reviewers or above")
    ids = restriction.get("principalIds") or []
    if ids:
        parts.append("the one it names" if len(ids) == 1 else f"the {len(ids)} it names")
    if not parts:
        return "Anyone who may correct the run"
    return "Only " + ", and only ".join(parts)


def wanted_sentence(view: WantedGroupView) -> str | None:
    """What removing the group leaves waiting: the rules that want its correction, by name."""
    names = [rule.name for rule in view.wanted_by]
    if not names:
        return None
    wants = counted(len(names), "rule wants", "rules want")
    return (
        f"{wants} its correction ({', '.join(names)}): change them first, "
        "or their items wait for a group nobody can give."
    )


def _rows(session: Session, who: SignedIn, project: Project) -> list[GroupRow]:
    return [
        GroupRow(
            view,
            counts_words(view.group.weight),
            applies_words(session, view.group, project),
            given_by_words(view.group),
        )
        for view in every_group(session, who.actor, groups.GroupFilters(project_id=project.id))
    ]


def _sorted(rows: list[GroupRow], sort: str | None) -> tuple[list[GroupRow], str]:
    """The rows in the order the address asks (`name`, `weight`, a leading `-` for the other way); the
    service's order, oldest first, when it asks none."""
    key = (sort or "").removeprefix("-")
    if key not in SORTS:
        return rows, ""
    by = (lambda row: row.group.name.lower()) if key == "name" else (lambda row: row.group.weight)
    return sorted(rows, key=by, reverse=(sort or "").startswith("-")), sort or ""


# ------------------------------------------------------------------------------------------------- page


def _picked(value: str | None, field: str) -> uuid.UUID | None:
    """A group named in the address (`edit=`, `remove=`); `new` names none."""
    return None if value in (None, "", "new") else form_id(value, field)


def _page(
    request: Request,
    who: SignedIn,
    db: Database,
    choice: ProjectChoice,
    *,
    typed: dict[str, str] | None = None,
    **outcome: Unpack[Outcome],
) -> Response:
    """The page, with the dialog the address (or a refused form) opens; a refusal is shown in the dialog
    whose form was refused, never behind it."""
    query = request.query_params
    rows: list[GroupRow] = []
    agents: list[Agent] = []
    if choice.project is not None:
        with db.read() as session:
            rows = _rows(session, who, choice.project)
            if choice.may("admin"):
                agents = traces.list_agents(session, who.actor, choice.project.id)
    rows, sort = _sorted(rows, query.get("sort"))
    known = {key for key, _ in COLUMNS}
    asked_cols = [key for key in query.getlist("cols") if key in known]
    may_create = choice.may("admin") or who.actor.workspace_admin
    mine = [row for row in rows if row.view.sees_principals]
    edited, removing = _picked(query.get("edit"), "edit"), _picked(query.get("remove"), "remove")
    new_open = query.get("edit") == "new" and may_create
    edit_row = next((row for row in mine if row.group.id == edited), None)
    remove_row = next((row for row in mine if row.group.id == removing), None)
    dialog_error = refusal_placed(outcome, bool(new_open or edit_row or remove_row))
    return section_page(
        request,
        who,
        TAB,
        choice,
        outcome,
        rows=rows,
        columns=COLUMNS,
        cols=asked_cols or [key for key, _ in COLUMNS],
        sort=sort,
        agents=agents,
        may_create=may_create,
        workspace_admin=who.actor.workspace_admin,
        reviewer_roles=REVIEWER_ROLES,
        new_open=new_open,
        edit_row=edit_row,
        remove_row=remove_row,
        wanted_sentence=wanted_sentence,
        dialog_error=dialog_error,
        typed=typed or {},
        close_url=closed_url(request, PASSING),
        groups_url=GROUPS,
    )


def show(request: Request, who: SignedIn, db: Database, choice: ProjectChoice) -> Response:
    """`?tab=who-corrects`: the groups, sorted and with the columns and dialog the address names; after a
    removal, the rules that still want the group."""
    said = notice(DONE, request)
    wanted = request.query_params.getlist("wanted")
    if said and wanted and request.query_params.get("done") == "removed":
        said += (
            f" These rules still want it: {', '.join(wanted)} — change them, "
            "or their items wait for a group nobody can give."
        )
    return _page(request, who, db, choice, notice=said)


@router.get("/settings/corrector-groups")
def moved(project: str | None = None) -> RedirectResponse:
    """Settings › Corrector groups moved to Corrections › Who corrects, for the same project."""
    query = urlencode([("tab", TAB), *([("project", project)] if project else [])])
    return RedirectResponse(f"{BASE}?{query}", status_code=301)


# ------------------------------------------------------------------------------------------------ forms


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

    def typed(self) -> dict[str, str]:
        """What the form shows again when the service refuses it."""
        return {**self.model_dump(exclude={"kinds"}), "kinds": ",".join(self.kinds)}


class NewGroupForm(GroupForm):
    weight: str = "1"
    scope: str = "project"
    agent: str = ""


class GroupChangeForm(GroupForm):
    # Empty keeps the weight.
    weight: str = ""
    # "edit" when the form offered the restriction's fields (it does not for one naming users).
    restriction_fields: str = Field("", alias="restriction")


Text = Annotated[str, Form()]


def _refused(
    request: Request,
    who: SignedIn,
    db: Database,
    project: str,
    view: str,
    error: RedlineError,
    typed: dict[str, str] | None = None,
) -> Response:
    """The view the form was sent from again, its dialog open, saying the service's sentence in it and
    showing what was typed."""
    query = view_query(view, [("tab", TAB), ("project", project)], drop=("name", "wanted"))
    again, choice, said = refused_view(request, who, db, project, query, error)
    return _page(again, who, db, choice, **said, typed=typed)


@router.post("/corrections/groups")
def create_group(
    request: Request,
    who: Changer,
    db: Db,
    project: Text,
    form: Annotated[NewGroupForm, Form()],
    view: Text = "",
) -> Response:
    try:
        scope: dict[str, Any] = {"kind": form.scope}
        if form.scope in ("project", "agent"):
            scope["project_id"] = form_id(project, "project")
        if form.scope == "agent":
            scope["agent_id"] = form_id(form.agent, "agent")
        try:
            body = GroupIn.model_validate(
                {
                    "scope": scope,
                    "name": form.name.strip(),
                    "weight": form_number(form.weight, "weight") if form.weight.strip() else 1.0,
                    "description": text_or_none(form.description),
                    "assertable_by": form.restriction(),
                }
            )
        except ValidationError as error:
            raise unparsed(error) from None
        with db.write() as session:
            made = group_views.create(session, who.actor, body).group.name
    except RedlineError as error:
        return _refused(request, who, db, project, view, error, form.typed())
    return ended(TAB, project, view, PASSING, "created", ("name", made))


@router.post("/corrections/groups/{group_id}")
def change_group(
    request: Request,
    group_id: uuid.UUID,
    who: Changer,
    db: Db,
    project: Text,
    form: Annotated[GroupChangeForm, Form()],
    view: Text = "",
) -> Response:
    try:
        fields: dict[str, Any] = {"description": text_or_none(form.description)}
        if form.name.strip():
            fields["name"] = form.name.strip()
        if form.weight.strip():
            fields["weight"] = form_number(form.weight, "weight")
        # A restriction naming people is changed where ids are typed (the API, the CLI); the form leaves it.
        if form.restriction_fields == "edit":
            fields["assertable_by"] = form.restriction()
        try:
            body = GroupChange.model_validate(fields)
        except ValidationError as error:
            raise unparsed(error) from None
        with db.write() as session:
            changed = group_views.change(session, who.actor, group_id, body).group.name
    except RedlineError as error:
        return _refused(request, who, db, project, view, error, form.typed())
    return ended(TAB, project, view, PASSING, "changed", ("name", changed))


@router.post("/corrections/groups/{group_id}/remove")
def remove_group(
    request: Request, group_id: uuid.UUID, who: Changer, db: Db, project: Text, view: Text = ""
) -> Response:
    try:
        with db.write() as session:
            view_after = group_views.remove(session, who.actor, group_id)
            removed, wanted = view_after.group.name, [rule.name for rule in view_after.wanted_by]
    except RedlineError as error:
        return _refused(request, who, db, project, view, error)
    still = [("wanted", name) for name in wanted]
    return ended(TAB, project, view, PASSING, "removed", ("name", removed), *still)
