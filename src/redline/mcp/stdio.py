"""`redline mcp`: the MCP server over standard input and output, for a desktop assistant that starts it
as a subprocess. Standard output carries the protocol alone; anything said to a person goes to standard
error."""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server

from redline.db import Database
from redline.mcp.callers import TokenCaller
from redline.mcp.server import build_server

# The variable the token comes from: the one Redline's Python client reads too.
TOKEN_VARIABLE = "REDLINE_TOKEN"


def serve_stdio(db: Database, secret: str) -> None:
    """Answer MCP on standard input and output as the holder of `secret`, until the client closes them."""
    server = build_server(lambda: db, TokenCaller(secret))

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)
