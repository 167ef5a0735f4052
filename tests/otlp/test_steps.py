"""Canonical messages and tool spans as steps (otlp-ingest §7)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from redline.traces.otlp.model import DerivedStep, Media, Message, ToolCall, ToolSpan
from redline.traces.otlp.steps import message_steps, tool_call_step, tool_input, tool_result_step

OTLP = {"span_id": "s1", "convention": "genai"}


def msg(role: Any, **fields: Any) -> Message:
    return Message(role, source_span="s1", source_convention="genai", **fields)


def test_text_and_two_tool_calls_make_three_assistant_steps() -> None:
    """Edge case 15."""
    message = msg(
        "assistant",
        text="Let me check both.",
        reasoning="Two cities.",
        tool_calls=(ToolCall("a", "weather", {"city": "Oslo"}), ToolCall("b", "weather", '{"city": "Rome"')),
        metadata={"finish_reason": "tool_calls"},
    )
    assert message_steps([message]) == [
        DerivedStep(
            "assistant",
            "Let me check both.",
            metadata={"finish_reason": "tool_calls", "otlp": OTLP, "thinking": "Two cities."},
        ),
        DerivedStep(
            "assistant",
            "",
            tool_name="weather",
            tool_input={"city": "Oslo"},
            tool_call_id="a",
            metadata={"otlp": OTLP},
        ),
        DerivedStep(
            "assistant",
            "",
            tool_name="weather",
            tool_input={"_raw": '{"city": "Rome"'},
            tool_call_id="b",
            metadata={"otlp": OTLP},
        ),
    ]


def test_assistant_messages_without_text() -> None:
    only_calls = msg("assistant", reasoning="Hm.", tool_calls=(ToolCall("a", "f", None),))
    assert message_steps([only_calls]) == [
        DerivedStep(
            "assistant",
            "",
            tool_name="f",
            tool_input={},
            tool_call_id="a",
            metadata={"otlp": OTLP, "thinking": "Hm."},
        )
    ]
    only_reasoning = msg("assistant", reasoning="Hm.")
    assert message_steps([only_reasoning]) == [
        DerivedStep("assistant", "", metadata={"otlp": OTLP, "thinking": "Hm."})
    ]
    assert message_steps([msg("assistant")]) == []
    assert message_steps([msg("assistant", metadata={"parts": [{"type": "x"}]})]) == []


def test_tool_steps_name_the_call_they_answer() -> None:
    messages = [
        msg("assistant", tool_calls=(ToolCall("a", "weather", {}), ToolCall("b", "clock", {}))),
        msg("tool", text="sunny", tool_call_id="a"),
        msg("tool", text="10:00", tool_call_id="b", name="own_name"),
        msg("tool", text="?", tool_call_id="unknown"),
        msg("tool", text="no id"),
    ]
    assert [(s.content, s.tool_name, s.tool_call_id) for s in message_steps(messages)[2:]] == [
        ("sunny", "weather", "a"),
        ("10:00", "own_name", "b"),
        ("?", None, "unknown"),
        ("no id", None, None),
    ]
    assert message_steps([messages[1]])[0].tool_name is None  # only earlier messages count


def test_user_and_system_steps_list_their_media_and_keep_message_metadata() -> None:
    media = (Media("image", "https://x/a.png"), Media("audio", None, "audio/wav"), Media("file"))
    parts = [{"type": "uri"}]
    message = msg("user", text="See", media=media, metadata={"parts": parts, "original_role": "Critic"})
    assert message_steps([message, msg("system", media=media[:1])]) == [
        DerivedStep(
            "user",
            "See\n[image: https://x/a.png]\n[audio: audio/wav]\n[file: unknown]",
            metadata={"parts": parts, "original_role": "Critic", "otlp": OTLP},
        ),
        DerivedStep("system", "[image: https://x/a.png]", metadata={"otlp": OTLP}),
    ]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3),
    max_leaves=8,
)


@given(json_values)
def test_tool_inputs_are_always_objects(arguments: Any) -> None:
    result = tool_input(arguments)
    if isinstance(arguments, dict):
        assert result is arguments
    elif arguments is None:
        assert result == {}
    elif isinstance(arguments, str):
        assert result == {"_raw": arguments}
    else:
        assert result == {"_value": arguments}


def test_steps_from_a_tool_span() -> None:
    tool = ToolSpan("weather", "v1", {"city": "Pune"}, {"sky": "sunny", "c": 31})
    otlp = {"otlp": {"span_id": "k", "convention": "tool_span"}}
    assert tool_call_step(tool, "k") == DerivedStep(
        "assistant", "", tool_name="weather", tool_input={"city": "Pune"}, tool_call_id="v1", metadata=otlp
    )
    assert tool_result_step(tool, "k") == DerivedStep(
        "tool", '{"sky":"sunny","c":31}', tool_name="weather", tool_call_id="v1", metadata=otlp
    )
    text = ToolSpan("reset_password", None, "me", "done")
    assert tool_call_step(text, "k").tool_input == {"_raw": "me"}
    assert tool_result_step(text, "k").content == "done"
    assert tool_call_step(ToolSpan("t", None, [1, 2]), "k").tool_input == {"_value": [1, 2]}
    assert tool_result_step(ToolSpan("t", None), "k").content == ""


def test_a_failed_tool_span_shows_its_error() -> None:
    failed = ToolSpan("weather", "v1", {"city": "Pune"}, None, error="city not found")
    assert tool_result_step(failed, "k") == DerivedStep(
        "tool",
        "city not found",
        tool_name="weather",
        tool_call_id="v1",
        metadata={"otlp": {"span_id": "k", "convention": "tool_span"}, "error": True},
    )
