"""Keyset pagination: a page is the rows after an opaque cursor, so deep pages cost what the first does."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

import orjson

from redline.errors import Invalid

T = TypeVar("T")

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None

    @property
    def has_more(self) -> bool:
        return self.next_cursor is not None


def encode_cursor(*values: str) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(list(values))).decode().rstrip("=")


def decode_cursor(cursor: str, arity: int) -> list[str]:
    """The key values a cursor carries; a cursor that was not made here is bad input, not a 500."""
    try:
        values = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, orjson.JSONDecodeError):
        values = None
    if not isinstance(values, list) or len(values) != arity or not all(isinstance(v, str) for v in values):
        raise Invalid(f'"{cursor}" is not a cursor this list gave out.', details={"field": "cursor"})
    return values


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise Invalid(f"limit is from 1 to {MAX_LIMIT}.", details={"field": "limit"})
    return limit


def page_of_sorted(items: list[T], limit: int, cursor: str | None, key_of: Callable[[T], str]) -> Page[T]:
    """A page of a short list sorted by `key_of` (projects, users); the cursor is the last key seen."""
    check_limit(limit)
    start = 0
    if cursor:
        [after] = decode_cursor(cursor, 1)
        start = next((i + 1 for i, item in enumerate(items) if key_of(item) == after), len(items))
    chunk = items[start : start + limit]
    more = start + limit < len(items)
    return Page(chunk, encode_cursor(key_of(chunk[-1])) if more and chunk else None)


def time_cursor(at: datetime, ident: uuid.UUID) -> str:
    """The cursor of a list ordered by (a time, id)."""
    return encode_cursor(at.isoformat(), str(ident))


def decode_time_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    """The (time, id) a `time_cursor` carries; anything else is bad input."""
    at, ident = decode_cursor(cursor, 2)
    try:
        return datetime.fromisoformat(at), uuid.UUID(ident)
    except ValueError:
        raise Invalid(
            f'"{cursor}" is not a cursor this list gave out.', details={"field": "cursor"}
        ) from None
