"""Lists of the reviews surface (/v2): `{object: "list", data, has_more}`, paged by the `_id` of the last
item seen (`starting_after`) rather than by an opaque cursor.

They come back as the client's own `Page`, so callers page every surface alike: `next_cursor` is the
last item's `_id` while there is more, and passing it back as `cursor` asks for what follows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from redline.client._http import Http, Params, json_object
from redline.client.errors import ServerError
from redline.client.resources import Page

__all__ = ["every_by_id", "fetch_page", "id_page"]


def id_page(value: Any) -> Page:
    body = json_object(value, "a page")
    data = body.get("data")
    if not isinstance(data, list):
        raise ServerError("A page came without its data list.", status=200, code="bad-response")
    has_more = bool(body.get("has_more"))
    last = data[-1].get("_id") if data and isinstance(data[-1], dict) else None
    return Page(
        data=data, has_more=has_more, next_cursor=last if has_more and isinstance(last, str) else None
    )


def fetch_page(http: Http, path: str, params: Params, cursor: str | None) -> Page:
    """One page of a /v2 list, after the item whose `_id` is `cursor`."""
    return id_page(http.request("GET", path, params={**params, "starting_after": cursor}))


def every_by_id(http: Http, path: str, params: Params) -> Iterator[dict[str, Any]]:
    """Every item of a /v2 list, fetching the next page only when the caller gets that far."""
    cursor: str | None = None
    while True:
        page = fetch_page(http, path, params, cursor)
        yield from page.data
        if not page.has_more or page.next_cursor is None:
            return
        cursor = page.next_cursor
