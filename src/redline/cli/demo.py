"""`redline demo`: seed a project with deterministic data, so every page has something real to show."""

from __future__ import annotations

import click

from redline.cli.context import CliContext, fail, pass_context
from redline.errors import RedlineError
from redline.identity import service as identity
from redline.traces import service as traces
from redline.traces.demo import demo_runs


def seed_demo(context: CliContext, project: str | None, count: int) -> None:
    """Seed the named project (or the first one) with the demo runs; `serve --demo` calls it too."""
    db = context.ready_database()
    try:
        with db.write() as session:
            actor = identity.operator(session)
            target = (
                identity.find_project(session, actor, project)
                if project
                else identity.visible_projects(session, actor)[0][0]
            )
            stored = traces.ingest_runs(
                session, actor, demo_runs(target.id, count=count), source_format="demo"
            )
    except RedlineError as error:
        raise fail(error) from error
    replaced = sum(run.replaced for run in stored)
    click.echo(f'Demo: {len(stored)} support-agent runs in project "{target.name}" ({replaced} replaced).')


@click.command()
@click.option("--project", help="Project name or id [default: the first project].")
@click.option(
    "--count", default=200, show_default=True, type=click.IntRange(min=1), help="How many runs to make."
)
@pass_context
def demo(context: CliContext, project: str | None, count: int) -> None:
    """Seed a project with deterministic support-agent runs (refunds, order look-ups; good and bad).

    Running it again replaces the same runs rather than adding more.
    """
    seed_demo(context, project, count)
