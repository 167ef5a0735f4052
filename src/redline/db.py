"""The store: engine set-up, transactions, and every portability concern between SQLite and PostgreSQL.

Services get a `Session` and may `flush()`, never `commit()`: the transaction is the visible
`with db.write() as s:` block at the edge (handler, CLI command, job).
"""

from __future__ import annotations

import functools
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeAlias, TypeVar

from sqlalchemy import (
    JSON,
    Connection,
    DateTime,
    Dialect,
    Engine,
    MetaData,
    String,
    Table,
    Text,
    any_,
    bindparam,
    create_engine,
    event,
    func,
    insert,
    literal_column,
    select,
    text,
    type_coerce,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import DeclarativeBase, QueryableAttribute, Session, sessionmaker
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.dml import Insert, UpdateBase
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.expression import FromClause
from sqlalchemy.sql.selectable import Select
from sqlalchemy.sql.visitors import InternalTraversal
from sqlalchemy.types import TypeDecorator, TypeEngine
from uuid_utils.compat import uuid7

from redline.config import DEFAULT_SQLITE_CACHE_MIB
from redline.errors import NotFound
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
# Long-running processes checkpoint on a thread of their own far sooner (`walcheckpoints`); this bounds
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

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base of every table; one naming convention so migrations name constraints the same."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


OUT_OF_RANGE_TIME = "a time that stays between the years 1 and 9999 once moved to UTC"


def in_utc(value: datetime) -> datetime:
    """A time from outside as the UTC instant it names (a naive one taken as UTC). ValueError when that
    instant falls outside the years a datetime holds: 0001-01-01T00:00:00+14:00 is in year 0 in UTC, and
    storing it failed inside the driver as a 500 (the OpenAPI fuzz test found it)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError(OUT_OF_RANGE_TIME) from None


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on both backends (SQLite keeps no zone, so it is added back on read)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are not stored: give a timezone")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class JSONText(TypeDecorator[Any]):
    """JSON kept in a TEXT column on SQLite.

    A column declared JSON has NUMERIC affinity in SQLite, which turns a stored bare number such as
    123456789012345678901234567890 into a float; TEXT keeps exactly what was written.
    """

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else dumps_text(value)

    def process_result_value(self, value: str | None, dialect: Dialect) -> Any:
        return None if value is None else loads(value)


# JSON documents: JSONB on PostgreSQL (indexable, compact), JSON text on SQLite. Python None is SQL
# NULL, not the JSON text 'null': `IS NULL` then finds absent values, and nothing is serialised for them.
JSONDocument = (
    JSON(none_as_null=True)
    .with_variant(JSONText(), "sqlite")
    .with_variant(JSONB(none_as_null=True), "postgresql")
)


def new_id() -> uuid.UUID:
    """Ids are made by the app, so a batch knows its ids before it writes. They are time-ordered
    (UUIDv7): each new row lands at the right edge of its primary-key and foreign-key indexes, where a
    random UUIDv4 lands anywhere in a B-tree too big to cache. Ids made earlier (v4) stay valid."""
    return uuid7()


def parse_id(value: str) -> uuid.UUID | None:
    """An id we made, or None for any other text (which then names nothing)."""
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def path_id(value: str, kind: str, missing: Callable[[str], NotFound] | None = None) -> uuid.UUID:
    """An id from an address (an API path, a console page); one that isn't a UUID names nothing, so it is
    not found (in the sentence of `missing`, when the kind has one of its own)."""
    ident = parse_id(value)
    if ident is None:
        raise missing(value) if missing is not None else NotFound(kind, value)
    return ident


def utcnow() -> datetime:
    return datetime.now(UTC)


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
        try:
            connection.connection.dbapi_connection.execute(statement)
        except sqlite3.Error as error:
            raise DBAPIError.instance(statement, None, error, sqlite3.Error) from error

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


# SQLite allows 32,766 bound parameters per statement; IN lists of 500 stay well inside every backend's
# limits, and each chunk is one round trip.
IN_LIST_CHUNK = 500


def in_chunks(values: Sequence[T], size: int = IN_LIST_CHUNK) -> Iterator[Sequence[T]]:
    """Values a chunk at a time, for `column.in_(chunk)` over lists of any length."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


# An id as the store's driver hands it over and takes it back: 32 hex digits on SQLite, a uuid.UUID on
# PostgreSQL.
StoredId: TypeAlias = str | uuid.UUID


@dataclass(frozen=True)
class StoredIds:
    """Ids kept in the driver's own form, for bulk work that only carries them from one statement to the
    next (an import's look-ups and inserts). On SQLite a `uuid.UUID` made for every id read and unmade for
    every id written cost an import more than the store's work on those ids (bench/README.md)."""

    as_text: bool

    @classmethod
    def on(cls, connection: Connection) -> StoredIds:
        return cls(connection.dialect.name == "sqlite")

    def column(self, column: ColumnElement[Any] | QueryableAttribute[Any]) -> ColumnElement[Any]:
        """The id column read, and compared with bound values, in the driver's form."""
        return type_coerce(column, String) if self.as_text else column.expression

    def of(self, value: uuid.UUID) -> StoredId:
        return value.hex if self.as_text else value

    @staticmethod
    def hex(value: StoredId) -> str:
        return value if isinstance(value, str) else value.hex


def any_of(
    column: ColumnElement[Any] | QueryableAttribute[Any], values: Sequence[Any], dialect_name: str
) -> ColumnElement[bool]:
    """`column IN values`, the values bound as one parameter: a JSON array read by `json_each` on SQLite
    (so strings, numbers or `StoredIds` text), an array on PostgreSQL. The statement is the same for any
    number of values, so SQLAlchemy compiles it once; an expanding IN renders a placeholder per value on
    every execution, which cost bulk look-ups more than the store's own work (bench/README.md)."""
    if dialect_name == "sqlite":
        listed: Select[tuple[Any]] = select(literal_column("value")).select_from(
            func.json_each(bindparam(None, dumps_text(list(values))))
        )
        return column.in_(listed.scalar_subquery())
    return column == any_(bindparam(None, list(values), type_=ARRAY(column.type)))


def pairs_table(
    pairs: Sequence[tuple[Any, Any]], types: tuple[TypeEngine[Any], TypeEngine[Any]], dialect_name: str
) -> tuple[FromClause, ColumnElement[Any], ColumnElement[Any]]:
    """A table of the pairs, bound as one parameter as in `any_of`, and its two columns: join it to a
    table's two-column key and the store seeks that key once per pair. (SQLite reads a row-value IN
    list by scanning every row of the key's first column and probing each against the list.)"""
    if dialect_name == "sqlite":
        listed = func.json_each(bindparam(None, dumps_text([list(pair) for pair in pairs]))).alias("listed")
        value: ColumnElement[str] = literal_column("listed.value")
        first = type_coerce(func.json_extract(value, "$[0]"), types[0])
        return listed, first, type_coerce(func.json_extract(value, "$[1]"), types[1])
    firsts = bindparam(None, [pair[0] for pair in pairs], type_=ARRAY(types[0]))
    seconds = bindparam(None, [pair[1] for pair in pairs], type_=ARRAY(types[1]))
    listed = func.unnest(firsts, seconds).table_valued("first", "second").render_derived()
    return listed, listed.c.first, listed.c.second


def insert_ignoring_conflicts(table: Any, dialect_name: str) -> Insert:
    """INSERT that skips rows clashing with a unique key: get-or-create without races on both backends."""
    return _upsert_insert(table, dialect_name).on_conflict_do_nothing()


def _upsert_insert(table: Any, dialect_name: str) -> postgresql.Insert | sqlite.Insert:
    """The INSERT of the store's dialect, the one that knows ON CONFLICT."""
    if dialect_name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def bulk_insert(
    session: Session, table: Table, rows: list[dict[str, Any]], *, stored_ids: Collection[str] = ()
) -> None:
    """Insert many rows that share their keys, as fast as the driver allows.

    On SQLite the rows go straight to the driver's executemany, each value through its column type's
    own bind processor: SQLAlchemy's generic per-row parameter handling cost as much as SQLite's
    insert itself (bench/README.md). PostgreSQL keeps SQLAlchemy's multi-row VALUES batching. The
    columns named in `stored_ids` carry ids already in the driver's form (`StoredIds`).
    """
    if not rows:
        return
    connection = session.connection()
    dialect = connection.dialect
    if dialect.name != "sqlite":
        _check_keys(table, rows[0], _insert_for(table, tuple(rows[0]), dialect)[1])
        connection.execute(insert(table), rows)
        return
    sql, names, typed = _insert_for(table, tuple(rows[0]), dialect)
    _check_keys(table, rows[0], names)
    if stored_ids:
        typed = [(index, process) for index, process in typed if names[index] not in stored_ids]
    connection.exec_driver_sql(sql, _driver_rows(names, typed, rows))


def execute_many(connection: Connection, statement: UpdateBase, rows: list[dict[str, Any]]) -> None:
    """Execute a statement once per row of parameters. On SQLite the statement is compiled once and the
    rows go to the driver's executemany as `bulk_insert`'s do: SQLAlchemy's parameter handling per row
    cost a bulk update of kept counts a third of its time (bench/README.md)."""
    if connection.dialect.name != "sqlite":
        connection.execute(statement, rows)
        return
    sql, names, typed = _compiled_for(statement, connection.dialect)
    connection.exec_driver_sql(sql, _driver_rows(names, typed, rows))


def _driver_rows(
    names: list[str], typed: list[tuple[int, Callable[[Any], Any]]], rows: list[dict[str, Any]]
) -> list[tuple[Any, ...]]:
    """Each row's values in the statement's parameter order, each through its type's bind processor."""

    def driver_row(row: dict[str, Any]) -> tuple[Any, ...]:
        values = [row[name] for name in names]
        for index, process in typed:
            value = values[index]
            if value is not None:
                values[index] = process(value)
        return tuple(values)

    return [driver_row(row) for row in rows]


def insert_missing(
    session: Session, table: Table, rows: list[dict[str, Any]], *, stored_ids: Collection[str] = ()
) -> list[dict[str, Any]]:
    """Insert the rows whose `id` is not stored yet, and answer exactly those: for work that may run
    again (an import), which must leave what it stored before as it is and count only what it adds.
    The rows' ids must differ; `stored_ids` as for `bulk_insert`.

    SQLite's write transaction holds the store's lock from its start (BEGIN IMMEDIATE), so the ids looked
    up are all there will be until the commit; the rest go in through `bulk_insert`'s executemany.
    On PostgreSQL another transaction may add the same id meanwhile: each row is inserted with
    ON CONFLICT DO NOTHING, and RETURNING says which went in.
    """
    if not rows:
        return []
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        key = StoredIds(as_text=True).column(table.c.id)
        ids = [StoredIds.hex(row["id"]) for row in rows]
        stored = set(connection.execute(select(key).where(any_of(key, ids, "sqlite"))).scalars())
        fresh = [row for row, row_id in zip(rows, ids, strict=True) if row_id not in stored]
        bulk_insert(session, table, fresh, stored_ids=stored_ids)
        return fresh
    statement = insert_ignoring_conflicts(table, connection.dialect.name).returning(table.c.id)
    added = set(connection.execute(statement, rows).scalars())
    return [row for row in rows if row["id"] in added]


@functools.lru_cache(maxsize=256)
def _insert_for(
    table: Table, keys: tuple[str, ...], dialect: Dialect
) -> tuple[str, list[str], list[tuple[int, Callable[[Any], Any]]]]:
    """The INSERT of these columns as the driver takes it, its parameter order, and the bind processors
    of the columns that have one: compiled once per table and key set (a single run's queueing inserts a
    handful of rows, where compiling cost more than inserting)."""
    compiled = insert(table).compile(dialect=dialect, column_keys=list(keys))
    names = list(compiled.positiontup or compiled.params)
    processors = [table.c[name].type.dialect_impl(dialect).bind_processor(dialect) for name in names]
    return compiled.string, names, [(i, p) for i, p in enumerate(processors) if p is not None]


@functools.lru_cache(maxsize=256)
def _compiled_for(
    statement: UpdateBase, dialect: Dialect
) -> tuple[str, list[str], list[tuple[int, Callable[[Any], Any]]]]:
    """A statement as the driver takes it, its parameter order, and the bind processors of the
    parameters that have one: compiled once per statement (the statements passed are built once)."""
    compiled = statement.compile(dialect=dialect)
    names = list(compiled.positiontup or compiled.params)
    processors = [compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect) for name in names]
    return compiled.string, names, [(i, p) for i, p in enumerate(processors) if p is not None]


def _check_keys(table: Table, row: dict[str, Any], names: list[str]) -> None:
    if set(names) != set(row):
        # Column defaults are SQLAlchemy's to apply; rows here must carry every value themselves.
        raise ValueError(f"bulk_insert into {table.name} needs values for {sorted(set(names) - set(row))}")


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
        stack.append(self._lock.acquire(timeout=self._timeout()))

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


def add_to_counts(session: Session, table: FromClause, column: str, deltas: list[dict[str, Any]]) -> None:
    """Add each row's `column` to the stored count with the same primary key, creating rows as needed.

    One INSERT … ON CONFLICT DO UPDATE run for every row (executemany, in the rows' order), so concurrent
    writers add up rather than overwrite each other, and take their row locks in the order given. Counts
    are plain Core rows: the statement goes to the session's connection, past the ORM.
    """
    if deltas:
        connection = session.connection()
        connection.execute(_upsert_adding(table, column, connection.dialect.name), deltas)


@functools.lru_cache(maxsize=64)
def _upsert_adding(table: FromClause, column: str, dialect_name: str) -> Insert:
    statement = _upsert_insert(table, dialect_name)
    return statement.on_conflict_do_update(
        index_elements=[key.name for key in table.primary_key],
        set_={column: table.c[column] + statement.excluded[column]},
    )


class Unindexed(ColumnElement[Any]):
    """A column SQLite must not look rows up by: `+column` there (the same value, no index), the column
    itself elsewhere. For a query whose best plan SQLite, without statistics, would not find alone."""

    inherit_cache = True
    _traverse_internals = [("column", InternalTraversal.dp_clauseelement)]  # noqa: RUF012 (SQLAlchemy's)

    def __init__(self, column: ColumnElement[Any]):
        self.column = column
        self.type = column.type


@compiles(Unindexed)
def _unindexed(element: Unindexed, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(element.column, **kw)


@compiles(Unindexed, "sqlite")
def _unindexed_sqlite(element: Unindexed, compiler: SQLCompiler, **kw: Any) -> str:
    return "+" + compiler.process(element.column, **kw)
