"""The condition of a keyset page, written once so every list's cursor is an index range.

A page after the row whose sort key is (t, i) keeps the rows past it in the order (time, id). Written
`time < t OR (time = t AND id < i)`, neither store can seek on it: both read the index from the first
row of the list down to the cursor and filter each (on PostgreSQL "Rows Removed by Filter" grows with
the depth). Written as a row comparison `(time, id) < (t, i)`, PostgreSQL makes it an index condition
and SQLite a range constraint on the index's columns after its equalities, so a page deep in the list
costs what the first does. Both stores need the index's columns in the key's order, all ascending or
all descending, as every list here is ordered.

A list over several projects is a walk of each project's index range in that order, merged (`merged`):
`project_id IN (…)` would read every row of the projects in range and sort them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias, cast

from sqlalchemy import ColumnElement, Select, literal, select, tuple_, union_all
from sqlalchemy.sql.elements import UnaryExpression

from redline.db.wire_text import Column

# A SELECT of any columns: one walk of a list, or the list's merged page.
Walk: TypeAlias = Select[*tuple[Any, ...]]


def past(columns: Sequence[Column], values: Sequence[Any], *, descending: bool) -> ColumnElement[bool]:
    """Rows after `values` in the order of `columns` (the last one unique), read descending or ascending.

    Each value is bound as its column's type, so it compares as the column stores it (a time as UTC).
    """
    edge = tuple_(*(literal(value, column.type) for column, value in zip(columns, values, strict=True)))
    key = tuple_(*columns)
    return key < edge if descending else key > edge


def window(
    columns: Sequence[Column],
    since: Any,
    until: Any,
    cursor: Sequence[Any] | None,
    *,
    descending: bool,
) -> list[ColumnElement[bool]]:
    """A list's rows in [`since`, `until`) on its first sort column (None: no bound) and past `cursor` (the
    sort key of the row before the page; None on the first page), as conditions both stores seek on.

    A bound on the side the walk comes from is left out when the cursor is at or within it, as the cursor
    then implies it: SQLite seeks on one bound of a side, and given the window's and the cursor's it keeps
    the window's, then filters every row from the window's edge down to the cursor.
    """
    first = columns[0]
    edge = cursor[0] if cursor is not None else None
    conditions = [] if cursor is None else [past(columns, cursor, descending=descending)]
    if since is not None and not (edge is not None and not descending and edge >= since):
        conditions.append(first >= since)
    if until is not None and not (edge is not None and descending and edge < until):
        conditions.append(first < until)
    return conditions


def _ordered(columns: Sequence[Column], *, descending: bool) -> list[UnaryExpression[Any]]:
    """The ORDER BY of a keyset list: every column the same way, as its index reads them."""
    return [column.desc() if descending else column.asc() for column in columns]


def merged(
    walks: Sequence[Walk],
    key: Sequence[Column],
    *,
    descending: bool,
    limit: int,
    offset: int = 0,
    dialect: str,
) -> Walk:
    """The page at `offset` of the rows of `walks` in the order of `key` (columns every walk selects, by
    the same names, the last unique), read without sorting: each walk is one ordered walk of an index
    (one project's range, with the list's filters and its cursor's `window`), and the store merges them.

    SQLite merges the plain walks of a UNION ALL under the ORDER BY (MERGE (UNION ALL)), and would sort
    subqueries of them again. PostgreSQL merges them (a Merge Append) only when each is an ordered
    subquery of its own; no walk gives the page more than `offset + limit` rows, so each stops there.
    One walk is read as it is.
    """
    order = _ordered(key, descending=descending)
    if len(walks) == 1:
        return walks[0].order_by(*order).limit(limit).offset(offset)
    if dialect == "postgresql":
        stopped = [walk.order_by(*order).limit(offset + limit).subquery() for walk in walks]
        walks = [select(*walk.c) for walk in stopped]
    union = union_all(*walks).subquery("merged")
    merged_order = _ordered([union.c[cast(str, column.key)] for column in key], descending=descending)
    return select(*union.c).order_by(*merged_order).limit(limit).offset(offset)
