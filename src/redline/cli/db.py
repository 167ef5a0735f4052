"""`redline db`: schema upgrades, the drift check CI runs, recounting what is kept counted, and vacuuming."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from redline import migrate
from redline.cli.context import CliContext, pass_context, shown_url
from redline.db import make_engine, vacuum_file
from redline.stats import rebuild

# Bytes in a MiB, for the sizes it reports.
MIB = 1024 * 1024


@click.group()
def db() -> None:
    """Manage the store: its schema, and the counts kept beside it."""


@db.command()
@pass_context
def upgrade(context: CliContext) -> None:
    """Migrate the store to the newest schema (and make the first workspace if there is none)."""
    context.ready_database()
    click.echo(f"Schema is current: {shown_url(context.settings().database_url)}")


@db.command()
@click.option(
    "--scratch/--in-place",
    default=True,
    show_default=True,
    help="Check on a new scratch SQLite file (default), or migrate the configured store and check it.",
)
@pass_context
def check(context: CliContext, scratch: bool) -> None:
    """Fail when the models and the migrations disagree: a model change needs a migration."""
    if scratch:
        with tempfile.TemporaryDirectory() as folder:
            engine = make_engine(f"sqlite:///{Path(folder) / 'check.db'}")
            differences = migrate.drift(engine)
            engine.dispose()
    else:
        with context.reaching_store():
            differences = migrate.drift(context.database().engine)
    if differences:
        for difference in differences:
            click.echo(f"  {difference}", err=True)
        raise click.ClickException(
            f"{len(differences)} difference(s) between the models and the migrations: write a migration."
        )
    click.echo("Models and migrations agree.")


@db.command()
@pass_context
def vacuum(context: CliContext) -> None:
    """Rewrite a SQLite store whole, giving back every free page (stop `redline serve` first).

    Retention erases content in place, leaving pages partly used; this compacts them. It also turns on
    the incremental auto-vacuum a store made before this version lacks. PostgreSQL's autovacuum reuses
    freed space by itself: there it does nothing.
    """
    database = context.ready_database()
    if database.dialect_name != "sqlite":
        click.echo("PostgreSQL's autovacuum reuses freed space: nothing to do.")
        return
    before, after = vacuum_file(database.engine)
    click.echo(f"Vacuumed: {before / MIB:,.1f} MiB before, {after / MIB:,.1f} MiB after.")


@db.command("recount-results")
@pass_context
def recount_results(context: CliContext) -> None:
    """Count every queue rule's results again from the queue and the corrections as they stand.

    The counts are kept in step on every write; this repairs them after a store was changed some other
    way (a restore of one table, a hand edit). Runs the rules' caps kept out are kept as counted.
    """
    with context.ready_database().write() as session:
        rule_ids = rebuild.tallied_rules(session)
        rebuild.rebuild(session, rule_ids)
    click.echo(f"Recounted the results of {len(rule_ids)} rule(s).")
