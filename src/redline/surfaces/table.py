"""The table of surfaces: which one a path belongs to, so every answer to it (a route's, an error raised
before routing, a body over the limit, an unknown path, an unexpected failure) comes out in the shape
that surface's clients expect. Adding a surface is a `surface.py` in its package and a line here.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from redline.errors import RedlineError
from redline.surfaces.corrections.surface import CORRECTIONS
from redline.surfaces.errors import request_id_of, validation_error
from redline.surfaces.otlp.surface import OTLP
from redline.surfaces.reviews.surface import DATASETS, REVIEWS
from redline.surfaces.rm.surface import RM
from redline.surfaces.surface import Surface

# In the order a path is tried: OTLP's exact paths lie under /v1/, which is otherwise the corrections
# surface's, and /v2/datasets under the reviews surface's /v2/; a path no surface owns (an unknown
# endpoint) is answered as the corrections surface answers.
SURFACES = (OTLP, RM, DATASETS, REVIEWS, CORRECTIONS)
FALLBACK = CORRECTIONS


def surface_for(path: str) -> Surface:
    """The surface a path belongs to."""
    return next((surface for surface in SURFACES if surface.owns(path)), FALLBACK)


def mount(app: FastAPI) -> None:
    """Every surface's routers on the app; each surface owns addresses no other matches, so the order
    between surfaces decides nothing (a request tries only the routes of its address: web.route_index)."""
    for surface in (RM, REVIEWS, DATASETS, CORRECTIONS, OTLP):
        for router in surface.routers:
            app.include_router(router)


def install_error_handlers(app: FastAPI) -> None:
    """Domain errors, requests that didn't parse and the framework's own HTTP errors, each rendered by the
    surface of the path."""

    async def on_domain_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RedlineError)
        return surface_for(request.url.path).render_error(exc, request_id_of(request))

    async def on_validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        surface = surface_for(request.url.path)
        return surface.render_error(validation_error(exc, camel=surface.camel_case), request_id_of(request))

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        surface = surface_for(request.url.path)
        error: RedlineError
        if exc.status_code == 404 or (exc.status_code == 405 and surface.wrong_method_is_no_route):
            error = surface.no_route(request.method, request.url.path)
        else:
            error = RedlineError(str(exc.detail), code=f"http-{exc.status_code}", status=exc.status_code)
        return surface.render_error(error, request_id_of(request))

    app.add_exception_handler(RedlineError, on_domain_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(HTTPException, on_http_error)
