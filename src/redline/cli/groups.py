"""`redline corrector-groups list|create|get|set|remove`: who may correct as a group, where it applies
and what it weighs, from a shell, as the local operator (a workspace admin).

The same services and checks as `/v1/corrector-groups`, so a refusal is the API's sentence. A group is
named by its id.
"""

from __future__ import annotations

import uuid
from typing import Any

import click
from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import Session

from redline.cli.context import CliContext, as_operator, pass_context, print_table
from redline.cli.corrections import _agent
from redline.db.paging import MAX_LIMIT
from redline.fieldpaths import field_path
from redline.groups import service as groups
from redline.groups.models import CorrectorGroup
from redline.groups.schemas import GroupChange, GroupIn
from redline.identity import service as identity
from redline.identity.service import PRINCIPAL_KINDS, REVIEWER_ROLES, Actor
from redline.queues.expert import group_views
from redline.queues.expert.group_views import WantedGroupView


@click.group("corrector-groups")
def corrector_groups() -> None:
    """Corrector groups: who may correct as a group, where it applies, and what each correction weighs."""


# ------------------------------------------------------------------------------------------------ words


def _number(weight: float) -> str:
    return f"{weight:g}"


def _who(group: CorrectorGroup) -> str:
    """Who may correct as the group, in a few words; the operator sees whom it names."""
    restriction = group.assertable_by
    if restriction is None:
        return "anyone who may correct the run"
    parts = []
    if "minReviewerRole" in restriction:
        parts.append(f"{restriction['minReviewerRole']} reviewers or above")
    kinds = restriction.get("principalKinds")
    if kinds == ["user"]:
        parts.append("only people")
    elif kinds == ["service"]:
        parts.append("only services")
    if "principalIds" in restriction:
        parts.append("only " + ", ".join(restriction["principalIds"]))
    return "; ".join(parts) or "people and services"


def _wanted(view: WantedGroupView) -> str:
    return ", ".join(rule.name for rule in view.wanted_by) or "-"


def _checked(model: type[BaseModel], data: dict[str, Any]) -> Any:
    """The options as the API would take them: a broken rule is the API's sentence, naming the field."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problem = error.errors()[0]
        where = field_path(list(problem["loc"]), camel=True)
        raise click.UsageError(f"{where}: {problem['msg']}" if where else str(problem["msg"])) from None


def _restriction(
    min_reviewer_role: str | None, principal_kinds: tuple[str, ...], principal_ids: tuple[str, ...]
) -> dict[str, Any] | None:
    """The restriction the flags give, or None when none is given."""
    restriction: dict[str, Any] = {}
    if min_reviewer_role is not None:
        restriction["minReviewerRole"] = min_reviewer_role
    if principal_kinds:
        restriction["principalKinds"] = list(principal_kinds)
    if principal_ids:
        restriction["principalIds"] = list(principal_ids)
    return restriction or None


def _group_id(ctx: click.Context, param: click.Parameter, value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise click.BadParameter(f'"{value}" is not a corrector group id.') from None


def _show(session: Session, view: WantedGroupView) -> None:
    group = view.group
    removed = (
        f" (removed {group.unregistered_at.isoformat(timespec='seconds')})" if group.unregistered_at else ""
    )
    click.echo(f'Corrector group "{group.name}" ({group.id}){removed}')
    click.echo(f"  applies to: {groups.where_it_applies(session, group)}")
    click.echo(f"  weight: {_number(group.weight)}")
    click.echo(
        f"  who may give it: {_who(group)}"
        + (" (its corrections are experts')" if group.assertable_by else "")
    )
    click.echo(f"  wanted by: {_wanted(view)}")
    if group.description:
        click.echo(f"  {group.description}")


def _restriction_options(command: Any) -> Any:
    options = [
        click.option(
            "--min-reviewer-role",
            type=click.Choice(REVIEWER_ROLES),
            help="Only reviewers of this role or above may correct as the group.",
        ),
        click.option(
            "--principal-kind",
            "principal_kinds",
            multiple=True,
            type=click.Choice(PRINCIPAL_KINDS),
            help="user for people, service for service tokens; repeat for both.",
        ),
        click.option(
            "--principal-id",
            "principal_ids",
            multiple=True,
            help="A user's, service's or token's id that may correct as the group; repeatable.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


# ------------------------------------------------------------------------------------------- commands


@corrector_groups.command("list")
@click.option("--project", help="Groups that apply to this project's runs (name or id).")
@click.option(
    "--agent", help="Groups that apply to this agent's runs (name or id; a name is looked up in --project)."
)
@click.option(
    "--scope-kind",
    type=click.Choice(("tenant", "workspace", "project", "agent")),
    help="Only groups of this scope (tenant and workspace are the same).",
)
@pass_context
def list_groups(context: CliContext, project: str | None, agent: str | None, scope_kind: str | None) -> None:
    """Live corrector groups, oldest first: with --project, those that apply to its runs (the
    workspace's, the project's and its agents'); with --agent, those that apply to that agent's runs."""
    with as_operator(context, write=False) as (session, actor):
        filters = _filters(session, actor, project, agent, scope_kind)
        views: list[WantedGroupView] = []
        cursor: str | None = None
        while True:
            page = group_views.list_groups(session, actor, filters, limit=MAX_LIMIT, cursor=cursor)
            views.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                break
        rows = [
            (
                str(view.group.id),
                view.group.name,
                _number(view.group.weight),
                groups.where_it_applies(session, view.group),
                _who(view.group),
                _wanted(view),
            )
            for view in views
        ]
    print_table(rows, ("ID", "NAME", "WEIGHT", "APPLIES TO", "WHO MAY GIVE IT", "WANTED BY"))


def _filters(
    session: Session, actor: Actor, project: str | None, agent: str | None, scope_kind: str | None
) -> groups.GroupFilters:
    project_id = identity.find_project(session, actor, project).id if project else None
    agent_id = _agent(session, actor, agent, project_id).id if agent else None
    return groups.GroupFilters(scope_kind=scope_kind, project_id=project_id, agent_id=agent_id)


@corrector_groups.command("create")
@click.argument("name")
@click.option("--project", help="The project it applies to (name or id) [default: the whole workspace].")
@click.option("--agent", help="With --project: the agent (name or id) it applies to, in that project.")
@click.option(
    "--weight",
    type=float,
    default=1.0,
    show_default=True,
    help="How many times each of its corrections counts; 3 counts each three times.",
)
@click.option("--description", help="What the group is for.")
@_restriction_options
@pass_context
def create_group(
    context: CliContext,
    name: str,
    project: str | None,
    agent: str | None,
    weight: float,
    description: str | None,
    min_reviewer_role: str | None,
    principal_kinds: tuple[str, ...],
    principal_ids: tuple[str, ...],
) -> None:
    """Make the corrector group NAME. With restriction flags, only callers meeting each may correct as
    it, and their corrections are experts'."""
    if agent is not None and project is None:
        raise click.UsageError("--agent needs --project: an agent's group applies in one project.")
    with as_operator(context) as (session, actor):
        scope: dict[str, Any] = {"kind": groups.WORKSPACE}
        if project is not None:
            target = identity.find_project(session, actor, project)
            scope = {"kind": groups.PROJECT, "projectId": str(target.id)}
            if agent is not None:
                scope = {
                    **scope,
                    "kind": groups.AGENT,
                    "agentId": str(_agent(session, actor, agent, target.id).id),
                }
        body = _checked(
            GroupIn,
            {
                "scope": scope,
                "name": name,
                "weight": weight,
                "description": description,
                "assertableBy": _restriction(min_reviewer_role, principal_kinds, principal_ids),
            },
        )
        view = group_views.create(session, actor, body)
        click.echo(f'Created corrector group "{view.group.name}" ({view.group.id}).')
        _show(session, view)


@corrector_groups.command("get")
@click.argument("group_id", callback=_group_id)
@pass_context
def get_group(context: CliContext, group_id: uuid.UUID) -> None:
    """Show the corrector group GROUP_ID, live or removed, and the rules that want it."""
    with as_operator(context, write=False) as (session, actor):
        _show(session, group_views.get(session, actor, group_id))


@corrector_groups.command("set")
@click.argument("group_id", callback=_group_id)
@click.option("--name", help="A new name, free among the live groups of its scope.")
@click.option("--weight", type=float, help="How many times each of its corrections counts.")
@click.option("--description", help="What the group is for.")
@_restriction_options
@click.option(
    "--unrestricted",
    is_flag=True,
    help="Lift the restriction: corrections made before stay experts', new ones aren't.",
)
@pass_context
def set_group(
    context: CliContext,
    group_id: uuid.UUID,
    name: str | None,
    weight: float | None,
    description: str | None,
    min_reviewer_role: str | None,
    principal_kinds: tuple[str, ...],
    principal_ids: tuple[str, ...],
    unrestricted: bool,
) -> None:
    """Change the corrector group GROUP_ID. Restriction flags replace its whole restriction."""
    restriction = _restriction(min_reviewer_role, principal_kinds, principal_ids)
    if unrestricted and restriction is not None:
        raise click.UsageError("--unrestricted lifts the restriction: give it without restriction flags.")
    changes: dict[str, Any] = {
        wire: value
        for wire, value in (("name", name), ("weight", weight), ("description", description))
        if value is not None
    }
    if restriction is not None or unrestricted:
        changes["assertableBy"] = restriction
    if not changes:
        raise click.UsageError(
            "Nothing to set: give --name, --weight, --description, restriction flags or --unrestricted."
        )
    body = _checked(GroupChange, changes)
    with as_operator(context) as (session, actor):
        view = group_views.change(session, actor, group_id, body)
        click.echo(f'Changed corrector group "{view.group.name}" ({view.group.id}).')
        _show(session, view)


@corrector_groups.command("remove")
@click.argument("group_id", callback=_group_id)
@pass_context
def remove_group(context: CliContext, group_id: uuid.UUID) -> None:
    """Remove the corrector group GROUP_ID: no new correction can name it. Corrections that named it
    keep it, and still count with its weight."""
    with as_operator(context) as (session, actor):
        view = group_views.remove(session, actor, group_id)
        click.echo(f'Removed corrector group "{view.group.name}" ({view.group.id}).')
        wanting = view.wanted_by
        if wanting:
            rules = "1 rule wants" if len(wanting) == 1 else f"{len(wanting)} rules want"
            click.echo(
                f"{rules} its correction ({_wanted(view)}): change them, "
                "or their items wait for a group nobody can give."
            )
