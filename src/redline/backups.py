"""Backing up a SQLite store while Redline runs, and putting a backup back (`redline db backup|restore`).

A backup is SQLite's online backup of the whole file in one step: one read transaction for its length,
so servers go on reading and writing (WAL lets writers past a reader) and the copy is of one moment,
never restarted by their writes as a stepwise backup would be. It is written beside the target under a
temporary name, checked (`PRAGMA quick_check`), and only then renamed into place, so the target is never
half a backup.

A restore needs the store to itself: it refuses while any connection has the store open (a server, a
worker, another command). SQLite tells that reliably: a store in WAL mode leaves WAL mode only when no
other connection has it open, so the restore asks it to, and takes a refusal for "in use". It checks
the backup first (a SQLite file, whole, with a schema this Redline knows) and copies it in with the same
backup API, so the store's file stays the one the server's path names.

PostgreSQL has its own tools for both (`pg_dump`, `pg_restore`); docs/deployment.md says how.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import create_engine

from redline.errors import Conflict, Invalid
from redline.migrations.commands import schema_state

IN_USE = (
    "The store is in use: a Redline process (redline serve, redline worker or another command) has it "
    "open. Stop them, then restore."
)


@dataclass(frozen=True)
class Copied:
    """What a backup or restore copied: the file's size in bytes, and the seconds it took."""

    size: int
    seconds: float


def _read_only(path: Path) -> str:
    """The URI that opens a file read-only, whatever characters its name holds (`?`, `#`, `%`)."""
    return f"{path.resolve().as_uri()}?mode=ro"


def back_up(store: Path, target: Path, *, on_start: Callable[[int], None] | None = None) -> Copied:
    """A consistent copy of the store at `target` (replaced if it exists), taken while servers run.
    `on_start(size)` hears the store's size before the copy begins."""
    started = time.monotonic()
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    try:
        with closing(sqlite3.connect(store)) as source:
            size = _size(source)
            if on_start is not None:
                on_start(size)
            with closing(sqlite3.connect(partial)) as copy:
                source.backup(copy)
                _check_whole(copy, partial)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return Copied(target.stat().st_size, time.monotonic() - started)


def restore(backup: Path, store: Path) -> Copied:
    """The store replaced by the backup, which must be a whole Redline store this Redline can read; refused
    (Conflict) while any other connection has the store open."""
    started = time.monotonic()
    _check_backup(backup)
    with closing(sqlite3.connect(store, isolation_level=None)) as target:
        target.execute("PRAGMA busy_timeout = 0")
        try:
            mode = target.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
        except sqlite3.OperationalError:
            mode = "wal"  # "database is locked": another connection holds it
        if str(mode).lower() == "wal":
            raise Conflict(IN_USE)
        with closing(sqlite3.connect(_read_only(backup), uri=True)) as source:
            source.backup(target)
        target.execute("PRAGMA journal_mode = WAL")
    return Copied(store.stat().st_size, time.monotonic() - started)


def _check_backup(backup: Path) -> None:
    """Refuse what is not a whole Redline store of a schema this Redline knows, before touching the store."""
    if not backup.is_file():
        raise Invalid(f"{backup}: no such file.")
    try:
        with closing(sqlite3.connect(_read_only(backup), uri=True)) as source:
            _check_whole(source, backup)
    except sqlite3.DatabaseError as error:
        raise Invalid(f"{backup} is not a SQLite store: {error}.") from None
    engine = create_engine("sqlite://", creator=lambda: sqlite3.connect(_read_only(backup), uri=True))
    try:
        with engine.connect() as connection:
            state = schema_state(connection)
    finally:
        engine.dispose()
    if state.current is None:
        raise Invalid(f"{backup} holds no Redline store.")
    if not state.known:
        raise Invalid(
            f"{backup} was made by a newer Redline (schema {state.current}); restore it with that version."
        )


def _check_whole(connection: sqlite3.Connection, path: Path) -> None:
    problems = [row[0] for row in connection.execute("PRAGMA quick_check")]
    if problems != ["ok"]:
        raise Invalid(f"{path} is damaged: {'; '.join(problems[:3])}.")


def _size(connection: sqlite3.Connection) -> int:
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    return int(pages) * int(connection.execute("PRAGMA page_size").fetchone()[0])
