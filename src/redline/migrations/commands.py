"""Schema upgrades and drift checks, driven from code (the CLI, the server's start, the tests)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine

from redline.db import writing


def _config(engine_connection: object) -> Config:
    config = Config()
    config.set_main_option("script_location", str(files("redline") / "migrations"))
    config.attributes["connection"] = engine_connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision`; a no-op when it is there already.

    On SQLite the migration holds the write lock from its start (BEGIN IMMEDIATE), so two processes
    migrating together take turns instead of both seeing an old schema.
    """
    with writing(engine).begin() as connection:
        command.upgrade(_config(connection), revision)


@dataclass(frozen=True)
class SchemaState:
    """Where a database's schema stands against the migrations this Redline ships."""

    current: str | None  # the database's revision; None when it holds no Redline schema
    head: str  # the newest revision this Redline knows
    known: bool  # whether `current` is one of this Redline's revisions (False: a newer Redline made it)


def schema_state(connection: Connection) -> SchemaState:
    """Read the store's revision without changing anything: what a command that only uses a store checks."""
    scripts = ScriptDirectory.from_config(_config(connection))
    current = MigrationContext.configure(connection).get_current_revision()
    head = scripts.get_current_head()
    assert head is not None, "the package ships its migrations"
    known = current is None or current in {script.revision for script in scripts.walk_revisions()}
    return SchemaState(current=current, head=head, known=known)


def downgrade(engine: Engine, revision: str) -> None:
    """Take the schema back to `revision` ("base" for empty): how a release is rolled back."""
    with engine.begin() as connection:
        command.downgrade(_config(connection), revision)


def revision(engine: Engine, message: str) -> None:
    """Write a new migration from the difference between the models and the schema (developers only)."""
    with engine.begin() as connection:
        command.revision(_config(connection), message=message, autogenerate=True)


def drift(engine: Engine) -> list[object]:
    """Differences between the models and the migrated schema; empty when they agree."""
    # Every domain's tables, imported only here: a command that merely opens the store needs only its own.
    from redline.migrations.schema import Base

    upgrade(engine)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))
