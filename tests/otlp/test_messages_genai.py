"""OTel GenAI messages (otlp-ingest §6.2, §6.3, §6.7, example §10.2), and the steps they make (§7)."""

from __future__ import annotations

import base64
import json
from functools import partial
from typing import Any

from redline.traces.otlp.messages import input_messages, output_messages, whole_run_messages
from redline.traces.otlp.model import DerivedStep, Extracted, Media, Message, RawSpan, ToolCall
from redline.traces.otlp.steps import message_steps
from tests.otlp.builders import hex_id, raw_spans
from tests.otlp.examples import attributes_of, example_10_2

SPAN = hex_id("C")
M = partial(Message, source_span=SPAN, source_convention="genai")


def span_of(attributes: dict[str, Any], events: list[dict[str, Any]] | None = None) -> RawSpan:
    spec = {
        "span": "C",
        "parent": None,
        "name": "chat gpt-4o",
        "attributes": attributes,
        "events": events or [],
    }
    return raw_spans([spec])[0]


def steps_of(span: RawSpan) -> list[tuple[Any, ...]]:
    steps = message_steps(input_messages(span).messages + output_messages(span).messages)
    return [(s.role, s.content, s.tool_name, s.tool_input, s.tool_call_id) for s in steps]


INSTRUCTIONS = '[{"type":"text","content":"Be brief."}]'
C1 = attributes_of(example_10_2(), "C1")
C2_INPUT = [
    {"role": "user", "parts": [{"type": "text", "content": "2+2?"}]},
    {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": "t1", "name": "calc", "arguments": {"expr": "2+2"}}],
    },
    {"role": "user", "parts": [{"type": "tool_call_response", "id": "t1", "name": "calc", "result": "4"}]},
]
C2_OUTPUT = [{"role": "assistant", "parts": [{"type": "text", "content": "4"}], "finish_reason": "stop"}]
C2 = attributes_of(example_10_2(), "C2")


def test_c1_of_the_worked_example_prepends_the_system_instructions() -> None:
    span = span_of(C1)
    assert input_messages(span) == Extracted(
        (M(role="system", text="Be brief."), M(role="user", text="2+2?")), "genai"
    )
    assert output_messages(span) == Extracted(
        (M(role="assistant", tool_calls=(ToolCall("t1", "calc", {"expr": "2+2"}),)),), "genai"
    )


def test_c2_splits_the_tool_result_out_of_its_user_message() -> None:
    """Edge case 14: pydantic-ai below format 6 returns tool results in user messages."""
    span = span_of(C2)
    assert input_messages(span).messages == (
        M(role="system", text="Be brief."),
        M(role="user", text="2+2?"),
        M(role="assistant", tool_calls=(ToolCall("t1", "calc", {"expr": "2+2"}),)),
        M(role="tool", text="4", tool_call_id="t1", name="calc"),
    )
    assert output_messages(span).messages == (
        M(role="assistant", text="4", metadata={"finish_reason": "stop"}),
    )
    assert steps_of(span) == [
        ("system", "Be brief.", None, None, None),
        ("user", "2+2?", None, None, None),
        ("assistant", "", "calc", {"expr": "2+2"}, "t1"),
        ("tool", "4", "calc", None, "t1"),
        ("assistant", "4", None, None, None),
    ]


def test_structured_messages_read_the_same_as_json_text() -> None:
    """Edge case 18: `gen_ai.input.messages` as an arrayValue/kvlistValue, not a string."""
    structured = C2 | {
        "gen_ai.input.messages": C2_INPUT,
        "gen_ai.output.messages": C2_OUTPUT,
        "gen_ai.system_instructions": [{"type": "text", "content": "Be brief."}],
    }
    assert input_messages(span_of(structured)) == input_messages(span_of(C2))
    assert output_messages(span_of(structured)) == output_messages(span_of(C2))


def test_system_instructions_are_not_added_when_the_input_starts_with_a_system_message() -> None:
    messages = [{"role": "system", "parts": [{"type": "text", "content": "Own prompt."}]}]
    span = span_of({"gen_ai.system_instructions": INSTRUCTIONS, "gen_ai.input.messages": messages})
    assert input_messages(span).messages == (M(role="system", text="Own prompt."),)


def test_a_tool_result_beside_text_leaves_the_text_in_its_message_after_the_result() -> None:
    parts = [
        {"type": "tool_call_response", "id": "t1", "response": {"sum": 4}},
        {"type": "text", "content": "Now double it."},
    ]
    span = span_of({"gen_ai.input.messages": [{"role": "user", "parts": parts}]})
    assert input_messages(span).messages == (
        M(role="tool", text='{"sum":4}', tool_call_id="t1"),
        M(role="user", text="Now double it."),
    )


def test_reasoning_thinking_and_server_tool_parts() -> None:
    server_call = {"type": "server_tool_call", "name": "web_search", "id": "s1"}
    parts = [
        {"type": "thinking", "content": "Think. "},
        {"type": "reasoning", "content": "More."},
        server_call,
        {"type": "text", "content": "Hello "},
        {"type": "text", "content": "there."},
    ]
    [message] = output_messages(
        span_of({"gen_ai.output.messages": [{"role": "assistant", "parts": parts}]})
    ).messages
    assert message == M(
        role="assistant", text="Hello there.", reasoning="Think. More.", metadata={"parts": [server_call]}
    )
    assert message_steps([message]) == [
        DerivedStep(
            "assistant",
            "Hello there.",
            metadata={
                "parts": [server_call],
                "thinking": "Think. More.",
                "otlp": {"span_id": SPAN, "convention": "genai"},
            },
        )
    ]


def test_media_parts_of_every_kind_and_large_blobs_omitted_from_metadata() -> None:
    big = base64.b64encode(b"\x00" * (70 * 1024)).decode()
    small = base64.b64encode(b"png").decode()
    parts = [
        {"type": "text", "content": "Look:"},
        {"type": "blob", "modality": "image", "mime_type": "image/png", "content": big},
        {"type": "blob", "modality": "audio", "mime_type": "audio/wav", "content": small},
        {"type": "uri", "modality": "video", "uri": "https://x/v.mp4"},
        {"type": "file", "file_id": "file-1", "mime_type": "application/pdf"},
        {"type": "image-url", "url": "https://x/a.png"},
        {"type": "document-url", "url": "https://x/a.pdf"},
        {"type": "binary", "media_type": "image/jpeg", "content": small},
    ]
    [message] = input_messages(
        span_of({"gen_ai.input.messages": [{"role": "user", "parts": parts}]})
    ).messages
    assert message.media == (
        Media("image", None, "image/png"),
        Media("audio", None, "audio/wav"),
        Media("video", "https://x/v.mp4"),
        Media("file", None, "application/pdf"),
        Media("image", "https://x/a.png"),
        Media("file", "https://x/a.pdf"),
        Media("image", None, "image/jpeg"),
    )
    assert message.metadata["parts"][0] == {
        "type": "blob",
        "modality": "image",
        "mime_type": "image/png",
        "content": f"[blob omitted: {70 * 1024} bytes]",
    }
    assert message.metadata["parts"][1:] == parts[2:]
    assert message_steps([message])[0].content == (
        "Look:\n[image: image/png]\n[audio: audio/wav]\n[video: https://x/v.mp4]\n[file: application/pdf]\n"
        "[image: https://x/a.png]\n[file: https://x/a.pdf]\n[image: image/jpeg]"
    )


def test_malformed_messages_and_parts_are_dropped_one_by_one() -> None:
    messages = [
        {"role": "user", "parts": [{"type": "text", "content": "kept"}, {"type": "text"}, "bare text", 7]},
        {"parts": [{"type": "text", "content": "no role"}]},
        "not a message",
        {"role": "assistant", "parts": [{"type": "tool_call", "arguments": {}}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "fine"}]},
    ]
    assert input_messages(span_of({"gen_ai.input.messages": messages})) == Extracted(
        (M(role="user", text="keptbare text"), M(role="assistant", text="fine")), "genai", unparsed_parts=5
    )


def test_an_unparsable_attribute_is_counted_and_the_next_source_is_tried() -> None:
    span = span_of(
        {"gen_ai.input.messages": "[{broken", "ai.prompt.messages": '[{"role":"user","content":"hi"}]'}
    )
    assert input_messages(span) == Extracted(
        (Message("user", "hi", source_span=SPAN, source_convention="vercel"),), "vercel", 1
    )
    assert input_messages(span_of({"gen_ai.input.messages": "[{broken"})) == Extracted((), None, 1)


def test_output_choices_beyond_the_first_become_alternatives() -> None:
    """Edge case 16, GenAI form: one output message per choice."""
    outputs = [
        {"role": "assistant", "parts": [{"type": "text", "content": "4"}], "finish_reason": "stop"},
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "x", "name": "calc", "arguments": "2+2"}],
        },
    ]
    span = span_of(
        {"gen_ai.output.messages": outputs, "gen_ai.response.finish_reasons": ["stop", "tool_calls"]}
    )
    assert output_messages(span).messages == (
        M(
            role="assistant",
            text="4",
            metadata={
                "finish_reason": "stop",
                "alternatives": [
                    {
                        "text": "",
                        "tool_calls": [{"id": "x", "name": "calc", "arguments": "2+2"}],
                        "finish_reason": "tool_calls",
                    }
                ],
            },
        ),
    )


def test_finish_reasons_attribute_fills_a_message_that_names_none() -> None:
    outputs = [{"role": "assistant", "parts": [{"type": "text", "content": "4"}]}]
    span = span_of({"gen_ai.output.messages": outputs, "gen_ai.response.finish_reasons": ["length"]})
    assert output_messages(span).messages[0].metadata == {"finish_reason": "length"}


def test_the_operation_details_event_is_read_when_the_attributes_are_absent() -> None:
    details = {"name": "gen_ai.client.inference.operation.details", "attributes": C2}
    span = span_of({"gen_ai.operation.name": "chat"}, [details])
    assert input_messages(span) == input_messages(span_of(C2))
    assert output_messages(span) == output_messages(span_of(C2))
    own = span_of(
        {"gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "own"}]}]},
        [details],
    )
    assert [m.text for m in input_messages(own).messages] == ["Be brief.", "own"]


def test_legacy_events_give_the_input_in_order_and_choices_by_index() -> None:
    legacy = partial(Message, source_span=SPAN, source_convention="genai_events")
    events = [
        {"name": "gen_ai.system.message", "attributes": {"content": "Be brief."}},
        {"name": "gen_ai.user.message", "attributes": {"content": "2+2?"}},
        {
            "name": "gen_ai.assistant.message",
            "attributes": {
                "tool_calls": json.dumps(
                    [{"id": "t1", "type": "function", "function": {"name": "calc", "arguments": '{"e":1}'}}]
                )
            },
        },
        {"name": "gen_ai.tool.message", "attributes": {"content": "4", "id": "t1"}},
        {"name": "gen_ai.user.message", "attributes": {"content": "Thanks", "role": "customer"}},
        {
            "name": "gen_ai.choice",
            "attributes": {"index": 1, "finish_reason": "stop", "message": {"content": "Four."}},
        },
        {
            "name": "gen_ai.choice",
            "attributes": {
                "index": 0,
                "finish_reason": "stop",
                "message": '{"role":"assistant","content":"4"}',
            },
        },
    ]
    span = span_of({"gen_ai.operation.name": "chat"}, events)
    assert input_messages(span) == Extracted(
        (
            legacy(role="system", text="Be brief."),
            legacy(role="user", text="2+2?"),
            legacy(role="assistant", tool_calls=(ToolCall("t1", "calc", {"e": 1}),)),
            legacy(role="tool", text="4", tool_call_id="t1"),
            legacy(role="user", text="Thanks"),
        ),
        "genai_events",
    )
    assert output_messages(span).messages == (
        legacy(
            role="assistant",
            text="4",
            metadata={"finish_reason": "stop", "alternatives": [{"text": "Four.", "finish_reason": "stop"}]},
        ),
    )


def test_semantic_kernel_prompt_and_completion_events() -> None:
    events = [
        {
            "name": "gen_ai.content.prompt",
            "attributes": {"gen_ai.prompt": '[{"role":"user","content":"Hi"}]'},
        },
        {
            "name": "gen_ai.content.completion",
            "attributes": {"gen_ai.completion": '[{"role":"assistant","content":"Hello"}]'},
        },
    ]
    span = span_of({}, events)
    assert [(m.role, m.text, m.source_convention) for m in input_messages(span).messages] == [
        ("user", "Hi", "genai_events")
    ]
    assert [(m.role, m.text) for m in output_messages(span).messages] == [("assistant", "Hello")]


def test_pydantic_ai_whole_run_with_instructions_first() -> None:
    pyd = partial(Message, source_span=hex_id("A"), source_convention="pydantic_ai")
    history = C2_INPUT + C2_OUTPUT
    [agent] = raw_spans(
        [
            {
                "span": "A",
                "parent": None,
                "name": "invoke_agent calc_agent",
                "attributes": {
                    "pydantic_ai.all_messages": json.dumps(history),
                    "gen_ai.system_instructions": INSTRUCTIONS,
                },
            }
        ]
    )
    assert whole_run_messages(agent) == Extracted(
        (
            pyd(role="system", text="Be brief."),
            pyd(role="user", text="2+2?"),
            pyd(role="assistant", tool_calls=(ToolCall("t1", "calc", {"expr": "2+2"}),)),
            pyd(role="tool", text="4", tool_call_id="t1", name="calc"),
            pyd(role="assistant", text="4", metadata={"finish_reason": "stop"}),
        ),
        "pydantic_ai",
    )
    assert whole_run_messages(span_of(C2)) == Extracted()


def test_openllmetry_after_0_55_and_the_official_openai_instrumentation() -> None:
    """§11: traceloop ≥ 0.55 passes roles through (`developer`); opentelemetry-instrumentation-openai-v2
    sends JSON strings with the instructions apart."""
    traceloop = span_of(
        {
            "llm.request.type": "chat",
            "gen_ai.input.messages": json.dumps(
                [
                    {"role": "developer", "parts": [{"type": "text", "content": "Answer in French."}]},
                    {"role": "user", "parts": [{"type": "text", "content": "Hello"}]},
                ]
            ),
            "gen_ai.output.messages": json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [{"type": "text", "content": "Bonjour"}],
                        "finish_reason": "stop",
                    }
                ]
            ),
        }
    )
    assert input_messages(traceloop).messages == (
        M(role="system", text="Answer in French."),
        M(role="user", text="Hello"),
    )
    official = span_of(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.system_instructions": '[{"type": "text", "content": "Be brief."}]',
            "gen_ai.input.messages": '[{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}]',
        }
    )
    assert [(s.role, s.content) for s in message_steps(input_messages(official).messages)] == [
        ("system", "Be brief."),
        ("user", "Hi"),
    ]
