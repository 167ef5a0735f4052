"""docs/clients.md's Python snippets run as written against a real server, with only the host, the token
and the ids a reader would put in their places changed: the stashai, orq-ai-sdk and MCP ones here (the
kindgi one in test_kindgi_docs.py, the TypeScript ones in tests/clients_ts), and each did what it says."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import httpx

from redline.client import Client
from redline.mcp.table import TOOLS
from tests import orqseed
from tests.asyncrun import in_own_thread
from tests.conftest import ADMIN_TOKEN
from tests.doccommands import python_blocks
from tests.liveserver import LiveServer
from tests.samples import make_run

PAGE = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
HOST = '"http://127.0.0.1:8000'
TOKEN = "rl_…"


def _snippet(marker: str, **placeholders: str) -> str:
    """The one Python block of the page holding `marker`, run against `live_server` by the caller."""
    [block] = [block.text for block in python_blocks(PAGE.read_text()) if marker in block.text]
    for placeholder, value in placeholders.items():
        assert placeholder in block, placeholder
        block = block.replace(placeholder, value)
    return block


def _run(code: str, live_server: LiveServer) -> list[str]:
    """The snippet with the test server's address and the admin's token, run: the lines it printed."""
    assert HOST in code, HOST
    assert TOKEN in code, TOKEN
    code = code.replace(HOST, f'"{live_server.url}').replace(TOKEN, ADMIN_TOKEN)
    printed = io.StringIO()
    compiled = compile(code, str(PAGE), "exec")
    # In a thread of its own: the MCP snippet starts an event loop, which the browser tests' may block.
    with contextlib.redirect_stdout(printed):
        in_own_thread(lambda: exec(compiled, {"__name__": "__main__"}))
    return printed.getvalue().splitlines()


def test_the_stashai_snippet_imports_rates_and_reads(live_server: LiveServer, admin: Client) -> None:
    printed = _run(_snippet("from cli.client import StashClient"), live_server)
    assert printed == ["1", "[404] Trace not found"]
    with httpx.Client(base_url=live_server.url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as http:
        [trace] = http.get("/api/v1/rm/traces").json()["traces"]
        [said] = http.get(f"/api/v1/rm/traces/{trace['id']}").json()["annotations"]
    assert (said["rating"], said["comment"]) == (1, "Clear and right.")


def test_the_orq_snippet_annotates_a_span_and_lists_queues(live_server: LiveServer) -> None:
    with orqseed.admin_http(live_server) as http:
        orqseed.define_reviews(http)
        trace_id = orqseed.document_trace(http, live_server.project_id)
        code = _snippet(
            "from orq_ai_sdk import Orq",
            **{"<trace_id>": trace_id, "<span_id>": "llm", "<project_id>": live_server.project_id},
        )
        assert _run(code, live_server) == ["['Refunds']"]
        assert orqseed.span_values(http, trace_id) == {"rating": "good"}


def test_the_mcp_snippet_lists_the_tools_and_searches_runs(live_server: LiveServer, admin: Client) -> None:
    run = admin.runs.create(make_run(live_server.project_id))
    printed = _run(_snippet("from mcp import ClientSession"), live_server)
    assert json.loads(printed[0].replace("'", '"')) == sorted(tool.name for tool in TOOLS)
    found = json.loads(printed[1])
    assert [item["id"] for item in found["items"]] == [run["id"]]
