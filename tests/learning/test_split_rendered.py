"""`split_rendered` reads back what `render_trace` wrote: pairs are stored as text, models score steps."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from redline.traces.render import RenderedStep, render_trace, split_rendered
from redline.traces.schemas import StepIn

# Fragments that make content hard to read back: blank lines, role words, colons, arrows, parentheses.
_FRAGMENTS = st.sampled_from(
    ["\n", "\n\n", "user", "assistant", "tool", ": ", " → ", "({})", "x", " ", "é", "{"]
)
_CONTENT = st.lists(_FRAGMENTS, max_size=12).map("".join)
_NAME = st.text(alphabet="az_.-0 →:", min_size=1, max_size=10)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_STEP_START = re.compile(r"\n\n(?:user: |assistant: |tool: |assistant → )")


@st.composite
def _steps(draw: st.DrawFn) -> list[StepIn]:
    steps = []
    for _ in range(draw(st.integers(0, 6))):
        role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
        content = draw(_CONTENT)
        # Content holding a step's start can't be told from one (the docstring says so): not drawn.
        assume(not _STEP_START.search(content))
        if role == "assistant" and draw(st.booleans()):
            # Text ending in a newline makes a blank line before the call line: two steps when read.
            assume(not content.endswith("\n"))
            arguments = draw(st.none() | st.dictionaries(st.text(max_size=6), _JSON, max_size=3))
            steps.append(StepIn(role=role, content=content, tool_name=draw(_NAME), tool_input=arguments))
        else:
            if role == "assistant":
                assume(not content.rpartition("\n")[2].startswith("assistant → "))
            tool_name = draw(_NAME) if role == "tool" else None
            steps.append(StepIn(role=role, content=content, tool_name=tool_name))
    return steps


def _as_read_back(step: StepIn) -> RenderedStep:
    """What the text keeps of a step: a tool result's tool name is not in it, a call's `None` is `{}`."""
    if step.role == "assistant" and step.tool_name is not None:
        return RenderedStep("assistant", step.content, step.tool_name, step.tool_input or {})
    return RenderedStep(step.role, step.content)


@given(_steps())
def test_split_rendered_reads_back_every_rendered_trace(steps: list[StepIn]) -> None:
    text = render_trace(steps)

    read = split_rendered(text)

    assert read == [_as_read_back(step) for step in steps if step.role != "system"]
    assert render_trace(read) == text


def test_a_call_with_text_keeps_both_and_a_bare_call_has_no_text() -> None:
    text = (
        "user: refund 1182, please\n\n"
        'assistant: Let me look.\nassistant → lookup_order({"order_id": "1182"})\n\n'
        'tool: {"status": "delivered"}\n\n'
        'assistant → issue_refund({"order_id": "1182", "items": [1, 2]})'
    )

    assert split_rendered(text) == [
        RenderedStep("user", "refund 1182, please"),
        RenderedStep("assistant", "Let me look.", "lookup_order", {"order_id": "1182"}),
        RenderedStep("tool", '{"status": "delivered"}'),
        RenderedStep("assistant", "", "issue_refund", {"order_id": "1182", "items": [1, 2]}),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("user: ", [RenderedStep("user", "")]),
        # Not a JSON object in the parentheses, so not a call, and no role either.
        ("assistant → f(1)", None),
        # Parentheses that hold no JSON object make no call.
        ("assistant: a\nassistant → f({bad)", [RenderedStep("assistant", "a\nassistant → f({bad)")]),
        ("assistant: a\nassistant → f([1])", [RenderedStep("assistant", "a\nassistant → f([1])")]),
        # A call line after text that is not the assistant's stays in the text.
        ("user: a\nassistant → t({})", [RenderedStep("user", "a\nassistant → t({})")]),
        ("user: a\n\nassistant → t({})", [RenderedStep("user", "a"), RenderedStep("assistant", "", "t", {})]),
    ],
)
def test_edge_cases(text: str, expected: list[Any] | None) -> None:
    if expected is None:
        with pytest.raises(ValueError, match="not a rendered step"):
            split_rendered(text)
    else:
        assert split_rendered(text) == expected


def test_text_that_is_no_rendered_step_is_refused() -> None:
    with pytest.raises(ValueError, match="not a rendered step"):
        split_rendered("hello there")
