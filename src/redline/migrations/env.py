"""Alembic environment: runs migrations on the connection `redline.migrations.commands` hands it."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from redline.migrations.schema import Base

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is None:
    raise RuntimeError(
        "Redline runs migrations through redline.migrations.commands, which passes a connection."
    )
_run(connection)
