"""A form sent from a page whose view lives in its address (filters, sort, columns, pages).

The form carries that address's query in its `view` field, so its post can end back on the same view,
naming the change it made (`done=`), or, when the service refuses, show the same view again with the
service's sentence: the page is rendered as its own address would render it, so its links, sort headers
and forms are the page's, not the post's.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request

VIEW_FIELD = "view"


def view_query(
    view: str, fixed: Sequence[tuple[str, str]], drop: Collection[str] = ()
) -> list[tuple[str, str]]:
    """The query of the view a form was sent from: `fixed` first (the page's own tab and project), then
    the view's other parameters, less the notice of an earlier form and those `drop` names (pages whose
    rows the change moved)."""
    named = {name for name, _ in fixed} | {"done"} | set(drop)
    return [*fixed, *((name, value) for name, value in parse_qsl(view) if name not in named)]


def viewed_again(request: Request, path: str, query: Sequence[tuple[str, str]]) -> Request:
    """The GET of the page at `path` with `query`: what a refused form's post renders, as that address
    would, with the refusal."""
    scope = {
        **request.scope,
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": urlencode(query).encode(),
    }
    return Request(scope)
