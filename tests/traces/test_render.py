"""The text a reward model reads, checked against the examples of rm-annotations ("Render each target")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import redline.migrations.schema  # noqa: F401  (every table mapped, so a Step row can be built without a database)
from redline.traces.models import Step
from redline.traces.render import render_prefix, render_step, render_trace
from redline.traces.schemas import StepIn

SPEC_TRACE = [
    StepIn(role="system", content="You are a support agent."),
    StepIn(role="user", content="I want a refund for order 1182"),
    StepIn(role="assistant", content="", tool_name="lookup_order", tool_input={"order_id": "1182"}),
    StepIn(role="tool", content='{"status": "delivered"}', tool_call_id="call_1"),
    StepIn(role="assistant", content="Your order was delivered on May 3."),
]

SPEC_TEXT = """user: I want a refund for order 1182

assistant → lookup_order({"order_id": "1182"})

tool: {"status": "delivered"}

assistant: Your order was delivered on May 3."""


def test_the_spec_trace_renders_as_the_spec_shows() -> None:
    assert render_trace(SPEC_TRACE) == SPEC_TEXT


def test_an_assistant_step_with_text_and_a_tool_call_renders_both_lines_text_first() -> None:
    step = StepIn(
        role="assistant",
        content="Let me check that order.",
        tool_name="lookup_order",
        tool_input={"order_id": "1182"},
    )

    assert render_step(step) == (
        'assistant: Let me check that order.\nassistant → lookup_order({"order_id": "1182"})'
    )


def test_a_tool_call_without_text_is_only_the_arrow_line() -> None:
    step = StepIn(role="assistant", content="", tool_name="lookup_order", tool_input={"order_id": "1182"})

    assert render_step(step) == 'assistant → lookup_order({"order_id": "1182"})'


def test_a_tool_call_without_input_renders_empty_braces() -> None:
    assert render_step(StepIn(role="assistant", tool_name="list_orders")) == "assistant → list_orders({})"


def test_tool_input_keeps_its_key_order_and_non_ascii_text() -> None:
    step = StepIn(
        role="assistant", tool_name="search", tool_input={"q": "crème brûlée", "limit": 3, "a": None}
    )

    assert render_step(step) == 'assistant → search({"q": "crème brûlée", "limit": 3, "a": null})'


def test_a_tool_result_naming_its_tool_reads_as_text_not_as_a_call() -> None:
    step = StepIn(role="tool", content="42", tool_name="calculator", tool_call_id="c1")

    assert render_step(step) == "tool: 42"


def test_system_steps_are_left_out_wherever_they_are() -> None:
    steps = [
        StepIn(role="system", content="secret skill"),
        StepIn(role="user", content="hi"),
        StepIn(role="system", content="another secret"),
        StepIn(role="assistant", content="hello"),
    ]

    assert render_trace(steps) == "user: hi\n\nassistant: hello"


def test_a_trace_of_only_system_steps_renders_as_nothing() -> None:
    assert render_trace([StepIn(role="system", content="skill")]) == ""


def test_a_prefix_ends_with_its_step_and_leaves_out_what_followed() -> None:
    assert render_prefix(SPEC_TRACE, 2) == (
        'user: I want a refund for order 1182\n\nassistant → lookup_order({"order_id": "1182"})'
    )


def test_the_prefix_of_the_last_step_is_the_whole_trace() -> None:
    assert render_prefix(SPEC_TRACE, len(SPEC_TRACE) - 1) == SPEC_TEXT


def test_the_prefix_of_a_system_step_leaves_the_system_step_out() -> None:
    assert render_prefix(SPEC_TRACE, 0) == ""


@pytest.mark.parametrize("index", [-1, 5, 99])
def test_a_prefix_of_a_position_outside_the_trace_is_refused(index: int) -> None:
    with pytest.raises(IndexError, match=f"step {index} is not in a trace of 5 steps"):
        render_prefix(SPEC_TRACE, index)


def test_stored_step_rows_render_like_incoming_steps() -> None:
    rows = [
        Step(
            role=step.role,
            content=step.content,
            tool_name=step.tool_name,
            tool_input=step.tool_input,
            tool_call_id=step.tool_call_id,
        )
        for step in SPEC_TRACE
    ]

    assert render_trace(rows) == SPEC_TEXT
    assert render_prefix(rows, 2) == render_prefix(SPEC_TRACE, 2)


# Generated steps never use "§", so any "§" in the text would have come from a system step.
SYSTEM_MARK = "§"
_words = st.text(alphabet="abc xyz{}\"'\n→:", max_size=12)
_tool_inputs = st.none() | st.dictionaries(
    st.text("kv", min_size=1, max_size=3), _words | st.integers(), max_size=3
)


@st.composite
def _steps(draw: st.DrawFn) -> StepIn:
    role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    if role == "system":
        return StepIn(role="system", content=SYSTEM_MARK + draw(_words))
    fields: dict[str, Any] = {"role": role, "content": draw(_words)}
    if role == "assistant" and draw(st.booleans()):
        fields.update(tool_name=draw(st.text("fgh_", min_size=1, max_size=8)), tool_input=draw(_tool_inputs))
    return StepIn.model_validate(fields)


@settings(database=None)
@given(st.lists(_steps(), min_size=1, max_size=8))
def test_prefixes_grow_to_the_whole_trace_and_never_show_system_steps(steps: list[StepIn]) -> None:
    whole = render_trace(steps)
    prefixes = [render_prefix(steps, index) for index in range(len(steps))]

    assert prefixes[-1] == whole
    assert all(whole.startswith(prefix) for prefix in prefixes)
    assert SYSTEM_MARK not in whole
    shown = [step for step in steps if step.role != "system"]
    assert whole == "\n\n".join(render_step(step) for step in shown)
