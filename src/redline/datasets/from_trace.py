"""A trace as a datapoint: what "Add to dataset" on the review screen makes of it.

- `inputs`: the trace's input when it is an object; any other input is kept as `{"input": <it>}`.
- `messages`: the conversation the answer came from: every step before the last assistant step that
  says something, as chat messages (`role`, `content`, with `tool_calls` and `tool_call_id` where a step
  calls or answers a tool). An experiment replays these and compares its answer with `expected_output`.
- `expected_output`: what the trace answered: the output when it is text; else that last assistant
  step's text; else the output as JSON text; none when the trace has no output at all.

Annotations are not copied (annotation-queues.txt): the values stay on the trace, which the datapoint
links to. An erased trace has nothing left to copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redline import jsonio
from redline.traces.models import Step, Trace


@dataclass(frozen=True)
class DatapointContent:
    inputs: dict[str, Any] | None
    messages: list[dict[str, Any]] | None
    expected_output: str | None


def _message(step: Step) -> dict[str, Any]:
    """A tool step answers a call (its `tool_name`, when the tracer kept one, names the tool it answers):
    it carries the call's id, null when unknown, as chat messages require. Another step with a tool
    name makes that call."""
    message: dict[str, Any] = {"role": step.role, "content": step.content}
    if step.role == "tool":
        message["tool_call_id"] = step.tool_call_id
    elif step.tool_name is not None:
        message["tool_calls"] = [
            {
                "id": step.tool_call_id or f"call_{step.index}",
                "type": "function",
                "function": {"name": step.tool_name, "arguments": jsonio.dumps_text(step.tool_input or {})},
            }
        ]
    return message


def _answer_index(steps: Sequence[Step]) -> int | None:
    for position in range(len(steps) - 1, -1, -1):
        step = steps[position]
        if step.role == "assistant" and step.content and step.tool_name is None:
            return position
    return None


def datapoint_from(trace: Trace, steps: Sequence[Step]) -> DatapointContent:
    if trace.input is None:
        inputs = None
    else:
        inputs = trace.input if isinstance(trace.input, dict) else {"input": trace.input}
    answer_at = _answer_index(steps)
    conversation = steps if answer_at is None else steps[:answer_at]
    messages = [_message(step) for step in conversation] or None
    if isinstance(trace.output, str):
        expected: str | None = trace.output
    elif answer_at is not None:
        expected = steps[answer_at].content
    elif trace.output is not None:
        expected = jsonio.dumps_text(trace.output)
    else:
        expected = None
    return DatapointContent(inputs, messages, expected)
