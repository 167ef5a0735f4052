"""Writing and reading many rows at once, portably: chunked IN lists, ids in the driver's own form,
bulk inserts that skip what is there, counts added to in place, and the planner hints each store needs
(`Unindexed` for SQLite, `among` and `row_exists` for PostgreSQL)."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

from sqlalchemy import (
    Boolean,
    Connection,
    Dialect,
    String,
    Table,
    any_,
    bindparam,
    func,
    insert,
    literal,
    literal_column,
    select,
    type_coerce,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import QueryableAttribute, Session
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.dml import Insert, UpdateBase
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.expression import FromClause
from sqlalchemy.sql.selectable import Select
from sqlalchemy.sql.visitors import InternalTraversal
from sqlalchemy.types import TypeEngine

from redline.jsonio import dumps_text

T = TypeVar("T")

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

    def of_hex(self, digits: str) -> StoredId:
        """An id given as its 32 lower-case hex digits."""
        return digits if self.as_text else uuid.UUID(hex=digits)

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


def among(column: ColumnElement[Any] | QueryableAttribute[Any], values: Select[Any]) -> ColumnElement[bool]:
    """`column IN (values)` that both stores read by seeking `column`'s index once per value the query
    gives, whatever they know of the tables: SQLite so reads a plain IN; PostgreSQL reads `= ANY(ARRAY(…))`
    as the query run once and an index scan for the array, where it turned a plain IN into a join that,
    without statistics on the table (not yet analyzed), walked every row of it once per value."""
    return _Among(column.expression, values.scalar_subquery())


class _Among(ColumnElement[bool]):
    inherit_cache = True
    type = Boolean()
    # A comparison, written as one: SQLAlchemy adds `= 1` to a boolean that isn't one on SQLite, which
    # then reads the table whole rather than the index.
    _is_implicitly_boolean = True
    _traverse_internals = [  # noqa: RUF012 (SQLAlchemy's)
        ("column", InternalTraversal.dp_clauseelement),
        ("values", InternalTraversal.dp_clauseelement),
    ]

    def __init__(self, column: ColumnElement[Any], values: ColumnElement[Any]):
        self.column = column
        self.values = values


@compiles(_Among)
def _among(element: _Among, compiler: SQLCompiler, **kw: Any) -> str:
    return f"{compiler.process(element.column, **kw)} = ANY (ARRAY{compiler.process(element.values, **kw)})"


@compiles(_Among, "sqlite")
def _among_sqlite(element: _Among, compiler: SQLCompiler, **kw: Any) -> str:
    return f"{compiler.process(element.column, **kw)} IN {compiler.process(element.values, **kw)}"


def row_exists(*conditions: ColumnElement[bool]) -> ColumnElement[bool]:
    """Whether a row meets `conditions` (correlated to the row asked about), as a subquery both stores run
    once per row asked about, through the index the conditions name. PostgreSQL turns an EXISTS into a
    join it plans as it likes: without statistics on the tables (not yet analyzed) it walked every row
    matching elsewhere once per row asked about; it leaves a scalar subquery where it is."""
    return select(literal(1)).where(*conditions).limit(1).scalar_subquery().is_not(None)


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
    prepared = driver_rows(table, rows, dialect, stored_ids=stored_ids)
    connection.exec_driver_sql(_insert_for(table, prepared.keys, dialect)[0], prepared.values)


@dataclass(frozen=True)
class DriverRows:
    """Rows of one table as SQLite's driver takes them: the rows' keys and each row's values in the
    INSERT's parameter order, already through their columns' bind processors. Made where the rows are
    built (an import's reading process), inserted where the store is written (`insert_missing_rows`)."""

    keys: tuple[str, ...]
    values: list[tuple[Any, ...]]


def driver_rows(
    table: Table, rows: list[dict[str, Any]], dialect: Dialect, *, stored_ids: Collection[str] = ()
) -> DriverRows:
    """The rows (which share their keys) in the driver's form on SQLite; `stored_ids` as for
    `bulk_insert`."""
    keys = tuple(rows[0]) if rows else ()
    if not rows:
        return DriverRows(keys, [])
    _, names, typed = _insert_for(table, keys, dialect)
    _check_keys(table, rows[0], names)
    if stored_ids:
        typed = [(index, process) for index, process in typed if names[index] not in stored_ids]
    return DriverRows(keys, _driver_rows(names, typed, rows))


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
        last: tuple[Any, Any, Any] = (None, None, None)
        for index, process in typed:
            value = values[index]
            if value is None:
                continue
            # One value in two columns (a row's created_at and updated_at) is processed once.
            if value is last[0] and process is last[1]:
                values[index] = last[2]
                continue
            values[index] = process(value)
            last = (value, process, values[index])
        return tuple(values)

    return [driver_row(row) for row in rows]


def insert_missing(
    session: Session, table: Table, rows: list[dict[str, Any]], *, stored_ids: Collection[str] = ()
) -> list[dict[str, Any]]:
    """Insert the rows whose `id` is not stored yet, and answer exactly those: for work that may run
    again (an import), which must leave what it stored before as it is and count only what it adds.
    The rows' ids must differ; `stored_ids` as for `bulk_insert`.

    On PostgreSQL another transaction may add the same id meanwhile: each row is inserted with
    ON CONFLICT DO NOTHING, and RETURNING says which went in. SQLite's rows go through
    `insert_missing_rows`.
    """
    if not rows:
        return []
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        prepared = driver_rows(table, rows, connection.dialect, stored_ids=stored_ids)
        return [rows[index] for index in insert_missing_rows(session, table, prepared)]
    statement = insert_ignoring_conflicts(table, connection.dialect.name).returning(table.c.id)
    added = set(connection.execute(statement, rows).scalars())
    return [row for row in rows if row["id"] in added]


def insert_missing_rows(session: Session, table: Table, prepared: DriverRows) -> list[int]:
    """`insert_missing` on SQLite for rows already in the driver's form: the positions of the rows
    inserted. SQLite's write transaction holds the store's lock from its start (BEGIN IMMEDIATE), so the
    ids looked up are all there will be until the commit; the rest go in with one executemany."""
    if not prepared.values:
        return []
    connection = session.connection()
    sql, names, _ = _insert_for(table, prepared.keys, connection.dialect)
    at = names.index("id")
    ids = [values[at] for values in prepared.values]
    key = StoredIds(as_text=True).column(table.c.id)
    stored = set(connection.execute(select(key).where(any_of(key, ids, "sqlite"))).scalars())
    fresh = [index for index, row_id in enumerate(ids) if row_id not in stored]
    if fresh:
        values = prepared.values if len(fresh) == len(ids) else [prepared.values[index] for index in fresh]
        connection.exec_driver_sql(sql, values)
    return fresh


@functools.lru_cache(maxsize=256)
def _insert_for(
    table: Table, keys: tuple[str, ...], dialect: Dialect
) -> tuple[str, list[str], list[tuple[int, Callable[[Any], Any]]]]:
    """The INSERT of these columns as the driver takes it, its parameter order, and the bind processors
    of the columns that have one: compiled once per table and key set (a single run's queueing inserts a
    handful of rows, where compiling cost more than inserting)."""
    compiled = insert(table).compile(dialect=dialect, column_keys=list(keys))
    names = list(compiled.positiontup or compiled.params)
    # Columns of one type share one processor, so a value given to both is processed once (`_driver_rows`).
    made: dict[tuple[type, str], Callable[[Any], Any] | None] = {}
    processors = []
    for name in names:
        impl = table.c[name].type.dialect_impl(dialect)
        kind = (type(impl), repr(impl))
        if kind not in made:
            made[kind] = impl.bind_processor(dialect)
        processors.append(made[kind])
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
