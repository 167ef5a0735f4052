"""Anthropic messages: `{"system"?, "messages": [...]}` per JSONL line, or one conversation as a document.

The Messages API carries tool calls and their results as content blocks inside messages; here each
`tool_use` becomes its own assistant step and each `tool_result` its own tool step, so a trace from
Claude reads the same as one from any other source. Thinking is kept in the step's metadata, out of
the content a reward model is trained on.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from redline.traces.importers.base import Importer
from redline.traces.importers.records import (
    JSONObject,
    RecordError,
    RecordImporter,
    ToolCall,
    assistant_steps,
    content_parts,
    conversation_steps,
    finished_run,
    invalid_role,
    message_text,
    messages_of,
    optional_str,
    require_messages,
    require_object,
    required_name,
)
from redline.traces.schemas import RunIn, StepIn

ROLES = frozenset({"user", "assistant"})
# Block types that mark a conversation as Anthropic's when there is no top-level system prompt.
ANTHROPIC_BLOCKS = frozenset({"text", "tool_use", "tool_result", "thinking"})


@dataclass
class _Blocks:
    """The structured blocks of one message; text blocks are read separately, as with OpenAI parts."""

    calls: list[ToolCall] = field(default_factory=list)
    results: list[StepIn] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)


def _tool_use(block: JSONObject, where: str) -> ToolCall:
    tool_input = block.get("input")
    if not isinstance(tool_input, dict):
        raise RecordError(f"{where}.input: must be a JSON object")
    return ToolCall(
        call_id=optional_str(block.get("id"), f"{where}.id"),
        name=required_name(block.get("name"), f"{where}.name"),
        arguments=tool_input,
    )


def _tool_result(block: JSONObject, where: str) -> StepIn:
    return StepIn(
        role="tool",
        content=message_text(block.get("content"), f"{where}.content"),
        tool_call_id=optional_str(block.get("tool_use_id"), f"{where}.tool_use_id"),
        metadata={"is_error": True} if block.get("is_error") is True else None,
    )


def _thinking(block: JSONObject, where: str) -> str:
    thinking = block.get("thinking")
    if not isinstance(thinking, str):
        raise RecordError(f"{where}.thinking: must be a string")
    return thinking


def _read_blocks(content: object, where: str) -> _Blocks:
    blocks = _Blocks()
    if not isinstance(content, list):
        return blocks
    for number, value in enumerate(content):
        block_where = f"{where}[{number}]"
        block = require_object(value, block_where)
        kind = block.get("type")
        if kind == "tool_use":
            blocks.calls.append(_tool_use(block, block_where))
        elif kind == "tool_result":
            blocks.results.append(_tool_result(block, block_where))
        elif kind == "thinking":
            blocks.thinking.append(_thinking(block, block_where))
    return blocks


def _user_steps(text: str, blocks: _Blocks, where: str) -> list[StepIn]:
    if blocks.calls:
        raise RecordError(f"{where}: tool_use blocks belong in an assistant message")
    # A message of only tool results is the API's way to return them, not something the user said.
    said = [StepIn(role="user", content=text)] if text or not blocks.results else []
    return blocks.results + said


def _assistant_steps(text: str, blocks: _Blocks, where: str) -> list[StepIn]:
    if blocks.results:
        raise RecordError(f"{where}: tool_result blocks belong in a user message")
    metadata = {"thinking": "\n".join(blocks.thinking)} if blocks.thinking else None
    return assistant_steps(text, blocks.calls, metadata)


def _message_steps(value: object, where: str) -> list[StepIn]:
    message = require_object(value, where)
    role = message.get("role")
    if not isinstance(role, str) or role not in ROLES:
        raise invalid_role(role, where)
    content_where = f"{where}.content"
    text = message_text(message.get("content"), content_where)
    blocks = _read_blocks(message.get("content"), content_where)
    if role == "user":
        return _user_steps(text, blocks, content_where)
    return _assistant_steps(text, blocks, content_where)


def _system_steps(record: JSONObject) -> list[StepIn]:
    text = message_text(record.get("system"), "system")
    return [StepIn(role="system", content=text)] if text else []


def build_run(record: JSONObject, project_id: uuid.UUID) -> RunIn:
    """One conversation record as a finished run, its system prompt first."""
    steps = _system_steps(record) + conversation_steps(require_messages(record), _message_steps)
    return finished_run(record, project_id, steps)


def looks_like_anthropic(record: JSONObject) -> bool:
    """Messages with a top-level system prompt or Anthropic content blocks."""
    messages = messages_of(record)
    if messages is None:
        return False
    return "system" in record or any(part.get("type") in ANTHROPIC_BLOCKS for part in content_parts(messages))


IMPORTER: Importer = RecordImporter(
    name="anthropic_messages",
    description='Anthropic messages: JSONL of {"system"?, "messages": [...]} records, or one message array',
    looks_like=looks_like_anthropic,
    build=build_run,
    message_arrays=True,
)
