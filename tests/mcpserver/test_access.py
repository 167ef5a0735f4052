"""Who may do what through MCP: the token's roles apply exactly as on the API (a reader reads but cannot
write, a token without a role in the project finds nothing, in the API's own sentences), a token is
needed on both transports, and a revoked one stops the very next call."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from redline.cli.main import cli
from redline.client import AuthError, NotFoundError
from tests.asyncrun import run_async
from tests.mcpserver.conftest import Connector, World, call, refused


def test_a_reader_reads_but_cannot_write(assistant: Connector, world: World) -> None:
    gold = world.runs["gold"]
    with world.server.client(world.tokens["reader"]) as api, pytest.raises(AuthError) as denied:
        api.corrections.create(run_id=gold["id"], answer="right")

    async def scenario() -> None:
        async with assistant.session("reader") as session:
            assert (await call(session, "get_run", run_id=gold["id"]))["id"] == gold["id"]
            said = await refused(session, "make_correction", run_id=gold["id"], answer="right")
            assert said == denied.value.message
            assert said == 'This needs the write role in project "default"; you have read.'
            assert said == await refused(session, "add_annotation", run_id=gold["id"], rating=1)
            items = await call(session, "queue_items", queue_id=world.queue_id)
            assert "write role" in await refused(
                session,
                "review_queue_item",
                queue_id=world.queue_id,
                item_id=items["items"][0]["id"],
                values=[{"key": "quality", "value": "good"}],
            )

    run_async(scenario)
    assert world.admin.corrections.list(project_id=world.project_id) is not None
    assert list(world.admin.corrections.list(run_id=gold["id"])) == []


def test_changing_a_corrections_status_takes_the_publish_role(assistant: Connector, world: World) -> None:
    async def scenario() -> str:
        async with assistant.session("writer") as session:
            made = await call(session, "make_correction", run_id=world.runs["gold"]["id"], answer="right")
            return await refused(session, "change_correction", correction_id=made["id"], status="wont-fix")

    assert run_async(scenario) == 'This needs the publish role in project "default"; you have write.'


def test_a_token_without_a_role_in_the_project_finds_nothing_as_on_the_api(
    assistant: Connector, world: World
) -> None:
    gold = world.runs["gold"]
    with world.server.client(world.tokens["outsider"]) as api:
        with pytest.raises(NotFoundError) as run_missing:
            api.runs.get(gold["id"])
        with pytest.raises(NotFoundError) as project_missing:
            api.queue_rules.results(world.project_id, world.rule_id)
        with pytest.raises(NotFoundError) as queue_missing:
            api.queues.get(world.queue_id)

    async def scenario() -> None:
        async with assistant.session("outsider") as session:
            assert await call(session, "list_projects") == {"items": [], "nextCursor": None}
            assert (await call(session, "search_runs"))["items"] == []
            assert (await call(session, "list_queues"))["items"] == []
            assert await refused(session, "get_run", run_id=gold["id"]) == run_missing.value.message
            assert await refused(session, "make_correction", run_id=gold["id"], answer="right") == (
                run_missing.value.message
            )
            assert await refused(
                session, "rule_results", project=world.project_id, rule_id=world.rule_id
            ) == (project_missing.value.message)
            assert (
                await refused(session, "queue_items", queue_id=world.queue_id) == queue_missing.value.message
            )
            assert await refused(session, "search_runs", project="default") == 'No project "default".'

    run_async(scenario)
    assert run_missing.value.message == f'No run "{gold["id"]}".'


def test_a_revoked_token_stops_the_next_call(assistant: Connector, world: World) -> None:
    """Over stdio the call is refused with the API's sentence; over HTTP the request is a 401, which the
    client raises, as MCP's authorization rules have it."""

    async def scenario() -> str:
        async with assistant.session("reader") as session:
            await call(session, "list_projects")
            world.admin.tokens.revoke(world.token_ids["reader"])
            return await refused(session, "list_projects")

    if assistant.transport == "stdio":
        assert run_async(scenario) == "The bearer token is not valid or has been revoked."
        assistant.errlog.seek(0)
        said = assistant.errlog.read()
        assert 'Redline MCP server on standard input and output, acting as "reader".' in said
        return
    statuses: list[int] = []
    try:
        run_async(scenario)
    except* httpx.HTTPStatusError as raised:
        statuses = [
            error.response.status_code
            for error in raised.exceptions
            if isinstance(error, httpx.HTTPStatusError)
        ]
    assert statuses == [401]


def test_http_without_a_valid_token_is_refused_before_the_protocol(world: World) -> None:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    for sent in ({}, {"Authorization": "Bearer rl_not_a_token_at_all"}, {"Authorization": "Basic abc"}):
        answer = httpx.post(f"{world.server.url}/mcp", json=hello, headers={**headers, **sent})
        assert answer.status_code == 401, answer.text
        assert answer.json()["error"]["message"] in (
            "Missing bearer token: send Authorization: Bearer <token>.",
            "The bearer token is not valid or has been revoked.",
        )


def test_http_answers_plain_json_and_keeps_no_session(world: World) -> None:
    """Stateless: no session id to send back, so any process can take the next request."""
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "curl", "version": "1"},
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {world.tokens['reader']}",
    }
    answer = httpx.post(f"{world.server.url}/mcp", json=hello, headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in answer.headers
    assert answer.json()["result"]["serverInfo"]["name"] == "redline"


def test_redline_mcp_needs_a_valid_token_from_the_environment(world: World) -> None:
    runner = CliRunner()
    arguments = ["--database-url", world.database_url, "mcp"]
    missing = runner.invoke(cli, arguments, env={"REDLINE_TOKEN": ""})
    assert missing.exit_code == 2
    assert "Set REDLINE_TOKEN to a Redline token" in missing.output
    wrong = runner.invoke(cli, arguments, env={"REDLINE_TOKEN": "rl_not_a_token_at_all"})
    assert wrong.exit_code == 1
    assert "The bearer token is not valid or has been revoked." in wrong.output


def test_redline_mcp_never_makes_a_store(world: World, tmp_path: Path) -> None:
    nowhere = f"sqlite:///{tmp_path / 'nowhere.db'}"
    done = CliRunner().invoke(
        cli, ["--database-url", nowhere, "mcp"], env={"REDLINE_TOKEN": world.tokens["reader"]}
    )
    assert done.exit_code == 1
    assert "No store found" in done.output
    assert not (tmp_path / "nowhere.db").exists()
