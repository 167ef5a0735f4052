"""OpenLLMetry's legacy attributes and LangSmith's variants (otlp-ingest §6.5, example §10.3)."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from redline.traces.otlp.messages import input_messages, output_messages
from redline.traces.otlp.model import DerivedStep, Extracted, Media, Message, RawSpan, ToolCall
from redline.traces.otlp.steps import message_steps
from tests.otlp.builders import hex_id, raw_spans
from tests.otlp.examples import attributes_of, example_10_3

SPAN = hex_id("O1")
M = partial(Message, source_span=SPAN, source_convention="openllmetry")


def span_of(attributes: dict[str, Any]) -> RawSpan:
    return raw_spans([{"span": "O1", "parent": None, "name": "openai.chat", "attributes": attributes}])[0]


O1 = attributes_of(example_10_3(), "O1")


def test_o1_of_the_worked_example() -> None:
    span = span_of(O1)
    assert input_messages(span) == Extracted((M(role="user", text="reset my password"),), "openllmetry")
    outputs = output_messages(span)
    assert outputs == Extracted(
        (
            M(
                role="assistant",
                tool_calls=(ToolCall("c7", "reset_password", {"user": "me"}),),
                metadata={"finish_reason": "tool_calls"},
            ),
        ),
        "openllmetry",
    )
    assert message_steps(outputs.messages) == [
        DerivedStep(
            "assistant",
            "",
            tool_name="reset_password",
            tool_input={"user": "me"},
            tool_call_id="c7",
            metadata={"finish_reason": "tool_calls", "otlp": {"span_id": SPAN, "convention": "openllmetry"}},
        )
    ]


def test_tool_messages_content_blocks_and_refusals() -> None:
    span = span_of(
        {
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": json.dumps(
                [
                    {"type": "text", "text": "What is "},
                    {"type": "text", "text": "this?"},
                    {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                ]
            ),
            "gen_ai.prompt.1.role": "assistant",
            "gen_ai.prompt.1.tool_calls.0.id": "c1",
            "gen_ai.prompt.1.tool_calls.0.name": "look",
            "gen_ai.prompt.1.tool_calls.0.arguments": "not json",
            "gen_ai.prompt.2.role": "tool",
            "gen_ai.prompt.2.tool_call_id": "c1",
            "gen_ai.prompt.2.content": "[1, 2]",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.refusal": "I can't help with that.",
            "gen_ai.completion.1.content": "Sure.",
        }
    )
    assert input_messages(span).messages == (
        M(
            role="user",
            text="What is this?",
            media=(Media("image", "https://x/y.png"),),
            metadata={"parts": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]},
        ),
        M(role="assistant", tool_calls=(ToolCall("c1", "look", "not json"),)),
        M(role="tool", text="[1, 2]", tool_call_id="c1"),
    )
    assert output_messages(span).messages == (
        M(role="assistant", text="I can't help with that.", metadata={"alternatives": [{"text": "Sure."}]}),
    )
    steps = message_steps(input_messages(span).messages)
    assert [(s.tool_name, s.tool_input) for s in steps[1:]] == [
        ("look", {"_raw": "not json"}),
        ("look", None),
    ]


def test_langsmith_nests_the_fields_under_message() -> None:
    span = span_of(
        {
            "gen_ai.prompt.0.message.role": "human",
            "gen_ai.prompt.0.message.content": "Hi",
            "gen_ai.completion.0.message.role": "ai",
            "gen_ai.completion.0.message.content": "Hello",
        }
    )
    assert input_messages(span).messages == (M(role="user", text="Hi"),)
    assert output_messages(span).messages == (M(role="assistant", text="Hello"),)


def test_langsmith_single_json_text_is_read_as_the_call_it_serializes() -> None:
    ls = partial(Message, source_span=SPAN, source_convention="langsmith")
    prompt = {
        "messages": [
            [
                {
                    "lc": 1,
                    "type": "constructor",
                    "id": ["langchain", "schema", "messages", "SystemMessage"],
                    "kwargs": {"content": "Be kind.", "type": "system"},
                },
                {
                    "lc": 1,
                    "type": "constructor",
                    "id": ["langchain", "schema", "messages", "HumanMessage"],
                    "kwargs": {"content": "Hi"},
                },
            ]
        ]
    }
    completion = {
        "generations": [
            [
                {
                    "text": "",
                    "message": {
                        "lc": 1,
                        "type": "constructor",
                        "id": ["langchain", "schema", "messages", "AIMessage"],
                        "kwargs": {
                            "content": "",
                            "tool_calls": [{"name": "greet", "args": {"who": "you"}, "id": "g1"}],
                        },
                    },
                },
            ]
        ]
    }
    span = span_of({"gen_ai.prompt": json.dumps(prompt), "gen_ai.completion": json.dumps(completion)})
    assert input_messages(span) == Extracted(
        (ls(role="system", text="Be kind."), ls(role="user", text="Hi")), "langsmith"
    )
    assert output_messages(span).messages == (
        ls(role="assistant", tool_calls=(ToolCall("g1", "greet", {"who": "you"}),)),
    )


def test_a_plain_prompt_text_is_no_message() -> None:
    span = span_of({"gen_ai.prompt": "Tell me a joke", "gen_ai.completion": "No."})
    assert input_messages(span) == Extracted()
    assert output_messages(span) == Extracted()
