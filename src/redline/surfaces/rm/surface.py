"""The rm surface as the surface table sees it: /api/v1/rm, snake_case, `{"detail": …}` errors."""

from __future__ import annotations

from starlette.responses import Response

from redline.errors import Invalid, NotFound, RedlineError
from redline.surfaces.responses import JSONBody
from redline.surfaces.rm import annotations as annotation_routes
from redline.surfaces.rm import reward_models, traces
from redline.surfaces.rm.wire import PREFIX
from redline.surfaces.surface import Surface

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


RM = Surface(
    name="rm",
    render_error=render_rm,
    routers=(annotation_routes.router, traces.router, reward_models.router),
    prefixes=(PREFIX,),
    camel_case=False,
)
