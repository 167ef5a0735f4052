"""How the rm surface's errors appear in the OpenAPI document, so clients and fuzzers know them.

Every rm route answers its errors as `{"detail": sentence}` in JSON; routers declare them with
`APIRouter(..., responses=RM_ERROR_RESPONSES)`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class RmErrorBody(BaseModel):
    """The rm document's error: one sentence, which the stashai client shows as `[status] sentence`."""

    detail: str


_MEANING: dict[int, str] = {
    401: "No valid bearer token.",
    403: "The caller's role in the project is too low for this.",
    404: "Not found, or outside what the caller can see.",
    413: "The body is over the configured limit.",
    422: "The request breaks a rule: the detail is the document's sentence, or `<field>: <problem>`.",
}


def _documented(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The responses, with the media type spelled out: a route that streams another type (the NDJSON
    export) still answers its errors in JSON, and FastAPI would otherwise file them under the route's."""
    content = {"application/json": {"schema": RmErrorBody.model_json_schema()}}
    return {status: {"description": _MEANING[status], "content": content} for status in statuses}


RM_ERROR_RESPONSES = _documented(401, 403, 404, 413, 422)
