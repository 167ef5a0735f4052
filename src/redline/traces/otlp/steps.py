"""Canonical messages as Redline steps (otlp-ingest §7): one tool call per step.

A step keeps the metadata of the message it came from (`original_role`, `parts`, `alternatives`,
`finish_reason`) on its first step, and every step says where it came from in `metadata["otlp"]`.
Tool inputs are objects: arguments that are a JSON object as they are, other JSON as `{"_value": v}`,
text that is not JSON as `{"_raw": text}`; absent arguments as `{}`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from redline.traces.otlp.canonical import as_content_text
from redline.traces.otlp.model import DerivedStep, Message, ToolSpan

TOOL_SPAN = "tool_span"  # the convention named by steps made from a TOOL span (§6.9)


def message_steps(messages: Sequence[Message]) -> list[DerivedStep]:
    steps: list[DerivedStep] = []
    call_names: dict[str, str] = {}  # tool call id → tool name, from the messages read so far
    for message in messages:
        otlp = {"span_id": message.source_span, "convention": message.source_convention}
        metadata = {**message.metadata, "otlp": otlp}
        if message.role == "assistant":
            steps.extend(_assistant_steps(message, metadata, otlp))
            for call in message.tool_calls:
                if call.id is not None:
                    call_names[call.id] = call.name
        elif message.role == "tool":
            name = message.name
            if name is None and message.tool_call_id is not None:
                name = call_names.get(message.tool_call_id)
            steps.append(
                DerivedStep(
                    "tool", message.text, tool_name=name, tool_call_id=message.tool_call_id, metadata=metadata
                )
            )
        else:
            steps.append(DerivedStep(message.role, _with_media(message), metadata=metadata))
    return steps


def _assistant_steps(
    message: Message, metadata: dict[str, Any], otlp: Mapping[str, str]
) -> list[DerivedStep]:
    """A text step when there is text, or reasoning and no tool calls; then one step per tool call.
    The message's metadata (with `thinking`) goes on the first step it makes, so reasoning before a
    tool call with no text is kept on the tool-call step."""
    steps: list[DerivedStep] = []
    if message.reasoning:
        metadata = {**metadata, "thinking": message.reasoning}
    if message.text or (message.reasoning and not message.tool_calls):
        steps.append(DerivedStep("assistant", message.text, metadata=metadata))
        metadata = {"otlp": otlp}
    for call in message.tool_calls:
        steps.append(_call_step(call.name, call.arguments, call.id, metadata))
        metadata = {"otlp": otlp}
    return steps


def _call_step(
    name: str | None, arguments: Any, call_id: str | None, metadata: Mapping[str, Any]
) -> DerivedStep:
    """An assistant step that only calls a tool, as a model call's message or a TOOL span shows it."""
    return DerivedStep(
        "assistant",
        "",
        tool_name=name,
        tool_input=tool_input(arguments),
        tool_call_id=call_id,
        metadata=metadata,
    )


def _with_media(message: Message) -> str:
    """The text, then one `[<kind>: <address or type>]` line per media part."""
    lines = [f"[{media.kind}: {media.uri or media.mime or 'unknown'}]" for media in message.media]
    return "\n".join([message.text, *lines] if message.text else lines)


def tool_input(arguments: Any) -> dict[str, Any]:
    """Tool-call arguments as the object a step's `tool_input` must be."""
    if isinstance(arguments, dict):
        return arguments
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        return {"_raw": arguments}
    return {"_value": arguments}


def tool_call_step(tool: ToolSpan, span_id: str) -> DerivedStep:
    """The assistant tool-call step a TOOL span stands for, when no model call shows it (§8.4 D)."""
    return _call_step(
        tool.name, tool.input, tool.call_id, {"otlp": {"span_id": span_id, "convention": TOOL_SPAN}}
    )


def tool_result_step(tool: ToolSpan, span_id: str) -> DerivedStep:
    """The tool step a TOOL span's result makes (§8.4 D, §8.7); a failed tool shows its error."""
    metadata: dict[str, Any] = {"otlp": {"span_id": span_id, "convention": TOOL_SPAN}}
    if tool.error is not None:
        metadata["error"] = True
        content = tool.error
    else:
        content = as_content_text(tool.output)
    return DerivedStep("tool", content, tool_name=tool.name, tool_call_id=tool.call_id, metadata=metadata)
