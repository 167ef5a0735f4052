"""`redline db`: schema upgrades, the drift check CI runs, recounting what is kept counted, vacuuming, and
backing up and restoring a SQLite store."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click
from sqlalchemy.engine import make_url

from redline import backups
from redline.cli.context import CliContext, fail, pass_context, shown_url, sqlite_file
from redline.db import make_engine, vacuum_file
from redline.errors import RedlineError
from redline.migrations import commands as migrate
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


@db.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@pass_context
def backup(context: CliContext, file: Path) -> None:
    """Copy a SQLite store to FILE while Redline keeps running (FILE is replaced if it exists).

    The copy is of one moment, taken with SQLite's online backup, checked, and only then put at FILE.
    For PostgreSQL, use pg_dump (docs/deployment.md).
    """
    store = _sqlite_file(context, "back up", "pg_dump --format=custom --file FILE <database>")
    if file.resolve() == store:
        raise click.UsageError("FILE is the store itself: name another file.")
    if not store.is_file():
        raise click.ClickException(f"There is no store to back up at {store}.")
    copied = backups.back_up(
        store, file, on_start=lambda size: click.echo(f"Backing up {size / MIB:,.1f} MiB to {file} ...")
    )
    click.echo(f"Backed up to {file}: {copied.size / MIB:,.1f} MiB in {copied.seconds:.1f} s.")


@db.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--yes", is_flag=True, help="Replace the store without asking.")
@pass_context
def restore(context: CliContext, file: Path, yes: bool) -> None:
    """Replace a SQLite store with the backup in FILE (stop every Redline process first).

    Refused while any process has the store open, or when FILE is not a whole Redline store this
    version can read. For PostgreSQL, use pg_restore (docs/deployment.md).
    """
    store = _sqlite_file(context, "restore", "pg_restore --clean --if-exists --dbname <database> FILE")
    if file.resolve() == store:
        raise click.UsageError("FILE is the store itself: name a backup.")
    if not yes:
        click.confirm(f"Replace everything in {store} with {file}?", abort=True)
    try:
        copied = backups.restore(file, store)
    except RedlineError as error:
        raise fail(error) from error
    click.echo(f"Restored {file} into {store}: {copied.size / MIB:,.1f} MiB in {copied.seconds:.1f} s.")


def _sqlite_file(context: CliContext, doing: str, postgres_way: str) -> Path:
    """The store's file, or a one-line error saying how PostgreSQL's own tools do it."""
    url = context.settings().database_url
    path = sqlite_file(url)
    if path is not None:
        return path
    if make_url(url).get_backend_name() == "sqlite":
        raise click.ClickException(f"An in-memory store has nothing to {doing}.")
    raise click.ClickException(f"To {doing} a PostgreSQL store, use its own tool: {postgres_way}.")
