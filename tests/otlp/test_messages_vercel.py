"""Vercel AI SDK messages (otlp-ingest §6.6, example §10.4), v5 and v4 shapes."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from redline.traces.otlp.messages import input_messages, output_messages
from redline.traces.otlp.model import Extracted, Media, Message, RawSpan, ToolCall
from redline.traces.otlp.steps import message_steps
from tests.otlp.builders import hex_id, raw_spans
from tests.otlp.examples import attributes_of, example_10_4

SPAN = hex_id("D")
M = partial(Message, source_span=SPAN, source_convention="vercel")


def span_of(attributes: dict[str, Any]) -> RawSpan:
    return raw_spans(
        [{"span": "D", "parent": None, "name": "ai.generateText.doGenerate", "attributes": attributes}]
    )[0]


def steps_of(span: RawSpan) -> list[tuple[Any, ...]]:
    steps = message_steps(input_messages(span).messages + output_messages(span).messages)
    return [(s.role, s.content, s.tool_name, s.tool_input, s.tool_call_id) for s in steps]


D1 = attributes_of(example_10_4(), "D1")
D2 = attributes_of(example_10_4(), "D2")
[USER] = json.loads(D1["ai.prompt.messages"])


def test_d1_of_the_worked_example() -> None:
    span = span_of(D1)
    assert input_messages(span) == Extracted((M(role="user", text="Weather in Pune?"),), "vercel")
    assert output_messages(span) == Extracted(
        (M(role="assistant", tool_calls=(ToolCall("v1", "weather", {"city": "Pune"}),)),), "vercel"
    )


def test_d2_of_the_worked_example_gives_the_steps_the_spec_lists() -> None:
    assert steps_of(span_of(D2)) == [
        ("user", "Weather in Pune?", None, None, None),
        ("assistant", "", "weather", {"city": "Pune"}, "v1"),
        ("tool", '{"sky":"sunny","c":31}', "weather", None, "v1"),
        ("assistant", "Sunny, 31 °C.", None, None, None),
    ]


def test_v4_shapes_read_like_v5() -> None:
    history = [
        {"role": "system", "content": "Be brief."},
        USER,
        {
            "role": "assistant",
            "content": [
                {"type": "tool-call", "toolCallId": "v1", "toolName": "weather", "args": {"city": "Pune"}}
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "v1",
                    "toolName": "weather",
                    "result": {"sky": "sunny", "c": 31},
                }
            ],
        },
    ]
    span = span_of(
        {
            "ai.prompt.messages": json.dumps(history),
            "ai.response.toolCalls": json.dumps(
                [
                    {
                        "toolCallType": "function",
                        "toolCallId": "v2",
                        "toolName": "weather",
                        "args": '{"city":"Goa"}',
                    }
                ]
            ),
            "ai.response.finishReason": "tool-calls",
        }
    )
    assert steps_of(span) == [
        ("system", "Be brief.", None, None, None),
        ("user", "Weather in Pune?", None, None, None),
        ("assistant", "", "weather", {"city": "Pune"}, "v1"),
        ("tool", '{"sky":"sunny","c":31}', "weather", None, "v1"),
        ("assistant", "", "weather", {"city": "Goa"}, "v2"),
    ]
    assert output_messages(span).messages[0].metadata == {"finish_reason": "tool-calls"}


def test_text_outputs_reasoning_media_and_objects() -> None:
    image = {"type": "image", "image": "https://x/p.png", "mediaType": "image/png"}
    file = {"type": "file", "data": "JVBERi0=", "mediaType": "application/pdf"}
    span = span_of(
        {
            "ai.prompt.messages": [
                {"role": "user", "content": [{"type": "text", "text": "Read these"}, image, file]},
                {
                    "role": "tool",
                    "content": [
                        {
                            "type": "tool-result",
                            "toolCallId": "q",
                            "toolName": "t",
                            "output": {"type": "text", "value": "plain"},
                        }
                    ],
                },
            ],
            "ai.response.text": "Done.",
            "ai.response.reasoning": "Looked at both.",
        }
    )
    assert input_messages(span).messages == (
        M(
            role="user",
            text="Read these",
            media=(Media("image", "https://x/p.png", "image/png"), Media("file", None, "application/pdf")),
            metadata={"parts": [image, file]},
        ),
        M(role="tool", text="plain", tool_call_id="q", name="t"),
    )
    assert output_messages(span).messages == (M(role="assistant", text="Done.", reasoning="Looked at both."),)
    assert output_messages(span_of({"ai.response.object": {"city": "Pune"}})).messages == (
        M(role="assistant", text='{"city":"Pune"}'),
    )


def test_a_tool_message_is_its_results_even_when_it_has_an_id_of_its_own() -> None:
    result = {
        "type": "tool-result",
        "toolCallId": "v1",
        "toolName": "weather",
        "output": {"type": "text", "value": "ok"},
    }
    span = span_of({"ai.prompt.messages": [{"role": "tool", "id": "msg-7", "content": [result]}]})
    assert input_messages(span).messages == (M(role="tool", text="ok", tool_call_id="v1", name="weather"),)


def test_ai_sdk_before_4_used_result_attributes() -> None:
    span = span_of(
        {"ai.result.text": "Hi", "ai.result.toolCalls": '[{"toolCallId":"a","toolName":"f","args":"{}"}]'}
    )
    assert output_messages(span).messages == (
        M(role="assistant", text="Hi", tool_calls=(ToolCall("a", "f", {}),)),
    )


def test_genai_messages_on_a_vercel_span_win() -> None:
    genai = [{"role": "user", "parts": [{"type": "text", "content": "from genai"}]}]
    span = span_of(D1 | {"gen_ai.input.messages": genai})
    assert [(m.text, m.source_convention) for m in input_messages(span).messages] == [("from genai", "genai")]
