"""Who is signed in to the console: a signed, HttpOnly, SameSite cookie holding a token's id and a CSRF
secret.

The cookie never holds the token's secret: a stolen cookie is worth what the session is, and revoking
the token ends every session signed in with it (each request reads the token's row again). Every
state-changing request must carry the session's CSRF secret, in a form field or the `X-CSRF-Token`
header of an in-place save; SameSite=Lax already keeps other sites' forms from sending the cookie, the
secret covers older browsers and same-site attackers.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from typing import Any

from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.requests import Request
from starlette.responses import Response

from redline.db import Database
from redline.errors import Forbidden, Unauthenticated
from redline.identity import service as identity
from redline.identity.service import Actor

COOKIE_NAME = "redline_console"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
# A salt of its own, so nothing else the instance secret signs can be replayed as a session.
_SALT = "redline.console.session"


@dataclass(frozen=True)
class ConsoleSession:
    token_id: uuid.UUID
    csrf: str


@dataclass(frozen=True)
class SignedIn:
    """The principal behind the request and its session's CSRF secret (forms embed it)."""

    actor: Actor
    csrf: str


class NeedsSignIn(Exception):
    """Raised by a page whose visitor has no valid session; the console answers with the sign-in page."""


def _serializer(secret_key: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(secret_key, salt=_SALT)


def read_session(request: Request) -> ConsoleSession | None:
    """The session the cookie carries, or None when it is absent, tampered with or too old."""
    raw = request.cookies.get(COOKIE_NAME)
    if not raw:
        return None
    state = request.app.state
    try:
        data: dict[str, Any] = _serializer(state.secret_key).loads(raw, max_age=state.session_seconds)
        return ConsoleSession(token_id=uuid.UUID(data["t"]), csrf=str(data["c"]))
    except (BadSignature, KeyError, ValueError, TypeError):
        return None


def start_session(request: Request, response: Response, token_id: uuid.UUID) -> None:
    """Sets the cookie of a new session for this token, with a fresh CSRF secret."""
    state = request.app.state
    value = _serializer(state.secret_key).dumps({"t": str(token_id), "c": secrets.token_urlsafe(24)})
    response.set_cookie(
        COOKIE_NAME,
        value,
        max_age=state.session_seconds,
        path="/ui",
        httponly=True,
        samesite="lax",
        secure=state.secure_cookies,
    )


def end_session(response: Response) -> None:
    response.delete_cookie(COOKIE_NAME, path="/ui", httponly=True, samesite="lax")


def signed_in(request: Request) -> SignedIn:
    """The signed-in principal; raises NeedsSignIn when the cookie is missing or its token revoked."""
    found = read_session(request)
    if found is None:
        raise NeedsSignIn()
    db: Database = request.app.state.database
    try:
        with db.read() as session:
            actor = identity.actor_for_token(session, found.token_id)
    except Unauthenticated as revoked:
        raise NeedsSignIn() from revoked
    return SignedIn(actor=actor, csrf=found.csrf)


def check_csrf(who: SignedIn, sent: str | None) -> None:
    """Refuses a state change that does not carry the session's CSRF secret."""
    if not sent or not secrets.compare_digest(sent, who.csrf):
        raise Forbidden(
            "This form has expired or did not come from the console: reload the page and try again.",
            code="csrf-failed",
        )
