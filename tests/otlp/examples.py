"""The worked examples of otlp-ingest §10 as spans written the way the spec writes them, and the steps
the spec lists for them: one copy, for the derivation tests, the message tests and the pipeline tests."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from tests.otlp.builders import tool_round_trip


def spec_of(specs: Sequence[Mapping[str, Any]], span: str, **changes: Any) -> dict[str, Any]:
    """One span of an example, by its short name, as a copy with `changes` made (say `parent=None`,
    to read it alone)."""
    return {**next(spec for spec in specs if spec["span"] == span), **changes}


def attributes_of(specs: Sequence[Mapping[str, Any]], span: str) -> dict[str, Any]:
    """The attributes of one span of an example, by its short name."""
    return dict(spec_of(specs, span)["attributes"])


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
    *tool_round_trip(2, "get_weather", {"city": "Paris"}, "call_1", "rainy, 14C"),
    {"index": 4, "role": "assistant", "content": "It is rainy, 14 °C."},
]


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
    *tool_round_trip(2, "calc", {"expr": "2+2"}, "t1", "4"),
    {"index": 4, "role": "assistant", "content": "4"},
]


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


STEPS_10_3 = [
    {"index": 0, "role": "user", "content": "reset my password"},
    *tool_round_trip(1, "reset_password", {"user": "me"}, "c7", '{"ok":true}'),
    {"index": 3, "role": "assistant", "content": "Done."},
]


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


STEPS_10_4 = [
    {"index": 0, "role": "user", "content": "Weather in Pune?"},
    *tool_round_trip(1, "weather", {"city": "Pune"}, "v1", '{"sky":"sunny","c":31}'),
    {"index": 3, "role": "assistant", "content": "Sunny, 31 °C."},
]


def example_10_5() -> list[dict[str, Any]]:
    """A web request and its query: no convention of §6, so no steps and no AI."""
    return [
        {"span": "S", "parent": None, "name": "GET /items", "kind": 2, "attributes": {"http.method": "GET"}},
        {
            "span": "Q",
            "parent": "S",
            "name": "SELECT items",
            "kind": 3,
            "attributes": {"db.system": "sqlite"},
        },
    ]
