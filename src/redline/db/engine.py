"""The engine and its transactions: SQLite's pragmas (each with its reason), writers taking turns, what a
busy or lost store looks like, and waiting it out.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import (
    Engine,
    create_engine,
    event,
    text,
)
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker

from redline.config import DEFAULT_SQLITE_CACHE_MIB
from redline.jsonio import dumps_text, loads

# Pages that erasing frees go back to the file system when the retention pass asks (`give_back_space`)
# instead of staying in the file for good. Takes effect only on a new file, before its first table, so it
# is set on an empty file alone, before anything else writes; an older file changes over with
# `redline db vacuum`.
SQLITE_AUTO_VACUUM = "INCREMENTAL"
# Readers never block writers and vice versa; the only mode that lets the API read during a long import.
SQLITE_JOURNAL_MODE = "WAL"
# In WAL, NORMAL loses at most the last transactions on power loss, never corrupts; FULL halves write speed.
SQLITE_SYNCHRONOUS = "NORMAL"
# SQLite leaves foreign keys off unless asked, per connection.
SQLITE_FOREIGN_KEYS = "ON"
# A commit that takes the write-ahead log past this many pages (40 MiB at 4 KiB) checkpoints it itself.
# Long-running processes checkpoint on a thread of their own far sooner (`wal_checkpoints`); this bounds
# the log where none runs, or should it stall. SQLite's own 1,000 made every few write requests pay.
SQLITE_WAL_BACKSTOP_PAGES = 10_000
# Once a checkpoint has emptied it, the log file is cut back to this size, not left at its largest.
SQLITE_JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024
# A write transaction takes the write lock at BEGIN, so two writers queue on busy_timeout instead of
# one failing with "database is locked" when it upgrades a read lock mid-transaction.
SQLITE_WRITE_BEGIN = "BEGIN IMMEDIATE"
SQLITE_READ_BEGIN = "BEGIN"

T = TypeVar("T")

_WRITE_OPTION = "redline_write"
# Any fixed number: the advisory lock that serialises first starts on PostgreSQL ("redline" in ASCII).
STARTUP_LOCK_KEY = 0x7265646C696E65


# Where a write waited for SQLite's write lock: behind another writer of this process (`_WriteTurn`), or
# in SQLite's busy handler while another connection (another process, the CLI) held the lock.
HELD_BY_THIS_PROCESS = "this-process"
HELD_BY_ANOTHER_CONNECTION = "another-connection"
# A BEGIN IMMEDIATE that takes longer than this waited for the lock: taking a free one takes microseconds.
LOCK_WAIT_FLOOR_S = 0.001
# Told of each wait (where, seconds): `web.metrics` counts them when metrics are on; none otherwise.
_lock_wait_listeners: list[Callable[[str, float], None]] = []


def listen_to_lock_waits(listener: Callable[[str, float], None]) -> None:
    """Have `listener(held_by, seconds)` told of every wait for SQLite's write lock from now on."""
    if listener not in _lock_wait_listeners:
        _lock_wait_listeners.append(listener)


def _lock_waited(held_by: str, seconds: float) -> None:
    for listener in _lock_wait_listeners:
        listener(held_by, seconds)


def sqlite_file_name(url: str | URL) -> str | None:
    """The file a SQLite store's URL names; None for PostgreSQL or a store in memory, which has no file
    (no log to checkpoint, none a second process could open)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return str(parsed.database)


def make_engine(
    url: str, *, sqlite_busy_timeout_ms: int = 5000, sqlite_cache_mib: int = DEFAULT_SQLITE_CACHE_MIB
) -> Engine:
    """An engine with Redline's connection rules: SQLite pragmas and BEGIN IMMEDIATE for writes."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, json_serializer=dumps_text, json_deserializer=loads, pool_pre_ping=True)
    engine = create_engine(url, json_serializer=dumps_text, json_deserializer=loads)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Hand transaction control to the "begin" hook below instead of the driver's own implicit BEGIN.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={int(sqlite_busy_timeout_ms)}")
        if cursor.execute("PRAGMA page_count").fetchone()[0] == 0:
            # Only a file with nothing in it yet: on one in use, asking would wait for the write lock.
            cursor.execute(f"PRAGMA auto_vacuum={SQLITE_AUTO_VACUUM}")
        cursor.execute(f"PRAGMA journal_mode={SQLITE_JOURNAL_MODE}")
        cursor.execute(f"PRAGMA synchronous={SQLITE_SYNCHRONOUS}")
        cursor.execute(f"PRAGMA foreign_keys={SQLITE_FOREIGN_KEYS}")
        cursor.execute(f"PRAGMA wal_autocheckpoint={SQLITE_WAL_BACKSTOP_PAGES}")
        cursor.execute(f"PRAGMA journal_size_limit={SQLITE_JOURNAL_SIZE_LIMIT}")
        # A negative cache_size is in KiB.
        cursor.execute(f"PRAGMA cache_size={-1024 * int(sqlite_cache_mib)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        statement = (
            SQLITE_WRITE_BEGIN if connection.get_execution_options().get(_WRITE_OPTION) else SQLITE_READ_BEGIN
        )
        # On the driver's connection rather than through exec_driver_sql: BEGIN needs none of SQLAlchemy's
        # execution machinery, which cost every transaction more than SQLite's own work for it
        # (bench/README.md, "The write path"). Its errors come out as SQLAlchemy's, as they would have
        # (a busy store's is what `is_busy` looks for).
        started = time.perf_counter()
        try:
            connection.connection.dbapi_connection.execute(statement)
        except sqlite3.Error as error:
            raise DBAPIError.instance(statement, None, error, sqlite3.Error) from error
        finally:
            waited = time.perf_counter() - started
            if waited >= LOCK_WAIT_FLOOR_S and statement == SQLITE_WRITE_BEGIN:
                _lock_waited(HELD_BY_ANOTHER_CONNECTION, waited)

    return engine


def give_back_space(engine: Engine) -> int:
    """Hand a SQLite file's free pages back to the file system (an incremental vacuum, outside any
    transaction: it takes the write lock only while it truncates); how many pages it gave back. What a
    PostgreSQL store frees is autovacuum's to reuse, so there it does nothing."""
    if engine.dialect.name != "sqlite":
        return 0
    with engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        assert raw is not None
        free = int(raw.execute("PRAGMA freelist_count").fetchone()[0])
        if free:
            # One statement frees one page per step: a script runs it to the end.
            raw.executescript("PRAGMA incremental_vacuum;")
        return free - int(raw.execute("PRAGMA freelist_count").fetchone()[0])


def vacuum_file(engine: Engine) -> tuple[int, int]:
    """Rewrite a SQLite file whole (VACUUM), which also turns on the incremental auto-vacuum a file made
    before Redline set it lacks; its size in bytes before and after. Needs the file to itself for as long
    as it takes, and free disk for a second copy."""
    with engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        assert raw is not None

        def size() -> int:
            pages = raw.execute("PRAGMA page_count").fetchone()[0]
            return int(pages) * int(raw.execute("PRAGMA page_size").fetchone()[0])

        before = size()
        raw.execute(f"PRAGMA auto_vacuum={SQLITE_AUTO_VACUUM}")
        raw.execute("VACUUM")
        return before, size()


def writing(engine: Engine) -> Engine:
    """The engine whose transactions take SQLite's write lock at BEGIN (the same engine elsewhere)."""
    return engine.execution_options(**{_WRITE_OPTION: True})


# SQLite's result codes for a store another connection holds (SQLITE_BUSY, SQLITE_LOCKED); extended codes
# such as SQLITE_BUSY_SNAPSHOT keep them in their low byte.
SQLITE_BUSY_CODES = frozenset({5, 6})
# PostgreSQL's SQLSTATEs of a transaction that lost a wait for a lock and may simply be run again:
# lock_not_available (lock_timeout passed, or NOWAIT), serialization_failure, deadlock_detected.
POSTGRESQL_BUSY_STATES = frozenset({"55P03", "40001", "40P01"})


def is_busy(error: BaseException) -> bool:
    """Whether the store refused because another connection held what it needed: worth trying again.

    Every other error (a broken constraint, a missing table, a lost connection) says the same the next
    time, so it is never retried.
    """
    if not isinstance(error, OperationalError):
        return False
    code = getattr(error.orig, "sqlite_errorcode", None)
    if code is not None:
        return int(code) & 0xFF in SQLITE_BUSY_CODES
    return getattr(error.orig, "sqlstate", None) in POSTGRESQL_BUSY_STATES


def is_transient(error: BaseException) -> bool:
    """Whether a store failure will likely pass: a lock wait exceeded (`is_busy`: SQLite's `database is
    locked`, PostgreSQL's lock timeout, serialization failure or deadlock), a lost or refused connection,
    a pool that stayed full. What a caller is asked to try again after, never a 500; anything else (a
    missing table, a full disk) is a fault that says the same the next time."""
    if isinstance(error, PoolTimeout) or is_busy(error):
        return True
    if isinstance(error, DBAPIError) and error.connection_invalidated:
        return True
    if not isinstance(error, OperationalError) or hasattr(error.orig, "sqlite_errorcode"):
        return False
    # PostgreSQL: a connection that failed (no SQLSTATE, or class 08) or a server shutting down (57P0x).
    state = getattr(error.orig, "sqlstate", None)
    return state is None or str(state).startswith(("08", "57P"))


class StillBusy(OperationalError):
    """The store stayed busy through every try of a `LockWaits`: the last busy error, and how long the
    writer was prepared to wait (a caller may say so, rather than only the store's own words)."""

    def __init__(self, error: OperationalError, seconds: float) -> None:
        super().__init__(error.statement, error.params, error.orig if error.orig is not None else error)
        self.seconds = seconds


@dataclass(frozen=True)
class LockWaits:
    """How a writer outwaits another process writing to the store: it tries again after pauses that
    double from `first_pause` up to `longest_pause`, until `seconds` have passed since its first try;
    then the last busy error goes through as `StillBusy`. `on_pause(pause, error)` hears of each pause
    (to tell people).

    Each try itself waits as the store does: up to the busy timeout on SQLite, up to `lock_timeout` (if
    the server sets one) on PostgreSQL.
    """

    seconds: float
    first_pause: float = 0.1
    longest_pause: float = 5.0
    on_pause: Callable[[float, OperationalError], None] | None = None

    def call(self, work: Callable[[], T]) -> T:
        """`work()`, called again after a pause each time it fails with a busy store, while time is left."""
        deadline = time.monotonic() + self.seconds
        pause = self.first_pause
        while True:
            try:
                return work()
            except OperationalError as error:
                left = deadline - time.monotonic()
                if not is_busy(error):
                    raise
                if left <= 0:
                    raise StillBusy(error, self.seconds) from error
                now = min(pause, left)
                if self.on_pause is not None:
                    self.on_pause(now, error)
                time.sleep(now)
                pause = min(pause * 2, self.longest_pause)


class _WriteTurn:
    """A process's writers to one SQLite file, one at a time (see `Database.write`).

    Waiting is bounded by the store's busy_timeout: past it the writer goes on to BEGIN IMMEDIATE
    anyway and gets SQLite's own "database is locked", so the lock only ever shortens waits.
    """

    def __init__(self, engine: Engine):
        self._engine = engine
        # Read at the first write, not here: making a Database must not touch the store.
        self._timeout_s: float | None = None
        self._lock = threading.Lock()
        self._held = threading.local()

    def _timeout(self) -> float:
        if self._timeout_s is None:
            with self._engine.connect() as connection:
                timeout_ms = connection.exec_driver_sql("PRAGMA busy_timeout").scalar() or 0
            self._timeout_s = int(timeout_ms) / 1000
        return self._timeout_s

    def __enter__(self) -> None:
        # A stack per thread: a write begun inside another (which SQLite then refuses) must not
        # release the outer one's turn.
        stack: list[bool] = self._held.__dict__.setdefault("stack", [])
        taken = self._lock.acquire(blocking=False)
        if not taken:
            started = time.perf_counter()
            taken = self._lock.acquire(timeout=self._timeout())
            _lock_waited(HELD_BY_THIS_PROCESS, time.perf_counter() - started)
        stack.append(taken)

    def __exit__(self, *exc: object) -> None:
        if self._held.stack.pop():
            self._lock.release()


class Database:
    """Opens transactions. `read()` for queries, `write()` for anything that changes rows."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._reads = sessionmaker(engine, expire_on_commit=False, autoflush=False)
        self._writes = sessionmaker(writing(engine), expire_on_commit=False, autoflush=False)
        # PostgreSQL takes row locks and needs no turn-taking.
        self._write_turn = _WriteTurn(engine) if engine.dialect.name == "sqlite" else None

    @property
    def dialect_name(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session whose transaction is rolled back when it closes: a read can never write by accident.

        Closing (rather than an explicit rollback) keeps loaded objects readable after the block.
        """
        with self._reads() as session:
            yield session

    @contextmanager
    def write(self, waits: LockWaits | None = None) -> Iterator[Session]:
        """A session committed when the block ends cleanly and rolled back when it raises.

        On SQLite, writers in this process queue on a lock before they ask for the store's write lock:
        SQLite's busy handler sleeps in growing steps (up to 100 ms) while another connection writes,
        so threads that meet there wait far longer than the write they wait for (p99s near a second
        with 8 clients, bench/README.md). The lock wakes the next writer as soon as one commits; other
        processes sharing the file still queue on busy_timeout.

        With `waits`, the transaction is begun before the block runs, and begun again while the store is
        busy: on SQLite that is where another process's write is met (BEGIN IMMEDIATE). The block itself
        runs once; `write_retrying` runs a whole transaction again, for waits met part-way (PostgreSQL).
        """
        if waits is None:
            with self._write_turn or nullcontext(), self._writes.begin() as session:
                yield session
            return
        with ExitStack() as held:
            yield waits.call(lambda: self._begun_write(held))

    def _begun_write(self, held: ExitStack) -> Session:
        """A write transaction begun (its connection taken, so SQLite's lock is held), handed to `held`;
        on failure nothing of it is left open."""
        with ExitStack() as attempt:
            attempt.enter_context(self._write_turn or nullcontext())
            session = attempt.enter_context(self._writes.begin())
            session.connection()
            held.push(attempt.pop_all())
            return session

    def write_retrying(self, work: Callable[[Session], T], waits: LockWaits) -> T:
        """`work` in a write transaction, the whole transaction done again while the store is busy.

        On PostgreSQL a lock is met by a statement part-way through (lock_timeout, a deadlock), after
        which the transaction can only be rolled back; `work` must be safe to run again from the start.
        """

        def once() -> T:
            with self.write() as session:
                return work(session)

        return waits.call(once)

    def write_retrying_conflicts(self, work: Callable[[Session], T], attempts: int = 3) -> T:
        """`work` in a write transaction, done again from the start when it lost a race on a unique key.

        Two callers may both see "nothing there yet" and both insert (PostgreSQL lets them, SQLite's
        write lock doesn't); the loser's commit breaks the key. Run again, it sees the winner's row and
        takes the path for an existing one, as if the two had come one after the other.
        """
        for attempt in range(attempts):
            try:
                with self.write() as session:
                    return work(session)
            except IntegrityError:
                if attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable: the last attempt returns or raises")

    @contextmanager
    def startup_lock(self) -> Iterator[None]:
        """Serialise first starts: processes starting together on an empty store must make one workspace.

        PostgreSQL takes a session advisory lock; SQLite needs none, as migrations and the first
        workspace are each written in a BEGIN IMMEDIATE transaction.
        """
        if self.dialect_name != "postgresql":
            yield
            return
        with self.engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": STARTUP_LOCK_KEY})
            connection.commit()
            try:
                yield
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": STARTUP_LOCK_KEY})
                connection.commit()

    def dispose(self) -> None:
        self.engine.dispose()
