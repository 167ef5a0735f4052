"""`/mcp` on the running server: MCP's streamable HTTP transport, behind the same bearer tokens as the API.

Stateless, answering plain JSON: each request carries its own token and is served whole by whichever
server process takes it, so `redline serve --workers N` and several replicas behind a balancer serve MCP
as they serve the API, with no session held in a process that another one would need.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from redline.db import Database
from redline.mcp.callers import ACTOR_KEY, bearer_secret, request_caller
from redline.mcp.server import build_server
from redline.web.callers import bearer_actor

PATH = "/mcp"


class McpEndpoint:
    """The ASGI app answering at `PATH`. A request without a valid bearer token is refused before the
    protocol sees it, with the `Unauthenticated` error the app renders (401) as for any API path."""

    def __init__(self, database: Callable[[], Database]):
        self._database = database
        self._server = build_server(database, request_caller)
        self._sessions: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """What the app's lifespan enters: the task group the requests' servers run in. A manager runs
        once, so each lifespan (a test's app may be started more than once) gets a new one."""
        # DNS-rebinding protection stays off: it guards servers that trust any local caller, and every
        # request here must carry a token, which a page in a browser does not have.
        self._sessions = StreamableHTTPSessionManager(app=self._server, json_response=True, stateless=True)
        async with self._sessions.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._sessions is None:
            raise RuntimeError("/mcp is answered only while the app's lifespan runs.")
        if scope["type"] == "http":
            secret = bearer_secret(Headers(scope=scope).get("authorization"))
            scope[ACTOR_KEY] = await anyio.to_thread.run_sync(bearer_actor, self._database(), secret)
        await self._sessions.handle_request(scope, receive, send)
