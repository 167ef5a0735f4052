"""`redline users|tokens|projects|members`: manage who may do what, as the local operator."""

from __future__ import annotations

import uuid

import click

from redline.cli.context import CliContext, as_operator, pass_context, print_table, when_text
from redline.cli.progress import progress
from redline.identity import members as membership
from redline.identity import service as identity
from redline.identity.service import (
    PRINCIPAL_KINDS,
    PROJECT_ROLES,
    REVIEWER_ROLES,
    PrincipalKind,
    ProjectRole,
    ReviewerRole,
)
from redline.ingest.retention import run_pass
from redline.sentences import counted
from redline.traces import metadata_index, retention

# -------------------------------------------------------------------------------------------------- users


@click.group()
def users() -> None:
    """People (users) and programs (services) of the workspace."""


@users.command("create")
@click.argument("name")
@click.option("--kind", type=click.Choice(PRINCIPAL_KINDS), default="user", show_default=True)
@click.option("--reviewer-role", type=click.Choice(REVIEWER_ROLES), help="Users only [default: standard].")
@click.option("--workspace-admin", is_flag=True, help="May manage projects, users and every project's data.")
@click.option(
    "--installation-admin",
    is_flag=True,
    help="May also make, list, export and delete workspaces (a workspace admin too).",
)
@pass_context
def create_user(
    context: CliContext,
    name: str,
    kind: PrincipalKind,
    reviewer_role: ReviewerRole | None,
    workspace_admin: bool,
    installation_admin: bool,
) -> None:
    """Add a user or a service named NAME."""
    with as_operator(context) as (session, actor):
        principal = identity.create_user(
            session,
            actor,
            name=name,
            kind=kind,
            reviewer_role=reviewer_role,
            workspace_admin=workspace_admin,
            installation_admin=installation_admin,
        )
        click.echo(f"Created {principal.kind} {principal.name} ({principal.id}).")


@users.command("list")
@pass_context
def list_users(context: CliContext) -> None:
    """Every user and service of the workspace."""
    with as_operator(context, write=False) as (session, actor):
        rows = [
            (str(p.id), p.name, p.kind, p.reviewer_role or "-", "yes" if p.workspace_admin else "")
            for p in identity.list_users(session, actor)
        ]
    print_table(rows, ("ID", "NAME", "KIND", "REVIEWER ROLE", "WORKSPACE ADMIN"))


# ------------------------------------------------------------------------------------------------- tokens


@click.group()
def tokens() -> None:
    """Bearer tokens: made once (the secret is shown only then), listed by prefix, revoked."""


@tokens.command("create")
@click.option("--user", "user", required=True, help="User or service name or id.")
@click.option("--name", default="cli", show_default=True, help="What the token is for.")
@pass_context
def create_token(context: CliContext, user: str, name: str) -> None:
    """Make a token for a user or service and print its secret, once."""
    with as_operator(context) as (session, actor):
        principal = identity.find_user(session, actor, user)
        issued = identity.create_token(session, actor, principal.id, name)
        click.echo(f"Token {issued.token.id} for {principal.name} (shown once, keep it safe):")
        click.echo(issued.secret)


@tokens.command("list")
@click.option("--user", "user", required=True, help="User or service name or id.")
@pass_context
def list_tokens(context: CliContext, user: str) -> None:
    """A user's tokens with their prefix, last use and revocation."""
    with as_operator(context, write=False) as (session, actor):
        principal = identity.find_user(session, actor, user)
        rows = [
            (
                str(t.id),
                t.prefix,
                t.name,
                when_text(t.created_at),
                when_text(t.last_used_at),
                when_text(t.revoked_at),
            )
            for t in identity.list_tokens(session, actor, principal.id)
        ]
    print_table(rows, ("ID", "PREFIX", "NAME", "CREATED", "LAST USED", "REVOKED"))


@tokens.command("revoke")
@click.argument("token_id")
@pass_context
def revoke_token(context: CliContext, token_id: str) -> None:
    """Revoke a token by id: it stops working at once."""
    try:
        ident = uuid.UUID(token_id)
    except ValueError:
        raise click.BadParameter(f'"{token_id}" is not a token id.') from None
    with as_operator(context) as (session, actor):
        token = identity.revoke_token(session, actor, ident)
        click.echo(f"Revoked token {token.id} ({token.prefix}…).")


# ----------------------------------------------------------------------------------------------- projects


@click.group()
def projects() -> None:
    """Projects: the unit of access and settings."""


@projects.command("create")
@click.argument("name")
@pass_context
def create_project(context: CliContext, name: str) -> None:
    """Create a project named NAME."""
    with as_operator(context) as (session, actor):
        project = identity.create_project(session, actor, name)
        click.echo(f"Created project {project.name} ({project.id}).")


@projects.command("list")
@pass_context
def list_projects(context: CliContext) -> None:
    """Every project of the workspace."""
    with as_operator(context, write=False) as (session, actor):
        rows = [
            (str(p.id), p.name, when_text(p.created_at)) for p, _ in identity.visible_projects(session, actor)
        ]
    print_table(rows, ("ID", "NAME", "CREATED"))


@projects.command("set")
@click.argument("project")
@click.option(
    "--sort-end-user-corrections/--no-sort-end-user-corrections",
    default=None,
    help="Sort end users' corrections on save like everyone's, or leave them open and unsorted.",
)
@pass_context
def set_project(context: CliContext, project: str, sort_end_user_corrections: bool | None) -> None:
    """Change the settings of PROJECT (a name or id)."""
    if sort_end_user_corrections is None:
        raise click.UsageError("Nothing to set: give --sort-end-user-corrections or its --no- form.")
    with as_operator(context) as (session, actor):
        target = identity.find_project(session, actor, project)
        identity.set_sort_end_user_corrections(session, actor, target.id, sort_end_user_corrections)
        how = "sorts" if sort_end_user_corrections else "doesn't sort"
        click.echo(f"{target.name} {how} its end users' corrections on save.")


@projects.command("indexed-keys")
@click.argument("project")
@pass_context
def list_indexed_keys(context: CliContext, project: str) -> None:
    """The metadata keys PROJECT (a name or id) indexes for search, and how far each backfill has got."""
    with as_operator(context, write=False) as (session, actor):
        target = identity.find_project(session, actor, project)
        rows = [
            (
                view.row.key,
                view.row.state,
                f"{view.row.runs_done:,} of {view.row.runs_total:,} runs",
                when_text(view.row.declared_at),
            )
            for view in metadata_index.list_keys(session, actor, target.id)
        ]
    print_table(rows, ("KEY", "STATE", "INDEXED", "DECLARED"))


@projects.command("index")
@click.argument("project")
@click.argument("key")
@pass_context
def index_key(context: CliContext, project: str, key: str) -> None:
    """Index the metadata key KEY of PROJECT's runs, so searches filtering on it walk an index.

    The runs PROJECT already has are indexed in the background (by `redline serve` or `redline worker`);
    until that is done, searches on KEY read every run's metadata, as they do for keys not indexed.
    """
    with as_operator(context) as (session, actor):
        target = identity.find_project(session, actor, project)
        view = metadata_index.declare_key(session, actor, target.id, key)
        if view.row.state == metadata_index.READY:
            click.echo(f"{target.name} indexes the metadata key {key}.")
        else:
            click.echo(
                f"{target.name} indexes the metadata key {key} once its runs "
                f"({counted(view.row.runs_total, 'run')}) are indexed in the background "
                f"(redline projects indexed-keys {target.name} shows how far)."
            )


@projects.command("unindex")
@click.argument("project")
@click.argument("key")
@pass_context
def unindex_key(context: CliContext, project: str, key: str) -> None:
    """Stop indexing the metadata key KEY of PROJECT's runs; searches on it still work, unindexed."""
    with as_operator(context) as (session, actor):
        target = identity.find_project(session, actor, project)
        metadata_index.remove_key(session, actor, target.id, key)
        click.echo(f"{target.name} no longer indexes the metadata key {key}.")


@projects.command("retention")
@click.argument("project")
@click.option("--days", type=int, help="Keep each run's content this many days after it started.")
@click.option("--forever", is_flag=True, help="Keep runs' content for good (no retention).")
@click.option(
    "--now", "erase_now", is_flag=True, help="Erase what is due here and now, not in the background."
)
@pass_context
def project_retention(
    context: CliContext, project: str, days: int | None, forever: bool, erase_now: bool
) -> None:
    """How long PROJECT (a name or id) keeps its runs' content; with --days or --forever, change it.

    Past its retention a run's content (input, output, metadata, step and span content) is erased, as
    `POST /v1/runs/{id}/erase` does: what people said about it stays. `redline serve` (or `redline
    worker`) makes a pass every hour; --now makes one in this process, with its progress.
    """
    if days is not None and forever:
        raise click.UsageError("Give --days or --forever, not both.")
    with as_operator(context, write=days is not None or forever) as (session, actor):
        target = identity.find_project(session, actor, project)
        if days is not None or forever:
            retention.set_retention(session, actor, target.id, None if forever else days)
        kept = retention.get_retention(session, actor, target.id)
        name, target_id = target.name, target.id
    if kept.days is None:
        click.echo(f"{name} keeps its runs' content for good.")
    else:
        click.echo(
            f"{name} keeps each run's content {counted(kept.days, 'day')} after it started: "
            f"runs that started before {when_text(kept.cutoff)} are erased."
        )
    if erase_now and kept.days is not None:
        with progress(f"Erasing {name}'s runs past retention", noun="run") as shown:
            done = run_pass(
                context.ready_database(), target_id, lambda erased: shown.advance(erased - shown.count)
            )
        click.echo(f"Erased {counted(done['erased'], 'run')}.")


# ------------------------------------------------------------------------------------------------ members


@click.group()
def members() -> None:
    """Who has which role in a project: read < write < publish < admin."""


@members.command("list")
@click.option("--project", required=True, help="Project name or id.")
@pass_context
def list_members(context: CliContext, project: str) -> None:
    """The users and services with a role in a project (workspace admins hold every role unlisted)."""
    with as_operator(context, write=False) as (session, actor):
        target = identity.find_project(session, actor, project)
        rows = [
            (member.principal.name, member.principal.kind, member.role)
            for member in membership.list_members(session, actor, target.id)
        ]
    print_table(rows, ("USER", "KIND", "ROLE"))


@members.command("add")
@click.option("--project", required=True, help="Project name or id.")
@click.option("--user", "user", required=True, help="User or service name or id.")
@click.option("--role", type=click.Choice(PROJECT_ROLES), required=True)
@pass_context
def add_member(context: CliContext, project: str, user: str, role: ProjectRole) -> None:
    """Give a user a role in a project (or change the role it has)."""
    with as_operator(context) as (session, actor):
        target = identity.find_project(session, actor, project)
        principal = identity.find_user(session, actor, user)
        identity.set_member(session, actor, target.id, principal.id, role)
        click.echo(f"{principal.name} is {role} in {target.name}.")


@members.command("remove")
@click.option("--project", required=True, help="Project name or id.")
@click.option("--user", "user", required=True, help="User or service name or id.")
@pass_context
def remove_member(context: CliContext, project: str, user: str) -> None:
    """Take a user out of a project."""
    with as_operator(context) as (session, actor):
        target = identity.find_project(session, actor, project)
        principal = identity.find_user(session, actor, user)
        identity.remove_member(session, actor, target.id, principal.id)
        click.echo(f"{principal.name} is no longer a member of {target.name}.")
