"""Redline's MCP server as an assistant meets it: the `mcp` SDK's own client, over stdio (a `redline mcp`
process, as a desktop assistant starts it) and over streamable HTTP (`/mcp` on a real server on
loopback), on both stores, with a project seeded through the API as a user's data would arrive."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from redline.client import Client
from tests.conftest import ADMIN_TOKEN
from tests.liveserver import LiveServer, live_server
from tests.samples import make_run

__all__ = ["live_server"]

TRANSPORTS = ("stdio", "http")
# The roles of the callers the world seeds, None for a principal with no role in the project.
ROLES: dict[str, str | None] = {"reader": "read", "writer": "write", "publisher": "publish", "outsider": None}


@dataclass
class World:
    """A project as an assistant finds it: runs (two of them in the expert queue through a rule and in
    an annotation queue), a rating, a review key, and callers holding each role."""

    server: LiveServer
    database_url: str
    admin: Client
    tokens: dict[str, str] = field(default_factory=dict)
    user_ids: dict[str, str] = field(default_factory=dict)
    token_ids: dict[str, str] = field(default_factory=dict)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    queue_id: str = ""
    rule_id: str = ""

    @property
    def project_id(self) -> str:
        return self.server.project_id


@pytest.fixture
def world(live_server: LiveServer, database_url: str) -> Iterator[World]:
    with live_server.client() as admin:
        made = World(live_server, database_url, admin)
        made.tokens["admin"] = ADMIN_TOKEN
        for name, role in ROLES.items():
            user = admin.users.create(name)
            if role is not None:
                admin.members.set(live_server.project_id, user["id"], role)
            made.user_ids[name] = user["id"]
            issued = admin.users.create_token(user["id"], name="assistant")
            made.tokens[name], made.token_ids[name] = issued["token"], issued["id"]
        project = live_server.project_id
        made.rule_id = admin.queue_rules.create(project, name="Every completed run")["ruleId"]
        made.runs["gold"] = admin.runs.create(
            make_run(
                project,
                externalId="gold-1",
                sessionId="conversation-7",
                metadata={"tier": "gold"},
                startedAt="2026-11-02T10:00:00Z",
            )
        )
        made.runs["silver"] = admin.runs.create(
            make_run(
                project,
                externalId="silver-1",
                agentVersion="v2",
                metadata={"tier": "silver"},
                startedAt="2026-11-03T10:00:00Z",
            )
        )
        made.runs["running"] = admin.runs.create(
            make_run(project, externalId="running-1", status="running", startedAt="2026-11-04T10:00:00Z")
        )
        admin.annotations.create(made.runs["gold"]["id"], rating=1, comment="Looked the order up first.")
        admin.human_reviews.create("quality", "categorical", options=["good", "bad"], project_id=project)
        made.queue_id = admin.queues.create("Support review", project_id=project)["_id"]
        admin.queues.add_traces(made.queue_id, [made.runs["gold"]["id"], made.runs["silver"]["id"]])
        yield made


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[TextIO]:
    """Where a `redline mcp` process writes its standard error (its one line for the operator)."""
    with (tmp_path / "redline-mcp.log").open("w+") as log:
        yield log


@dataclass
class Connector:
    """Opens an MCP client session as the holder of a token, over the test's transport."""

    world: World
    transport: str
    errlog: TextIO

    @asynccontextmanager
    async def session(self, who: str = "admin") -> AsyncIterator[ClientSession]:
        token = self.world.tokens[who]
        if self.transport == "stdio":
            server = StdioServerParameters(
                command=sys.executable,
                args=["-m", "redline", "mcp"],
                env={"REDLINE_DATABASE_URL": self.world.database_url, "REDLINE_TOKEN": token},
            )
            async with (
                stdio_client(server, errlog=self.errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                yield session
            return
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx.AsyncClient(headers=headers, timeout=30) as http,
            streamable_http_client(f"{self.world.server.url}/mcp", http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


@pytest.fixture
def assistant(world: World, transport: str, errlog: TextIO) -> Connector:
    return Connector(world, transport, errlog)


def text_of(result: types.CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, types.TextContent)
    return content.text


async def call(session: ClientSession, tool: str, **arguments: Any) -> Any:
    """A tool's answer, which must not be an error."""
    result = await session.call_tool(tool, arguments)
    assert not result.isError, text_of(result)
    return json.loads(text_of(result))


async def refused(session: ClientSession, tool: str, **arguments: Any) -> str:
    """The sentence of a tool's refusal."""
    result = await session.call_tool(tool, arguments)
    assert result.isError, text_of(result)
    return text_of(result)
