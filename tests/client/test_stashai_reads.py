"""The real stashai client (0.1.480, package `cli`) against a live server, on both stores: importing, listing
and reading traces with its own transport and its MCP tools, and its errors as `[status] sentence`."""

from __future__ import annotations

import json
import uuid
from types import ModuleType
from typing import Any

import pytest
from cli.client import StashClient, StashError

from tests.liveserver import LiveServer
from tests.samples import jsonl, stash_record

RM = "/api/v1/rm"
REFUND: dict[str, Any] = stash_record()
CHAT = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}


def _import(stash: StashClient, data: str, fmt: str = "auto") -> dict[str, Any]:
    answer: dict[str, Any] = stash._post(f"{RM}/traces/import", json={"data": data, "format": fmt})
    return answer


def test_import_then_list_with_the_client_transport(stash: StashClient) -> None:
    first = _import(stash, jsonl(REFUND))
    second = _import(stash, jsonl(CHAT, CHAT))

    assert (first["format"], first["imported"]) == ("stash", 1)
    assert (second["format"], second["imported"]) == ("openai_chat", 2)
    page = stash._get(f"{RM}/traces", limit=50, offset=0)
    assert isinstance(page, dict)
    assert page["total"] == 3
    # Newest first; traces stored in one import share their time and are ordered by id.
    assert [trace["id"] for trace in page["traces"]] == [
        *sorted(second["trace_ids"], reverse=True),
        *first["trace_ids"],
    ]
    refund = page["traces"][-1]
    assert (refund["external_id"], refund["title"], refund["step_count"]) == (
        "ticket-1182",
        "Refund for 1182",
        5,
    )
    assert [uuid.UUID(trace["id"]) for trace in page["traces"]]

    later = stash._get(f"{RM}/traces", limit=2, offset=2)
    assert isinstance(later, dict)
    assert [trace["id"] for trace in later["traces"]] == first["trace_ids"]


def test_the_mcp_tools_import_list_and_read_a_trace(mcp: ModuleType) -> None:
    imported = json.loads(mcp.stash_import_traces(jsonl(REFUND)))
    assert (imported["format"], imported["imported"]) == ("stash", 1)
    [trace_id] = imported["trace_ids"]

    listed = json.loads(mcp.stash_traces(limit=5))
    assert listed["total"] == 1
    assert [(t["id"], t["source_format"], t["step_count"]) for t in listed["traces"]] == [
        (trace_id, "stash", 5)
    ]

    read = json.loads(mcp.stash_trace(trace_id))
    assert list(read) == ["trace", "evaluation"]
    trace = read["trace"]
    assert (trace["id"], trace["external_id"], trace["annotations"]) == (trace_id, "ticket-1182", [])
    assert [step["role"] for step in trace["steps"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert trace["steps"][2]["tool_input"] == {"order_id": "1182"}
    assert all(uuid.UUID(step["id"]) for step in trace["steps"])
    evaluation = read["evaluation"]
    assert (evaluation["trace_id"], evaluation["status"], evaluation["actions"]) == (
        trace_id,
        "not_scored",
        [],
    )


def test_reimporting_with_the_mcp_tool_replaces_the_trace(mcp: ModuleType) -> None:
    [trace_id] = json.loads(mcp.stash_import_traces(jsonl(REFUND)))["trace_ids"]
    shorter = {**REFUND, "steps": REFUND["steps"][:2]}

    again = json.loads(mcp.stash_import_traces(json.dumps(shorter), format="stash"))

    assert again["trace_ids"] == [trace_id]
    assert json.loads(mcp.stash_trace(trace_id))["trace"]["step_count"] == 2
    assert json.loads(mcp.stash_traces())["total"] == 1


@pytest.mark.parametrize(
    ("data", "fmt", "sentence"),
    [
        (
            jsonl(CHAT),
            "x",
            "unknown format 'x'; expected auto or one of: stash, openai_chat, anthropic_messages, otel",
        ),
        (
            "hello",
            "auto",
            "could not detect the trace format; tried: stash, openai_chat, anthropic_messages, otel",
        ),
        (
            jsonl({"steps": [{"role": "user", "content": "a"}, {}, {"role": "bot"}]}),
            "auto",
            "trace 0 step 1: invalid role None",
        ),
        (jsonl(CHAT, {"messages": []}), "auto", "trace 1 has no steps"),
    ],
)
def test_a_refused_import_is_a_stash_error_reading_the_sentence(
    mcp: ModuleType, stash: StashClient, data: str, fmt: str, sentence: str
) -> None:
    with pytest.raises(StashError) as refused:
        mcp.stash_import_traces(data, format=fmt)

    assert refused.value.status_code == 422
    assert str(refused.value) == f"[422] {sentence}"
    page = stash._get(f"{RM}/traces", limit=50, offset=0)
    assert isinstance(page, dict)
    assert page["total"] == 0


def test_an_unknown_trace_and_a_missing_key_are_stash_errors(
    mcp: ModuleType, live_server: LiveServer
) -> None:
    with pytest.raises(StashError) as missing:
        mcp.stash_trace(str(uuid.uuid4()))
    assert str(missing.value) == "[404] Trace not found"

    with StashClient(live_server.url) as anonymous, pytest.raises(StashError) as refused:
        anonymous._get(f"{RM}/traces", limit=50, offset=0)
    assert refused.value.status_code == 401
    assert str(refused.value).startswith("[401] ")
