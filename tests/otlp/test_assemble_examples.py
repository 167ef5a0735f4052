"""The worked examples of otlp-ingest §10, derived (§8) from their spans."""

from __future__ import annotations

import json
from typing import Any

from redline.traces.otlp.assemble import derive
from redline.traces.otlp.model import DerivedRun, Usage
from tests.otlp.builders import hex_id, raw_spans, step_view


def run_of(specs: list[dict[str, Any]], *, settled: bool = True) -> DerivedRun:
    return derive(raw_spans(specs), settled=settled)


L1_CALL = "llm.output_messages.0.message.tool_calls.0.tool_call"


def example_10_1(*, with_nodes: bool = True) -> list[dict[str, Any]]:
    nodes = [
        {"span": "n1", "parent": "root", "name": "agent", "attributes": {"openinference.span.kind": "CHAIN"}},
        {"span": "n2", "parent": "root", "name": "tools", "attributes": {"openinference.span.kind": "CHAIN"}},
        {"span": "n3", "parent": "root", "name": "agent", "attributes": {"openinference.span.kind": "CHAIN"}},
    ]
    return [
        {
            "span": "root",
            "parent": None,
            "name": "LangGraph",
            "attributes": {
                "openinference.span.kind": "CHAIN",
                "session.id": "thread-7",
                "input.value": '{"messages":[["user","Weather in Paris?"]]}',
                "input.mime_type": "application/json",
                "output.value": "It is rainy, 14 °C.",
            },
        },
        *(nodes if with_nodes else []),
        {
            "span": "L1",
            "parent": "n1",
            "name": "ChatOpenAI",
            "attributes": {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o-mini",
                "llm.input_messages.0.message.role": "system",
                "llm.input_messages.0.message.content": "You are helpful.",
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": "Weather in Paris?",
                "llm.output_messages.0.message.role": "assistant",
                f"{L1_CALL}.id": "call_1",
                f"{L1_CALL}.function.name": "get_weather",
                f"{L1_CALL}.function.arguments": '{"city": "Paris"}',
                "llm.token_count.prompt": 52,
                "llm.token_count.completion": 17,
            },
        },
        {
            "span": "K1",
            "parent": "n2",
            "name": "get_weather",
            "attributes": {
                "openinference.span.kind": "TOOL",
                "tool.name": "get_weather",
                "input.value": '{"city": "Paris"}',
                "output.value": "rainy, 14C",
            },
        },
        {
            "span": "L2",
            "parent": "n3",
            "name": "ChatOpenAI",
            "attributes": {
                "openinference.span.kind": "LLM",
                "llm.input_messages.0.message.role": "system",
                "llm.input_messages.0.message.content": "You are helpful.",
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": "Weather in Paris?",
                "llm.input_messages.2.message.role": "assistant",
                "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_1",
                "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "get_weather",
                "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": '{"city":"Paris"}',
                "llm.input_messages.3.message.role": "tool",
                "llm.input_messages.3.message.tool_call_id": "call_1",
                "llm.input_messages.3.message.content": "rainy, 14C",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "It is rainy, 14 °C.",
            },
        },
    ]


STEPS_10_1 = [
    {"index": 0, "role": "system", "content": "You are helpful."},
    {"index": 1, "role": "user", "content": "Weather in Paris?"},
    {
        "index": 2,
        "role": "assistant",
        "content": "",
        "tool_name": "get_weather",
        "tool_input": {"city": "Paris"},
        "tool_call_id": "call_1",
    },
    {
        "index": 3,
        "role": "tool",
        "content": "rainy, 14C",
        "tool_name": "get_weather",
        "tool_call_id": "call_1",
    },
    {"index": 4, "role": "assistant", "content": "It is rainy, 14 °C."},
]


def test_10_1_openinference_langgraph() -> None:
    run = run_of(example_10_1())
    assert step_view(run.steps) == STEPS_10_1
    assert run.input == {"messages": [["user", "Weather in Paris?"]]}
    assert run.output == "It is rainy, 14 °C."
    assert run.metadata == {"session_id": "thread-7", "otlp": {"threads": 1}}
    assert (run.status, run.title, run.agent, run.has_ai, run.has_root) == (
        "completed",
        "LangGraph",
        "test-agent",
        True,
        True,
    )
    assert run.usage == Usage(input_tokens=52, output_tokens=17)
    assert run.spans[hex_id("L1")].model == "gpt-4o-mini"
    assert run.spans[hex_id("K1")].kind == "TOOL"
    first_answer = run.steps[2].metadata
    assert first_answer["model"] == "gpt-4o-mini"
    assert first_answer["usage"] == {"input_tokens": 52, "output_tokens": 17}
    assert first_answer["otlp"]["span_id"] == hex_id("L1")
    assert "model" not in run.steps[4].metadata
    assert run.steps[4].metadata["otlp"]["span_id"] == hex_id("L2")


def test_10_1_while_unsettled_the_run_is_running_and_a_failed_root_fails_it() -> None:
    assert run_of(example_10_1(), settled=False).status == "running"
    failed = example_10_1()
    failed[0]["status"] = "error"
    assert run_of(failed, settled=False).status == "failed"
    assert run_of(failed).status == "failed"


def example_10_2() -> list[dict[str, Any]]:
    system = '[{"type":"text","content":"Be brief."}]'
    user = {"role": "user", "parts": [{"type": "text", "content": "2+2?"}]}
    asks = {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": "t1", "name": "calc", "arguments": {"expr": "2+2"}}],
    }
    result = {
        "role": "user",
        "parts": [{"type": "tool_call_response", "id": "t1", "name": "calc", "result": "4"}],
    }
    answer = {"role": "assistant", "parts": [{"type": "text", "content": "4"}], "finish_reason": "stop"}
    return [
        {
            "span": "A",
            "parent": None,
            "name": "invoke_agent calc_agent",
            "attributes": {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "calc_agent",
                "gen_ai.conversation.id": "c-9",
                "final_result": "4",
            },
        },
        {
            "span": "C1",
            "parent": "A",
            "name": "chat gpt-4o",
            "attributes": {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.system_instructions": system,
                "gen_ai.input.messages": json.dumps([user]),
                "gen_ai.output.messages": json.dumps([asks]),
            },
        },
        {
            "span": "X1",
            "parent": "A",
            "name": "execute_tool calc",
            "attributes": {
                "gen_ai.tool.name": "calc",
                "gen_ai.tool.call.id": "t1",
                "gen_ai.tool.call.arguments": '{"expr":"2+2"}',
                "gen_ai.tool.call.result": "4",
            },
        },
        {
            "span": "C2",
            "parent": "A",
            "name": "chat gpt-4o",
            "attributes": {
                "gen_ai.operation.name": "chat",
                "gen_ai.system_instructions": system,
                "gen_ai.input.messages": json.dumps([user, asks, result]),
                "gen_ai.output.messages": json.dumps([answer]),
            },
        },
    ]


STEPS_10_2 = [
    {"index": 0, "role": "system", "content": "Be brief."},
    {"index": 1, "role": "user", "content": "2+2?"},
    {
        "index": 2,
        "role": "assistant",
        "content": "",
        "tool_name": "calc",
        "tool_input": {"expr": "2+2"},
        "tool_call_id": "t1",
    },
    {"index": 3, "role": "tool", "content": "4", "tool_name": "calc", "tool_call_id": "t1"},
    {"index": 4, "role": "assistant", "content": "4"},
]


def test_10_2_genai_pydantic_ai_format_5() -> None:
    run = run_of(example_10_2())
    assert step_view(run.steps) == STEPS_10_2
    assert (run.agent, run.title, run.output, run.input) == (
        "calc_agent",
        "invoke_agent calc_agent",
        4,
        "2+2?",
    )
    assert run.metadata == {"session_id": "c-9", "otlp": {"threads": 1}}
    assert run.steps[2].metadata["model"] == "gpt-4o"
    assert run.steps[4].metadata["finish_reason"] == "stop"
    assert run.spans[hex_id("A")].kind == "AGENT"
    assert run.spans[hex_id("X1")].kind == "TOOL"


def test_10_2_with_the_whole_run_on_the_agent_span_source_a_gives_the_same_steps() -> None:
    specs = example_10_2()
    c2 = specs[3]["attributes"]
    whole = [*json.loads(c2["gen_ai.input.messages"]), *json.loads(c2["gen_ai.output.messages"])]
    specs[0]["attributes"]["pydantic_ai.all_messages"] = json.dumps(whole)
    specs[0]["attributes"]["gen_ai.system_instructions"] = c2["gen_ai.system_instructions"]
    run = run_of(specs)
    assert step_view(run.steps) == STEPS_10_2
    assert "threads" not in run.metadata["otlp"]
    alone = run_of([specs[0]])
    assert step_view(alone.steps) == STEPS_10_2


def example_10_3() -> list[dict[str, Any]]:
    return [
        {
            "span": "W",
            "parent": None,
            "name": "support.workflow",
            "attributes": {
                "traceloop.span.kind": "workflow",
                "traceloop.entity.input": '{"args":["reset my password"],"kwargs":{}}',
                "traceloop.entity.output": '"Done."',
            },
        },
        {
            "span": "O1",
            "parent": "W",
            "name": "openai.chat",
            "attributes": {
                "llm.request.type": "chat",
                "gen_ai.system": "openai",
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": "reset my password",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.finish_reason": "tool_calls",
                "gen_ai.completion.0.tool_calls.0.id": "c7",
                "gen_ai.completion.0.tool_calls.0.name": "reset_password",
                "gen_ai.completion.0.tool_calls.0.arguments": '{"user":"me"}',
                "gen_ai.usage.prompt_tokens": 30,
                "gen_ai.usage.completion_tokens": 12,
            },
        },
        {
            "span": "T1",
            "parent": "W",
            "name": "reset_password.tool",
            "attributes": {
                "traceloop.span.kind": "tool",
                "gen_ai.tool.name": "reset_password",
                "traceloop.entity.input": '{"args":[],"kwargs":{"user":"me"}}',
                "traceloop.entity.output": '{"ok":true}',
            },
        },
    ]


def test_10_3_openllmetry_legacy_with_a_backfilled_result_and_a_closing_step() -> None:
    run = run_of(example_10_3())
    assert step_view(run.steps) == [
        {"index": 0, "role": "user", "content": "reset my password"},
        {
            "index": 1,
            "role": "assistant",
            "content": "",
            "tool_name": "reset_password",
            "tool_input": {"user": "me"},
            "tool_call_id": "c7",
        },
        {
            "index": 2,
            "role": "tool",
            "content": '{"ok":true}',
            "tool_name": "reset_password",
            "tool_call_id": "c7",
        },
        {"index": 3, "role": "assistant", "content": "Done."},
    ]
    assert run.steps[2].metadata["otlp"] == {"span_id": hex_id("T1"), "convention": "tool_span"}
    assert run.steps[3].metadata == {"otlp": {"span_id": hex_id("W"), "synthetic": "run_output"}}
    assert run.steps[1].metadata["finish_reason"] == "tool_calls"
    assert run.steps[1].metadata["usage"] == {"input_tokens": 30, "output_tokens": 12}
    assert (run.input, run.output) == ("reset my password", "Done.")
    assert run.usage == Usage(input_tokens=30, output_tokens=12)


def example_10_4() -> list[dict[str, Any]]:
    user = {"role": "user", "content": [{"type": "text", "text": "Weather in Pune?"}]}
    asks = {
        "role": "assistant",
        "content": [
            {"type": "tool-call", "toolCallId": "v1", "toolName": "weather", "input": {"city": "Pune"}}
        ],
    }
    result = {
        "role": "tool",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "v1",
                "toolName": "weather",
                "output": {"type": "json", "value": {"sky": "sunny", "c": 31}},
            }
        ],
    }
    return [
        {
            "span": "G",
            "parent": None,
            "name": "ai.generateText",
            "attributes": {
                "ai.operationId": "ai.generateText",
                "ai.prompt": '{"prompt":"Weather in Pune?"}',
                "ai.response.text": "Sunny, 31 °C.",
                "ai.telemetry.metadata.sessionId": "s1",
            },
        },
        {
            "span": "D1",
            "parent": "G",
            "name": "ai.generateText.doGenerate",
            "attributes": {
                "ai.operationId": "ai.generateText.doGenerate",
                "ai.prompt.messages": json.dumps([user]),
                "ai.response.toolCalls": '[{"toolCallId":"v1","toolName":"weather","input":{"city":"Pune"}}]',
            },
        },
        {
            "span": "K",
            "parent": "D1",
            "name": "ai.toolCall",
            "attributes": {
                "ai.operationId": "ai.toolCall",
                "ai.toolCall.name": "weather",
                "ai.toolCall.id": "v1",
                "ai.toolCall.args": '{"city":"Pune"}',
                "ai.toolCall.result": '{"sky":"sunny","c":31}',
            },
        },
        {
            "span": "D2",
            "parent": "G",
            "name": "ai.generateText.doGenerate",
            "attributes": {
                "ai.operationId": "ai.generateText.doGenerate",
                "ai.prompt.messages": json.dumps([user, asks, result]),
                "ai.response.text": "Sunny, 31 °C.",
            },
        },
    ]


def test_10_4_vercel_ai_sdk() -> None:
    run = run_of(example_10_4())
    assert [run.spans[hex_id(s)].kind for s in ("G", "D1", "K", "D2")] == ["CHAIN", "LLM", "TOOL", "LLM"]
    assert step_view(run.steps) == [
        {"index": 0, "role": "user", "content": "Weather in Pune?"},
        {
            "index": 1,
            "role": "assistant",
            "content": "",
            "tool_name": "weather",
            "tool_input": {"city": "Pune"},
            "tool_call_id": "v1",
        },
        {
            "index": 2,
            "role": "tool",
            "content": '{"sky":"sunny","c":31}',
            "tool_name": "weather",
            "tool_call_id": "v1",
        },
        {"index": 3, "role": "assistant", "content": "Sunny, 31 °C."},
    ]
    assert run.metadata == {"sessionId": "s1", "session_id": "s1", "otlp": {"threads": 1}}
    assert (run.input, run.output) == ({"prompt": "Weather in Pune?"}, "Sunny, 31 °C.")


def test_10_5_unknown_convention_has_no_steps_and_is_not_ai() -> None:
    run = run_of(
        [
            {
                "span": "S",
                "parent": None,
                "name": "GET /items",
                "kind": 2,
                "attributes": {"http.method": "GET"},
            },
            {
                "span": "Q",
                "parent": "S",
                "name": "SELECT items",
                "kind": 3,
                "attributes": {"db.system": "sqlite"},
            },
        ]
    )
    assert (run.steps, run.has_ai, run.has_root) == ((), False, True)
    assert [facts.kind for facts in run.spans.values()] == ["UNKNOWN", "UNKNOWN"]
    assert (run.input, run.output, run.title) == (None, None, "GET /items")
