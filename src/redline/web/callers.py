"""Who calls, for every edge that takes a bearer token: the API surfaces on each request, the MCP server
on each request or tool call. One reading, so a token means the same caller, with the same roles,
whichever way it comes in."""

from __future__ import annotations

from redline.db import Database
from redline.identity import service as identity
from redline.identity.service import Actor


def bearer_actor(db: Database, secret: str | None) -> Actor:
    """The actor behind a bearer secret, refused (`Unauthenticated`) without a valid one. Read in a read
    transaction; its last-used time is written in a write of its own only when due, so a read stays a
    read. Nothing is cached: revoking a token takes effect at the very next call, in every process."""
    with db.read() as session:
        actor, due = identity.authenticate(session, secret)
    if due and actor.token_id is not None:
        with db.write() as session:
            identity.touch_token(session, actor.token_id)
    return actor
