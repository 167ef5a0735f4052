"""Provider-shaped requests and responses in `input.value`/`output.value` and the like (otlp-ingest §6.8)."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from redline.traces.otlp.messages import input_messages, output_messages
from redline.traces.otlp.model import Extracted, Media, Message, RawSpan, ToolCall
from tests.otlp.builders import hex_id, raw_spans

SPAN = hex_id("P")
M = partial(Message, source_span=SPAN, source_convention="provider")


def span_of(attributes: dict[str, Any]) -> RawSpan:
    return raw_spans([{"span": "P", "parent": None, "name": "ChatCompletion", "attributes": attributes}])[0]


def test_openai_chat_request_and_completion_when_the_message_keys_are_hidden() -> None:
    request = {
        "model": "gpt-4o",
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Hi"},
                    {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ],
    }
    response = {
        "choices": [
            {"index": 1, "message": {"role": "assistant", "content": "Other."}, "finish_reason": "stop"},
            {"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"},
        ]
    }
    span = span_of(
        {
            "openinference.span.kind": "LLM",
            "input.value": json.dumps(request),
            "output.value": json.dumps(response),
        }
    )
    assert input_messages(span) == Extracted(
        (
            M(role="system", text="Be brief."),
            M(
                role="user",
                text="Hi",
                media=(Media("audio", None, "audio/wav"),),
                metadata={
                    "parts": [{"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}]
                },
            ),
            M(role="assistant", tool_calls=(ToolCall("c1", "f", {"a": 1}),)),
            M(role="tool", text="ok", tool_call_id="c1"),
        ),
        "provider",
    )
    assert output_messages(span).messages == (
        M(
            role="assistant",
            text="Done.",
            metadata={"finish_reason": "stop", "alternatives": [{"text": "Other.", "finish_reason": "stop"}]},
        ),
    )


def test_openai_responses_request_and_output_items() -> None:
    request = {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Call it."}]},
            {"type": "function_call", "call_id": "fc1", "name": "weather", "arguments": '{"city":"Oslo"}'},
            {"type": "function_call_output", "call_id": "fc1", "output": '{"c": 3}'},
        ],
    }
    output = {
        "output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Answer."}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "3 °C."}]},
            {"type": "web_search_call", "id": "ws1", "status": "completed"},
        ]
    }
    span = span_of({"input.value": request, "output.value": json.dumps(output)})
    assert input_messages(span).messages == (
        M(role="system", text="Be brief."),
        M(role="user", text="Weather?"),
        M(role="assistant", reasoning="Call it.", tool_calls=(ToolCall("fc1", "weather", {"city": "Oslo"}),)),
        M(role="tool", text='{"c":3}', tool_call_id="fc1"),
    )
    assert output_messages(span).messages == (
        M(
            role="assistant",
            text="3 °C.",
            reasoning="Answer.",
            metadata={"parts": [{"type": "web_search_call", "id": "ws1", "status": "completed"}]},
        ),
    )
    plain = span_of({"input.value": {"model": "gpt-5", "input": "Hi"}})
    assert input_messages(plain).messages == (M(role="user", text="Hi"),)


def test_anthropic_request_and_message() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}
    request = {
        "system": [{"type": "text", "text": "Be kind."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Look"}, image]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Hmm."},
                    {"type": "tool_use", "id": "tu1", "name": "zoom", "input": {"x": 2}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "tu1",
                        "content": [{"type": "text", "text": "zoomed"}],
                    },
                    {"type": "text", "text": "Well?"},
                ],
            },
        ],
    }
    response = {
        "role": "assistant",
        "content": [{"type": "text", "text": "A cat."}],
        "stop_reason": "end_turn",
    }
    span = span_of(
        {"langfuse.observation.input": json.dumps(request), "langfuse.observation.output": response}
    )
    assert input_messages(span).messages == (
        M(role="system", text="Be kind."),
        M(role="user", text="Look", media=(Media("image", None, "image/png"),), metadata={"parts": [image]}),
        M(role="assistant", reasoning="Hmm.", tool_calls=(ToolCall("tu1", "zoom", {"x": 2}),)),
        M(role="tool", text="zoomed", tool_call_id="tu1"),
        M(role="user", text="Well?"),
    )
    assert output_messages(span).messages == (
        M(role="assistant", text="A cat.", metadata={"finish_reason": "end_turn"}),
    )


def test_google_adk_gemini_request_and_response() -> None:
    request = {
        "model": "gemini-2.5-flash",
        "contents": [
            {"role": "user", "parts": [{"text": "Time in Goa?"}]},
            {
                "role": "model",
                "parts": [{"function_call": {"id": "g1", "name": "clock", "args": {"tz": "IST"}}}],
            },
            {
                "role": "user",
                "parts": [{"function_response": {"id": "g1", "name": "clock", "response": {"t": "10:00"}}}],
            },
        ],
        "config": {"system_instruction": "Answer briefly."},
    }
    response = {
        "content": {"role": "model", "parts": [{"text": "Hm", "thought": True}, {"text": "10:00."}]},
        "finish_reason": "STOP",
    }
    span = span_of(
        {
            "gcp.vertex.agent.llm_request": json.dumps(request),
            "gcp.vertex.agent.llm_response": json.dumps(response),
        }
    )
    assert input_messages(span).messages == (
        M(role="system", text="Answer briefly."),
        M(role="user", text="Time in Goa?"),
        M(role="assistant", tool_calls=(ToolCall("g1", "clock", {"tz": "IST"}),)),
        M(role="tool", text='{"t":"10:00"}', tool_call_id="g1", name="clock"),
    )
    assert output_messages(span).messages == (
        M(role="assistant", text="10:00.", reasoning="Hm", metadata={"finish_reason": "STOP"}),
    )


def test_langgraph_role_text_pairs() -> None:
    span = span_of({"input.value": '{"messages":[["user","Weather in Paris?"]]}'})
    assert input_messages(span).messages == (M(role="user", text="Weather in Paris?"),)


def test_inputs_that_are_not_chat_requests_yield_nothing() -> None:
    for value in ("Weather in Paris?", '{"query": "x"}', "[1, 2]", '{"input": "x"}', "{broken"):
        assert input_messages(span_of({"input.value": value, "output.value": value})) == Extracted()
        assert output_messages(span_of({"input.value": value, "output.value": value})) == Extracted()


def test_a_bare_message_list_is_a_request_but_a_list_of_other_things_is_not() -> None:
    messages = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi"}]
    span = span_of({"langfuse.observation.input": json.dumps(messages)})
    assert input_messages(span).messages == (M(role="system", text="Be kind."), M(role="user", text="Hi"))
    assert input_messages(span_of({"input.value": [{"role": "user"}, {"text": "x"}]})) == Extracted()


def test_the_first_request_attribute_that_reads_wins() -> None:
    span = span_of(
        {"input.value": "plain text", "mlflow.spanInputs": {"messages": [{"role": "user", "content": "Hi"}]}}
    )
    assert input_messages(span).messages == (M(role="user", text="Hi"),)


def test_older_langchain_messages_keep_tool_calls_in_additional_kwargs() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    request = {
        "messages": [
            [
                {"type": "human", "content": "go"},
                {"type": "ai", "content": "", "additional_kwargs": {"tool_calls": [call]}},
                {"type": "tool", "content": "done", "tool_call_id": "c1"},
            ]
        ]
    }
    assert input_messages(span_of({"input.value": json.dumps(request)})).messages == (
        M(role="user", text="go"),
        M(role="assistant", tool_calls=(ToolCall("c1", "f", {"a": 1}),), metadata={}),
        M(role="tool", text="done", tool_call_id="c1"),
    )
