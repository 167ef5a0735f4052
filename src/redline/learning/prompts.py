"""The two requests feedback-derived alternatives make of an LLM, and the JSON each must answer with.

1. **Assess** one assistant action (a text response or a tool call): the conversation up to and
   including it, the explicit feedback about it that Redline found (the user message that follows it,
   the unflagged comments on its step), each with its id. The answer is one JSON object (`ASSESS`).
2. **Review** a tool-call alternative independently: only the conversation before the call (not its
   result, not anything after, not the feedback), and the two calls as A (the one made) and B (the
   alternative), without saying which was made. The answer is one JSON object (`REVIEW`).

Every step shown carries its index and id, so an answer's citations can be checked against the trace.

**A request fits the endpoint.** Agent traces can be far longer than a model's context window (a
tool that returns a whole document, hundreds of steps), and a request that doesn't fit is refused for
good, failing the job. So a request shows at most `budget` characters of conversation
(REDLINE_LLM_PROMPT_CHARACTERS): each step, feedback item and the target are cut in the middle when
long, and when the steps still don't fit, the opening of the conversation (its system steps and the
first user message: what the task is) and as many of the latest steps as fit are shown, with a line
saying which steps were left out. What is checked in code (quotes, ids) is checked against the whole
stored text, so cutting a request never lets a wrong citation through.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redline.learning.chat import ChatMessage
from redline.traces.render import render_step

VERDICTS = ("original_worse", "original_better", "no_preference", "ambiguous")
PREFERENCES = ("original_worse", "original_better")
BASES = ("user_feedback", "ai_judgment")

ASSESS = """You assess one action of an AI agent (a text response or a tool call) against explicit \
feedback about it, and write an alternative action.

Answer with exactly one JSON object and nothing else:
{"verdict": "original_worse" | "original_better" | "no_preference" | "ambiguous",
 "basis": "user_feedback" | "ai_judgment" | null,
 "source_id": "<id of the feedback (or, for ai_judgment, of the action itself) you rely on>" | null,
 "evidence_quote": "<words copied verbatim from that source>" | null,
 "rationale": "<one or two sentences>",
 "alternative": <for a text response: the better (or, with original_better, a worse) reply as a string;
                 for a tool call: {"tool": "<tool name>", "args": {<arguments>}}> | null}

Rules:
- Feedback is only what is listed under FEEDBACK. Silence, a new question or a tool error is not a \
preference: answer no_preference. Feedback that could be read either way: answer ambiguous.
- basis user_feedback: you interpret a listed feedback item; cite its id. basis ai_judgment: your own \
judgment of the action; cite the action's own id or a listed feedback item's.
- evidence_quote is copied exactly from the cited source.
- For a tool call the alternative changes the tool or its arguments.
- With no_preference or ambiguous, basis, source_id, evidence_quote and alternative may be null."""

REVIEW = """You compare two tool calls an AI agent could make next, given only the conversation so far. \
Judge which call is better at this point; do not assume either is the one the agent made.

Answer with exactly one JSON object and nothing else:
{"better": "A" | "B" | "neither", "rationale": "<one or two sentences>"}"""


@dataclass(frozen=True)
class TraceStep:
    """A stored step as the assessment reads it (and rendering does: role, content, tool call)."""

    id: uuid.UUID
    index: int
    role: str
    content: str
    tool_name: str | None
    tool_input: dict[str, Any] | None


@dataclass(frozen=True)
class Feedback:
    """One piece of explicit feedback offered about a target: the next user message, or a step comment."""

    id: str
    kind: str  # "user_message" | "step_comment"
    text: str
    step_index: int  # the user message's step, or the commented step


# Of a request's budget: the most one step, feedback item or target may take before it is cut.
PIECE_SHARE = 0.25


def clipped(text: str, limit: int) -> str:
    """`text`, or its start and end with the middle left out (and said so) when longer than `limit`."""
    if len(text) <= limit:
        return text
    keep = max(limit // 2, 1)
    return f"{text[:keep]}\n[… {len(text) - 2 * keep} characters left out …]\n{text[-keep:]}"


def _step_line(step: TraceStep, limit: int) -> str:
    return f"[step {step.index} · id {step.id}]\n{clipped(render_step(step), limit)}"


def _opening(steps: Sequence[TraceStep]) -> int:
    """How many steps open the conversation: the system steps and the first user message."""
    for number, step in enumerate(steps):
        if step.role == "user":
            return number + 1
        if step.role != "system":
            return number
    return len(steps)


def _context(steps: Sequence[TraceStep], budget: int, piece: int) -> str:
    """The steps as the request shows them, each cut to `piece`, within `budget` characters in all
    (module doc)."""
    if not steps:
        return "(nothing before it)"
    lines = [_step_line(step, piece) for step in steps]
    if sum(len(line) + 2 for line in lines) <= budget:
        return "\n\n".join(lines)
    head = _opening(steps)
    room = budget - sum(len(line) + 2 for line in lines[:head])
    tail = len(lines)
    while tail > head and room - len(lines[tail - 1]) - 2 >= 0:
        tail -= 1
        room -= len(lines[tail]) + 2
    if tail == len(lines) > head:
        tail -= 1  # the step just before the action is always shown, whatever its length
    if tail == head:
        return "\n\n".join(lines)
    left_out = (
        f"[… steps {steps[head].index}–{steps[tail - 1].index} left out: the conversation is longer than "
        "a request may be …]"
    )
    return "\n\n".join([*lines[:head], left_out, *lines[tail:]])


def target_kind(step: TraceStep) -> str:
    return "tool_call" if step.tool_name is not None else "response"


def assess_messages(
    steps: Sequence[TraceStep], position: int, feedback: Sequence[Feedback], budget: int
) -> list[ChatMessage]:
    """The request for the target `steps[position]`: context before it, the target, the feedback, in
    about `budget` characters (module doc)."""
    target = steps[position]
    kind = "tool call" if target_kind(target) == "tool_call" else "text response"
    piece = int(budget * PIECE_SHARE)
    offered = (
        "\n\n".join(
            f"[{item.kind} · id {item.id} · step {item.step_index}]\n{clipped(item.text, piece)}"
            for item in feedback
        )
        if feedback
        else "(none: no user message followed it, and no one commented on it)"
    )
    shown = f"TARGET step {target.index} ({kind}), id {target.id}\n\n{clipped(render_step(target), piece)}"
    room = max(budget - len(shown) - len(offered), piece)
    body = (
        f"CONVERSATION BEFORE THE ACTION\n\n{_context(steps[:position], room, piece)}\n\n"
        f"{shown}\n\nFEEDBACK\n\n{offered}"
    )
    return [{"role": "system", "content": ASSESS}, {"role": "user", "content": body}]


def review_messages(
    steps: Sequence[Any], position: int, original: str, alternative: str, budget: int
) -> list[ChatMessage]:
    """The independent review of a tool-call alternative: the context before the call, nothing later."""
    piece = int(budget * PIECE_SHARE)
    calls = f"CALL A\n{clipped(original, piece)}\n\nCALL B\n{clipped(alternative, piece)}"
    room = max(budget - len(calls), piece)
    body = f"CONVERSATION SO FAR\n\n{_context(steps[:position], room, piece)}\n\n{calls}"
    return [{"role": "system", "content": REVIEW}, {"role": "user", "content": body}]


def call_line(tool: str, args: dict[str, Any]) -> str:
    """A call as a review shows it (and rendering writes it): `tool(args json)`."""
    return f"{tool}({json.dumps(args, ensure_ascii=False)})"
