"""Pages named by the ids at their edges (`starting_after`, `ending_before`), as the reviews surface's
clients page: each page is an index range read from the row the id names, however deep it is."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypedDict, TypeVar

from sqlalchemy import Select, func, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from redline.db import parse_id
from redline.db.keyset import past
from redline.db.wire_text import Column
from redline.errors import Invalid

T = TypeVar("T")
V = TypeVar("V")

DEFAULT_LIMIT = 10
MAX_LIMIT = 200


class PageAsked(TypedDict):
    """A page of a service's id pages as its callers ask for it (`service.list_x(session, actor,
    **asked)`): `limit` rows after the row `starting_after`, or just before `ending_before`."""

    limit: int
    starting_after: str | None
    ending_before: str | None


@dataclass(frozen=True)
class IdPage(Generic[T]):
    items: list[T]
    has_more: bool


def no_such_edge(field: str, ident: str) -> Invalid:
    """An edge id that names no row of the list: bad input, not an empty page."""
    return Invalid(f"{field}: no item has the id {ident}.", details={"field": field})


def _edge(
    session: Session, keys: Sequence[InstrumentedAttribute[Any]], ident: str, field: str
) -> tuple[Any, ...]:
    """The sort key of the row an edge id names."""
    id_column = keys[-1]
    parsed = parse_id(ident)
    found = session.execute(select(*keys).where(id_column == parsed)).first() if parsed else None
    if found is None:
        raise no_such_edge(field, ident)
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
    return rows_page(
        lambda paged: list(session.scalars(paged)),
        query,
        keys,
        lambda ident, field: _edge(session, keys, ident, field),
        limit=limit,
        starting_after=starting_after,
        ending_before=ending_before,
        descending=descending,
    )


def rows_page(
    read: Callable[[Select[Any]], list[T]],
    query: Select[Any],
    keys: Sequence[Column],
    edge_of: Callable[[str, str], tuple[Any, ...]],
    *,
    limit: int,
    starting_after: str | None = None,
    ending_before: str | None = None,
    descending: bool = True,
) -> IdPage[T]:
    """`id_page` for any list whose rows an id names: `read` runs the ordered, limited query into rows,
    and `edge_of(id, field)` answers the sort key (`keys`' values) of the row an edge id names, raising
    `no_such_edge` when none has it (a list of computed rows, whose ids are not one column's)."""
    if not 1 <= limit <= MAX_LIMIT:
        raise Invalid(f"limit is from 1 to {MAX_LIMIT}.", details={"field": "limit"})
    if starting_after and ending_before:
        raise Invalid("Give starting_after or ending_before, not both.", details={"field": "ending_before"})
    forward = ending_before is None
    reading_descending = descending == forward
    if starting_after or ending_before:
        field = "starting_after" if starting_after else "ending_before"
        edge = edge_of(starting_after or ending_before or "", field)
        query = query.where(past(keys, edge, descending=reading_descending))
    order = [column.desc() if reading_descending else column.asc() for column in keys]
    rows = read(query.order_by(*order).limit(limit + 1))
    has_more = len(rows) > limit
    rows = rows[:limit]
    if not forward:
        rows.reverse()
    return IdPage(rows, has_more)


def every_item(read: Callable[[str | None], tuple[IdPage[Any], Sequence[V]]]) -> Iterator[V]:
    """Every item of an id-paged list, read a page at a time as the caller gets that far: `read(after)`
    answers the page after the row whose id is `after` (the first page for None), with what to give
    for its rows (`with_items` when that is the rows themselves)."""
    after: str | None = None
    while True:
        page, given = read(after)
        yield from given
        if not page.has_more or not page.items:
            return
        after = str(page.items[-1].id)


def with_items(page: IdPage[T]) -> tuple[IdPage[T], list[T]]:
    """A page as `every_item` reads it, for a list whose rows are what the caller wants."""
    return page, page.items


def named_and_updated_by(
    query: Select[T],
    name: InstrumentedAttribute[str],
    updated_by_column: InstrumentedAttribute[uuid.UUID | None],
    *,
    search: str | None,
    updated_by: str | None,
) -> Select[T]:
    """A /v2 list's filters: `search` keeps the rows whose name holds it (any case), `updated_by` those
    last changed by one of the comma-separated principal ids (text that is no id of ours matches none)."""
    if search:
        query = query.where(func.lower(name).contains(search.lower(), autoescape=True))
    if updated_by is not None:
        ids = [parsed for part in updated_by.split(",") if (parsed := parse_id(part.strip()))]
        query = query.where(updated_by_column.in_(ids))
    return query
