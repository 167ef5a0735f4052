"""What TOOL spans say about their call (otlp-ingest §6.9), of every instrumentor."""

from __future__ import annotations

from typing import Any

from redline.traces.otlp.model import RawSpan, ToolSpan
from redline.traces.otlp.steps import tool_call_step, tool_result_step
from redline.traces.otlp.tools import tool_span, traceloop_input
from tests.otlp.builders import raw_spans
from tests.otlp.examples import example_10_2, example_10_3, example_10_4, spec_of


def tool_of(name: str, attributes: dict[str, Any], **spec: Any) -> ToolSpan:
    span: RawSpan = raw_spans(
        [{"span": "T", "parent": None, "name": name, "attributes": attributes, **spec}]
    )[0]
    return tool_span(span)


def test_openinference_tool_span() -> None:
    tool = tool_of(
        "get_weather",
        {"openinference.span.kind": "TOOL", "tool.name": "get_weather", "input.value": '{"city": "Paris"}',
         "output.value": "rainy, 14C"},
    )  # fmt: skip
    assert tool == ToolSpan("get_weather", None, {"city": "Paris"}, "rainy, 14C")


def test_genai_tool_span_parses_json_text_and_takes_the_name_from_the_span() -> None:
    attributes = {
        "gen_ai.tool.call.id": "t1",
        "gen_ai.tool.call.arguments": '{"expr":"2+2"}',
        "gen_ai.tool.call.result": "4",
    }
    assert tool_of("execute_tool calc", attributes) == ToolSpan("calc", "t1", {"expr": "2+2"}, 4)
    named = tool_of("execute_tool calc", attributes | {"gen_ai.tool.name": "calculator"})
    assert named.name == "calculator"


def test_vercel_and_pydantic_ai_v2_tool_spans() -> None:
    vercel = {"ai.toolCall.name": "weather", "ai.toolCall.id": "v1", "ai.toolCall.args": '{"city":"Pune"}',
              "ai.toolCall.result": '{"sky":"sunny","c":31}'}  # fmt: skip
    assert tool_of("ai.toolCall", vercel) == ToolSpan(
        "weather", "v1", {"city": "Pune"}, {"sky": "sunny", "c": 31}
    )
    v2 = {"gen_ai.tool.name": "calc", "tool_arguments": {"expr": "1"}, "tool_response": "1"}
    assert tool_of("running tool", v2) == ToolSpan("calc", None, {"expr": "1"}, 1)


def test_traceloop_call_records_are_reduced_to_their_one_value() -> None:
    attributes = {
        "traceloop.span.kind": "tool",
        "gen_ai.tool.name": "reset_password",
        "traceloop.entity.input": '{"args":[],"kwargs":{"user":"me"}}',
        "traceloop.entity.output": '{"ok":true}',
    }
    assert tool_of("reset_password.tool", attributes) == ToolSpan(
        "reset_password", None, {"user": "me"}, {"ok": True}
    )
    assert traceloop_input({"args": ["reset my password"], "kwargs": {}}) == "reset my password"
    assert traceloop_input({"args": [{"q": 1}], "kwargs": {}}) == {"q": 1}
    both = {"args": ["a"], "kwargs": {"b": 1}}
    assert traceloop_input(both) == both
    assert traceloop_input({"args": ["a", "b"], "kwargs": {}}) == {"args": ["a", "b"], "kwargs": {}}
    assert traceloop_input({"args": [], "kwargs": {}}) == {"args": [], "kwargs": {}}
    assert traceloop_input({"args": [1], "kwargs": {}, "extra": 1}) == {"args": [1], "kwargs": {}, "extra": 1}
    assert traceloop_input("text") == "text"


def test_google_adk_tool_span_and_text_that_is_not_json() -> None:
    attributes = {
        "gcp.vertex.agent.tool_call_args": "{'not': json}",
        "gcp.vertex.agent.tool_response": {"t": 1},
    }
    assert tool_of("execute_tool clock", attributes) == ToolSpan("clock", None, "{'not': json}", {"t": 1})


def test_the_error_is_the_status_message_else_the_exception_message() -> None:
    failed = tool_of("t", {}, status="error", message="boom")
    assert failed.error == "boom"
    event = {"name": "exception", "attributes": {"exception.type": "KeyError", "exception.message": "'city'"}}
    assert tool_of("t", {}, status="error", events=[event]).error == "'city'"
    assert tool_of("t", {}, events=[event]).error == "'city'"
    assert tool_of("t", {}, status="ok", events=[event]).error is None
    assert (
        tool_of(
            "t",
            {},
            status="error",
            events=[{"name": "exception", "attributes": {"exception.type": "KeyError"}}],
        ).error
        == "KeyError"
    )
    assert tool_of("t", {}, status="error").error == "error"
    assert tool_of("t", {}).error is None


def test_tool_spans_of_the_worked_examples_make_the_tool_steps_the_spec_lists() -> None:
    """§10.2 X1, §10.3 T1 (backfilled by name), §10.4 K."""
    spans = raw_spans(
        [
            spec_of(example_10_2(), "X1", parent=None),
            spec_of(example_10_3(), "T1", parent=None),
            spec_of(example_10_4(), "K", parent=None),
        ]
    )
    results = [tool_result_step(tool_span(span), span.span_id) for span in spans]
    assert [(s.role, s.content, s.tool_name, s.tool_call_id) for s in results] == [
        ("tool", "4", "calc", "t1"),
        ("tool", '{"ok":true}', "reset_password", None),
        ("tool", '{"sky":"sunny","c":31}', "weather", "v1"),
    ]
    calls = [tool_call_step(tool_span(span), span.span_id) for span in spans]
    assert [(s.tool_name, s.tool_input, s.tool_call_id) for s in calls] == [
        ("calc", {"expr": "2+2"}, "t1"),
        ("reset_password", {"user": "me"}, None),
        ("weather", {"city": "Pune"}, "v1"),
    ]
