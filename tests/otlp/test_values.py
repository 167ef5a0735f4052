"""Attribute values as instrumentors send them: JSON or structured, counts as text, flattened lists."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from redline.traces.otlp.values import (
    as_float,
    as_int,
    as_text,
    collapsed,
    display_text,
    first,
    json_value,
    numbered,
    prefixed,
    unflatten,
)


def test_json_text_is_parsed_and_structured_values_pass_through() -> None:
    assert json_value('[{"role": "user"}]') == [{"role": "user"}]
    assert json_value([{"role": "user"}]) == [{"role": "user"}]
    assert json_value('"Done."') == "Done."
    assert json_value("42") == 42
    assert json_value("not json {") == "not json {"
    assert json_value("{broken") == "{broken"
    assert json_value("2+2?") == "2+2?"


def test_counts_are_read_from_numbers_and_text_but_not_from_anything_else() -> None:
    assert [as_int(v) for v in (52, "52", " 7 ", 3.0, 3.5, True, None, "x", [1])] == [
        52, 52, 7, 3, None, None, None, None, None
    ]  # fmt: skip
    assert [as_float(v) for v in (0.25, "0.5", 2, False, "x")] == [0.25, 0.5, 2.0, None, None]
    # What no float holds as a number is no number: a cost of "1e400" was stored as infinity.
    assert [as_float(v) for v in (10**400, "1e400", "-Infinity", "NaN", float("inf"))] == [None] * 5
    assert [as_text(v) for v in ("a", 1, 1.5, True, None, [1])] == ["a", "1", "1.5", "true", None, None]


def test_first_present_name_wins_and_prefixed_strips_the_prefix() -> None:
    attributes = {"b": None, "c": 0, "a.x": 1, "a.y.z": 2, "ab": 3, "a.": 4}
    assert first(attributes, ("a", "b", "c")) == 0
    assert prefixed(attributes, "a.") == {"x": 1, "y.z": 2}


def test_a_flattened_conversation_is_rebuilt_in_numeric_order() -> None:
    attributes = {
        "llm.input_messages.10.message.role": "user",
        "llm.input_messages.2.message.role": "assistant",
        "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_1",
        "llm.input_messages.2.message.tool_calls.1.tool_call.id": "call_2",
        "llm.input_messages.0.message.role": "system",
        "llm.output_messages.0.message.role": "assistant",
        "llm.input_messages.note": "not an item",
    }
    calls = [{"tool_call": {"id": "call_1"}}, {"tool_call": {"id": "call_2"}}]
    assert unflatten(attributes, "llm.input_messages") == [
        {"message": {"role": "system"}},
        {"message": {"role": "assistant", "tool_calls": calls}},
        {"message": {"role": "user"}},
    ]
    assert unflatten({}, "llm.input_messages") == []


@given(st.lists(st.integers(min_value=0, max_value=300), unique=True))
def test_gaps_are_skipped_and_survivors_keep_their_order(positions: list[int]) -> None:
    attributes = {f"gen_ai.prompt.{i}.content": f"m{i}" for i in positions}
    assert unflatten(attributes, "gen_ai.prompt") == [{"content": f"m{i}"} for i in sorted(positions)]


def test_collapsed_makes_whitespace_runs_one_space_and_trims() -> None:
    assert collapsed("  It is\n\train y,\u00a0 14 °C. ") == "It is rain y, 14 °C."
    assert collapsed(" \n ") == ""


def test_display_text_keeps_text_and_writes_other_values_as_compact_json() -> None:
    assert display_text("Done.") == "Done."
    assert display_text({"ok": True, "n": [1, 2]}) == '{"ok":true,"n":[1,2]}'
    assert display_text(4) == "4"
    assert display_text(2**70) == str(2**70)


def test_numbered_items_stay_flat_for_lookup_by_name() -> None:
    attributes = {
        "llm.input_messages.10.message.role": "user",
        "llm.input_messages.2.message.role": "assistant",
        "llm.input_messages.2.message.tool_calls.1.tool_call.id": "call_2",
        "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_1",
        "llm.input_messages.note": "not an item",
        "llm.input_messages.3": "a leaf, not an item",
        "llm.input_messagesX.0.message.role": "another family",
    }
    [assistant, user] = numbered(attributes, "llm.input_messages")
    assert user == {"message.role": "user"}
    assert assistant["message.role"] == "assistant"
    assert numbered(assistant, "message.tool_calls") == [
        {"tool_call.id": "call_1"},
        {"tool_call.id": "call_2"},
    ]
    assert numbered({}, "gen_ai.prompt") == []


@given(st.dictionaries(st.integers(min_value=0, max_value=300), st.text(max_size=5), max_size=20))
def test_numbered_agrees_with_unflatten_on_flat_items(contents: dict[int, str]) -> None:
    attributes = {f"gen_ai.prompt.{i}.content": text for i, text in contents.items()}
    assert numbered(attributes, "gen_ai.prompt") == unflatten(attributes, "gen_ai.prompt")
