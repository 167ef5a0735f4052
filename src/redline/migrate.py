"""Schema upgrades and drift checks, driven from code (the CLI, the server's start, the tests)."""

from __future__ import annotations

from importlib.resources import files

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine

from redline.db import writing
from redline.models import Base


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
    upgrade(engine)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))
