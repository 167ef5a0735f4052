"""`redline demo`: seed a project with deterministic data, so every page has something real to show."""

from __future__ import annotations

import sys
import time

import click

from redline import demo as demo_data
from redline.cli.context import CliContext, fail, pass_context
from redline.cli.progress import Progress, say
from redline.errors import RedlineError


def seed_demo(context: CliContext, project: str | None, count: int) -> None:
    """Seed the named project (or the first one) with every part of the demo, a line per part as it is
    done; `serve --demo` calls it too.

    On a terminal a bar on standard error counts the parts, with each part's line above it; elsewhere the
    lines alone are the progress (the plain-line mode of the other long commands would only repeat them).
    """
    db = context.ready_database()
    started = time.perf_counter()
    bar = Progress("Seeding the demo", noun="part", total=demo_data.PARTS) if sys.stderr.isatty() else None

    def report(line: str) -> None:
        say(line, err=False)
        if bar is not None:
            bar.advance()

    try:
        summary = demo_data.seed(db, project, count=count, report=report, workspace=context.workspace)
    except RedlineError as error:
        raise fail(error) from error
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - started
    click.echo(f'Demo ready in project "{summary.project}" in {seconds:.1f} s.')


@click.command()
@click.option("--project", help="Project name or id [default: the first project].")
@click.option(
    "--count",
    default=demo_data.DEFAULT_COUNT,
    show_default=True,
    type=click.IntRange(min=1),
    help="How many runs to make.",
)
@pass_context
def demo(context: CliContext, project: str | None, count: int) -> None:
    """Seed a project with data for every console page.

    A deterministic demo: support-agent runs (refunds, order look-ups; good and bad), people in two
    corrector groups correcting them through a queue rule, a reviewed annotation queue, a dataset, a
    reward model trained on their ratings that has scored every run, and two experiments running the
    dataset through the agent's two versions, one reviewed, the two compared.

    Running it again adds only what is missing: runs already there are kept, and a part whose rule,
    queue, dataset, model or experiment exists is left as it is.
    """
    seed_demo(context, project, count)
