"""OpenAI chat messages: `{"messages": [...]}` per JSONL line, or one conversation as a JSON document.

This is the shape of the Chat Completions API and of OpenAI fine-tuning files, so most logging setups
can export it. Tool-call arguments arrive as a JSON string and are decoded, because a tool input that
isn't an object can't be rendered or compared as one.
"""

from __future__ import annotations

import json
import uuid

from redline.traces.importers.base import Importer
from redline.traces.importers.records import (
    JSONObject,
    RecordError,
    RecordImporter,
    ToolCall,
    assistant_steps,
    content_parts,
    conversation_steps,
    describe_json_error,
    finished_run,
    invalid_role,
    message_roles,
    message_text,
    messages_of,
    optional_str,
    require_messages,
    require_object,
    required_name,
)
from redline.traces.schemas import RunIn, StepIn, StepRole

# "developer" is the newer name of the system message for reasoning models.
ROLES: dict[str, StepRole] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}
# Content block types only Anthropic uses; a text-only conversation reads the same in both formats.
ANTHROPIC_TOOL_BLOCKS = frozenset({"tool_use", "tool_result"})
ANTHROPIC_BLOCKS = ANTHROPIC_TOOL_BLOCKS | {"thinking", "redacted_thinking", "image", "document"}


def _arguments(function: JSONObject, where: str) -> JSONObject:
    arguments = function.get("arguments")
    if isinstance(arguments, dict):
        return arguments  # already decoded by whatever logged it
    if not isinstance(arguments, str):
        raise RecordError(f"{where}: must be a JSON string")
    try:
        decoded = json.loads(arguments)
    except json.JSONDecodeError as error:
        raise RecordError(f"{where}: {describe_json_error(error)}") from None
    if not isinstance(decoded, dict):
        raise RecordError(f"{where}: must be a JSON object, not {type(decoded).__name__}")
    return decoded


def _tool_call(value: object, where: str) -> ToolCall:
    call = require_object(value, where)
    function = require_object(call.get("function"), f"{where}.function")
    return ToolCall(
        call_id=optional_str(call.get("id"), f"{where}.id"),
        name=required_name(function.get("name"), f"{where}.function.name"),
        arguments=_arguments(function, f"{where}.function.arguments"),
    )


def _tool_calls(value: object, where: str) -> list[ToolCall]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError(f"{where}: must be a list")
    return [_tool_call(call, f"{where}[{number}]") for number, call in enumerate(value)]


def _refuse_anthropic_tools(content: object, where: str) -> None:
    # Other unknown parts (images, audio) may be skipped, but these carry tool calls and results.
    if not isinstance(content, list):
        return
    for number, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ANTHROPIC_TOOL_BLOCKS:
            raise RecordError(
                f"{where}[{number}]: a {kind} block is Anthropic's; import as anthropic_messages"
            )


def _role(message: JSONObject, where: str) -> StepRole:
    role = message.get("role")
    if not isinstance(role, str) or role not in ROLES:
        raise invalid_role(role, where)
    return ROLES[role]


def _message_steps(value: object, where: str) -> list[StepIn]:
    message = require_object(value, where)
    role = _role(message, where)
    _refuse_anthropic_tools(message.get("content"), f"{where}.content")
    text = message_text(message.get("content"), f"{where}.content")
    if role == "assistant":
        return assistant_steps(text, _tool_calls(message.get("tool_calls"), f"{where}.tool_calls"))
    if role == "tool":
        call_id = optional_str(message.get("tool_call_id"), f"{where}.tool_call_id")
        return [StepIn(role="tool", content=text, tool_call_id=call_id)]
    return [StepIn(role=role, content=text)]


def build_run(record: JSONObject, project_id: uuid.UUID) -> RunIn:
    """One conversation record as a finished run."""
    steps = conversation_steps(require_messages(record), _message_steps)
    return finished_run(record, project_id, steps)


def looks_like_openai(record: JSONObject) -> bool:
    """Messages with OpenAI's roles and no Anthropic-only parts or top-level system prompt."""
    messages = messages_of(record)
    if messages is None or "system" in record:
        return False
    if not message_roles(messages) <= ROLES.keys():
        return False
    return not any(part.get("type") in ANTHROPIC_BLOCKS for part in content_parts(messages))


IMPORTER: Importer = RecordImporter(
    name="openai_chat",
    description='OpenAI chat messages: JSONL of {"messages": [...]} records, or one message array',
    looks_like=looks_like_openai,
    build=build_run,
    message_arrays=True,
)
