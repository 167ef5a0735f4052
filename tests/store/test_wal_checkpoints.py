"""The write-ahead log is checkpointed beside the requests, not by them: every connection leaves it to
a threshold far above SQLite's 1,000 pages, and a long-running process's thread copies it back."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from redline.db import SQLITE_WAL_BACKSTOP_PAGES, Database
from redline.db.wal_checkpoints import checkpoint_in_background

ROWS = 2_000
ROW_BYTES = 1_000


def _write_a_few_hundred_pages(db: Database) -> None:
    with db.engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        assert raw is not None
        raw.execute("CREATE TABLE scratch (body TEXT)")
        raw.execute("BEGIN IMMEDIATE")
        raw.executemany(
            "INSERT INTO scratch VALUES (?)", [(f"{n:08d}" * (ROW_BYTES // 8),) for n in range(ROWS)]
        )
        raw.execute("COMMIT")


def _wait_for(condition: Callable[[], bool], seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_the_thread_copies_committed_pages_into_the_file(db: Database) -> None:
    if db.dialect_name != "sqlite":
        # No log to checkpoint: nothing starts, and stopping is harmless.
        checkpoint_in_background(db.engine)()
        return
    assert db.engine.url.database is not None
    path = Path(db.engine.url.database)
    with db.engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        assert raw is not None
        assert raw.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == SQLITE_WAL_BACKSTOP_PAGES
    before = path.stat().st_size
    _write_a_few_hundred_pages(db)
    # About 500 pages: below the backstop, so the commit left them in the log.
    assert path.stat().st_size == before
    stop = checkpoint_in_background(db.engine, every_seconds=0.05)
    try:
        assert _wait_for(lambda: path.stat().st_size >= before + ROWS * ROW_BYTES), (
            before,
            path.stat().st_size,
        )
    finally:
        stop()
    stop()
