"""`GET /metrics` (Prometheus's text format, behind its own bearer token) and the middleware that counts
each request by route and status: both only when metrics are on (`redline.web.metrics`)."""

from __future__ import annotations

import hmac
import time

from fastapi import APIRouter, Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from redline.config import Settings
from redline.errors import Unauthenticated
from redline.web import metrics
from redline.web.asgi import HttpMiddleware

router = APIRouter()

# A request no route matched (a scan of made-up paths must not make a label per path).
UNMATCHED = "unmatched"


@router.get("/metrics", include_in_schema=False)
def serve_metrics(request: Request) -> Response:
    settings: Settings = request.app.state.settings
    wanted = settings.metrics_token.get_secret_value() if settings.metrics_token else ""
    given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    if not wanted or not hmac.compare_digest(given.encode(), wanted.encode()):
        raise Unauthenticated(
            "GET /metrics needs REDLINE_METRICS_TOKEN as its bearer token.", code="auth-invalid"
        )
    body, content_type = metrics.exposition(request.app.state.database)
    return Response(body, media_type=content_type)


class MetricsMiddleware(HttpMiddleware):
    """Counts each answered request by method, route (its template, `/v1/runs/{runId}`) and status, with
    the time it took."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        status = 500

        async def noting_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, noting_status)
        finally:
            metrics.request_answered(scope["method"], _route_of(scope), status, time.perf_counter() - started)


def _route_of(scope: Scope) -> str:
    route = scope.get("route")
    template = getattr(route, "path", None)
    if not isinstance(template, str):
        return UNMATCHED
    return str(scope.get("root_path", "")) + template
