"""What every command shares: the settings (flags over REDLINE_* variables) and a database opened once."""

from __future__ import annotations

import gc
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO, Any

import click
from pydantic import ValidationError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from redline.cli.progress import say
from redline.config import Settings
from redline.db import Database, LockWaits, StillBusy, is_busy, make_engine, sqlite_file_name
from redline.errors import RedlineError
from redline.identity import service as identity
from redline.identity import workspaces
from redline.identity.service import Actor
from redline.jsonio import dumps
from redline.migrations import commands as migrate


@dataclass
class CliContext:
    overrides: dict[str, Any] = field(default_factory=dict)
    # The workspace the operator acts in (`--workspace`, name or id); None: the installation's first.
    workspace: str | None = None
    _database: Database | None = None

    def settings(self, **more: Any) -> Settings:
        """Flags over REDLINE_* variables; a bad value is a one-line error naming the setting."""
        values = {**self.overrides, **{key: value for key, value in more.items() if value is not None}}
        try:
            return Settings(**values)
        except ValidationError as error:
            problem = error.errors()[0]
            name = "REDLINE_" + "_".join(str(part) for part in problem["loc"]).upper()
            message = str(problem["msg"]).removeprefix("Value error, ")
            raise click.UsageError(f"{name}: {message}") from None

    def database(self) -> Database:
        if self._database is None:
            settings = self.settings()
            self._database = Database(
                make_engine(
                    settings.database_url,
                    sqlite_busy_timeout_ms=settings.sqlite_busy_timeout_ms,
                    sqlite_cache_mib=settings.sqlite_cache_mib,
                )
            )
        return self._database

    def operator(self, session: Session) -> Actor:
        """The local operator, in the workspace `--workspace` names."""
        return identity.operator(session, self.workspace)

    def close(self) -> None:
        """Give the store's connections back when the command ends, rather than at interpreter exit."""
        if self._database is not None:
            self._database.dispose()
            self._database = None

    @contextmanager
    def reaching_store(self) -> Iterator[None]:
        """A store that can't be reached is one line saying which and why, not a traceback."""
        try:
            yield
        except OperationalError as error:
            where = shown_url(self.settings().database_url)
            raise click.ClickException(f"Can't open the store {where}: {_reason(error)}") from None

    def ready_database(self) -> Database:
        """The store, ready for the command that runs: made or migrated by one of STORE_MAKERS, opened
        as it is by any other (which then ends with a sentence when there is no store to open)."""
        return self.make_store() if running_command() in STORE_MAKERS else self.open_store()

    def make_store(self) -> Database:
        """The database migrated to head and with its first workspace, whichever process starts first.

        The first start prints the admin's token, once; a headless start (REDLINE_INIT_ADMIN_TOKEN)
        prints nothing secret.
        """
        db = self.database()
        settings = self.settings()
        waits = lock_waits(self)
        with self.reaching_store(), db.startup_lock():
            waits.call(partial(migrate.upgrade, db.engine))
            with db.write(waits) as session:
                first = workspaces.bootstrap(
                    session,
                    workspace_name=settings.init_workspace,
                    project_name=settings.init_project,
                    admin_name=settings.init_admin_name,
                    admin_token=settings.init_admin_token,
                )
        if first.created:
            _announce_first_start(first)
        return db

    def open_store(self) -> Database:
        """The store that is there, at the schema this Redline writes; it is never made or migrated here.

        A SQLite file is looked for before connecting, as connecting would make it.
        """
        url = self.settings().database_url
        path = sqlite_file(url)
        if path is not None and not path.exists():
            raise _no_store(url, f"the file {path} does not exist")
        db = self.database()
        with self.reaching_store(), db.engine.connect() as connection:
            state = migrate.schema_state(connection)
        if state.current is None:
            holder = f"the file {path}" if path is not None else "the database"
            raise _no_store(url, f"{holder} holds no Redline schema")
        if not state.known:
            raise click.ClickException(
                f"The store at {shown_url(url)} is at schema {state.current}, which this Redline does not "
                "know: a newer Redline made it. Upgrade Redline to use it."
            )
        if state.current != state.head:
            raise click.ClickException(
                f"The store at {shown_url(url)} is at schema {state.current}; this Redline needs "
                f"{state.head}. Back it up, then run `redline db upgrade` to migrate it."
            )
        return db


# The commands that may make a store where there is none, or migrate one. Every other command opens the
# store it is pointed at, so one run from another directory or with a mistyped URL says so, rather than
# starting a new, empty store with a new workspace and admin token.
STORE_MAKERS = frozenset({"serve", "demo", "db upgrade"})


def running_command() -> str:
    """The command being run, as typed after `redline` ("db upgrade"); empty outside one."""
    names = []
    ctx = click.get_current_context(silent=True)
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(names))


def _no_store(url: str, why: str) -> click.ClickException:
    return click.ClickException(
        f"No store found at {shown_url(url)} ({why}).\n"
        "Point at yours with --database-url or REDLINE_DATABASE_URL, or run `redline serve` "
        "(or `redline db upgrade`) to make a new one there."
    )


def _announce_first_start(first: workspaces.Bootstrap) -> None:
    """Said on standard error: it is for the operator, and standard output may be data (an export)."""
    say(
        f'First start: made workspace "{first.workspace.name}", project "{first.project.name}" '
        f'({first.project.id}) and admin user "{first.admin.name}".'
    )
    if first.admin_secret is not None:
        say("")
        say(f"  Admin token (shown once, keep it safe): {first.admin_secret}")
        say("")
        say("  More people: redline users create NAME")
        say("               redline members add --project PROJECT --user NAME --role write")
        say("               redline tokens create --user NAME")
        say(f"  Lost it?     redline tokens create --user {first.admin.name}  (docs/access.md#a-lost-token)")
    else:
        say("The admin's token is the one given in REDLINE_INIT_ADMIN_TOKEN.")


pass_context = click.make_pass_decorator(CliContext)

# A batch of 1,000 runs makes ~100,000 short-lived objects (rows, dicts, UUIDs), none of them in cycles.
# At CPython's default threshold of 700 allocations the collector runs hundreds of times per batch and
# took a quarter of the batch's time (bench/README.md); 50,000 keeps collections rare but regular.
GC_YOUNG_THRESHOLD = 50_000


def tune_gc_for_bulk_work() -> None:
    """Freeze what start-up loaded (never garbage) and collect young objects less often."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite store's URL, as an absolute path; None for PostgreSQL or an in-memory store."""
    database = sqlite_file_name(url)
    return Path(database).resolve() if database is not None else None


def shown_url(url: str) -> str:
    """A database URL fit to print: the password, if any, masked."""
    return make_url(url).render_as_string(hide_password=True)


def fail(error: RedlineError) -> click.ClickException:
    """A domain error as a CLI error: its sentence, no traceback, exit status 1."""
    return click.ClickException(error.message)


# `-o/--output FILE` of a command that writes a file (an export); without it, standard output.
output_option = click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File to write [default: standard output].",
)


def open_output(output: Path | None) -> IO[Any]:
    """Where an export writes its bytes: the file named by --output, or standard output."""
    return click.open_file(str(output) if output else "-", "wb")


def write_json_lines(output: Path | None, records: Iterable[Any]) -> int:
    """Write each record as one JSON line to --output (or standard output) as it comes; how many."""
    count = 0
    with open_output(output) as sink:
        for record in records:
            sink.write(dumps(record) + b"\n")
            count += 1
    return count


@contextmanager
def as_operator(context: CliContext, write: bool = True) -> Iterator[tuple[Session, Actor]]:
    """A transaction on the store as the local operator; a refusal ends the command with its sentence.

    A write waits for a store another process is writing to (`lock_waits`) and, if it stays busy, ends
    the command with one line rather than a traceback; so does a lock met part-way, which only a
    PostgreSQL server with a `lock_timeout` cuts short.
    """
    db = context.ready_database()
    try:
        with db.write(lock_waits(context)) if write else db.read() as session:
            yield session, context.operator(session)
    except RedlineError as error:
        raise fail(error) from error
    except StillBusy as error:
        raise still_busy(error) from None
    except OperationalError as error:
        if not is_busy(error):
            raise
        raise click.ClickException(
            f"The store was busy ({_reason(error)}): another process held a lock this command needed, so "
            "nothing was changed. Run the command again."
        ) from None


def lock_waits(context: CliContext) -> LockWaits:
    """How the CLI's writers wait for a busy store (REDLINE_LOCK_WAIT_SECONDS in all), saying once, on
    standard error, that they are waiting."""
    said: list[bool] = []

    def on_pause(pause: float, error: OperationalError) -> None:
        if not said:
            said.append(True)
            say(f"The store is busy ({_reason(error)}): another process is writing; waiting…")

    return LockWaits(context.settings().lock_wait_seconds, on_pause=on_pause)


def still_busy(error: StillBusy, done: str = "") -> click.ClickException:
    """The one line a writer ends with when the store stayed busy for all of REDLINE_LOCK_WAIT_SECONDS."""
    return click.ClickException(
        f"The store stayed busy for {error.seconds:g} s ({_reason(error)}): another process kept writing "
        f"to it. {done}Run the command again, or raise REDLINE_LOCK_WAIT_SECONDS."
    )


def _reason(error: OperationalError) -> str:
    """The store's own first line of why, without SQLAlchemy's wrapping."""
    return str(error.orig).strip().splitlines()[0] if error.orig else str(error)


def print_table(rows: Sequence[tuple[str, ...]], header: tuple[str, ...]) -> None:
    """Rows as aligned columns under their header, for people reading a terminal."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def when_text(value: object) -> str:
    """A time to the second, or "-" for none."""
    return value.isoformat(timespec="seconds") if hasattr(value, "isoformat") else "-"


def trace_ids(traces: Sequence[str]) -> list[uuid.UUID]:
    """The --trace values as ids; one that is not a UUID is a usage error, said once for every command."""
    try:
        return [uuid.UUID(trace) for trace in traces]
    except ValueError:
        raise click.BadParameter("each --trace is a trace id (a UUID).") from None
