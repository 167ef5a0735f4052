"""Who is calling: the bearer token on every API request, resolved to an actor once per request."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from redline.db import Database
from redline.identity import service as identity
from redline.identity.service import Actor

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
    db: Database = request.app.state.database
    with db.read() as session:
        actor, due = identity.authenticate(session, credentials.credentials if credentials else None)
    if due and actor.token_id is not None:
        with db.write() as session:
            identity.touch_token(session, actor.token_id)
    return actor
