"""How the corrections surface's errors appear in the OpenAPI document, so clients and fuzzers know them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ErrorDetail(BaseModel):
    code: str
    message: str
    requestId: str  # noqa: N815 - the wire's name
    details: dict[str, Any] | None = None
    issues: list[dict[str, Any]] | None = None


class ErrorBody(BaseModel):
    error: ErrorDetail


def _documented(*statuses: int) -> dict[int | str, dict[str, Any]]:
    meaning = {
        400: "Bad input (`bad-input`): the message names the broken rule and the field.",
        401: "No valid bearer token (`auth-missing`, `auth-invalid`).",
        403: "The caller's role is too low (`permission-denied`).",
        404: "Not found, or outside what the caller can see (`<kind>-not-found`).",
        409: "Clashes with what is stored (a name taken).",
        413: "The body is over the configured limit (`payload-too-large`).",
    }
    return {status: {"model": ErrorBody, "description": meaning[status]} for status in statuses}


# Every route may answer these; routes add 409 and 413 where they apply.
ERROR_RESPONSES = _documented(400, 401, 403, 404, 413)
CONFLICT_RESPONSES = _documented(409)
