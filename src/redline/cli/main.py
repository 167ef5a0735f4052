"""`redline`: serve the API (the default), seed a demo, and manage the store from a shell."""

from __future__ import annotations

import click

from redline import __version__
from redline.cli import corrections, feedback, gepa, reward_models, serving, transfer, worker
from redline.cli import datasets as dataset_commands
from redline.cli import db as db_commands
from redline.cli import demo as demo_commands
from redline.cli import expert as expert_commands
from redline.cli import groups as group_commands
from redline.cli import identity as identity_commands
from redline.cli import queues as queue_commands
from redline.cli import reviews as review_commands
from redline.cli import trends as trend_commands
from redline.cli.context import CliContext, pass_context, shown_url
from redline.cli.demo import seed_demo


@click.group(invoke_without_command=True)
@click.option(
    "--database-url",
    help="SQLAlchemy URL of the store [env REDLINE_DATABASE_URL; default sqlite:///redline.db].",
)
@click.version_option(__version__, prog_name="redline")
@click.pass_context
def cli(ctx: click.Context, database_url: str | None) -> None:
    """Redline: self-hosted human feedback for AI agents.

    With no command, runs `redline serve`. Every option also comes from a REDLINE_* environment
    variable (see docs/configuration.md); a flag wins over the variable.
    """
    ctx.obj = CliContext(overrides={"database_url": database_url} if database_url else {})
    ctx.call_on_close(ctx.obj.close)
    if ctx.invoked_subcommand is None:
        ctx.invoke(serve)


@cli.command()
@click.option("--host", help="Address to listen on [env REDLINE_HOST; default 127.0.0.1].")
@click.option("--port", type=int, help="Port to listen on [env REDLINE_PORT; default 8000].")
@click.option(
    "--log-level", type=click.Choice(["debug", "info", "warning", "error"]), help="[env REDLINE_LOG_LEVEL]"
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Server processes sharing the port [env REDLINE_WORKERS; default 1].",
)
@click.option("--demo", is_flag=True, help="Seed the default project with the demo runs before serving.")
@pass_context
def serve(
    context: CliContext,
    host: str | None,
    port: int | None,
    log_level: str | None,
    workers: int | None,
    demo: bool,
) -> None:
    """Migrate the store, make the first workspace and admin if there are none, and serve the API."""
    settings = context.settings(host=host, port=port, log_level=log_level, workers=workers)
    click.echo(f"Store: {shown_url(settings.database_url)}")
    context.ready_database()
    if demo:
        seed_demo(context, None, 200)
    processes = f", {settings.workers} worker processes" if settings.workers > 1 else ""
    click.echo(f"Serving on http://{settings.host}:{settings.port} (API docs at /docs{processes})")
    serving.run(settings, context.database())


cli.add_command(demo_commands.demo)
cli.add_command(db_commands.db)
for command in identity_commands.COMMANDS:
    cli.add_command(command)
cli.add_command(transfer.import_runs)
cli.add_command(transfer.export)
cli.add_command(feedback.annotations_group)
cli.add_command(feedback.pairs_group)
cli.add_command(reward_models.reward_models_group)
cli.add_command(gepa.gepa_group)
cli.add_command(corrections.corrections)
cli.add_command(group_commands.corrector_groups)
cli.add_command(review_commands.reviews_group)
cli.add_command(queue_commands.queues_group)
cli.add_command(dataset_commands.datasets_group)
cli.add_command(expert_commands.queue_rules_group)
cli.add_command(expert_commands.expert_queue_group)
cli.add_command(trend_commands.trends)
cli.add_command(worker.worker)


def main() -> None:
    cli(prog_name="redline")
