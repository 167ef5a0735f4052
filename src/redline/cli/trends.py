"""`redline trends`: the Trends page's sentences in a shell, as the local operator."""

from __future__ import annotations

import click

from redline.cli.context import CliContext, as_operator, pass_context
from redline.identity import service as identity
from redline.stats import trends as trends_service
from redline.stats.stored_figures import ask_for_figures


def _say(block: trends_service.Block, indent: str) -> None:
    for sentence in block.sentences:
        click.echo(f"{indent}{sentence}")


@click.command("trends")
@click.option("--project", required=True, help="Project name or id.")
@click.option(
    "--period",
    type=click.Choice(list(trends_service.PERIODS)),
    default="all",
    show_default=True,
    help="The runs queued over all time, or in the last 90 or 30 days.",
)
@pass_context
def trends(context: CliContext, project: str, period: str) -> None:
    """Per queue rule, by its latest version, how often people's corrections marked each agent version
    right, and how far its corrector groups agree (as the job worker last computed it, with its as-of
    time), in the sentences of the console's Trends page (docs/results-trends.md)."""
    with as_operator(context, write=False) as (session, actor):
        found = trends_service.trends(
            session, actor, identity.find_project(session, actor, project).id, period
        )
    if found.asking is not None:
        with as_operator(context) as (session, _):
            ask_for_figures(session, found.asking)
    if not found.rules:
        click.echo("No queue rules in this project: trends come from the runs a rule queues.")
    for rule in found.rules:
        click.echo(f"{rule.name} (version {rule.latest.rule_version})")
        _say(rule.latest, "  ")
        if rule.earlier_note:
            click.echo(f"  {rule.earlier_note}")
        for block in rule.earlier:
            click.echo(f"  Version {block.rule_version}:")
            _say(block, "    ")
        for sentence in [rule.agreement["stateSentence"], *rule.agreement["sentences"]]:
            click.echo(f"  {sentence}")
        click.echo("")
    click.echo(found.weights_sentence)
