"""The tools a run called, each call once with its result beside it.

A run's steps hold a call twice over: the assistant step that asks for the tool (its name and arguments)
and the tool step that answers (its result, often naming the tool again). Listing every step that names
a tool counts each call twice, so a page that lists calls reads them here: an assistant step naming a
tool is a call, and a tool step is that call's result. A result goes with the call its `tool_call_id`
names, else with the earliest call still waiting for one that it may answer (no other call id, no other
tool: the order tracers write them in); a result no call asked for (a tracer that recorded only the
tool's side) is a call of its own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from redline.traces.models import Step


@dataclass
class ToolCall:
    """One call: the tool, its arguments pretty-printed ("" for none), and its result's text and whether
    the result was an error (None: the run recorded no result)."""

    tool: str
    call_id: str | None
    arguments: str
    result: str | None = None
    failed: bool = False


def _arguments(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) if value else ""


def _may_answer(result: Step, call: Step) -> bool:
    """Whether `result` may be `call`'s: the same call id when both have one, and the same tool when the
    result names one."""
    same_call = not (result.tool_call_id and call.tool_call_id) or result.tool_call_id == call.tool_call_id
    return same_call and (not result.tool_name or result.tool_name == call.tool_name)


def answered(steps: Sequence[Step]) -> dict[int, int]:
    """Where each call's result is, by the call's place in `steps`: the later result its `tool_call_id`
    names, else (a tracer that wrote no ids) the earliest call still waiting that the result may answer.
    Several calls of one turn each get their own; a result no call asked for is not among them."""
    waiting: list[int] = []
    results: dict[int, int] = {}
    for place, step in enumerate(steps):
        if step.role == "assistant" and step.tool_name:
            waiting.append(place)
            continue
        if step.role != "tool":
            continue
        call = next(
            (one for one in waiting if step.tool_call_id and steps[one].tool_call_id == step.tool_call_id),
            next((one for one in waiting if _may_answer(step, steps[one])), None),
        )
        if call is not None:
            waiting.remove(call)
            results[call] = place
    return results


def _with_result(call: ToolCall, result: Step) -> ToolCall:
    call.result = result.content
    call.failed = bool((result.meta or {}).get("is_error"))
    return call


def tool_calls(steps: Sequence[Step]) -> list[ToolCall]:
    """The run's calls in the order it made them, each with its result when the run recorded one."""
    results = answered(steps)
    taken = set(results.values())
    calls: list[ToolCall] = []
    for place, step in enumerate(steps):
        if not step.tool_name:
            continue
        call = ToolCall(step.tool_name, step.tool_call_id, _arguments(step.tool_input))
        if step.role == "assistant":
            result = results.get(place)
            calls.append(call if result is None else _with_result(call, steps[result]))
        elif step.role == "tool" and place not in taken:
            # A result no call asked for (a tracer that recorded only the tool's side) is a call of its own.
            calls.append(_with_result(call, step))
    return calls
