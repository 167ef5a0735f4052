"""Ids and times written as the wire writes them, by the store itself, for reads of many rows.

Turning a stored UUID into `uuid.UUID` and back into text, or a stored time into a `datetime` and then
into ISO 8601, cost an export more than everything else it does per row (bench/README.md). These SQL
expressions make the same text in the query instead: `str(uuid)` (lowercase, dashed) and
`datetime.isoformat()` of a UTC time (`+00:00`, no fraction when the microseconds are zero). How each
store keeps the values is `db.types`' choice (SQLAlchemy's `Uuid` and `db.UTCDateTime`); this module
follows it and the tests compare both ways on both stores.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from sqlalchemy import String, case, cast, func, literal, type_coerce
from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.sql.elements import ColumnElement

# A table's column or a mapped class's attribute.
Column: TypeAlias = ColumnElement[Any] | QueryableAttribute[Any]

# SQLite keeps a UUID as 32 lowercase hex digits; the wire's form is dashed 8-4-4-4-12.
_UUID_GROUPS = ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))
# SQLite keeps a time as 'YYYY-MM-DD HH:MM:SS.ffffff' in UTC (SQLAlchemy's storage format).
_SQLITE_FRACTION_START = 21
# PostgreSQL's to_char patterns of the two ISO forms, read in UTC.
_PG_ISO_SECONDS = 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'
_PG_ISO_MICROSECONDS = 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"'


def stored(column: Column, dialect_name: str) -> ColumnElement[Any]:
    """The column as the driver hands it over, with no per-row conversion on SQLite (its text).

    For keyset paging: the value read is bound back unchanged and compares as the column does.
    """
    return type_coerce(column, String) if dialect_name == "sqlite" else column.expression


def uuid_text(column: Column, dialect_name: str) -> ColumnElement[str]:
    """A UUID column as `str(uuid.UUID)` writes it."""
    if dialect_name != "sqlite":
        return cast(column, String)
    raw = type_coerce(column, String)
    parts = [func.substr(raw, start, length) for start, length in _UUID_GROUPS]
    text: ColumnElement[str] = parts[0]
    for part in parts[1:]:
        text = text + literal("-") + part
    return type_coerce(text, String)


def time_text(column: Column, dialect_name: str) -> ColumnElement[str]:
    """A `UTCDateTime` column as `datetime.isoformat()` writes it: '2026-11-30T12:10:00.123456+00:00',
    or '2026-11-30T12:10:00+00:00' when the microseconds are zero."""
    if dialect_name != "sqlite":
        utc = func.timezone("UTC", column)
        whole_second = func.date_trunc("second", utc) == utc
        return type_coerce(
            case(
                (whole_second, func.to_char(utc, _PG_ISO_SECONDS)),
                else_=func.to_char(utc, _PG_ISO_MICROSECONDS),
            ),
            String,
        )
    raw = type_coerce(column, String)
    day, clock = func.substr(raw, 1, 10), func.substr(raw, 12, 8)
    fraction = func.substr(raw, _SQLITE_FRACTION_START - 1)
    zero = func.substr(raw, _SQLITE_FRACTION_START) == literal("000000")
    return type_coerce(
        case(
            (zero, day + literal("T") + clock + literal("+00:00")),
            else_=day + literal("T") + clock + fraction + literal("+00:00"),
        ),
        String,
    )
