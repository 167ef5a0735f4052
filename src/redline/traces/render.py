"""A trace as the text a reward model reads (rm-annotations, "Render each target to text").

The rendering is part of what a reward model learns from: the same trace must always give the same text,
so training pairs and later scoring agree. System steps are never rendered: the skill an optimiser writes
lives in the system message, and a reward model that read it could be satisfied by the skill's wording
instead of by what the agent did.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

STEP_SEPARATOR = "\n\n"


class RenderableStep(Protocol):
    """What rendering needs of a step, so stored rows and incoming `StepIn`s render the same way."""

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...

    @property
    def tool_name(self) -> str | None: ...

    @property
    def tool_input(self) -> dict[str, Any] | None: ...


def _is_tool_call(step: RenderableStep) -> bool:
    # Only an assistant decides to call a tool; a tool step naming its tool is a result and reads as text.
    return step.role == "assistant" and step.tool_name is not None


def _tool_call_line(step: RenderableStep) -> str:
    # Default separators and key order, so the text matches the spec's `lookup_order({"order_id": "1182"})`.
    arguments = json.dumps(step.tool_input if step.tool_input is not None else {}, ensure_ascii=False)
    return f"assistant → {step.tool_name}({arguments})"


def render_step(step: RenderableStep) -> str:
    """One step; a tool call with text keeps both, text first, because the text is part of the decision."""
    if not _is_tool_call(step):
        return f"{step.role}: {step.content}"
    call = _tool_call_line(step)
    return f"assistant: {step.content}\n{call}" if step.content else call


def render_trace(steps: Iterable[RenderableStep]) -> str:
    """A whole trace, as a trace-level rating is trained on; system steps are left out (see module doc)."""
    return STEP_SEPARATOR.join(render_step(step) for step in steps if step.role != "system")


def render_prefix(steps: Sequence[RenderableStep], index: int) -> str:
    """A step in the context the agent had when it took it: everything before it, nothing after.

    `index` is the step's position in `steps`. Later steps are cut off so that a correction that follows
    a response can't leak into the text the response is judged by.
    """
    if not 0 <= index < len(steps):
        raise IndexError(f"step {index} is not in a trace of {len(steps)} steps")
    return render_trace(steps[: index + 1])


@dataclass(frozen=True)
class RenderedStep:
    """A step read back from rendered text: what a reward model sees of it, and all a `RenderableStep` is."""

    role: str
    content: str
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None


# A step starts after a separator at the start of a rendered step: a role's prefix or a bare tool call.
_STEP_START = re.compile(r"\n\n(?=(?:user|assistant|tool): |assistant → )")
_TOOL_CALL = re.compile(r"assistant → ([^\n(]*)\((.*)\)")


def split_rendered(text: str) -> list[RenderedStep]:
    """The inverse of `render_trace`: training pairs are stored as text, and a model scores steps.

    Rendering is not injective, so this reads the natural way: a step starts at every blank line
    followed by `user: `, `assistant: `, `tool: ` or `assistant → `, and an assistant step whose last
    line is `assistant → name({…})` with a JSON object in the parentheses is a tool call (the call line
    is always one line: `json.dumps` escapes newlines). Content that itself holds such a blank line
    splits there, and so does a call whose text ends in a newline (the text and the call read as two
    steps). A tool call without arguments comes back with `{}`, a tool result without its tool's
    name, as neither is in the text.
    """
    if not text:
        return []
    return [_read_step(block) for block in _STEP_START.split(text)]


def _read_step(block: str) -> RenderedStep:
    text, _, last_line = block.rpartition("\n")
    call = _tool_call(last_line)
    if call is not None and (text == "" or text.startswith("assistant: ")):
        name, arguments = call
        return RenderedStep("assistant", text.removeprefix("assistant: "), name, arguments)
    role, separator, content = block.partition(": ")
    if not separator or "\n" in role:
        raise ValueError(f"not a rendered step: {block[:80]!r}")
    return RenderedStep(role, content)


def _tool_call(line: str) -> tuple[str, dict[str, Any]] | None:
    match = _TOOL_CALL.fullmatch(line)
    if match is None:
        return None
    try:
        arguments = json.loads(match.group(2))
    except ValueError:
        return None
    return (match.group(1), arguments) if isinstance(arguments, dict) else None
