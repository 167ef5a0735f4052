"""`redline workspaces`: the installation's tenants, made, listed, exported and deleted by the operator.

The operator at the CLI is an installation admin (access to the database is access to everything);
the same work is open over HTTP to installation admins (`/v1/workspaces`, docs/access.md).
"""

from __future__ import annotations

from pathlib import Path

import click

from redline.cli.context import CliContext, as_operator, open_output, pass_context, print_table, when_text
from redline.cli.progress import progress, say
from redline.errors import RedlineError
from redline.identity import service as identity
from redline.identity import workspaces as tenants
from redline.sentences import counted
from redline.tenancy import service as tenancy
from redline.tenancy.export import export_lines


@click.group()
def workspaces() -> None:
    """Workspaces: the installation's tenants, each with its own people, projects and data."""


@workspaces.command("create")
@click.argument("name")
@click.option(
    "--admin", "admin_name", default="admin", show_default=True, help="Its first admin's user name."
)
@click.option("--project", "project_name", default="default", show_default=True, help="Its first project.")
@pass_context
def create_workspace(context: CliContext, name: str, admin_name: str, project_name: str) -> None:
    """Make workspace NAME with a first project and an admin, and print the admin's token once."""
    with as_operator(context) as (session, actor):
        made = tenants.create_workspace(
            session, actor, name, admin_name=admin_name, project_name=project_name
        )
        click.echo(
            f"Created workspace {made.workspace.name} ({made.workspace.id}) with project "
            f'"{made.project.name}" and admin user "{made.admin.name}".'
        )
        click.echo(f"  Admin token (shown once, keep it safe): {made.admin_secret}")
        click.echo(f"  Work in it from the CLI: redline --workspace {made.workspace.name} projects list")


@workspaces.command("list")
@pass_context
def list_workspaces(context: CliContext) -> None:
    """Every workspace, oldest first, with how many projects and users each holds."""
    with as_operator(context, write=False) as (session, actor):
        rows = [
            (
                str(item.workspace.id),
                item.workspace.name,
                str(item.projects),
                str(item.users),
                when_text(item.workspace.created_at),
            )
            for item in tenants.list_workspaces(session, actor)
        ]
    print_table(rows, ("ID", "NAME", "PROJECTS", "USERS", "CREATED"))


@workspaces.command("export")
@click.argument("workspace")
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File to write [default: standard output].",
)
@pass_context
def export_workspace(context: CliContext, workspace: str, output: Path | None) -> None:
    """Everything in WORKSPACE (name or id) as JSON lines, one row a line, read at one moment
    (docs/access.md#export-and-delete-a-workspace)."""
    with as_operator(context) as (session, actor):
        chosen = tenancy.workspace_to_export(session, actor, workspace)
        chosen_id = chosen.id
    db = context.ready_database()
    lines = 0
    try:
        with db.read() as session, open_output(output) as sink:
            found = identity.find_workspace(session, str(chosen_id))
            with progress(f"Exporting workspace {found.name}", noun="row") as shown:
                for line in export_lines(session, found):
                    sink.write(line)
                    lines += 1
                    shown.advance()
    except RedlineError as error:
        raise click.ClickException(error.message) from error
    if output:
        click.echo(f"Wrote {counted(lines - 1, 'row')} of workspace {found.name} to {output}.")


@workspaces.command("delete")
@click.argument("workspace")
@click.option("--yes", is_flag=True, help="Delete without asking.")
@pass_context
def delete_workspace(context: CliContext, workspace: str, yes: bool) -> None:
    """Delete WORKSPACE (name or id) with every project, person, token and row in it, at once and for
    good: export it first to keep a copy."""
    if not yes:
        click.confirm(f'Delete workspace "{workspace}" and everything in it, for good?', abort=True)
    with as_operator(context) as (session, actor):
        deleted = tenancy.remove_workspace(session, actor, workspace)
    say(
        f"Deleted workspace {deleted.name}: {counted(deleted.projects, 'project')}, "
        f"{counted(deleted.runs, 'run')}, {counted(deleted.rows, 'row')} in all.",
        err=False,
    )
