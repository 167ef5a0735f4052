"""Signing in with a token, signing out, and the console's front door."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, Form, Request
from starlette.responses import RedirectResponse, Response

from redline.console.deps import Changer, Db
from redline.console.rendering import page
from redline.console.session import end_session, read_session, start_session
from redline.errors import Unauthenticated
from redline.identity import service as identity

router = APIRouter()


def _safe_next(target: str | None) -> str:
    """Only a path inside the console: a sign-in link must not send anyone to another site."""
    if not target:
        return "/ui/traces"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path.startswith("/ui/") or target.startswith("//"):
        return "/ui/traces"
    return target


def _same_origin(request: Request) -> bool:
    """A sign-in posted from another site would sign the visitor in as someone else (login CSRF).

    Host names are compared without ports: a proxy forwarding `Host: $host` drops the port the
    browser's Origin keeps."""
    origin = request.headers.get("origin") or request.headers.get("referer")
    if not origin:
        return True
    return urlsplit(origin).hostname == urlsplit(f"//{request.headers.get('host', '')}").hostname


@router.get("/")
def front_door() -> Response:
    return RedirectResponse("/ui/traces", status_code=303)


@router.get("/sign-in")
def sign_in_page(request: Request, next: str | None = None) -> Response:
    if read_session(request) is not None and next is None:
        return RedirectResponse("/ui/traces", status_code=303)
    return page(request, "sign_in.html", who=None, title="Sign in", next=_safe_next(next), error=None)


@router.post("/sign-in")
def sign_in(
    request: Request,
    db: Db,
    token: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "",
) -> Response:
    target = _safe_next(next)
    error: str | None = None
    if not _same_origin(request):
        error = "This sign-in form did not come from this console."
    else:
        try:
            with db.read() as session:
                actor, _ = identity.authenticate(session, token.strip())
        except Unauthenticated:
            error = "That token is not valid or has been revoked."
    if error is not None:
        return page(
            request, "sign_in.html", who=None, title="Sign in", next=target, error=error, status_code=401
        )
    assert actor.token_id is not None
    response = RedirectResponse(target, status_code=303)
    start_session(request, response, actor.token_id)
    return response


@router.post("/sign-out")
def sign_out(_: Changer) -> Response:
    response = RedirectResponse("/ui/sign-in", status_code=303)
    end_session(response)
    return response
