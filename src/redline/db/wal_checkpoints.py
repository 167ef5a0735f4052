"""Checkpoints of a SQLite store's write-ahead log, made on a thread of their own.

In WAL mode a commit only appends pages to the log; a checkpoint copies them back into the database
file. SQLite's default makes the commit that takes the log past 1,000 pages do it, so every few batches
one request pays for copying pages scattered over a large file (at half a million runs, about a
quarter of a 1,000-run batch's time). A long-running process (`redline serve`, `redline worker`)
instead checkpoints every quarter second on this thread, beside the requests: SQLite does the copying
without Python's lock, on the other core, and a page that several commits touched is copied once.
Every connection keeps a far larger threshold of its own (`SQLITE_WAL_BACKSTOP_PAGES`), so the log still
stays bounded in a process without this thread or should it stall.

The checkpoints are PASSIVE: they never wait for a reader or a writer, and one that meets another
process's checkpoint (`redline serve --workers N`, each process with its own thread) just skips a turn.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable

from sqlalchemy import Engine

from redline.db.engine import sqlite_file_name

log = logging.getLogger("redline.db")

CHECKPOINT_EVERY_SECONDS = 0.25


def checkpoint_in_background(
    engine: Engine, every_seconds: float = CHECKPOINT_EVERY_SECONDS
) -> Callable[[], None]:
    """Start checkpointing the engine's SQLite log every `every_seconds`; answers the function that stops
    (and waits for) the thread. PostgreSQL, and a SQLite store in memory, have no log to checkpoint: the
    function answered then does nothing."""
    if sqlite_file_name(engine.url) is None:
        return lambda: None
    stop = threading.Event()
    thread = threading.Thread(
        target=_checkpoint_until,
        args=(engine, stop, every_seconds),
        name="redline-wal-checkpoints",
        daemon=True,
    )
    thread.start()

    def halt() -> None:
        stop.set()
        thread.join()

    return halt


def _checkpoint_until(engine: Engine, stop: threading.Event, every_seconds: float) -> None:
    # One pooled connection for the thread's life: with the engine's own pragmas, outside any
    # transaction (the driver's autocommit), which a checkpoint needs.
    with engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        assert raw is not None
        while not stop.wait(every_seconds):
            try:
                raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except sqlite3.Error:
                # A full disk, say: the next turn tries again, and commits still have the backstop.
                log.warning("WAL checkpoint failed", exc_info=True)
