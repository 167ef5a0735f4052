"""The MCP server, on either transport: `tools/list` from the table of tools, and `tools/call` checked,
run and answered. The low-level server of the `mcp` SDK, not FastMCP: the table's pydantic models are
the input schemas, and every refusal is a sentence of ours (FastMCP answers pydantic's own report).

A call's arguments are checked against its tool's model; its caller found (`callers`); then the tool
runs in one transaction, a write one for a writing tool, on a worker thread, so the event loop serving
other calls never waits on the store. Whatever it answers is sent as JSON text. A domain error comes
back as a tool error carrying its sentence, which is the sentence the API would give; anything else is
logged and answered with a sentence that leaks nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from pydantic import ValidationError

from redline import __version__
from redline.db import Database, is_transient
from redline.errors import RedlineError
from redline.fieldpaths import field_path
from redline.jsonio import dumps_text
from redline.mcp.callers import Caller
from redline.mcp.table import TOOLS
from redline.mcp.tool import Answered
from redline.stats.stored_figures import ask_if_wanted

log = logging.getLogger("redline.mcp")

NAME = "redline"
INSTRUCTIONS = (
    "Redline holds the runs (traces) of AI agents and what people said about them: ratings and comments, "
    "values for review keys, and corrections of what a run should have done. Start with list_projects, "
    "find runs with search_runs and read one with get_run. Lists answer a page and a nextCursor; pass it "
    "back as cursor for the next page. You act as the token's holder, with its roles in each project."
)
SOMETHING_WENT_WRONG = "Something went wrong on the server; its log says what. Nothing was changed."
STORE_BUSY = "The store is busy or unreachable, and nothing was changed: try the call again in a moment."
# How many of a call's bad arguments a refusal names.
SHOWN_PROBLEMS = 5

_BY_NAME = {tool.name: tool for tool in TOOLS}


def build_server(database: Callable[[], Database], caller: Caller) -> Server[Any, Any]:
    """The server for a store (`database`, asked for at each call: the app opens its own in its lifespan)
    and a way of finding who calls."""
    server: Server[Any, Any] = Server(NAME, version=__version__, instructions=INSTRUCTIONS)
    definitions = [tool.definition() for tool in TOOLS]

    @server.list_tools()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        return definitions

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        request = server.request_context.request
        return await anyio.to_thread.run_sync(partial(answer, database(), caller, request, name, arguments))

    return server


def answer(
    db: Database, caller: Caller, request: Any | None, name: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    """One tool call, answered: its JSON, or a tool error with a sentence saying what was refused."""
    tool = _BY_NAME.get(name)
    if tool is None:
        return refusal(f'There is no tool "{name}"; tools/list names every tool.')
    try:
        asked = tool.arguments.model_validate(arguments)
    except ValidationError as error:
        return refusal(f"Bad arguments for {name}: {problems(error)}.")
    try:
        actor = caller(db, request)
        with db.write() if tool.writes else db.read() as session:
            said = tool.call(session, actor, asked)
        if isinstance(said, Answered):
            ask_if_wanted(db, said.asking)
            said = said.answer
    except RedlineError as error:
        return refusal(error.message)
    except Exception as error:
        if is_transient(error):
            log.warning("store busy or unreachable for MCP tool %s: %s", name, error)
            return refusal(STORE_BUSY)
        log.exception("unexpected error in MCP tool %s", name, exc_info=error)
        return refusal(SOMETHING_WENT_WRONG)
    return types.CallToolResult(content=[types.TextContent(type="text", text=dumps_text(said))])


def problems(error: ValidationError) -> str:
    """What is wrong with a call's arguments, each problem where it is (`values[0].key: …`)."""
    said = []
    for problem in error.errors()[:SHOWN_PROBLEMS]:
        where = field_path(list(problem["loc"]), camel=False)
        message = str(problem["msg"]).removeprefix("Value error, ")
        said.append(f"{where}: {message}" if where else message)
    return "; ".join(said)


def refusal(sentence: str) -> types.CallToolResult:
    """A tool error: the call was refused, or failed, and this sentence says why."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=sentence)], isError=True)
