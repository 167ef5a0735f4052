"""Another writer holding the store, as another process would, and a store that gives up on it quickly:
for the tests of what each surface answers while the store stays busy (503 with Retry-After)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from redline.db import Database, make_engine


def impatient_database(database_url: str, backend: str) -> Database:
    """A Database that gives up on a lock quickly: 50 ms on SQLite, `lock_timeout` 100 ms on PostgreSQL."""
    db = Database(make_engine(database_url, sqlite_busy_timeout_ms=50))
    if backend == "postgresql":
        with db.engine.connect() as connection:
            name = connection.exec_driver_sql("SELECT current_database()").scalar_one()
            connection.exec_driver_sql(f"ALTER DATABASE \"{name}\" SET lock_timeout = '100ms'")
            connection.commit()
        db.engine.dispose()
    return db


@contextmanager
def store_locked(database_url: str, backend: str, tables: str) -> Iterator[None]:
    """SQLite's write lock held from another connection, or on PostgreSQL the `tables` (a comma-separated
    list) locked in EXCLUSIVE mode, which lets readers through and stops every writer."""
    if backend == "sqlite":
        holder = sqlite3.connect(database_url.removeprefix("sqlite:///"), isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            holder.rollback()
            holder.close()
        return
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql(f"LOCK TABLE {tables} IN EXCLUSIVE MODE")
            try:
                yield
            finally:
                connection.rollback()
    finally:
        engine.dispose()  # also when the block raised: an engine left to the collector leaks its connection
