"""Reading the plans of the statements a real request sends, on SQLite and on PostgreSQL.

`captured` records each SELECT the app sends through an engine while a block runs (a SQLAlchemy
`before_cursor_execute` listener), with its parameters, so a test explains exactly what the service
built; `faults` says what in a statement's plan would make it cost more as the store grows: a table
read whole, or rows sorted (SQLite's temp B-tree, PostgreSQL's Sort node) where an index should give
them in order; `seeks` whether a keyset page's cursor is part of the index range, not a filter on it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, event

_SQLITE_SCAN = re.compile(r"^SCAN (\w+)(?: AS \w+)?$")
_SORTS = ("Sort", "Incremental Sort")


@dataclass(frozen=True)
class Statement:
    sql: str
    parameters: Any

    def is_page_of(self, table: str) -> bool:
        """Whether this is a page of a list of `table`: read from it, ordered and limited."""
        reads = re.search(rf"\bFROM {table}\b", self.sql) is not None
        return reads and "ORDER BY" in self.sql and "LIMIT" in self.sql


@contextmanager
def captured(engine: Engine) -> Iterator[list[Statement]]:
    """The SELECTs sent through `engine` while the block runs, in order."""
    seen: list[Statement] = []

    def record(
        connection: Connection, cursor: Any, sql: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        if not executemany and sql.lstrip().upper().startswith(("SELECT", "WITH")):
            seen.append(Statement(sql, parameters))

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


@dataclass(frozen=True)
class Plan:
    """A statement's plan: SQLite's EXPLAIN QUERY PLAN details, or PostgreSQL's JSON plan tree."""

    statement: Statement
    sqlite: list[str] | None = None
    postgresql: dict[str, Any] | None = None

    def __str__(self) -> str:
        shown = "\n".join(self.sqlite) if self.sqlite is not None else _outline(self.postgresql or {})
        return f"{self.statement.sql}\n-- plan:\n{shown}"


def explain(connection: Connection, statement: Statement, *, seqscan: bool = True) -> Plan:
    """The plan the store makes for the statement with its own parameters (on PostgreSQL with
    `enable_seqscan` off when `seqscan` is False: then a Seq Scan means no index can serve it at all)."""
    if connection.dialect.name == "sqlite":
        rows = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement.sql}", statement.parameters).all()
        return Plan(statement, sqlite=[str(row[3]) for row in rows])
    connection.exec_driver_sql(f"SET enable_seqscan = {'on' if seqscan else 'off'}")
    try:
        document = connection.exec_driver_sql(
            f"EXPLAIN (FORMAT JSON) {statement.sql}", statement.parameters
        ).scalar_one()
    finally:
        connection.exec_driver_sql("RESET enable_seqscan")
    return Plan(statement, postgresql=document[0]["Plan"])


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)


def _outline(node: dict[str, Any], depth: int = 0) -> str:
    described = " ".join(
        str(node[key])
        for key in ("Node Type", "Relation Name", "Index Name", "Index Cond", "Filter", "Sort Key")
        if key in node
    )
    return "\n".join(
        ["  " * depth + described, *(_outline(child, depth + 1) for child in node.get("Plans", []))]
    )


def faults(plan: Plan, tables: Sequence[str], *, ordered: bool) -> list[str]:
    """What in the plan reads one of `tables` whole, or (for an `ordered` page) sorts its rows."""
    found: list[str] = []
    if plan.sqlite is not None:
        for detail in plan.sqlite:
            scan = _SQLITE_SCAN.match(detail)
            if scan and scan.group(1) in tables:
                found.append(f"reads {scan.group(1)} whole: {detail}")
            if ordered and detail.startswith("USE TEMP B-TREE FOR") and "ORDER BY" in detail:
                found.append(f"sorts: {detail}")
        return found
    for node in _nodes(plan.postgresql or {}):
        if node["Node Type"] == "Seq Scan" and node.get("Relation Name") in tables:
            found.append(f"reads {node['Relation Name']} whole (Seq Scan)")
        if ordered and node["Node Type"] in _SORTS:
            sorted_tables = {str(inner.get("Relation Name")) for inner in _nodes(node)} & set(tables)
            if sorted_tables:
                found.append(f"sorts rows of {', '.join(sorted(sorted_tables))} by {node.get('Sort Key')}")
    return found


def seeks(plan: Plan, table: str, columns: Sequence[str]) -> bool:
    """Whether the read of `table` starts at the cursor: the row comparison on `columns` is part of the
    index range (SQLite's SEARCH constraint, PostgreSQL's Index Cond), not a filter of what it reads."""
    if plan.sqlite is not None:
        row = f"({','.join(columns)})"
        return any(
            detail.startswith(f"SEARCH {table} ") and (f"{row}<" in detail or f"{row}>" in detail)
            for detail in plan.sqlite
        )
    # PostgreSQL writes a column it casts as `(status)::text`.
    pattern = re.compile(
        r"ROW\(" + ", ".join(rf"\(?{column}\)?(?:::[\w ]+)?" for column in columns) + r"\) [<>]"
    )
    return any(
        node.get("Relation Name") == table and pattern.search(node.get("Index Cond", "")) is not None
        for node in _nodes(plan.postgresql or {})
    )


def uses(plan: Plan, index: str) -> bool:
    """Whether the plan reads the index `index` (SQLite's SEARCH … USING [COVERING] INDEX, PostgreSQL's
    Index Scan or Index Only Scan of it)."""
    if plan.sqlite is not None:
        return any(re.search(rf"\bINDEX {index}\b", detail) for detail in plan.sqlite)
    return any(node.get("Index Name") == index for node in _nodes(plan.postgresql or {}))
