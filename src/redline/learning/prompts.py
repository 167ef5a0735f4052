"""The two requests feedback-derived alternatives make of an LLM, and the JSON each must answer with.

1. **Assess** one assistant action (a text response or a tool call): the conversation up to and
   including it, the explicit feedback about it that Redline found (the user message that follows it,
   the unflagged comments on its step), each with its id. The answer is one JSON object (`ASSESS`).
2. **Review** a tool-call alternative independently: only the conversation before the call (not its
   result, not anything after, not the feedback), and the two calls as A (the one made) and B (the
   alternative), without saying which was made. The answer is one JSON object (`REVIEW`).

Every step shown carries its index and id, so an answer's citations can be checked against the trace.
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


def _step_line(step: TraceStep) -> str:
    return f"[step {step.index} · id {step.id}]\n{render_step(step)}"


def _context(steps: Sequence[TraceStep]) -> str:
    return "\n\n".join(_step_line(step) for step in steps) if steps else "(nothing before it)"


def target_kind(step: TraceStep) -> str:
    return "tool_call" if step.tool_name is not None else "response"


def assess_messages(
    steps: Sequence[TraceStep], position: int, feedback: Sequence[Feedback]
) -> list[ChatMessage]:
    """The request for the target `steps[position]`: context before it, the target, the feedback."""
    target = steps[position]
    kind = "tool call" if target_kind(target) == "tool_call" else "text response"
    offered = (
        "\n\n".join(
            f"[{item.kind} · id {item.id} · step {item.step_index}]\n{item.text}" for item in feedback
        )
        if feedback
        else "(none: no user message followed it, and no one commented on it)"
    )
    body = (
        f"CONVERSATION BEFORE THE ACTION\n\n{_context(steps[:position])}\n\n"
        f"TARGET step {target.index} ({kind}), id {target.id}\n\n{render_step(target)}\n\n"
        f"FEEDBACK\n\n{offered}"
    )
    return [{"role": "system", "content": ASSESS}, {"role": "user", "content": body}]


def review_messages(
    steps: Sequence[Any], position: int, original: str, alternative: str
) -> list[ChatMessage]:
    """The independent review of a tool-call alternative: the context before the call, nothing later."""
    body = (
        f"CONVERSATION SO FAR\n\n{_context(steps[:position])}\n\nCALL A\n{original}\n\nCALL B\n{alternative}"
    )
    return [{"role": "system", "content": REVIEW}, {"role": "user", "content": body}]


def call_line(tool: str, args: dict[str, Any]) -> str:
    """A call as a review shows it (and rendering writes it): `tool(args json)`."""
    return f"{tool}({json.dumps(args, ensure_ascii=False)})"
