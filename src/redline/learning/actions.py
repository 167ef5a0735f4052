"""A trace as the model sees it: its assistant actions, each with the context it was taken in.

An action is an assistant text step or a tool call (an assistant step naming a tool); user steps and
tool results are context only, and system steps are not seen at all (traces/render.py says why). The
context an additive model may use is what came before the action, summarised as much as its features
need: the role of the step just before, what the user said last, the tools already called, and
whether this exact call was already made. Nothing after the action is used, so a prefix scores its
actions as the whole trace does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from redline.traces.render import RenderableStep, render_step


@dataclass(frozen=True)
class Context:
    """What the features of an action may know of the steps before it."""

    previous_role: str  # "start" for the first step seen
    last_user: str  # what the user said last ("" before they said anything)
    called: frozenset[str]  # names of the tools called before
    repeated: bool  # the same call (name and arguments) was made before


@dataclass(frozen=True)
class Action:
    index: int  # the step's index in the steps given (system steps included)
    step: RenderableStep
    rendered: str  # `render_step(step)`: the action's identity together with its context
    context: Context

    @property
    def is_call(self) -> bool:
        return self.step.tool_name is not None

    def key(self) -> tuple[str, Context]:
        """Two actions with the same key have the same features, so training featurises each key once."""
        return (self.rendered, self.context)


def actions(steps: Sequence[RenderableStep]) -> Iterator[Action]:
    """The assistant actions of `steps`, in order, each with its context."""
    previous_role, last_user = "start", ""
    called: set[str] = set()
    calls_made: set[str] = set()
    for index, step in enumerate(steps):
        if step.role == "system":
            continue
        rendered = render_step(step)
        if step.role == "assistant":
            # A call's own line is its last: the text before it doesn't make it a different call.
            call = rendered.rpartition("\n")[2] if step.tool_name is not None else None
            context = Context(previous_role, last_user, frozenset(called), call in calls_made)
            yield Action(index, step, rendered, context)
            if step.tool_name is not None and call is not None:
                called.add(step.tool_name)
                calls_made.add(call)
        if step.role == "user":
            last_user = step.content
        previous_role = step.role
