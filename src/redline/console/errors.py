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

from redline.console.rendering import page
from redline.console.session import NeedsSignIn, SignedIn, signed_in
from redline.errors import RedlineError

log = logging.getLogger("redline.console")


def wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def _visitor(request: Request) -> SignedIn | None:
    """Whoever is signed in, so an error page keeps the menu; nobody when the session is the problem."""
    try:
        return signed_in(request)
    except NeedsSignIn:
        return None


async def _failure(
    request: Request, status: int, message: str, code: str, details: object = None
) -> Response:
    if wants_json(request):
        return JSONResponse({"message": message, "code": code, "details": details or {}}, status_code=status)
    return page(
        request,
        "error.html",
        who=await run_in_threadpool(_visitor, request),
        title={403: "Not allowed", 404: "Not found"}.get(status, "Something went wrong"),
        status_code=status,
        message=message,
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
        message = "There is no such page." if error.status_code == 404 else str(error.detail)
        code = "not-found" if error.status_code == 404 else "http"
        return await _failure(request, error.status_code, message, code)
