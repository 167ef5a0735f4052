"""docs/mcp.md says what the server does: its tools (each with the role it takes) and their page sizes
are the table's, and its configuration examples are valid JSON that start the real command."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from redline.cli.main import cli
from redline.mcp.table import TOOLS
from redline.mcp.tool import Tool
from tests.doccommands import Command, fenced_blocks, parse_problem

PAGE = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
ROW = re.compile(r"^\| `(\w+)` \| .* \| (\S+) \|$", re.MULTILINE)


def _text() -> str:
    return PAGE.read_text()


def _configurations() -> list[dict[str, Any]]:
    return [
        json.loads(block.text)["mcpServers"]["redline"]
        for block in fenced_blocks(_text())
        if block.language == "json"
    ]


def test_the_page_lists_every_tool_in_order_with_the_role_it_takes() -> None:
    rows = ROW.findall(_text())
    assert [name for name, _ in rows] == [tool.name for tool in TOOLS]
    roles = dict(rows)
    for tool in TOOLS:
        if not tool.writes:
            assert roles[tool.name] in ("read", "—"), tool.name
    assert {name: role for name, role in roles.items() if role not in ("read", "—")} == {
        "add_annotation": "write",
        "add_review_values": "write",
        "review_queue_item": "write",
        "make_correction": "write",
        "change_correction": "publish",
    }
    assert {tool.name for tool in TOOLS if tool.writes} == {
        name for name, role in roles.items() if role in ("write", "publish")
    }


def _limit(tool: Tool[Any]) -> tuple[int, int]:
    schema = tool.arguments.model_json_schema()["properties"]["limit"]
    return schema["default"], schema["maximum"]


def test_the_page_sizes_are_the_tools_own() -> None:
    sizes = {tool.name: _limit(tool) for tool in TOOLS if "limit" in tool.arguments.model_fields}
    assert sizes == {
        "search_runs": (20, 50),
        "export_runs": (10, 25),
        "list_projects": (50, 200),
        "list_queues": (20, 100),
        "queue_items": (50, 100),
        "expert_queue_items": (50, 100),
        "review_keys": (50, 100),
    }
    text = _text()
    for name, (default, most) in sizes.items():
        assert re.search(rf"`{name}`[^\n]*\| {default}, at most {most}", text), name
    run_ids = next(tool for tool in TOOLS if tool.name == "export_runs").arguments.model_json_schema()
    assert run_ids["properties"]["run_ids"]["anyOf"][0]["maxItems"] == 25


def test_the_desktop_configuration_starts_the_real_command_with_the_token_and_the_store() -> None:
    stdio, http = _configurations()
    command = Command(0, stdio["args"])
    assert stdio["command"].endswith("/bin/redline")
    assert parse_problem(cli, command) is None
    assert stdio["args"] == ["mcp"]
    assert set(stdio["env"]) == {"REDLINE_TOKEN", "REDLINE_DATABASE_URL"}
    assert http["url"].endswith("/mcp")
    assert http["headers"]["Authorization"].startswith("Bearer rl_")
