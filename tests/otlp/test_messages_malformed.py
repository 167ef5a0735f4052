"""Whatever an exporter sends, reading messages never raises: bad items are dropped and counted."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from redline.traces.otlp.messages import (
    has_message_attributes,
    input_messages,
    output_messages,
    whole_run_messages,
)
from redline.traces.otlp.model import RawSpan, SpanEvent
from redline.traces.otlp.steps import message_steps
from redline.traces.otlp.tools import tool_span

KEYS = [
    "role",
    "content",
    "parts",
    "type",
    "text",
    "name",
    "id",
    "arguments",
    "tool_calls",
    "function",
    "toolCallId",
    "toolName",
    "input",
    "output",
    "value",
    "response",
    "result",
    "image_url",
    "url",
    "source",
    "summary",
    "messages",
    "choices",
    "message",
    "system",
    "contents",
    "candidates",
    "function_call",
    "tool_call_id",
    "finish_reason",
    "modality",
    "mime_type",
    "args",
    "kwargs",
]
WORDS = [
    "user",
    "assistant",
    "tool",
    "system",
    "text",
    "tool_call",
    "tool_call_response",
    "tool-call",
    "tool-result",
    "tool_use",
    "tool_result",
    "image",
    "image_url",
    "reasoning",
    "thinking",
    "blob",
    "uri",
    "file",
    "function_call",
    "function_call_output",
    "message",
    "json",
    "content",
    "data:x",
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.sampled_from(WORDS) | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.sampled_from(KEYS), children, max_size=5)
    ),
    max_leaves=15,
)
ATTRIBUTES = [
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "pydantic_ai.all_messages",
    "ai.prompt.messages",
    "ai.response.toolCalls",
    "ai.response.text",
    "ai.response.object",
    "input.value",
    "output.value",
    "gen_ai.prompt",
    "gen_ai.completion",
    "gcp.vertex.agent.llm_request",
    "gcp.vertex.agent.llm_response",
    "gen_ai.response.finish_reasons",
    "llm.input_messages.0.message.role",
    "llm.input_messages.0.message.content",
    "llm.input_messages.1.message.contents.0.message_content.type",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
    "gen_ai.prompt.0.content",
    "gen_ai.completion.0.tool_calls.0.name",
    "llm.invocation_parameters",
    "traceloop.entity.input",
    "tool.parameters",
]
EVENTS = [
    "gen_ai.user.message",
    "gen_ai.choice",
    "gen_ai.client.inference.operation.details",
    "gen_ai.content.prompt",
    "exception",
]


@st.composite
def spans(draw: st.DrawFn) -> RawSpan:
    attributes: dict[str, Any] = {}
    for name in draw(st.lists(st.sampled_from(ATTRIBUTES), max_size=6, unique=True)):
        value = draw(json_values)
        attributes[name] = orjson.dumps(value).decode() if draw(st.booleans()) else value
    events = tuple(
        SpanEvent(
            name, 0, draw(st.dictionaries(st.sampled_from(KEYS + ATTRIBUTES[:4]), json_values, max_size=4))
        )
        for name in draw(st.lists(st.sampled_from(EVENTS), max_size=3))
    )
    return RawSpan(
        "t" * 32,
        "s" * 16,
        None,
        "span",
        0,
        1,
        attributes,
        status_code=draw(st.sampled_from([0, 1, 2])),
        events=events,
    )


@settings(deadline=None)
@given(spans())
def test_reading_any_span_never_raises(span: RawSpan) -> None:
    for extracted in (input_messages(span), output_messages(span), whole_run_messages(span)):
        assert extracted.unparsed_parts >= 0
        assert all(message.source_span == span.span_id for message in extracted.messages)
        for step in message_steps(extracted.messages):
            assert step.tool_input is None or isinstance(step.tool_input, dict)
            assert isinstance(step.content, str)
    has_message_attributes(span)
    tool_span(span)
