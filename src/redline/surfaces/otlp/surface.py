"""The OTLP/HTTP surface as the surface table sees it: three exact paths, google.rpc.Status errors."""

from __future__ import annotations

from starlette.responses import Response

from redline.errors import RedlineError
from redline.surfaces.otlp import router
from redline.surfaces.otlp.paths import OTLP_PATHS
from redline.surfaces.otlp.wire import status_body
from redline.surfaces.surface import Surface


def render_otlp(error: RedlineError, request_id: str) -> Response:
    """A google.rpc.Status in JSON, for what goes wrong on an OTLP path before its route answers (a
    method it doesn't take) or after (a bug): the route itself answers in the request's encoding."""
    return Response(
        status_body("json", error.status, error.message),
        status_code=error.status,
        media_type="application/json",
        headers={"X-Request-Id": request_id},
    )


OTLP = Surface(name="otlp", render_error=render_otlp, routers=(router.router,), paths=OTLP_PATHS)
