"""An annotation file stored a group at a time (`redline annotations import`), on SQLite by two
processes: one reads the file, parses the lines and resolves them into rows on a read connection of its
own, while this one writes the rows it is sent.

Why two: storing (inserting, the runs' kept counts, commits) is about half the import's CPU and the
reading and resolving the other half; side by side on two cores they take the time of the larger
(bench/README.md, "Annotation import"). PostgreSQL's import waits on the server, not on this process's
CPU, and takes the groups in turn in one process, as does a SQLite store in memory (which another
process can't open).

What makes the reader's rows safe to write: they are only as true as the store it read. The writer
marks where other connections' commits stood (`OthersCommits`) before the reader starts, and checks the
mark in each write transaction. While no other connection has committed, the reader read what the writer
would read (apart from the writer's own annotations and counts, which resolving never reads), and its
rows go in as they are. Once another process has written (a server taking runs beside the import), that
group and every later one are resolved again in the writer's own transaction, as one process would; the
reader is told, and from then on only parses.
"""

from __future__ import annotations

import gc
import multiprocessing
import queue
import signal
import sys
import traceback
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from multiprocessing.context import ForkContext, SpawnContext
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from redline.annotations import importing
from redline.annotations.lines import ReadLine, SkippedLine, line_groups, read_lines
from redline.db import Database, LockWaits, make_engine, sqlite_file_name
from redline.db.data_version import OthersCommits
from redline.identity.service import Actor

# Groups read ahead of the writer: enough that it never waits while the reader is ahead, few enough
# that a slow store doesn't pile the file up in memory.
READ_AHEAD = 3
# How long the writer waits for the reader's next group before it checks that the reader still lives.
_POLL_S = 1.0


@dataclass(frozen=True)
class GroupDone:
    """One group stored: what storing it did, the lines skipped while reading it, and how many lines
    were read for it (for progress)."""

    stored: importing.GroupStored
    unread: list[SkippedLine]
    read: int


@dataclass(frozen=True)
class ImportTarget:
    """The project the lines go into, and who stores them."""

    actor: Actor
    project_id: uuid.UUID
    workspace_id: uuid.UUID


class ReaderFailed(RuntimeError):
    """The reading process stopped with an error (its traceback is the message) or died."""


def import_file(
    db: Database, target: ImportTarget, path: Path, group_size: int, waits: LockWaits
) -> Iterator[GroupDone]:
    """The file's lines stored in groups of `group_size`, each in its own transaction (run again while
    the store is busy), as each group is done."""
    if sqlite_file_name(db.engine.url) is not None:
        yield from _side_by_side(db, target, path, group_size, waits)
        return
    with path.open("rb") as source:
        for group, unread, read in line_groups(read_lines(source), group_size):
            stored = importing.GroupStored(0, 0, [])
            if group:
                stored = db.write_retrying(partial(_store_group, target, group), waits)
            yield GroupDone(stored, unread, read)


def _store_group(target: ImportTarget, group: list[ReadLine], session: Session) -> importing.GroupStored:
    return importing.store_group(session, target.actor, target.project_id, group)


@dataclass(frozen=True)
class _Read:
    """What the reader sends for each group."""

    group: importing.PreparedGroup | None
    unread: list[SkippedLine]
    read: int


@dataclass(frozen=True)
class _Failed:
    trace: str


def _side_by_side(
    db: Database, target: ImportTarget, path: Path, group_size: int, waits: LockWaits
) -> Iterator[GroupDone]:
    context = _process_context()
    sent: multiprocessing.Queue[_Read | _Failed | None] = context.Queue(maxsize=READ_AHEAD)
    trusted = context.Event()
    trusted.set()
    with db.read() as session:
        mark = OthersCommits.seen_in(session)
    reader = context.Process(
        target=_read_and_resolve,
        args=(
            db.engine.url.render_as_string(hide_password=False),
            target,
            str(path),
            group_size,
            sent,
            trusted,
            gc.get_threshold(),
        ),
        name="redline-import-reader",
        daemon=True,
    )
    reader.start()
    try:
        while (item := _next_sent(sent, reader)) is not None:
            stored = importing.GroupStored(0, 0, [])
            if item.group is not None:
                store = partial(_store_prepared, target, item.group, mark, trusted)
                stored = db.write_retrying(store, waits)
            yield GroupDone(stored, item.unread, item.read)
    finally:
        if reader.is_alive():
            reader.terminate()
        reader.join()
        sent.close()


def _process_context() -> ForkContext | SpawnContext:
    """Forked, the reader starts from this process's imports at once; where forking a process that has
    loaded system frameworks is unsafe (macOS) or unavailable (Windows), the reader starts afresh."""
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _store_prepared(
    target: ImportTarget,
    group: importing.PreparedGroup,
    mark: OthersCommits,
    trusted: Event,
    session: Session,
) -> importing.GroupStored:
    """One group in the writer's transaction: as the reader resolved it while no other connection has
    committed since the mark, else resolved again here (and the reader told to stop resolving)."""
    current = trusted.is_set() and mark.none_since(session)
    if not current:
        trusted.clear()
    return importing.store_prepared(session, target.actor, target.project_id, group, current=current)


def _next_sent(sent: multiprocessing.Queue[_Read | _Failed | None], reader: Any) -> _Read | None:
    """The reader's next group (None once the file is read), or ReaderFailed."""
    while True:
        try:
            item = sent.get(timeout=_POLL_S)
        except queue.Empty:
            if not reader.is_alive():
                raise ReaderFailed(
                    f"the import's reading process stopped (exit code {reader.exitcode})"
                ) from None
            continue
        if isinstance(item, _Failed):
            raise ReaderFailed(item.trace)
        return item


def _read_and_resolve(
    url: str,
    target: ImportTarget,
    path: str,
    group_size: int,
    sent: multiprocessing.Queue[_Read | _Failed | None],
    trusted: Event,
    gc_thresholds: tuple[int, int, int],
) -> None:
    """The reading process: each group parsed and, while the writer trusts what is read, resolved on a
    read connection of its own; sent in the file's order, then None."""
    # Ctrl-C reaches the whole process group: the writer stops the reader, which must not stop first.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Collected as the writer is (a bulk command's thresholds), whichever way the process was started.
    gc.freeze()
    gc.set_threshold(*gc_thresholds)
    try:
        db = Database(make_engine(url))
        # What the reader read stays true while it resolves (the writer stops it resolving otherwise), so
        # runs it has looked up once are not looked up again.
        seen = importing.RunsSeen()
        resolve: Callable[[list[ReadLine]], importing.PreparedGroup] = partial(_resolved, db, target, seen)
        with open(path, "rb") as source:
            for group, unread, read in line_groups(read_lines(source), group_size):
                prepared = None
                if group:
                    prepared = resolve(group) if trusted.is_set() else importing.unprepared_group(group)
                _send(sent, _Read(prepared, unread, read))
        _send(sent, None)
        db.engine.dispose()
    except _WriterGone:
        # What is still on its way to the writer never arrives: exit without waiting for it to be sent.
        sent.cancel_join_thread()
    except BaseException:  # whatever stops the reader is the writer's to report
        _send(sent, _Failed(traceback.format_exc()))


class _WriterGone(Exception):
    """The writing process is gone (killed): nobody will read what the reader sends."""


def _send(sent: multiprocessing.Queue[_Read | _Failed | None], item: _Read | _Failed | None) -> None:
    """Put the item in the queue, waiting while the writer is READ_AHEAD groups behind; a reader whose
    writer was killed stops rather than wait for ever."""
    writer = multiprocessing.parent_process()
    while True:
        try:
            sent.put(item, timeout=_POLL_S)
            return
        except queue.Full:
            if writer is not None and not writer.is_alive():
                raise _WriterGone from None


def _resolved(
    db: Database, target: ImportTarget, seen: importing.RunsSeen, group: list[ReadLine]
) -> importing.PreparedGroup:
    with db.read() as session:
        connection = session.connection()
        return importing.prepare_group(connection, target.project_id, target.workspace_id, group, seen)
