"""Refuse the NUL character before it reaches the store.

PostgreSQL can't keep U+0000 in text or JSONB, so it would fail such a request with a 500 while
SQLite stored it: refusing it at the edge gives one clear 400 on both stores. The body check is a
byte search (JSON can only carry NUL as the escape `\\u0000`); only a body that has one is walked
to name the field.
"""

from __future__ import annotations

from fastapi import Request

from redline.errors import Invalid
from redline.jsonio import NUL, NUL_REFUSED, find_nul, loads
from redline.surfaces.errors import invalid_at
from redline.surfaces.otlp.paths import OTLP_PATHS

_ESCAPED_NUL = b"\\u0000"


async def refuse_nul_characters(request: Request) -> None:
    """A request dependency: 400 when the query or the JSON body carries a NUL character."""
    for name, value in request.query_params.multi_items():
        if NUL in value or NUL in name:
            raise Invalid(
                f"{name}: text may not contain the NUL character (\\u0000).", details={"field": name}
            )
    if request.method in ("GET", "HEAD", "OPTIONS") or request.url.path in OTLP_PATHS:
        # An OTLP export is read as a stream within its own limit, never whole here.
        return
    body = await request.body()
    if _ESCAPED_NUL not in body:
        return
    try:
        document = loads(body)
    except ValueError:
        return  # not JSON: the route's own parsing names the problem
    found = find_nul(document)
    if found is not None:
        raise invalid_at(found, NUL_REFUSED + ".", camel=False)
