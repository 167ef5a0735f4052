"""How the reviews surface's errors appear in the OpenAPI document, so clients and fuzzers know them.

Every /v2 and /v3 route answers its errors as `{"message", "code"}` in JSON, `code` being the HTTP
status, which the orq-ai-sdk reads as its `ErrorResponse`; routers declare them with
`APIRouter(..., responses=REVIEWS_ERROR_RESPONSES)`. Under /v2/datasets the status is text
(`DATASETS_ERROR_RESPONSES`): @orq-ai/node reads a dataset's 404 as its `HonoApiError`, whose code is a
string, and the orq-ai-sdk still reads the digits as its number.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ReviewsErrorBody(BaseModel):
    """The document's error: one sentence, and the status again as `code`."""

    message: str
    code: int


class DatasetsErrorBody(BaseModel):
    """A dataset route's error: the sentence, and the status again as text in `code`."""

    message: str
    code: str


_MEANING: dict[int, str] = {
    400: "Bad input: the message is the document's sentence, or `<field>: <problem>`.",
    401: "No valid bearer token.",
    403: "The caller's role in the project is too low for this.",
    404: "Not found, or outside what the caller can see: the document's sentence.",
    409: "Clashes with what is stored (a key taken in the project).",
    413: "The body is over the configured limit.",
}


def _documented(*statuses: int, body: type[BaseModel] = ReviewsErrorBody) -> dict[int | str, dict[str, Any]]:
    content = {"application/json": {"schema": body.model_json_schema()}}
    return {status: {"description": _MEANING[status], "content": content} for status in statuses}


REVIEWS_ERROR_RESPONSES = _documented(400, 401, 403, 404, 413)
CONFLICT_RESPONSES = _documented(409)
DATASETS_ERROR_RESPONSES = _documented(400, 401, 403, 404, 413, body=DatasetsErrorBody)
