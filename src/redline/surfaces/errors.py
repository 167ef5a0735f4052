"""One error renderer per surface: the same domain error, in the shape its reference document uses.

The surface is chosen by path, so errors raised before routing (a body over the limit, an unknown
path) come out in the shape the client of that path expects.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from redline.errors import Invalid, NotFound, RedlineError
from redline.fieldpaths import field_path
from redline.surfaces.otlp.paths import OTLP_PATHS
from redline.surfaces.otlp.wire import status_body
from redline.surfaces.responses import JSONBody

log = logging.getLogger("redline.http")

INTERNAL_MESSAGE = "Something went wrong on our side; the request id identifies it in the server's log."
STORE_BUSY = "The store is busy or unreachable; try again after the seconds Retry-After gives."
# How long a client is asked to wait after a transient store failure: long enough for a lock holder to
# finish or a database to come back, short next to a client's (or an OTLP exporter's) own backoff.
STORE_RETRY_AFTER_SECONDS = 2


class ErrorRenderer(Protocol):
    def __call__(self, error: RedlineError, request_id: str) -> Response: ...


def render_corrections(error: RedlineError, request_id: str) -> Response:
    """`{"error": {code, message, details?, requestId}}`, the kindgi client's envelope."""
    body: dict[str, Any] = {"code": error.code, "message": error.message, "requestId": request_id}
    if error.details:
        body["details"] = error.details
    if error.code == "bad-input":
        body["issues"] = [{"path": error.details.get("field", ""), "message": error.message}]
    return JSONBody({"error": body}, status_code=error.status, headers={"X-Request-Id": request_id})


# The rm document's own words for "not found", used where a service gave the generic sentence.
RM_NOT_FOUND = {
    "run": "Trace not found",
    "annotation": "Annotation not found",
    "reward-model": "Reward model not found",
}


def render_rm(error: RedlineError, request_id: str) -> Response:
    """`{"detail": sentence}`; a broken rule is a 422, as the stashai client and its document expect."""
    # The rm document has no 400: any request it can't take as sent is a 422.
    status = 422 if isinstance(error, Invalid) or error.status == 400 else error.status
    message = error.message
    if isinstance(error, NotFound) and error.generic:
        message = RM_NOT_FOUND.get(error.kind, message)
    return JSONBody({"detail": message}, status_code=status, headers={"X-Request-Id": request_id})


def render_reviews(error: RedlineError, request_id: str) -> Response:
    """`{"message", "code"}` where code is the HTTP status, the orq-ai-sdk's ErrorResponse."""
    return JSONBody(
        {"message": error.message, "code": error.status},
        status_code=error.status,
        headers={"X-Request-Id": request_id},
    )


RM_ROOT = "/api/v1/rm"


def render_otlp(error: RedlineError, request_id: str) -> Response:
    """A google.rpc.Status in JSON, for what goes wrong on an OTLP path before its route answers (a
    method it doesn't take) or after (a bug): the route itself answers in the request's encoding."""
    return Response(
        status_body("json", error.status, error.message),
        status_code=error.status,
        media_type="application/json",
        headers={"X-Request-Id": request_id},
    )


def renderer_for(path: str) -> ErrorRenderer:
    if path in OTLP_PATHS:
        return render_otlp
    if path.startswith(RM_ROOT):
        return render_rm
    if path.startswith(("/v2/", "/v3/")):
        return render_reviews
    return render_corrections


def request_id_of(request: Request) -> str:
    return str(getattr(request.state, "request_id", "") or "")


def validation_error(exc: RequestValidationError, *, camel: bool = True) -> Invalid:
    """The first problem of a request that didn't parse, naming the field it is in as its surface spells
    it: camelCase on /v1, snake_case (`camel=False`) on the rm surface, whose fields are snake_case."""
    first = exc.errors()[0]
    location = list(first.get("loc", ()))
    if first.get("type") == "json_invalid":
        detail = first.get("ctx", {}).get("error", "")
        return Invalid(f"The body is not valid JSON: {detail}.", details={"field": "body"})
    if location and location[0] in ("body", "query", "path", "header"):
        location = location[1:]
    return invalid_at(location, first.get("msg", "invalid"), camel=camel)


def invalid_at(location: list[int | str], message: str, *, camel: bool = True) -> Invalid:
    """Bad input at a place in the body: `<path>: <message>`, with the field in the details. In a batch
    the bad run is named by index and the field within it, as the service's own checks do."""
    path = field_path(location, camel=camel)
    if len(location) >= 2 and location[0] == "runs" and isinstance(location[1], int):
        within = field_path(location[2:], camel=camel) or "run"
        return Invalid(f"{path}: {message}", details={"index": location[1], "field": within})
    return Invalid(f"{path}: {message}" if path else message, details={"field": path or "body"})


def install_error_handlers(app: FastAPI) -> None:
    async def on_domain_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RedlineError)
        return renderer_for(request.url.path)(exc, request_id_of(request))

    async def on_validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        path = request.url.path
        # The rm and reviews surfaces spell their fields in snake_case; /v1 in camelCase.
        error = validation_error(exc, camel=not path.startswith((RM_ROOT, "/v2/", "/v3/")))
        return renderer_for(path)(error, request_id_of(request))

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        error: RedlineError
        if exc.status_code == 404:
            error = NotFound(
                "route", request.url.path, f"No such endpoint: {request.method} {request.url.path}."
            )
        else:
            error = RedlineError(str(exc.detail), code=f"http-{exc.status_code}", status=exc.status_code)
        return renderer_for(request.url.path)(error, request_id_of(request))

    app.add_exception_handler(RedlineError, on_domain_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(HTTPException, on_http_error)
