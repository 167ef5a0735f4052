"""Who calls a tool, on each transport. Over stdio (`redline mcp`) the token comes from the environment
and is checked again at every call, so revoking it stops the very next one. Over HTTP (`/mcp`) each
request carries its own bearer token, which the endpoint checks before the protocol sees the request
(an invalid one is a 401) and leaves on the request for the call to find. Either way the caller is the
token's principal, with its roles, exactly as on the API (`web.callers`)."""

from __future__ import annotations

from typing import Any, Protocol

from redline.db import Database
from redline.errors import Unauthenticated
from redline.identity.service import MISSING_TOKEN, Actor
from redline.web.callers import bearer_actor

# Where the HTTP endpoint leaves the caller of a request, in its ASGI scope.
ACTOR_KEY = "redline.mcp.actor"


class Caller(Protocol):
    """The actor of a tool call, given the store and the HTTP request the call came in (None on stdio)."""

    def __call__(self, db: Database, request: Any | None) -> Actor: ...


def bearer_secret(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header; None for any other header or none."""
    scheme, _, credentials = (authorization or "").partition(" ")
    return (credentials.strip() or None) if scheme.lower() == "bearer" else None


class TokenCaller:
    """The holder of one token, as stdio has it: the token given at start, read afresh at each call."""

    def __init__(self, secret: str):
        self._secret = secret

    def __call__(self, db: Database, request: Any | None) -> Actor:
        return bearer_actor(db, self._secret)


def request_caller(db: Database, request: Any | None) -> Actor:
    """The caller the HTTP endpoint found for this request's bearer token."""
    actor = request.scope.get(ACTOR_KEY) if request is not None else None
    if not isinstance(actor, Actor):
        raise Unauthenticated(MISSING_TOKEN)
    return actor
