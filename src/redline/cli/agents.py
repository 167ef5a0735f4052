"""`redline agents`: the agents seen in a project and the version each pins, as the local operator.

Apart from `redline projects|users|…` so that those need not import the traces domain (and with it the
queues and learning that new runs reach) to start.
"""

from __future__ import annotations

import click

from redline.cli.context import CliContext, as_operator, pass_context, print_table
from redline.identity import service as identity
from redline.traces import service as traces


@click.group()
def agents() -> None:
    """Agents seen in a project and the version each pins."""


@agents.command("list")
@click.option("--project", required=True, help="Project name or id.")
@pass_context
def list_agents(context: CliContext, project: str) -> None:
    """The agents that have sent runs to a project."""
    with as_operator(context, write=False) as (session, actor):
        target = identity.find_project(session, actor, project)
        rows = [
            (str(a.id), a.name, a.pinned_version or "-")
            for a in traces.list_agents(session, actor, target.id)
        ]
    print_table(rows, ("ID", "NAME", "PINNED VERSION"))


@agents.command("pin")
@click.argument("agent")
@click.option("--project", required=True, help="Project name or id.")
@click.option("--version", help="The version to pin; leave out to unpin.")
@pass_context
def pin_agent(context: CliContext, agent: str, project: str, version: str | None) -> None:
    """Pin the version of AGENT (a name) that runs use when they don't name one."""
    with as_operator(context) as (session, actor):
        target = identity.find_project(session, actor, project)
        named = [a for a in traces.list_agents(session, actor, target.id) if agent in (a.name, str(a.id))]
        if not named:
            raise click.ClickException(f'No agent "{agent}" in project {target.name}.')
        traces.pin_agent_version(session, actor, named[0].id, version)
        click.echo(f"{named[0].name} pins {version}." if version else f"{named[0].name} pins no version.")
