"""The OpenAPI document of every surface together, as `/docs` and `/openapi.json` show it."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi


def document_without_framework_422(app: FastAPI) -> None:
    """Have the app's OpenAPI document leave out FastAPI's own 422s.

    FastAPI documents a 422 on every route with input, in a shape no Redline surface answers (/v1 says
    400; the rm surface's 422 is `{"detail": sentence}`, which it declares itself), so only FastAPI's
    are taken out. The document is built once, at the first ask.
    """

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes
            )
            for path in schema.get("paths", {}).values():
                for operation in path.values():
                    responses = operation.get("responses", {})
                    if "HTTPValidationError" in str(responses.get("422", "")):
                        del responses["422"]
            for unused in ("HTTPValidationError", "ValidationError"):
                schema.get("components", {}).get("schemas", {}).pop(unused, None)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
