"""Who is calling: the bearer token on every API request, resolved to an actor once per request."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from redline.db import Database
from redline.errors import Unauthenticated
from redline.identity import service as identity
from redline.identity.service import Actor
from redline.web.callers import bearer_actor

bearer = HTTPBearer(auto_error=False, description="A Redline token: `Authorization: Bearer <token>`.")


async def database(request: Request) -> Database:
    """The app's database. Async because it only reads app state: FastAPI runs a sync dependency in a
    worker thread, a hop that cost a request more than this whole function (bench/README.md)."""
    db: Database = request.app.state.database
    return db


def current_actor(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Actor:
    """The actor behind the bearer token; 401 (in the surface's shape) without a valid one."""
    return bearer_actor(request.app.state.database, credentials.credentials if credentials else None)


async def bearer_secret(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> str:
    """The bearer secret of a request whose handler checks it in its own write transaction (`in_write`):
    the API's most frequent writes then cost one worker-thread hop and one transaction rather than two
    of each (bench/README.md). A request without one is refused here, before its body is read."""
    if credentials is None or not credentials.credentials:
        raise Unauthenticated(identity.MISSING_TOKEN)
    return credentials.credentials


# A handler's parameter for it: `secret: BearerSecret`, then `in_write(session, secret)`.
BearerSecret = Annotated[str, Depends(bearer_secret)]


def in_write(session: Session, secret: str) -> Actor:
    """The actor behind the secret, read in the write's own transaction, its last-used time written in
    it when due; refused as `current_actor` refuses. Revoking a token takes effect at the very next
    request, in every process: nothing is cached."""
    actor, due = identity.authenticate(session, secret)
    if due and actor.token_id is not None:
        identity.touch_token(session, actor.token_id)
    return actor
