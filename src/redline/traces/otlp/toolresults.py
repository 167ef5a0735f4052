"""Tool results the conversation does not carry, taken from the TOOL spans (otlp-ingest §8.7).

A run that ends on a tool call never re-sends the result to a model, and some instrumentations do not
re-send results at all; the TOOL span that ran the call has it. A call is matched to its span by call
id, else by tool name among the id-less TOOL spans that started after the model call that asked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from redline.traces.otlp import steps as stepmaking
from redline.traces.otlp.model import DerivedStep, RawSpan, ToolSpan


def is_tool_call(step: DerivedStep) -> bool:
    return step.role == "assistant" and step.tool_name is not None


def source_span(step: DerivedStep) -> str | None:
    otlp = step.metadata.get("otlp")
    span_id = otlp.get("span_id") if isinstance(otlp, Mapping) else None
    return span_id if isinstance(span_id, str) else None


def with_tool_results(
    steps: Sequence[DerivedStep], tools: Sequence[tuple[RawSpan, ToolSpan]], starts: Mapping[str, int]
) -> list[DerivedStep]:
    """`steps` with a tool step from its TOOL span after each unanswered tool call's group of calls.
    `tools` are the run's top-scope TOOL spans in order; `starts` the start time of every span by id."""
    unanswered = _unanswered(steps)
    if not unanswered or not tools:
        return list(steps)
    answered_ids = {s.tool_call_id for i, s in enumerate(steps) if is_tool_call(s) and i not in unanswered}
    used = {span.span_id for span, tool in tools if tool.call_id is not None and tool.call_id in answered_ids}
    result: list[DerivedStep] = []
    pending: list[DerivedStep] = []
    for position, step in enumerate(steps):
        if pending and not is_tool_call(step):
            result.extend(pending)
            pending = []
        result.append(step)
        if position in unanswered:
            found = _tool_for(step, tools, used, starts)
            if found is not None:
                span, tool = found
                used.add(span.span_id)
                filled = dataclasses.replace(
                    tool, call_id=tool.call_id or step.tool_call_id, name=tool.name or step.tool_name
                )
                pending.append(stepmaking.tool_result_step(filled, span.span_id))
    result.extend(pending)
    return result


def _unanswered(steps: Sequence[DerivedStep]) -> set[int]:
    """Positions of tool-call steps no later tool step answers: by call id, or for a call without one,
    by a later id-less tool step of the same tool."""
    later_ids: set[str] = set()
    later_names: dict[str, int] = {}
    unanswered: set[int] = set()
    for position in range(len(steps) - 1, -1, -1):
        step = steps[position]
        if step.role == "tool":
            if step.tool_call_id:
                later_ids.add(step.tool_call_id)
            elif step.tool_name:
                later_names[step.tool_name] = later_names.get(step.tool_name, 0) + 1
        elif is_tool_call(step):
            if step.tool_call_id:
                if step.tool_call_id not in later_ids:
                    unanswered.add(position)
            elif later_names.get(step.tool_name or "", 0) > 0:
                later_names[step.tool_name or ""] -= 1
            else:
                unanswered.add(position)
    return unanswered


def _tool_for(
    call: DerivedStep, tools: Sequence[tuple[RawSpan, ToolSpan]], used: set[str], starts: Mapping[str, int]
) -> tuple[RawSpan, ToolSpan] | None:
    if call.tool_call_id:
        for span, tool in tools:
            if tool.call_id == call.tool_call_id and span.span_id not in used:
                return span, tool
    asked = source_span(call)
    asked_at = starts.get(asked, 0) if asked is not None else 0
    for span, tool in tools:
        if (
            span.span_id not in used
            and tool.call_id is None
            and tool.name == call.tool_name
            and span.start_ns >= asked_at
        ):
            return span, tool
    return None
