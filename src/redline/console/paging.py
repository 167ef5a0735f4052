"""Paging a list: where its page starts as the address says (`after`/`before`, and a list's search),
how a service is asked for that page, and the links to the pages on either side — of a service's id
pages or, where a service offers only that, offset pages. The links keep the rest of the address, so a
filter or sort survives paging."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, TypedDict
from urllib.parse import urlencode

from fastapi import Depends
from starlette.requests import Request

from redline.console.rendering import url_with
from redline.db.id_pages import PageAsked


class SearchAsked(PageAsked):
    search: str | None


@dataclass(frozen=True)
class Cursor:
    """Where a page of a service's id pages starts, as the address says: after the row `after`, or
    before the row `before` (the pager's links set one and drop the other)."""

    after: str | None = None
    before: str | None = None

    def asked(self, limit: int) -> PageAsked:
        """The page as the services' id pages are asked for it."""
        return PageAsked(limit=limit, starting_after=self.after, ending_before=self.before)


@dataclass(frozen=True)
class Search(Cursor):
    """A searchable list's address: the search `q` (by name) and where its page starts."""

    q: str | None = None

    def asked(self, limit: int) -> SearchAsked:
        return SearchAsked(
            limit=limit, starting_after=self.after, ending_before=self.before, search=self.q or None
        )


# A route's parameter read from the address's query.
CursorQuery = Annotated[Cursor, Depends()]
SearchQuery = Annotated[Search, Depends()]


class PageLinks(TypedDict):
    """What the `pager` macro takes: `page(..., **links)`."""

    previous_url: str | None
    next_url: str | None


def cursor_url(request: Request, **cursor: str | None) -> str:
    """This page's address at another cursor: `after` or `before`, never both."""
    return url_with(request, **{"after": None, "before": None, **cursor})


def neighbours(has_more: bool, after: str | None, before: str | None) -> tuple[bool, bool]:
    """Whether pages lie before and after this one, for a page read after `after` or before `before`
    (the services' id pages say only whether more lie in the direction read)."""
    if before is not None:
        return has_more, True
    return after is not None, has_more


def id_page_links(
    request: Request,
    ids: Sequence[object],
    has_more: bool,
    cursor: Cursor,
    *,
    path: str | None = None,
) -> PageLinks:
    """Links to the pages before and after a page of a service's id pages, whose rows have `ids`; at
    `path` with only the cursor, when the page is answering a form posted elsewhere."""
    earlier, later = neighbours(has_more, cursor.after, cursor.before)
    first, last = (str(ids[0]), str(ids[-1])) if ids else (None, None)

    def at(**cursor: str | None) -> str:
        return f"{path}?{urlencode(cursor)}" if path is not None else cursor_url(request, **cursor)

    return PageLinks(
        previous_url=at(before=first) if earlier and first else None,
        next_url=at(after=last) if later and last else None,
    )


def offset_page_links(request: Request, offset: int, size: int, total: int) -> PageLinks:
    """Links to the pages before and after the `size` rows from `offset` of `total`."""
    return PageLinks(
        previous_url=str(request.url.include_query_params(offset=max(offset - size, 0)))
        if offset > 0
        else None,
        next_url=str(request.url.include_query_params(offset=offset + size))
        if offset + size < total
        else None,
    )
