"""One chat message as a JSON object, the way most conventions send it: `{role, parts | content,
tool_calls?, function_call?, tool_call_id?, name?, finish_reason?}`.

OTel GenAI (`parts`), OpenAI chat and Semantic Kernel (`content` text or parts, `tool_calls`), the legacy
GenAI events, Anthropic (`content` blocks) and the Vercel AI SDK (`content` parts) differ only in
their part vocabularies, which `parts` reads; the message around them is read here once.
"""

from __future__ import annotations

from typing import Any

from redline.traces.otlp.canonical import Draft, Reading, draft_for, optional_text, text_field, tool_arguments
from redline.traces.otlp.model import ToolCall
from redline.traces.otlp.parts import read_content, read_parts
from redline.traces.otlp.values import json_value


def read_message(
    reading: Reading, item: Any, *, role: str | None = None, blocks_in_text: bool = False
) -> None:
    """Reads one message object into `reading`, or counts it as unparsed when it is not one.

    `role` is the role when the item names none (a legacy event says it in its name);
    `blocks_in_text`: a `content` text may hold a JSON list of content blocks (OpenLLMetry).
    """
    if not isinstance(item, dict):
        reading.unparsed += 1
        return
    draft = draft_for(item.get("role", role))
    if draft is None:
        reading.unparsed += 1
        return
    had_parts = read_body(reading, draft, item, blocks_in_text=blocks_in_text)
    reading.emit(draft, had_parts=had_parts)


def read_body(reading: Reading, draft: Draft, item: dict[str, Any], *, blocks_in_text: bool = False) -> bool:
    """Everything of a message object but its role; answers whether it had content to begin with."""
    parts = item.get("parts")
    content = parts if parts is not None else item.get("content")
    if blocks_in_text and isinstance(content, str):
        content = _blocks(content)
    had_parts = isinstance(content, list) and bool(content)
    reading.unparsed += read_content(draft, content)
    refusal = item.get("refusal")
    if isinstance(refusal, str) and refusal and not draft.texts:
        draft.texts.append(refusal)
    tool_calls = json_value(item.get("tool_calls"))
    if isinstance(tool_calls, list):
        for call in tool_calls:
            if not (isinstance(call, dict) and read_parts_call(draft, call)):
                reading.unparsed += 1
        had_parts = had_parts or bool(tool_calls)
    elif tool_calls is not None:
        reading.unparsed += 1
    function_call = json_value(item.get("function_call"))
    if isinstance(function_call, dict):
        name = optional_text(function_call.get("name"))
        if name is None:
            reading.unparsed += 1
        else:
            draft.tool_calls.append(ToolCall(None, name, tool_arguments(function_call.get("arguments"))))
    draft.tool_call_id = draft.tool_call_id or optional_text(item.get("tool_call_id"))
    if draft.role == "tool" and draft.tool_call_id is None:
        draft.tool_call_id = optional_text(item.get("id"))
    draft.name = draft.name or optional_text(item.get("name"))
    finish = text_field(item.get("finish_reason"))
    if finish:
        draft.finish_reason = finish
    return had_parts


def read_parts_call(draft: Draft, call: dict[str, Any]) -> bool:
    """A `tool_calls` entry: OpenAI's `{id, function {name, arguments}}` or a flat `{id, name,
    arguments}`; read as a tool-call part."""
    return read_parts(draft, [{**call, "type": "tool_call"}]) == 0


def _blocks(text: str) -> Any:
    """A content text that is a JSON list of typed content blocks, parsed; any other text unchanged."""
    if not text.startswith("[{"):
        return text
    value = json_value(text)
    if isinstance(value, list) and value and all(isinstance(v, dict) and "type" in v for v in value):
        return value
    return text


def read_messages(
    reading: Reading, value: Any, *, choices: bool = False, blocks_in_text: bool = False
) -> None:
    """A list of message objects (JSON text or structured); `choices`: each message is one choice."""
    items = json_value(value)
    if not isinstance(items, list):
        reading.unparsed += 1
        return
    for item in items:
        if choices:
            reading.new_choice()
        read_message(reading, item, blocks_in_text=blocks_in_text)
