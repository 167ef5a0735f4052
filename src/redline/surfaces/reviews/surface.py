"""The reviews surface as the surface table sees it: /v2 and /v3, snake_case, `{"message", "code"}`."""

from __future__ import annotations

from starlette.responses import Response

from redline.errors import RedlineError
from redline.surfaces.responses import JSONBody
from redline.surfaces.reviews import annotations as annotation_routes
from redline.surfaces.reviews import (
    datasets,
    human_reviews,
    queue_automations,
    queue_review,
    queues,
    traces,
)
from redline.surfaces.surface import Surface


def render_reviews(error: RedlineError, request_id: str) -> Response:
    """`{"message", "code"}` where code is the HTTP status, the orq-ai-sdk's ErrorResponse."""
    return JSONBody(
        {"message": error.message, "code": error.status},
        status_code=error.status,
        headers={"X-Request-Id": request_id},
    )


REVIEWS = Surface(
    name="reviews",
    render_error=render_reviews,
    routers=(
        annotation_routes.router,
        queues.router,
        queue_review.router,
        queue_automations.router,
        datasets.router,
        human_reviews.router,
        traces.router,
    ),
    prefixes=("/v2/", "/v3/"),
    camel_case=False,
)
