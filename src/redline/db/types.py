"""Portable columns and ids: one naming convention, UTC times and JSON that read back the same on SQLite
and PostgreSQL, and ids the app makes itself."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    Dialect,
    MetaData,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.types import TypeDecorator
from uuid_utils.compat import uuid7

from redline.jsonio import dumps_text, loads

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
        offset = value.utcoffset()
        if offset is None:
            raise ValueError("naive datetimes are not stored: give a timezone")
        if offset:  # a time in UTC already (most are) is not converted: it cost bulk inserts a third
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


def utcnow() -> datetime:
    return datetime.now(UTC)
