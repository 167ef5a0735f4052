"""The reviews surface as the surface table sees it: /v2 and /v3, snake_case, `{"message", "code"}`; and
its datasets, whose errors give the code as text."""

from __future__ import annotations

from starlette.responses import Response

from redline.errors import RedlineError
from redline.surfaces.responses import JSONBody
from redline.surfaces.reviews import annotations as annotation_routes
from redline.surfaces.reviews import (
    datasets,
    experiments,
    human_reviews,
    queue_automations,
    queue_disagreements,
    queue_review,
    queues,
    traces,
)
from redline.surfaces.surface import Surface


def _answer(error: RedlineError, request_id: str, code: int | str) -> Response:
    return JSONBody(
        {"message": error.message, "code": code},
        status_code=error.status,
        headers={"X-Request-Id": request_id},
    )


def render_reviews(error: RedlineError, request_id: str) -> Response:
    """`{"message", "code"}` where code is the HTTP status, the orq-ai-sdk's ErrorResponse."""
    return _answer(error, request_id, error.status)


def render_datasets(error: RedlineError, request_id: str) -> Response:
    """`{"message", "code"}` with the status as text: @orq-ai/node reads a dataset's 404 as its
    HonoApiError, whose `code` is a string, and the orq-ai-sdk's ErrorResponse takes the digits as its
    number, so both clients raise their own error with the sentence."""
    return _answer(error, request_id, str(error.status))


# /v2/datasets: its own entry in the table only for the shape of its errors.
DATASETS = Surface(
    name="reviews-datasets",
    render_error=render_datasets,
    routers=(datasets.router,),
    prefixes=("/v2/datasets",),
    camel_case=False,
)

REVIEWS = Surface(
    name="reviews",
    render_error=render_reviews,
    routers=(
        annotation_routes.router,
        queues.router,
        queue_review.router,
        queue_automations.router,
        queue_disagreements.router,
        human_reviews.router,
        traces.router,
        experiments.router,
    ),
    prefixes=("/v2/", "/v3/"),
    camel_case=False,
)
