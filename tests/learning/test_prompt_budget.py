"""A request to the LLM fits its budget (REDLINE_LLM_PROMPT_CHARACTERS): long steps are cut in the
middle, and a long conversation shows its opening and its latest steps with a line naming the steps
left out, so a long trace never fails a job for being longer than the model's context window."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from redline.learning.prompts import Feedback, TraceStep, assess_messages, clipped, review_messages

BUDGET = 4_000


def _step(index: int, role: str, content: str, tool: str | None = None) -> TraceStep:
    return TraceStep(uuid.uuid4(), index, role, content, tool, {"order_id": "1182"} if tool else None)


def _trace(steps: int, tool_result_characters: int = 40) -> list[TraceStep]:
    made = [
        _step(0, "system", "You are a support agent."),
        _step(1, "user", "I want a refund for order 1182"),
    ]
    for index in range(2, steps):
        if index % 3 == 2:
            made.append(_step(index, "assistant", "", "lookup_order"))
        elif index % 3 == 0:
            made.append(_step(index, "tool", "r" * tool_result_characters))
        else:
            made.append(_step(index, "assistant", f"Answer {index}."))
    return made


def test_a_short_conversation_is_shown_whole() -> None:
    steps = _trace(6)
    body = assess_messages(steps, 5, [], BUDGET)[1]["content"]
    for step in steps[:5]:
        assert f"[step {step.index} · id {step.id}]" in body
    assert "left out" not in body


def test_a_long_conversation_shows_its_opening_and_its_latest_steps() -> None:
    steps = _trace(200)
    body = assess_messages(steps, 199, [], BUDGET)[1]["content"]
    assert len(body) < BUDGET + 500
    shown = [step.index for step in steps[:199] if f"id {step.id}]" in body]
    # The system step and the first user message, then an unbroken run of the latest steps.
    assert shown[:2] == [0, 1]
    assert shown[2:] == list(range(shown[2], 199))
    assert shown[2] > 100
    assert f"[… steps 2–{shown[2] - 1} left out: the conversation is longer than a request may be …]" in body
    assert "TARGET step 199 (text response)" in body


def test_a_long_step_is_cut_in_the_middle_and_says_how_much_is_left_out() -> None:
    steps = _trace(5, tool_result_characters=50_000)
    feedback = [Feedback(str(uuid.uuid4()), "step_comment", "w" * 10_000, 4)]
    body = assess_messages(steps, 4, feedback, BUDGET)[1]["content"]
    assert len(body) < 2 * BUDGET
    # "tool: " and 50,000 characters, cut to a quarter of the budget.
    assert "[… 49006 characters left out …]" in body
    assert "[… 9000 characters left out …]" in body
    # The step right before the action is shown, however long.
    assert f"id {steps[3].id}]" in body


def test_the_review_fits_the_budget_too() -> None:
    steps = _trace(300, tool_result_characters=3_000)
    body = review_messages(steps, 299, "lookup_order({})", "cancel_order({})", BUDGET)[1]["content"]
    assert len(body) < BUDGET + 1_500
    assert f"id {steps[1].id}]" in body
    assert body.endswith("CALL A\nlookup_order({})\n\nCALL B\ncancel_order({})")


@given(text=st.text(max_size=3_000), limit=st.integers(min_value=2, max_value=2_000))
def test_clipped_keeps_the_start_and_the_end(text: str, limit: int) -> None:
    cut = clipped(text, limit)
    if len(text) <= limit:
        assert cut == text
    else:
        keep = limit // 2
        assert cut.startswith(text[:keep])
        assert cut.endswith(text[-keep:])
        assert f"[… {len(text) - 2 * keep} characters left out …]" in cut
