"""Corrections › Rules: the project's queue rules, each picking completed runs for people to correct as
they end, in the words of corrections-reference.txt (`rule_words`); making, changing (each change a new
version), reading the history of and stopping them through `queues.expert_rules`, as
/v1/projects/{id}/queue-rules does.

The list pages through the service (a search by name, a sort by name or by runs waiting), its view in
the address. Which dialog is open — the editor (`edit=new` or a rule), a rule's History or Remove — is
in the address too, so a link opens it and it works without JavaScript; as you edit, rule_editor.js asks
the preview route what the rule would have queued from the recent runs. Project editors see New rule,
Change and Remove; the service refuses anyone else with its own sentence.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from pydantic import BaseModel
from sqlalchemy.orm import Session
from starlette.datastructures import QueryParams
from starlette.responses import JSONResponse, Response

from redline.console.corrections_section import refused_view, section_page, tab_url
from redline.console.deps import Changer, Db, Viewer
from redline.console.dialogs import closed_url, ended, refusal_placed
from redline.console.forms import form_id, form_number, form_whole
from redline.console.formview import view_query
from redline.console.groups import every_group
from redline.console.notices import Outcome, notice
from redline.console.paging import cursor_url
from redline.console.projects import ProjectChoice
from redline.console.rendering import url_with
from redline.console.rule_words import (
    Names,
    cap_words,
    change_sentence,
    preview_sentence,
    runs_words,
    sample_sentence,
    share_percent,
    takes_words,
    wants_words,
)
from redline.console.session import SignedIn
from redline.db import Database
from redline.errors import Invalid, RedlineError
from redline.groups import service as groups
from redline.identity.service import principal_names
from redline.queues.expert import rules as expert_rules
from redline.queues.expert.group_views import WantedGroupView
from redline.queues.expert.rules import PREVIEW_LAST, PreviewAsk, RuleView, VersionView
from redline.queues.matching import PINNED
from redline.queues.models import QueueRule
from redline.traces import service as traces
from redline.traces.models import Agent
from redline.web.addresses import path_id

router = APIRouter()
TAB = "rules"
RULES = "/ui/corrections/rules"
PAGE_SIZE = 25
HISTORY_SIZE = 50

# The table's columns that the Columns menu chooses, in order; the rule's name and version always show.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("runs", "Which runs"),
    ("takes", "How many"),
    ("wants", "What it wants"),
    ("cap", "Its cap"),
    ("open", "Open now"),
)
# The address's sort keys, as the service sorts (unsorted: oldest made first).
SORTS = ("name", "open")
# What the address says of an open dialog or of the last change: a post ends on its view without them.
PASSING = ("edit", "history", "history_after", "remove", "name", "version")

DONE = {
    "created": 'Made the queue rule "{name}": it picks runs as they end from now on.',
    "changed": 'Changed the queue rule "{name}": it is at version {version} now.',
    "unchanged": 'Nothing changed: "{name}" stays at version {version}.',
    "removed": 'Removed the queue rule "{name}": it picks no more runs; '
    "the runs it queued stay in the queue.",
}


@dataclass(frozen=True)
class RuleRow:
    """A rule as the page words it."""

    view: RuleView
    runs: str
    takes: str
    wants: str
    cap: str

    @property
    def rule(self) -> QueueRule:
        return self.view.rule


@dataclass(frozen=True)
class VersionRow:
    """One version of a rule in the History dialog: who wrote it, when, and what it changed, in words."""

    view: VersionView
    by: str
    changed: list[str]


# ----------------------------------------------------------------------------------------------- editor


class RuleForm(BaseModel):
    """The editor's fields, as typed: the agents whose runs it takes (none: every agent and flow), which
    versions, the share in percent, the corrector group it wants (none: any correction), the cap."""

    name: str = ""
    agents: list[str] = []
    versions_mode: str = "any"
    versions: str = ""
    share: str = "100"
    wants: str = ""
    correctors: str = "1"
    cap: str = ""
    paused: str = ""

    @classmethod
    def of_rule(cls, rule: QueueRule) -> RuleForm:
        """The editor filled in with a rule's version."""
        versions = rule.when.get("versions") or []
        return cls(
            name=rule.name,
            agents=list(rule.when.get("agentIds", [])),
            versions_mode="any" if not versions else "pinned" if versions == [PINNED] else "these",
            versions="" if versions == [PINNED] else ", ".join(versions),
            share=share_percent(rule.sample),
            wants=str(rule.corrector_group_id or ""),
            correctors=str(rule.correctors_wanted),
            cap=str(rule.max_open or ""),
            paused="" if rule.enabled else "on",
        )

    @classmethod
    def of_query(cls, query: QueryParams) -> RuleForm:
        """The editor's fields as its script sends them to the preview route."""
        fields = {name: query[name] for name in cls.model_fields if name != "agents" and name in query}
        return cls.model_validate({**fields, "agents": query.getlist("agents")})

    def when(self, kept: Mapping[str, Any]) -> dict[str, Any]:
        """`when` as the form sets it, over what the form doesn't show of the rule's own (`kept`: its
        flows, dry runs, metadata filters), which stay as they are."""
        when = {name: value for name, value in kept.items() if name not in ("agentIds", "versions")}
        if self.agents:
            when["agentIds"] = self.agents
        if self.versions_mode == "pinned":
            when["versions"] = [PINNED]
        elif self.versions_mode == "these":
            when["versions"] = [version.strip() for version in self.versions.split(",") if version.strip()]
        return when

    def sample(self) -> float:
        """The share typed in percent, as the service's share of 1."""
        share = form_number(self.share, "share")
        if share is None:
            return 1.0
        if not 0 < share <= 100:
            raise Invalid(
                f"Share: {self.share}% is not a share of the matching runs: more than 0 and at most 100.",
                details={"field": "share"},
            )
        return share / 100

    def fields(self, kept: Mapping[str, Any]) -> dict[str, Any]:
        """Every field of a rule the form sets, by the service's names."""
        return {
            "name": self.name.strip(),
            "when": self.when(kept),
            "sample": self.sample(),
            "max_open": form_whole(self.cap, "cap"),
            "corrector_group_id": form_id(self.wants, "wants"),
            "correctors_wanted": form_whole(self.correctors, "correctors") or 1,
            "enabled": not self.paused,
        }


def _changed(rule: QueueRule, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The fields that differ from the rule's version: only they make the next version."""
    return {name: value for name, value in fields.items() if getattr(rule, name) != value}


def _preview(
    session: Session, who: SignedIn, project_id: uuid.UUID, form: RuleForm, rule: QueueRule | None
) -> str:
    """What the rule as typed would have queued from the project's recent runs; the service's sentence
    when the rule as typed can't say (a version list left empty, a share out of range). A project the
    viewer can't see or read is refused as every page refuses it: not found, never a 200 about it."""
    try:
        sample = form.sample()
        asked = PreviewAsk(
            when=form.when(rule.when if rule is not None else {}),
            sample=sample,
            last=PREVIEW_LAST,
            rule_id=rule.rule_id if rule is not None else None,
        )
        return preview_sentence(expert_rules.preview(session, who.actor, project_id, asked), sample)
    except Invalid as error:
        return error.message


def _share_sentence(form: RuleForm) -> str:
    try:
        return sample_sentence(form.sample())
    except RedlineError as error:
        return error.message


# ------------------------------------------------------------------------------------------------- page


def _names(
    session: Session, who: SignedIn, project_id: uuid.UUID, rules: list[QueueRule]
) -> tuple[Names, list[Agent], list[WantedGroupView]]:
    """The names the rules' words need, the project's agents (the editor's choices) and the live groups
    that apply to its runs (what a rule may want)."""
    agents = traces.list_agents(session, who.actor, project_id)
    live = every_group(session, who.actor, groups.GroupFilters(project_id=project_id))
    flow_ids = {uuid.UUID(ident) for rule in rules for ident in rule.when.get("flowIds", [])}
    _, flows = traces.names_of_producers(session, (), flow_ids)
    group_ids = {rule.corrector_group_id for rule in rules if rule.corrector_group_id is not None}
    group_names = groups.names(session, group_ids)
    group_names.update({view.group.id: view.group.name for view in live})
    names = Names(
        agents={str(agent.id): agent.name for agent in agents},
        flows={str(ident): name for ident, name in flows.items()},
        groups={str(ident): name for ident, name in group_names.items()},
        live_groups=frozenset(str(view.group.id) for view in live),
    )
    return names, agents, live


def _row(view: RuleView, names: Names) -> RuleRow:
    rule = view.rule
    group = str(rule.corrector_group_id) if rule.corrector_group_id is not None else None
    return RuleRow(
        view,
        runs_words(rule.when, names),
        takes_words(rule.sample),
        wants_words(group, names, rule.correctors_wanted),
        cap_words(rule.max_open),
    )


def _sort(asked: str | None) -> tuple[str, bool, str]:
    """The service's sort and direction for the address's `sort` (`name`, `-open`…), and the key as the
    headers show it; an unknown one sorts as made."""
    key = (asked or "").removeprefix("-")
    if key not in SORTS:
        return "made", False, ""
    return key, (asked or "").startswith("-"), asked or ""


def _picked(query: QueryParams, name: str) -> uuid.UUID | None:
    value = query.get(name)
    return None if value in (None, "", "new") else path_id(value, "queue-rule", expert_rules.rule_not_found)


def _history(
    session: Session,
    who: SignedIn,
    project_id: uuid.UUID,
    rule_id: uuid.UUID,
    cursor: str | None,
    names: Names,
) -> tuple[list[VersionRow], str | None]:
    """A page of the rule's versions, newest first, each with what it changed in words."""
    page = expert_rules.versions(session, who.actor, project_id, rule_id, limit=HISTORY_SIZE, cursor=cursor)
    by = principal_names(session, [view.rule.created_by for view in page.items if view.rule.created_by])
    group_ids = {
        uuid.UUID(value)
        for view in page.items
        for change in view.changes
        if change["field"] == "correctorGroupId"
        for value in (change["from"], change["to"])
        if value is not None
    }
    named = {str(ident): name for ident, name in groups.names(session, group_ids).items()}
    names = replace(names, groups={**names.groups, **named})
    rows = []
    for view in page.items:
        author = by.get(view.rule.created_by) if view.rule.created_by is not None else None
        changed = [change_sentence(change, names) for change in view.changes]
        rows.append(VersionRow(view, author or "someone since removed", changed))
    return rows, page.next_cursor


def show(
    request: Request,
    who: SignedIn,
    db: Database,
    choice: ProjectChoice,
    outcome: Outcome | None = None,
    typed: RuleForm | None = None,
) -> Response:
    """`?tab=rules`: a page of the rules (searched, sorted, with the columns the address names) and the
    dialog it opens; a refused form's sentence (`outcome`) shows in its dialog."""
    said: Outcome = outcome or Outcome(notice=notice(DONE, request))
    if choice.project is None:
        return section_page(request, who, TAB, choice, said)
    query = request.query_params
    search = (query.get("q") or "").strip()
    sort, descending, sort_shown = _sort(query.get("sort"))
    known = {key for key, _ in COLUMNS}
    asked_cols = [key for key in query.getlist("cols") if key in known]
    editing, history_of, removing = query.get("edit"), _picked(query, "history"), _picked(query, "remove")
    edited = _picked(query, "edit")
    project_id = choice.project.id
    may_write = choice.may("write")
    context: dict[str, Any] = {}
    with db.read() as session:
        page = expert_rules.list_rules(
            session,
            who.actor,
            project_id,
            limit=PAGE_SIZE,
            cursor=query.get("after") or None,
            search=search or None,
            sort=sort,
            descending=descending,
        )
        opened = {
            ident: expert_rules.get_rule(session, who.actor, project_id, ident)
            for ident in (edited, history_of, removing)
            if ident is not None
        }
        shown = [view.rule for view in page.items] + [view.rule for view in opened.values()]
        names, agents, live = _names(session, who, project_id, shown)
        if editing is not None and may_write:
            rule = opened[edited].rule if edited is not None else None
            form = typed or (RuleForm.of_rule(rule) if rule is not None else RuleForm())
            context["editor"] = {
                "rule": rule,
                "form": form,
                "preview": _preview(session, who, project_id, form, rule),
                "share_sentence": _share_sentence(form),
                "runs": runs_words(rule.when, names) if rule is not None else "",
                # A group the rule wants that no new rule could (removed since): offered as it is, so
                # saving another change keeps it.
                "kept_wants": wants_words(form.wants, names)
                if form.wants and form.wants not in names.live_groups
                else None,
            }
        if history_of is not None:
            versions, older = _history(
                session, who, project_id, history_of, query.get("history_after"), names
            )
            context["history"] = {
                "rule": opened[history_of].rule,
                "versions": versions,
                "older_url": url_with(request, history_after=older) if older else None,
            }
        if removing is not None and may_write:
            context["removing"] = opened[removing]
    dialog_error = refusal_placed(said, "editor" in context or "removing" in context)
    return section_page(
        request,
        who,
        TAB,
        choice,
        said,
        rows=[_row(view, names) for view in page.items],
        columns=COLUMNS,
        cols=asked_cols or [key for key, _ in COLUMNS],
        sort=sort_shown,
        search=search,
        agents=agents,
        live_groups=live,
        may_write=may_write,
        first_url=cursor_url(request) if query.get("after") else None,
        next_url=cursor_url(request, after=page.next_cursor) if page.next_cursor else None,
        open_url=lambda rule: tab_url("to-review", choice, rule=str(rule.rule_id), whose="everyone"),
        close_url=closed_url(request, PASSING),
        dialog_error=dialog_error,
        rules_url=RULES,
        preview_url=f"{RULES}/preview",
        **context,
    )


# ------------------------------------------------------------------------------------------------ forms

Text = Annotated[str, Form()]


def _refused(
    request: Request,
    who: SignedIn,
    db: Database,
    project: str,
    view: str,
    error: RedlineError,
    typed: RuleForm | None = None,
) -> Response:
    """The view the form was sent from again, its dialog open, saying the service's sentence in it and
    showing what was typed."""
    query = view_query(view, [("tab", TAB), ("project", project)], drop=("name", "version"))
    again, choice, said = refused_view(request, who, db, project, query, error)
    return show(again, who, db, choice, said, typed)


@router.post("/corrections/rules")
def create_rule(
    request: Request, who: Changer, db: Db, project: Text, form: Annotated[RuleForm, Form()], view: Text = ""
) -> Response:
    try:
        project_id = path_id(project, "project")
        with db.write() as session:
            made = expert_rules.create_rule(session, who.actor, project_id, form.fields({})).rule.name
    except RedlineError as error:
        return _refused(request, who, db, project, view, error, form)
    return ended(TAB, project, view, PASSING, "created", ("name", made))


@router.post("/corrections/rules/{rule_id}")
def change_rule(
    request: Request,
    rule_id: str,
    who: Changer,
    db: Db,
    project: Text,
    form: Annotated[RuleForm, Form()],
    view: Text = "",
) -> Response:
    """A new version with what the form changed; none when it changed nothing."""
    try:
        project_id = path_id(project, "project")
        ident = path_id(rule_id, "queue-rule", expert_rules.rule_not_found)
        with db.write() as session:
            rule = expert_rules.get_rule(session, who.actor, project_id, ident).rule
            changes = _changed(rule, form.fields(rule.when))
            if changes:
                rule = expert_rules.update_rule(session, who.actor, project_id, ident, changes).rule
            name, version = rule.name, str(rule.version)
    except RedlineError as error:
        return _refused(request, who, db, project, view, error, form)
    done = "changed" if changes else "unchanged"
    return ended(TAB, project, view, PASSING, done, ("name", name), ("version", version))


@router.post("/corrections/rules/{rule_id}/remove")
def remove_rule(
    request: Request, rule_id: str, who: Changer, db: Db, project: Text, view: Text = ""
) -> Response:
    try:
        project_id = path_id(project, "project")
        ident = path_id(rule_id, "queue-rule", expert_rules.rule_not_found)
        with db.write() as session:
            removed = expert_rules.unregister(session, who.actor, project_id, ident).name
    except RedlineError as error:
        return _refused(request, who, db, project, view, error)
    return ended(TAB, project, view, PASSING, "removed", ("name", removed))


@router.get("/corrections/rules/preview")
def preview(request: Request, who: Viewer, db: Db, project: str, rule: str | None = None) -> JSONResponse:
    """What the editor's rule, as typed so far, would have queued from the recent runs, and its share in
    words: `{preview, share}` (a sentence each), for rule_editor.js."""
    form = RuleForm.of_query(request.query_params)
    project_id = path_id(project, "project")
    with db.read() as session:
        current = (
            expert_rules.get_rule(
                session, who.actor, project_id, path_id(rule, "queue-rule", expert_rules.rule_not_found)
            ).rule
            if rule
            else None
        )
        found = _preview(session, who, project_id, form, current)
    return JSONResponse({"preview": found, "share": _share_sentence(form)})
