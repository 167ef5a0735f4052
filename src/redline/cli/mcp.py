"""`redline mcp`: Redline's MCP tools over standard input and output, as a desktop assistant starts them.

The token is read from the environment, never from a flag (a flag shows in every process list), and is
checked before the first message: a wrong or revoked one ends the command with the API's sentence rather
than an assistant's vague "server disconnected". Standard output is the protocol's alone.
"""

from __future__ import annotations

import os

import click

from redline.cli.context import CliContext, fail, pass_context
from redline.cli.progress import say
from redline.errors import RedlineError
from redline.mcp.stdio import TOKEN_VARIABLE, serve_stdio
from redline.web.callers import bearer_actor


@click.command("mcp")
@pass_context
def mcp_command(context: CliContext) -> None:
    """Serve Redline's MCP tools on standard input and output, as the holder of REDLINE_TOKEN.

    For a desktop assistant or an IDE that starts MCP servers as subprocesses (docs/mcp.md). Every call
    acts as the token's principal, with its roles, exactly as the API would; a running server offers
    the same tools over HTTP at /mcp.
    """
    secret = os.environ.get(TOKEN_VARIABLE, "").strip()
    if not secret:
        raise click.UsageError(
            f"Set {TOKEN_VARIABLE} to a Redline token: the MCP tools act as its holder "
            "(redline tokens create --user NAME makes one)."
        )
    db = context.ready_database()
    with context.reaching_store():
        try:
            actor = bearer_actor(db, secret)
        except RedlineError as error:
            raise fail(error) from error
    say(f'Redline MCP server on standard input and output, acting as "{actor.name}".')
    serve_stdio(db, secret)
