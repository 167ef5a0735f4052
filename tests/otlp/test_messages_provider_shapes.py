"""Provider-shaped requests and responses in `input.value` / `output.value` (otlp-ingest §6.8) in the
shapes real clients write: OpenAI Responses and chat completions, Gemini, Google ADK, Anthropic; a
malformed item is dropped and counted, the rest read."""

from __future__ import annotations

import json
from typing import Any

from redline.traces.otlp.messages import input_messages, output_messages
from redline.traces.otlp.model import Extracted, RawSpan
from tests.otlp.builders import raw_spans


def _span(attributes: dict[str, Any]) -> RawSpan:
    specs = [
        {
            "span": "L",
            "parent": None,
            "name": "llm",
            "attributes": {"openinference.span.kind": "LLM", **attributes},
        }
    ]
    return raw_spans(specs)[0]


def _view(extracted: Extracted) -> tuple[list[tuple[Any, ...]], str | None, int]:
    messages = [
        (m.role, m.text, m.reasoning, [(t.id, t.name, t.arguments) for t in m.tool_calls], dict(m.metadata))
        for m in extracted.messages
    ]
    return messages, extracted.convention, extracted.unparsed_parts


def test_a_responses_output_keeps_reasoning_calls_and_built_in_tools_and_counts_what_it_drops() -> None:
    output = [
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
        {"type": "function_call", "call_id": "c1", "arguments": '{"q": 1}'},
        {"type": "function_call", "call_id": "c2", "name": "look", "arguments": '{"q": 2}'},
        {"type": "web_search_call", "id": "w1"},
        7,
    ]
    span = _span({"output.value": json.dumps({"output": output})})
    parts = {"parts": [{"type": "web_search_call", "id": "w1"}]}
    assert _view(output_messages(span)) == (
        [("assistant", "", "think", [("c2", "look", {"q": 2})], parts)],
        "provider",
        2,
    )


def test_chat_choices_keep_choice_zero_and_the_others_as_alternatives() -> None:
    choices = [
        {"index": 1, "text": "second"},
        "junk",
        {"index": 0, "message": {"role": "assistant", "content": "first"}, "finish_reason": "stop"},
        {"index": 2},
    ]
    span = _span({"output.value": json.dumps({"choices": choices})})
    metadata = {"finish_reason": "stop", "alternatives": [{"text": "second"}]}
    assert _view(output_messages(span)) == ([("assistant", "first", "", [], metadata)], "provider", 2)


def test_a_gemini_request_and_response_read_as_a_conversation() -> None:
    request = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"function_call": {"name": "f", "args": {"a": 1}}}]},
            {"role": "user", "parts": [{"function_response": {"name": "f", "response": {"r": 2}}}]},
        ],
        "config": {"system_instruction": {"parts": [{"text": "sys"}]}},
    }
    response = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "done"}]}, "finish_reason": "STOP"},
            5,
        ]
    }
    span = _span({"input.value": json.dumps(request), "output.value": json.dumps(response)})
    assert _view(input_messages(span)) == (
        [
            ("system", "sys", "", [], {}),
            ("user", "hi", "", [], {}),
            ("assistant", "", "", [(None, "f", {"a": 1})], {}),
            ("tool", '{"r":2}', "", [], {}),
        ],
        "provider",
        0,
    )
    assert _view(output_messages(span)) == (
        [("assistant", "done", "", [], {"finish_reason": "STOP"})],
        "provider",
        1,
    )


def test_google_adk_and_anthropic_responses_are_read() -> None:
    adk = _span(
        {
            "gcp.vertex.agent.llm_response": json.dumps(
                {"content": {"role": "model", "parts": [{"text": "adk"}]}}
            )
        }
    )
    assert _view(output_messages(adk)) == ([("assistant", "adk", "", [], {})], "provider", 0)
    message = {"role": "assistant", "content": [{"type": "text", "text": "hello"}], "stop_reason": "end_turn"}
    anthropic = _span({"output.value": json.dumps(message)})
    assert _view(output_messages(anthropic)) == (
        [("assistant", "hello", "", [], {"finish_reason": "end_turn"})],
        "provider",
        0,
    )
