"""What Redline's ASGI middleware share: acting on HTTP requests only (the lifespan messages pass
straight through), and answering an error no handler answered without losing the connection."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from redline.db import is_transient
from redline.web import metrics


class HttpMiddleware(ABC):
    """Calls `handle` for each HTTP request; subclasses wrap `self.app` there."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.handle(scope, receive, send)

    @abstractmethod
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one HTTP request, through `self.app`."""


async def answering_errors(
    app: ASGIApp,
    scope: Scope,
    receive: Receive,
    send: Send,
    answer: Callable[[bool], Awaitable[Response]],
    *,
    log: logging.Logger,
    where: str,
) -> None:
    """Run the app; an exception raised before any answer went out is answered with `answer(busy)`
    instead of raised, so the connection stays open: Starlette's outermost middleware raises again after
    its own answer, and uvicorn closes a connection whose request raised (a pooled client's next request
    on it then failed with a reset). One raised after the answer began is raised again: nothing truthful
    can follow it on this connection.

    `busy` is a store that stayed busy or unreachable (`db.is_transient`): a 503 to try again after,
    counted in the metrics and logged as a warning. Anything else is a fault: a 500, logged with its
    traceback. `where` names the request in the log."""
    started = False

    async def noting_start(message: Message) -> None:
        nonlocal started
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        await app(scope, receive, noting_start)
    except Exception as error:
        if started:
            raise
        busy = is_transient(error)
        if busy:
            metrics.store_unavailable()
            log.warning("store busy or unreachable for %s: %s", where, error)
        else:
            log.exception("unexpected error handling %s", where, exc_info=error)
        response = await answer(busy)
        await response(scope, receive, send)
