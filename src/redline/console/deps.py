"""What every console page asks for before it runs: who is signed in and, for a change, the CSRF proof."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from redline.console.session import CSRF_FIELD, CSRF_HEADER, SignedIn, check_csrf, signed_in
from redline.db import Database


def viewer(request: Request) -> SignedIn:
    """The signed-in principal of a page that only reads."""
    return signed_in(request)


async def changer(request: Request) -> SignedIn:
    """The signed-in principal of a request that changes something, once its CSRF secret checks out.

    A form sends the secret as a field; an in-place save (fetch) as the X-CSRF-Token header.
    """
    who = await run_in_threadpool(signed_in, request)
    sent = request.headers.get(CSRF_HEADER)
    if sent is None and request.headers.get("content-type", "").startswith(
        ("application/x-www-form-urlencoded", "multipart/form-data")
    ):
        field = (await request.form()).get(CSRF_FIELD)
        sent = field if isinstance(field, str) else None
    check_csrf(who, sent)
    return who


async def database(request: Request) -> Database:
    db: Database = request.app.state.database
    return db


Viewer = Annotated[SignedIn, Depends(viewer)]
Changer = Annotated[SignedIn, Depends(changer)]
Db = Annotated[Database, Depends(database)]
