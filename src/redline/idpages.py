"""Pages named by the ids at their edges (`starting_after`, `ending_before`), as the reviews surface's
clients page: each page is an index range read from the row the id names, however deep it is."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import Select, select, tuple_
from sqlalchemy.orm import InstrumentedAttribute, Session

from redline.errors import Invalid

T = TypeVar("T")

DEFAULT_LIMIT = 10
MAX_LIMIT = 200


@dataclass(frozen=True)
class IdPage(Generic[T]):
    items: list[T]
    has_more: bool


def _edge(
    session: Session, keys: Sequence[InstrumentedAttribute[Any]], ident: str, field: str
) -> tuple[Any, ...]:
    """The sort key of the row an edge id names; an id that names no row is bad input, not an empty page."""
    id_column = keys[-1]
    try:
        parsed = uuid.UUID(ident)
    except ValueError:
        parsed = None
    found = session.execute(select(*keys).where(id_column == parsed)).first() if parsed else None
    if found is None:
        raise Invalid(f"{field}: no item has the id {ident}.", details={"field": field})
    return tuple(found)


def id_page(
    session: Session,
    query: Select[T],
    keys: Sequence[InstrumentedAttribute[Any]],
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
    descending: bool = True,
) -> IdPage[T]:
    """A page of `query` in the order of `keys` (the last one the id), `descending` or not.

    `starting_after` gives the rows after that id; `ending_before` the `limit` rows just before it, still
    in list order; `has_more` says whether rows lie beyond the page in the direction it was read.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise Invalid(f"limit is from 1 to {MAX_LIMIT}.", details={"field": "limit"})
    if starting_after and ending_before:
        raise Invalid("Give starting_after or ending_before, not both.", details={"field": "ending_before"})
    key = tuple_(*keys)
    forward = ending_before is None
    reading_descending = descending == forward
    if starting_after:
        edge = tuple_(*_edge(session, keys, starting_after, "starting_after"))
        query = query.where(key < edge if descending else key > edge)
    elif ending_before:
        edge = tuple_(*_edge(session, keys, ending_before, "ending_before"))
        query = query.where(key > edge if descending else key < edge)
    order = [column.desc() if reading_descending else column.asc() for column in keys]
    rows = list(session.scalars(query.order_by(*order).limit(limit + 1)))
    has_more = len(rows) > limit
    rows = rows[:limit]
    if not forward:
        rows.reverse()
    return IdPage(rows, has_more)
