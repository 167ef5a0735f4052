"""Each console answer says how long the server spent on it (`Server-Timing: app;dur=<ms>`): browsers'
developer tools show it, and bench/console.py reads it to tell server time from the network's."""

from __future__ import annotations

import time

from starlette.types import Message, Receive, Scope, Send

from redline.web.asgi import HttpMiddleware


class ServerTimingMiddleware(HttpMiddleware):
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()

        async def send_timed(message: Message) -> None:
            if message["type"] == "http.response.start":
                spent_ms = (time.perf_counter() - started) * 1000
                header = (b"server-timing", f"app;dur={spent_ms:.1f}".encode())
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        await self.app(scope, receive, send_timed)
