"""How the console answers when a page cannot: the sign-in page, or the service's own sentence.

A page shows the error as a page; an in-place save (a fetch that accepts JSON) gets
`{"message", "code", "details"}` with the error's status, so the script can show the sentence inline.
"""

from __future__ import annotations

import logging
from urllib.parse import quote

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import Receive, Scope, Send

from redline.console.rendering import page, url_with
from redline.console.session import NeedsSignIn, SignedIn, signed_in
from redline.errors import RedlineError
from redline.web.asgi import HttpMiddleware, answering_errors

log = logging.getLogger("redline.console")

# A refused request's title, by its status: what was wrong, said plainly. A 400 says whether the address
# or the form held the value (`_title`); a status not named here is still the request's, not the server's.
TITLES = {
    401: "Signed out",
    403: "Not allowed",
    404: "Not found",
    405: "Not a page to open",
    409: "Not possible now",
    413: "Too large",
}
REFUSED = "The console can't do that"
# Only an answer of 500 and above is the server's own failure.
FAILED = "Something went wrong"
# What a page says when the server failed, or the store stayed busy or unreachable (503).
UNEXPECTED_PAGE = "Something went wrong on our side; the server's log has the details. Try again in a moment."
STORE_BUSY_PAGE = "The store is busy or unreachable just now; nothing was changed. Try again in a moment."
# What a 405 says: the address is a form's, which a browser reaches by opening it.
NOT_OPENED = (
    "This address is where a form is sent; it is not a page to open. Go back to the page the form is on."
)


def title_of(status: int, method: str) -> str:
    """The error page's title for a refusal of `status` to a request of `method`."""
    if status >= 500 or status < 400:
        return FAILED
    if status == 400:
        return (
            "A value in the address is wrong" if method in ("GET", "HEAD") else "A value in the form is wrong"
        )
    return TITLES.get(status, REFUSED)


def _without(request: Request, details: object) -> str | None:
    """This page's address without the parameter the refusal names, when it is one of the address's (the
    page from its first page again): the way back from a value typed or pasted into the address."""
    field = details.get("field") if isinstance(details, dict) else None
    if not isinstance(field, str) or field not in request.query_params:
        return None
    return url_with(request, **{field: None, "after": None, "before": None})


def wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def _visitor(request: Request) -> SignedIn | None:
    """Whoever is signed in, so an error page keeps the menu; nobody when the session is the problem."""
    try:
        return signed_in(request)
    except NeedsSignIn:
        return None


async def _failure(
    request: Request, status: int, message: str, code: str, details: object = None, *, menu: bool = True
) -> Response:
    """The error as a page (with the visitor's menu unless `menu` is off: finding the visitor needs the
    store, which may be what failed), or as JSON to a script."""
    if wants_json(request):
        return JSONResponse({"message": message, "code": code, "details": details or {}}, status_code=status)
    return page(
        request,
        "error.html",
        who=await run_in_threadpool(_visitor, request) if menu else None,
        title=title_of(status, request.method),
        status_code=status,
        message=message,
        without=_without(request, details),
        field=details.get("field") if isinstance(details, dict) else None,
    )


def install_console_errors(console: FastAPI) -> None:
    @console.exception_handler(NeedsSignIn)
    async def sign_in_first(request: Request, _: Exception) -> Response:
        if wants_json(request):
            return JSONResponse(
                {"message": "Your session has ended: sign in again.", "code": "signed-out", "details": {}},
                status_code=401,
            )
        back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/ui/sign-in?next={quote(back)}", status_code=303)

    @console.exception_handler(RedlineError)
    async def refused(request: Request, error: Exception) -> Response:
        assert isinstance(error, RedlineError)
        return await _failure(request, error.status, error.message, error.code, error.details)

    @console.exception_handler(RequestValidationError)
    async def bad_address(request: Request, error: Exception) -> Response:
        assert isinstance(error, RequestValidationError)
        fields = ", ".join(str(part["loc"][-1]) for part in error.errors())
        message = f"This address or form has a value the console cannot read: {fields}."
        return await _failure(request, 400, message, "bad-input")

    @console.exception_handler(HTTPException)
    async def http_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        message = {404: "There is no such page.", 405: NOT_OPENED}.get(error.status_code, str(error.detail))
        code = "not-found" if error.status_code == 404 else "http"
        return await _failure(request, error.status_code, message, code)


class UnexpectedErrorPage(HttpMiddleware):
    """An error no handler answered, as the console's own error page (or its JSON for the page's
    scripts): 503 for a store that stayed busy or unreachable, else 500 and the log. The connection stays
    open (`asgi.answering_errors`)."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def answer(busy: bool) -> Response:
            request = Request(scope, receive)
            if busy:
                return await _failure(request, 503, STORE_BUSY_PAGE, "unavailable", menu=False)
            return await _failure(request, 500, UNEXPECTED_PAGE, "internal", menu=False)

        where = f"{scope['method']} {scope['path']}"
        await answering_errors(self.app, scope, receive, send, answer, log=log, where=where)
