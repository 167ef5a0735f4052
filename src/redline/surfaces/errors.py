"""What the surfaces' errors share: the sentences of an unexpected or a busy answer, the renderer each
surface gives (its own shape, in its `surface.py`), and bad input named as a surface spells its fields.
"""

from __future__ import annotations

import logging
from typing import Protocol

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from starlette.responses import Response

from redline.errors import Invalid, RedlineError
from redline.fieldpaths import field_path

log = logging.getLogger("redline.http")

INTERNAL_MESSAGE = "Something went wrong on our side; the request id identifies it in the server's log."
STORE_BUSY = "The store is busy or unreachable; try again after the seconds Retry-After gives."
# How long a client is asked to wait after a transient store failure: long enough for a lock holder to
# finish or a database to come back, short next to a client's (or an OTLP exporter's) own backoff.
STORE_RETRY_AFTER_SECONDS = 2


class ErrorRenderer(Protocol):
    def __call__(self, error: RedlineError, request_id: str) -> Response: ...


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
