"""ASGI middleware that every surface shares: a request id on each request (and the answer to an
unexpected error), and the body size limit."""

from __future__ import annotations

import uuid
from typing import Any

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from redline.errors import RedlineError, TooLarge
from redline.surfaces.errors import INTERNAL_MESSAGE, STORE_BUSY, STORE_RETRY_AFTER_SECONDS, log
from redline.surfaces.table import surface_for
from redline.web.asgi import HttpMiddleware, answering_errors


class RequestIdMiddleware(HttpMiddleware):
    """Gives each request an id (or keeps the caller's X-Request-Id) that errors and logs carry, and
    answers an unexpected error in the surface's own shape with that id, here rather than in an
    app-wide exception handler, so the connection stays open (`asgi.answering_errors`)."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", ()))
        given = headers.get(b"x-request-id", b"").decode("latin-1")
        request_id = given if 0 < len(given) <= 100 else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", ())}
                if b"x-request-id" not in names:
                    message["headers"] = [*message.get("headers", ()), (b"x-request-id", request_id.encode())]
            await send(message)

        async def answer(busy: bool) -> Response:
            return _unexpected(busy, request_id, scope["path"])

        where = f"{scope['method']} {scope['path']} (request {request_id})"
        await answering_errors(self.app, scope, receive, send_with_id, answer, log=log, where=where)


def _unexpected(busy: bool, request_id: str, path: str) -> Response:
    """The answer to an error no route answered, in the surface's shape: 503 with Retry-After for a store
    that is busy or unreachable for now (the write path's own waits are over by then), else 500."""
    render = surface_for(path).render_error
    if not busy:
        return render(RedlineError(INTERNAL_MESSAGE), request_id)
    answer = render(RedlineError(STORE_BUSY, code="unavailable", status=503), request_id)
    answer.headers["Retry-After"] = str(STORE_RETRY_AFTER_SECONDS)
    return answer


class BodyLimitMiddleware:
    """Refuses bodies over the limit with a 413 before the app reads them whole.

    A declared Content-Length is checked up front; a chunked body is counted as it streams and cut
    off at the limit, so a client can't make the server buffer more than it allows. The paths in
    `exempt` keep limits of their own (OTLP exports: larger, and checked after decompression too).
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int, exempt: frozenset[str] = frozenset()):
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.exempt = exempt

    def _error(self) -> TooLarge:
        return TooLarge(
            f"The request body is over the limit of {self.max_body_bytes} bytes.",
            details={"limit": self.max_body_bytes},
        )

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        request_id = scope.get("state", {}).get("request_id", "")
        response = surface_for(scope["path"]).render_error(self._error(), request_id)
        await response(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.exempt:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", ()))
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                too_large = int(declared) > self.max_body_bytes
            except ValueError:
                too_large = False
            if too_large:
                await self._refuse(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        # No declared length: read the stream up to the limit, then replay it to the app.
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return dict(await receive())

        await self.app(scope, replay, send)
